"""CLI for `nexo plugin install upgrade list remove verify` (not built yet)."""

from __future__ import annotations

import typer

from nexo_pkg.cli.common import say


def _not_built(command: str) -> None:
    say(f"error: `nexo plugin {command}` is not built yet")
    raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the `plugin` sub-app."""

    @app.command(
        "install", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
    )
    def install_command() -> None:
        """Not built yet."""
        _not_built("install")

    @app.command(
        "upgrade", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
    )
    def upgrade_command() -> None:
        """Not built yet."""
        _not_built("upgrade")

    @app.command(
        "list", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
    )
    def list_command() -> None:
        """Not built yet."""
        _not_built("list")

    @app.command(
        "remove", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
    )
    def remove_command() -> None:
        """Not built yet."""
        _not_built("remove")

    @app.command(
        "verify", context_settings={"allow_extra_args": True, "ignore_unknown_options": True}
    )
    def verify_command() -> None:
        """Not built yet."""
        _not_built("verify")
