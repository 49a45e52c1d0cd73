"""docs/architecture.md's "How to add a new source" is the recipe a new kind of source is
built from: two files, one line in the router, a trust binding. It names every method the
``Source`` protocol asks of the kind's source class, every function the route asks of the
kind's module (:class:`~nexo_pkg.sources.route.KindModule`) and every field of its
:class:`~nexo_pkg.sources.route.Kind` line, so that a source written from it answers every
question a command asks (``tests/repo/test_source_route.py`` checks the kinds that exist)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from nexo_pkg.sources.base import Source
from nexo_pkg.sources.route import Kind, KindModule

DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
HEADING = "## How to add a new source"


def _recipe(text: str) -> str:
    start = text.index(HEADING)
    end = text.find("\n## ", start + len(HEADING))
    return text[start : None if end < 0 else end]


def _public(protocol: type) -> set[str]:
    return {
        name
        for name, value in vars(protocol).items()
        if not name.startswith("_") and callable(value)
    }


def _unnamed(recipe: str, names: set[str]) -> list[str]:
    """The names of ``names`` the recipe never writes as code (`` `name` ``, `` `name(…)` ``,
    or ``name=`` inside a code span)."""
    spans = " ".join(re.findall(r"`([^`]+)`", recipe))
    return sorted(name for name in names if not re.search(rf"(?<![\w.]){name}\b", spans))


def test_the_recipe_names_every_question_a_source_answers() -> None:
    recipe = _recipe(DOC.read_text(encoding="utf-8"))
    assert _unnamed(recipe, _public(Source)) == []


def test_the_recipe_names_every_function_the_route_asks_of_a_kind_module() -> None:
    recipe = _recipe(DOC.read_text(encoding="utf-8"))
    assert _unnamed(recipe, _public(KindModule)) == []


def test_the_recipe_names_every_field_of_a_kind_line() -> None:
    recipe = _recipe(DOC.read_text(encoding="utf-8"))
    fields = {field.name for field in dataclasses.fields(Kind)} - {"type", "load"}
    assert _unnamed(recipe, fields) == []


def test_the_check_sees_a_name_left_out() -> None:
    recipe = "## How to add a new source\n\n`resolve()` and `fetch(candidate)`, `Kind(x, label=f)`"
    assert _unnamed(recipe, {"resolve", "fetch", "newest", "label", "scheme"}) == [
        "newest",
        "scheme",
    ]
