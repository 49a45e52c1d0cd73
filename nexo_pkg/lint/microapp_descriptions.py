"""What each key of a microapp's ``plugin.toml`` and of the daemon's ``extensions.yaml`` does,
for the JSON Schemas built from the lint models: hover (``nexo plugin lsp``) and taplo show it.

Keys are dotted paths; ``*`` stands for any name of a map (an MCP server, an entry id). Each
path maps to its description and, where the daemon has one, its default (as the daemon's
``#[serde(default)]`` gives it). Sources: the daemon's ``crates/extensions/src/manifest.rs``
and ``crates/config/src/types/extensions.rs``, as ``docs/microapps.md`` reads them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EXTENSIONS_HELP", "MANIFEST_HELP", "describe"]

_NOT_BY_NEWER = " Dropped, with a warning, by the unified manifest of newer daemons (NX213)."

MANIFEST_HELP: dict[str, tuple[str, Any]] = {
    "plugin": ("The microapp's identity.", None),
    "plugin.id": (
        "Microapp id: a lowercase letter, then lowercase letters, digits, `_` or `-`, at most "
        "64 bytes; not the id of a native plugin (agent, browser, core, email, heartbeat, "
        "memory, telegram, whatsapp). Prefer `_`: pack and install name files by the plugin "
        "id rule (NX217). The companion nexo-plugin.toml must carry the same id.",
        None,
    ),
    "plugin.version": ("The microapp's version, SemVer (`0.1.0`).", None),
    "plugin.name": ("Human-readable name.", None),
    "plugin.description": ("One-line description, at most 512 characters.", None),
    "plugin.min_agent_version": (
        "Oldest daemon version the microapp runs on, a SemVer version (`0.2.0`, not a "
        "requirement such as `>=0.2.0`): an older daemon skips the microapp.",
        None,
    ),
    "plugin.priority": (
        "Hook firing order: lower values fire first (`-10` before `0`); a 32-bit integer."
        + _NOT_BY_NEWER,
        0,
    ),
    "capabilities": (
        "What the microapp provides, by name: at least one tool, hook, channel, provider or "
        "poller (NX205). Informational: the daemon registers the tools and hooks `initialize` "
        "returns.",
        None,
    ),
    "capabilities.tools": (
        "Tool names: `^[a-z][a-z0-9_]*$`, 64 bytes at most, each once.",
        [],
    ),
    "capabilities.hooks": (
        "Hook names: `before_message`, `after_message`, `before_tool_call`, "
        "`after_tool_call` (the host skips others, NX215).",
        [],
    ),
    "capabilities.channels": ("Channel names: `^[a-z][a-z0-9_]*$`, each once.", []),
    "capabilities.providers": ("Provider names: `^[a-z][a-z0-9_]*$`, each once.", []),
    "capabilities.pollers": ("Poller names: `^[a-z][a-z0-9_]*$`, each once.", []),
    "transport": (
        "How the daemon talks to the microapp, by `kind`: `stdio` (spawned as a child; the only "
        "kind boot starts), `nats` or `http` (NX209).",
        None,
    ),
    "transport.kind": ("The transport: `stdio`, `nats` or `http`.", None),
    "transport.command": (
        "Program the daemon spawns, in the microapp's directory (not blank): `./bin/<id>` in "
        "a packed microapp.",
        None,
    ),
    "transport.args": ("Arguments passed to `command`.", []),
    "transport.subject_prefix": ("NATS subject prefix of the microapp (not blank).", None),
    "transport.url": ("Base URL of the microapp: `http(s)://host[:port][/path]`.", None),
    "meta": ("Informational details about the microapp.", None),
    "meta.author": ("Author.", None),
    "meta.license": ("Licence, as an SPDX identifier (`MIT`).", None),
    "mcp_servers": (
        "MCP servers the microapp brings, by name (`^[a-z][a-z0-9_-]*$`, 32 bytes at most), "
        "added to the daemon's as `<id>.<name>`." + _NOT_BY_NEWER,
        {},
    ),
    "mcp_servers.*.transport": (
        "How to reach the server: `stdio` (a command) or over HTTP: `streamable_http`, `sse` "
        "or `auto`.",
        None,
    ),
    "mcp_servers.*.command": (
        "Program that runs the server (not blank); `${EXTENSION_ROOT}` is the microapp's "
        "directory.",
        None,
    ),
    "mcp_servers.*.args": ("Arguments passed to `command`.", []),
    "mcp_servers.*.env": ("Environment variables for the server.", {}),
    "mcp_servers.*.cwd": ("Working directory of the server.", None),
    "mcp_servers.*.url": ("URL of the server, `http://` or `https://`.", None),
    "mcp_servers.*.headers": ("HTTP headers sent with each request.", {}),
    "mcp_servers.*.log_level": ("Log level of the server.", None),
    "mcp_servers.*.context_passthrough": (
        "Pass the agent's context to the server's tools in `_meta`.",
        False,
    ),
    "context": ("Context the daemon adds to each tool call." + _NOT_BY_NEWER, None),
    "context.passthrough": (
        "Add `_meta` (agent and session ids, binding and inbound data) to the arguments of "
        "each tool call; off, so closed argument schemas are not broken.",
        False,
    ),
    "requires": (
        "What the microapp needs on the host: a microapp missing one is skipped at boot."
        + _NOT_BY_NEWER,
        None,
    ),
    "requires.bins": ("Programs that must be on PATH.", []),
    "requires.env": (
        "Environment variables that must be set. Secret-named ones (`*_TOKEN`, `*_KEY`, "
        "`*_SECRET`, …) are removed from the child's environment all the same (NX212).",
        [],
    ),
    "outbound_bindings": (
        "For each channel, the accounts the microapp may send through." + _NOT_BY_NEWER,
        {},
    ),
}

EXTENSIONS_HELP: dict[str, tuple[str, Any]] = {
    "extensions": (
        "The daemon's microapp host: where microapps are found and what each may do. Every "
        "level refuses unknown keys, and one stops the daemon from starting (NX220).",
        None,
    ),
    "extensions.enabled": ("Run the microapp host at all.", True),
    "extensions.search_paths": (
        "Directories discovery walks for microapps (a directory holding a `plugin.toml`); "
        "`${VAR}` placeholders are expanded.",
        ["./extensions"],
    ),
    "extensions.disabled": ("Ids of discovered microapps the daemon does not load.", []),
    "extensions.allowlist": ("When not empty, the only ids the daemon loads.", []),
    "extensions.ignore_dirs": (
        "Directory names discovery does not enter.",
        ["target", ".git", "node_modules", "dist", ".build"],
    ),
    "extensions.max_depth": (
        "How many directory levels below each search path discovery looks for `plugin.toml`.",
        3,
    ),
    "extensions.transport_defaults": ("Defaults for the microapps' transports.", None),
    "extensions.transport_defaults.nats": (
        "Defaults of every NATS microapp; durations as humantime reads them (`30s`, `500ms`).",
        None,
    ),
    "extensions.transport_defaults.nats.subject_prefix": ("Subject prefix.", "ext"),
    "extensions.transport_defaults.nats.call_timeout": ("Deadline of a call.", "30s"),
    "extensions.transport_defaults.nats.handshake_timeout": ("Deadline of the handshake.", "10s"),
    "extensions.transport_defaults.nats.heartbeat_interval": (
        "Time between heartbeats.",
        "15s",
    ),
    "extensions.transport_defaults.nats.heartbeat_grace_factor": (
        "Heartbeat intervals that may pass without one before the microapp counts as gone.",
        3,
    ),
    "extensions.transport_defaults.nats.shutdown_grace": (
        "Time a microapp is given to shut down.",
        "2s",
    ),
    "extensions.watch": ("Watching the discovered microapps' `plugin.toml` files.", None),
    "extensions.watch.enabled": (
        "Log a warning when a discovered `plugin.toml` changes (a restart applies it).",
        False,
    ),
    "extensions.watch.debounce_ms": ("Quiet time before a change is logged, in ms.", 500),
    "extensions.doctor": ("Timeouts and concurrency of the daemon's `ext doctor --runtime`.", None),
    "extensions.doctor.stdio_timeout_ms": ("Deadline for a stdio microapp, in ms.", 5000),
    "extensions.doctor.nats_timeout_ms": ("Deadline for a NATS microapp, in ms.", 5000),
    "extensions.doctor.http_timeout_ms": ("Deadline for an HTTP microapp, in ms.", 3000),
    "extensions.doctor.concurrency": ("How many microapps are checked at once.", 4),
    "extensions.follow_links": (
        "Follow symlinks inside the search paths (off: no loops, no escape from the roots).",
        False,
    ),
    "extensions.entries": (
        "Settings per microapp, by id: only `capabilities_grant` and `allow_external_bind`.",
        {},
    ),
    "extensions.entries.*.capabilities_grant": (
        "Admin capabilities granted to the microapp, from those its companion "
        "nexo-plugin.toml lists under `[plugin.capabilities.admin]`. A required one not "
        "granted turns admin RPC off for every microapp (NX225).",
        [],
    ),
    "extensions.entries.*.allow_external_bind": (
        "Let the microapp's `http_server.bind` be other than `127.0.0.1`, `::1` or "
        "`localhost` (NX228).",
        False,
    ),
}


def describe(schema: dict[str, Any], help_by_path: dict[str, tuple[str, Any]]) -> None:
    """Set the description (and default, where there is one) of every property of ``schema``
    that ``help_by_path`` names, in place; variants of a tagged table share their paths."""

    def walk(node: dict[str, Any], path: str) -> None:
        for name, child in node.get("properties", {}).items():
            key = f"{path}.{name}" if path else name
            if key in help_by_path:
                text, default = help_by_path[key]
                child.setdefault("description", text)
                if default is not None:
                    child.setdefault("default", default)
            walk(child, key)
        for variant in node.get("oneOf", []):
            walk(variant, path)
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], f"{path}.*")

    walk(schema, "")
