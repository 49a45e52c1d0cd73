"""A JSON fault inside a multi-line ``input_schema`` or ``config_schema.schema`` string is
reported on the line of the fault (issue: every invalid manifest yields a diagnostic whose
range starts on the line of the fault), through the real ``nexo plugin lint`` CLI. A fault
on the line where the value starts keeps the whole value's span."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from support.lint_cli import run_lint_json
from support.toml_texts import WEATHER_MANIFEST

from nexo_pkg.core.toml_spans import string_offsets

BASE = (
    WEATHER_MANIFEST
    + """
[plugin.tools]
expose = ["weather_now"]

[[plugin.tools.outbound]]
name = "weather_now"
description = "Now"
"""
)
FIRST = BASE.count("\n") + 1  # the line of `input_schema = ...`
_TRAILING_COMMA = (
    ("a trailing comma before `]`", 19)
    if sys.version_info >= (3, 13)
    else ("expected a JSON value", 20)
)


def _nx116(tmp_path: Path, schema_line: str, newline: str = "\n") -> dict[str, Any]:
    path = tmp_path / "plugin.toml"
    path.write_bytes((BASE + schema_line).replace("\n", newline).encode("utf-8"))
    code, report = run_lint_json([path])
    assert code == 1
    found: list[dict[str, Any]] = report["files"][0]["diagnostics"]
    [problem] = [d for d in found if d["code"] == "NX116"]
    assert problem["severity"] == "error"
    assert problem["key_path"] == "plugin.tools.outbound[0].input_schema"
    return problem


def _at(line: int, column: int) -> dict[str, dict[str, int]]:
    return {"start": {"line": line, "column": column}, "end": {"line": line, "column": column + 1}}


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_fault_on_a_later_line_of_a_literal_string_is_marked_where_it_is(
    tmp_path: Path, newline: str
) -> None:
    problem = _nx116(
        tmp_path,
        "input_schema = '''\n{\n  \"type\": \"object\",\n  \"properties\": {,}\n}\n'''\n",
        newline,
    )
    assert problem["message"].endswith(
        f"invalid JSON: expected a key in double quotes at line {FIRST + 3}, column 18"
    )
    assert problem["range"] == _at(FIRST + 3, 18)


@pytest.mark.parametrize("bom", ["", "\ufeff"], ids=["no-bom", "bom"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_a_fault_after_tabs_and_multibyte_characters_is_counted_in_characters(
    tmp_path: Path, newline: str, bom: str
) -> None:
    # As lint reports every position: a tab, `é` (2 bytes) and `😀` (4 bytes, 2 UTF-16 units)
    # are one column each; a byte-order mark and CRLF line ends move nothing.
    path = tmp_path / "plugin.toml"
    schema = "input_schema = '''\n{\n\t\"title\": \"é😀\", \"x\": }\n'''\n"
    path.write_bytes((bom + BASE + schema).replace("\n", newline).encode("utf-8"))
    code, report = run_lint_json([path])
    assert code == 1
    [problem] = [d for d in report["files"][0]["diagnostics"] if d["code"] == "NX116"]
    assert problem["message"].endswith(f"expected a JSON value at line {FIRST + 2}, column 22")
    assert problem["range"] == _at(FIRST + 2, 22)


def test_escapes_and_line_ending_backslashes_of_a_basic_string_are_followed(
    tmp_path: Path,
) -> None:
    # `\u0022` is one JSON character written in six; `\` at a line end drops the newline.
    schema = (
        'input_schema = """\n{\\u0022type\\u0022: \\\n    "object",\n'
        '  "properties": {"a": tru}\n}"""\n'
    )
    problem = _nx116(tmp_path, schema)
    assert problem["range"] == _at(FIRST + 3, 23)


def test_a_serde_only_refusal_on_a_later_line_is_marked_where_it_is(tmp_path: Path) -> None:
    problem = _nx116(tmp_path, "input_schema = '''\n{\"type\": \"object\",\n \"x\": 1e400}'''\n")
    assert "number out of range at line 2 column 11" in problem["message"]
    assert problem["range"] == _at(FIRST + 2, 11)


def test_an_unclosed_document_is_marked_at_the_closing_delimiter(tmp_path: Path) -> None:
    problem = _nx116(tmp_path, "input_schema = '''\n{\"type\": \"object\",\n'''\n")
    assert problem["range"] == _at(FIRST + 2, 1)


def test_a_fault_on_the_first_line_keeps_the_whole_value(tmp_path: Path) -> None:
    problem = _nx116(tmp_path, 'input_schema = "{not json"\n')
    assert problem["range"] == {
        "start": {"line": FIRST, "column": 16},
        "end": {"line": FIRST, "column": 27},
    }


@pytest.mark.parametrize(
    ("schema", "words", "column"),
    [
        # Python 3.13's json names the trailing comma itself (at the comma); before, only the
        # missing value after it (at the bracket).
        ("[1,]", *_TRAILING_COMMA),
        ('{"type": "object", "x": }', "expected a JSON value", 41),
        ('{"type" "object"}', "expected `:` after the key", 25),
        ('{"type": "object" "x": 1}', "expected `,` or the closing bracket", 35),
        ('{"type": "object", "x": "abc}', "an unclosed string", 41),
        ('{"type": "object", "x": "a\\q"}', "an invalid escape in a string", 43),
        (
            '{"type": "object", "x": "\\u12"}',
            "an invalid `\\u` escape (four hex digits expected)",
            43,
        ),
        ('{"type": "object"} x', "more text after the JSON value", 36),
        ('{type: "object"}', "expected a key in double quotes", 18),
    ],
    ids=["array", "value", "colon", "comma", "unclosed", "escape", "u-escape", "extra", "quotes"],
)
def test_a_json_fault_is_said_in_the_products_words_at_the_files_position(
    tmp_path: Path, schema: str, words: str, column: int
) -> None:
    """NX116/NX117 say what is wrong in nexo-pkg's words, not Python's `json` module's
    ("Expecting value: line 1 column 1 (char 0)"), and where as lint reports positions: the
    line and column of the character in the file (the diagnostic's own range keeps the whole
    value when the fault is on the value's first line)."""
    problem = _nx116(tmp_path, f"input_schema = '{schema}'\n")
    message = problem["message"]
    assert message.endswith(f"invalid JSON: {words} at line {FIRST}, column {column}"), message
    for python in ("Expecting", "(char ", "Unterminated", "Extra data", "Invalid \\"):
        assert python not in message
    config = tmp_path / "config.toml"
    config.write_text(
        BASE.split("\n[plugin.tools]", maxsplit=1)[0]
        + f"\n\n[plugin.config_schema]\nshape = \"object\"\nschema = '{schema}'\n"
    )
    code, report = run_lint_json([config])
    assert code == 1
    [nx117] = [d for d in report["files"][0]["diagnostics"] if d["code"] == "NX117"]
    line = nx117["range"]["start"]["line"]
    assert nx117["message"].endswith(
        f"invalid JSON: {words} at line {line}, column {column - len('input_schema = ') + 9}"
    ), nx117["message"]


@pytest.mark.parametrize(
    "token",
    [
        "'plain'",
        "''''''",
        "'''\nx\r\ny'''",
        "'''a''''",
        '"a\\tb\\u00e9c\\"\\\\"',
        '"\\U0001F600z"',
        '"""\r\nx \\\r\n   y"""',
        '"""x\\   \n\n  y"""',
        '"""a""""',
    ],
)
def test_string_offsets_reads_the_value_tomllib_reads(token: str) -> None:
    value = tomllib.loads(f"a = {token}")["a"]
    read = string_offsets(token)
    assert read is not None
    content, offsets = read
    assert content == value
    assert len(offsets) == len(value) + 1
    assert offsets == sorted(offsets)
    delimiter = 3 if token[:3] in ("'''", '"""') else 1
    assert offsets[-1] == len(token) - delimiter
