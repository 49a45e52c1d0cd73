"""Quick fixes for findings whose repair is mechanical (docs/editors.md): rename a tool outside
the plugin's namespace, rename or remove a reserved ``NEXO_…`` entrypoint variable.

The renames are those of :mod:`nexo_pkg.lint.fixes`, so the editor offers exactly what
``nexo plugin lint --fix --unsafe-fixes`` applies; the removal of a variable is offered here
only. Every one of them is unsafe (the plugin's code uses the name too) and its title says so.
Edits are computed on the server's copy of the document at the range the client sends, and
only when the text there still holds the name the diagnostic reported (its ``data``): a range
that moved on, or that a client counts in other units, gets no fix.
"""

from __future__ import annotations

import re

from nexo_pkg.lint.fixes import UNSAFE_REASON, TextFix, parses_after, rule_of, subject_at
from nexo_pkg.lint.fixes import fixes_for as lint_fixes_for
from nexo_pkg.lsp.toml_context import Entry, ScannedDocument, scan

__all__ = ["TextFix", "fixes_for", "titled"]


def fixes_for(
    text: str, start: int, end: int, *, code: str, name: str, help_text: str, subject: str
) -> list[TextFix]:
    """The quick fixes for one finding at ``text[start:end]``; empty when none applies, the
    text there is not ``subject`` any more, or a fix would leave TOML that does not parse."""
    found = lint_fixes_for(
        text, start, end, code=code, name=name, help_text=help_text, subject=subject
    )
    if (
        subject
        and rule_of(code, name) == "reserved-entrypoint-env"
        and subject_at(text, start, end, "reserved-entrypoint-env") == subject
    ):
        document = scan(text)
        entry = _entry_with_key_at(document, start, end)
        if entry is not None:
            remove_start, remove_end = _removal(document, entry)
            removal = TextFix(f"Remove `{subject}`", ((remove_start, remove_end, ""),), "unsafe")
            if parses_after(text, removal.edits):
                found.append(removal)
    return found


def titled(fix: TextFix, code: str, name: str) -> str:
    """The title an editor shows: an unsafe fix says that it is and why."""
    if fix.applicability == "safe":
        return fix.title
    reason = UNSAFE_REASON.get(rule_of(code, name), "it changes what the plugin does")
    return f"{fix.title} (unsafe: {reason})"


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
