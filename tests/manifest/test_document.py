"""Loading a manifest: decoding, syntax errors at the parser's position, junk input."""

from __future__ import annotations

import pytest

from nexo_pkg.core.diagnostics import Position
from nexo_pkg.manifest.document import MAX_MANIFEST_BYTES, decode_manifest, parse_manifest


def test_plain_data_is_unwrapped() -> None:
    parsed = parse_manifest('[plugin]\nid = "x"\nlist = [1, {a = 2}]\n')
    assert parsed.ok
    assert parsed.data == {"plugin": {"id": "x", "list": [1, {"a": 2}]}}
    assert type(parsed.data["plugin"]) is dict


def test_syntax_error_at_parser_position() -> None:
    parsed = parse_manifest('[plugin]\nid = "x"\nname = \n')
    assert parsed.data == {}
    [error] = parsed.syntax_errors
    assert (error.code, error.name) == ("NX001", "toml-syntax")
    assert error.span.start == Position(3, 8)


def test_syntax_error_at_end_of_document() -> None:
    [error] = parse_manifest("a = [1,\n").syntax_errors
    assert error.code == "NX001"
    assert error.span.start.line == 1


def test_every_duplicate_is_reported() -> None:
    parsed = parse_manifest("[plugin]\nid = 1\nid = 2\nname = 1\nname = 2\n")
    assert [(d.code, d.key_path, d.span.start.line) for d in parsed.syntax_errors] == [
        ("NX002", "plugin.id", 3),
        ("NX002", "plugin.name", 5),
    ]


def test_keys_of_a_repeated_table_are_one_problem() -> None:
    parsed = parse_manifest("[t]\na = 1\n[t]\na = 2\n")
    assert [(d.code, d.key_path) for d in parsed.syntax_errors] == [("NX002", "t")]


def test_deep_nesting_is_a_diagnostic() -> None:
    depth = 10_000
    [error] = parse_manifest("x = " + "[" * depth + "]" * depth).syntax_errors
    assert error.code == "NX005"


def test_decode_drops_bom() -> None:
    text, problems = decode_manifest(b"\xef\xbb\xbfa = 1\n")
    assert (text, problems) == ("a = 1\n", [])


def test_decode_invalid_utf8_points_at_the_byte() -> None:
    text, [problem] = decode_manifest(b'[plugin]\nname = "\xc3\x28"\n')
    assert text == ""
    assert problem.code == "NX003"
    assert problem.span.start == Position(2, 9)


def test_decode_nul_byte_is_binary() -> None:
    _, [problem] = decode_manifest(b"a = 1\n\x00\x01\x02")
    assert problem.code == "NX003"
    assert "NUL" in problem.message


def test_decode_refuses_huge_files() -> None:
    _, [problem] = decode_manifest(b"a = 1\n" * (MAX_MANIFEST_BYTES // 6 + 1))
    assert problem.code == "NX004"


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_empty_documents_parse_to_nothing(text: str) -> None:
    parsed = parse_manifest(text)
    assert parsed.ok
    assert parsed.data == {}


_LONG_KEY = ".".join(["k"] * 80)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (f"a = [\n  {{ {_LONG_KEY} = 1 }},\n]\n", Position(2, 5)),
        (f"a = {{ b = 1, {_LONG_KEY} = 2 }}\n", Position(1, 14)),
        (f"[a]\nx = 1\n[ {_LONG_KEY} ]\n", Position(3, 3)),
    ],
)
def test_a_dotted_key_of_eighty_parts_is_refused_where_it_stands(
    text: str, where: Position
) -> None:
    [error] = parse_manifest(text).syntax_errors
    assert error.code == "NX005"
    assert "a dotted key of 80 parts" in error.message
    assert error.span.start == where


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (f"a = [\n{_LONG_KEY} = 1\n", Position(2, 1)),  # the array is not closed
        (f'"a\n{_LONG_KEY} = 1\n', Position(1, 3)),  # nor is the string
    ],
)
def test_a_syntax_error_before_a_long_dotted_key_comes_first(text: str, where: Position) -> None:
    """The daemon's parser stops at the first error: a long key after it is never reached."""
    [error] = parse_manifest(text).syntax_errors
    assert error.code == "NX001"
    assert error.span.start == where
