"""A reader of the output that leaves early (``nexo plugin rule --all | head -1``, a pipe closed
at the other end) is not a failure of the command's: every command exits with the code it
would have had with the output read to the end, and says nothing about the pipe (no
traceback, no ``Exception ignored``, no exit code 120, no click ``1``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import clean_env, nexo_reader_left

_NOISE = ("Traceback", "Exception ignored", "BrokenPipe", "Broken pipe")


def _run(*args: str, closed: str, cwd: Path) -> tuple[int, str]:
    """``nexo ARGS`` with ``closed`` ("stdout" or "stderr") a pipe whose reader has already
    left; the exit code, then what the other stream got."""
    env = clean_env(NEXO_HOME=str(cwd / "home"))
    done = nexo_reader_left(*args, closed=closed, env=env, cwd=cwd)
    return done.code, done.stderr if closed == "stdout" else done.stdout


def _bad_manifest(tmp_path: Path) -> Path:
    project = tmp_path / "bad"
    project.mkdir()
    (project / "nexo-plugin.toml").write_text("name = 3\n", encoding="utf-8")
    return project


@pytest.mark.skipif(os.name != "posix", reason="pipes without a reader: POSIX semantics")
@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("plugin", "rule", "--all"), 0),  # through the Typer app: click said 1
        (("plugin", "schema"), 0),
        (("plugin", "--help"), 0),
        (("plugin", "rule", "NX001", "--json"), 0),
        (("plugin", "lint", "{bad}"), 1),  # the answer is still no
        (("plugin", "lint", "{bad}", "--format", "json"), 1),
        (("plugin", "lint", "{bad}", "--format", "sarif"), 1),
    ],
)
def test_a_reader_of_stdout_that_left_keeps_the_command_s_code(
    tmp_path: Path, args: tuple[str, ...], code: int
) -> None:
    bad = _bad_manifest(tmp_path)
    args = tuple(arg.replace("{bad}", str(bad)) for arg in args)
    got, stderr = _run(*args, closed="stdout", cwd=tmp_path)
    assert got == code, stderr
    assert not any(noise in stderr for noise in _NOISE), stderr


@pytest.mark.skipif(os.name != "posix", reason="pipes without a reader: POSIX semantics")
@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("plugin", "install", "{missing}", "--yes"), 2),  # the one-line error went nowhere
        (("plugin", "rule", "NX999"), 2),
        (("plugin", "nonsense"), 2),
        (("plugin", "lint", "{bad}"), 1),
    ],
)
def test_a_reader_of_stderr_that_left_keeps_the_command_s_code(
    tmp_path: Path, args: tuple[str, ...], code: int
) -> None:
    bad = _bad_manifest(tmp_path)
    missing = tmp_path / "missing-1.0.0.tar.gz"
    args = tuple(arg.replace("{bad}", str(bad)).replace("{missing}", str(missing)) for arg in args)
    got, stdout = _run(*args, closed="stderr", cwd=tmp_path)
    assert got == code, stdout
    assert not any(noise in stdout for noise in _NOISE), stdout


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a disk that is full)")
@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("plugin", "lint", "{bad}", "--json"), 1),
        (("plugin", "list", "--json"), 1),
        (("plugin", "install", "{missing}", "--json"), 2),  # its usage document went nowhere
        (("plugin", "schema"), 1),
    ],
)
def test_a_stdout_that_refuses_the_document_is_one_error_line(
    tmp_path: Path, args: tuple[str, ...], code: int
) -> None:
    """``nexo plugin lint --json > /dev/full``: the failure to write the document is said in
    one line on stderr, never as a traceback of writing its failure document again."""
    bad = _bad_manifest(tmp_path)
    missing = tmp_path / "missing-1.0.0.tar.gz"
    args = tuple(arg.replace("{bad}", str(bad)).replace("{missing}", str(missing)) for arg in args)
    with Path("/dev/full").open("wb") as full:
        done = subprocess.run(
            [sys.executable, "-m", "nexo_pkg", *args],
            stdin=subprocess.DEVNULL,
            stdout=full,
            stderr=subprocess.PIPE,
            env=clean_env(NEXO_HOME=str(tmp_path / "home")),
            cwd=tmp_path,
            check=False,
        )
    stderr = done.stderr.decode("utf-8", "replace")
    assert done.returncode == code, stderr
    assert not any(noise in stderr for noise in ("Traceback", "Exception ignored")), stderr
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, stderr
