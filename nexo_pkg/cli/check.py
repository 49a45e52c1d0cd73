"""CLI for `nexo plugin check`: spawn a plugin and run the handshake conformance checks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer

from nexo_pkg.cli.common import answer, colour_enabled, guarded
from nexo_pkg.cli.completion import installed_ids
from nexo_pkg.cli.limits import archive_limits
from nexo_pkg.cli.options import (
    JsonOption,
    MaxDownloadSizeOption,
    MaxEntriesOption,
    MaxEntrySizeOption,
    MaxTotalSizeOption,
    named_path,
)
from nexo_pkg.core.errors import EXIT_FAILURE, EXIT_OK, UsageError
from nexo_pkg.core.output import OUTPUT, say

if TYPE_CHECKING:
    from nexo_pkg.check import CheckReport
    from nexo_pkg.sources.api import ArchiveLimits


def _parse_invoke(tool: str | None, args_text: str | None) -> tuple[str, dict[str, Any]] | None:
    """``--invoke TOOL [--args JSON]`` as ``(tool, args)``; bad values are usage errors."""
    if tool is None:
        if args_text is not None:
            raise UsageError("--args needs --invoke TOOL")
        return None
    if not tool.strip():
        raise UsageError("--invoke needs a tool name")
    if args_text is None:
        return tool, {}
    from nexo_pkg.check import frame_json  # noqa: PLC0415

    try:
        # Read as the daemon's serde_json would read it: the args go on the wire as JSON.
        args = frame_json.loads(args_text)
    except ValueError as error:
        raise UsageError(f"--args is not valid JSON: {error}") from error
    if not isinstance(args, dict):
        raise UsageError('--args must be a JSON object, such as \'{"city": "Lima"}\'')
    return tool, args


def show_report(report: CheckReport, stream: TextIO) -> None:
    """Print one line per check on ``stream`` (symbols only on a UTF-8 terminal). ``check``
    reports on stdout; ``pack --check`` and ``install --check``, whose result is the pack or
    install, report on stderr."""
    from nexo_pkg.check import render_report  # noqa: PLC0415
    from nexo_pkg.core.credentials import without_credentials  # noqa: PLC0415

    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
    unicode = stream.isatty() and encoding == "utf8"
    for line in render_report(report, unicode=unicode, colour=colour_enabled(stream)):
        # A path given as a URL (`--dest https://user:TOKEN@host/…`) is shown masked.
        stream.write(without_credentials(line) + "\n")
    stream.flush()


def check_after(
    target: Path,
    document: dict[str, Any],
    failure: str,
    *,
    json_output: bool,
    limits: ArchiveLimits | None = None,
) -> bool:
    """The ``--check`` step of ``pack`` and ``install``: run the checks on ``target``, show them
    on stderr and add them to the command's ``document`` (``check_failed`` saying ``failure``
    when one fails); whether they passed. With ``--quiet`` a clean pass (no failure, no
    warning) is not shown: the command is silent on success. A target that cannot be checked
    at all ends the command with its error. ``limits``: the archive limits a tarball is
    extracted under (the defaults when ``None``)."""
    from nexo_pkg.check import run_check  # noqa: PLC0415

    def run() -> CheckReport:
        say(f"checking {target} ...")
        report = run_check(target, limits=limits)
        counts = report.counts()
        if not OUTPUT.quiet or counts["fail"] or counts["warn"]:
            show_report(report, sys.stderr)
        return report

    report = guarded(run, json_output=json_output)
    document["check"] = report.to_json()
    if not report.ok:
        document.update(ok=False, kind="check_failed", error=failure)
    return report.ok


def check_command(  # noqa: PLR0917  # typer maps each flag to one parameter
    target: Annotated[
        str,
        typer.Argument(
            help=(
                "Plugin directory (packed layout or project), manifest, release .tar.gz, "
                "or the id of an installed plugin."
            ),
            autocompletion=installed_ids,
        ),
    ] = ".",
    timeout_ms: Annotated[
        int | None,
        typer.Option(
            "--timeout-ms",
            min=1,
            help=(
                "Deadline for each reply, in milliseconds (a plugin's shutdown reply: the "
                "daemon's fixed 5 s)."
            ),
            show_default=(
                "NEXO_PLUGIN_INIT_TIMEOUT_MS, else 5000; a microapp's initialize: 10000, as "
                "the extension host waits"
            ),
        ),
    ] = None,
    nexo_version: Annotated[
        str | None,
        typer.Option(
            "--nexo-version",
            help="nexo_version sent in initialize.",
            show_default="the newest daemon release nexo-pkg knows",
        ),
    ] = None,
    invoke: Annotated[
        str | None,
        typer.Option("--invoke", metavar="TOOL", help="Also call this tool once (tool.invoke)."),
    ] = None,
    args: Annotated[
        str | None,
        typer.Option("--args", metavar="JSON", help="Arguments for --invoke, a JSON object."),
    ] = None,
    dest: Annotated[
        Path | None,
        typer.Option(
            "--dest",
            help="Install root in which to look up an installed plugin id; with it, a bare "
            "id always names the installed plugin.",
            show_default="the daemon's plugin root, as for install",
            metavar="<path>",
            parser=named_path("--dest", "the plugin root"),
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="The daemon's configuration directory: its plugin root is where an "
            "installed plugin id is looked up (default: NEXO_CONFIG_DIR, ./config, "
            "$NEXO_HOME/config).",
            metavar="<path>",
            parser=named_path("--config", "the daemon's configuration directory"),
        ),
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Warnings fail too (for SDK and plugin CI).")
    ] = False,
    host_calls: Annotated[
        bool,
        typer.Option(
            "--host-calls",
            help="After the handshake, play the daemon's side of the broker and host calls: "
            "broker.event on the subscribed topics, and memory.recall / llm.complete answered "
            "with results, errors, a stream and a call left in flight (on with --strict).",
        ),
    ] = False,
    no_sandbox: Annotated[
        bool,
        typer.Option(
            "--no-sandbox",
            help="Run the plugin without the bwrap sandbox the daemon wraps it in when "
            "[plugin.sandbox] is enabled (its filesystem, network and user limits are then "
            "not exercised).",
        ),
    ] = False,
    max_download_size: MaxDownloadSizeOption = None,
    max_entries: MaxEntriesOption = None,
    max_total_size: MaxTotalSizeOption = None,
    max_entry_size: MaxEntrySizeOption = None,
    json_output: JsonOption = False,
) -> None:
    """Spawn a plugin as a minimal nexo host and check its JSON-RPC handshake.

    A check fails where the daemon would refuse or kill the plugin and warns where only
    the written contract is broken. A release .tar.gz is unpacked within the archive
    limits install applies (--max-entries and the sizes raise them); a directory, a
    manifest or an installed plugin is read as it is, and the limit flags, accepted for
    scripts that pass them everywhere, change nothing there.

    Exit 0 when no check fails (warnings allowed unless --strict), 1 when one fails, 2 when
    the target has nothing to run, is ambiguous, or an option is invalid.
    """
    # Imported here so other commands do not pay for the check machinery.
    from nexo_pkg.check import run_check  # noqa: PLC0415

    report = answer(
        lambda: run_check(
            target,  # as typed: `./weather` is a path, `weather` may be an installed id
            timeout_ms=timeout_ms,
            nexo_version=nexo_version,
            invoke=_parse_invoke(invoke, args),
            dest=dest,
            strict=strict,
            installed_root=lambda: _daemon_plugin_root(config, target),
            sandbox=not no_sandbox,
            host_calls=host_calls,
            config=config,
            limits=archive_limits(
                max_download=max_download_size,
                max_entries=max_entries,
                max_total=max_total_size,
                max_entry=max_entry_size,
            ),
        ),
        json_output=json_output,
        show=lambda shown: show_report(shown, sys.stdout),
    )
    raise typer.Exit(EXIT_OK if report.ok else EXIT_FAILURE)


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the `plugin` sub-app."""
    app.command("check")(check_command)


def _daemon_plugin_root(config: Path | None, target: str) -> Path:
    """The plugin root of the daemon's configuration that holds the plugin ``target`` names,
    among every search path the daemon discovers (as ``list`` shows them), else the install
    root; imported only when an id is looked up."""
    from nexo_pkg.install import api as install_api  # noqa: PLC0415

    roots = install_api.load_daemon_config(install_api.config_dir(config)).plugin_roots()
    holding = [root for root in roots if install_api.installed_versions(root, target)]
    return (holding or list(roots))[0]
