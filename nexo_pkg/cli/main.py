"""Entry point of the ``nexo`` console script and ``python -m nexo_pkg``.

Start-up is kept to what the command needs: ``--version`` prints without importing anything
else, ``plugin lint``, ``plugin list`` and ``plugin sync`` have their own small argument
parsers (:mod:`nexo_pkg.cli.linting`, :mod:`nexo_pkg.cli.listing`, :mod:`nexo_pkg.cli.syncing`),
and every other command goes through the lazily built Typer app of :mod:`nexo_pkg.cli.app`.

This module also owns what happens on a signal: Ctrl-C (SIGINT), SIGTERM and a hang-up
(SIGHUP, unless ignored with ``nohup``) unwind the command through its ``finally`` blocks, so
a download's temp file, an install's staging tree or a checked plugin's processes are
removed, then print one line and exit 130 (SIGINT), 143 (SIGTERM) or 129 (SIGHUP).
"""

from __future__ import annotations

import signal
import sys

from nexo_pkg import __version__
from nexo_pkg.cli import (
    DEFERRED,
    HANGUP,
    SIGNAL_EXIT,
    STOPPING,
    Interrupted,
    asks_for_json,
    hold_signals,
    leave_now,
)

# Not `typing.TYPE_CHECKING`: importing `typing` is a tenth of `nexo --version`'s start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType


def _on_signal(signum: int, frame: FrameType | None) -> None:
    del frame
    # Cleanup must run to the end: a second Ctrl-C while the staging tree is being removed
    # would leave half of it behind.
    for handled in SIGNAL_EXIT:
        signal.signal(handled, signal.SIG_IGN)
    raise Interrupted(signum)


def install_signal_handlers() -> None:
    """Turn SIGINT, SIGTERM, SIGHUP and the other signals that would end the process where it
    stands (:data:`~nexo_pkg.cli.STOPPING`, the real-time signals) into :class:`Interrupted`
    (main thread only); a signal the process was started to ignore (``nohup``) stays ignored."""
    if HANGUP is not None and signal.getsignal(HANGUP) is not signal.SIG_IGN:
        SIGNAL_EXIT[HANGUP] = 128 + HANGUP
    for stopping in STOPPING:
        if signal.getsignal(stopping) is signal.SIG_DFL:
            SIGNAL_EXIT[stopping] = 128 + stopping
    # The real-time signals end a process too (their default action); the C library keeps the
    # first few for itself, which Python's SIGRTMIN already leaves out.
    for number in range(getattr(signal, "SIGRTMIN", 0), getattr(signal, "SIGRTMAX", -1) + 1):
        if signal.getsignal(number) is signal.SIG_DFL:
            SIGNAL_EXIT[number] = 128 + number
    for handled in SIGNAL_EXIT:
        signal.signal(handled, _on_signal)


def _dispatch(arguments: list[str]) -> int:
    if arguments in (["--version"], ["-V"]):
        sys.stdout.write(f"nexo-pkg {__version__}\n")
        return 0
    if arguments[:2] == ["plugin", "lint"]:
        from nexo_pkg.cli.linting import fast_lint  # noqa: PLC0415

        code = fast_lint(arguments[2:])
        if code is not None:
            return code
    if arguments[:2] == ["plugin", "list"]:
        from nexo_pkg.cli.listing import fast_list  # noqa: PLC0415

        code = fast_list(arguments[2:])
        if code is not None:
            return code
    if arguments[:2] == ["plugin", "sync"]:
        from nexo_pkg.cli.syncing import fast_sync  # noqa: PLC0415

        code = fast_sync(arguments[2:])
        if code is not None:
            return code
    from nexo_pkg.cli.app import run  # noqa: PLC0415

    return run(arguments)


def _open_closed_streams() -> None:
    """Give a standard stream the process was started without (``nexo … >&-``, ``2>&-``) to
    ``/dev/null``: what the command writes there goes nowhere instead of failing with a
    traceback, and no file the command opens takes the stream's descriptor."""
    import io  # noqa: PLC0415
    import os  # noqa: PLC0415

    for descriptor, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is not None:
            continue
        try:
            os.fstat(descriptor)
            continue  # taken by something else meanwhile: left alone
        except OSError:
            pass
        devnull = os.open(os.devnull, os.O_RDONLY if descriptor == 0 else os.O_WRONLY)
        if devnull != descriptor:
            os.dup2(devnull, descriptor)
            os.close(devnull)
        stream = io.TextIOWrapper(
            io.FileIO(descriptor, "r" if descriptor == 0 else "w", closefd=False),
            encoding="utf-8",
            errors="backslashreplace" if descriptor == 2 else "strict",
            newline="\n",
            line_buffering=descriptor == 2,
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _document_begun() -> bool:
    """Whether the command began writing its stdout document before a signal stopped it:
    then that document stands alone (``--json`` prints one, never a second after it)."""
    output = sys.modules.get("nexo_pkg.core.output")  # not loaded: nothing was written
    return output is not None and bool(output.OUTPUT.document_begun)


def _unexpected(error: Exception) -> int:
    """Report a failure that reached the top as no :class:`NexoError`: one line (``io`` for an
    operating-system error, ``usage`` for a file name too long, ``internal`` for anything
    else, a bug of ours), one document with ``--json``; ``--verbose`` adds the traceback.
    Returns the exit code."""
    import errno  # noqa: PLC0415
    import traceback  # noqa: PLC0415

    from nexo_pkg.core.errors import NexoError, UsageError  # noqa: PLC0415
    from nexo_pkg.core.output import OUTPUT, report_error  # noqa: PLC0415

    failure: NexoError
    if isinstance(error, OSError) and error.errno == errno.ENAMETOOLONG:
        # Only a path given on the command line or in the environment grows that long: input
        # that cannot be used as given (exit 2), not a failing disk.
        where = f": {error.filename}" if error.filename is not None else ""
        failure = UsageError(f"file name too long{where}; name a shorter path")
    elif isinstance(error, OSError) and _cwd_removed(error):
        failure = NexoError(
            "the current directory no longer exists (it was removed or moved away); cd to a "
            "directory that exists and run the command again",
            kind="io",
        )
    elif isinstance(error, OSError):
        where = f": {error.filename}" if error.filename is not None else ""
        failure = NexoError(f"{error.strerror or error}{where}", kind="io")
    else:
        failure = NexoError(
            f"unexpected {type(error).__name__}: {error} (a bug in nexo-pkg; run again with "
            "--verbose for its traceback and report it)",
            kind="internal",
        )
    failure.__cause__ = error
    if "--verbose" in sys.argv[1:] or "-v" in sys.argv[1:]:
        OUTPUT.verbose = True  # the failure may have come before the options were read
    if OUTPUT.verbose:
        traceback.print_exception(error)
    return report_error(failure, json_output=asks_for_json(sys.argv[1:]))


def _cwd_removed(error: OSError) -> bool:
    """Whether ``error`` is the one ``os.getcwd()`` raises in a directory removed under the
    command (a shell left in a deleted build directory): no file name, and the current
    directory is gone."""
    import errno  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    if error.errno != errno.ENOENT or error.filename is not None:
        return False
    try:
        Path.cwd()
    except FileNotFoundError:
        return True
    return False


def _drop_unwritable_stdout() -> bool:
    """Flush stdout; when it cannot take what is left (a full disk, ``>/dev/full``), point it
    at ``/dev/null`` so the interpreter's own flush at exit does not fail again with its
    "Exception ignored" message and exit code 120. Returns whether stdout was dropped."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        import os  # noqa: PLC0415

        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass
        return True
    return False


def _stdout_written(code: int) -> int:
    """The exit code of a command that returned ``code``, once what it printed has reached
    stdout: a write that fails only there (output still buffered when the command returned)
    is one ``io`` line, as it would have been mid-command."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _drop_unwritable_stdout()  # the reader left: not an error of ours
    except OSError as error:
        _drop_unwritable_stdout()
        return _unexpected(error)
    except ValueError:
        pass  # closed by a caller running commands in its own process
    return code


def _unicode_stdout() -> None:
    """Make standard output carry any text the command prints, whatever the locale's code
    page (Windows's ``cp1252`` when output is redirected, ``PYTHONIOENCODING=ascii``): a
    file or pipe gets UTF-8, which is what JSON and SARIF documents must be and what CI
    logs, editors and ``pre-commit`` read; a terminal keeps its encoding and shows what it
    cannot encode as ``\\u`` escapes. A file name that is not UTF-8 (``caf\\xe9/plugin.toml``,
    carried as surrogates) is written as its own bytes, as Python does under the C locale,
    whatever the locale: never an unexpected error."""
    import codecs  # noqa: PLC0415 (loaded at interpreter start-up)

    stream = sys.stdout
    reconfigure = getattr(stream, "reconfigure", None)
    try:
        if reconfigure is None:
            return
        if codecs.lookup(stream.encoding).name == "utf-8":
            if stream.errors == "strict":
                reconfigure(errors="surrogateescape")
            return
        if stream.isatty():
            reconfigure(errors="backslashreplace")
        else:
            reconfigure(encoding="utf-8", errors="surrogateescape")
    except (AttributeError, LookupError, OSError, TypeError, ValueError):
        pass  # a stream that cannot say or change its encoding is left as it is


def main() -> None:
    """Run the command line and exit with its code (0 yes, 1 no, 2 usage, 129/130/143
    signals)."""
    try:
        _main()
    finally:
        # However the command ended (a result, a refusal, a usage error, a signal's line),
        # it is done and has said so: a signal from now on (while the interpreter winds
        # down) ends the process at once with its line and code, never a traceback from the
        # unwinding handler raised where nothing catches it.
        _leave_on_signals()


def _leave_on_signals() -> None:
    try:
        for handled in SIGNAL_EXIT:
            signal.signal(handled, leave_now)
    except Interrupted as late:  # came just before its handler was replaced
        leave_now(late.signum, None)
    except ValueError:
        pass  # not the main thread (an embedding caller): the signals are not ours


def _main() -> None:
    if sys.stdin is None or sys.stdout is None or sys.stderr is None:
        _open_closed_streams()
    if sys.argv[1:3] != ["plugin", "lsp"]:
        # (The language server speaks bytes on stdout.)
        _unicode_stdout()
    try:
        # Everything from here runs under the handlers' `except`: a signal that lands while
        # the rest of start-up is still loading ends as one line too, never a traceback.
        install_signal_handlers()
        DEFERRED.clear()
        if sys.argv[1:] not in (["--version"], ["-V"]) and sys.argv[1:3] != ["plugin", "lsp"]:
            # `nexo plugin lint | head -1`: a reader that leaves does not change the exit
            # code. (The language server owns its output: a client that left ends it.)
            from nexo_pkg.core.leaving import guard_left_readers  # noqa: PLC0415
            from nexo_pkg.core.output import OUTPUT  # noqa: PLC0415 (every command loads it)

            guard_left_readers()
            OUTPUT.hold_signals = hold_signals
            OUTPUT.document_begun = False  # (a caller may run several commands in one process)
        code = _dispatch(sys.argv[1:])
    except SystemExit:
        if not DEFERRED:
            raise
        code = 0  # the signal's code below
    except Interrupted as stop:
        if asks_for_json(sys.argv[1:]) and not _document_begun():
            # --json promises one document, even for a run cut short.
            import json  # noqa: PLC0415

            document = {"ok": False, "kind": "interrupted", "error": stop.line}
            sys.stdout.write(json.dumps(document) + "\n")
        sys.stderr.write(f"\n{stop.error_line}\n")
        raise SystemExit(stop.exit_code) from None
    except BrokenPipeError:
        # `nexo plugin list | head -1`: the reader left; that is not an error of ours.
        import os  # noqa: PLC0415

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        raise SystemExit(0) from None
    except Exception as error:  # noqa: BLE001 - the last resort: one line, never a traceback
        code = _unexpected(error)
        if isinstance(error, OSError):
            _drop_unwritable_stdout()  # said once: exit does not try the same write again
    else:
        code = _stdout_written(code)
    if DEFERRED:
        # A signal came while the finished command printed its result, which is whole.
        late = Interrupted(DEFERRED[0])
        sys.stderr.write(f"\n{late.error_line}\n")
        code = late.exit_code
    if sys.argv[1:3] == ["plugin", "sync"]:
        # A sync has loaded the installer and the network: its process ends without freeing
        # them one by one (returns when it cannot, for the normal exit).
        from nexo_pkg.core.leaving import exit_now  # noqa: PLC0415

        # Once done, a signal ends the process at once (nothing is left to unwind).
        for handled in SIGNAL_EXIT:
            signal.signal(handled, leave_now)
        exit_now(code)
    raise SystemExit(code)
