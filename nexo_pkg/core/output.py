"""The run's output settings, its two note streams and the one renderer of a failure.

``--quiet`` drops notes (:func:`say`); warnings (:func:`warn`) and errors (:func:`say_error`,
:func:`report_error`) are always shown. The command line sets :data:`OUTPUT` once from its
global options; a room below it that must tell the person at the terminal something (which
configuration directory is in use) says it here.
:func:`report_error` is how every command reports a :class:`~nexo_pkg.core.errors.NexoError`:
one ``error: …`` line on stderr and, with ``--json``, the failure document on stdout
(:func:`emit_json`).
"""

from __future__ import annotations

import json
import sys
from _thread import get_ident
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.terminal import printable

if TYPE_CHECKING:
    from collections.abc import Callable


@dataclass
class OutputSettings:
    """How much to say and whether to paint it; set once by the global options."""

    quiet: bool = False
    verbose: bool = False
    color: str = "auto"
    # The notes and warnings said once per run (:func:`say_once`).
    said: set[str] = field(default_factory=set)
    # Whether this run began writing its one stdout document (:func:`write_document`): a
    # signal that comes later must not add a second one after it.
    document_begun: bool = False
    # Set by the command line: holds back the signals that would cut the document being
    # written and returns what lets them in again (raising the one that came meanwhile).
    hold_signals: Callable[[], Callable[[], None]] | None = None


OUTPUT = OutputSettings()

# The threads whose notes and warnings go through a writer of their run rather than straight
# to stderr (by thread id): the worker threads of :func:`nexo_pkg.core.threads.run_bounded`,
# whose lines come out in the order of its items. A writer takes the line and, for
# :func:`say_once`, the message said once a run (``None`` for any other line).
WRITERS: dict[int, Callable[[str, str | None], None]] = {}


def say(message: str) -> None:
    """A note for the person at the terminal: stderr, dropped by ``--quiet``."""
    if not OUTPUT.quiet:
        _line(_shown(message) + "\n")


def warn(message: str) -> None:
    """A warning: stderr, shown even with ``--quiet``."""
    _line(_shown(_warning(message)) + "\n")


def _warning(message: str) -> str:
    return message if message.lower().startswith("warning") else f"warning: {message}"


def _line(line: str, once: str | None = None) -> None:
    """Write one note or warning line: through this thread's writer when it has one."""
    writer = WRITERS.get(get_ident())
    if writer is None:
        write_line(line, once)
    else:
        writer(line, once)


def write_line(line: str, once: str | None = None) -> None:
    """Write ``line`` to stderr, unless it says ``once`` (a :func:`say_once` message) and
    this run said that already."""
    if once is not None:
        if once in OUTPUT.said:
            return
        OUTPUT.said.add(once)
    sys.stderr.write(line)


def say_error(message: str, kind: str) -> None:
    """The ``error: MESSAGE [KIND]`` line of a failure that is not raised (a failed
    ``--check``): stderr, shown even with ``--quiet`` (``message`` comes escaped)."""
    sys.stderr.write(f"error: {_shown(message)} [{kind}]\n")


def _shown(line: str) -> str:
    """``line`` with the credentials of any URL in it masked: a path given as a URL
    (``--dest https://user:TOKEN@host/…``) is echoed in notes too, never its token."""
    if "@" not in line:
        return line
    from nexo_pkg.core.credentials import without_credentials  # noqa: PLC0415

    return without_credentials(line)


def say_once(message: str, *, warning: bool = False) -> None:
    """:func:`say` (or :func:`warn` with ``warning``) ``message`` unless this run said it
    (whether it did is decided where the line is written: a worker's line waits its turn)."""
    if warning:
        _line(_shown(_warning(message)) + "\n", message)
    elif not OUTPUT.quiet:
        _line(_shown(message) + "\n", message)


def say_policy_warnings(error: NexoError) -> None:
    """The trust policy's warnings that came with ``error`` (a refusal its entries decided:
    an entry an earlier one hides may be why), each once a run."""
    for warning in error.details.get("policy_warnings") or ():
        if isinstance(warning, str):
            say_once(printable(warning), warning=True)


def emit_json(document: Any) -> None:
    """Print exactly one JSON document on stdout (``ensure_ascii``: no raw control bytes)."""
    write_document(sys.stdout, json.dumps(document, indent=2, sort_keys=False) + "\n")


# Characters of a document written at a time: at most 4 bytes each in UTF-8, so a piece
# always fits a standard stream's 8 KiB buffer.
_PIECE = 2048


def write_document(stream: Any, text: str) -> None:
    """Write the run's one document (a ``--json`` answer, a lint report) whole: a signal
    that comes while it is written is answered once it is out (the command line then adds
    no second document, only its line on stderr)."""
    release = OUTPUT.hold_signals() if OUTPUT.hold_signals is not None else None
    # Only once the signals are held: one that came before stopped the command with nothing
    # written, and the command line then prints its ``interrupted`` document.
    OUTPUT.document_begun = True
    try:
        # In pieces that fit the stream's buffer, each flushed: a write larger than the
        # buffer goes to the file at once, and a signal that cuts it there (a reader slower
        # than the command) makes it return short, the rest silently dropped.
        for start in range(0, len(text), _PIECE):
            stream.write(text[start : start + _PIECE])
            stream.flush()
    finally:
        if release is not None:
            release()


def _drop_unwritten_stdout() -> None:
    """Point stdout, which just refused a write, at ``/dev/null``, so that what is still
    buffered for it does not fail again when the process exits."""
    import os  # noqa: PLC0415 (only when stdout failed)

    try:
        descriptor = sys.stdout.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, descriptor)
        finally:
            os.close(devnull)
        sys.stdout.flush()
    except (OSError, ValueError):
        pass


def error_line(error: NexoError) -> str:
    """The one line a failure prints: ``error: MESSAGE [KIND]``, its kind the ``kind`` of the
    ``--json`` document.

    A :attr:`~nexo_pkg.core.errors.NexoError.multiline` message keeps its own line feeds (its
    parts from outside were escaped when it was written); every line is still escaped."""
    if error.multiline:
        shown = "\n".join(printable(line) for line in error.message.split("\n"))
    else:
        shown = printable(error.message)
    return f"error: {shown} [{error.kind}]"


def report_error(error: NexoError, *, json_output: bool = False) -> int:
    """Render ``error`` and return its exit code: with ``json_output`` the failure document
    (:meth:`~nexo_pkg.core.errors.NexoError.to_json`) on stdout; always the
    :func:`error_line` on stderr, then the policy entry that would trust a refused signer, and
    with ``--verbose`` the details and the chain of causes. Never fails: a document stdout
    cannot take (a full disk, ``> /dev/full``) is dropped, and the line still says why."""
    if json_output:
        try:
            emit_json(error.to_json())
        except OSError:
            _drop_unwritten_stdout()
    say_policy_warnings(error)
    sys.stderr.write(error_line(error) + "\n")
    entry = error.details.get("entry")
    if isinstance(entry, str) and not json_output:
        # A refused signer: the policy entry that would trust it, to paste as it is (each line
        # escaped: the identity and issuer come from a certificate).
        policy = error.details.get("policy")
        where = f" to {printable(policy)}" if isinstance(policy, str) else ""
        before = error.details.get("entry_before_line")
        if isinstance(before, int):
            # The first entry for an owner decides: pasted after that one, it would be ignored.
            where += f", before the [[authors]] entry at line {before}"
        sys.stderr.write(f"To trust this signer, add{where}:\n")
        for line in entry.splitlines():
            sys.stderr.write(f"  {printable(line)}\n")
    if OUTPUT.verbose:
        for key, value in error.details.items():
            sys.stderr.write(f"  {key}: {printable(value)}\n")
        cause = error.__cause__
        while cause is not None:
            sys.stderr.write(f"  caused by: {type(cause).__name__}: {printable(cause)}\n")
            cause = cause.__cause__
    return error.exit_code
