"""CLI for `nexo plugin pack`: flags in, :func:`nexo_pkg.pack.build.pack` runs, exit code out."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from nexo_pkg.cli.common import colour_enabled, fail
from nexo_pkg.cli.options import JsonOption, named_path
from nexo_pkg.core.diagnostics import FileResult
from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.output import emit_json, say, say_error, warn

if TYPE_CHECKING:
    from nexo_pkg.pack.build import ArchiveStats
    from nexo_pkg.sources.api import ArchiveLimits


def show_diagnostics(result: FileResult) -> None:
    """Print lint findings on stderr with the lint command's text reporter (code frames)."""
    if not result.diagnostics:
        return
    from nexo_pkg.core.terminal import escaping_encoding  # noqa: PLC0415
    from nexo_pkg.lint.reporters import ReportContext, render_text  # noqa: PLC0415

    context = ReportContext(
        colour=colour_enabled(sys.stderr), encoding=escaping_encoding(sys.stderr)
    )
    sys.stderr.write(render_text([result], context))


def _admitting(tarball_size: int, stats: ArchiveStats) -> ArchiveLimits:
    """``install``'s default archive limits, raised as far as the tarball ``pack`` just wrote
    needs: ``--check`` checks the plugin, and the limits are the operator's to set (the
    warnings say which flag installing it needs)."""
    from nexo_pkg.sources.api import ArchiveLimits  # noqa: PLC0415

    base = ArchiveLimits()
    return ArchiveLimits(
        max_download=max(base.max_download, tarball_size),
        max_entries=max(base.max_entries, stats.entries),
        max_total=max(base.max_total, stats.total_size),
        max_entry=max(base.max_entry, stats.largest_file),
    )


def limit_warnings(tarball_size: int, stats: ArchiveStats) -> list[str]:
    """What in a packed tarball goes past ``install``'s default archive limits."""
    from nexo_pkg.sources.api import ArchiveLimits  # noqa: PLC0415

    limits = ArchiveLimits()
    checks = [
        ("the tarball", tarball_size, limits.max_download, "--max-download-size"),
        ("its unpacked files", stats.total_size, limits.max_total, "--max-total-size"),
        ("its largest file", stats.largest_file, limits.max_entry, "--max-entry-size"),
        ("its member count", stats.entries, limits.max_entries, "--max-entries"),
    ]
    return [
        f"{what} ({value:,}) exceeds what `nexo plugin install` accepts by default "
        f"({limit:,}); installing it needs {flag}, or trim the plugin"
        for what, value, limit, flag in checks
        if value > limit
    ]


def pack_command(  # noqa: PLR0917  # typer maps each flag to one parameter
    directory: Annotated[
        Path,
        typer.Argument(
            help="Plugin project directory (holds plugin.toml or nexo-plugin.toml).",
            show_default=".",
        ),
    ] = Path(),
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Output directory.",
            show_default="DIR/dist",
            metavar="<path>",
            parser=named_path("--out", "the output directory"),
        ),
    ] = None,
    target: Annotated[
        str,
        typer.Option(
            "--target",
            help="noarch (pure Python), or a target triple: with --binary a compiled plugin, "
            "without it a Python plugin whose requirements are vendored with that Linux or "
            "macOS platform's wheels.",
        ),
    ] = "noarch",
    binary: Annotated[
        Path | None,
        typer.Option(
            "--binary",
            help="Compiled plugin executable (with --target TRIPLE).",
            metavar="<path>",
            parser=named_path("--binary", "the compiled plugin executable", default=False),
        ),
    ] = None,
    requirements: Annotated[
        Path | None,
        typer.Option(
            "--requirements",
            help="Requirements file to vendor into lib/.",
            show_default="DIR/requirements.txt",
            metavar="<path>",
            parser=named_path("--requirements", "the requirements file"),
        ),
    ] = None,
    python_version: Annotated[
        str,
        typer.Option(
            "--python",
            metavar="X.Y",
            help="Python the daemon runs the plugin with: requirements (and their markers) "
            "are resolved for it, whichever Python packs.",
        ),
    ] = "3.11",
    source_date_epoch: Annotated[
        str | None,
        typer.Option(
            "--source-date-epoch",
            metavar="N",
            help="Archive timestamp (beats $SOURCE_DATE_EPOCH, then the last git commit).",
        ),
    ] = None,
    json_output: JsonOption = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="After packing, run `nexo plugin check` on the tarball (exit 1 if it fails).",
        ),
    ] = False,
) -> None:
    """Build a reproducible release tarball, its .sha256, a manifest copy and its SBOM.

    Exit codes: 0 packed; 1 lint errors, bad layout, native code in a noarch tree,
    requirements that do not install, or a failed --check; 2 bad flags or unreadable input.
    """
    # Imported here so other commands do not pay for the pack machinery at start-up.
    from nexo_pkg.pack import build, errors  # noqa: PLC0415

    options = build.PackOptions(
        project=directory,
        out=out,
        target=target,
        binary=binary,
        requirements=requirements,
        source_date_epoch=source_date_epoch,
        python_version=python_version,
        progress=say,
    )
    try:
        result = build.pack(options)
    except NexoError as error:
        if isinstance(error, errors.ManifestLintError):
            show_diagnostics(error.result)
        fail(error, json_output=json_output)
    show_diagnostics(result.lint)
    for note in result.notes:
        warn(note)
    tarball = result.tarball
    say(
        f"packed {result.plugin_id} {result.version} ({result.target}): {tarball.path} "
        f"({tarball.size} bytes, sha256 {tarball.sha256}, "
        f"mtime {result.epoch.value} from {result.epoch.origin})"
    )
    for asset in result.assets[1:]:
        say(f"  wrote {asset.path}")
    limits = limit_warnings(result.tarball.size, result.stats)
    for warning in limits:
        warn(warning)
    document = result.to_json()
    document["warnings"] += limits
    passed = True
    if check:
        from nexo_pkg.cli.check import check_after  # noqa: PLC0415

        failure = "the packed plugin failed the handshake checks"
        passed = check_after(
            Path(tarball.path),
            document,
            failure,
            json_output=json_output,
            limits=_admitting(result.tarball.size, result.stats),
        )
        if not passed:
            say_error(failure, "check_failed")
    if json_output:
        emit_json(document)
    if not passed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the `plugin` sub-app."""
    app.command("pack")(pack_command)
