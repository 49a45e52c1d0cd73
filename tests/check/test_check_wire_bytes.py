"""The bytes ``check`` writes on a plugin's stdin are the bytes the daemon's plugin host writes.

The daemon (``crates/core/src/agent/nexo_plugin_registry/subprocess.rs``, nexo-rs eec3f33)
builds its frames with ``json!`` and writes ``serde_json::to_string`` plus a newline; its
``serde_json`` has no ``preserve_order`` (``Cargo.lock``: no ``indexmap`` dependency), so every
object is a ``BTreeMap`` and its keys come out sorted. ``initialize`` is id 1 with
``{"nexo_version": …}``; ``shutdown`` is always id 2 with ``{"reason": "host requested"}``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from check.check_plugins import cli_check, scripted_plugin


def _sorted_everywhere(value: Any) -> bool:
    if isinstance(value, dict):
        return list(value) == sorted(value) and all(map(_sorted_everywhere, value.values()))
    if isinstance(value, list):
        return all(map(_sorted_everywhere, value))
    return True


def test_check_writes_the_daemons_initialize_and_shutdown_bytes(tmp_path: Path) -> None:
    root = scripted_plugin(tmp_path / "wire", "ok", tools=("scripted_echo",))
    log = tmp_path / "stdin.log"
    env = {**os.environ, "FIXTURE_STDIN_LOG": str(log)}
    code, document = cli_check(
        root,
        "--nexo-version",
        "0.2.1",
        "--invoke",
        "scripted_echo",
        "--args",
        '{"text": "hi", "a": {"z": 1, "b": 2}}',
        env=env,
    )
    assert code == 0, document["checks"]
    lines = log.read_bytes().splitlines(keepends=True)
    assert lines[0] == (
        b'{"id":1,"jsonrpc":"2.0","method":"initialize","params":{"nexo_version":"0.2.1"}}\n'
    )
    assert lines[-1] == (
        b'{"id":2,"jsonrpc":"2.0","method":"shutdown","params":{"reason":"host requested"}}\n'
    )
    frames = [json.loads(line) for line in lines]
    # Every frame, tool.invoke and its args included, has its keys in serde_json's order, and
    # no other request reuses the shutdown's id.
    assert all(_sorted_everywhere(frame) for frame in frames), lines
    assert [frame["id"] for frame in frames if frame.get("id") == 2] == [2]
    invoke = next(frame for frame in frames if frame.get("method") == "tool.invoke")
    assert invoke["params"]["args"] == {"a": {"b": 2, "z": 1}, "text": "hi"}
    assert document["ok"] is True


def test_invoke_sends_one_tool_invoke_with_the_contracts_four_params(tmp_path: Path) -> None:
    """``--invoke TOOL --args JSON`` is one ``tool.invoke`` whose params are exactly
    ``plugin_id`` (the manifest's id), ``tool_name``, ``args`` and a string ``agent_id``
    (contract §5.t), keys sorted as serde_json writes them."""
    root = scripted_plugin(tmp_path / "wire", "ok", tools=("scripted_echo",))
    log = tmp_path / "stdin.log"
    env = {**os.environ, "FIXTURE_STDIN_LOG": str(log)}
    code, document = cli_check(
        root, "--invoke", "scripted_echo", "--args", '{"text": "hi"}', env=env
    )
    assert code == 0, document["checks"]
    lines = log.read_bytes().splitlines()
    invokes = [line for line in lines if json.loads(line).get("method") == "tool.invoke"]
    assert len(invokes) == 1, lines
    frame = json.loads(invokes[0])
    assert list(frame) == ["id", "jsonrpc", "method", "params"]
    assert isinstance(frame["id"], int)
    assert frame["id"] not in (1, 2)  # initialize's and shutdown's ids
    params = frame["params"]
    assert list(params) == ["agent_id", "args", "plugin_id", "tool_name"]
    assert params["plugin_id"] == "scripted"
    assert params["tool_name"] == "scripted_echo"
    assert params["args"] == {"text": "hi"}
    assert isinstance(params["agent_id"], str)
    assert params["agent_id"]
    assert document["invoke"]["tool"] == "scripted_echo"
    assert "result" in document["invoke"]
