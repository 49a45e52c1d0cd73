#!/usr/bin/env python3
"""echo_ext.rs (crates/extensions/examples/echo_ext.rs:30-120) in Python."""

import json
import sys
from typing import Any

TOOLS = [
    {
        "name": "echo",
        "description": "Echoes its arguments",
        "input_schema": {"type": "object", "additionalProperties": True},
    }
]


def write(frame: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()


def result(request_id: Any, value: Any) -> None:
    write({"jsonrpc": "2.0", "id": request_id, "result": value})


def error(request_id: Any, code: int, message: str) -> None:
    write({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


for line in sys.stdin:
    if not line.strip():
        continue
    try:
        request = json.loads(line)
    except ValueError as exc:
        error(None, -32700, f"parse error: {exc}")
        continue
    request_id = request.get("id")
    method = request.get("method", "")
    params = request.get("params") or {}
    if method == "initialize":
        result(
            request_id,
            {
                "server_version": "echo-0.1.0",
                "tools": TOOLS,
                "hooks": ["before_message", "before_tool_call"],
            },
        )
    elif method == "tools/list":
        result(request_id, {"tools": TOOLS})
    elif method.startswith("hooks/"):
        if params.get("test_abort"):
            result(request_id, {"abort": True, "reason": "test abort"})
        else:
            result(request_id, {"abort": False})
    elif method == "tools/call":
        if params.get("name") != "echo":
            error(request_id, -32601, f"unknown tool `{params.get('name')}`")
            continue
        result(request_id, {"echoed": params.get("arguments", {})})
    elif method == "shutdown":
        if request_id is not None:
            result(request_id, {"ok": True})
        break
    else:
        error(request_id, -32601, f"method not found: {method}")
