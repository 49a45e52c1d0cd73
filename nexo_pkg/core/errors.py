"""The one exception tree of nexo-pkg.

Every failure a user can cause or meet is a :class:`NexoError` carrying a ``kind`` (the
machine-readable name used in ``--json`` output) and a one-line message that says what went
wrong and what to do. The CLI catches ``NexoError`` only; anything else is a bug and is allowed
to surface as a traceback.

Kinds are listed, with their exit codes, in :class:`nexo_pkg.core.kinds.ErrorKind`; a test fails
when code raises a kind that is not there.
"""

from __future__ import annotations

from typing import Any

from nexo_pkg.core.kinds import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, ErrorKind, exit_code_of

__all__ = ["EXIT_FAILURE", "EXIT_OK", "EXIT_USAGE", "ConfigError", "NexoError", "UsageError"]


class NexoError(Exception):
    """A failure with a stable ``kind`` and a user-facing message.

    ``exit_code`` is 1 when the command ran and the answer is "no", 2 for usage and
    configuration errors. ``kind`` is an :class:`~nexo_pkg.core.kinds.ErrorKind` or its string
    and is stored as the plain string; given a kind and no exit code, the error takes the
    kind's exit code (the class's own for a kind ``ErrorKind`` does not list). ``details`` holds
    extra fields for the ``--json`` failure document.
    """

    kind: str = "error"
    exit_code: int = EXIT_FAILURE
    #: The message is several lines written by nexo-pkg (a list, one item a line): each line
    #: is escaped on its own instead of the line feeds being shown as ``\u000a``.
    multiline: bool = False

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind | str | None = None,
        exit_code: int | None = None,
        details: dict[str, Any] | None = None,
        multiline: bool | None = None,
    ) -> None:
        super().__init__(_without_credentials(message))
        self.message = message
        if multiline is not None:
            self.multiline = multiline
        if kind is not None:
            self.kind = str(kind)
        if exit_code is not None:
            self.exit_code = exit_code
        elif kind is not None and (listed := exit_code_of(kind)) is not None:
            self.exit_code = listed
        self.details: dict[str, Any] = dict(details or {})

    @property
    def message(self) -> str:
        """The user-facing message: a URL's user and password in it are masked, however it
        was written or added to (:func:`~nexo_pkg.core.credentials.without_credentials`)."""
        return self._message

    @message.setter
    def message(self, value: str) -> None:
        self._message = _without_credentials(value)

    def to_json(self) -> dict[str, Any]:
        """The ``{"ok": false, "kind", "error", ...}`` failure document (credentials in a
        detail's text masked as in the message)."""
        document: dict[str, Any] = {"ok": False, "kind": self.kind, "error": self.message}
        for key, value in self.details.items():
            document.setdefault(key, _masked(value))
        return document


class UsageError(NexoError):
    """Bad flags or arguments, or input that cannot be read (exit 2)."""

    kind = "usage"
    exit_code = EXIT_USAGE


class ConfigError(NexoError):
    """A configuration file (such as the trust policy) is invalid (exit 2)."""

    kind = "config"
    exit_code = EXIT_USAGE


def _without_credentials(text: str) -> str:
    # No URL user without an `@`: the masking module is loaded only for a text that has one,
    # so a command whose errors carry none (`lint` on its hot path) never loads it.
    if "@" not in text:
        return text
    from nexo_pkg.core.credentials import without_credentials  # noqa: PLC0415

    return without_credentials(text)


def _masked(value: Any) -> Any:
    from nexo_pkg.core.credentials import masked  # noqa: PLC0415 (a failure document only)

    return masked(value)


def exception_line(exc: BaseException) -> str:
    """What ``exc`` (raised by a library) says, on one line: a pydantic validation error
    (sigstore-python's models), even wrapped, as its fields and their problems, without its
    multi-line layout and links; anything else with its lines joined by ``; ``, without the
    Python form of a certificate that cryptography's X.509 verifier appends
    (``(encountered processing <Certificate(…)>)``)."""
    seen: BaseException | None = exc
    while seen is not None:
        errors = getattr(seen, "errors", None)
        if type(seen).__name__ == "ValidationError" and callable(errors):
            try:
                problems = [
                    f"{'.'.join(map(str, error['loc'])) or 'the document'}: {error['msg']}"
                    for error in errors()
                ]
            except (TypeError, KeyError):
                break
            if problems:
                return "; ".join(problems)
        seen = seen.__cause__ or seen.__context__
    lines = (_without_certificate_repr(line.strip()) for line in str(exc).splitlines())
    return _without_python_advice(
        "; ".join(
            line for line in lines if line and not line.startswith("For further information visit")
        )
    )


_DIGITS_LIMIT = "Exceeds the limit ("
_DIGITS_ADVICE = "; use sys.set_int_max_str_digits() to increase the limit"


def _without_python_advice(line: str) -> str:
    """Python's refusal of an integer with more digits than it converts (in a JSON document,
    say), in words of the document: the number and the limit, not the Python call that would
    raise the limit."""
    head, found, rest = line.partition(_DIGITS_LIMIT)
    if not found:
        return line
    limit, _, rest = rest.partition(" digits) for integer string conversion")
    digits = rest.removeprefix(": value has ").partition(" digits")[0]
    tail = rest.partition(_DIGITS_ADVICE)[2]
    if not limit.isdigit():
        return line
    shown = f"a number of {digits} digits" if digits.isdigit() else "a number"
    return f"{head}{shown}, more than the {limit} a number may have{tail}"


_CERTIFICATE_REPR = " (encountered processing <"


def _without_certificate_repr(line: str) -> str:
    head, found, tail = line.partition(_CERTIFICATE_REPR)
    return head if found and tail.endswith(">)") else line
