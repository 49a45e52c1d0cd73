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
ASCII_DIGITS = re.compile(r"[0-9]+")


def source_date_epoch(environ: Mapping[str, str]) -> int | None:
    """The ``SOURCE_DATE_EPOCH`` of ``environ`` (``None`` when unset or blank); raises
    ``usage`` when it is not an integer of seconds from 0 to :data:`LATEST_EPOCH`."""
    configured = environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not configured:
        return None
    if not ASCII_DIGITS.fullmatch(configured) or int(configured) > LATEST_EPOCH:
        raise UsageError(
            f"SOURCE_DATE_EPOCH must be an integer of seconds from 0 to {LATEST_EPOCH}"
            f" (9999-12-31T23:59:59Z), got {configured!r}"
        )
    return int(configured)
