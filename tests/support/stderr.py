"""Reading a CLI run's stderr past its notes.

Notes (``note: …`` lines: which configuration directory is in use, …) are for the person at the
terminal and dropped by ``--quiet``; a test that means "the error is one line" or "nothing but
the error" looks at the other lines.
"""

from __future__ import annotations

NOTE_PREFIX = "note: "


def without_notes(stderr: str) -> str:
    """``stderr`` without its ``note:`` lines."""
    return "".join(
        line for line in stderr.splitlines(keepends=True) if not line.startswith(NOTE_PREFIX)
    )
