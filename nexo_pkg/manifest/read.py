"""The one reader of manifest TOML: bytes -> document, as the daemon's parser reads them.

The daemon reads a manifest with ``std::fs::read_to_string`` and the ``toml`` crate (0.8.23
over ``toml_edit`` 0.22.27, its Cargo.lock): UTF-8 text, a leading byte-order mark skipped
(``toml_edit/src/parser/document.rs:36-37``, ``opt(b"\\xEF\\xBB\\xBF")``), any four-digit
year, the year 0000 too (``parser/datetime.rs:131-136``, ``date_fullyear``), and a second of
60 (``parser/datetime.rs:201-212``, ``time_second``: ``0..=60``). Python's ``tomllib`` reads
the rest the same; the date-times it refuses are read here as the same value in the year 2000
or at second 59 (a value of the same type and shape, which is all a manifest rule looks at).
The numbers ``tomllib`` takes and the daemon's parser refuses are refused here
(:func:`out_of_range`): an integer outside ``i64`` in any radix, a float literal past ``f64``.

Cheap to import (``tomllib`` and ``re`` only): ``list`` and ``lint`` load it on their hot path.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from typing import Any

__all__ = ["ManifestTOMLError", "out_of_range", "read_manifest", "read_manifest_text"]

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
"""The daemon's TOML parser stores integers as ``i64``; anything outside is a parse error
(toml_edit 0.22.27 ``parser/numbers.rs:43-47``: ``i64::from_str_radix`` for ``0x``/``0o``/``0b``,
which take no sign, so ``i64::MIN`` has no spelling in those radixes; ``str::parse::<i64>``
for decimal)."""


class ManifestTOMLError(ValueError):
    """The bytes are no manifest the daemon's parser reads: not UTF-8, or not TOML.

    The message is the reason, in one line (the parser's, with its line and column)."""


# A TOML date-time value: the daemon's parser takes the year 0000 and a leap second (`:60`),
# which Python's datetime, and so tomllib, refuse.
_TIME = r"\d{2}:\d{2}:(?P<second>\d{2})(?:\.\d+)?"
_DATETIMES = (
    re.compile(rf"(?P<year>\d{{4}})-\d{{2}}-\d{{2}}(?:[Tt ]{_TIME}(?:[Zz]|[+-]\d{{2}}:\d{{2}})?)?"),
    re.compile(_TIME),
)
_DAEMON_ONLY = re.compile(r"\b0000-\d\d-\d\d|:60(?!\d)")


class TooLargeFloat(float):
    """A float literal past the largest ``f64`` (``1e400``): Python reads it as infinity, the
    daemon's parser (toml_edit 0.22, parser/numbers.rs: ``verify(|f| *f != f64::INFINITY)``)
    refuses it. Written ``inf``, infinity is a float like any other; ``-1e400`` passes that
    check, and the daemon reads it as negative infinity."""

    literal: str


def _float(literal: str) -> float:
    value = float(literal)
    if value == float("inf") and literal.lstrip("+") != "inf":
        too_large = TooLargeFloat(value)
        too_large.literal = literal
        return too_large
    return value


def out_of_range(value: object) -> Iterator[tuple[tuple[str | int, ...], int | TooLargeFloat]]:
    """Every integer in ``value`` (a document of :func:`loads`) that does not fit the daemon's
    ``i64``, and every float past the ``f64`` range (:class:`TooLargeFloat`), with its key path.

    Iterative, in document order: tables nest as deep as dotted keys and headers below the
    parser's limit can make them (79 parts each), deeper than Python's recursion limit."""
    pending: list[tuple[object, tuple[str | int, ...]]] = [(value, ())]
    while pending:
        item, where = pending.pop()
        if isinstance(item, bool):
            continue
        if isinstance(item, TooLargeFloat):
            yield where, item
        elif isinstance(item, int):
            if not I64_MIN <= item <= I64_MAX:
                yield where, item
        elif isinstance(item, dict):
            pending.extend((child, (*where, key)) for key, child in reversed(item.items()))
        elif isinstance(item, list):
            pending.extend(
                (child, (*where, index)) for index, child in reversed(list(enumerate(item)))
            )


def _refusal(where: tuple[str | int, ...], value: int | TooLargeFloat) -> str:
    """The reason the daemon's parser refuses ``value`` at key path ``where``, in one line."""
    at = ".".join(f"[{part}]" if isinstance(part, int) else part for part in where)
    if isinstance(value, TooLargeFloat):
        return f"float `{value.literal}` at `{at}` is too large for a 64-bit float"
    return (
        f"integer `{value}` at `{at}` does not fit in a 64-bit signed integer "
        f"(number too {'large' if value > 0 else 'small'} to fit in target type)"
    )


def loads(text: str) -> dict[str, Any]:
    """``tomllib.loads`` of ``text`` (BOM already gone), also for the date-times only the
    daemon's parser takes. Raises ``tomllib.TOMLDecodeError`` (and ``RecursionError``) as
    ``tomllib`` does; lint turns those into findings at their place in ``text``."""
    try:
        return tomllib.loads(text, parse_float=_float)
    except tomllib.TOMLDecodeError:
        if not _DAEMON_ONLY.search(text):
            raise
        from nexo_pkg.core.toml_spans import scan_spans  # noqa: PLC0415 (rare)

        edited = list(text)
        for start, end in scan_spans(text)[0].values.values():
            for pattern in _DATETIMES:
                match = pattern.fullmatch(text, start, end)
                groups = match.groupdict() if match is not None else {}
                if match is not None and groups.get("year") == "0000":
                    edited[match.start("year") : match.end("year")] = "2000"
                if match is not None and groups.get("second") == "60":
                    edited[match.start("second") : match.end("second")] = "59"
        # Same length, so a problem the edit leaves is reported at its place in ``text``.
        return tomllib.loads("".join(edited), parse_float=_float)


def read_manifest_text(text: str) -> dict[str, Any]:
    """The document of manifest ``text`` as the daemon reads it (past one leading BOM).

    Raises :class:`ManifestTOMLError` when the daemon's parser would refuse it as TOML,
    a number outside ``i64``/``f64`` included."""
    try:
        document = loads(text.removeprefix("\ufeff"))
    except (ValueError, RecursionError) as error:
        reason = str(error).splitlines()[0] if str(error) else "nested too deeply to parse"
        raise ManifestTOMLError(reason) from error
    for where, value in out_of_range(document):
        raise ManifestTOMLError(_refusal(where, value))
    return document


def read_manifest(raw: bytes) -> dict[str, Any]:
    """The document of the manifest bytes ``raw`` as the daemon reads it: UTF-8, past one
    leading byte-order mark, the year 0000 and a leap second read.

    Raises :class:`ManifestTOMLError` when they are not UTF-8 or not TOML."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ManifestTOMLError(
            f"not UTF-8 (byte 0x{raw[error.start]:02x} at offset {error.start})"
        ) from error
    return read_manifest_text(text)
