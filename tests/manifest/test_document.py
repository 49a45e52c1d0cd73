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
