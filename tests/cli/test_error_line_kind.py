"""Every failure's line on stderr ends with its kind: ``error: MESSAGE [KIND]``, KIND the
``kind`` of the ``--json`` document the same command line prints, without ``--verbose``.

Driven through the real ``nexo`` console script: a missing release tarball, a usage error
(click's parser and a command's own), an unreadable lock, a stale lock, a run stopped by
Ctrl-C. The signal is sent at an exact moment, not raced: a ``sitecustomize`` import hook
sends the process its own SIGINT when the command line loads the command's module.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import TRACEBACK, clean_env, nexo_with_sitecustomize

INTERRUPT_ON_IMPORT = '''
import os
import signal
import sys


class _InterruptOnImport:
    """Sends this process SIGINT when the command line loads nexo_pkg.cli.app."""

    def find_spec(self, name, path=None, target=None):
        if name == "nexo_pkg.cli.app":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None


sys.meta_path.insert(0, _InterruptOnImport())
'''


def _console(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``nexo ARGS`` through the installed console script, in ``tmp_path``."""
    return subprocess.run(
        [str(Path(sys.executable).with_name("nexo")), *args],
        env=clean_env(NEXO_HOME=str(tmp_path / "home"), HOME=str(tmp_path)),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _assert_line_names_the_documents_kind(
    text: subprocess.CompletedProcess[str],
    as_json: subprocess.CompletedProcess[str],
    kind: str,
    *,
    before: tuple[str, ...] = (),
) -> str:
    """``text`` printed one ``error:`` line (after the lines ``before`` it, the command's
    reasons) ending with `` [KIND]``, the ``kind`` of the document ``as_json`` printed, which
    is ``kind``; both exited alike. Returns the line."""
    assert TRACEBACK not in text.stderr + as_json.stderr
    document = json.loads(as_json.stdout)
    assert (document["ok"], document["kind"]) == (False, kind), document
    assert text.returncode == as_json.returncode != 0, (text.returncode, as_json.returncode)
    lines = text.stderr.splitlines()
    assert lines[: len(before)] == list(before), text.stderr
    assert len(lines) == len(before) + 1, text.stderr
    line = lines[-1]
    assert line.startswith("error: "), line
    assert line.endswith(f" [{document['kind']}]"), line
    return line


def test_a_missing_tarball_is_one_line_with_its_kind(tmp_path: Path) -> None:
    args = ("plugin", "install", str(tmp_path / "gone.tar.gz"), "--dest", "root", "--yes")
    text = _console(tmp_path, *args)
    as_json = _console(tmp_path, *args, "--json")
    line = _assert_line_names_the_documents_kind(text, as_json, "source_invalid")
    assert line == f"error: {json.loads(as_json.stdout)['error']} [source_invalid]"
    assert not (tmp_path / "root").exists()


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("plugin", "install", "--bogus"), id="click-option"),
        pytest.param(("plugin", "remove"), id="click-missing-argument"),
        pytest.param(("plugin", "lint", "--bogus"), id="lint-parser"),
        pytest.param(("plugin", "sync", "--jobs", "0"), id="sync-parser"),
    ],
)
def test_a_usage_error_is_one_line_with_its_kind(tmp_path: Path, args: tuple[str, ...]) -> None:
    text = _console(tmp_path, *args)
    as_json = _console(tmp_path, *args, "--json")
    _assert_line_names_the_documents_kind(text, as_json, "usage")
    assert text.returncode == 2


def test_an_unreadable_lock_is_one_line_with_its_kind(tmp_path: Path) -> None:
    lock = tmp_path / "nexo-plugins.lock"
    lock.write_text("lock_version = [\n", encoding="utf-8")
    args = ("plugin", "sync", "--lock", str(lock), "--dest", "root", "--yes")
    text = _console(tmp_path, *args)
    as_json = _console(tmp_path, *args, "--json")
    _assert_line_names_the_documents_kind(text, as_json, "lock_invalid")
    assert lock.read_text(encoding="utf-8") == "lock_version = [\n"
    assert not (tmp_path / "root").exists()


def test_a_stale_lock_is_one_line_with_its_kind(tmp_path: Path) -> None:
    (tmp_path / "nexo-plugins.toml").write_text('[plugins.alpha]\nsource = "acme/alpha"\n')
    (tmp_path / "nexo-plugins.lock").write_text("lock_version = 1\n")
    text = _console(tmp_path, "plugin", "lock", "--check")
    as_json = _console(tmp_path, "plugin", "lock", "--check", "--json")
    line = _assert_line_names_the_documents_kind(
        text, as_json, "lock_stale", before=("stale: alpha is wanted but not locked",)
    )
    assert line == "error: nexo-plugins.lock is stale; run `nexo plugin lock` [lock_stale]"
    assert (tmp_path / "nexo-plugins.lock").read_text() == "lock_version = 1\n"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_an_interrupted_run_is_one_line_with_its_kind(tmp_path: Path) -> None:
    (tmp_path / "text").mkdir()
    (tmp_path / "json").mkdir()
    args = ("plugin", "remove", "absent", "--dest", "root")
    text = nexo_with_sitecustomize(tmp_path / "text", INTERRUPT_ON_IMPORT, *args)
    as_json = nexo_with_sitecustomize(tmp_path / "json", INTERRUPT_ON_IMPORT, *args, "--json")
    assert text.stdout == ""
    # The line starts a line of its own after the terminal's `^C`.
    assert text.stderr.startswith("\n"), text.stderr
    text.stderr = text.stderr.removeprefix("\n")
    line = _assert_line_names_the_documents_kind(text, as_json, "interrupted")
    assert line == "error: interrupted [interrupted]"
    assert (text.returncode, as_json.returncode) == (130, 130)


FAIL_ON_IMPORT = '''
import sys


class _FailOnImport:
    """Raises what no code of nexo-pkg expects when the command line loads nexo_pkg.cli.app."""

    def find_spec(self, name, path=None, target=None):
        if name == "nexo_pkg.cli.app":
            sys.meta_path.remove(self)
            raise RuntimeError("planted")
        return None


sys.meta_path.insert(0, _FailOnImport())
'''


def test_an_internal_error_is_one_line_with_its_kind(tmp_path: Path) -> None:
    (tmp_path / "text").mkdir()
    (tmp_path / "json").mkdir()
    args = ("plugin", "remove", "absent", "--dest", "root")
    text = nexo_with_sitecustomize(tmp_path / "text", FAIL_ON_IMPORT, *args)
    as_json = nexo_with_sitecustomize(tmp_path / "json", FAIL_ON_IMPORT, *args, "--json")
    line = _assert_line_names_the_documents_kind(text, as_json, "internal")
    assert line.startswith("error: unexpected RuntimeError: planted "), line
