"""Conversions between the lint engine's positions and LSP positions.

The engine reports 1-based lines and columns counted in Unicode code points, with an exclusive
end. LSP wants 0-based lines and characters counted in the negotiated position encoding:
UTF-16 code units unless the client offered something else (``general.positionEncodings``).
A character outside the Basic Multilingual Plane (most emoji) is one code point but two UTF-16
code units and four UTF-8 bytes, so columns after it differ between the two worlds.

Lines are split on ``\\n`` only (a trailing ``\\r`` stays at the end of its line and never
precedes a column that matters), because that is what TOML and LSP clients count as a line
break; ``str.splitlines`` would also split on characters such as U+2028 that may appear inside
TOML strings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nexo_pkg.diagnostics import Span

Encoding = Literal["utf-8", "utf-16", "utf-32"]

__all__ = [
    "ClientPosition",
    "ClientRange",
    "Encoding",
    "LineIndex",
    "code_units",
    "normalise_encoding",
]


def normalise_encoding(name: str | None) -> Encoding:
    """Map an LSP ``PositionEncodingKind`` value to one of ours; unknown or absent is UTF-16."""
    if name == "utf-8":
        return "utf-8"
    if name == "utf-32":
        return "utf-32"
    return "utf-16"


def code_units(character: str, encoding: Encoding) -> int:
    """Number of code units ``character`` (one code point) takes in ``encoding``."""
    point = ord(character)
    if encoding == "utf-32":
        return 1
    if encoding == "utf-16":
        return 2 if point > 0xFFFF else 1
    if point < 0x80:
        return 1
    if point < 0x800:
        return 2
    if point < 0x10000:
        return 3
    return 4


@dataclass(frozen=True, order=True)
class ClientPosition:
    """A 0-based LSP position: ``character`` is in code units of the negotiated encoding."""

    line: int
    character: int


@dataclass(frozen=True)
class ClientRange:
    """An LSP range (``end`` exclusive)."""

    start: ClientPosition
    end: ClientPosition


class LineIndex:
    """The lines of one document text, for converting positions in both directions.

    Out-of-range input never raises: lines past the end clamp to the end of the document and
    columns past the end of a line clamp to the end of that line, because a half-typed buffer
    and a diagnostic pointing just past the last character are both normal in an editor.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        starts = [0]
        for line in self.lines[:-1]:
            starts.append(starts[-1] + len(line) + 1)
        self.line_starts = starts

    def _clamp(self, line: int, column: int) -> tuple[int, int]:
        if line < 0:
            return 0, 0
        if line >= len(self.lines):
            last = len(self.lines) - 1
            return last, len(self.lines[last])
        return line, max(0, min(column, len(self.lines[line])))

    def to_client(self, line: int, column: int, encoding: Encoding) -> ClientPosition:
        """Convert a 0-based line and code-point column to an LSP position."""
        line, column = self._clamp(line, column)
        text = self.lines[line]
        if encoding == "utf-32":
            return ClientPosition(line, column)
        return ClientPosition(line, sum(code_units(char, encoding) for char in text[:column]))

    def from_client(self, line: int, character: int, encoding: Encoding) -> tuple[int, int]:
        """Convert an LSP position to a 0-based line and code-point column.

        A ``character`` that falls inside a multi-unit character (half a surrogate pair) maps
        to the start of that character, as the LSP specification asks.
        """
        if line < 0:
            return 0, 0
        if line >= len(self.lines):
            last = len(self.lines) - 1
            return last, len(self.lines[last])
        text = self.lines[line]
        if encoding == "utf-32":
            return line, max(0, min(character, len(text)))
        units = 0
        for column, char in enumerate(text):
            width = code_units(char, encoding)
            if units + width > character:
                return line, column
            units += width
        return line, len(text)

    def offset(self, line: int, column: int) -> int:
        """The index into :attr:`text` of a 0-based line and code-point column (clamped)."""
        line, column = self._clamp(line, column)
        return self.line_starts[line] + column

    def line_column(self, offset: int) -> tuple[int, int]:
        """The 0-based line and code-point column of an index into :attr:`text` (clamped)."""
        offset = max(0, min(offset, len(self.text)))
        low, high = 0, len(self.line_starts) - 1
        while low < high:
            middle = (low + high + 1) // 2
            if self.line_starts[middle] <= offset:
                low = middle
            else:
                high = middle - 1
        return low, offset - self.line_starts[low]

    def span_to_client(self, span: Span, encoding: Encoding) -> ClientRange:
        """Convert an engine :class:`Span` (1-based, code points) to an LSP range."""
        start = self.to_client(span.start.line - 1, span.start.column - 1, encoding)
        end = self.to_client(span.end.line - 1, span.end.column - 1, encoding)
        end = max(end, start)
        return ClientRange(start, end)
