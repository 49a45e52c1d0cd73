"""Load a manifest: bytes -> text -> plain data plus a key-path -> span map.

Parsing uses the standard library's ``tomllib`` (a strict TOML 1.0 parser that is cheap to
import, which matters for a cold ``nexo plugin lint``); positions, and where the daemon's parser
limits stand, come from :mod:`nexo_pkg.core.toml_spans`. Every problem with the input itself
(bad bytes, syntax, duplicate keys, absurd size or nesting) becomes a :class:`Diagnostic`, never
an exception.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from nexo_pkg.core.diagnostics import Diagnostic, Position, Span
from nexo_pkg.core.toml_text import KeyPath, format_key_path, long_dotted_key, nested_value_offset
from nexo_pkg.manifest import core_rules
from nexo_pkg.manifest.names import MAX_MANIFEST_BYTES
from nexo_pkg.manifest.read import I64_MAX, I64_MIN, TooLargeFloat, loads, out_of_range

if TYPE_CHECKING:
    from nexo_pkg.core.toml_spans import SpanMap, SpanPart

# The span scanner (nexo_pkg.core.toml_spans) is loaded where a span is asked for: a manifest
# that parses clean and lints clean (every one an install accepts) never needs it.

__all__ = [
    "MAX_MANIFEST_BYTES",
    "ParsedManifest",
    "decode_manifest",
    "parse_manifest",
]


LARGE_MANIFEST_BYTES = 1024 * 1024
"""Files above this size are still read, with a warning (``NX007``)."""

_DUPLICATE_MESSAGES = (
    "Cannot overwrite a value",
    "Cannot declare",
    "Cannot mutate",
    "Cannot redefine namespace",
    "Duplicate inline table key",
)
# The parser's terse messages for the most common slips, said the way a user would fix them.
_FRIENDLIER = {
    "Illegal character '\\n'": "a string is not closed before the end of the line",
    "Unclosed string": "a string is not closed",
    "Unterminated string": "a string is not closed",
    "Expected newline or end of document after a statement": (
        "expected the end of the line after the value (one `key = value` per line)"
    ),
    "Invalid value": 'invalid value (strings need quotes: `key = "text"`)',
    "Invalid statement": "expected `key = value` or a `[table]` header",
    "Expected '=' after a key in a key/value pair": "expected `=` after the key",
}


@dataclass
class ParsedManifest:
    """A parsed manifest: plain Python ``data``, its ``spans`` and any ``syntax_errors``.

    ``data`` is empty when the text could not be parsed. The span map is built on first use,
    since a manifest without findings never needs it.
    """

    text: str
    data: dict[str, Any]
    syntax_errors: list[Diagnostic]

    @cached_property
    def spans(self) -> SpanMap:
        from nexo_pkg.core.toml_spans import scan_spans  # noqa: PLC0415

        return scan_spans(self.text)[0]

    def locate(self, path: KeyPath, part: SpanPart = "value") -> Span:
        """The span of the key or value at ``path`` (building the span map on first use)."""
        return self.spans.locate(path, part)

    @property
    def ok(self) -> bool:
        """True when the text parsed (there may still be schema or rule findings)."""
        return not self.syntax_errors


MAX_DUPLICATES_REPORTED = 100
"""A file repeating keys by the thousand gets this many NX002 findings, not one per key."""


def _unclosed_header(text: str, where: Position) -> bool:
    """Whether the ``[table]`` or ``[[array]]`` header the parser stopped in at ``where``
    lacks its closing bracket there."""
    lines = text.split("\n")
    if not 0 < where.line <= len(lines):
        return False
    line = lines[where.line - 1]
    rest = line[where.column - 1 :].lstrip(" \t")
    return line.lstrip(" \t").startswith("[") and not rest.startswith("]")


def _syntax_diagnostic(text: str, error: ValueError) -> list[Diagnostic]:
    """Turn the parser's error into diagnostics (the duplicate definitions when that is it,
    at most :data:`MAX_DUPLICATES_REPORTED` of them)."""
    from nexo_pkg.core.toml_spans import scan_spans, syntax_error  # noqa: PLC0415

    syntax = syntax_error(text, error, loads)
    message, span = syntax.message, syntax.span
    if message.startswith(_DUPLICATE_MESSAGES) and _unclosed_header(text, span.start):
        # The parser judges a header's key before its closing bracket: `[plugin` written
        # twice is first of all a header that is not closed, as the daemon's parser says.
        message = "Expected ']' at the end of a table header"
    if message.startswith(_DUPLICATE_MESSAGES):
        spans, duplicates = scan_spans(text)
        found: list[Diagnostic] = []
        reported_tables: list[KeyPath] = []
        for duplicate in duplicates:
            if len(found) == MAX_DUPLICATES_REPORTED:
                break
            if any(duplicate.path[: len(table)] == table for table in reported_tables):
                continue  # keys of a table declared twice are part of that one problem
            if duplicate.is_table:
                reported_tables.append(duplicate.path)
            path = duplicate.path
            if duplicate.is_table and path and isinstance(path[-1], int):
                # `[a]` after `[[a]]` names the array of tables, not its last entry.
                path = path[:-1]
            dotted = format_key_path(path)
            what = f"table [{dotted}]" if duplicate.is_table else f"key `{dotted}`"
            found.append(
                core_rules.DUPLICATE_KEY.diagnostic(
                    f"{what} is defined more than once",
                    dotted,
                    spans.span_of(duplicate.start, duplicate.end),
                    "TOML allows each key and table once; delete or merge the repeated one",
                )
            )
        return found or [
            core_rules.DUPLICATE_KEY.diagnostic(
                "a key or table is defined more than once", "", span, message
            )
        ]
    message = _FRIENDLIER.get(message, message[:1].lower() + message[1:])
    return [
        core_rules.TOML_SYNTAX.diagnostic(
            f"TOML syntax error: {message}",
            "",
            span,
            "fix the TOML at this position; nothing else is checked until the file parses",
        )
    ]


RECURSION_LIMIT = 80
"""The daemon's TOML parser (``toml`` 0.8.23 over ``toml_edit`` 0.22.27, its Cargo.lock)
refuses the array or inline table that opens the 80th level, and a dotted key (in a
``key = value`` line, an inline table or a ``[table]`` header) of 80 or more parts:
``RecursionCheck`` in ``toml_edit/src/parser/mod.rs`` (``const LIMIT: usize = 80``, checked as
``LIMIT <= depth``) and ``check_depth(k.len())`` in ``toml_edit/src/parser/key.rs``."""


def _nests_at_least(value: object, levels: int) -> bool:
    """Whether arrays and tables nest ``levels`` deep in ``value``: every array or inline
    table of the text is a level here, so a shallower document cannot reach the daemon's
    value-nesting limit and its text need not be scanned. Iterative."""
    pending: list[tuple[object, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if depth >= levels:
            return True
        if isinstance(item, dict):
            pending.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            pending.extend((child, depth + 1) for child in item)
    return False


def _too_deep(text: str, span: Span, what: str) -> ParsedManifest:
    return ParsedManifest(
        text,
        {},
        [
            core_rules.NESTING_TOO_DEEP.diagnostic(
                f"TOML parse error: recursion limit exceeded ({what})",
                "",
                span,
                "no manifest key needs more than a few levels of nesting",
            )
        ],
    )


def _past_limit(text: str, deep: int | None, dotted: tuple[int, int] | None) -> ParsedManifest:
    """``NX005`` at whichever comes first: the value that opens the :data:`RECURSION_LIMIT`-th
    level (offset ``deep``) or the dotted key of that many parts (``(offset, parts)``)."""
    from nexo_pkg.core.toml_spans import SpanMap, point_span  # noqa: PLC0415

    first = min(found for found in (deep, dotted[0] if dotted else None) if found is not None)
    where = SpanMap(text).position(first)
    what = (
        f"a dotted key of {dotted[1]} parts; at most {RECURSION_LIMIT - 1}"
        if dotted is not None and dotted[0] == first
        else f"more than {RECURSION_LIMIT - 1} nested levels"
    )
    return _too_deep(text, point_span(text, where.line, where.column), what)


def parse_manifest(text: str) -> ParsedManifest:
    """Parse manifest ``text`` with the daemon's parser limits. Never raises.

    Problems become ``syntax_errors``: TOML syntax, an integer outside ``i64`` (``NX001``), and
    arrays or inline tables nested :data:`RECURSION_LIMIT` levels deep or a dotted key of that
    many parts (``NX005``).
    """
    # Dotted keys first: the daemon's parser stops at the first long one, and tomllib takes
    # time quadratic in a key's length to build its tables.
    dotted = long_dotted_key(text, RECURSION_LIMIT)
    if dotted is not None:
        return _past_limit(text, nested_value_offset(text, RECURSION_LIMIT), dotted)
    try:
        data = loads(text)
    except ValueError as error:
        return ParsedManifest(text, {}, _syntax_diagnostic(text, error))
    except RecursionError:
        # Nested too deeply for tomllib: the daemon's parser stopped long before, at the
        # value that opens the limit's level (the scan is iterative, so it gets there).
        deep = nested_value_offset(text, RECURSION_LIMIT)
        if deep is not None:
            return _past_limit(text, deep, None)
        from nexo_pkg.core.toml_spans import point_span  # noqa: PLC0415

        return _too_deep(text, point_span(text, 1, 1), "nested too deeply to parse")
    deep = (
        nested_value_offset(text, RECURSION_LIMIT)
        if _nests_at_least(data, RECURSION_LIMIT)
        else None
    )
    if deep is not None:
        return _past_limit(text, deep, None)
    parsed = ParsedManifest(text, data, [])
    for path, value in out_of_range(data):
        if isinstance(value, TooLargeFloat):
            parsed.syntax_errors.append(
                core_rules.TOML_SYNTAX.diagnostic(
                    f"TOML parse error: float `{value.literal}` is too large for a 64-bit float",
                    format_key_path(path),
                    parsed.spans.locate(path),
                    "the largest float is about 1.7976931348623157e308; write `inf` for infinity",
                )
            )
            continue
        parsed.syntax_errors.append(
            core_rules.TOML_SYNTAX.diagnostic(
                f"TOML parse error: integer `{value}` does not fit in a 64-bit signed integer "
                f"(number too {'large' if value > 0 else 'small'} to fit in target type)",
                format_key_path(path),
                parsed.spans.locate(path),
                f"TOML integers range from {I64_MIN} to {I64_MAX}",
            )
        )
    if parsed.syntax_errors:
        parsed.data = {}
    return parsed


def _byte_position(raw: bytes, offset: int) -> Span:
    """Line/column (in characters) of byte ``offset``, decoding the valid prefix leniently."""
    prefix = raw[:offset].decode("utf-8", errors="replace")
    line = prefix.count("\n") + 1
    column = len(prefix) - (prefix.rfind("\n") + 1) + 1
    return Span(Position(line, column), Position(line, column + 1))


_UTF16_MARKS = ((b"\xff\xfe", "UTF-16LE"), (b"\xfe\xff", "UTF-16BE"))


def _must_be_utf8(yaml: bool) -> str:
    if yaml:
        return "the daemon reads its config files as UTF-8 text before parsing the YAML"
    return "TOML files must be UTF-8"


def decode_manifest(raw: bytes, *, yaml: bool = False) -> tuple[str, list[Diagnostic]]:
    """Decode manifest bytes as UTF-8 (a leading BOM is dropped); ``yaml`` when they are one of
    the daemon's YAML config files, which it also reads as UTF-8 text, so that the findings
    speak of that file.

    Returns the text and what is wrong with the bytes. When they cannot be a manifest (over
    :data:`MAX_MANIFEST_BYTES`, not UTF-8, NUL bytes) that is one error and the text is ``""``;
    a file over :data:`LARGE_MANIFEST_BYTES` is decoded with a warning. Never raises.
    """
    here = Span(Position(1, 1), Position(1, 1))
    if len(raw) > MAX_MANIFEST_BYTES:
        return "", [
            core_rules.FILE_TOO_LARGE.diagnostic(
                # Callers read at most one byte past the cap (standard input may be endless):
                # the length of ``raw`` is not the file's size.
                f"file is larger than {MAX_MANIFEST_BYTES:,} bytes; nexo-pkg reads manifests "
                f"of up to {MAX_MANIFEST_BYTES:,} bytes",
                "",
                here,
                "lint the plugin's nexo-plugin.toml, not a generated or binary file",
            )
        ]
    warnings = []
    if len(raw) > LARGE_MANIFEST_BYTES:
        warnings.append(
            core_rules.LARGE_MANIFEST.diagnostic(
                f"file is {len(raw):,} bytes; real manifests are a few KiB",
                "",
                here,
                "move generated or embedded data out of the manifest",
            )
        )
    utf16 = next((name for mark, name in _UTF16_MARKS if raw.startswith(mark)), None)
    if utf16 is not None:
        # What PowerShell 5's `>` and Notepad's "Unicode" write: text, in the wrong encoding.
        return "", [
            core_rules.INVALID_ENCODING.diagnostic(
                f"file is {utf16} text (it starts with a {utf16} byte-order mark), not UTF-8",
                "",
                here,
                f"{_must_be_utf8(yaml)}; re-save the file as UTF-8 (in PowerShell: "
                "`Set-Content -Encoding utf8`)",
            )
        ]
    nul = raw.find(b"\x00")
    if nul != -1:
        return "", [
            core_rules.INVALID_ENCODING.diagnostic(
                "file contains a NUL byte; it is binary, not "
                + ("a YAML config file" if yaml else "a TOML manifest"),
                "",
                _byte_position(raw, nul),
                "lint the daemon's config file" if yaml else "lint the plugin's nexo-plugin.toml",
            )
        ]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return "", [
            core_rules.INVALID_ENCODING.diagnostic(
                f"file is not valid UTF-8 (byte 0x{raw[error.start]:02x} at offset {error.start})",
                "",
                _byte_position(raw, error.start),
                f"{_must_be_utf8(yaml)}; re-save the file with that encoding",
            )
        ]
    return text.removeprefix("\ufeff"), warnings
