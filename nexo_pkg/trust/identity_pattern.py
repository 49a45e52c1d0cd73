"""The engine behind identity patterns (``identity_regexp``, ``source_ref``): RE2's dialect,
run by google-re2 where it is installed and by :mod:`nexo_pkg.trust.re2_dialect` (pure
Python, same verdicts) where it is not — musllinux (Alpine) has no google-re2 wheel.

Both compile in RE2's dialect with linear-time matching; a pattern either refuses raises
:class:`ValueError` with RE2's message.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Protocol


class IdentityPattern(Protocol):
    def fullmatch(self, text: str) -> object: ...


@functools.cache
def _re2() -> tuple[Any, Any] | None:
    """The RE2 module and its options, imported on first use (a policy without patterns, and
    every unsigned install without a policy, never pay for it); ``None`` where google-re2 is
    not installed."""
    try:
        import re2  # noqa: PLC0415 - see the docstring
    except ImportError:
        return None
    options = re2.Options()
    # Compile errors are reported to the user as policy findings; RE2's own logging would
    # print them a second time on stderr.
    options.log_errors = False
    return re2, options


def engine() -> str:
    """Which engine runs identity patterns here: ``google-re2`` or ``pure-python``."""
    return "pure-python" if _re2() is None else "google-re2"


@functools.cache
def compile_identity_pattern(pattern: str) -> IdentityPattern:
    """Compile ``pattern`` in RE2's dialect (that of cosign and of the reference installer):
    linear-time matching whatever the pattern, so a hostile policy cannot hang the installer.
    Raises :class:`ValueError` with RE2's message when it does not compile (look-arounds and
    back-references do not)."""
    loaded = _re2()
    if loaded is None:
        # Imported on first use, as google-re2 is: `lint` of a manifest never pays for it.
        from nexo_pkg.trust.re2_dialect import compile_re2  # noqa: PLC0415

        return compile_re2(pattern)
    re2, options = loaded
    try:
        compiled: IdentityPattern = re2.compile(pattern, options=options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", errors="replace")
        raise ValueError(str(detail)) from exc
    except UnicodeEncodeError as exc:  # a lone surrogate (from a command-line argument)
        raise ValueError("invalid UTF-8") from exc
    return compiled


def full_match(pattern: str, text: str) -> bool:
    """True when the RE2 ``pattern`` matches the whole of ``text``."""
    found = compile_identity_pattern(pattern).fullmatch(text)
    return found is not None and found is not False


# A counted repetition as regex-syntax 0.8 parses one (`{n}`, `{n,}`, `{n,m}`), white space
# around the numbers allowed (a reading at least as lenient as the crate's).
_COUNTED = re.compile(r"\{\s*[0-9]+\s*(?:,\s*(?:[0-9]+\s*)?)?\}")


def rust_regex_problem(pattern: str) -> str | None:
    """Why the reference installer's Rust ``regex`` (1.12, regex-syntax 0.8 in the daemon's
    Cargo.lock) refuses ``pattern``, which RE2 compiled, or ``None``.

    The reference compiles every ``identity_regexp`` when it loads ``trusted_keys.toml``
    (``crates/ext-installer/src/trusted_keys.rs`` ``TrustedKeysConfig::load``,
    ``regex::Regex::new``); one it refuses fails the whole load. RE2 takes some that the
    crate refuses: ``\\Q…\\E`` literals, ``\\C``, octal escapes (``\\012``), and a ``{``
    that starts no counted repetition, which RE2 reads as a literal brace and the crate
    refuses (``a{,5}``, ``a{x``). Only these certain refusals are named."""
    index, length, in_class = 0, len(pattern), False
    while index < length:
        char = pattern[index]
        if char == "\\":
            escaped = pattern[index + 1 : index + 2]
            if escaped in ("Q", "E", "C"):
                return f"the reference installer's Rust regex has no `\\{escaped}` escape"
            if escaped.isascii() and escaped.isdigit():
                return (
                    f"the reference installer's Rust regex has no octal or back-reference "
                    f"escape `\\{escaped}`"
                )
            close = pattern.find("}", index + 2)
            if escaped in ("p", "P", "x") and pattern.startswith("{", index + 2) and close != -1:
                index = close + 1  # `\\p{Greek}`, `\\x{263a}`: the brace is the escape's
            else:
                index += 2
            continue
        if in_class:
            if char == "[" and pattern.startswith("[:", index):
                end = pattern.find(":]", index + 2)
                index = end + 2 if end != -1 else index + 1
                continue
            in_class = char != "]"
        elif char == "[":
            in_class = True
            index += 1
            if pattern.startswith("^", index):
                index += 1
            if pattern.startswith("]", index):
                index += 1  # a leading `]` is a literal
            continue
        elif char == "{" and not _COUNTED.match(pattern, index):
            return (
                f"`{{` at character {index + 1} starts no counted repetition (`{{n}}`, `{{n,}}`, "
                "`{n,m}`): RE2 reads it as a literal brace, the reference installer's Rust "
                "regex refuses it; write `\\{`"
            )
        index += 1
    return None
