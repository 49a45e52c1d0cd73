"""The run's output settings and its two note streams, shared by every floor.

``--quiet`` drops notes (:func:`say`); warnings (:func:`warn`) are always shown. The command
line sets :data:`OUTPUT` once from its global options; a room below it that must tell the
person at the terminal something (which configuration directory is in use) says it here.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass
class OutputSettings:
    """How much to say and whether to paint it; set once by the global options."""

    quiet: bool = False
    verbose: bool = False
    color: str = "auto"


OUTPUT = OutputSettings()


def say(message: str) -> None:
    """A note for the person at the terminal: stderr, dropped by ``--quiet``."""
    if not OUTPUT.quiet:
        sys.stderr.write(message + "\n")


def warn(message: str) -> None:
    """A warning: stderr, shown even with ``--quiet``."""
    text = message if message.lower().startswith("warning") else f"warning: {message}"
    sys.stderr.write(text + "\n")
