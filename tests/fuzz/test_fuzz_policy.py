"""Property: a trust policy either parses or fails as ``policy_invalid`` (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

from nexo_pkg.trust.policy import TrustPolicy, lint_policy_source, parse_policy

from .strategies import SEED_POLICIES, attempt, policies

POLICY_PATH = Path("/nonexistent-fuzz/trusted_keys.toml")


def _check(text: str) -> None:
    policy, error = attempt(lambda: parse_policy(text, path=POLICY_PATH))
    if error is not None:
        assert error.kind == "policy_invalid"
        assert error.exit_code == 2
        assert error.message.startswith(str(POLICY_PATH))
    else:
        assert isinstance(policy, TrustPolicy)
        assert policy.default in {"ignore", "warn", "require"}
        for author in policy.authors:
            assert author.owner
    result = lint_policy_source(text, path=str(POLICY_PATH))
    for diagnostic in result.diagnostics:
        assert diagnostic.span.start.line >= 1
        assert diagnostic.span.start.column >= 1


def test_seed_policies_parse() -> None:
    for text in SEED_POLICIES:
        assert isinstance(parse_policy(text, path=POLICY_PATH), TrustPolicy)


@given(policies())
def test_policy_parse_never_raises_unexpectedly(text: str) -> None:
    _check(text)


@pytest.mark.slow
@settings(max_examples=10_000)
@given(policies())
def test_policy_parse_never_raises_unexpectedly_at_scale(text: str) -> None:
    _check(text)
