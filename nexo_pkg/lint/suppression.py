"""``# nexo: ignore[CODE]`` and ``# nexo: ignore`` comments (docs/lint.md): drop the findings
with the codes or rule names listed, or every finding, whose span starts on the comment's line
— or, for a span over several lines (a multi-line string, as ruff reads ``# noqa`` after one),
whose span ends where the comment follows it.
A finding that the file could not be parsed is never silenced (ruff's syntax errors neither).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from nexo_pkg.core.diagnostics import Diagnostic
from nexo_pkg.manifest.core_rules import UNPARSED_CODES

__all__ = ["unsuppressed"]

_DIRECTIVE = re.compile(r"nexo:\s*ignore\[([^\]]*)\]", re.IGNORECASE)
_BLANKET = re.compile(r"nexo:\s*ignore(?![\[\w-])", re.IGNORECASE)
#: In :func:`suppressed`'s answer: the line's comment silences every finding.
EVERYTHING = "*"


def comment_of(line: str) -> str | None:
    """The comment on one TOML line (after a ``#`` outside strings), or ``None``."""
    quote: str | None = None
    index = 0
    while index < len(line):
        char = line[index]
        if quote is None:
            if char == "#":
                return line[index + 1 :]
            if char in "\"'":
                quote = char
        elif char == "\\" and quote == '"':
            index += 1
        elif char == quote:
            quote = None
        index += 1
    return None


def suppressed(line: str) -> frozenset[str]:
    """The codes (upper case) and rule names (lower case) a line's comment silences;
    :data:`EVERYTHING` for a bare ``nexo: ignore``."""
    comment = comment_of(line)
    if comment is None:
        return frozenset()
    if _BLANKET.search(comment):
        return frozenset({EVERYTHING})
    names: set[str] = set()
    for match in _DIRECTIVE.finditer(comment):
        for item in match.group(1).split(","):
            name = item.strip()
            if name:
                names.update({name.upper(), name.lower()})
    return frozenset(names)


def unsuppressed(text: str, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """``diagnostics`` without those a ``# nexo: ignore[…]`` comment silences on their line."""
    if "nexo:" not in text:
        return list(diagnostics)
    lines = text.split("\n")

    def silenced(diagnostic: Diagnostic) -> bool:
        if diagnostic.code in UNPARSED_CODES:
            return False
        start, end = diagnostic.span.start, diagnostic.span.end
        number = start.line - 1
        names = suppressed(lines[number]) if 0 <= number < len(lines) else frozenset()
        if end.line > start.line and end.line <= len(lines):
            # What follows the value on its last line: a comment cannot stand inside it.
            names |= suppressed(lines[end.line - 1][max(end.column - 1, 0) :])
        return not names.isdisjoint({EVERYTHING, diagnostic.code.upper(), diagnostic.name})

    return [diagnostic for diagnostic in diagnostics if not silenced(diagnostic)]
