"""CLI for `nexo plugin lsp`: the language server on stdin/stdout."""

from __future__ import annotations

import logging
import os
import re
import signal
import sys
from types import FrameType

import typer

from nexo_pkg.cli import SIGNAL_EXIT, Interrupted
from nexo_pkg.core.output import OUTPUT


def _stop_now(signum: int, frame: FrameType | None) -> None:
    """End the server at once on Ctrl-C or SIGTERM.

    pygls reads stdin in a worker thread; unwinding normally would wait for that read (and a
    second Ctrl-C then aborts the interpreter). An editor that wants the server gone sends
    ``exit``; a person at a terminal wants it gone now. Nothing is held open that needs
    cleanup: the server writes no files.
    """
    del frame
    stop = Interrupted(signum)
    os.write(sys.stderr.fileno(), f"\n{stop.error_line}\n".encode())
    os._exit(stop.exit_code)


LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# The line of a formatted traceback that names the exception: `ValueError: ...`.
_EXCEPTION_LINE = re.compile(r"[A-Za-z_][\w.]*: \S")


class OneLineFormatter(logging.Formatter):
    """Every log record on one line: an exception as its type and the start of its message,
    never a traceback (a malformed message or a document nested past the parser's depth would
    otherwise fill the editor's server log per request); ``--verbose`` keeps tracebacks."""

    def format(self, record: logging.LogRecord) -> str:
        failure = record.exc_info[1] if record.exc_info else None
        saved = record.exc_info, record.exc_text, record.stack_info
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        try:
            text = super().format(record)
        finally:
            record.exc_info, record.exc_text, record.stack_info = saved
        head, marker, trace = text.partition("Traceback (most recent call last):")
        if marker:
            # A traceback formatted into the message itself (pygls does): its last exception
            # line only, also out of the boxes an exception group is drawn in.
            lines = (line.strip(" |") for line in trace.splitlines())
            raised = [line for line in lines if _EXCEPTION_LINE.match(line)] or [""]
            head = head.rstrip().removesuffix("+ Exception Group").rstrip()
            text = f"{head} ({raised[-1][:200]})"
        if failure is not None:
            detail = " ".join(str(failure).split())[:200]
            text += f" ({type(failure).__name__}{': ' + detail if detail else ''})"
        return " ".join(text.splitlines())


def lsp_command(
    stdio: bool = typer.Option(
        False,
        "--stdio",
        help="Talk LSP over stdin/stdout (the only transport; accepted because editor "
        "clients pass it).",
    ),
    debounce_ms: int = typer.Option(
        100,
        "--debounce-ms",
        min=0,
        max=5000,
        help="Wait this long after the last edit before linting a changed document.",
    ),
) -> None:
    """Run the language server for plugin manifests (diagnostics, hover, completion).

    It serves plugin.toml and nexo-plugin.toml (microapp manifests too), trusted_keys.toml,
    nexo-plugins.toml and nexo-plugins.lock, and the daemon's extensions.yaml, agents.yaml
    and agents.d/*.yaml over stdio; other files are left alone.
    --verbose logs debug detail to stderr, which editors keep as the server's log.
    Ctrl-C stops it (exit 130).
    """
    del stdio
    if not OUTPUT.verbose:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(OneLineFormatter(LOG_FORMAT))
        logging.basicConfig(level=logging.WARNING, handlers=[handler])
    # Every signal the command line unwinds on (SIGHUP, SIGUSR1, ... as well as Ctrl-C and
    # SIGTERM): raised into pygls's loop, an interruption can be caught there and not end it.
    for handled in SIGNAL_EXIT:
        signal.signal(handled, _stop_now)
    # Imported here: the other commands must not pay for pygls and lsprotocol.
    from nexo_pkg.lsp.server import serve  # noqa: PLC0415 - lazy import, see above

    status = serve(debounce_seconds=debounce_ms / 1000)
    if status:
        # LSP: an `exit` that no `shutdown` preceded ends the server with status 1.
        raise typer.Exit(status)


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the `plugin` sub-app."""
    app.command("lsp")(lsp_command)
