"""CLI for `nexo plugin new`: flags in, :func:`nexo_pkg.scaffold.generator.create_project` runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nexo_pkg.cli.common import guarded
from nexo_pkg.cli.options import named_path
from nexo_pkg.core.output import say, warn
from nexo_pkg.scaffold.generator import LANGUAGES
from nexo_pkg.scaffold.slug import SLUG_PATTERN


def new_command(  # noqa: PLR0917  # typer maps each flag to one parameter
    plugin_id: Annotated[
        str, typer.Argument(metavar="ID", help=f"Plugin id: {SLUG_PATTERN} (e.g. weather).")
    ],
    lang: Annotated[
        str,
        typer.Option("--lang", metavar=f"[{'|'.join(LANGUAGES)}]", help="Language of the project."),
    ] = "python",
    kind: Annotated[
        str,
        typer.Option(
            "--kind",
            metavar="[plugin|microapp]",
            help="plugin (a nexo plugin) or microapp (a stdio extension of the daemon).",
        ),
    ] = "plugin",
    dest: Annotated[
        Path | None,
        typer.Option(
            "--dest",
            help="Directory to create.",
            show_default="./ID",
            metavar="<path>",
            parser=named_path("--dest", "the directory to create"),
        ),
    ] = None,
    description: Annotated[
        str | None, typer.Option("--description", help="One-line description.")
    ] = None,
    owner: Annotated[
        str | None,
        typer.Option("--owner", help="GitHub owner of the plugin repository (for the docs)."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Write into a non-empty directory.")
    ] = False,
    nexo_pkg_spec: Annotated[
        str | None,
        typer.Option(
            "--nexo-pkg-spec",
            metavar="REQUIREMENT",
            help="What the release workflow pip-installs nexo-pkg from (default: the source "
            "this nexo-pkg came from: its git commit or archive, its index version; from a "
            "local checkout, its release tag, else its commit, with a warning).",
        ),
    ] = None,
) -> None:
    """Create a plugin or microapp project that lints clean, packs, and passes its own tests.

    Exit codes: 0 created; 1 the files could not be written; 2 invalid id, unknown
    language or kind, or an existing non-empty destination without --force.
    """
    # Imported here so other commands do not pay for the templates at start-up.
    from nexo_pkg.scaffold.generator import NewProject, create_project  # noqa: PLC0415

    request = NewProject(
        plugin_id=plugin_id,
        lang=lang,
        dest=dest,
        kind=kind,
        description=description,
        owner=owner,
        force=force,
        nexo_pkg_spec=nexo_pkg_spec,
    )
    created = guarded(lambda: create_project(request))
    for warning in created.warnings:
        warn(warning)
    say(f"created {kind} {plugin_id} in {created.path}")
    for name in sorted(created.files):
        say(f"  {name}")
    if kind == "microapp":
        say(
            "next: cd into it, run the tests (`python -m unittest discover -s tests`), "
            "`nexo plugin check .`, then `nexo plugin pack`; extensions.yaml.example is "
            "the stanza for the daemon's config"
        )
        return
    say(
        "next: cd into it, `pip install -r requirements.txt`, run the tests "
        "(`python -m unittest discover -s tests`), then `nexo plugin pack`"
    )


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the `plugin` sub-app."""
    app.command("new")(new_command)
