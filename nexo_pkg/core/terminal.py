"""Make untrusted text safe to show on a terminal, and to write into a TOML file.

Manifest values, asset names from a release document, file names inside an archive and messages
from servers are chosen by whoever published them. Printed raw, an ESC sequence in one of them
can recolour, move the cursor, clear a line or rewrite what is printed around it (a warning, a
signer's name), and a line feed can forge a line of its own. :func:`printable` is the one
escaper: every control character is written as ``\\uXXXX``; on one line (the default) tab, line
feed, the Unicode line separators and the bidirectional overrides are escaped too.
:func:`shown` quotes and caps a value for a one-line message. :func:`toml_string` writes a value
as a TOML basic string whose text is printable in the same sense, and :func:`shell_command` a
command to paste into a shell. :func:`cells` measures how
many terminal columns a printable text takes, for carets drawn under it.
"""

from __future__ import annotations

import re

CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 control characters except tab and line feed, DEL, and C1 control characters: what a
terminal may act on (escape sequences, carriage return, bell) rather than print."""

# Kept by a multi-line text (logs, a plugin's stderr), escaped on one line: tab, line feed, and
# the characters that break or reorder a line without being control characters.
_LINE_BREAKING = frozenset(
    chr(code)
    for code in [0x09, 0x0A, 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
)
_ONE_LINE = {ord(char): f"\\u{ord(char):04x}" for char in _LINE_BREAKING}


def printable(text: object, *, lines: bool = False) -> str:
    """``text`` with every control character shown as an escape (``\\u001b``, ``\\u000a``).

    With ``lines`` the text may span lines: tab and line feed stay as they are. Printable
    characters, non-ASCII letters and emoji included, are left as they are. Never fails.
    """
    escaped = CONTROL_CHARACTERS.sub(lambda match: f"\\u{ord(match.group()):04x}", str(text))
    return escaped if lines else escaped.translate(_ONE_LINE)


def shown(text: str, limit: int = 200) -> str:
    """``text`` quoted for a one-line message: control characters escaped, length capped at
    ``limit`` characters (``...`` marks a cut). Never fails."""
    return "'" + printable(text[:limit]) + ("..." if len(text) > limit else "") + "'"


def _shell_char(char: str) -> str:
    """One character inside a bash ``$'…'`` string: a character :func:`printable` would escape
    (and an undecodable byte of a file name) as the ``\\xHH`` escapes of its UTF-8 bytes,
    which bash reads back as those bytes in any locale."""
    if char in {"\\", "'"}:
        return "\\" + char
    if _needs_shell_escape(char):
        errors = "surrogateescape" if "\udc80" <= char <= "\udcff" else "surrogatepass"
        return "".join(f"\\x{byte:02x}" for byte in char.encode("utf-8", errors))
    return char


def _needs_shell_escape(char: str) -> bool:
    return (
        bool(CONTROL_CHARACTERS.match(char))
        or char in _LINE_BREAKING
        or ("\ud800" <= char <= "\udfff")
    )


def shell_command(*words: str) -> str:
    """``words`` as one command a reader can paste into a shell: each word as ``shlex.quote``
    writes it, except a word holding a control character, a line break, a bidirectional control
    or an undecodable byte, which is written as a bash ``$'…'`` string with those characters as
    ``\\xHH`` escapes (bash and zsh read it back as the same bytes). The text has nothing
    :func:`printable` would escape, so it prints as it is. Never fails."""
    import shlex  # noqa: PLC0415 (only a remedy that names a path needs it)

    return " ".join(
        "$'" + "".join(_shell_char(char) for char in word) + "'"
        if any(_needs_shell_escape(char) for char in word)
        else shlex.quote(word)
        for word in words
    )


def _toml_char(char: str) -> str:
    if char in {'"', "\\"}:
        return "\\" + char
    if char.isprintable() and char not in _LINE_BREAKING:
        return char
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string (``"..."``) whose text is printable: quotes and
    backslashes are escaped, and control characters, line separators and bidirectional controls
    are written as ``\\uXXXX`` escapes, so the string can be shown on a terminal and pasted into
    a file. Never fails."""
    return '"' + "".join(_toml_char(char) for char in value) + '"'


def escaping_encoding(stream: object) -> str | None:
    """The encoding of ``stream`` when it shows what that encoding cannot carry as backslash
    escapes (Python's stderr always does; stdout does on a terminal that is not UTF-8, see
    ``nexo_pkg.cli.main``), else ``None``: a UTF-8 stream, or one that fails instead. What
    :func:`cells` needs to measure text as that stream shows it."""
    encoding = getattr(stream, "encoding", None)
    if not isinstance(encoding, str) or getattr(stream, "errors", None) != "backslashreplace":
        return None
    import codecs  # noqa: PLC0415 (loaded at interpreter start-up)

    try:
        return None if codecs.lookup(encoding).name == "utf-8" else encoding
    except LookupError:
        return None


def cells(text: str, encoding: str | None = None) -> int:
    """How many terminal columns ``text`` (already :func:`printable`) takes: two for a wide or
    full-width character (CJK, emoji), none for a combining mark, a format character or a
    variation selector, one otherwise, as rustc and ruff measure a line to place a caret.

    With ``encoding`` (:func:`escaping_encoding`), text is measured as a stream in that
    encoding shows it: what it cannot encode is a backslash escape (``é`` on an ASCII terminal
    is ``\\xe9``, four cells)."""
    if encoding is not None and not text.isascii():
        text = text.encode(encoding, "backslashreplace").decode(encoding, "replace")
    if text.isascii():
        return len(text)  # every plain report: no Unicode database to load
    import unicodedata  # noqa: PLC0415

    width = 0
    for char in text:
        if unicodedata.category(char) in {"Mn", "Me", "Cf"}:
            continue
        width += 2 if unicodedata.east_asian_width(char) in {"W", "F"} else 1
    return width
