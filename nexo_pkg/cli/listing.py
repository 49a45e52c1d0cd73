"""``nexo plugin list``: the plugin roots a command works on, and what ``list`` shows of them
(text and ``--json``).

:func:`fast_list` is a small argument parser that :func:`nexo_pkg.cli.main.main` uses for
``plugin list``, so listing does not pay for importing Typer (as ``plugin lint``'s
:func:`~nexo_pkg.cli.lint.fast_lint`). Anything it does not understand (``--help``, a typo, a
repeated option, shell completion) falls through to Typer, which gives the usual help and
usage errors.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexo_pkg.cli.common import guarded, result_line
from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.output import emit_json, say, warn
from nexo_pkg.core.terminal import printable

if TYPE_CHECKING:
    from nexo_pkg.install.link import LinkedPlugin
    from nexo_pkg.install.store import Installed


def plugin_roots(dest: Path | None, config: Path | None) -> tuple[Path, ...]:
    """``--dest`` alone, else every plugin root of the daemon's configuration, the install
    root first; warns about search paths that probably do not mean what they say."""
    from nexo_pkg.install.config import (  # noqa: PLC0415
        config_dir,
        install_root,
        load_daemon_config,
    )

    if dest is not None:
        return (install_root(dest),)
    daemon = load_daemon_config(config_dir(config))
    for message in daemon.warnings:
        warn(printable(message))
    return daemon.plugin_roots()


def scan_roots(roots: tuple[Path, ...], *, kept: bool) -> list[Any]:
    """Every plugin directory in ``roots`` (and with ``kept`` the versions kept for rollback),
    root by root, each recovered first from an interrupted run."""
    from nexo_pkg.install.store import recover_interrupted, scan_installed, scan_kept  # noqa: PLC0415

    found: list[Any] = []
    for root in roots:
        recover_interrupted(root)
        found += [*scan_installed(root), *(scan_kept(root) if kept else ())]
    return found


def discovery_states(config: Path | None) -> Any:
    """The daemon's discovery ``disabled``/``allowlist`` lists, or ``None`` (with a warning)
    when its configuration cannot be read: ``list`` still lists what is installed."""
    from nexo_pkg.install.config import config_dir  # noqa: PLC0415
    from nexo_pkg.install.discovery_edit import discovery_state  # noqa: PLC0415

    try:
        return discovery_state(config_dir(config))
    except NexoError as error:
        warn(f"discovery state unknown: {printable(error.message)}")
        return None


def _document(  # noqa: PLR0917 - what one listing found, as list_plugins gathered it
    roots: tuple[Path, ...],
    plugins: list[tuple[Installed, Any]],
    links: list[LinkedPlugin],
    unreadable: list[Installed],
    states: Any,
    held: dict[str, Any],
) -> dict[str, Any]:
    """The ``--json`` document of a listing (without ``orphans``)."""
    from nexo_pkg.install.sbom import vendored_summary  # noqa: PLC0415 - --json alone

    return {
        "ok": True,
        "dest": str(roots[0]),
        "roots": [str(each) for each in roots],
        "unreadable": [{"path": str(item.path), "problem": item.problem} for item in unreadable],
        "plugins": [
            {
                "id": receipt.id,
                "version": receipt.version,
                "target": receipt.target,
                "source": receipt.source,
                "owner": receipt.owner,
                "repo": receipt.repo,
                "tag": receipt.tag,
                "resolved_tag": receipt.resolved_tag,
                "registry": receipt.registry,
                "signature": receipt.signature.get("status"),
                "signature_scheme": receipt.signature.get("scheme"),
                "installed_at": receipt.installed_at,
                "path": str(item.path),
                "kept": item.kept,
                "discovery": None if states is None else states.state(receipt.id),
                "held": not item.kept and receipt.id in held,
                "vendored": vendored_summary(item),
            }
            for item, receipt in plugins
        ]
        + [
            {
                "id": link.plugin_id,
                "version": link.version,
                "source": "link",
                "linked_to": str(link.target),
                "signature": None,
                "path": str(link.path),
                "kept": False,
                "discovery": None if states is None else states.state(link.plugin_id),
            }
            for link in links
        ],
    }


def _row(  # noqa: PLR0917 - one parameter a column
    plugin: str, version: str, origin: str, signature: str, state: str, path: Path | str
) -> None:
    line = f"{plugin:<24} {version:<12} {origin:<40} {signature:<10} {state:<16} {path}"
    result_line(printable(line))


def _origin(receipt: Any) -> str:
    """Where an install came from and the version it is: ``owner/repo@tag``, the pinned
    registry reference, ``local file``."""
    # The route itself, not the sources face, whose imports would double what `list` costs.
    from nexo_pkg.sources.route import origin_label  # noqa: PLC0415

    return origin_label(receipt.origin(), exact=True)


def list_plugins(
    dest: Path | None, config: Path | None, *, include_orphan: bool, json_output: bool
) -> None:
    """``nexo plugin list``: one line per plugin on stdout (a header on a terminal), or the
    ``--json`` document."""
    from nexo_pkg.install.hold import holds  # noqa: PLC0415
    from nexo_pkg.install.link import linked_plugins  # noqa: PLC0415
    from nexo_pkg.install.store import RECEIPT_UNREADABLE  # noqa: PLC0415

    roots = guarded(lambda: plugin_roots(dest, config), json_output=json_output)
    items = guarded(lambda: scan_roots(roots, kept=True), json_output=json_output)
    states = discovery_states(config)
    held = {plugin: hold for root in roots for plugin, hold in holds(root).items()}
    plugins = [(item, item.receipt) for item in items if item.receipt is not None]
    links = [link for each in roots for link in linked_plugins(each)]
    linked_paths = {link.path for link in links}
    orphans = [
        item
        for item in items
        if item.receipt is None and not item.kept and item.path not in linked_paths
    ]
    unreadable = [item for item in orphans if (item.problem or "").startswith(RECEIPT_UNREADABLE)]
    if json_output:
        document = _document(roots, plugins, links, unreadable, states, held)
        if include_orphan:
            document["orphans"] = [
                {"path": str(item.path), "problem": item.problem} for item in orphans
            ]
        emit_json(document)
        return
    if not plugins and not links and not unreadable and not (include_orphan and orphans):
        say(f"No plugins installed in {printable(', '.join(str(each) for each in roots))}.")
        return
    if sys.stdout.isatty():
        # A header for the person reading; a pipe gets one line per plugin (`wc -l`).
        _row("ID", "VERSION", "ORIGIN", "SIGNATURE", "STATE", "PATH")
    for item, receipt in plugins:
        signature = str(receipt.signature.get("status", "unknown"))
        if item.kept:
            state = "kept"
        else:
            state = "unknown" if states is None else states.state(receipt.id)
            if receipt.id in held:
                state += ",held"
        _row(receipt.id, receipt.version, _origin(receipt), signature, state, item.path)
    for link in links:
        state = "linked" if states is None else f"{states.state(link.plugin_id)},linked"
        _row(link.plugin_id, link.version, f"link: {link.target}", "-", state, link.path)
    for item in orphans if include_orphan else unreadable:
        _row("(orphan)", "", item.problem or "", "", "", item.path)


_VALUE_FLAGS = {"--dest": "dest", "--config": "config", "--color": "color"}
_BOOL_FLAGS = {
    "--include-orphan": "include_orphan",
    "--json": "json_output",
    "--quiet": "quiet",
    "-q": "quiet",
    "--verbose": "verbose",
    "-v": "verbose",
}


def _parse_fast(arguments: Sequence[str]) -> dict[str, str | bool] | None:
    """``plugin list`` options by name, or ``None`` for anything Typer should handle (an
    argument, ``--help``, a typo, an option given twice, an empty or odd value)."""
    from nexo_pkg.cli.common import COLOR_CHOICES  # noqa: PLC0415

    if os.environ.get("_NEXO_COMPLETE"):
        return None  # a shell asking for completions: Typer answers
    parsed: dict[str, str | bool] = {}
    rest = iter(arguments)
    for argument in rest:
        name, has_value, inline = argument.partition("=")
        flag = None if has_value else _BOOL_FLAGS.get(name)
        if flag is not None and flag not in parsed:
            parsed[flag] = True
            continue
        option = _VALUE_FLAGS.get(name)
        value = inline if has_value else next(rest, "")
        if option is None or option in parsed or not value or value.startswith("-"):
            return None
        parsed[option] = value
    if parsed.get("color", "auto") not in COLOR_CHOICES or (
        "quiet" in parsed and "verbose" in parsed
    ):
        return None  # Typer words those usage errors
    return parsed


def fast_list(arguments: Sequence[str]) -> int | None:
    """Run ``nexo plugin list ARGUMENTS`` without Typer; ``None`` means "let Typer do it"."""
    parsed = _parse_fast(arguments)
    if parsed is None:
        return None
    from nexo_pkg.cli.common import set_color, set_verbosity  # noqa: PLC0415
    from nexo_pkg.core.output import report_error  # noqa: PLC0415

    json_output = bool(parsed.get("json_output"))
    dest, config = parsed.get("dest"), parsed.get("config")
    try:
        if "color" in parsed:
            set_color(str(parsed["color"]))
        set_verbosity(quiet=bool(parsed.get("quiet")), verbose=bool(parsed.get("verbose")))
        list_plugins(
            None if dest is None else Path(str(dest)),
            None if config is None else Path(str(config)),
            include_orphan=bool(parsed.get("include_orphan")),
            json_output=json_output,
        )
    except NexoError as error:
        return report_error(error, json_output=json_output)
    return 0
