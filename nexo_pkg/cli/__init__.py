"""The Typer command line. It parses options, calls the library and sets the exit code.

What every command shares lives here rather than in :mod:`nexo_pkg.cli.main`, which imports
the commands: how a signal stops a run (:class:`Interrupted`, raised by the handlers
:func:`nexo_pkg.cli.main.install_signal_handlers` installs; the language server ends at once
with the same line and exit code). It is imported by ``nexo --version`` too: nothing more here.
"""

from __future__ import annotations

import signal
import sys

# Not `typing.TYPE_CHECKING`: `nexo --version` imports this module, and `typing` costs more.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

SIGNAL_EXIT: dict[int, int] = {signal.SIGINT: 130, signal.SIGTERM: 143}
SIGNAL_WORDS: dict[int, str] = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}
#: SIGHUP (the terminal or SSH session closed) where the platform has it: handled like SIGTERM
#: (exit 129) unless the command was started with it ignored (``nohup``); added to
#: :data:`SIGNAL_EXIT` by :func:`nexo_pkg.cli.main.install_signal_handlers` then.
HANGUP: signal.Signals | None = getattr(signal, "SIGHUP", None)
if HANGUP is not None:
    SIGNAL_WORDS[HANGUP] = "hung up"

#: The other signals whose default action ends the process at once and that only another
#: process sends (POSIX): a plugin under ``check`` or ``doctor`` can send them to nexo. Handled
#: like SIGTERM, so the run still kills and reaps what it started (a descendant that left the
#: plugin's session included) before it exits with 128 + the signal's number. Not the faults a
#: program raises against itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGSYS, SIGTRAP), which a
#: Python handler cannot outlive; nor SIGSTOP/SIGTSTP, which stop rather than end; added to
#: :data:`SIGNAL_EXIT` by :func:`nexo_pkg.cli.main.install_signal_handlers`.
#: SIGIO only on Linux: on macOS and the BSDs its default action is to discard it, so a
#: handler would turn a signal the process never noticed into an interruption.
STOPPING: list[signal.Signals] = [
    getattr(signal, name)
    for name in (
        "SIGQUIT",
        "SIGABRT",
        "SIGUSR1",
        "SIGUSR2",
        "SIGALRM",
        "SIGVTALRM",
        "SIGPROF",
        *(("SIGIO",) if sys.platform.startswith("linux") else ()),
        "SIGPWR",
        "SIGSTKFLT",
        "SIGXCPU",
    )
    if hasattr(signal, name) and hasattr(signal, "SIGUSR1")
]
for _stopping in STOPPING:
    SIGNAL_WORDS[_stopping] = f"stopped by {_stopping.name}"


def asks_for_json(arguments: list[str]) -> bool:
    """Whether a command line asks for one JSON document on stdout (for its failures too):
    ``--json`` among its options (not after ``--``, where it is an argument), or ``lint``'s
    other spelling of it, ``--format json`` / ``--format=json``."""
    options = arguments[: arguments.index("--")] if "--" in arguments else arguments
    if "--json" in options:
        return True
    if "--format=json" not in options and not any(
        options[at] == "--format" and options[at + 1] == "json" for at in range(len(options) - 1)
    ):
        return False
    words: list[str] = []
    takes_value = False
    for option in options:
        if takes_value:
            takes_value = False
        elif option == "--color":  # the one option of `nexo plugin` that takes a value
            takes_value = True
        elif not option.startswith("-"):
            words.append(option)
    return words[:2] == ["plugin", "lint"]


# The signals that came while a finished command printed its result (see defer_signals).
DEFERRED: list[int] = []


class Interrupted(BaseException):
    """Raised in the main thread by SIGINT, SIGTERM or SIGHUP.

    A ``BaseException`` that is not ``KeyboardInterrupt``: cleanup written as ``finally`` or
    ``except BaseException`` runs, while nothing in Typer, click's prompts or a library turns it
    into "Aborted!" or a silent exit code.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return SIGNAL_EXIT.get(self.signum, 128 + self.signum)

    @property
    def line(self) -> str:
        """What stopped the command (``interrupted``): the ``error`` of its ``--json`` document."""
        return SIGNAL_WORDS.get(self.signum, f"stopped by signal {self.signum}")

    @property
    def error_line(self) -> str:
        """The one line the command ends with on stderr: ``error: interrupted [interrupted]``,
        its kind the ``--json`` document's."""
        return f"error: {self.line} [interrupted]"


def defer_signals() -> None:
    """The command's work is done and its result is about to be printed: from now on SIGINT
    and SIGTERM wait until it is printed whole (one ``--json`` document, never a second one
    cutting into it), then the command exits with the signal's line and code. A second
    signal meanwhile ends the process at once (:func:`leave_now`), with the first one's line
    and code. Outside the main thread (a caller running the command there) nothing changes."""
    try:
        for handled in SIGNAL_EXIT:
            signal.signal(handled, _kept)
    except ValueError:
        return  # not the main thread: the signals are not this command's to handle


def hold_signals() -> Callable[[], None]:
    """Hold back the unwinding signals while a document is written (see
    :func:`nexo_pkg.core.output.write_document`); returns what lets them in again, which
    then unwinds with the first that came. A second signal meanwhile ends the process at
    once (:func:`leave_now`: a reader that takes nothing must not make it wait forever),
    with the first one's line and code.
    Outside the main thread nothing changes."""
    held: list[int] = []

    def hold(signum: int, frame: object) -> None:
        if held:
            # With the first signal's line and code: that is what stopped the command.
            leave_now(held[0], frame)
        held.append(signum)

    try:
        previous = {handled: signal.signal(handled, hold) for handled in SIGNAL_EXIT}
    except ValueError:
        return lambda: None  # not the main thread: the signals are not this command's

    def release() -> None:
        for handled, handler in previous.items():
            signal.signal(handled, handler)
        handler = previous[held[0]] if held else None
        if callable(handler):
            handler(held[0], None)  # the run's own handler: it unwinds from here

    return release


def _kept(signum: int, frame: object) -> None:
    del frame
    DEFERRED.append(signum)
    for handled in SIGNAL_EXIT:
        signal.signal(handled, _leave_as_deferred)


def _leave_as_deferred(signum: int, frame: object) -> None:
    """A second signal while a finished command prints its result: :func:`leave_now`, with
    the line and code of the first one, which stopped the command."""
    leave_now(DEFERRED[0] if DEFERRED else signum, frame)


def leave_now(signum: int, frame: object) -> None:
    """A signal handler that ends the process at once with the signal's line and code: for
    when nothing is left to unwind (the command is done and its process is leaving)."""
    del frame
    import contextlib  # noqa: PLC0415
    import os  # noqa: PLC0415

    stop = Interrupted(signum)
    with contextlib.suppress(OSError):  # no stderr to say it on: the exit code says it
        os.write(2, f"\n{stop.error_line}\n".encode())
    os._exit(stop.exit_code)
