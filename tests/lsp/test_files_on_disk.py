"""Files on disk that a lint reads besides the document: when the lint config changes, the
open documents are linted again (`workspace/didChangeWatchedFiles`), as `nexo plugin lint`
would lint them now. A raw JSON-RPC client speaks to the real server process."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import IO, Any

import pytest

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
