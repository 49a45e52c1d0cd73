"""The command line in a broken local state: each failure is one ``error: MESSAGE [KIND]``
line naming what is wrong, the ``--json`` run prints the same failure as its one document,
both exit alike, no traceback, and nothing is written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import TRACEBACK, clean_env

NEXO = str(Path(sys.executable).with_name("nexo"))


def _in_removed_directory(
    tmp_path: Path, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    """``nexo ARGS`` started in a directory removed just before (a shell left in a deleted
    build directory): its current directory no longer exists."""
    gone = tmp_path / "gone"
    gone.mkdir()
    return subprocess.run(
        ["sh", "-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "sh", str(gone), NEXO, *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.skipif(os.name != "posix", reason="a removed current directory is a POSIX state")
@pytest.mark.parametrize(
    "args",
    [
        ("plugin", "list"),
        ("plugin", "doctor", "--no-check"),
        ("plugin", "install", "{tarball}", "--dest", "{dest}", "--yes"),
        ("plugin", "lint"),
    ],
    ids=["list", "doctor", "install", "lint"],
)
def test_a_removed_current_directory_is_named_as_such(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    home = tmp_path / "home"
    dest = tmp_path / "plugins"
    tarball = tmp_path / "weather-0.1.0-noarch.tar.gz"
    tarball.write_bytes(b"not read: the command stops before")
    env = clean_env(NEXO_HOME=str(home), HOME=str(tmp_path))
    line_args = [part.format(tarball=tarball, dest=dest) for part in args]
    text = _in_removed_directory(tmp_path, env, *line_args)
    as_json = _in_removed_directory(tmp_path, env, *line_args, "--json")
    assert TRACEBACK not in text.stderr + as_json.stderr
    assert (text.returncode, as_json.returncode) == (1, 1), (text.stderr, as_json.stderr)
    line = text.stderr.splitlines()[-1]
    assert line == (
        "error: the current directory no longer exists (it was removed or moved away); cd to "
        "a directory that exists and run the command again [io]"
    )
    assert text.stdout == ""
    document = json.loads(as_json.stdout)
    assert (document["ok"], document["kind"]) == (False, "io")
    assert line == f"error: {document['error']} [io]"
    assert not dest.exists()
    assert not home.exists()
