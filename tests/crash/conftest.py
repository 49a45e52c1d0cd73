"""Crash tests: the 50-point runs (``@pytest.mark.slow``) only run when ``-m slow`` asks."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _slow_only_on_request(request: pytest.FixtureRequest) -> None:
    """Skip ``slow`` tests unless the marker expression selects them (``pytest -m slow``)."""
    if request.node.get_closest_marker("slow") and "slow" not in str(
        request.config.getoption("markexpr") or ""
    ):
        pytest.skip("slow test: run with -m slow")
