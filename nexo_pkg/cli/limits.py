"""The archive limits (SPEC §5 step 6) of every command that reads a release archive:
``--max-download-size``, ``--max-entries``, ``--max-total-size``, ``--max-entry-size``.

Parsed here, without Typer, so ``sync``'s small parser (:mod:`nexo_pkg.cli.syncing`) reads
them as the Typer options (:mod:`nexo_pkg.cli.options`) do.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from nexo_pkg.core.errors import UsageError

if TYPE_CHECKING:
    from nexo_pkg.sources.api import ArchiveLimits

_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]?)(i?b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def parse_size(text: str, *, flag: str) -> int:
    """``1048576``, ``100M``, ``100MiB``, ``2g`` -> bytes; raises :class:`UsageError`."""
    match = _SIZE.match(text)
    if not match or int(match.group(1)) <= 0:
        raise UsageError(f"{flag} {text!r} is not a size such as 100M or 1048576")
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


def size_value(flag: str) -> Callable[[str], int]:
    """The parser of the size option ``flag`` (:func:`parse_size`)."""

    def parse(text: str) -> int:
        return parse_size(text, flag=flag)

    return parse


def entries_value(text: str) -> int:
    """``--max-entries TEXT`` as a positive number; anything else is a usage error."""
    try:
        value = int(text.strip(), 10)
    except ValueError:
        value = 0
    if value <= 0:
        raise UsageError(f"--max-entries must be a positive number, not {text!r}")
    return value


def archive_limits(
    *,
    max_download: int | None = None,
    max_entries: int | None = None,
    max_total: int | None = None,
    max_entry: int | None = None,
) -> ArchiveLimits:
    """The limits the parsed flags give, each left out one at its default."""
    from nexo_pkg.sources.api import ArchiveLimits  # noqa: PLC0415

    base = ArchiveLimits()
    return ArchiveLimits(
        max_download=base.max_download if max_download is None else max_download,
        max_entries=base.max_entries if max_entries is None else max_entries,
        max_total=base.max_total if max_total is None else max_total,
        max_entry=base.max_entry if max_entry is None else max_entry,
    )
