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
from support.cli import TRACEBACK, clean_env, console, fails_alike
from support.tarballs import tree_snapshot, write_plugin

NEXO = str(Path(sys.executable).with_name("nexo"))


@pytest.mark.skipif(os.name != "posix", reason="symbolic links without privileges")
@pytest.mark.parametrize(
    ("link_to", "said"),
    [
        (
            "missing/root",
            "is a symbolic link to {target}, which does not exist; create that "
            "directory, or name another plugin root",
        ),
        ("plugins", "is a symbolic link that loops; remove it, or name another plugin root"),
    ],
    ids=["dangling", "loop"],
)
@pytest.mark.parametrize(
    "command",
    [("install", "{tarball}", "--yes"), ("list",), ("verify",), ("remove", "weather", "--yes")],
    ids=["install", "list", "verify", "remove"],
)
def test_a_dest_that_is_a_broken_symbolic_link_is_a_usage_error_naming_it(
    tmp_path: Path, link_to: str, said: str, command: tuple[str, ...]
) -> None:
    """A ``--dest`` whose link leads nowhere is refused as a ``--dest`` that is a file is,
    not met with mkdir's bare "File exists" once the install is under way."""
    tarball = write_plugin(tmp_path / "dist", "weather", "0.1.0")
    dest = tmp_path / "plugins"
    dest.symlink_to(tmp_path / link_to if link_to != "plugins" else dest)
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), HOME=str(tmp_path))
    before = tree_snapshot(tmp_path)
    args = [part.format(tarball=tarball) for part in command]
    line = fails_alike(env, tmp_path, "usage", 2, *args, "--dest", str(dest))
    target = dest.readlink()
    assert line == f"error: --dest {dest} {said.format(target=target)} [usage]"
    assert tree_snapshot(tmp_path) == before


@pytest.mark.parametrize(
    "command",
    [
        ("install", "{tarball}", "--yes"),
        ("list",),
        ("verify",),
        ("doctor", "--no-check"),
        ("remove", "weather", "--yes"),
        ("rollback", "weather"),
    ],
    ids=["install", "list", "verify", "doctor", "remove", "rollback"],
)
def test_a_dest_below_a_file_is_a_usage_error_naming_the_file(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    """``--dest NOTES/plugins`` where NOTES is a file can never be a plugin root: the file in
    the way is named (exit 2), as a ``--dest`` that is a file is, not an empty root reported
    as if it were one (``list``, ``verify``, ``doctor``), "not installed" (``remove``,
    ``rollback``) or mkdir's bare "Not a directory" (``install``)."""
    tarball = write_plugin(tmp_path / "dist", "weather", "0.1.0")
    blocking = tmp_path / "notes.txt"
    blocking.write_text("operator's notes\n")
    dest = blocking / "plugins"
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), HOME=str(tmp_path))
    before = tree_snapshot(tmp_path)
    args = [part.format(tarball=tarball) for part in command]
    line = fails_alike(env, tmp_path, "usage", 2, *args, "--dest", str(dest))
    assert line == (
        f"error: --dest {dest} is below {blocking}, which is a file, not a directory; name a "
        "plugin root [usage]"
    )
    assert tree_snapshot(tmp_path) == before


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


@pytest.mark.parametrize("in_place", [".nexo", ".nexo/kept"])
def test_a_file_in_place_of_the_bookkeeping_directory_is_named(
    tmp_path: Path, in_place: str
) -> None:
    """A file where the root keeps its bookkeeping (``.nexo``, ``.nexo/kept``) fails the
    install that needs it with a line naming the file and what to do, not mkdir's "File
    exists"; the installed version stays, nothing is written."""
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), HOME=str(tmp_path))
    dest = tmp_path / "plugins"
    old = write_plugin(tmp_path / "dist", "weather", "0.1.0")
    new = write_plugin(tmp_path / "dist", "weather", "0.2.0")
    installed = console(env, tmp_path, "install", str(old), "--dest", str(dest), "--yes")
    assert installed.returncode == 0, installed.stderr
    blocked = dest / in_place
    if blocked.is_dir():
        for leftover in blocked.iterdir():  # empty areas an install may leave
            leftover.rmdir()
        blocked.rmdir()
    blocked.parent.mkdir(exist_ok=True)
    blocked.write_text("not a directory\n")
    before = tree_snapshot(tmp_path)
    line = fails_alike(env, tmp_path, "io", 1, "install", str(new), "--dest", str(dest), "--yes")
    assert line == (
        f"error: cannot create {blocked}: a file that is not a directory is in its place "
        "(nexo-pkg keeps the root's bookkeeping there); move it away [io]"
    )
    assert tree_snapshot(tmp_path) == before
