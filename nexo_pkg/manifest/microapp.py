"""The microapp manifest model: what the daemon's extension host reads from a microapp.

A microapp is a stdio *extension* of the daemon: an extension-shaped ``plugin.toml`` read by the
daemon's extension manifest parser, and an optional companion ``nexo-plugin.toml`` of which the
host reads only the admin capabilities and the HTTP server (docs/microapps.md).

This module holds the daemon's constants for both files and the shape checks;
:mod:`nexo_pkg.manifest.microapp_model` holds a tolerant reader of each (apart, so that a plugin
manifest is linted and installed without building a microapp's classes). The lint rules
(:mod:`nexo_pkg.manifest.rules_microapp`) say what is wrong. Nothing here imports more than
the standard library, :mod:`nexo_pkg.core.errors` and :mod:`nexo_pkg.core.files`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nexo_pkg.core.errors import UsageError
from nexo_pkg.core.files import read_config_file
from nexo_pkg.manifest.names import MAX_MANIFEST_BYTES as MANIFEST_LIMIT
from nexo_pkg.manifest.read import ManifestTOMLError, read_manifest

__all__ = [
    "CAPABILITY_KINDS",
    "CAPABILITY_NAME_PATTERN",
    "COMPANION_MANIFEST_NAME",
    "DEFAULT_HEALTH_PATH",
    "DEFAULT_HTTP_BIND",
    "EXT_NAME_PREFIX",
    "HOOK_NAMES",
    "ID_PATTERN",
    "MAX_CAPABILITY_NAME_LENGTH",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_ID_LENGTH",
    "MAX_MCP_SERVER_NAME_LENGTH",
    "MAX_TOOL_NAME_LEN",
    "MICROAPP_MANIFEST_NAME",
    "RESERVED_IDS",
    "capability_name_problem",
    "env_is_blocked",
    "id_problem",
    "is_extension_shape",
    "is_loopback_bind",
    "read_toml_or_none",
]

MICROAPP_MANIFEST_NAME = "plugin.toml"
"""The only file name the daemon's extension discovery reads."""
COMPANION_MANIFEST_NAME = "nexo-plugin.toml"
"""The optional companion beside it (admin capabilities, HTTP server)."""

ID_PATTERN = r"^[a-z][a-z0-9_-]*$"
"""``plugin.id`` of an extension: hyphens are allowed, unlike plugin ids."""
MAX_ID_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 512
CAPABILITY_NAME_PATTERN = r"^[a-z][a-z0-9_]*$"
MAX_CAPABILITY_NAME_LENGTH = 64
MAX_MCP_SERVER_NAME_LENGTH = 32
#: ``EXT_NAME_PREFIX`` (``crates/core/src/agent/extension_tool.rs:13``) and
#: ``ToolDef::MAX_NAME_LEN`` (``crates/llm/src/types.rs:309``): the model sees a microapp's
#: tool as ``ext_<id>_<tool>``, cut and hashed past 64 bytes.
EXT_NAME_PREFIX = "ext_"
MAX_TOOL_NAME_LEN = 64

RESERVED_IDS: frozenset[str] = frozenset(
    {"agent", "browser", "core", "email", "heartbeat", "memory", "telegram", "whatsapp"}
)
"""Ids of the daemon's native plugins; an extension cannot claim them."""

CAPABILITY_KINDS: tuple[str, ...] = ("tools", "hooks", "channels", "providers", "pollers")
"""The lists of ``[capabilities]``, in the order the daemon validates them."""
HOOK_NAMES: tuple[str, ...] = (
    "before_message",
    "after_message",
    "before_tool_call",
    "after_tool_call",
)
"""Hook names the host registers; others are skipped with a warning."""

LOOPBACK_BINDS: frozenset[str] = frozenset({"127.0.0.1", "::1", "localhost"})
"""``http_server.bind`` values that need no ``allow_external_bind``."""
DEFAULT_HTTP_BIND = "127.0.0.1"
DEFAULT_HEALTH_PATH = "/healthz"

ENV_BLOCKLIST_SUFFIXES: tuple[str, ...] = (
    "_TOKEN",
    "_KEY",
    "_SECRET",
    "_PASSWORD",
    "_PASSWD",
    "_PWD",
    "_CREDENTIAL",
    "_CREDENTIALS",
    "_PAT",
    "_AUTH",
    "_APIKEY",
    "_BEARER",
    "_SESSION",
)
"""Variables ending so (case-insensitive) are removed from a microapp's environment."""
ENV_BLOCKLIST_SUBSTRINGS: tuple[str, ...] = ("PASSWORD", "SECRET", "CREDENTIAL", "PRIVATE_KEY")
"""Variables containing one of these (case-insensitive) are removed too."""


def env_is_blocked(name: str) -> bool:
    """Whether the extension host strips variable ``name`` from a microapp's environment
    (``env_is_blocked`` in its ``runtime/stdio.rs``: ``to_ascii_uppercase``, so only ASCII
    letters change case: the long s, U+017F, is no ``S`` there)."""
    upper = "".join(char.upper() if char.isascii() else char for char in name)
    return upper.endswith(ENV_BLOCKLIST_SUFFIXES) or any(
        part in upper for part in ENV_BLOCKLIST_SUBSTRINGS
    )


def is_loopback_bind(bind: str) -> bool:
    """Whether ``bind`` is one of the loopback spellings the daemon accepts as such."""
    return bind in LOOPBACK_BINDS


def is_extension_shape(data: Mapping[str, Any]) -> bool:
    """Whether parsed TOML ``data`` is an extension (microapp) manifest, not a plugin manifest.

    An extension manifest has a root ``[transport]`` or ``[capabilities]`` table and is no
    unified plugin manifest (no ``manifest_version`` and no ``[plugin.entrypoint]``).
    """
    if "manifest_version" in data:
        return False
    plugin = data.get("plugin")
    if isinstance(plugin, Mapping) and "entrypoint" in plugin:
        return False
    return "transport" in data or isinstance(data.get("capabilities"), Mapping)


MAX_MANIFEST_BYTES = MANIFEST_LIMIT
"""A microapp manifest above this size is not read, as lint reads no manifest above it (real
ones are a few KiB; the daemon sets no limit): one limit for every manifest read."""


def read_toml_or_none(path: Path) -> dict[str, Any] | None:
    """``path`` parsed as TOML, or ``None`` when it is missing, unreadable or not TOML."""
    try:
        raw = read_config_file(path, MAX_MANIFEST_BYTES, error=UsageError)
        return read_manifest(raw)
    except (UsageError, ManifestTOMLError):
        return None


_ID = re.compile(ID_PATTERN)
_CAPABILITY_NAME = re.compile(CAPABILITY_NAME_PATTERN)


def _shape_problem(value: str, pattern: re.Pattern[str], max_length: int, shape: str) -> str | None:
    if not value:
        return "is empty"
    if len(value.encode("utf-8")) > max_length:
        return f"is longer than {max_length} bytes"
    if not pattern.fullmatch(value):
        return f"must match `{pattern.pattern}` ({shape})"
    return None


def id_problem(value: str) -> str | None:
    """Why ``value`` is not an extension id the daemon accepts, or ``None``.

    The daemon's order: empty, then pattern and length (in bytes), then reserved ids.
    """
    problem = _shape_problem(
        value, _ID, MAX_ID_LENGTH, "a lowercase letter, then lowercase letters, digits, `_` or `-`"
    )
    if problem is None and value in RESERVED_IDS:
        return "is reserved for the daemon's native plugins"
    return problem


def capability_name_problem(value: str) -> str | None:
    """Why ``value`` is not a capability (tool, hook, ...) name the daemon accepts, or ``None``."""
    return _shape_problem(
        value,
        _CAPABILITY_NAME,
        MAX_CAPABILITY_NAME_LENGTH,
        "a lowercase letter, then lowercase letters, digits or `_`; no `-`",
    )
