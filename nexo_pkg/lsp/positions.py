"""Conversions between the lint engine's positions and LSP positions.

The engine counts 1-based lines and columns in code points; LSP counts 0-based ones in the
negotiated encoding (docs/editors.md, "Positions"). pygls's
:class:`~pygls.workspace.PositionCodec` counts code units; this module adds offsets into the
text, clamping of out-of-range input, and the engine's 1-based spans.

Lines are split on ``\\n`` only (a trailing ``\\r`` stays at the end of its line and never
precedes a column that matters), because that is what TOML and LSP clients count as a line
break; ``str.splitlines`` would also split on characters such as U+2028 that may appear inside
TOML strings.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import cache
from itertools import accumulate
from typing import Literal, cast

from pygls.workspace import PositionCodec

from nexo_pkg.core.diagnostics import Span

Encoding = Literal["utf-8", "utf-16", "utf-32"]

__all__ = [
    "ClientPosition",
    "ClientRange",
    "Encoding",
    "LineIndex",
    "apply_change",
    "normalise_encoding",
]

# What an LSP client counts as a line break when it sends a range (the specification's
# "\n", "\r\n" and "\r"), whatever TOML allows in the text.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def normalise_encoding(name: str | None) -> Encoding:
    """Map an LSP ``PositionEncodingKind`` value to one of ours; unknown or absent is UTF-16."""
    return cast("Encoding", name) if name in ("utf-8", "utf-32") else "utf-16"


@cache
def _codec(encoding: Encoding) -> PositionCodec:
    return PositionCodec(encoding)


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

    Out-of-range input never raises: lines past the end clamp to the end of the document,
    negative lines and characters to the start, and columns past the end of a line to the end
    of that line, because a half-typed buffer, a diagnostic pointing just past the last
    character and a careless client are all normal for an editor.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.line_starts = [0, *accumulate(len(line) + 1 for line in self.lines[:-1])]

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
        units = _codec(encoding).client_num_units(self.lines[line][:column])
        return ClientPosition(line, units)

    def from_client(self, line: int, character: int, encoding: Encoding) -> tuple[int, int]:
        """Convert an LSP position to a 0-based line and code-point column.

        A ``character`` that falls inside a multi-unit character (half a surrogate pair) maps
        to the start of that character, as the LSP specification asks.
        """
        if not 0 <= line < len(self.lines):
            return self._clamp(line, 0)
        text = self.lines[line]
        codec = _codec(encoding)
        if character <= 0:
            return line, 0
        if character >= codec.client_num_units(text):
            return line, len(text)
        from lsprotocol import types  # noqa: PLC0415 - pygls has imported it already

        found = codec.position_from_client_units(
            [text], types.Position(line=0, character=character)
        ).character
        # PositionCodec rounds a position inside a character up; LSP says round down.
        if found and codec.client_num_units(text[:found]) > character:
            found -= 1
        return line, found

    def offset(self, line: int, column: int) -> int:
        """The index into :attr:`text` of a 0-based line and code-point column (clamped)."""
        line, column = self._clamp(line, column)
        return self.line_starts[line] + column

    def line_column(self, offset: int) -> tuple[int, int]:
        """The 0-based line and code-point column of an index into :attr:`text` (clamped)."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self.line_starts, offset) - 1
        return line, offset - self.line_starts[line]

    def span_to_client(self, span: Span, encoding: Encoding) -> ClientRange:
        """Convert an engine :class:`Span` (1-based, code points) to an LSP range."""
        start = self.to_client(span.start.line - 1, span.start.column - 1, encoding)
        end = self.to_client(span.end.line - 1, span.end.column - 1, encoding)
        return ClientRange(start, max(end, start))


def _client_offset(text: str, line: int, character: int, encoding: Encoding) -> int:
    """The index into ``text`` of an LSP position, lines split as the client splits them.

    A line past the end is the end of the text, a character past the end of its line is the
    end of its line, before the line break; and half a surrogate pair rounds down.
    """
    if line < 0:
        return 0
    breaks = [(match.start(), match.end()) for match in _LINE_BREAK.finditer(text)]
    if line > len(breaks):
        return len(text)
    begin = 0 if line == 0 else breaks[line - 1][1]
    stop = breaks[line][0] if line < len(breaks) else len(text)
    return begin + LineIndex(text[begin:stop]).from_client(0, character, encoding)[1]


def apply_change(
    text: str, start: tuple[int, int], end: tuple[int, int], new_text: str, encoding: Encoding
) -> str:
    """``text`` with the LSP range ``start``..``end`` (0-based line and character, in code
    units of ``encoding``) replaced by ``new_text``: an incremental ``didChange``. Positions
    out of range clamp as :func:`_client_offset` says; a reversed range is read in order."""
    first, last = sorted(_client_offset(text, *position, encoding) for position in (start, end))
    return text[:first] + new_text + text[last:]
