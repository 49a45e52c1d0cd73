"""Load a manifest: bytes -> text -> plain data plus a key-path -> span map.

Parsing uses the standard library's ``tomllib`` (a strict TOML 1.0 parser that is cheap to
import, which matters for a cold ``nexo plugin lint``); positions come from
:mod:`nexo_pkg.manifest.spans`. Every problem with the input itself (bad bytes, syntax, duplicate
keys, absurd size or nesting) becomes a :class:`Diagnostic`, never an exception.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

from nexo_pkg.diagnostics import Diagnostic, Position, Span
from nexo_pkg.manifest import core_rules
from nexo_pkg.manifest.spans import KeyPath, SpanMap, format_key_path, scan_spans

__all__ = [
    "MAX_MANIFEST_BYTES",
    "KeyPath",
    "ParsedManifest",
    "decode_manifest",
    "format_key_path",
    "parse_manifest",
]

MAX_MANIFEST_BYTES = 1024 * 1024
"""Files above this size are refused unparsed (``NX004``); real manifests are a few KiB."""

_POSITION = re.compile(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)$")
_DUPLICATE_MESSAGES = ("Cannot overwrite a value", "Cannot declare", "Cannot mutate")
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
    _spans: SpanMap | None = field(default=None, repr=False)

    @property
    def spans(self) -> SpanMap:
        if self._spans is None:
            self._spans = scan_spans(self.text)[0]
        return self._spans

    @property
    def ok(self) -> bool:
        """True when the text parsed (there may still be schema or rule findings)."""
        return not self.syntax_errors


def _point(text: str, line: int, column: int) -> Span:
    """A one-character span at ``line``/``column`` (empty at the end of a line or file)."""
    lines = text.split("\n")
    line = max(1, min(line, len(lines)))
    content = lines[line - 1].rstrip("\r")
    column = max(1, min(column, len(content) + 1))
    end = column + 1 if column <= len(content) else column
    return Span(Position(line, column), Position(line, end))


def _end_of_document(text: str) -> Span:
    stripped = text.rstrip()
    line = stripped.count("\n") + 1
    column = len(stripped) - (stripped.rfind("\n") + 1) + 1
    return Span(Position(line, column), Position(line, column))


def _syntax_diagnostic(text: str, error: tomllib.TOMLDecodeError) -> list[Diagnostic]:
    """Turn the parser's error into diagnostics (all duplicate definitions when that is it)."""
    raw = str(error)
    match = _POSITION.search(raw)
    message = raw[: match.start()] if match else raw
    if match and match.group(1):
        span = _point(text, int(match.group(1)), int(match.group(2)))
    else:
        span = _end_of_document(text)
    if message.startswith(_DUPLICATE_MESSAGES):
        spans, duplicates = scan_spans(text)
        found: list[Diagnostic] = []
        reported_tables: list[KeyPath] = []
        for duplicate in duplicates:
            if any(duplicate.path[: len(table)] == table for table in reported_tables):
                continue  # keys of a table declared twice are part of that one problem
            if duplicate.is_table:
                reported_tables.append(duplicate.path)
            dotted = format_key_path(duplicate.path)
            what = f"table [{dotted}]" if duplicate.is_table else f"key `{dotted}`"
            found.append(
                core_rules.DUPLICATE_KEY.diagnostic(
                    f"{what} is defined more than once",
                    dotted,
                    spans.span_of(duplicate.start, duplicate.end),
                    "TOML allows each key and table once; delete or merge the repeated one",
                )
            )
        if found:
            return found
        return [
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


def parse_manifest(text: str) -> ParsedManifest:
    """Parse manifest ``text``. Never raises: problems become ``syntax_errors``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return ParsedManifest(text, {}, _syntax_diagnostic(text, error))
    except RecursionError:
        # Very deep nesting exhausts the parser's recursion before any real limit applies.
        span = _point(text, 1, 1)
        return ParsedManifest(
            text,
            {},
            [
                core_rules.NESTING_TOO_DEEP.diagnostic(
                    "arrays or inline tables are nested too deeply to parse",
                    "",
                    span,
                    "no manifest key needs more than a few levels of nesting",
                )
            ],
        )
    return ParsedManifest(text, data, [])


def _byte_position(raw: bytes, offset: int) -> Span:
    """Line/column (in characters) of byte ``offset``, decoding the valid prefix leniently."""
    prefix = raw[:offset].decode("utf-8", errors="replace")
    line = prefix.count("\n") + 1
    column = len(prefix) - (prefix.rfind("\n") + 1) + 1
    return Span(Position(line, column), Position(line, column + 1))


def decode_manifest(raw: bytes) -> tuple[str, list[Diagnostic]]:
    """Decode manifest bytes as UTF-8 (a leading BOM is dropped).

    Returns the text and, when the bytes cannot be a manifest (too large, not UTF-8, NUL
    bytes), one diagnostic explaining why; the text is then ``""``. Never raises.
    """
    if len(raw) > MAX_MANIFEST_BYTES:
        here = Span(Position(1, 1), Position(1, 1))
        return "", [
            core_rules.FILE_TOO_LARGE.diagnostic(
                f"file is {len(raw):,} bytes; a manifest is limited to "
                f"{MAX_MANIFEST_BYTES:,} bytes",
                "",
                here,
                "lint the plugin's nexo-plugin.toml, not a generated or binary file",
            )
        ]
    nul = raw.find(b"\x00")
    if nul != -1:
        return "", [
            core_rules.INVALID_ENCODING.diagnostic(
                "file contains a NUL byte; it is binary, not a TOML manifest",
                "",
                _byte_position(raw, nul),
                "lint the plugin's nexo-plugin.toml",
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
                "TOML files must be UTF-8; re-save the file with that encoding",
            )
        ]
    return text.removeprefix("\ufeff"), []
