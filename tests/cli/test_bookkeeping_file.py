"""A file in place of a plugin root's bookkeeping directory (``.nexo``, or ``.nexo/holds``
where holds live) as the operator's commands meet it: each one that needs the directory
fails with the line install gives (naming the file, saying to move it away, ``io``), the
``--json`` run with the same failure as its one document, no traceback, nothing written;
one that only releases a hold finds none there and does its work."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cli import CliResult, clean_env, nexo
from support.tarballs import tree_snapshot, write_plugin


class _Root:
    """A root holding weather 0.2.0 with 0.1.0 kept for rollback, from local tarballs."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.env = clean_env(NEXO_HOME=str(tmp_path / "home"), HOME=str(tmp_path))
        self.dest = tmp_path / "plugins"
        self.dist = tmp_path / "dist"
        for version in ("0.1.0", "0.2.0"):
            installed = self.run("install", str(self.tarball(version)), "--yes")
            assert installed.code == 0, installed.stderr
        assert any((self.dest / ".nexo" / "kept").iterdir())

    def tarball(self, version: str) -> Path:
        path = self.dist / f"weather-{version}-noarch.tar.gz"
        return path if path.exists() else write_plugin(self.dist, "weather", version)

    def run(self, *args: str) -> CliResult:
        return nexo("plugin", *args, "--dest", str(self.dest), env=self.env, cwd=self.tmp,
                    in_process=True)  # fmt: skip

    def block(self, in_place: str, kind: str = "file") -> Path:
        """Put a file (or a FIFO) where ``in_place`` is kept; a directory there moves aside
        (out of the root, with what it holds)."""
        blocked = self.dest / in_place
        if blocked.is_dir():
            blocked.rename(self.tmp / "moved-aside")
        if kind == "fifo":
            os.mkfifo(blocked)
        else:
            blocked.write_text("not a directory\n")
        return blocked

    def fails_alike(self, *args: str) -> str:
        """``nexo plugin ARGS`` with and without ``--json`` both exit 1 with one ``io``
        failure: its ``error: … [io]`` line (returned) and its document say the same."""
        text = self.run(*args)
        as_json = self.run(*args, "--json")
        assert (text.code, as_json.code) == (1, 1), (text.stderr, as_json.stderr)
        document = json.loads(as_json.stdout)
        assert (document["ok"], document["kind"]) == (False, "io"), document
        assert text.stdout == ""
        line = text.stderr.splitlines()[-1]
        assert line == f"error: {document['error']} [io]"
        assert as_json.stderr.splitlines()[-1] == line
        assert [each for each in text.stderr.splitlines() if each.startswith("error: ")] == [line]
        return line


def _in_the_way(blocked: Path) -> str:
    return (
        f"error: cannot create {blocked}: a file that is not a directory is in its place "
        "(nexo-pkg keeps the root's bookkeeping there); move it away [io]"
    )


@pytest.mark.parametrize("in_place", [".nexo", ".nexo/holds"])
@pytest.mark.parametrize(
    "command",
    [
        ("rollback", "weather", "--yes"),
        ("hold", "weather"),
        ("upgrade", "weather", "--yes"),
        ("upgrade", "--all", "--yes"),
    ],
    ids=["rollback", "hold", "upgrade", "upgrade-all"],
)
def test_a_command_that_needs_the_bookkeeping_directory_names_the_file(
    tmp_path: Path, in_place: str, command: tuple[str, ...]
) -> None:
    """A command that reads a hold and then writes under ``.nexo`` (a rollback holds the
    version it puts back) is refused before it changes anything, not with a path's bare
    "Not a directory"."""
    root = _Root(tmp_path)
    blocked = root.block(in_place)
    before = tree_snapshot(tmp_path)
    assert root.fails_alike(*command) == _in_the_way(blocked)
    assert tree_snapshot(tmp_path) == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_place_of_the_bookkeeping_directory_is_named_and_never_opened(
    tmp_path: Path,
) -> None:
    root = _Root(tmp_path)
    blocked = root.block(".nexo", kind="fifo")
    before = tree_snapshot(tmp_path)
    assert root.fails_alike("rollback", "weather", "--yes") == _in_the_way(blocked)
    assert tree_snapshot(tmp_path) == before


def test_remove_names_a_file_in_place_of_the_bookkeeping_directory(tmp_path: Path) -> None:
    """``remove`` sets the plugin aside under ``.nexo/removing`` first, so it is refused as
    install is, with the installed version still in place."""
    root = _Root(tmp_path)
    blocked = root.block(".nexo")
    before = tree_snapshot(tmp_path)
    assert root.fails_alike("remove", "weather", "--yes") == _in_the_way(blocked)
    assert tree_snapshot(tmp_path) == before
    assert (root.dest / "weather-0.2.0").is_dir()


@pytest.mark.parametrize("in_place", [".nexo", ".nexo/holds"])
def test_unhold_finds_no_hold_where_a_file_is(tmp_path: Path, in_place: str) -> None:
    """No hold can be kept where a file stands: ``unhold`` says the plugin was not held,
    and writes nothing."""
    root = _Root(tmp_path)
    root.block(in_place)
    before = tree_snapshot(tmp_path)
    released = root.run("unhold", "weather", "--json")
    assert released.code == 0, released.stderr
    assert released.document == {"ok": True, "id": "weather", "version": None, "changed": False}
    assert tree_snapshot(tmp_path) == before


def test_install_and_remove_release_no_hold_where_a_file_is(tmp_path: Path) -> None:
    """An install or a removal releases the plugin's hold once its work is done; with a file
    in place of ``.nexo/holds`` there is none, so each succeeds instead of failing after the
    fact, and the file stays."""
    root = _Root(tmp_path)
    blocked = root.block(".nexo/holds")
    installed = root.run("install", str(root.tarball("0.3.0")), "--yes", "--json")
    assert installed.code == 0, installed.stderr
    assert (root.dest / "weather-0.3.0" / ".nexo-install.json").is_file()
    removed = root.run("remove", "weather", "--yes", "--json")
    assert removed.code == 0, removed.stderr
    assert not any(path.name.startswith("weather-") for path in root.dest.iterdir())
    assert blocked.read_text() == "not a directory\n"


def test_enable_and_disable_do_not_need_the_bookkeeping_directory(tmp_path: Path) -> None:
    """They edit the daemon's discovery configuration only: a file at ``.nexo`` changes
    nothing for them, and the root is left as it was."""
    root = _Root(tmp_path)
    root.block(".nexo")
    before = tree_snapshot(root.dest)
    for command in ("disable", "enable"):
        done = root.run(command, "weather", "--json")
        assert done.code == 0, done.stderr
    assert tree_snapshot(root.dest) == before
