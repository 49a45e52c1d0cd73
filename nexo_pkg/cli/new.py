"""CLI for `nexo plugin new` (not built yet)."""

from __future__ import annotations

import typer

from nexo_pkg.cli.common import say


def _not_built(command: str) -> None:
    say(f"error: `nexo plugin {command}` is not built yet")
    raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the `plugin` sub-app."""

    @app.command("new", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def new_command() -> None:
        """Not built yet."""
        _not_built("new")
