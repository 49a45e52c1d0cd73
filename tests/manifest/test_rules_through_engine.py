"""The semantic rules through the real lint engine: positions, options and corpus coverage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nexo_pkg.lint.engine import lint_source
from nexo_pkg.manifest.options import LintOptions
from nexo_pkg.manifest.rules import SEMANTIC_RULES

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "manifests"

# Rules that need a lint option or environment the corpus runner does not pass; covered below
# (NX105) or through the CLI (NX149) instead.
NEEDS_OPTIONS = {"NX105", "NX149"}

MANIFEST = """[plugin]
id = "weather"
version = "0.1.0"
name = "Weather"
description = "Forecasts"
min_nexo_version = "{requirement}"
"""


def test_every_semantic_rule_has_an_invalid_fixture() -> None:
    covered: set[str] = set()
    for expected in CORPUS.glob("*/rule_*.expected.json"):
        covered.update(row["code"] for row in json.loads(expected.read_text("utf-8")))
    assert set(SEMANTIC_RULES) - NEEDS_OPTIONS <= covered


def test_rule_fixtures_in_the_valid_corpus_are_clean() -> None:
    cases = sorted((CORPUS / "valid").glob("rule_*.toml"))
    assert cases
    for case in cases:
        result = lint_source(case.read_text("utf-8"), path=str(case))
        assert result.diagnostics == (), case


@pytest.mark.parametrize(
    ("requirement", "daemon", "codes"),
    [
        (">=0.5", "0.4.2", ["NX105"]),
        (">=0.4", "0.4.2", []),
        (">=0.4.2", "0.4.2-rc.1", []),
        ("^0.3", "0.4.0", ["NX105"]),
    ],
)
def test_min_nexo_version_mismatch_points_at_the_value(
    requirement: str, daemon: str, codes: list[str]
) -> None:
    text = MANIFEST.format(requirement=requirement)
    result = lint_source(text, options=LintOptions(nexo_version=daemon))
    assert [d.code for d in result.diagnostics] == codes
    for diagnostic in result.diagnostics:
        assert diagnostic.key_path == "plugin.min_nexo_version"
        assert (diagnostic.span.start.line, diagnostic.span.start.column) == (6, 20)
        assert (diagnostic.span.end.line, diagnostic.span.end.column) == (6, 22 + len(requirement))
        assert not result.success


def test_without_nexo_version_there_is_no_mismatch() -> None:
    """Only a warning: no daemon release nexo-pkg knows satisfies the requirement."""
    (diagnostic,) = lint_source(MANIFEST.format(requirement=">=99")).diagnostics
    assert (diagnostic.code, diagnostic.severity) == ("NX123", "warning")
    assert lint_source(MANIFEST.format(requirement=">=0.2")).diagnostics == ()


def test_span_points_at_the_offending_array_item() -> None:
    text = MANIFEST.format(requirement=">=0.1") + (
        '[plugin.extends]\ntools = ["weather_now", "forecast"]\n'
    )
    (diagnostic,) = lint_source(text).diagnostics
    assert diagnostic.code == "NX113"
    assert diagnostic.key_path == "plugin.extends.tools[1]"
    assert (diagnostic.span.start.line, diagnostic.span.start.column) == (8, 25)
    assert (diagnostic.span.end.line, diagnostic.span.end.column) == (8, 35)
    assert diagnostic.help == "rename it to `weather_forecast`"


def test_host_network_option_reaches_the_rule() -> None:
    text = (
        MANIFEST.format(requirement=">=0.1")
        + '[plugin.sandbox]\nenabled = true\nnetwork = "host"\n'
    )
    refused = lint_source(text, options=LintOptions(host_net_allowed=False))
    assert [d.code for d in refused.diagnostics] == ["NX141"]
    allowed = lint_source(text, options=LintOptions(host_net_allowed=True))
    assert allowed.diagnostics == ()


def test_legacy_v1_gets_exactly_one_diagnostic() -> None:
    text = '[plugin]\nid = "w"\nversion = "1"\n\n[transport]\nkind = "stdio"\ncommand = "./w"\n'
    result = lint_source(text)
    assert [(d.code, d.span.start.line, d.span.start.column) for d in result.diagnostics] == [
        ("NX190", 5, 1)
    ]
