"""Entry point of the ``nexo`` console script and ``python -m nexo_pkg``.

The Typer application is built on first use: ``nexo plugin lint`` is parsed by a small fast
path (see :func:`nexo_pkg.cli.lint.fast_lint`) so a cold lint does not import Typer and every
command module. ``app`` and ``plugin_app`` stay importable from this module as before.
"""

from __future__ import annotations

import sys
from functools import cache
from typing import TYPE_CHECKING, Any

from nexo_pkg import __version__

if TYPE_CHECKING:
    import typer

__all__ = ["build_app", "main"]


@cache
def build_app() -> tuple[typer.Typer, typer.Typer]:
    """Build the ``nexo`` Typer app and its ``plugin`` sub-app (once per process)."""
    import typer  # noqa: PLC0415 - deferred so the lint fast path never pays for it

    from nexo_pkg.cli import check, fleet, install, lint, lsp, new, pack, trust  # noqa: PLC0415

    app = typer.Typer(
        name="nexo",
        help="Tooling for nexo subprocess plugins.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    plugin_app = typer.Typer(
        help=(
            "Lint, scaffold, pack, check and install nexo plugins.\n\n"
            "Exit codes: 0 success; 1 the answer is no (lint errors, refused install, failed "
            "check); 2 usage or configuration error."
        ),
        no_args_is_help=True,
    )
    app.add_typer(plugin_app, name="plugin")

    def _show_version(value: bool) -> None:
        if value:
            typer.echo(f"nexo-pkg {__version__}")
            raise typer.Exit(0)

    @app.callback()
    def _root(
        version: bool = typer.Option(
            False,
            "--version",
            help="Print the nexo-pkg version and exit.",
            callback=_show_version,
            is_eager=True,
        ),
    ) -> None:
        """Tooling for nexo subprocess plugins."""

    lint.register(plugin_app)
    new.register(plugin_app)
    pack.register(plugin_app)
    check.register(plugin_app)
    install.register(plugin_app)
    lsp.register(plugin_app)
    fleet.register(plugin_app)
    trust.register(plugin_app)
    return app, plugin_app


def __getattr__(name: str) -> Any:
    """``app`` and ``plugin_app`` are built lazily (module attributes of old)."""
    if name == "app":
        return build_app()[0]
    if name == "plugin_app":
        return build_app()[1]
    raise AttributeError(name)


def main() -> None:
    """Run the command line; click turns usage errors into exit code 2."""
    arguments = sys.argv[1:]
    if arguments[:2] == ["plugin", "lint"]:
        from nexo_pkg.cli.lint import fast_lint  # noqa: PLC0415

        code = fast_lint(arguments[2:])
        if code is not None:
            raise SystemExit(code)
    build_app()[0]()
