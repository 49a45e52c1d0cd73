"""Fixes for findings whose repair is mechanical, graded as ruff grades its fixes (docs/lint.md,
"Fixes"): rename a tool outside the plugin's namespace (``NX113``), rename a reserved
``NEXO_…`` entrypoint variable (``NX106``).

Both are *unsafe*: the plugin's code answers to the tool name and reads the variable, so a
rename in the manifest alone makes it fail at start. ``nexo plugin lint --fix`` applies only
safe fixes; ``--unsafe-fixes`` adds these. The language server offers every fix of
:func:`fixes_for` as a quick fix that says so, the removal of a reserved variable too, which
``lint --fix`` never applies (it applies a finding's preferred fix only).

A fix is computed on the text it will edit and applies only where that text still holds the
name the finding reported (its ``subject``): a range that moved on (an edited document, a
client counting columns in bytes) gets no fix, never an edit of whatever lies there. The
edited document must parse as TOML, or the fix is not offered.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

from nexo_pkg.core.diagnostics import (
    Applicability,
    Diagnostic,
    Edit,
    FileResult,
    Fix,
    Span,
)

# The span scanner is loaded by a fix only: a file without a fixable finding (every manifest
# an install accepts) never needs it.

__all__ = [
    "FIXABLE",
    "TextFix",
    "apply_fixes",
    "fixes_for",
    "parses_after",
    "subject_at",
    "with_fixes",
]

_RENAME_TOOL = re.compile(r"rename it to `([a-z][a-z0-9_]*)`")
_RENAME_VARIABLE = re.compile(r"e\.g\. `([A-Za-z_][A-Za-z0-9_]*)`")
_NAMES_BY_CODE = {"NX113": "tool-namespace-violation", "NX106": "reserved-entrypoint-env"}
_WHAT = {"tool-namespace-violation": "value", "reserved-entrypoint-env": "key"}
#: Rule names whose findings have a fix.
FIXABLE = frozenset(_NAMES_BY_CODE.values())
#: Why each fix is unsafe, as the fix's title and the text report say.
UNSAFE_REASON = {
    "tool-namespace-violation": "the plugin's code must answer to the new name too",
    "reserved-entrypoint-env": "the plugin's code must read the new name too",
}


@dataclass(frozen=True)
class TextFix:
    """One fix on a text: replace each ``(start, end)`` range (offsets) with the new text."""

    title: str
    edits: tuple[tuple[int, int, str], ...]
    applicability: Applicability
    preferred: bool = False


def rule_of(code: str, name: str) -> str:
    """The rule name of a finding (its code alone is enough)."""
    return name or _NAMES_BY_CODE.get(code, "")


def _decoded(literal: str, what: Literal["key", "value"]) -> str | None:
    """The string a TOML string literal (``what`` = ``value``) or a single key (``key``, bare
    or quoted) spells, or ``None`` when ``literal`` is not exactly one such thing."""
    if not literal or "\n" in literal or "\r" in literal:
        return None
    line = f"{literal} = 1" if what == "key" else f"v = {literal}"
    try:
        parsed = tomllib.loads(line)
    except ValueError:
        return None
    if len(parsed) != 1:
        return None
    key, value = next(iter(parsed.items()))
    if what == "key":
        return key if value == 1 else None  # a dotted key parses to a table, not 1
    return value if isinstance(value, str) else None


def subject_at(text: str, start: int, end: int, rule: str) -> str | None:
    """The name the text ``text[start:end]`` holds for a finding of ``rule``: the tool name a
    string literal spells, or the variable a key names; ``None`` when it holds neither."""
    what = _WHAT.get(rule)
    if what is None or not 0 <= start < end <= len(text):
        return None
    return _decoded(text[start:end], "key" if what == "key" else "value")


def parses_after(text: str, edits: Iterable[tuple[int, int, str]]) -> bool:
    """Whether ``text`` with ``edits`` (non-overlapping offset ranges) is still TOML."""
    for start, end, new_text in sorted(edits, reverse=True):
        text = text[:start] + new_text + text[end:]
    try:
        tomllib.loads(text)
    except ValueError:
        return False
    return True


def fixes_for(
    text: str, start: int, end: int, *, code: str, name: str, help_text: str, subject: str
) -> list[TextFix]:
    """The fixes of one finding at ``text[start:end]``: empty unless that text still holds
    ``subject`` (the name the finding reported) and the fixed text parses."""
    rule = rule_of(code, name)
    if rule not in FIXABLE or not subject or subject_at(text, start, end, rule) != subject:
        return []
    found: list[TextFix] = []
    if rule == "tool-namespace-violation":
        match = _RENAME_TOOL.search(help_text)
        if match is not None:
            quote = "'" if text[start] == "'" else '"'
            new_name = match.group(1)
            found.append(
                TextFix(
                    f"Rename tool to `{new_name}`",
                    ((start, end, f"{quote}{new_name}{quote}"),),
                    "unsafe",
                    preferred=True,
                )
            )
    else:
        match = _RENAME_VARIABLE.search(help_text)
        if match is not None:
            new_name = match.group(1)
            found.append(
                TextFix(
                    f"Rename `{subject}` to `{new_name}`",
                    ((start, end, new_name),),
                    "unsafe",
                    preferred=True,
                )
            )
        removal = _removal(text, start, end)
        if removal is not None:
            found.append(TextFix(f"Remove `{subject}`", ((*removal, ""),), "unsafe"))
    return [fix for fix in found if parses_after(text, fix.edits)]


def _removal(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The text range that removes the entry whose key ends at ``text[start:end]`` cleanly
    (with its comma in an inline table, else with its line); ``None`` when no entry has it."""
    from nexo_pkg.core.toml_spans import scan_tolerant  # noqa: PLC0415

    document = scan_tolerant(text)
    entry = next(
        (
            entry
            for entry in document.entries
            if (entry.parts[-1].start, entry.parts[-1].end) == (start, end)
            and entry.value_end is not None
        ),
        None,
    )
    if entry is None or entry.value_end is None:
        return None
    key_start, value_end = entry.parts[0].start, entry.value_end
    if any(table.start < key_start < table.end for table in document.inline_tables):
        after = re.compile(r"[ \t]*,[ \t]*").match(text, value_end)
        if after:
            return key_start, after.end()
        before = re.search(r",[ \t]*$", text[:key_start])
        if before:
            # Last member: take the comma before it, keep the space before the brace.
            return before.start(), value_end
        return key_start, value_end
    line_start = text.rfind("\n", 0, key_start) + 1
    line_end = text.find("\n", value_end)
    return line_start, len(text) if line_end < 0 else line_end + 1


def _preferred(
    diagnostic: Diagnostic, text: str, start: int, end: int, subject: str
) -> TextFix | None:
    """The fix ``lint --fix`` applies for ``diagnostic``: its preferred one, if any."""
    found = fixes_for(
        text, start, end, code=diagnostic.code, name=diagnostic.name,
        help_text=diagnostic.help, subject=subject,
    )  # fmt: skip
    return next((fix for fix in found if fix.preferred), None)


def with_fixes(result: FileResult) -> FileResult:
    """``result`` with the :class:`Fix` of every finding that has one (computed on its
    ``source``, so each fix applies to the file as linted)."""
    if not any(rule_of(d.code, d.name) in FIXABLE for d in result.diagnostics):
        return result
    from nexo_pkg.core.toml_spans import SpanMap  # noqa: PLC0415

    text = result.source
    offsets = SpanMap(text)
    fixed: list[Diagnostic] = []
    for diagnostic in result.diagnostics:
        rule = rule_of(diagnostic.code, diagnostic.name)
        start, end = (offsets.offset(diagnostic.span.start), offsets.offset(diagnostic.span.end))
        subject = subject_at(text, start, end, rule) if rule in FIXABLE else None
        fix = None if subject is None else _preferred(diagnostic, text, start, end, subject)
        if fix is None or subject is None:
            fixed.append(diagnostic)
            continue
        edits = tuple(
            Edit(Span(offsets.position(first), offsets.position(last)), new_text)
            for first, last, new_text in fix.edits
        )
        fixed.append(replace(diagnostic, fix=Fix(fix.applicability, fix.title, edits, subject)))
    return replace(result, diagnostics=tuple(fixed))


def apply_fixes(text: str, diagnostics: Iterable[Diagnostic], *, unsafe: bool) -> tuple[str, int]:
    """Apply the fix of every finding whose fix is safe (and unsafe ones with ``unsafe``);
    return the text and how many were applied.

    The same fixes the language server offers, so ``lint --fix`` and the editor agree. Only
    the characters of each fix change: comments, spacing and key order stay as they were.
    Overlapping fixes are applied once (the first in file order).
    """
    from nexo_pkg.core.toml_spans import SpanMap  # noqa: PLC0415

    offsets = SpanMap(text)
    edits: list[tuple[int, int, str]] = []
    for diagnostic in diagnostics:
        fix = diagnostic.fix
        if fix is None or (fix.applicability == "unsafe" and not unsafe):
            continue
        edits.extend(
            (offsets.offset(edit.span.start), offsets.offset(edit.span.end), edit.content)
            for edit in fix.edits
        )
    applied = 0
    last_start = len(text) + 1
    for start, end, new_text in sorted(edits, reverse=True):
        if end > last_start:
            continue  # overlaps an edit already applied
        text = text[:start] + new_text + text[end:]
        last_start = start
        applied += 1
    return text, applied
