"""Every report format names the same place for each finding, and that place is the faulty
text, whatever moves columns in the file: a byte-order mark, CRLF line ends, tabs, characters
outside the Basic Multilingual Plane before the fault on its line, a last line without a line
end. Columns count Unicode code points (SARIF's ``unicodeCodePoints``); the mark is not a
column. ``--fix --unsafe-fixes`` changes exactly the named text and keeps every other byte."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import clean_env, nexo

MANIFEST = """\
[plugin]
id = "demo"
version = "0.1.0"
name = "Demo"
description = "A plugin for tests."
min_nexo_version = ">=0.1.0"

[plugin.entrypoint]
command = "./bin/demo"
env = { "\U0001f600X" = "1", NEXO_A = "1" }

[plugin.extends]
tools = ["\U0001f600\U0001f600", "search"]
"""

VARIANTS = {
    "lf": MANIFEST,
    "bom": "\ufeff" + MANIFEST,
    "crlf": MANIFEST.replace("\n", "\r\n"),
    "bom-crlf": "\ufeff" + MANIFEST.replace("\n", "\r\n"),
    "tabs": MANIFEST.replace(" = ", "\t=\t"),
    "no-final-newline": MANIFEST.rstrip("\n"),
    "crlf-no-final-newline": MANIFEST.replace("\n", "\r\n").rstrip("\r\n"),
}

# (code, the text the finding's range covers)
EXPECTED = [
    ("NX106", "NEXO_A"),
    ("NX110", '"\U0001f600\U0001f600"'),
    ("NX113", '"\U0001f600\U0001f600"'),
    ("NX113", '"search"'),
]

Place = tuple[str, int, int, int, int]


def _lint(path: Path, fmt: str) -> tuple[int, str]:
    result = nexo("plugin", "lint", "--format", fmt, path.name, cwd=path.parent, env=clean_env())
    return result.code, result.stdout


def _json_places(report: str) -> list[Place]:
    [entry] = json.loads(report)["files"]
    return [
        (
            d["code"],
            d["range"]["start"]["line"],
            d["range"]["start"]["column"],
            d["range"]["end"]["line"],
            d["range"]["end"]["column"],
        )
        for d in entry["diagnostics"]
    ]


def _github_places(report: str) -> list[Place]:
    found = re.findall(
        r"^::error file=[^,]*,line=(\d+),col=(\d+),endLine=(\d+),endColumn=(\d+),title=(NX\d+) ",
        report,
        re.MULTILINE,
    )
    return [(code, int(a), int(b), int(c), int(d)) for a, b, c, d, code in found]


def _sarif_places(report: str) -> list[Place]:
    [run] = json.loads(report)["runs"]
    assert run["columnKind"] == "unicodeCodePoints"
    places = []
    for result in run["results"]:
        region = result["locations"][0]["physicalLocation"]["region"]
        places.append(
            (
                result["ruleId"],
                region["startLine"],
                region["startColumn"],
                region["endLine"],
                region["endColumn"],
            )
        )
    return places


def _text_starts(report: str) -> list[tuple[str, int, int]]:
    found = re.findall(r"^nexo-plugin\.toml:(\d+):(\d+): (NX\d+) ", report, re.MULTILINE)
    return [(code, int(line), int(column)) for line, column, code in found]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_format_names_the_faulty_text_in_code_points(tmp_path: Path, variant: str) -> None:
    text = VARIANTS[variant]
    path = tmp_path / "nexo-plugin.toml"
    path.write_bytes(text.encode("utf-8"))
    reports = {fmt: _lint(path, fmt) for fmt in ("json", "github", "sarif", "text")}
    assert {code for code, _ in reports.values()} == {1}

    places = _json_places(reports["json"][1])
    lines = re.split(r"\r\n|\n", text.removeprefix("\ufeff"))
    covered = [
        (code, lines[line - 1][column - 1 : end_column - 1])
        for code, line, column, end_line, end_column in places
        if line == end_line
    ]
    assert covered == EXPECTED
    assert sorted(_github_places(reports["github"][1])) == sorted(places)
    assert sorted(_sarif_places(reports["sarif"][1])) == sorted(places)
    assert sorted(_text_starts(reports["text"][1])) == sorted(
        (code, line, column) for code, line, column, _, _ in places
    )


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_fix_changes_the_named_text_and_every_other_byte_stays(
    tmp_path: Path, variant: str
) -> None:
    original = VARIANTS[variant].encode("utf-8")
    path = tmp_path / "nexo-plugin.toml"
    path.write_bytes(original)
    result = nexo(
        "plugin", "lint", "--fix", "--unsafe-fixes", path.name, cwd=tmp_path, env=clean_env()
    )
    assert result.code == 1  # the emoji tool has no fix
    expected = original.replace(b"NEXO_A", b"DEMO_A").replace(b'"search"', b'"demo_search"')
    assert path.read_bytes() == expected
    # Through stdin the fixed source goes to stdout, byte for byte the same.
    piped = subprocess.run(
        [sys.executable, "-m", "nexo_pkg", "plugin", "lint", "--fix", "--unsafe-fixes", "-",
         "--stdin-filename", "nexo-plugin.toml"],
        input=original, capture_output=True, cwd=tmp_path, env=clean_env(), timeout=120,
        check=False,
    )  # fmt: skip
    assert piped.returncode == 1
    assert piped.stdout == expected


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ('[plugin]\rid = "demo"\n', 9),  # after a header
        ('[plugin]\nid = "demo"\rname = "Demo"\n', 12),  # after a value
        ("# a comment\r[plugin]\n", 12),  # in a comment
        ('[plugin]\nname = "De\rmo"\n', 11),  # in a string
        ('[plugin]\nid = "demo"\r', 12),  # the last character
    ],
    ids=["header", "value", "comment", "string", "last"],
)
def test_a_lone_carriage_return_is_named_where_it_is(
    tmp_path: Path, text: str, column: int
) -> None:
    """TOML ends lines in LF or CRLF; the daemon refuses a CR alone. The line looks whole on
    screen, so the finding names the character, at it, whatever the parser expected there."""
    path = tmp_path / "nexo-plugin.toml"
    path.write_bytes(text.encode("utf-8"))
    code, report = _lint(path, "json")
    assert code == 1
    [entry] = json.loads(report)["files"]
    [finding] = entry["diagnostics"]
    line = text.count("\n", 0, text.index("\r")) + 1
    assert (finding["code"], finding["message"]) == (
        "NX001",
        "TOML syntax error: carriage return (CR) without a line feed: TOML lines end in LF or CRLF",
    )
    assert finding["range"]["start"] == {"line": line, "column": column}
    code, annotations = _lint(path, "github")
    assert code == 1
    assert f"line={line},col={column}," in annotations


@pytest.mark.parametrize(
    "text",
    [
        '[plugin]\nid = "demo"\nname = ',  # a value missing after `= `
        '[plugin]\nid = "demo"\nname =\t',
        "[plugin]\nname",  # `=` missing after the key
        "[plugin]\nname ",
        "[plugin ",  # a header not closed
        '[plugin]\nentrypoint = { command = "./x" ',  # an inline table not closed
        "[plugin]\nx = [1, ",  # an array not closed
        "[plugin]\nx = [1,\n  ",
    ],
    ids=["value", "value-tab", "equals", "equals-blank", "header", "inline", "array", "array-2"],
)
def test_a_syntax_error_at_the_end_is_placed_alike_with_or_without_a_final_newline(
    tmp_path: Path, text: str
) -> None:
    """Saving without a final line end (Notepad, an unsaved editor buffer) moves no finding:
    the place is the one the parser names for the same document with its last line ended."""
    places = []
    for name, ending in (("ended", "\n"), ("not-ended", "")):
        directory = tmp_path / name
        directory.mkdir()
        path = directory / "nexo-plugin.toml"
        path.write_bytes((text + ending).encode("utf-8"))
        exit_code, report = _lint(path, "json")
        assert exit_code == 1
        places.append(_json_places(report))
    assert places[1] == places[0]
    [(code, line, column, end_line, end_column)] = places[0]
    assert code == "NX001"
    assert (end_line, end_column) == (line, column)
