"""A ``--config`` that names no directory is a configuration error (exit 2, kind ``config``)
beside ``--dest`` too, as without it (docs/cli.md, exit codes: "never a silent fall back"):
every command that reads the plugin roots refuses it before anything is read or changed,
rather than acting on the root as if the flag had not been given."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.tarballs import tree_snapshot, write_plugin

COMMANDS = (
    ("list", "--json"),
    ("verify", "--json"),
    ("outdated", "--json"),
    ("rollback", "hello", "--yes", "--json"),
    ("hold", "hello", "--json"),
    ("unhold", "hello", "--json"),
    ("remove", "hello", "--yes", "--json"),
)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """hello 1.0.0 installed in a root of its own, and held there."""
    base = tmp_path_factory.mktemp("beside")
    env = clean_env(NEXO_HOME=str(base / "home"))
    env.pop("NEXO_CONFIG_DIR", None)
    root = base / "root"
    tarball = write_plugin(base / "dist", "hello", "1.0.0")
    done = nexo(
        "plugin", "install", tarball, "--dest", root, "--yes", "-q", env=env, in_process=True
    )
    assert done.code == 0, done.stderr
    held = nexo("plugin", "hold", "hello", "--dest", root, env=env, in_process=True)
    assert held.code == 0, held.stderr
    return root, env


@pytest.mark.parametrize("config", ["missing", "a-file"])
@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: command[0])
def test_a_config_that_names_no_directory_is_refused_beside_dest(
    installed: tuple[Path, dict[str, str]],
    tmp_path: Path,
    command: tuple[str, ...],
    config: str,
) -> None:
    root, env = installed
    named = tmp_path / "config"
    if config == "a-file":
        named.write_text("", encoding="utf-8")
    before = tree_snapshot(root)
    result = nexo(
        "plugin", *command, "--dest", root, "--config", named, env=env, in_process=True
    )  # fmt: skip
    assert result.code == 2, (result.stdout, result.stderr)
    assert result.document["ok"] is False
    assert result.document["kind"] == "config"
    assert str(named) in result.document["error"]
    assert tree_snapshot(root) == before  # still installed, still held


def test_a_config_that_is_a_directory_still_goes_beside_dest(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    root, env = installed
    listed = nexo(
        "plugin", "list", "--dest", root, "--config", tmp_path, "--json", env=env, in_process=True
    )  # fmt: skip
    assert listed.code == 0, listed.stderr
    assert [item["id"] for item in listed.document["plugins"]] == ["hello"]
