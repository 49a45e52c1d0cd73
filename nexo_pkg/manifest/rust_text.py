"""String semantics of the daemon's Rust code where they differ from Python's.

Rust's ``str::trim`` and ``char::is_whitespace`` use the Unicode ``White_Space`` property.
Python's ``str.strip()`` and ``str.isspace()`` also take the information separators
U+001C-U+001F for whitespace, so a value made of them is blank to Python but not to the daemon.
Every check that mirrors a daemon ``trim()`` goes through :func:`rust_trim` / :func:`is_blank`.
"""

from __future__ import annotations

__all__ = ["is_blank", "rust_env_value", "rust_split_whitespace", "rust_trim"]

RUST_WHITESPACE = (
    "\t\n\v\f\r \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
"""The characters of Unicode ``White_Space`` (what Rust's ``char::is_whitespace`` accepts)."""


_TO_SPACE = str.maketrans(dict.fromkeys(RUST_WHITESPACE, " "))


def rust_split_whitespace(text: str) -> list[str]:
    """The words of ``text`` as Rust's ``str::split_whitespace`` gives them: split at runs of
    ``White_Space`` only, so an information separator stays inside a word (Python's
    ``str.split()`` splits at it, and gives no word at all for ``"\\x1c"``)."""
    return [word for word in text.translate(_TO_SPACE).split(" ") if word]


def rust_trim(text: str) -> str:
    """``text`` without leading and trailing ``White_Space``, as Rust's ``str::trim``."""
    return text.strip(RUST_WHITESPACE)


def is_blank(text: str) -> bool:
    """Whether ``text.trim().is_empty()`` holds in Rust (empty or only ``White_Space``)."""
    return not rust_trim(text)


def rust_env_value(value: str | None) -> str | None:
    """What Rust's ``std::env::var`` gives for an environment value ``value`` as Python holds it
    (``None``: unset): ``None`` too for a value that is not Unicode (``VarError::NotUnicode``),
    which Python keeps as lone surrogates (``surrogateescape`` bytes on POSIX, ill-formed
    UTF-16 on Windows)."""
    if value is None or value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value
