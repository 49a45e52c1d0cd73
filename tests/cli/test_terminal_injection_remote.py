"""What a release, an archive or a receipt on disk says reaches the terminal escaped, in every
command that echoes it: asset names and tags of the loopback GitHub, file names found in an
installed tree, and every field of a receipt, in ``install``, ``list``, ``verify``, ``upgrade``
and ``remove``. The text shown keeps the escapes visible; no control character is written."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from adversarial.harness import snapshot
from support.cli import CliResult, clean_env, nexo
from support.github_server import GitHubServer, github_server
from support.tarballs import (
    manifest_text,
    plugin_members,
    plugin_tarball,
    release_assets,
    targz,
)

__all__ = ["github_server"]

# Red text, then clear the screen through the C1 CSI, then a forged line of its own.
HOSTILE = "\x1b[31mx\x1b[0m\x9b2J\nSigner: verified"
SHOWN = "\\u001b[31mx\\u001b[0m\\u009b2J\\u000aSigner: verified"


def assert_escaped(result: CliResult) -> None:
    """No C0 (but the line feeds ending lines), DEL or C1 character in either stream."""
    for stream in (result.stdout, result.stderr):
        raw = [c for c in stream if c != "\n" and (ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0)]
        assert raw == [], stream
    assert "Traceback" not in result.stdout + result.stderr


@dataclass
class Env:
    server: GitHubServer
    home: Path
    dest: Path

    def run(self, *args: str) -> CliResult:
        env = clean_env(
            NEXO_HOME=str(self.home),
            NEXO_GITHUB_API_BASE=self.server.url,
            NEXO_HTTP_RETRY_BASE_MS="1",
            NO_PROXY="127.0.0.1,localhost",
        )
        return nexo("plugin", *args, "--dest", str(self.dest), env=env, in_process=True)


@pytest.fixture
def env(github_server: GitHubServer, tmp_path: Path) -> Env:
    dest = tmp_path / "plugins"
    dest.mkdir()
    return Env(github_server, tmp_path / "home", dest)


def test_asset_names_of_a_release_are_escaped_in_asset_not_found(env: Env) -> None:
    env.server.publish(
        "acme", "hello", "v1.0.0", {f"hello-1.0.0-{HOSTILE}.tar.gz": b"x", f"{HOSTILE}.zip": b"x"}
    )
    before = snapshot(env.dest)
    result = env.run("install", "acme/hello", "--yes")
    assert result.exit_code == 1
    assert_escaped(result)
    assert SHOWN in result.stderr
    document = env.run("install", "acme/hello", "--yes", "--json")
    assert document.document["kind"] == "asset_not_found"
    assert f"hello-1.0.0-{HOSTILE}.tar.gz" in document.document["available"]
    assert_escaped(document)
    assert snapshot(env.dest) == before


def test_tags_listed_as_nearest_are_escaped(env: Env) -> None:
    data = plugin_tarball("hello", "0.1.0")
    env.server.publish(
        "acme", "hello", f"v0.1.0{HOSTILE}", release_assets("hello", "0.1.0", data=data)
    )
    result = env.run("install", "acme/hello@0.2.0", "--yes")
    assert result.exit_code == 1
    assert_escaped(result)
    assert f"v0.1.0{SHOWN}" in result.stderr


def test_manifest_strings_of_a_github_release_are_escaped_on_the_confirmation_screen(
    env: Env,
) -> None:
    text = manifest_text("hello", "1.0.0").replace(
        'name = "Hello plugin"', 'name = "Hello\\u001b[2K\\u001b[1A\\u009b2J"'
    )
    text += '\n[plugin.entrypoint]\ncommand = "python3"\nargs = ["-c", "\\u001b]0;title\\u0007"]\n'
    data = targz(plugin_members("hello", "1.0.0", manifest=text))
    env.server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0", data=data))
    result = env.run("install", "acme/hello", "--yes", "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert_escaped(result)
    assert "Hello\\u001b[2K\\u001b[1A\\u009b2J" in result.stderr
    assert "NOT SIGNED" in result.stderr
    signer_lines = [line for line in result.stderr.splitlines() if line.startswith("Signer:")]
    assert signer_lines == ["Signer:       unsigned"]


def hostile_receipt(dest: Path) -> Path:
    """A plugin installed by another tool whose receipt carries escape sequences in every
    field, beside a tree that verifies nothing."""
    tree = dest / "evil-1.0.0"
    tree.mkdir()
    (tree / "nexo-plugin.toml").write_text(manifest_text("evil", "1.0.0"))
    fields = ("owner", "repo", "tag", "target", "sha256", "installed_at")
    receipt = {"schema_version": "1.0", "id": "evil", "version": f"1.0.0{HOSTILE}"}
    receipt.update({name: f"{name}{HOSTILE}" for name in fields})
    receipt["source"] = "github-releases"
    (tree / ".nexo-install.json").write_text(json.dumps(receipt))
    return tree


@pytest.mark.parametrize(
    "command",
    [
        ("list",),
        ("list", "--include-orphan"),
        ("list", "--json"),
        ("verify",),
        ("verify", "evil"),
        ("verify", "--json"),
        ("upgrade", "evil", "--yes"),
        ("upgrade", "--all", "--yes"),
        ("upgrade", "evil", "--yes", "--json"),
    ],
)
def test_receipt_fields_are_escaped(env: Env, command: tuple[str, ...]) -> None:
    hostile_receipt(env.dest)
    before = snapshot(env.dest)
    result = env.run(*command)
    assert_escaped(result)
    if "--json" in command:
        json.loads(result.stdout)
    elif command[0] != "upgrade":
        assert SHOWN in result.stdout + result.stderr
    assert snapshot(env.dest) == before


def test_remove_of_a_hostile_receipt_is_escaped(env: Env) -> None:
    tree = hostile_receipt(env.dest)
    result = env.run("remove", "evil", "--yes")
    assert result.exit_code == 0, result.stderr
    assert_escaped(result)
    assert not tree.exists()


def test_names_of_files_found_in_an_installed_tree_are_escaped_by_verify(env: Env) -> None:
    data = plugin_tarball("hello", "1.0.0")
    env.server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0", data=data))
    installed = env.run("install", "acme/hello", "--yes")
    assert installed.exit_code == 0, installed.stderr
    (env.dest / "hello-1.0.0" / f"extra{HOSTILE}").write_text("planted")
    result = env.run("verify", "hello")
    assert result.exit_code == 1
    assert_escaped(result)
    assert f"extra{SHOWN}" in result.stdout


def test_an_install_root_named_by_the_daemon_config_is_escaped(
    github_server: GitHubServer, tmp_path: Path
) -> None:
    # The root comes from the daemon's configuration on disk, not from the command line.
    config = tmp_path / "config"
    (config / "plugins").mkdir(parents=True)
    root = tmp_path / f"plugins{HOSTILE}"
    (config / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths:\n    - {json.dumps(str(root))}\n"
    )
    data = plugin_tarball("hello", "1.0.0")
    github_server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0", data=data))
    env = clean_env(
        NEXO_HOME=str(tmp_path / "home"),
        NEXO_CONFIG_DIR=str(config),
        NEXO_GITHUB_API_BASE=github_server.url,
        NO_PROXY="127.0.0.1,localhost",
    )
    for command in (
        ["list"],
        ["verify"],
        ["install", "acme/hello", "--yes", "--dry-run"],
        ["install", "acme/hello", "--yes"],
        ["list"],
        ["upgrade", "hello", "--yes"],
        ["remove", "hello", "--yes"],
    ):
        result = nexo("plugin", *command, env=env, in_process=True)
        assert result.exit_code == 0, (command, result.stderr)
        assert_escaped(result)
    assert root.is_dir()
