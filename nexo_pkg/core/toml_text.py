"""What nexo-pkg reads and writes of TOML text without the span scanner of
:mod:`nexo_pkg.core.toml_spans` (which builds on this): where the daemon's parser limits stand
in a text before it is parsed (:func:`long_dotted_key`, :func:`nested_value_offset`: lenient,
linear scans), a key path written as TOML writes it (:func:`format_key_path`) and the TOML
name of a value's type (:func:`toml_type_name`). Parsing and linting a manifest load the span
scanner only when there is a finding to place.
"""

from __future__ import annotations

import datetime
import re

from nexo_pkg.core.terminal import toml_string

KeyPath = tuple[str | int, ...]
BARE_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
"""The characters of a bare TOML key."""


def _key_segment(key: str) -> str:
    """A key as TOML would write it in a dotted path: bare when possible, else quoted."""
    if key and all(char in BARE_KEY_CHARS for char in key):
        return key
    return toml_string(key)


def format_key_path(path: KeyPath) -> str:
    """Render ``("plugin", "extends", "tools", 1)`` as ``plugin.extends.tools[1]``.

    Keys that are not bare TOML keys are quoted (``plugin.ui.fields."a.b"``). Never fails.
    """
    parts: list[str] = []
    for item in path:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + _key_segment(item))
    return "".join(parts)


_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (bool, "a boolean"),  # before int: a bool is an int to isinstance
    (int, "an integer"),
    (float, "a float"),
    (str, "a string"),
    (list, "an array"),
    (dict, "a table"),
    (datetime.datetime, "a date-time"),  # before date, its base class
    (datetime.date, "a date"),
    (datetime.time, "a time"),
)


def toml_type_name(value: object) -> str:
    """The TOML word for the type of a parsed value, with its article."""
    return next(
        (name for kind, name in _TYPE_NAMES if isinstance(value, kind)), type(value).__name__
    )


def nested_value_offset(text: str, levels: int) -> int | None:
    """Offset of the ``[``/``{`` that opens the ``levels``-th nested value, if any.

    Lenient (strings and comments are skipped as if well formed). Table headers (a ``[`` at
    nesting 0 that does not follow ``=``) do not count, as for the daemon.
    """
    depth = 0
    index = 0
    length = len(text)
    opens_value = False  # the bracket at ``index`` follows ``=`` on its line
    while (found := _NESTING_TOKEN.search(text, index)) is not None:
        char, index = found.group(), found.start()
        if char in "\"'":
            index = _skip_string(text, index)
        elif char == "#":
            newline = text.find("\n", index)
            index = length if newline == -1 else newline
        elif char[0] == "=":
            opens_value = True
            index = found.end()  # at the bracket the lookahead saw
            continue
        elif char in "[{":
            if depth > 0 or opens_value:
                depth += 1
                if depth >= levels:
                    return index
            index += 1
        else:  # "]" or "}"
            depth = max(depth - 1, 0)
            index += 1
        opens_value = False
    return None


# What the nesting scan stops at: a string or comment to skip, a bracket, and ``=`` followed
# on its line (whitespace between) by a bracket that opens a value.
_NESTING_TOKEN = re.compile(r"[\"'#\[\]{}]|=[^\S\n]*(?=[\[{])")


def _skip_string(text: str, index: int) -> int:
    """The offset just past the string that starts at ``index`` (any of TOML's four kinds);
    ``len(text)`` for one that never closes. In basic strings a quote after an odd run of
    backslashes is escaped."""
    char = text[index]
    triple = text.startswith(char * 3, index)
    quote = char * 3 if triple else char
    start = index + len(quote)
    length = len(text)
    search = start
    while True:
        found = text.find(quote, search)
        if found == -1:
            return length
        if char == '"':
            backslashes = found - start - len(text[start:found].rstrip("\\"))
            if backslashes % 2:
                search = found + 1
                continue
        index = found + len(quote)
        break
    while triple and index < length and text[index] == char:
        index += 1  # up to two quotes may close a multi-line string
    return index


def _key_parts(text: str, index: int) -> tuple[int, int]:
    """How many dot-separated parts the key starting at ``index`` has, and where it ends."""
    parts = 0
    length = len(text)
    while True:
        while index < length and text[index] in " \t":
            index += 1
        if index < length and text[index] in "\"'":
            index = _skip_string(text, index)
        else:
            while index < length and text[index] in BARE_KEY_CHARS:
                index += 1
        parts += 1
        while index < length and text[index] in " \t":
            index += 1
        if index >= length or text[index] != ".":
            return parts, index
        index += 1


def long_dotted_key(text: str, parts: int) -> tuple[int, int] | None:
    """Offset and part count of the first key with ``parts`` parts or more.

    A lenient scan (it runs before the parser, which would take quadratic time on such a
    key): keys start a line outside any array or inline table, follow ``[``/``[[`` of a
    table header, and follow ``{`` or ``,`` inside an inline table; strings and comments are
    skipped, so dots inside them and in values never count.
    """
    # A line holding at least ``parts - 1`` dots (anchored at line starts, possessive: linear).
    many_dots = re.compile(rf"(?m)^(?:[^\n.]*+\.){{{parts - 1}}}")
    if text.count(".") < parts - 1 or not many_dots.search(text):
        return None  # a key stays on its line: no line has the dots such a key needs
    stack: list[str] = []  # the open "[" (array) and "{" (inline table) of the current value
    index, length = 0, len(text)
    expect_key = True
    while index < length:
        char = text[index]
        if char in " \t\r":
            index += 1
            continue
        if char == "\n":
            expect_key = not stack
            index += 1
            continue
        if char == "#":
            newline = text.find("\n", index)
            index = length if newline == -1 else newline
            continue
        if expect_key and not stack and char == "[":
            index += 2 if text.startswith("[[", index) else 1
            continue  # a table header: its key follows
        if expect_key and char != "}":
            start = index
            found, index = _key_parts(text, index)
            if found >= parts:
                return start, found
            expect_key = False
            continue
        if char in "\"'":
            index = _skip_string(text, index)
            continue
        if char in "[{":
            stack.append(char)
            expect_key = char == "{"
        elif char in "]}":
            if stack:
                stack.pop()
        elif char == ",":
            expect_key = bool(stack) and stack[-1] == "{"
        index += 1
    return None
