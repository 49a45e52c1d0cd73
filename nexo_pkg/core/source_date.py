"""``SOURCE_DATE_EPOCH`` as reproducible-builds.org defines it: ASCII decimal seconds since
the epoch. ``pack`` stamps it on every archive member, ``push`` and ``sync`` on what they
write; a malformed value is a usage error for all of them, never silently another time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from nexo_pkg.core.errors import UsageError

#: 9999-12-31T23:59:59Z: the latest instant an RFC 3339 or ISO 8601 timestamp can say.
LATEST_EPOCH = 253402300799

# `str.isdigit` also holds for superscripts (which `int` then refuses) and other scripts'
# digits: the variable is ASCII.
_ASCII_DIGITS = re.compile(r"[0-9]+")


def epoch_seconds(text: str) -> int | None:
    """``text`` (blanks around ignored) as ``SOURCE_DATE_EPOCH`` is read: ASCII decimal
    seconds from 0 to :data:`LATEST_EPOCH`; ``None`` for anything else. Python's ``int``
    would also take ``1_000``, ``+5`` and other scripts' digits, and raises on more than
    4300 digits: the digits are judged before any conversion."""
    text = text.strip()
    if not _ASCII_DIGITS.fullmatch(text):
        return None
    significant = text.lstrip("0") or "0"
    if len(significant) > len(str(LATEST_EPOCH)):
        return None
    value = int(significant)
    return value if value <= LATEST_EPOCH else None


def source_date_epoch(environ: Mapping[str, str]) -> int | None:
    """The ``SOURCE_DATE_EPOCH`` of ``environ`` (``None`` when unset or blank); raises
    ``usage`` when it is not an integer of seconds from 0 to :data:`LATEST_EPOCH`."""
    configured = environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not configured:
        return None
    value = epoch_seconds(configured)
    if value is None:
        raise UsageError(
            f"SOURCE_DATE_EPOCH must be an integer of seconds from 0 to {LATEST_EPOCH}"
            f" (9999-12-31T23:59:59Z), got {configured!r}"
        )
    return value
