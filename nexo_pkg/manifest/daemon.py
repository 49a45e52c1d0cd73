"""What nexo-pkg knows about the daemon's releases, and the id rule every part shares.

The releases nexo-pkg knows sit in one table (docs/lint.md, "Severity: what the daemon does",
shows it); :data:`NEWEST_DAEMON_VERSION` is the default ``--nexo-version`` of ``lint`` and
``check``.

Ids (``plugin.id``, the ``[plugin.extends]`` ids, tool names) follow the daemon's
``^[a-z][a-z0-9_]{0,63}$``. The plugin contract 1.10.0 and daemons before the limit was raised
allow 32 characters, so an id of 33 to 64 characters is valid but draws a warning. Channel
kinds keep the daemon's 32-character limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nexo_pkg.core.errors import UsageError

__all__ = [
    "CHANNEL_KIND_MAX_LENGTH",
    "DAEMON_RELEASES",
    "ID_MAX_LENGTH",
    "ID_PATTERN",
    "NEWEST_DAEMON_VERSION",
    "PORTABLE_ID_MAX_LENGTH",
    "DaemonRelease",
    "id_problem",
    "is_valid_id",
]


@dataclass(frozen=True)
class DaemonRelease:
    """A daemon release nexo-pkg knows, with the manifest rules that changed in it."""

    version: str
    id_max_length: int
    changes: str


DAEMON_RELEASES: tuple[DaemonRelease, ...] = (
    DaemonRelease(
        "0.1.0",
        id_max_length=32,
        changes="subprocess plugin discovery; ids `^[a-z][a-z0-9_]{0,31}$`; "
        "reads `nexo-plugin.toml` only",
    ),
    DaemonRelease(
        "0.2.1",
        id_max_length=64,
        changes="ids, extends ids and tool names up to 64 characters "
        "(`^[a-z][a-z0-9_]{0,63}$`); reads `plugin.toml` (canonical) and `nexo-plugin.toml`",
    ),
)
"""Oldest first. The newest one is the default daemon of ``lint`` and ``check``."""

NEWEST_DAEMON_VERSION = DAEMON_RELEASES[-1].version

ID_MAX_LENGTH = DAEMON_RELEASES[-1].id_max_length
PORTABLE_ID_MAX_LENGTH = DAEMON_RELEASES[0].id_max_length
"""Ids up to this length load in every known daemon and satisfy contract 1.10.0."""
CHANNEL_KIND_MAX_LENGTH = 32

ID_PATTERN = rf"^[a-z][a-z0-9_]{{0,{ID_MAX_LENGTH - 1}}}$"
_ID = re.compile(ID_PATTERN)


def is_valid_id(value: str, max_length: int = ID_MAX_LENGTH) -> bool:
    """Whether ``value`` is a lowercase slug of at most ``max_length`` characters."""
    return bool(_ID.fullmatch(value)) and len(value) <= max_length


def check_id(plugin_id: str) -> None:
    """Raise ``usage`` for a text that is no plugin id the daemon could discover."""
    problem = id_problem(plugin_id)
    if problem is not None:
        raise UsageError(f"{plugin_id!r} is not a plugin id: {problem}")


def id_problem(value: str, max_length: int = ID_MAX_LENGTH) -> str | None:
    """Why ``value`` is not a valid id of at most ``max_length`` characters, or ``None``.

    Reasons come in the daemon's order: empty, leading digit, uppercase, too long, then the
    first bad character, or a first character that is not a letter.
    """
    if is_valid_id(value, max_length):
        return None
    if not value:
        return "must not be empty"
    if "0" <= value[0] <= "9":
        return "must not start with a digit"
    if any("A" <= char <= "Z" for char in value):
        return "uppercase letters are not allowed; use lowercase letters, digits and underscores"
    # The daemon measures bytes; an id within the limit in characters but not in bytes holds
    # a non-ASCII character, which is what to report.
    if len(value) > max_length:
        return f"must be at most {max_length} characters (it has {len(value)})"
    for char in value:
        if not ("a" <= char <= "z" or "0" <= char <= "9" or char == "_"):
            return (
                f"character `{char}` is not allowed; use lowercase letters, digits and underscores"
            )
    return "must start with a lowercase letter"
