"""The plugin id rule ``^[a-z][a-z0-9_]{0,31}$``, with the reason an id breaks it."""

from __future__ import annotations

import re

SLUG_PATTERN = r"^[a-z][a-z0-9_]{0,31}$"
SLUG = re.compile(SLUG_PATTERN)
MAX_LENGTH = 32


def _id_char(char: str) -> bool:
    return char == "_" or "0" <= char <= "9" or "a" <= char <= "z"


def slug_problem(value: str) -> str | None:
    """Why ``value`` is not a valid id (``None`` when it is), in the linter's words."""
    if SLUG.fullmatch(value):
        return None
    if not value:
        return "it is empty"
    if len(value) > MAX_LENGTH:
        return f"it is {len(value)} characters long, the limit is {MAX_LENGTH}"
    first = value[0]
    if first.isdigit():
        return f"it starts with the digit {first!r}; it must start with a lowercase letter"
    if first == "_":
        return "it starts with `_`; it must start with a lowercase letter"
    suggestion = value.lower().replace("-", "_")
    hint = f"; use {suggestion!r}" if SLUG.fullmatch(suggestion) else ""
    if any(char.isupper() for char in value):
        return f"it contains uppercase letters{hint}"
    # ASCII ranges: `isdigit` also holds for superscripts and other scripts' digits, which
    # the rule refuses.
    bad = next(char for char in value if not _id_char(char))
    return f"it contains {bad!r}; only lowercase letters, digits and `_` are allowed{hint}"
