"""A file name that is not UTF-8 (``caf\\xe9/``, written by a Latin-1 system or an archive)
under a UTF-8 locale, whose stdout refuses what it cannot encode (Python's ``strict`` outside
the C locale; ``PYTHONIOENCODING=utf-8`` here): reports name it, never an unexpected error.
Text goes out as the name's own bytes (as Python under the C locale, and as ``ls`` into a
pipe); JSON and SARIF stay valid UTF-8 (the JSON ``\\udcXX`` escape, which ``json.loads``
reads back into the same name; a percent-encoded SARIF URI)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import clean_env
from support.tarballs import write_plugin

pytestmark = pytest.mark.skipif(
    sys.platform in ("win32", "darwin"), reason="file names are bytes on Linux only"
)

NAME = os.fsdecode(b"caf\xe9")
MANIFEST = '[plugin]\nid = "Bad"\n'


def _run(*args: str, cwd: Path, encoding: str = "utf-8") -> subprocess.CompletedProcess[bytes]:
    env = clean_env(NEXO_HOME=str(cwd / "home"), PYTHONIOENCODING=encoding)
    return subprocess.run(
        [sys.executable, "-m", "nexo_pkg", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        cwd=cwd,
        check=False,
    )


def _project(tmp_path: Path) -> Path:
    project = tmp_path / NAME
    project.mkdir()
    (project / "plugin.toml").write_text(MANIFEST, encoding="utf-8")
    return project


@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
def test_a_text_report_names_the_file_by_its_bytes(tmp_path: Path, encoding: str) -> None:
    _project(tmp_path)
    for output_format in ("text", "github"):
        done = _run("plugin", "lint", NAME, "--format", output_format, cwd=tmp_path,
                    encoding=encoding)  # fmt: skip
        assert done.returncode == 1, done.stderr
        assert b"unexpected" not in done.stderr, done.stderr
        assert b"caf\xe9/plugin.toml" in done.stdout


def test_a_json_report_of_such_a_file_is_valid_utf_8_naming_it(tmp_path: Path) -> None:
    _project(tmp_path)
    done = _run("plugin", "lint", NAME, "--json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout.decode("utf-8"))  # strict: valid UTF-8
    assert [os.fsencode(item["path"]) for item in document["files"]] == [b"caf\xe9/plugin.toml"]


def test_a_sarif_report_of_such_a_file_percent_encodes_its_bytes(tmp_path: Path) -> None:
    _project(tmp_path)
    done = _run("plugin", "lint", NAME, "--format", "sarif", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    log = json.loads(done.stdout.decode("utf-8"))
    uris = {
        location["physicalLocation"]["artifactLocation"]["uri"]
        for result in log["runs"][0]["results"]
        for location in result["locations"]
    }
    assert uris == {"caf%E9/plugin.toml"}


def test_list_rows_under_such_a_root_name_it(tmp_path: Path) -> None:
    root = tmp_path / NAME / "plugins"
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    installed = _run("plugin", "install", str(tarball), "--dest", str(root), "--yes", cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr
    done = _run("plugin", "list", "--dest", str(root), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == b"hello"
    assert os.fsencode(root / "hello") in done.stdout
