"""Shared plumbing of the semantic rules: the run context and type-tolerant accessors.

The rules run on plain parsed TOML that may hold the wrong type anywhere (the schema reports
those); every accessor here answers ``None``/empty for a wrong type instead of raising, so a
rule simply skips what it cannot read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal

from nexo_pkg.core.diagnostics import Diagnostic, Span
from nexo_pkg.core.toml_spans import format_key_path
from nexo_pkg.manifest.options import LintOptions
from nexo_pkg.manifest.rules_catalog import SEMANTIC_RULES

__all__ = [
    "Context",
    "KeyPath",
    "Locate",
    "as_int",
    "as_list",
    "as_str",
    "as_table",
    "format_key_path",
    "strings",
    "tables",
]

KeyPath = tuple[str | int, ...]
Target = Literal["key", "value"]
Locate = Callable[[KeyPath, Target], Span]


def as_table(value: Any) -> Mapping[str, Any] | None:
    """``value`` if it is a table, else None."""
    return value if isinstance(value, Mapping) else None


def as_list(value: Any) -> list[Any] | None:
    """``value`` if it is an array, else None."""
    return value if isinstance(value, list) else None


def as_str(value: Any) -> str | None:
    """``value`` if it is a string, else None."""
    return str(value) if isinstance(value, str) else None


def as_int(value: Any) -> int | None:
    """``value`` if it is an integer (booleans excluded), else None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return int(value)


def strings(value: Any) -> Iterator[tuple[int, str]]:
    """(index, item) for every string item of ``value`` when it is an array."""
    for index, item in enumerate(as_list(value) or ()):
        if isinstance(item, str):
            yield index, str(item)


def tables(value: Any) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """(index, item) for every table item of ``value`` when it is an array."""
    for index, item in enumerate(as_list(value) or ()):
        if isinstance(item, Mapping):
            yield index, item


class Context:
    """One run of the semantic rules over one document: input, options and findings."""

    def __init__(self, data: Mapping[str, Any], locate: Locate, options: LintOptions) -> None:
        self.data = data
        self.locate = locate
        self.options = options
        self.found: list[Diagnostic] = []
        self.plugin: Mapping[str, Any] = as_table(data.get("plugin")) or {}
        plugin_id = as_str(self.plugin.get("id"))
        self.plugin_id: str | None = plugin_id or None

    def section(self, *keys: str) -> Mapping[str, Any]:
        """The table at ``plugin.<keys>``, or an empty mapping when absent or not a table."""
        current: Mapping[str, Any] = self.plugin
        for key in keys:
            table = as_table(current.get(key))
            if table is None:
                return {}
            current = table
        return current

    def report(
        self,
        code: str,
        path: KeyPath,
        message: str,
        help_text: str,
        target: Target = "value",
    ) -> None:
        """Record a finding of rule ``code`` at ``path`` (its key or its value)."""
        self.found.append(
            SEMANTIC_RULES[code].diagnostic(
                message, format_key_path(path), self.locate(path, target), help_text
            )
        )
