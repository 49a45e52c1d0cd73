"""Engine positions (1-based code points) to LSP positions (0-based code units) and back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nexo_pkg.core.diagnostics import Position, Span
from nexo_pkg.lsp.positions import (
    ClientPosition,
    ClientRange,
    Encoding,
    LineIndex,
    normalise_encoding,
)

LINE = 'name = "🙂é" x'  # 🙂 is astral (2 UTF-16 units, 4 UTF-8 bytes); é is 2 UTF-8 bytes


def _units(text: str, encoding: Encoding) -> int:
    """Independent count: encode and measure."""
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    return len(text)


@pytest.mark.parametrize(("encoding", "expected"), [("utf-16", 13), ("utf-8", 16), ("utf-32", 12)])
def test_column_after_astral_character(encoding: Encoding, expected: int) -> None:
    index = LineIndex(LINE)
    column = LINE.index("x")
    assert index.to_client(0, column, encoding) == ClientPosition(0, expected)
    assert index.from_client(0, expected, encoding) == (0, column)


def test_span_converts_start_and_end() -> None:
    text = "[plugin]\n" + LINE + "\n"
    index = LineIndex(text)
    column = LINE.index("x") + 1  # 1-based
    span = Span(Position(2, column), Position(2, column + 1))
    converted = index.span_to_client(span, "utf-16")
    assert converted.start == ClientPosition(1, 13)
    assert converted.end == ClientPosition(1, 14)


def test_half_a_surrogate_pair_maps_to_the_character_start() -> None:
    index = LineIndex(LINE)
    emoji = LINE.index("🙂")
    assert index.from_client(0, emoji + 1, "utf-16") == (0, emoji)


def test_out_of_range_positions_clamp() -> None:
    index = LineIndex("ab\ncd")
    assert index.to_client(7, 0, "utf-16") == ClientPosition(1, 2)
    assert index.to_client(0, 99, "utf-16") == ClientPosition(0, 2)
    assert index.from_client(0, 99, "utf-16") == (0, 2)
    assert index.from_client(-1, 0, "utf-16") == (0, 0)
    assert index.span_to_client(
        Span(Position(2, 3), Position(1, 1)), "utf-16"
    ).end == ClientPosition(1, 2)


def test_lines_end_where_lsp_ends_them() -> None:
    # U+2028 may sit inside a TOML string; LSP clients do not break lines there. They do at
    # `\n`, `\r\n` and a lone `\r`.
    index = LineIndex('a = "x\u2028y"\r\nb = 1\rc\nd')
    assert index.lines == ['a = "x\u2028y"', "b = 1", "c", "d"]
    assert index.to_client(1, 1, "utf-16") == ClientPosition(1, 1)
    assert index.line_column(len('a = "x\u2028y"\r')) == (0, len('a = "x\u2028y"'))


def test_engine_spans_count_lines_as_the_files_reader_does() -> None:
    """TOML's reader ends lines at `\n` only (a lone CR is a syntax error on its line), YAML's
    as LSP does; either way a span lands where the text it names is."""
    text = "a = 1\r# b\nc = 2\n"
    toml = LineIndex(text)
    # TOML line 2 is `c = 2`; in the editor that is line 2 as well (line 1 is `# b`).
    assert toml.span_to_client(Span(Position(2, 1), Position(2, 2)), "utf-16") == ClientRange(
        ClientPosition(2, 0), ClientPosition(2, 1)
    )
    # The CR (TOML line 1, column 6) up to the column after it: the end of line 0 to line 1.
    assert toml.span_to_client(Span(Position(1, 6), Position(1, 7)), "utf-16") == ClientRange(
        ClientPosition(0, 5), ClientPosition(1, 0)
    )
    yaml = LineIndex(text, engine_lines="lsp")
    assert yaml.span_to_client(Span(Position(2, 3), Position(2, 4)), "utf-16") == ClientRange(
        ClientPosition(1, 2), ClientPosition(1, 3)
    )
    # A column past the end of its line is the end of that line, not the next line.
    assert yaml.span_to_client(Span(Position(1, 90), Position(1, 99)), "utf-16") == ClientRange(
        ClientPosition(0, 5), ClientPosition(0, 5)
    )


def test_offsets_and_line_columns_round_trip() -> None:
    text = "one\ntwo🙂\r\n\rthree\r"
    index = LineIndex(text)
    for offset in range(len(text) + 1):
        if text[offset - 1 : offset + 1] == "\r\n":
            continue  # between the two characters of one line break: no LSP position
        line, column = index.line_column(offset)
        assert index.offset(line, column) == offset


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("utf-8", "utf-8"),
        ("utf-16", "utf-16"),
        ("utf-32", "utf-32"),
        ("latin-1", "utf-16"),
        (None, "utf-16"),
    ],
)
def test_normalise_encoding(name: str | None, expected: str) -> None:
    assert normalise_encoding(name) == expected


@given(st.text(max_size=40), st.sampled_from(["utf-8", "utf-16", "utf-32"]))
def test_every_column_matches_an_independent_count(line: str, encoding: Encoding) -> None:
    line = line.replace("\n", " ").replace("\r", " ")
    index = LineIndex(line)
    for column in range(len(line) + 1):
        units = _units(line[:column], encoding)
        assert index.to_client(0, column, encoding) == ClientPosition(0, units)
        assert index.from_client(0, units, encoding) == (0, column)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_many_positions_on_one_long_line_do_not_walk_the_line_each(
    encoding: Encoding, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-line list of ids gets a finding per id: converting each position must not count
    the code units of the line up to it character by character (2,000 findings on an 80 KB
    line took a minute), on an ASCII line or on one with wide characters."""
    from pygls.workspace.position_codec import PositionCodec

    ascii_line = "disabled: [" + ",".join(f"a{index:06d}" for index in range(2_000)) + "]"
    wide_line = "disabled: [" + ",".join(f"é{index}🙂中" for index in range(2_000)) + "]"
    walked: list[int] = []
    count = PositionCodec.client_num_units

    def counting(self: PositionCodec, string: str) -> int:
        walked.append(len(string))
        return int(count(self, string))

    monkeypatch.setattr(PositionCodec, "client_num_units", counting)
    for line in (ascii_line, wide_line):
        index = LineIndex(line)
        columns = range(0, len(line) + 1, 7)
        found = [index.to_client(0, column, encoding).character for column in columns]
        assert found == [_units(line[:column], encoding) for column in columns]
    assert sum(walked) <= len(ascii_line) + len(wide_line)
