"""Quick fixes for findings whose repair is mechanical (docs/editors.md): the fixes of
:mod:`nexo_pkg.lint.fixes`, so the editor offers what ``nexo plugin lint --fix --unsafe-fixes``
applies (and the removal of a reserved variable, which it does not). Each is computed on the
server's copy of the document at the range the client sends, and only when the text there
still holds the name the diagnostic reported (its ``data``); this module titles them.
"""

from __future__ import annotations

from nexo_pkg.lint.fixes import UNSAFE_REASON, TextFix, fixes_for, rule_of

__all__ = ["TextFix", "fixes_for", "titled"]


#: Why removing a reserved variable is unsafe: there is no new name for the code to read.
REMOVAL_REASON = "the plugin's code must do without it"


def titled(fix: TextFix, code: str, name: str) -> str:
    """The title an editor shows: an unsafe fix says that it is and why."""
    if fix.applicability == "safe":
        return fix.title
    if all(new_text == "" for _, _, new_text in fix.edits):
        return f"{fix.title} (unsafe: {REMOVAL_REASON})"
    reason = UNSAFE_REASON.get(rule_of(code, name), "it changes what the plugin does")
    return f"{fix.title} (unsafe: {reason})"
