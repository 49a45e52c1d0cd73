"""Entry point of the __PLUGIN_ID__ nexo plugin.

The daemon spawns `bin/__PLUGIN_ID__`, which runs this file with the vendored dependencies on
PYTHONPATH, and talks newline-delimited JSON-RPC 2.0 over stdin/stdout. The SDK answers
`initialize` (manifest + tool catalog) and `shutdown`; this module supplies the tools.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from nexo_plugin_sdk import (
    PluginAdapter,
    ToolArgumentInvalid,
    ToolDef,
    ToolInvocation,
    ToolNotFound,
    read_manifest,
    text_result,
)

HELLO_TOOL = "__TOOL_NAME__"

TOOLS = [
    ToolDef(
        HELLO_TOOL,
        "Greet someone by name.",
        {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "Who to greet."}},
            "required": ["name"],
            "additionalProperties": False,
        },
    ),
]


def manifest_path() -> Path:
    """Find the manifest: next to src/ in the project, two levels up once packed.

    The daemon reads plugin.toml and nexo-plugin.toml (that one first when both exist).
    """
    here = Path(__file__).resolve().parent
    for directory in (here.parent, here.parent.parent):
        for name in ("nexo-plugin.toml", "plugin.toml"):
            if (directory / name).is_file():
                return directory / name
    raise SystemExit("__PLUGIN_ID__: plugin.toml not found above " + str(here))


def hello(args: Any) -> dict[str, Any]:
    """The `__TOOL_NAME__` tool: a typed error for bad arguments, a text result otherwise."""
    name = args.get("name") if isinstance(args, dict) else None
    if not isinstance(name, str) or not name.strip():
        raise ToolArgumentInvalid("`name` must be a non-empty string", details={"field": "name"})
    return text_result(f"Hello, {name.strip()}!")


def on_tool(invocation: ToolInvocation) -> dict[str, Any]:
    """Dispatch one `tool.invoke` request to the matching tool."""
    if invocation.tool_name == HELLO_TOOL:
        return hello(invocation.args)
    raise ToolNotFound(invocation.tool_name)


async def on_shutdown() -> None:
    # stdout carries the protocol; diagnostics go to stderr.
    print("__PLUGIN_ID__: shutting down", file=sys.stderr)


async def main() -> None:
    manifest_toml = manifest_path().read_text(encoding="utf-8")
    plugin = read_manifest(manifest_toml)["plugin"]
    adapter = PluginAdapter(
        manifest_toml=manifest_toml,
        server_version=f"{plugin['id']}-{plugin['version']}",
        tools=TOOLS,
        on_tool=on_tool,
        on_shutdown=on_shutdown,
    )
    await adapter.run()


if __name__ == "__main__":
    asyncio.run(main())
