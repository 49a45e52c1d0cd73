"""Property: the lint engine turns any text into diagnostics and never raises."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from nexo_pkg.lint.engine import lint_source

from .strategies import SEED_MANIFESTS, manifests


def _check(text: str) -> None:
    result = lint_source(text, path="fuzz/nexo-plugin.toml")
    line_count = text.count("\n") + text.count("\r") + 2
    for diagnostic in result.diagnostics:
        assert diagnostic.code
        assert diagnostic.name
        assert diagnostic.severity in {"error", "warning"}
        assert diagnostic.message
        start, end = diagnostic.span.start, diagnostic.span.end
        assert start.line >= 1
        assert start.column >= 1
        assert end >= start
        assert start.line <= line_count
    assert result.success == (not any(d.severity == "error" for d in result.diagnostics))


def test_seed_manifests_lint_clean() -> None:
    # The mutations start from valid documents; if the seeds broke, the fuzzing would only
    # ever exercise the error paths.
    assert len(SEED_MANIFESTS) >= 5
    for text in SEED_MANIFESTS:
        result = lint_source(text)
        assert result.success, [d.message for d in result.diagnostics]


@given(manifests())
def test_lint_source_never_raises(text: str) -> None:
    _check(text)


@pytest.mark.slow
@settings(max_examples=10_000)
@given(manifests())
def test_lint_source_never_raises_at_scale(text: str) -> None:
    _check(text)
