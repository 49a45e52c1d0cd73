"""CLI for `nexo plugin lint schema` (not built yet)."""

from __future__ import annotations

import typer

from nexo_pkg.cli.common import say


def _not_built(command: str) -> None:
    say(f"error: `nexo plugin {command}` is not built yet")
    raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the `plugin` sub-app."""

    @app.command(
        "lint", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
    )
    def lint_command() -> None:
        """Not built yet."""
        _not_built("lint")

    @app.command(
        "schema", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
    )
    def schema_command() -> None:
        """Not built yet."""
        _not_built("schema")
