"""Every command that reads a release archive takes install's limit flags (SPEC §5 step 6:
"flags to change them"): a plugin past the default 10,000 entries (one vendoring a large SDK)
is refused by ``upgrade`` (one plugin or ``--all``), ``lock``, ``sync`` and ``check TARBALL``
with ``archive_unsafe`` naming the flag, nothing changed, and goes through with
``--max-entries 20000``; ``pack --check`` checks what it packed whatever its size. A bad
limit is a usage error on every one of them."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from support import cli
from support.github_server import GitHubServer
from support.tarballs import (
    file,
    plugin_members,
    release_assets,
    targz,
    tree_snapshot,
    write_plugin,
)

nexo = partial(cli.nexo, in_process=True)
EXTRA_FILES = 10_050
RAISED = ("--max-entries", "20000")


def _big_tarball(plugin_id: str, version: str) -> bytes:
    """A valid plugin with 10,050 small files beside it (past the 10,000-entry default)."""
    members = plugin_members(plugin_id, version)
    members += [file(f"share/sdk/f{index}", "") for index in range(EXTRA_FILES)]
    return targz(members)


@pytest.fixture
def env(github_env: dict[str, str], server: GitHubServer) -> dict[str, str]:
    """hello 1.0.0 as an ordinary release on the loopback GitHub; isolated NEXO_HOME."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    return github_env


@pytest.mark.parametrize("which", [["hello"], ["--all"]], ids=["one", "all"])
def test_upgrade_to_a_release_past_the_entry_limit_takes_max_entries(
    tmp_path: Path, env: dict[str, str], server: GitHubServer, which: list[str]
) -> None:
    root = tmp_path / "root"
    dest = ("--dest", str(root))
    installed = nexo("plugin", "install", "acme/hello", "--yes", *dest, env=env, cwd=tmp_path)
    assert installed.code == 0, installed.stderr
    data = _big_tarball("hello", "1.1.0")
    server.publish("acme", "hello", "v1.1.0", release_assets("hello", "1.1.0", data=data))
    before = tree_snapshot(root)

    refused = nexo("plugin", "upgrade", *which, "--yes", *dest, env=env, cwd=tmp_path)
    assert refused.code == 1, refused.stderr
    assert "[archive_unsafe]" in refused.stderr
    assert "(raise the limit with --max-entries)" in refused.stderr
    assert "nexo plugin install" not in refused.stderr
    assert tree_snapshot(root) == before

    done = nexo("plugin", "upgrade", *which, *RAISED, "--yes", *dest, env=env, cwd=tmp_path)
    assert done.code == 0, done.stderr
    assert (root / "hello-1.1.0" / "share" / "sdk" / f"f{EXTRA_FILES - 1}").is_file()
    assert "hello 1.0.0 \u2192 1.1.0" in done.stderr


def test_check_of_a_tarball_past_the_entry_limit_takes_max_entries(tmp_path: Path) -> None:
    env = cli.clean_env(NEXO_HOME=str(tmp_path / "home"))
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0", data=_big_tarball("hello", "1.0.0"))
    before = tree_snapshot(tmp_path)

    refused = nexo("plugin", "check", str(tarball), "--json", env=env, cwd=tmp_path)
    assert refused.code == 1, refused.stderr
    assert refused.document["kind"] == "archive_unsafe"
    assert refused.error_line.endswith("(raise the limit with --max-entries) [archive_unsafe]")
    assert tree_snapshot(tmp_path) == before

    # Unpacked and spawned: the stub launcher answers no handshake, so the report (not an
    # archive error) is what fails.
    checked = nexo("plugin", "check", str(tarball), *RAISED, "--json", env=env, cwd=tmp_path)
    assert "kind" not in checked.document, checked.stderr
    names = [item["name"] for item in checked.document["checks"]]
    assert "initialize" in names, checked.stdout
    assert tree_snapshot(tmp_path) == before


BAD_VALUES = [
    (("--max-entries", "0"), "--max-entries must be a positive number, not '0'"),
    (("--max-entries", "many"), "--max-entries must be a positive number, not 'many'"),
    (("--max-total-size", "abc"), "--max-total-size 'abc' is not a size such as 100M or 1048576"),
    (("--max-entry-size", "0"), "--max-entry-size '0' is not a size such as 100M or 1048576"),
    (
        ("--max-download-size", "10X"),
        "--max-download-size '10X' is not a size such as 100M or 1048576",
    ),
]
COMMANDS = [
    ("upgrade", "hello"),
    ("upgrade", "--all"),
    ("sync",),
    ("lock",),
    ("check", "plugin.tar.gz"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c).strip("-"))
@pytest.mark.parametrize(("flag", "message"), BAD_VALUES, ids=["=".join(f) for f, _ in BAD_VALUES])
def test_a_bad_limit_is_a_usage_error_on_every_command(
    tmp_path: Path, command: tuple[str, ...], flag: tuple[str, str], message: str
) -> None:
    env = cli.clean_env(NEXO_HOME=str(tmp_path / "home"))
    before = tree_snapshot(tmp_path)
    for json_flag in ((), ("--json",)):
        result = nexo("plugin", *command, *flag, *json_flag, env=env, cwd=tmp_path)
        assert result.code == 2, result.stderr
        assert result.error_line == f"error: {message} [usage]"
        if json_flag:
            assert result.document == {"ok": False, "kind": "usage", "error": message}
    assert tree_snapshot(tmp_path) == before


def test_pack_check_of_a_plugin_past_the_entry_limit_checks_it(
    tmp_path: Path, offline_pip_env: dict[str, str]
) -> None:
    """``pack --check`` checks the tarball it just wrote whatever its size: the warning says
    which flag installing it needs; the check itself is not refused for the limits."""
    env = {**cli.clean_env(NEXO_HOME=str(tmp_path / "home")), **offline_pip_env}
    created = nexo("plugin", "new", "big", "--lang", "python", env=env, cwd=tmp_path)
    assert created.code == 0, created.stderr
    data = tmp_path / "big" / "src" / "data"
    data.mkdir(parents=True)
    for index in range(EXTRA_FILES):
        (data / f"f{index}").write_bytes(b"")
    packed = nexo("plugin", "pack", "--check", "--json", env=env, cwd=tmp_path / "big")
    assert "archive_unsafe" not in packed.stdout + packed.stderr, packed.stderr
    assert packed.code == 0, packed.stderr
    assert "installing it needs --max-entries" in packed.stderr
