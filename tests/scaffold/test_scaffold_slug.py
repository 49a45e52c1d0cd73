"""The id rule of `new`, with the reason for each kind of bad id."""

from __future__ import annotations

import pytest

from nexo_pkg.scaffold.slug import slug_problem


@pytest.mark.parametrize("value", ["a", "demo", "my_plugin_2", "a" * 32])
def test_valid_ids(value: str) -> None:
    assert slug_problem(value) is None


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("", "empty"),
        ("a" * 33, "33 characters long"),
        ("2fast", "starts with the digit '2'"),
        ("_x", "starts with `_`"),
        ("MyPlugin", "uppercase"),
        ("my-plugin", "contains '-'"),
        ("my.plugin", "contains '.'"),
        ("café", "contains 'é'"),
    ],
)
def test_invalid_ids_say_why(value: str, reason: str) -> None:
    problem = slug_problem(value)
    assert problem is not None
    assert reason in problem


def test_dash_suggests_underscore() -> None:
    assert "'my_plugin'" in (slug_problem("my-plugin") or "")
