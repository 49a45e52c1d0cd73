"""``nexo plugin list``: the plugin roots a command works on, and the rendering of what ``list``
shows of them (text and ``--json``; the listing itself is built by
:mod:`nexo_pkg.install.listing`).

:func:`fast_list` is a small argument parser that :func:`nexo_pkg.cli.main.main` uses for
``plugin list``, so listing does not pay for importing Typer (as ``plugin lint``'s
:func:`~nexo_pkg.cli.linting.fast_lint`). Anything it does not understand (``--help``, a typo, a
repeated option, shell completion) falls through to Typer, which gives the usual help and
usage errors.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nexo_pkg.cli.common import guarded, plain_options, result_line
from nexo_pkg.core.credentials import masked, without_credentials
from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.output import emit_json, say, warn
from nexo_pkg.core.terminal import printable
from nexo_pkg.install import api as install_api
from nexo_pkg.manifest.daemon_config import DISCOVERY_FILES


def plugin_roots(
    dest: Path | None, config: Path | None, *, installing: bool = False
) -> tuple[Path, ...]:
    """``--dest`` alone, else every plugin root of the daemon's configuration, the install
    root first; warns about search paths that probably do not mean what they say. With
    ``installing``, an install root that is a file is a configuration error at once. A
    ``--config`` that names no directory is a configuration error beside ``--dest`` too:
    a mistyped path is never passed over in silence."""
    if dest is not None:
        if config is not None:
            install_api.config_dir(config)
        return (install_api.install_root(dest),)
    daemon = install_api.load_daemon_config(install_api.config_dir(config, reads=DISCOVERY_FILES))
    for message in daemon.warnings:
        warn(printable(message))
    if installing:
        daemon.checked_install_root()
    return daemon.plugin_roots()


def discovery_states(config: Path | None) -> Any:
    """The daemon's discovery ``disabled``/``allowlist`` lists, or ``None`` (with a warning)
    when its configuration cannot be read: ``list`` still lists what is installed."""
    try:
        return install_api.discovery_state(install_api.config_dir(config, reads=DISCOVERY_FILES))
    except NexoError as error:
        warn(f"discovery state unknown: {printable(error.message)}")
        return None


def _shown(path: Path) -> str:
    """``path`` as printed: a root named with a URL's credentials (``--dest
    https://USER:TOKEN@…``) never shows them."""
    return printable(without_credentials(str(path)))


def _row(  # noqa: PLR0917 - one parameter a column
    plugin: str, version: str, origin: str, signature: str, state: str, path: Path | str
) -> str:
    line = f"{plugin:<24} {version:<12} {origin:<40} {signature:<10} {state:<16} {path}"
    # A root named with a URL's credentials (`--dest https://USER:TOKEN@…`) never shows them.
    return printable(without_credentials(line))


def list_plugins(
    dest: Path | None, config: Path | None, *, include_orphan: bool, json_output: bool
) -> None:
    """``nexo plugin list``: one line per plugin on stdout (a header on a terminal), or the
    ``--json`` document, of the listing :mod:`nexo_pkg.install.listing` builds."""
    roots = guarded(lambda: plugin_roots(dest, config), json_output=json_output)
    items = guarded(lambda: install_api.scan_roots(roots, kept=True), json_output=json_output)
    listing = install_api.build_listing(roots, items, discovery_states(config))
    if json_output:
        emit_json(masked(listing.to_json(include_orphan=include_orphan)))
        return
    if listing.is_empty(include_orphan=include_orphan):
        say(f"No plugins installed in {', '.join(_shown(each) for each in roots)}.")
        return
    lines = [
        _row(row.plugin, row.version, row.origin, row.signature, row.state, row.path)
        for row in listing.rows(include_orphan=include_orphan)
    ]
    if sys.stdout.isatty():
        # A header for the person reading; a pipe gets one line per plugin (`wc -l`).
        lines.insert(0, _row("ID", "VERSION", "ORIGIN", "SIGNATURE", "STATE", "PATH"))
    # One write for every row (a thousand plugins: not a thousand writes when unbuffered).
    if lines:
        result_line("\n".join(lines))
    for path in sorted(listing.shadowed):
        # A note, not a state: the rows keep their columns (`"shadowed"` in --json).
        say(
            f"note: the daemon skips {_shown(path)}: an earlier search path or name "
            "holds the same id (`nexo plugin doctor` reports it as shadowed)"
        )
    for path in sorted(listing.removed):
        say(
            f"note: {_shown(path)} is no install: a `remove` left it there, unable to "
            "delete it, and the daemon skips it (`nexo plugin doctor` names the command that "
            "deletes it)"
        )


_VALUE_FLAGS = {"--dest": "dest", "--config": "config", "--color": "color"}
_BOOL_FLAGS = {
    "--include-orphan": "include_orphan",
    "--json": "json_output",
    "--quiet": "quiet",
    "-q": "quiet",
    "--verbose": "verbose",
    "-v": "verbose",
}


def fast_list(arguments: Sequence[str]) -> int | None:
    """Run ``nexo plugin list ARGUMENTS`` without Typer; ``None`` means "let Typer do it"."""
    parsed = plain_options(arguments, _BOOL_FLAGS, _VALUE_FLAGS)
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
