"""Make untrusted text safe to show on one line of a terminal.

Manifest values, asset names from a release document, file names inside an archive and messages
from servers are chosen by whoever published them. Printed raw, an ESC sequence in one of them
can recolour, move the cursor, clear a line or rewrite what is printed around it (a warning, a
signer's name), and a line feed can forge a line of its own. :func:`printable` is
:func:`nexo_pkg.core.diagnostics.escape_control_characters` for text shown on one line: tab and line
feed are escaped too, and so are the Unicode line separators and bidirectional overrides.
"""

from __future__ import annotations

from nexo_pkg.core.diagnostics import escape_control_characters

__all__ = ["printable"]

# What escape_control_characters leaves alone because multi-line logs need it, plus the
# characters that break or reorder a line without being control characters.
_ONE_LINE = {
    code: f"\\u{code:04x}"
    for code in [0x09, 0x0A, 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
}


def printable(text: object) -> str:
    """``text`` with every control character shown as an escape (``\\u001b``, ``\\u000a``).

    Printable characters, non-ASCII letters and emoji included, are left as they are.
    """
    return escape_control_characters(str(text)).translate(_ONE_LINE)
