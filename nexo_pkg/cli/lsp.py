"""CLI for `nexo plugin lsp`: the language server on stdin/stdout."""

from __future__ import annotations

import logging
import os
import signal
import sys
from types import FrameType

import typer

from nexo_pkg.cli.common import OUTPUT

_EXIT = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated")}


def _stop_now(signum: int, frame: FrameType | None) -> None:
    """End the server at once on Ctrl-C or SIGTERM.

    pygls reads stdin in a worker thread; unwinding normally would wait for that read (and a
    second Ctrl-C then aborts the interpreter). An editor that wants the server gone sends
    ``exit``; a person at a terminal wants it gone now. Nothing is held open that needs
    cleanup: the server writes no files.
    """
    del frame
    code, word = _EXIT.get(signal.Signals(signum), (128 + signum, "stopped"))
    os.write(sys.stderr.fileno(), f"\n{word}\n".encode())
    os._exit(code)


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the `plugin` sub-app."""

    @app.command("lsp")
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

        It serves plugin.toml and nexo-plugin.toml (and trusted_keys.toml) over stdio.
        --verbose logs debug detail to stderr, which editors keep as the server's log.
        Ctrl-C stops it (exit 130).
        """
        del stdio
        if not OUTPUT.verbose:
            logging.basicConfig(
                stream=sys.stderr,
                level=logging.WARNING,
                format="%(asctime)s %(levelname)s %(name)s: %(message)s",
            )
        for handled in _EXIT:
            signal.signal(handled, _stop_now)
        # Imported here: the other commands must not pay for pygls and lsprotocol.
        from nexo_pkg.lsp.server import serve  # noqa: PLC0415 - lazy import, see above

        serve(debounce_seconds=debounce_ms / 1000)
