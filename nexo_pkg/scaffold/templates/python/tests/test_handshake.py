"""Run the plugin as the daemon does: a subprocess speaking JSON-RPC over stdio.

Needs the SDK importable (`pip install -r requirements.txt`, or PYTHONPATH pointing at a
directory that holds `nexo_plugin_sdk`). Run with `python -m unittest discover -s tests -v`
or `pytest`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
import unittest
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = tomllib.loads((ROOT / "plugin.toml").read_text(encoding="utf-8"))
PLUGIN_ID = MANIFEST["plugin"]["id"]
TOOL = MANIFEST["plugin"]["extends"]["tools"][0]


def converse(
    *requests: dict[str, Any],
) -> tuple[list[dict[str, Any]], subprocess.CompletedProcess[str]]:
    """Send the requests, close stdin, and return the replies in order."""
    frames = "".join(json.dumps({"jsonrpc": "2.0", **request}) + "\n" for request in requests)
    completed = subprocess.run(
        [sys.executable, str(ROOT / "src" / "main.py")],
        input=frames,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    replies = [json.loads(line) for line in completed.stdout.splitlines() if line.strip()]
    return replies, completed


class HandshakeTest(unittest.TestCase):
    def test_initialize_echoes_manifest_and_tools(self) -> None:
        replies, completed = converse(
            {"id": 1, "method": "initialize", "params": {"nexo_version": "0.1.0"}},
            {"id": 2, "method": "shutdown", "params": {"reason": "test"}},
        )
        self.assertEqual(completed.returncode, 0, completed.stderr)
        initialize = replies[0]
        self.assertEqual(initialize["id"], 1)
        self.assertEqual(initialize["result"]["manifest"]["plugin"]["id"], PLUGIN_ID)
        self.assertIsInstance(initialize["result"]["server_version"], str)
        names = [tool["name"] for tool in initialize["result"]["tools"]]
        self.assertEqual(names, [TOOL])
        self.assertEqual(replies[1], {"jsonrpc": "2.0", "id": 2, "result": {"ok": True}})

    def test_tool_invoke_returns_text(self) -> None:
        replies, completed = converse(
            {"id": 1, "method": "initialize", "params": {"nexo_version": "0.1.0"}},
            {
                "id": 2,
                "method": "tool.invoke",
                "params": {"plugin_id": PLUGIN_ID, "tool_name": TOOL, "args": {"name": "Ada"}},
            },
            {"id": 3, "method": "shutdown", "params": {}},
        )
        self.assertEqual(completed.returncode, 0, completed.stderr)
        by_id = {reply["id"]: reply for reply in replies}
        self.assertEqual(by_id[2]["result"]["content"][0]["text"], "Hello, Ada!")
        self.assertFalse(by_id[2]["result"]["is_error"])
        self.assertEqual(by_id[3]["result"], {"ok": True})

    def test_bad_arguments_are_a_typed_error(self) -> None:
        replies, _ = converse(
            {"id": 1, "method": "initialize", "params": {"nexo_version": "0.1.0"}},
            {
                "id": 2,
                "method": "tool.invoke",
                "params": {"plugin_id": PLUGIN_ID, "tool_name": TOOL, "args": {}},
            },
            {"id": 3, "method": "shutdown", "params": {}},
        )
        by_id = {reply["id"]: reply for reply in replies}
        self.assertEqual(by_id[2]["error"]["code"], -33402)
        self.assertEqual(by_id[2]["error"]["data"]["details"], {"field": "name"})

    def test_unknown_method_is_method_not_found(self) -> None:
        replies, _ = converse(
            {"id": 1, "method": "initialize", "params": {"nexo_version": "0.1.0"}},
            {"id": 2, "method": "no.such.method", "params": {}},
            {"id": 3, "method": "shutdown", "params": {}},
        )
        by_id = {reply["id"]: reply for reply in replies}
        self.assertEqual(by_id[2]["error"]["code"], -32601)


if __name__ == "__main__":
    unittest.main()
