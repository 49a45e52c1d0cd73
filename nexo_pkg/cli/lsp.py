"""CLI for `nexo plugin lsp`: the language server on stdin/stdout."""

from __future__ import annotations

import logging
import sys

import typer


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
        verbose: bool = typer.Option(
            False, "--verbose", help="Log debug detail (to stderr, which editors keep as a log)."
        ),
    ) -> None:
        """Run the language server for nexo-plugin.toml (diagnostics, hover, completion)."""
        del stdio
        logging.basicConfig(
            stream=sys.stderr,
            level=logging.DEBUG if verbose else logging.WARNING,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
        # Imported here: the other commands must not pay for pygls and lsprotocol.
        from nexo_pkg.lsp.server import serve  # noqa: PLC0415 - lazy import, see above

        serve(debounce_seconds=debounce_ms / 1000)
