"""Properties: the lint engine turns any text into diagnostics and never raises; the manifest
model raises only its one error, and only for what lint refuses."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from nexo_pkg.lint.engine import lint_source
from nexo_pkg.manifest.document import MAX_MANIFEST_BYTES
from nexo_pkg.manifest.model import ManifestModelError, manifest_from_text

from .strategies import SEED_MANIFESTS, attempt, manifests


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


def _check_model(text: str) -> None:
    """The model raises only its one error, in one line, and only for a manifest that lint
    refuses too: what lints clean (pack, install) always has a model."""
    model, error = attempt(lambda: manifest_from_text(text, max_bytes=MAX_MANIFEST_BYTES))
    if model is not None:
        assert isinstance(model.id, str)
        assert model.version
        return
    assert isinstance(error, ManifestModelError)
    assert error.kind == "manifest_invalid"
    assert error.message
    assert "\n" not in error.message
    assert not lint_source(text, path="fuzz/nexo-plugin.toml").success


@given(manifests())
def test_the_manifest_model_refuses_only_what_lint_refuses(text: str) -> None:
    _check_model(text)


@pytest.mark.slow
@settings(max_examples=10_000)
@given(manifests())
def test_the_manifest_model_refuses_only_what_lint_refuses_at_scale(text: str) -> None:
    _check_model(text)
