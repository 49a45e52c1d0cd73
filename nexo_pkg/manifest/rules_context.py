"""Shared plumbing of the semantic rules: the run context and type-tolerant accessors.

The rules run on plain parsed TOML that may hold the wrong type anywhere (the schema reports
those); every accessor here answers ``None``/empty for a wrong type instead of raising, so a
rule simply skips what it cannot read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal

from nexo_pkg.core.diagnostics import Diagnostic, Rule, Span
from nexo_pkg.core.toml_text import format_key_path
from nexo_pkg.core.version import VersionError, parse_version
from nexo_pkg.manifest.options import LintOptions
from nexo_pkg.manifest.rules_catalog import SEMANTIC_RULES

if TYPE_CHECKING:
    from nexo_pkg.core.toml_spans import SpanMap

__all__ = [
    "Context",
    "Findings",
    "KeyPath",
    "Locate",
    "as_int",
    "as_list",
    "as_str",
    "as_table",
    "format_key_path",
    "semver_problem",
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
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def semver_problem(text: str) -> str | None:
    """Why ``text`` is not a SemVer 2.0 version (as ``semver::Version`` refuses it), or ``None``."""
    try:
        parse_version(text)
    except VersionError as error:
        return str(error)
    return None


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


class Findings:
    """The findings of one file: diagnostics of ``rules`` (by code), located through
    ``locate``."""

    def __init__(self, rules: Mapping[str, Rule], locate: Locate) -> None:
        self.rules = rules
        self.locate = locate
        self.found: list[Diagnostic] = []

    def add(
        self,
        rule: Rule | str,
        path: KeyPath,
        message: str,
        help_text: str = "",
        part: Target = "value",
        *,
        span: Span | None = None,
    ) -> None:
        """Record a finding of ``rule`` (or its code) at ``path`` (its key or its value, or
        ``span``: a place inside that value)."""
        chosen = self.rules[rule] if isinstance(rule, str) else rule
        where = span if span is not None else self.locate(path, part)
        self.found.append(chosen.diagnostic(message, format_key_path(path), where, help_text))

    def at(self, code: str, span: Span, message: str, help_text: str = "") -> None:
        """Record a finding of rule ``code`` at ``span``, a place no key path names."""
        self.found.append(self.rules[code].diagnostic(message, "", span, help_text))


class Context(Findings):
    """One run of the semantic rules over one document: input, options and findings."""

    def __init__(
        self,
        data: Mapping[str, Any],
        locate: Locate,
        options: LintOptions,
        source: Callable[[], SpanMap] | None = None,
    ) -> None:
        super().__init__(SEMANTIC_RULES, locate)
        # The source text and its spans, for a finding about a place inside a value.
        self.source = source
        self.data = data
        self.options = options
        self.plugin: Mapping[str, Any] = as_table(data.get("plugin")) or {}
        self.plugin_id: str | None = as_str(self.plugin.get("id")) or None

    def section(self, *keys: str) -> Mapping[str, Any]:
        """The table at ``plugin.<keys>``, or an empty mapping when absent or not a table."""
        current: Mapping[str, Any] = self.plugin
        for key in keys:
            table = as_table(current.get(key))
            if table is None:
                return {}
            current = table
        return current
