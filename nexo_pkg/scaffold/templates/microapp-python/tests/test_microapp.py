"""Run the microapp as the daemon's extension host does: a subprocess speaking JSON-RPC.

Standard library only: `python -m unittest discover -s tests -v` (or `pytest`).
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
EXTENSION_ID = MANIFEST["plugin"]["id"]
TOOL = MANIFEST["capabilities"]["tools"][0]


def converse(*requests: dict[str, Any]) -> list[dict[str, Any]]:
    """Send the requests, close stdin, and return the replies in order."""
    frames = "".join(json.dumps({"jsonrpc": "2.0", **request}) + "\n" for request in requests)
    completed = subprocess.run(
        [sys.executable, str(ROOT / "src" / "main.py")],
        input=frames,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return [json.loads(line) for line in completed.stdout.splitlines() if line.strip()]


def initialize() -> dict[str, Any]:
    params = {"agent_version": "0.1.5", "extension_id": EXTENSION_ID}
    return {"id": 0, "method": "initialize", "params": params}


class MicroappTest(unittest.TestCase):
    def test_initialize_answers_the_shape_the_daemon_decodes(self) -> None:
        (reply,) = converse(initialize())
        self.assertEqual(reply["id"], 0)
        result = reply["result"]
        self.assertIsInstance(result["server_version"], str)
        self.assertEqual(result["hooks"], [])
        for tool in result["tools"]:
            # Objects with a string name: bare strings fail the daemon's handshake.
            self.assertIsInstance(tool, dict)
            self.assertIsInstance(tool["name"], str)
            self.assertIsInstance(tool["description"], str)
            self.assertIsInstance(tool["input_schema"], dict)
        self.assertEqual([tool["name"] for tool in result["tools"]], [TOOL])

    def test_tools_call_returns_the_result_as_it_is(self) -> None:
        replies = converse(
            initialize(),
            {"id": 1, "method": "tools/call", "params": {"name": TOOL, "arguments": {"name": "Ana"}}},
        )
        self.assertEqual(replies[1], {"jsonrpc": "2.0", "id": 1, "result": {"greeting": "Hello, Ana!"}})

    def test_bad_arguments_and_unknown_tools_are_errors(self) -> None:
        replies = converse(
            {"id": 1, "method": "tools/call", "params": {"name": TOOL, "arguments": {}}},
            {"id": 2, "method": "tools/call", "params": {"name": "nope", "arguments": {}}},
            {"id": 3, "method": "no/such/method", "params": {}},
        )
        self.assertEqual([reply["error"]["code"] for reply in replies], [-32602, -32601, -32601])

    def test_notifications_get_no_reply(self) -> None:
        replies = converse({"method": "nexo/notify/agent_event", "params": {}}, initialize())
        self.assertEqual([reply["id"] for reply in replies], [0])


if __name__ == "__main__":
    unittest.main()
