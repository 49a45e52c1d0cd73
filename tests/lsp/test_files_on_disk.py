"""Files on disk that a lint reads besides the document: when the lint config changes, the
open documents are linted again (`workspace/didChangeWatchedFiles`), as `nexo plugin lint`
would lint them now. A raw JSON-RPC client speaks to the real server process."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from .client import LspSession
from .test_hostile_client import frame, read_message, spawn

MANIFEST = '[plugin]\nid = "demo"\nversion = "0.1.0"\n'


def _next(stream: IO[bytes], method: str) -> dict[str, Any]:
    for _ in range(50):
        message = read_message(stream)
        if message.get("method") == method:
            return message
    raise AssertionError(f"no {method}")


def _codes(published: dict[str, Any]) -> list[str]:
    return [item["code"] for item in published["params"]["diagnostics"]]


@pytest.mark.timeout(60)  # before the fix, the server never asked and never re-linted
def test_a_changed_lint_config_relints_the_open_documents(tmp_path: Path) -> None:
    config = tmp_path / ".nexo.toml"
    config.write_text("[lint]\n", "utf-8")
    manifest = tmp_path / "nexo-plugin.toml"
    process: subprocess.Popen[bytes] = spawn()
    assert process.stdin is not None
    assert process.stdout is not None
    capabilities = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}
    try:
        process.stdin.write(
            frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"capabilities": capabilities}})
        )  # fmt: skip
        process.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        process.stdin.flush()
        # The server asks to be told of changes to the config files (and the manifests).
        request = _next(process.stdout, "client/registerCapability")
        [registration] = request["params"]["registrations"]
        assert registration["method"] == "workspace/didChangeWatchedFiles"
        globs = [watcher["globPattern"] for watcher in registration["registerOptions"]["watchers"]]
        assert {"**/.nexo.toml", "**/pyproject.toml"} <= set(globs)
        process.stdin.write(frame({"jsonrpc": "2.0", "id": request["id"], "result": None}))
        opened = {"uri": manifest.as_uri(), "languageId": "toml", "version": 1, "text": MANIFEST}
        process.stdin.write(
            frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                   "params": {"textDocument": opened}})
        )  # fmt: skip
        process.stdin.flush()
        first = _next(process.stdout, "textDocument/publishDiagnostics")
        assert _codes(first) == ["NX010", "NX010", "NX010"]

        config.write_text('[lint]\nignore = ["NX010"]\n', "utf-8")
        process.stdin.write(
            frame({"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles",
                   "params": {"changes": [{"uri": config.as_uri(), "type": 2}]}})
        )  # fmt: skip
        process.stdin.flush()
        again = _next(process.stdout, "textDocument/publishDiagnostics")
        assert again["params"]["uri"] == manifest.as_uri()
        assert _codes(again) == []
    finally:
        process.kill()
        process.communicate(timeout=10)


MICROAPP = """\
[plugin]
id = "agent_creator"
version = "0.1.0"

[capabilities]
tools = ["create_agent"]

[transport]
kind = "stdio"
command = "./agent_creator"
"""

COMPANION = """\
[plugin]
id = "agent_creator"
version = "0.1.0"
name = "Agent creator"
description = "Operator UI."
min_nexo_version = ">=0.1.0"

[plugin.capabilities.admin]
required = ["agents_crud"]
"""

AGENTS = "agents:\n  - id: a\n    model: {provider: x, model: y}\n"
GRANT = "extensions:\n  entries:\n    agent_creator:\n      capabilities_grant: [agents_crud]\n"


@pytest.mark.timeout(60)  # before the fix, the server never re-linted agents.yaml
def test_an_extensions_yaml_created_on_disk_relints_an_open_agents_yaml(tmp_path: Path) -> None:
    """`agents.yaml` is checked against the `extensions.yaml` beside it: without one, a
    microapp requiring admin capabilities gets none (NX225). Creating the file on disk clears
    the finding, as `nexo plugin lint config/agents.yaml` says at once."""
    app = tmp_path / "extensions" / "agent_creator"
    app.mkdir(parents=True)
    (app / "plugin.toml").write_text(MICROAPP, "utf-8")
    (app / "nexo-plugin.toml").write_text(COMPANION, "utf-8")
    config = tmp_path / "config"
    config.mkdir()
    agents = config / "agents.yaml"
    agents.write_text(AGENTS, "utf-8")
    process: subprocess.Popen[bytes] = spawn(cwd=tmp_path)
    assert process.stdin is not None
    assert process.stdout is not None
    capabilities = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}
    try:
        process.stdin.write(
            frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"capabilities": capabilities}})
        )  # fmt: skip
        process.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        process.stdin.flush()
        request = _next(process.stdout, "client/registerCapability")
        [registration] = request["params"]["registrations"]
        globs = [watcher["globPattern"] for watcher in registration["registerOptions"]["watchers"]]
        assert "**/extensions.yaml" in globs
        process.stdin.write(frame({"jsonrpc": "2.0", "id": request["id"], "result": None}))
        opened = {"uri": agents.as_uri(), "languageId": "yaml", "version": 1, "text": AGENTS}
        process.stdin.write(
            frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                   "params": {"textDocument": opened}})
        )  # fmt: skip
        process.stdin.flush()
        assert _codes(_next(process.stdout, "textDocument/publishDiagnostics")) == ["NX225"]

        extensions = config / "extensions.yaml"
        extensions.write_text(GRANT, "utf-8")
        process.stdin.write(
            frame({"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles",
                   "params": {"changes": [{"uri": extensions.as_uri(), "type": 1}]}})
        )  # fmt: skip
        process.stdin.flush()
        again = _next(process.stdout, "textDocument/publishDiagnostics")
        assert again["params"]["uri"] == agents.as_uri()
        assert _codes(again) == []
    finally:
        process.kill()
        process.communicate(timeout=10)


def _refusal(tmp_path: Path, manifest: Path) -> str:
    """What ``nexo plugin lint`` says of the lint settings for ``manifest``, without the kind."""
    result = subprocess.run(
        [sys.executable, "-m", "nexo_pkg", "plugin", "lint", str(manifest)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ")
    assert line.endswith(" [config_invalid]")
    return line.removeprefix("error: ").removesuffix(" [config_invalid]")


@pytest.mark.timeout(120)  # before the fix, the editor was never told (server log only)
def test_a_broken_lint_config_is_said_in_the_editor_once_until_it_changes(
    tmp_path: Path,
) -> None:
    config = tmp_path / ".nexo.toml"
    config.write_bytes(b'\xff[lint]\nignore = ["NX010"]\n')
    manifest = tmp_path / "nexo-plugin.toml"
    manifest.write_text(MANIFEST, "utf-8")
    unreadable = _refusal(tmp_path, manifest)
    config.write_text('[lint]\nselect = ["NX999"]\n', "utf-8")
    unknown_rule = _refusal(tmp_path, manifest)
    config.write_bytes(b'\xff[lint]\nignore = ["NX010"]\n')

    async def scenario() -> None:
        async with LspSession() as session:
            uri = session.open(manifest, MANIFEST)
            published = await session.diagnostics(uri, version=1)
            # Linted with every rule, and the editor is told why, in the command's words.
            assert [d.code for d in published.diagnostics] == ["NX010"] * 3
            [said] = session.log_messages
            assert said.startswith(f"nexo: lint settings for {manifest}: ")
            assert unreadable in said
            # Edits do not say it again while it stays as it is.
            session.change(uri, MANIFEST + "# é😀\n")
            version = session.change(uri, MANIFEST + "# é😀 日本\n")
            await session.diagnostics(uri, version=version)
            assert session.log_messages == [said]
            # Mended: nothing to say; broken another way: said once more.
            config.write_text("[lint]\n", "utf-8")
            await session.diagnostics(uri, version=session.change(uri, MANIFEST))
            assert session.log_messages == [said]
            config.write_text('[lint]\nselect = ["NX999"]\n', "utf-8")
            await session.diagnostics(uri, version=session.change(uri, MANIFEST + "\n"))
            assert len(session.log_messages) == 2
            assert unknown_rule in session.log_messages[1]
        assert session.returncode == 0

    asyncio.run(scenario())


@pytest.mark.timeout(120)
def test_a_save_lints_again_with_the_files_on_disk_as_they_are_now(tmp_path: Path) -> None:
    """A client that watches no files still gets the command's verdict at each save: the lint
    config and a manifest beside the document are read as they are when it is saved."""
    manifest = tmp_path / "plugin.toml"
    text = MANIFEST + '\n[plugin.extends]\ntools = ["hello"]\n'
    manifest.write_text(text, "utf-8")

    def command_codes() -> list[str]:
        done = subprocess.run(
            [sys.executable, "-m", "nexo_pkg", "plugin", "lint", "--format", "json", str(manifest)],
            capture_output=True,
            check=False,
        )
        [report] = json.loads(done.stdout)["files"]
        return [item["code"] for item in report["diagnostics"]]

    async def scenario() -> None:
        async with LspSession() as session:
            uri = session.open(manifest, text)
            opened = await session.diagnostics(uri, version=1)
            assert [d.code for d in opened.diagnostics] == command_codes()
            assert "NX113" in command_codes()
            # Changed on disk, no didChangeWatchedFiles: the save is what brings it in.
            (tmp_path / ".nexo.toml").write_text('[lint]\nignore = ["NX113"]\n', "utf-8")
            session.save(uri)
            saved = await session.diagnostics(uri, version=1)
            assert [d.code for d in saved.diagnostics] == command_codes()
            assert "NX113" not in command_codes()
            (tmp_path / "nexo-plugin.toml").write_text(text, "utf-8")
            session.save(uri)
            shadowed = await session.diagnostics(uri, version=1)
            assert [d.code for d in shadowed.diagnostics] == command_codes()
            assert "NX006" in command_codes()
        assert session.returncode == 0

    asyncio.run(scenario())
