"""Quick fixes for findings whose repair is mechanical (docs/editors.md): rename a tool outside
the plugin's namespace, rename or remove a reserved ``NEXO_…`` entrypoint variable.

The suggested names come from the finding's ``help`` text, so the editor offers exactly what
``nexo plugin lint`` prints. Edits are computed on the text the client sends back with the
request; when the text at the finding's range no longer looks like what was reported (the
document moved on), no fix is offered.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from nexo_pkg.core.diagnostics import Diagnostic
from nexo_pkg.lsp.toml_context import Entry, ScannedDocument, scan

__all__ = ["Fix", "apply_fixes", "fixes_for"]

_RENAME_TOOL = re.compile(r"rename it to `([a-z][a-z0-9_]*)`")
_RENAME_VARIABLE = re.compile(r"e\.g\. `([A-Za-z_][A-Za-z0-9_]*)`")
_NAMES_BY_CODE = {"NX113": "tool-namespace-violation", "NX106": "reserved-entrypoint-env"}
#: Rule names whose findings ``nexo plugin lint --fix`` repairs (the editor's quick fixes).
FIXABLE = frozenset(_NAMES_BY_CODE.values())


@dataclass(frozen=True)
class Fix:
    """One quick fix: replace each ``(start, end)`` text range with the new text."""

    title: str
    edits: tuple[tuple[int, int, str], ...]
    preferred: bool = False


def fixes_for(
    text: str, start: int, end: int, *, code: str, name: str, help_text: str
) -> list[Fix]:
    """The quick fixes for one finding at ``text[start:end]``; empty when none applies."""
    rule = name or _NAMES_BY_CODE.get(code, "")
    if rule == "tool-namespace-violation":
        return _rename_tool(text, help_text, start, end)
    if rule == "reserved-entrypoint-env":
        return _reserved_variable(text, help_text, start, end)
    return []


def _rename_tool(text: str, help_text: str, start: int, end: int) -> list[Fix]:
    match = _RENAME_TOOL.search(help_text)
    current = text[start:end]
    if match is None or len(current) < 2 or current[0] not in "\"'" or current[-1] != current[0]:
        return []
    new_name = match.group(1)
    quote = current[0]
    return [
        Fix(
            f"Rename tool to `{new_name}`",
            ((start, end, f"{quote}{new_name}{quote}"),),
            preferred=True,
        )
    ]


def _entry_with_key_at(document: ScannedDocument, start: int, end: int) -> Entry | None:
    for entry in document.entries:
        last = entry.parts[-1]
        if last.start == start and last.end == end and entry.value_end is not None:
            return entry
    return None


def _removal(document: ScannedDocument, entry: Entry) -> tuple[int, int]:
    """The text range that removes ``entry`` cleanly (with its comma or its line)."""
    text = document.text
    key_start = entry.parts[0].start
    value_end = entry.value_end if entry.value_end is not None else entry.parts[-1].end
    inline = any(table.start < key_start < table.end for table in document.inline_tables)
    if inline:
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


def _reserved_variable(text: str, help_text: str, start: int, end: int) -> list[Fix]:
    current = text[start:end].strip("\"'")
    if not current.startswith("NEXO_"):
        return []
    found: list[Fix] = []
    match = _RENAME_VARIABLE.search(help_text)
    if match is not None:
        new_name = match.group(1)
        found.append(
            Fix(f"Rename `{current}` to `{new_name}`", ((start, end, new_name),), preferred=True)
        )
    document = scan(text)
    entry = _entry_with_key_at(document, start, end)
    if entry is not None:
        remove_start, remove_end = _removal(document, entry)
        found.append(Fix(f"Remove `{current}`", ((remove_start, remove_end, ""),)))
    return found


def apply_fixes(text: str, diagnostics: Iterable[Diagnostic]) -> tuple[str, int]:
    """Apply the preferred quick fix of every fixable finding; return the text and the count.

    The same fixes the language server offers, so ``lint --fix`` and the editor agree. Only
    the characters of each fix change: comments, spacing and key order stay as they were.
    Overlapping fixes are applied once (the first in file order).
    """
    starts = [0, *(index + 1 for index, char in enumerate(text) if char == "\n")]

    def offset(line: int, column: int) -> int:
        index = min(max(line - 1, 0), len(starts) - 1)
        return min(starts[index] + column - 1, len(text))

    edits: list[tuple[int, int, str]] = []
    for diagnostic in diagnostics:
        if (diagnostic.name or _NAMES_BY_CODE.get(diagnostic.code, "")) not in FIXABLE:
            continue
        first, last = diagnostic.span.start, diagnostic.span.end
        preferred = [
            fix
            for fix in fixes_for(
                text,
                offset(first.line, first.column),
                offset(last.line, last.column),
                code=diagnostic.code,
                name=diagnostic.name,
                help_text=diagnostic.help,
            )
            if fix.preferred
        ]
        if preferred:
            edits.extend(preferred[0].edits)
    applied = 0
    last_start = len(text) + 1
    for start, end, new_text in sorted(edits, reverse=True):
        if end > last_start:
            continue  # overlaps an edit already applied
        text = text[:start] + new_text + text[end:]
        last_start = start
        applied += 1
    return text, applied
