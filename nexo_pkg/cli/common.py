"""Helpers shared by every command: error rendering, JSON output, colour decisions."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from nexo_pkg.errors import NexoError

T = TypeVar("T")


def stderr_supports_colour() -> bool:
    """Colour only on a TTY and never when ``NO_COLOR`` is set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    return sys.stderr.isatty()


def emit_json(document: Any) -> None:
    """Print exactly one JSON document on stdout."""
    sys.stdout.write(json.dumps(document, indent=2, sort_keys=False, ensure_ascii=False))
    sys.stdout.write("\n")
    sys.stdout.flush()


def say(message: str) -> None:
    """Human output goes to stderr so stdout stays clean for ``--json`` and pipes."""
    sys.stderr.write(message + "\n")


def exit_with(code: int) -> NoReturn:
    raise SystemExit(code)


def fail(error: NexoError, *, json_output: bool = False) -> NoReturn:
    """Render ``error`` (one line on stderr, or the JSON failure document) and exit."""
    if json_output:
        emit_json(error.to_json())
    say(f"error: {error.message}")
    raise SystemExit(error.exit_code)


def guarded(action: Callable[[], T], *, json_output: bool = False) -> T:
    """Run ``action``; a :class:`NexoError` becomes one clear line and its exit code."""
    try:
        return action()
    except NexoError as error:
        fail(error, json_output=json_output)
