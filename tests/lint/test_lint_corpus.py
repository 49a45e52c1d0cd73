"""The manifest corpus: every ``tests/fixtures/manifests/{valid,warning,invalid}/*.toml`` is linted
through the API and through the CLI, and must give exactly the diagnostics listed in the
``*.expected.json`` next to it (code, line, column, and key path when listed). ``warning/``
holds manifests the daemon accepts that draw warnings only.

Adding a case is adding two files; nothing here needs to change.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.lint_cli import run_lint_json

from nexo_pkg.core.diagnostics import Diagnostic
from nexo_pkg.lint.engine import lint_file

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "manifests"
CASES = sorted(CORPUS.glob("*/*.toml"))
COMPARED = ("code", "line", "column", "key_path")


def expected_for(case: Path) -> list[dict[str, Any]]:
    document = json.loads(case.with_name(case.stem + ".expected.json").read_text("utf-8"))
    assert isinstance(document, list)
    return document


def as_rows(
    diagnostics: list[dict[str, Any]], expected: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Project actual diagnostics onto the fields the expectation lists."""
    rows = []
    for index, actual in enumerate(diagnostics):
        keys = expected[index].keys() if index < len(expected) else COMPARED
        rows.append({key: actual[key] for key in keys if key in COMPARED})
    return rows


def flat(diagnostic: Diagnostic) -> dict[str, Any]:
    return {
        "code": diagnostic.code,
        "line": diagnostic.span.start.line,
        "column": diagnostic.span.start.column,
        "key_path": diagnostic.key_path,
        "severity": diagnostic.severity,
    }


def case_id(case: Path) -> str:
    return f"{case.parent.name}/{case.name}"


def test_corpus_is_not_empty_and_every_case_has_expectations() -> None:
    assert len([c for c in CASES if c.parent.name == "valid"]) >= 3
    assert len([c for c in CASES if c.parent.name == "invalid"]) >= 60
    for case in CASES:
        assert case.with_name(case.stem + ".expected.json").is_file(), case


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_api(case: Path) -> None:
    expected = expected_for(case)
    result = lint_file(case)
    actual = [flat(d) for d in result.diagnostics]
    assert as_rows(actual, expected) == [
        {key: value for key, value in row.items() if key in COMPARED} for row in expected
    ]
    if case.parent.name == "valid":
        assert result.success
    elif case.parent.name == "warning":
        # Warnings only: the daemon loads the plugin, the linter still has something to say.
        assert result.success
        assert result.warnings
    else:
        assert not result.success


@pytest.fixture(scope="module")
def cli_report() -> dict[str, Any]:
    """One CLI run over the whole corpus (``--format json``), keyed by path."""
    code, report = run_lint_json(CASES)
    assert code == 1
    return {entry["path"]: entry for entry in report["files"]}


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_cli(case: Path, cli_report: dict[str, Any]) -> None:
    expected = expected_for(case)
    entry = cli_report[str(case)]
    actual = [
        {
            "code": d["code"],
            "line": d["range"]["start"]["line"],
            "column": d["range"]["start"]["column"],
            "key_path": d["key_path"],
        }
        for d in entry["diagnostics"]
    ]
    assert as_rows(actual, expected) == [
        {key: value for key, value in row.items() if key in COMPARED} for row in expected
    ]
