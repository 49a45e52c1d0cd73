"""TOML positions, from one module: where every key and value of a document sits.

TOML parsers (``tomllib``, ``tomlkit``) keep no positions, so this module scans the text itself:

- :func:`scan_spans`, the strict entry, maps key paths to spans. It runs on text the parser
  accepted (or, to locate duplicate keys, rejected for that reason alone), so it leaves
  validation to the parser. It is iterative (an explicit stack for arrays and inline tables):
  deep values cannot exhaust the interpreter's recursion limit.
- :func:`scan_tolerant` reads a buffer being typed (``[plugin.sa``, ``network = "``,
  ``sandbox.``) and never raises: table headers, entries with the offsets of every dotted-key
  part, the strings inside each value, inline tables. Inside an unclosed multi-line array, a
  line that looks like a header or a ``key =`` line ends the array.
- Before a manifest is parsed, :mod:`nexo_pkg.core.toml_text` finds where the daemon's parser
  limits stand (lenient, linear scans); it also writes key paths and names value types. It is
  apart so that a manifest that parses and lints clean, as every one an install accepts,
  never loads this module.

Where the parser refused a document, :func:`syntax_error` is the one reader of ``tomllib``'s
error position (``(at line L, column C)`` / ``(at end of document)``): every TOML file nexo-pkg
reads (manifests, trust policies, wanted sets, lock files, the lint configuration) reports its
syntax errors through it.
"""

from __future__ import annotations

import contextlib
import re
import sys
import tomllib
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from nexo_pkg.core.diagnostics import Position, Span
from nexo_pkg.core.toml_text import BARE_KEY_CHARS, KeyPath

if TYPE_CHECKING:
    from collections.abc import Callable

SpanPart = Literal["key", "value"]

_SCALAR_STOP = frozenset(",]}#\n\r")
MAX_NESTING = 256
"""Deeper values are not mapped: key paths would grow quadratically and no field nests so."""
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}
# An escape: ``\u`` with up to 4 characters, ``\U`` with up to 8, else one character.
_ESCAPE = re.compile(r"\\(?:u.{0,4}|U.{0,8}|.)", re.DOTALL)


@dataclass(frozen=True)
class Duplicate:
    """A key or table defined a second time: its path and the span of the second definition."""

    path: KeyPath
    start: int
    end: int
    is_table: bool


@dataclass
class SpanMap:
    """Source spans of the keys and values of one document, addressed by key path.

    Offsets are stored and converted to 1-based line/column :class:`Span`s on demand. For a
    table opened by a header, both the key and the value span are the header line's brackets;
    for an array item, the key span is the item's value span.
    """

    text: str
    keys: dict[KeyPath, tuple[int, int]] = field(default_factory=dict)
    values: dict[KeyPath, tuple[int, int]] = field(default_factory=dict)
    _line_starts: list[int] | None = field(default=None, repr=False)

    def _starts(self) -> list[int]:
        if self._line_starts is None:
            self._line_starts = [0, *(match.end() for match in re.finditer("\n", self.text))]
        return self._line_starts

    def position(self, offset: int) -> Position:
        """The 1-based line/column of character ``offset`` (clamped to the text)."""
        starts = self._starts()
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(starts, offset)
        return Position(line, offset - starts[line - 1] + 1)

    def offset(self, position: Position) -> int:
        """The character offset of a 1-based line/column (clamped to the text)."""
        starts = self._starts()
        index = min(max(position.line - 1, 0), len(starts) - 1)
        return min(starts[index] + position.column - 1, len(self.text))

    def span_of(self, start: int, end: int) -> Span:
        """Convert a half-open character range to a :class:`Span`."""
        return Span(self.position(start), self.position(end))

    def has(self, path: KeyPath) -> bool:
        return path in self.keys or path in self.values

    def key_span(self, path: KeyPath) -> Span:
        """Span of the key token that defines ``path``; raises ``KeyError`` when absent."""
        return self._span(path, "key")

    def value_span(self, path: KeyPath) -> Span:
        """Span of the value at ``path``; raises ``KeyError`` when absent."""
        return self._span(path, "value")

    def _span(self, path: KeyPath, part: SpanPart) -> Span:
        first, other = (self.keys, self.values) if part == "key" else (self.values, self.keys)
        return self.span_of(*(first[path] if path in first else other[path]))

    def nearest(self, path: KeyPath) -> Span:
        """Key span of ``path`` or of its closest existing ancestor.

        A missing key therefore points at the header of the table that should hold it; when no
        ancestor exists (a missing root table), the start of the file.
        """
        for length in range(len(path), 0, -1):
            if self.has(path[:length]):
                return self.key_span(path[:length])
        return self.root_span()

    def root_span(self) -> Span:
        """The first line of the file without its line end (``\\n`` or ``\\r\\n``), or an
        empty span at 1:1 for an empty file or an empty first line."""
        first_line = self.text.partition("\n")[0].removesuffix("\r")
        return self.span_of(0, len(first_line))

    def locate(self, path: KeyPath, part: SpanPart = "value") -> Span:
        """The span of ``path``'s key or value, falling back to :meth:`nearest`. Never fails."""
        return self._span(path, part) if self.has(path) else self.nearest(path)


class _Scanner:
    """A lenient TOML tokenizer that records key and value offsets (see module docstring)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.length = len(text)
        self.index = 0
        self.keys: dict[KeyPath, tuple[int, int]] = {}
        self.values: dict[KeyPath, tuple[int, int]] = {}
        self.array_table_counts: dict[KeyPath, int] = {}
        self.defined: dict[KeyPath, bool] = {}  # path -> defined by a [table] header
        # Paths a `key = value` statement set (a value, an inline table or an array: closed
        # to keys and headers after it), and tables that dotted keys of statements created
        # (closed to a [table] header of the same path).
        self.sealed: set[KeyPath] = set()
        self.dotted: set[KeyPath] = set()
        self.implicit: set[KeyPath] = set()  # tables a header's earlier parts created
        self.inline_dotted: set[KeyPath] = set()  # tables dotted keys made in inline tables
        self.duplicates: list[Duplicate] = []

    def _skip_inline_space(self) -> None:
        text, index, length = self.text, self.index, self.length
        while index < length and text[index] in " \t":
            index += 1
        self.index = index

    def _skip_space_and_comments(self) -> None:
        """Skip spaces, newlines and comments (inside arrays and between statements)."""
        text, length = self.text, self.length
        index = self.index
        while index < length:
            char = text[index]
            if char in " \t\r\n":
                index += 1
            elif char == "#":
                newline = text.find("\n", index)
                index = length if newline == -1 else newline + 1
            else:
                break
        self.index = index

    def _skip_inside(self, frame: _Frame) -> None:
        """Skip what may stand between the items of ``frame``: an array spans lines and holds
        comments, an inline table does not."""
        if frame.is_array:
            self._skip_space_and_comments()
        else:
            self._skip_inline_space()

    def _expect(self, char: str) -> None:
        if self.index >= self.length or self.text[self.index] != char:
            raise _ScanError(self.index)
        self.index += 1

    def _simple_key(self) -> tuple[str, int, int]:
        text, start = self.text, self.index
        if start >= self.length:
            raise _ScanError(start)
        char = text[start]
        if char == '"':
            end = self._basic_string_end(start)
            return _decode_basic(text[start + 1 : end - 1]), start, end
        if char == "'":
            end = self._literal_end(start)
            return text[start + 1 : end - 1], start, end
        end = start
        while end < self.length and text[end] in BARE_KEY_CHARS:
            end += 1
        if end == start:
            raise _ScanError(start)
        return text[start:end], start, end

    def _dotted_key(self) -> list[tuple[str, int, int]]:
        segments = []
        while True:
            segments.append(self._simple_key())
            self.index = segments[-1][2]
            self._skip_inline_space()
            if self.index >= self.length or self.text[self.index] != ".":
                return segments
            self.index += 1
            self._skip_inline_space()

    def _basic_string_end(self, start: int) -> int:
        """End offset (exclusive) of the one-line basic string opening at ``start``."""
        text, index, length = self.text, start + 1, self.length
        while index < length:
            char = text[index]
            if char == "\\":
                index += 2
            elif char == '"':
                return index + 1
            elif char == "\n":
                break
            else:
                index += 1
        raise _ScanError(start)

    def _literal_end(self, start: int) -> int:
        """End offset (exclusive) of the one-line literal string opening at ``start``."""
        close = self.text.find("'", start + 1)
        if close == -1:
            raise _ScanError(start)
        return close + 1

    def _past_closing_quotes(self, end: int, quote: str) -> int:
        """The end of a multi-line string whose closing delimiter ends at ``end``: up to two
        more quotes may sit right before the delimiter, and belong to the string."""
        limit = min(end + 2, self.length)
        while end < limit and self.text[end] == quote:
            end += 1
        return end

    def _scalar_end(self, start: int) -> int:
        """End offset (exclusive) of the scalar value opening at ``start``."""
        text, length = self.text, self.length
        if text.startswith('"""', start):
            index = start + 3
            while index < length:
                if text[index] == "\\":
                    index += 2
                elif text.startswith('"""', index):
                    return self._past_closing_quotes(index + 3, '"')
                else:
                    index += 1
            raise _ScanError(start)
        if text.startswith("'''", start):
            close = text.find("'''", start + 3)
            if close == -1:
                raise _ScanError(start)
            return self._past_closing_quotes(close + 3, "'")
        char = text[start]
        if char == '"':
            return self._basic_string_end(start)
        if char == "'":
            return self._literal_end(start)
        index = start
        while index < length and text[index] not in _SCALAR_STOP:
            index += 1
        while index > start and text[index - 1] in " \t":
            index -= 1
        if index == start:
            raise _ScanError(start)
        return index

    def _define(self, path: KeyPath, start: int, end: int, *, is_table: bool) -> None:
        if path in self.defined:
            self.duplicates.append(Duplicate(path, start, end, is_table))
            return
        self.defined[path] = is_table

    def _value(self, path: KeyPath) -> None:
        """Scan one value starting at the current offset; arrays and tables use a stack."""
        stack: list[_Frame] = []
        text = self.text
        current = path
        while True:
            # Begin a value at ``current``.
            if self.index >= self.length:
                raise _ScanError(self.index)
            char = text[self.index]
            closed = False
            if char in "[{" and len(stack) >= MAX_NESTING:
                raise _ScanError(self.index)
            if char in "[{":
                frame = _Frame(current, self.index, is_array=char == "[")
                stack.append(frame)
                self.index += 1
                self._skip_inside(frame)
                if self.index < self.length and text[self.index] == frame.closer:
                    closed = True
                else:
                    current = frame.next_item() if frame.is_array else self._inline_key(frame.path)
                    continue
            else:
                end = self._scalar_end(self.index)
                self._record_value(current, self.index, end)
                self.index = end
            # Close containers whose last value just ended; then begin the next sibling.
            while stack:
                frame = stack[-1]
                if closed:
                    closed = False
                    self.index += 1
                    self._record_value(frame.path, frame.start, self.index)
                    stack.pop()
                    continue
                self._skip_inside(frame)
                if self.index >= self.length:
                    raise _ScanError(self.index)
                char = text[self.index]
                if char == frame.closer:
                    closed = True
                    continue
                if char != ",":
                    raise _ScanError(self.index)
                self.index += 1
                self._skip_inside(frame)
                if frame.is_array and self.index < self.length and text[self.index] == "]":
                    closed = True  # trailing comma
                    continue
                current = frame.next_item() if frame.is_array else self._inline_key(frame.path)
                break
            else:
                return

    def _record_value(self, path: KeyPath, start: int, end: int) -> None:
        self.values[path] = (start, end)
        if path and isinstance(path[-1], int):
            # An array item has no key token: its value stands for it.
            self.keys[path] = (start, end)

    def _inline_key(self, table: KeyPath, *, statement: bool = False) -> KeyPath:
        """Scan ``key.path =`` under ``table`` (a statement's key, or one inside an inline
        table); leave the offset at the value."""
        segments = self._dotted_key()
        path = self._record_key(table, segments)
        if statement:
            self._check_statement_key(table, path, segments[0][1], segments[-1][2])
        else:
            self._check_inline_key(table, path, segments[0][1], segments[-1][2])
        self._skip_inline_space()
        self._expect("=")
        self._skip_inline_space()
        return path

    def _record_key(self, table: KeyPath, segments: list[tuple[str, int, int]]) -> KeyPath:
        first = segments[0][1]
        path = table
        for name, _start, end in segments[:-1]:
            path = (*path, name)
            self.keys.setdefault(path, (first, end))
        path = (*path, segments[-1][0])
        end = segments[-1][2]
        self._define(path, first, end, is_table=False)
        self.keys[path] = (first, end)
        return path

    def _check_statement_key(self, table: KeyPath, path: KeyPath, start: int, end: int) -> None:
        """A statement's key (``start``-``end``) may not add to a table an earlier statement
        closed (an inline table or another value), to one a [table] header defined, or to an
        array of tables; nor be an array of tables itself. What the second definition conflicts
        with is recorded as the duplicate."""
        for size in range(len(table) + 1, len(path)):
            prefix = path[:size]
            if (
                prefix in self.sealed
                or self.defined.get(prefix)
                or (prefix in self.array_table_counts)
            ):
                self.duplicates.append(Duplicate(prefix, start, end, is_table=True))
                return
            self.dotted.add(prefix)
        if path in self.dotted or path in self.implicit:
            self.duplicates.append(Duplicate(path, start, end, is_table=True))
        elif path in self.array_table_counts:
            self.duplicates.append(Duplicate(path, start, end, is_table=False))

    def _check_inline_key(self, table: KeyPath, path: KeyPath, start: int, end: int) -> None:
        """A key inside an inline table (``start``-``end``) may not add to a value an earlier
        key of it set (``A = "1", A.B = "2"``), nor set a table its earlier dotted keys made
        (``env.A = "1", env = 2``). What it conflicts with is recorded as the duplicate, at
        this key, as for a statement's key."""
        for size in range(len(table) + 1, len(path)):
            prefix = path[:size]
            if prefix in self.defined:
                self.duplicates.append(Duplicate(prefix, start, end, is_table=True))
                return
            self.inline_dotted.add(prefix)
        if path in self.inline_dotted:
            self.duplicates.append(Duplicate(path, start, end, is_table=True))

    def _check_header(self, path: KeyPath, start: int, end: int, *, is_array: bool) -> None:
        """A [table] or [[array]] header may not reopen what a statement set, nor (a [table])
        redefine a table dotted keys created, nor (an [[array]]) extend a table or value."""
        for size in range(1, len(path) + (0 if is_array else 1)):
            if path[:size] in self.sealed:
                self.duplicates.append(Duplicate(path[:size], start, end, is_table=True))
                return
        if not is_array and path in self.dotted:
            self.duplicates.append(Duplicate(path, start, end, is_table=True))
        elif is_array and any(
            path[:-1] in made for made in (self.defined, self.implicit, self.dotted)
        ):
            self.duplicates.append(Duplicate(path[:-1], start, end, is_table=True))

    def _header(self) -> KeyPath:
        text = self.text
        start = self.index
        is_array = text.startswith("[[", start)
        self.index += 2 if is_array else 1
        self._skip_inline_space()
        segments = self._dotted_key()
        self._skip_inline_space()
        self._expect("]")
        if is_array:
            self._expect("]")
        end = self.index
        resolved: list[str | int] = []
        last = len(segments) - 1
        for position, (name, _seg_start, _seg_end) in enumerate(segments):
            resolved.append(name)
            prefix = tuple(resolved)
            if position == last and is_array:
                count = self.array_table_counts.get(prefix, 0)
                self.array_table_counts[prefix] = count + 1
                self.keys.setdefault(prefix, (start, end))
                self.values.setdefault(prefix, (start, end))
                resolved.append(count)
            elif prefix in self.array_table_counts:
                resolved.append(self.array_table_counts[prefix] - 1)
            if position != last:
                self.keys.setdefault(tuple(resolved), (start, end))
                self.implicit.add(tuple(resolved))
        path = tuple(resolved)
        self._check_header(path, start, end, is_array=is_array)
        if not is_array:
            self._define(path, start, end, is_table=True)
        else:
            self.defined.setdefault(path, True)  # its entry: a [table] of that path repeats it
        self.keys[path] = (start, end)
        self.values[path] = (start, end)
        return path

    def scan(self) -> None:
        table: KeyPath = ()
        text = self.text
        while True:
            self._skip_space_and_comments()
            if self.index >= self.length:
                return
            if text[self.index] == "[":
                table = self._header()
            else:
                path = self._inline_key(table, statement=True)
                self._value(path)
                self.sealed.add(path)
            # Only a comment may follow a statement on its line.
            self._skip_inline_space()
            if self.index < self.length and text[self.index] not in "#\r\n":
                raise _ScanError(self.index)


@dataclass
class _Frame:
    """An array or inline table being scanned: its path, opening offset, next item index."""

    path: KeyPath
    start: int
    is_array: bool
    next_index: int = 0

    @property
    def closer(self) -> str:
        return "]" if self.is_array else "}"

    def next_item(self) -> KeyPath:
        path = (*self.path, self.next_index)
        self.next_index += 1
        return path


class _ScanError(Exception):
    """The text is not TOML the scanner understands (the parser reports the real error)."""

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


def _decode_basic(raw: str) -> str:
    """Decode the escapes of a basic-string key; unknown escapes are kept verbatim."""

    def decode(match: re.Match[str]) -> str:
        escape = match.group()
        if escape[1] in _ESCAPES:
            return _ESCAPES[escape[1]]
        if escape[1] in "uU":
            with contextlib.suppress(ValueError):
                return chr(int(escape[2:], 16))
        return escape

    return _ESCAPE.sub(decode, raw)


def scan_spans(text: str) -> tuple[SpanMap, list[Duplicate]]:
    """Scan ``text`` and return its span map plus every key or table defined twice.

    On text the scanner cannot follow, the map holds what was found up to that point; the
    caller relies on the real parser for syntax errors, so this function never raises.
    """
    scanner = _Scanner(text)
    with contextlib.suppress(_ScanError, IndexError):
        scanner.scan()
    return SpanMap(text, scanner.keys, scanner.values), scanner.duplicates


_ERROR_POSITION = re.compile(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)$")


@dataclass(frozen=True)
class TomlSyntax:
    """Where and why ``tomllib`` refused a document."""

    message: str
    """The parser's message without its position, e.g. ``Unclosed array``."""
    span: Span
    """One character at the line and column it named (clamped to the text), or an empty span
    just past the last non-blank character when it named the end of the document (on a last
    line without a line end: where it names with that line ended, when that is on it)."""


def point_span(text: str, line: int, column: int) -> Span:
    """A one-character span at ``line``/``column`` of ``text`` (empty at the end of a line or
    file; both are clamped into the text). Never fails."""
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


# A decimal integer literal, its digits perhaps separated by underscores.
_DECIMAL_RUN = re.compile(r"[+-]?[0-9](?:_?[0-9])*")


def syntax_error(
    text: str, error: ValueError, reread: Callable[[str], object] | None = None
) -> TomlSyntax:
    """The message and position of ``tomllib``'s ``error`` on ``text``. Never fails.

    ``reread`` (the caller's own ``tomllib.loads``) places an "end of document" refusal of a
    last line without a line end where it refuses the same text with that line ended.

    ``tomllib`` reads a decimal integer with Python's ``int``, which refuses a literal of
    more digits than ``sys.get_int_max_str_digits()`` with a plain ``ValueError`` (not a
    ``TOMLDecodeError``): such an integer is far beyond TOML's 64 bits, and said so at it."""
    if not isinstance(error, tomllib.TOMLDecodeError):
        return _long_integer(text, error)
    raw = str(error)
    match = _ERROR_POSITION.search(raw)
    if match is None:
        return TomlSyntax(raw, _end_of_document(text))
    message = raw[: match.start()]
    if match.group(1):
        line, column = int(match.group(1)), int(match.group(2))
        span = point_span(text, line, column)
        if message in _ESCAPE_FAULTS:
            span = _escape_span(text, span.start.line, column, message) or span
        elif _lone_carriage_return(text, span):
            message = _LONE_CR
    else:
        span = _as_if_the_line_ended(text, reread) or _end_of_document(text)
    return TomlSyntax(message, span)


def _as_if_the_line_ended(text: str, reread: Callable[[str], object] | None) -> Span | None:
    """For ``text`` whose last line has no line end: where ``tomllib`` places its refusal of
    the same document with that line ended, when it names a place on that line (``id = `` is
    refused after its blank, as ``id = \\n`` is, not just past the ``=``), else ``None``.
    Without this the place would move with the file's last byte."""
    if reread is None or not text or text.endswith(("\n", "\r")):
        return None
    try:
        reread(text + "\n")
    except tomllib.TOMLDecodeError as error:
        match = _ERROR_POSITION.search(str(error))
        last_line = text.count("\n") + 1
        if match is not None and match.group(1) and int(match.group(1)) == last_line:
            return point_span(text, last_line, int(match.group(2)))
    except (ValueError, RecursionError):
        pass
    return None


# tomllib stops at a carriage return that no line feed follows, wherever it is (after a
# value or a header, in a comment, in a string), with a message about what it expected there
# ("Expected newline ... after a statement" after a `[table]` header too): on screen the line
# looks whole, so say what the character is.
_LONE_CR = "Carriage return (CR) without a line feed: TOML lines end in LF or CRLF"


def _lone_carriage_return(text: str, span: Span) -> bool:
    """Whether ``span`` starts at a carriage return that no line feed follows."""
    lines = text.split("\n")
    content = lines[span.start.line - 1]
    index = span.start.column - 1
    if index >= len(content) or content[index] != "\r":
        return False
    # A CR ending a line split at its LF is half of a CRLF, unless it ends the text.
    return index < len(content) - 1 or span.start.line == len(lines)


_BAD_HEX = "Invalid hex value"
# tomllib's refusals of an escape in a string. It reports the column just past the escape
# (past ``\\q``, past ``\\uD800``, past the blanks after a backslash that does not end the
# line, or the next line's start after a backslash ending a one-line string's line), or for
# bad hex digits the column after ``\\u``: the fault starts at the backslash.
_ESCAPE_FAULTS = frozenset(
    {"Unescaped '\\' in a string", "Escaped character is not a Unicode scalar value", _BAD_HEX}
)


def _escape_span(text: str, line: int, column: int, message: str) -> Span | None:
    """The span of the escape ``tomllib`` refused with ``message`` at ``line``/``column``."""
    lines = text.split("\n")
    if column == 1 and line > 1:
        line -= 1
        column = len(lines[line - 1].rstrip("\r")) + 1
    content = lines[line - 1].rstrip("\r")
    backslash = content.rfind("\\", 0, column - 1)
    if backslash < 0:
        return None
    start = backslash + 1  # 1-based
    end = max(column, start + 2)  # the backslash and the character after it, at least
    if message == _BAD_HEX:
        end = start + (6 if content[backslash + 1 : backslash + 2] == "u" else 10)
    end = min(end, len(content) + 1)
    return Span(Position(line, start), Position(line, end))


def _long_integer(text: str, error: ValueError) -> TomlSyntax:
    """``error`` (Python's refusal of an integer literal with too many digits) at the first
    literal that long in ``text``."""
    limit = sys.get_int_max_str_digits()
    for match in _DECIMAL_RUN.finditer(text):
        digits = sum(char.isdigit() for char in match.group())
        if limit and digits > limit:
            line = text.count("\n", 0, match.start()) + 1
            column = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
            return TomlSyntax(
                f"an integer of {digits} digits does not fit in a 64-bit signed integer",
                point_span(text, line, column),
            )
    return TomlSyntax(str(error), _end_of_document(text))


_HEADER_LINE = re.compile(
    r"[ \t]*\[\[?[ \t]*([A-Za-z_][A-Za-z0-9_-]*)([ \t]*\.[ \t]*[A-Za-z0-9_-]+)*[ \t]*\]\]?"
    r"[ \t]*(#.*)?\r?$"
)
_KEYVAL_LINE = re.compile(r"[ \t]*[A-Za-z0-9_-]+([ \t]*\.[ \t]*[A-Za-z0-9_-]+)*[ \t]*=")
_VALUE_WORDS = frozenset({"true", "false", "inf", "nan"})


@dataclass(frozen=True)
class KeyPart:
    """One part of a dotted key; ``name`` is unquoted; ``start``/``end`` cover the raw text."""

    name: str
    start: int
    end: int


@dataclass(frozen=True)
class Header:
    """A table header. ``inner_start``/``inner_end`` delimit the text between the brackets."""

    parts: tuple[KeyPart, ...]
    is_array: bool
    start: int
    inner_start: int
    inner_end: int

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(part.name for part in self.parts)


@dataclass(frozen=True)
class StringToken:
    """A string literal; ``content_start``/``content_end`` exclude the quotes."""

    start: int
    content_start: int
    content_end: int
    end: int
    closed: bool


@dataclass(frozen=True)
class InlineTable:
    """A ``{ … }`` value: keys typed inside it belong to ``path``."""

    path: tuple[str, ...]
    block: int
    start: int
    end: int


@dataclass
class Entry:
    """A ``key = value`` line (or a key still being typed, with no ``=`` yet).

    ``table`` is the path of the table holding the key; ``block`` the index of the header that
    opened the enclosing section (``-1`` for the root), which tells apart the instances of an
    array of tables. ``value_end`` is the end of the value, or the end of the line when the
    value is missing, so a cursor right after ``=`` is in the value.
    """

    table: tuple[str, ...]
    parts: tuple[KeyPart, ...]
    block: int
    equals: int | None = None
    value_end: int | None = None
    strings: list[StringToken] = field(default_factory=list)

    @property
    def path(self) -> tuple[str, ...]:
        return self.table + tuple(part.name for part in self.parts)


@dataclass
class ScannedDocument:
    """Everything :func:`scan` found, in document order."""

    text: str
    headers: list[Header] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    inline_tables: list[InlineTable] = field(default_factory=list)

    def present_keys(
        self, table: tuple[str, ...], block: int, exclude: Entry | None = None
    ) -> set[str]:
        """Names of the keys and sub-tables already defined directly under ``table``.

        Inside an array of tables only the current instance (``block``) counts, so the
        second ``[[plugin.channels.register]]`` still offers ``kind``.
        """
        restrict_to_block = False
        if block >= 0:
            header = self.headers[block]
            restrict_to_block = header.is_array and table[: len(header.path)] == header.path
        paths = [header.path for header in self.headers] + [
            entry.path
            for entry in self.entries
            if entry is not exclude and not (restrict_to_block and entry.block != block)
        ]
        depth = len(table)
        return {
            path[depth]
            for path in paths
            if len(path) > depth and path[:depth] == table and path[depth]
        }


class _TolerantScanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.document = ScannedDocument(text)

    def _at(self, offset: int) -> str:
        return self.text[offset] if offset < len(self.text) else ""

    def _skip_blanks(self) -> None:
        while self._at(self.pos) in (" ", "\t"):
            self.pos += 1

    def _end_of_line(self, offset: int) -> int:
        newline = self.text.find("\n", offset)
        return len(self.text) if newline < 0 else newline

    def _skip_line(self) -> None:
        self.pos = self._end_of_line(self.pos)

    def _quoted_key(self, quote: str) -> KeyPart:
        start = self.pos
        self.pos += 1
        chars: list[str] = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "\n":
                break
            if char == quote:
                self.pos += 1
                break
            if quote == '"' and char == "\\" and self.pos + 1 < len(self.text):
                chars.append(_ESCAPES.get(self.text[self.pos + 1], self.text[self.pos + 1]))
                self.pos += 2
                continue
            chars.append(char)
            self.pos += 1
        return KeyPart("".join(chars), start, self.pos)

    def _key(self) -> tuple[KeyPart, ...]:
        parts: list[KeyPart] = []
        while True:
            self._skip_blanks()
            char = self._at(self.pos)
            if char and char in BARE_KEY_CHARS:
                start = self.pos
                while self._at(self.pos) and self._at(self.pos) in BARE_KEY_CHARS:
                    self.pos += 1
                parts.append(KeyPart(self.text[start : self.pos], start, self.pos))
            elif char in ('"', "'"):
                parts.append(self._quoted_key(char))
            elif parts:
                # A dot with nothing after it yet (``sandbox.|``): an empty part being typed.
                parts.append(KeyPart("", self.pos, self.pos))
                return tuple(parts)
            else:
                return ()
            self._skip_blanks()
            if self._at(self.pos) != ".":
                return tuple(parts)
            self.pos += 1

    def scan(self) -> ScannedDocument:
        table: tuple[str, ...] = ()
        block = -1
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char in " \t\r\n":
                self.pos += 1
            elif char == "#":
                self._skip_line()
            elif char == "[":
                header = self._header()
                self.document.headers.append(header)
                table = header.path
                block = len(self.document.headers) - 1
            else:
                if char in BARE_KEY_CHARS or char in ('"', "'"):
                    self._key_value(table, block, inline=False)
                self._skip_line()
        return self.document

    def _header(self) -> Header:
        start = self.pos
        is_array = self.text.startswith("[[", self.pos)
        self.pos += 2 if is_array else 1
        inner_start = self.pos
        parts = self._key()
        self._skip_blanks()
        inner_end = self.pos
        if not self.text.startswith("]]" if is_array else "]", self.pos):
            inner_end = self._end_of_line(self.pos)  # unclosed: the rest of the line is inside
        self._skip_line()
        return Header(parts, is_array, start, inner_start, inner_end)

    def _key_value(self, table: tuple[str, ...], block: int, *, inline: bool) -> None:
        parts = self._key()
        if not parts:
            self.pos += 1
            return
        entry = Entry(table, parts, block)
        self.document.entries.append(entry)
        self._skip_blanks()
        if self._at(self.pos) != "=":
            return
        entry.equals = self.pos
        self.pos += 1
        self._skip_blanks()
        if self._at(self.pos) in ("", "\n", "\r", "#") or (inline and self._at(self.pos) in ",}"):
            entry.value_end = self._end_of_line(self.pos)
            return
        self._value(entry, entry.path, block)
        entry.value_end = self.pos

    def _value(self, entry: Entry, path: tuple[str, ...], block: int) -> None:
        text = self.text
        if text.startswith('"""', self.pos) or text.startswith("'''", self.pos):
            self._string(entry, text[self.pos : self.pos + 3], multiline=True)
        elif self._at(self.pos) in ('"', "'"):
            self._string(entry, self._at(self.pos), multiline=False)
        elif self._at(self.pos) == "[":
            self._array(entry, path, block)
        elif self._at(self.pos) == "{":
            self._inline_table(path, block)
        else:
            start = self.pos
            while self._at(self.pos) and self._at(self.pos) not in ",]}\n#":
                self.pos += 1
            while self.pos > start and text[self.pos - 1] in " \t\r":
                self.pos -= 1

    def _string(self, entry: Entry, delimiter: str, *, multiline: bool) -> None:
        start = self.pos
        self.pos += len(delimiter)
        content_start = self.pos
        escapes = delimiter[0] == '"'
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "\n" and not multiline:
                break
            if escapes and char == "\\":
                self.pos += 2
                continue
            if self.text.startswith(delimiter, self.pos):
                content_end = self.pos
                self.pos += len(delimiter)
                # Up to two extra quotes may close a multi-line string (`""""" `).
                while multiline and self._at(self.pos) == delimiter[0] and self.pos - start < 8:
                    self.pos += 1
                    content_end += 1
                entry.strings.append(StringToken(start, content_start, content_end, self.pos, True))
                return
            self.pos += 1
        self.pos = min(self.pos, len(self.text))
        entry.strings.append(StringToken(start, content_start, self.pos, self.pos, False))

    def _line_starts_new_statement(self, offset: int) -> bool:
        line = self.text[offset : self._end_of_line(offset)]
        header = _HEADER_LINE.match(line)
        if header and header.group(1) not in _VALUE_WORDS:
            return True
        return bool(_KEYVAL_LINE.match(line))

    def _array(self, entry: Entry, path: tuple[str, ...], block: int) -> None:
        self.pos += 1
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "\n":
                self.pos += 1
                if self._line_starts_new_statement(self.pos):
                    # Unclosed array: stop before the next statement, not at the end of file.
                    self.pos -= 1
                    return
            elif char in " \t\r,":
                self.pos += 1
            elif char == "#":
                self._skip_line()
            elif char == "]":
                self.pos += 1
                return
            else:
                before = self.pos
                self._value(entry, path, block)
                if self.pos == before:
                    self.pos += 1

    def _inline_table(self, path: tuple[str, ...], block: int) -> None:
        start = self.pos
        self.pos += 1
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "\n":
                break
            if char in " \t\r,":
                self.pos += 1
            elif char == "}":
                self.pos += 1
                break
            elif char in BARE_KEY_CHARS or char in ('"', "'"):
                self._key_value(path, block, inline=True)
            else:
                self.pos += 1
        self.document.inline_tables.append(InlineTable(path, block, start, self.pos))


def scan_tolerant(text: str) -> ScannedDocument:
    """Scan ``text`` into headers, entries and inline tables; never raises."""
    return _TolerantScanner(text).scan()


_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def _escape_at(token: str, index: int) -> tuple[str, int] | None:
    """The character the escape whose backslash is at ``index`` stands for, and the offset
    past it; ``None`` for an escape TOML does not have."""
    kind = token[index + 1 : index + 2]
    if kind in _ESCAPES:
        return _ESCAPES[kind], index + 2
    if kind not in ("u", "U"):
        return None
    end = index + 2 + (4 if kind == "u" else 8)
    digits = token[index + 2 : end]
    if len(digits) != end - index - 2 or not set(digits) <= _HEX_DIGITS:
        return None
    code = int(digits, 16)
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return None
    return chr(code), end


def string_offsets(token: str) -> tuple[str, list[int]] | None:
    """The value of the TOML string written as ``token`` (its quotes included), and for each
    of its characters the offset in ``token`` that writes it, plus one last offset: the
    closing delimiter's. ``None`` for a token that is no string this reader follows.

    As TOML reads it (and tomllib): a multi-line string drops the newline right after its
    opening delimiter and reads CRLF as LF; in a basic string an escape is one character
    (at its backslash) and a line-ending backslash drops the whitespace and newlines after it.
    """
    for quote in ('"""', "'''", '"', "'"):
        if token.startswith(quote) and token.endswith(quote) and len(token) >= 2 * len(quote):
            break
    else:
        return None
    basic, multi = quote[0] == '"', len(quote) == 3
    index, end = len(quote), len(token) - len(quote)
    if multi:
        index += 2 if token.startswith("\r\n", index) else int(token.startswith("\n", index))
    chars: list[str] = []
    offsets: list[int] = []
    while index < end:
        char = token[index]
        if multi and token.startswith("\r\n", index):
            chars.append("\n")
            offsets.append(index)
            index += 2
        elif (
            basic
            and char == "\\"
            and multi
            and token[index + 1 : index + 2] in (" ", "\t", "\r", "\n")
        ):
            after = index + 1
            while after < end and token[after] in " \t":
                after += 1
            if after >= end or token[after] not in "\r\n":
                return None
            while after < end and token[after] in " \t\r\n":
                after += 1
            index = after
        elif basic and char == "\\":
            escaped = _escape_at(token, index)
            if escaped is None:
                return None
            chars.append(escaped[0])
            offsets.append(index)
            index = escaped[1]
        else:
            chars.append(char)
            offsets.append(index)
            index += 1
    offsets.append(end)
    return "".join(chars), offsets
