#!/usr/bin/env python3
"""The __PLUGIN_ID__ microapp: one tool over newline-delimited JSON-RPC 2.0 on stdio.

Standard library only. It speaks the shapes the daemon's extension host decodes:

* ``initialize`` (id 0, params ``{agent_version, extension_id}``) answers
  ``{server_version, tools: [{name, description, input_schema}], hooks: []}``; tools are
  objects, never bare strings, or the daemon cannot decode the handshake;
* ``tools/call`` (params ``{name, arguments}``) answers the tool's result as it is: the
  daemon hands it to the model unchanged (no ``{output}`` envelope);
* unknown tools and methods get ``-32601``, bad arguments ``-32602``.

The daemon kills the microapp at shutdown without waiting, so state is written as it
changes, under ``$NEXO_EXTENSION_STATE_ROOT``, never on a ``shutdown`` frame.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

VERSION = "0.1.0"
TOOL = "__TOOL_NAME__"
TOOLS: list[dict[str, Any]] = [
    {
        "name": TOOL,
        "description": "Greets someone by name.",
        "input_schema": {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "Who to greet."}},
            "required": ["name"],
            "additionalProperties": False,
        },
    }
]

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602


class ToolError(Exception):
    """A JSON-RPC error for the current request."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def log(level: str, message: str) -> None:
    """One line on stderr; the daemon logs each as `extension stderr`."""
    sys.stderr.write(f"[{level}] {message}\n")
    sys.stderr.flush()


def state_dir() -> Path:
    """Where to keep files: the directory the daemon creates for this microapp."""
    root = os.environ.get("NEXO_EXTENSION_STATE_ROOT")
    return Path(root) if root else Path.cwd() / "state"


def hello(arguments: Any) -> dict[str, Any]:
    if not isinstance(arguments, dict) or not isinstance(arguments.get("name"), str):
        raise ToolError(INVALID_PARAMS, "`name` must be a string")
    return {"greeting": f"Hello, {arguments['name']}!"}


def handle(method: str, params: dict[str, Any]) -> Any:
    """The result of one request; raises ToolError for an error reply."""
    if method == "initialize":
        log("INFO", f"initialize from nexo {params.get('agent_version')}; state in {state_dir()}")
        return {"server_version": f"__PLUGIN_ID__-{VERSION}", "tools": TOOLS, "hooks": []}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        name = params.get("name")
        if name != TOOL:
            raise ToolError(METHOD_NOT_FOUND, f"unknown tool {name!r}")
        return hello(params.get("arguments", {}))
    if method.startswith("hooks/"):
        return {"abort": False}
    raise ToolError(METHOD_NOT_FOUND, f"method not found: {method}")


def write(frame: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(frame, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main() -> int:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError:
            log("WARN", "ignored a line that is not JSON")
            continue
        if not isinstance(request, dict):
            continue
        method = request.get("method")
        request_id = request.get("id")
        if method == "shutdown":
            # Rarely delivered: the daemon kills the process at once.
            if request_id is not None:
                write({"jsonrpc": "2.0", "id": request_id, "result": {"ok": True}})
            return 0
        if not isinstance(method, str) or request_id is None:
            continue  # a reply or a notification: nothing to answer
        params = request.get("params")
        try:
            result = handle(method, params if isinstance(params, dict) else {})
        except ToolError as error:
            write(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": error.code, "message": error.message},
                }
            )
            continue
        write({"jsonrpc": "2.0", "id": request_id, "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
