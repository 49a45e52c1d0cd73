"""Conversions between the lint engine's positions and LSP positions.

The engine counts 1-based lines and columns in code points; LSP counts 0-based ones in the
negotiated encoding (docs/editors.md, "Positions"). pygls's
:class:`~pygls.workspace.PositionCodec` counts code units; this module adds offsets into the
text, clamping of out-of-range input, and the engine's 1-based spans.

Lines end where the LSP specification says a client ends them: at ``\\n``, ``\\r\\n`` or a
lone ``\\r`` (not at characters such as U+2028, which ``str.splitlines`` would also split on and
which may appear inside TOML strings). The engine's spans are counted as the file's reader
counts lines: YAML as LSP does, TOML at ``\\n`` only (a lone ``\\r`` is no line break there);
a span is converted through its offset into the text, so both counts meet.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import cache
from typing import Literal, cast

from pygls.workspace import PositionCodec

from nexo_pkg.core.diagnostics import Position, Span

Encoding = Literal["utf-8", "utf-16", "utf-32"]

__all__ = [
    "ClientPosition",
    "ClientRange",
    "Encoding",
    "LineIndex",
    "apply_change",
    "normalise_encoding",
]

# What an LSP client counts as a line break (the specification's "\n", "\r\n" and "\r"),
# whatever TOML allows in the text.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# Where the TOML reader, and so the engine's spans in a TOML file, end a line.
_LINE_FEED = re.compile(r"\n")


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

    def __init__(self, text: str, *, engine_lines: Literal["toml", "lsp"] = "toml") -> None:
        self.text = text
        breaks = list(_LINE_BREAK.finditer(text))
        self.line_starts = [0, *(found.end() for found in breaks)]
        ends = [*(found.start() for found in breaks), len(text)]
        self.lines = [text[start:end] for start, end in zip(self.line_starts, ends, strict=True)]
        self._ascii: dict[int, bool] = {}
        # The line starts of the engine's spans: TOML's own (``\n`` only) or the same as LSP's.
        self._engine_starts = (
            self.line_starts
            if engine_lines == "lsp"
            else [0, *(found.end() for found in _LINE_FEED.finditer(text))]
        )

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
        return ClientPosition(line, self._units(line, column, encoding))

    def _units(self, line: int, column: int, encoding: Encoding) -> int:
        """The code units of the first ``column`` code points of ``line``: counted by the
        codecs in C, and not at all on an ASCII line (one unit a character in every encoding),
        so the many findings of one long line cost no walk of it each."""
        plain = self._ascii.get(line)
        if plain is None:
            plain = self._ascii[line] = self.lines[line].isascii()
        if plain or encoding == "utf-32":
            return column
        prefix = self.lines[line][:column]
        if encoding == "utf-8":
            return len(prefix.encode("utf-8", "surrogatepass"))
        return len(prefix.encode("utf-16-le", "surrogatepass")) // 2

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
        """The 0-based line and code-point column of an index into :attr:`text` (clamped; an
        index inside a ``\\r\\n`` is the end of its line)."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self.line_starts, offset) - 1
        return line, min(offset - self.line_starts[line], len(self.lines[line]))

    def engine_offset(self, position: Position) -> int:
        """The index into :attr:`text` of an engine position (1-based, lines as the file's
        reader counts them); a column past the end of its line is the end of that line."""
        starts = self._engine_starts
        line = min(max(position.line - 1, 0), len(starts) - 1)
        end = starts[line + 1] - 1 if line + 1 < len(starts) else len(self.text)
        return starts[line] + max(0, min(position.column - 1, end - starts[line]))

    def span_to_client(self, span: Span, encoding: Encoding) -> ClientRange:
        """Convert an engine :class:`Span` (1-based, code points) to an LSP range."""
        start, end = (
            self.to_client(*self.line_column(self.engine_offset(position)), encoding)
            for position in (span.start, span.end)
        )
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
