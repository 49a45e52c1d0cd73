"""The engine behind identity patterns (``identity_regexp``, ``source_ref``): RE2's dialect,
run by google-re2 where it is installed and by :mod:`nexo_pkg.trust.re2_dialect` (pure
Python, same verdicts) where it is not — musllinux (Alpine) has no google-re2 wheel.

Both compile in RE2's dialect with linear-time matching; a pattern either refuses raises
:class:`ValueError` with RE2's message.
"""

from __future__ import annotations

import functools
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
