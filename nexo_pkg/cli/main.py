"""Entry point of the ``nexo`` console script and ``python -m nexo_pkg``."""

from __future__ import annotations

import typer

from nexo_pkg import __version__
from nexo_pkg.cli import check, install, lint, lsp, new, pack

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


def main() -> None:
    """Run the command line; click turns usage errors into exit code 2."""
    app()
