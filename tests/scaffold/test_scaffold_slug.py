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
        ("a\u0661", "contains '\u0661'"),
        ("a\u00b2b", "contains '\u00b2'"),
    ],
)
def test_invalid_ids_say_why(value: str, reason: str) -> None:
    problem = slug_problem(value)
    assert problem is not None
    assert reason in problem


def test_dash_suggests_underscore() -> None:
    assert "'my_plugin'" in (slug_problem("my-plugin") or "")


def test_the_suggestion_is_itself_a_valid_id() -> None:
    assert "'bad_id'" in (slug_problem("Bad-Id") or "")
    assert "use" not in (slug_problem("my.plugin") or "")


@pytest.mark.parametrize("value", ["demo\n", "demo\r\n", "de\nmo"])
def test_a_line_break_is_never_part_of_a_valid_id(value: str) -> None:
    # `$` also matches before a final newline; the whole value must be the id.
    assert slug_problem(value) is not None
