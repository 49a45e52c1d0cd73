"""What the semantic-rule unit tests share: a minimal valid manifest and a fixed locator."""

from __future__ import annotations

from nexo_pkg.core.diagnostics import Position, Span
from nexo_pkg.manifest.rules_context import KeyPath

HERE = Span(Position(1, 1), Position(1, 2))

BASE = """
[plugin]
id = "weather"
version = "0.1.0"
name = "Weather"
description = "Forecasts"
min_nexo_version = ">=0.1.0"
"""


def locate(path: KeyPath, part: str) -> Span:
    """Every finding at one fixed span: these tests check rules, not positions."""
    del path, part
    return HERE
