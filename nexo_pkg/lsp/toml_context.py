"""Where is the cursor in a TOML document? A tolerant scanner for hover and completion.

The language server must answer for buffers that are half typed and therefore not TOML yet
(``[plugin.sa``, ``network = "``, ``sandbox.``), so this does not use a TOML parser. It scans
the text once and records table headers (``[a.b]``, ``[[a.b]]``), key/value entries with the
offsets of every dotted-key part, the strings inside each value, and inline tables. Inside an
unclosed multi-line array, a line that looks like a header or a ``key =`` line ends the array,
so one missing ``]`` does not swallow the rest of the document.

Offsets are indexes into the text (code points); :class:`nexo_pkg.lsp.positions.LineIndex`
converts them to and from lines and columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from nexo_pkg.manifest.document import BARE_KEY_CHARS

__all__ = [
    "Context",
    "Entry",
    "Header",
    "KeyPart",
    "ScannedDocument",
    "StringToken",
    "resolve",
    "scan",
]

_WORD_CHARS = BARE_KEY_CHARS | frozenset(".+:")
_HEADER_LINE = re.compile(
    r"[ \t]*\[\[?[ \t]*([A-Za-z_][A-Za-z0-9_-]*)([ \t]*\.[ \t]*[A-Za-z0-9_-]+)*[ \t]*\]\]?"
    r"[ \t]*(#.*)?\r?$"
)
_KEYVAL_LINE = re.compile(r"[ \t]*[A-Za-z0-9_-]+([ \t]*\.[ \t]*[A-Za-z0-9_-]+)*[ \t]*=")
_VALUE_WORDS = frozenset({"true", "false", "inf", "nan"})
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


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


class _Scanner:
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


def scan(text: str) -> ScannedDocument:
    """Scan ``text`` into headers, entries and inline tables; never raises."""
    return _Scanner(text).scan()


ContextKind = Literal["header", "key", "value", "none"]


@dataclass(frozen=True)
class Context:
    """What the cursor is on.

    - ``header``: inside ``[…]``/``[[…]]``; ``path`` is the header's parts up to the one under
      the cursor; ``replace`` covers the whole header key.
    - ``key``: on a key (or where a new key would go); ``path`` ends with the part under the
      cursor (``""`` when nothing is typed yet); ``replace`` covers that part.
    - ``value``: right of ``=``; ``path`` is the key's path; ``string`` is the string literal
      around the cursor, if any; ``replace`` covers the word or string content at the cursor.
    """

    kind: ContextKind
    path: tuple[str, ...] = ()
    replace: tuple[int, int] = (0, 0)
    block: int = -1
    is_array_header: bool = False
    entry: Entry | None = None
    string: StringToken | None = None


def _word_around(text: str, offset: int) -> tuple[int, int]:
    start = offset
    while start > 0 and text[start - 1] in _WORD_CHARS:
        start -= 1
    end = offset
    while end < len(text) and text[end] in _WORD_CHARS:
        end += 1
    return start, end


def resolve(document: ScannedDocument, offset: int) -> Context:
    """Describe what is at ``offset`` in ``document``; never raises."""
    text = document.text
    offset = max(0, min(offset, len(text)))
    for index, header in enumerate(document.headers):
        if header.inner_start <= offset <= header.inner_end:
            path: tuple[str, ...] = ()
            for part in header.parts:
                path += (part.name,)
                if part.start <= offset <= part.end:
                    break
            if not header.parts:
                path = ("",)
            start = header.parts[0].start if header.parts else offset
            end = header.parts[-1].end if header.parts else offset
            return Context("header", path, (start, end), index, header.is_array)
    for entry in document.entries:
        for position, part in enumerate(entry.parts):
            if part.start <= offset <= part.end:
                path = entry.table + tuple(p.name for p in entry.parts[: position + 1])
                return Context("key", path, (part.start, part.end), entry.block, entry=entry)
    best: Entry | None = None
    best_equals = -1
    for entry in document.entries:
        if entry.equals is None or entry.value_end is None:
            continue
        # The innermost value wins: an entry of an inline table starts after its parent's `=`.
        if entry.equals < offset <= entry.value_end and entry.equals > best_equals:
            best, best_equals = entry, entry.equals
    inline: InlineTable | None = None
    for table in document.inline_tables:
        after_closing_brace = offset == table.end and text[table.end - 1] == "}"
        inside = table.start < offset <= table.end and not after_closing_brace
        if inside and (inline is None or table.start > inline.start):
            inline = table
    if inline is not None and inline.start > best_equals:
        # Inside `{ … }` but not on one of its keys or values: a new key of the inline table.
        return Context("key", (*inline.path, ""), (offset, offset), inline.block)
    if best is not None:
        for token in best.strings:
            inside = token.content_start <= offset <= token.content_end
            if inside and (not token.closed or offset < token.end):
                return Context(
                    "value",
                    best.path,
                    (token.content_start, token.content_end),
                    best.block,
                    entry=best,
                    string=token,
                )
        return Context("value", best.path, _word_around(text, offset), best.block, entry=best)
    line_start = text.rfind("\n", 0, offset) + 1
    if text[line_start:offset].strip() == "":
        block = sum(1 for header in document.headers if header.start < offset) - 1  # -1: root
        table_path = document.headers[block].path if block >= 0 else ()
        return Context("key", (*table_path, ""), (offset, offset), block)
    return Context("none")
