"""CLI for `nexo plugin sbom`: the SBOM of installed plugins on stdout (docs/pack.md, "SBOM")."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from nexo_pkg.cli.common import guarded
from nexo_pkg.cli.completion import installed_ids
from nexo_pkg.cli.install import _holding, _roots, not_installed
from nexo_pkg.cli.options import ConfigOption, DestOption, JsonOption, named_path
from nexo_pkg.core.errors import NexoError, UsageError
from nexo_pkg.core.files import refuse_special_file, write_config_file
from nexo_pkg.core.output import emit_json, say, warn, write_document
from nexo_pkg.core.terminal import printable
from nexo_pkg.install import api as install_api

FORMATS = ("cyclonedx-json",)


def _document(
    plugin_ids: list[str], every: bool, dest: Path | None, config: Path | None
) -> tuple[bytes, list[str]]:
    """The document to print and the warnings about it."""
    from nexo_pkg.sbom.cyclonedx import write_merged  # noqa: PLC0415

    roots = _roots(dest, config)
    scanned = install_api.scan_roots(roots, kept=False)
    items = [item for item in scanned if item.receipt is not None]
    # A directory without a readable receipt is named, never silently left out; a
    # development link (`install --link`) as `list` shows it: a checkout has no receipt.
    links = {link.path: link for root in roots for link in install_api.linked_plugins(root)}
    orphans = [
        f"{link.plugin_id}: a development link ({link.path} -> {link.target}); not described "
        "(a checkout has no install receipt to vouch for its files)"
        if (link := links.get(item.path)) is not None
        else f"{item.path}: {item.problem or 'no install receipt'}; not described (see "
        "`nexo plugin list --include-orphan`)"
        for item in scanned
        if item.receipt is None and every
    ]
    if not every:
        for plugin_id in plugin_ids:
            if not any(item.plugin_id == plugin_id for item in items):
                _holding(roots, plugin_id)  # raises not_installed, naming every root
                raise _unreadable(roots, plugin_id)
        wanted = dict.fromkeys(plugin_ids)
        items = sorted(
            (item for item in items if item.plugin_id in wanted),
            key=lambda item: list(wanted).index(str(item.plugin_id)),
        )
    found = [install_api.installed_sbom(item) for item in items]
    warnings = [*orphans, *(note for each in found for note in each.warnings)]
    if len(found) == 1 and not every:
        return found[0].data, warnings
    host = ", ".join(str(root) for root in roots)
    if not found:
        what = "no installed copies" if links else "no plugins installed"
        warnings.append(f"{what} in {host}: the document lists none")
    return write_merged([each.sbom for each in found], f"nexo plugins in {host}"), warnings


def _unreadable(roots: tuple[Path, ...], plugin_id: str) -> NexoError:
    """``verify_failed`` for ``plugin_id``, installed but with a receipt that cannot be read:
    what it holds cannot be vouched for (never an empty document that says nothing)."""
    found = [u for root in roots for u in install_api.unreadable_installs(root, plugin_id)]
    if not found:
        return not_installed(plugin_id, roots)
    item = found[0]
    return NexoError(
        f"{plugin_id} ({item.path}): {item.problem}; what it holds cannot be vouched for "
        f"({install_api.reinstall_command(item)})",
        kind="verify_failed",
        details={"path": str(item.path)},
    )


def _ascii(data: bytes) -> bytes:
    """``data`` as ``pack`` writes an SBOM: a carried document holding non-ASCII characters
    (``pack`` escapes every one; a hand-made tarball need not) is the same document with
    them escaped, so no bidirectional override or C1 control reaches a terminal raw."""
    if data.isascii():
        return data
    document = json.loads(data)  # validated when it was read
    return (json.dumps(document, indent=2, sort_keys=True) + "\n").encode("ascii")


def sbom_command(
    *,
    plugin_ids: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[ID]...",
            help="Installed plugins to describe (or --all).",
            autocompletion=installed_ids,
        ),
    ] = None,
    every: Annotated[
        bool,
        typer.Option(
            "--all", help="One merged document for every plugin of the root (for scanners)."
        ),
    ] = False,
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            metavar=f"[{'|'.join(FORMATS)}]",
            help="Document format: CycloneDX 1.6 JSON (SPDX is not offered).",
        ),
    ] = "cyclonedx-json",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Write the document to FILE, not stdout (- is stdout).",
            parser=named_path("--output", "the file to write"),
        ),
    ] = None,
    dest: DestOption = None,
    config: ConfigOption = None,
    json_output: JsonOption = False,
) -> None:
    """Print the SBOM of installed plugins: what each one vendors, for Grype, Trivy or
    OSV-Scanner.

    The SBOM a plugin's tarball carried is printed as it is (non-ASCII escaped, as pack
    writes it), once the plugin's files match its install receipt (`nexo plugin verify`)
    and the SBOM describes exactly those files and the packages of their
    lib/*.dist-info; a plugin installed before tarballs carried one gets an SBOM
    derived from its lib/*.dist-info, marked nexo:sbom-origin=derived (a warning says
    so). Several ids, or --all, give one merged CycloneDX document.

    With --json a failure is a JSON document on stdout too ({ok: false, kind, error}), and
    --output prints {ok: true, path}.

    Exit codes: 0 printed; 1 a plugin's files do not match its receipt (verify_failed) or
    its SBOM is unreadable or describes other files (sbom_invalid), it is not
    installed, or --output cannot be written (io); 2 usage error.
    """

    def run() -> tuple[bytes, list[str]]:
        if output_format not in FORMATS:
            raise UsageError(
                f"--format {output_format!r} is not offered; use cyclonedx-json "
                "(CycloneDX 1.6 JSON, which Grype, Trivy and OSV-Scanner read)"
            )
        if every and plugin_ids:
            raise UsageError("name plugin ids or pass --all, not both")
        if not every and not plugin_ids:
            raise UsageError("name the installed plugins to describe, or pass --all")
        return _document(list(plugin_ids or []), every, dest, config)

    data, warnings = guarded(run, json_output=json_output)
    data = _ascii(data)
    for note in warnings:
        warn(printable(note))
    if output is None or str(output) == "-":
        # ASCII JSON (a carried SBOM was validated, a built one is ASCII), written whole
        # under a signal as every other document on stdout.
        write_document(sys.stdout, data.decode("utf-8"))
        return
    target = output

    def write() -> None:
        if target.is_dir():
            raise NexoError(f"cannot write {target}: it is a directory; name a file", kind="io")
        try:
            refuse_special_file(target)
        except OSError:
            # A device, FIFO or socket (`-o /dev/null`, `/dev/stdout`, a shell's `>(…)`) is
            # written into, as a shell's redirection does; a rename would replace it.
            try:
                with target.open("wb") as stream:
                    stream.write(data)
            except OSError as exc:
                raise NexoError(f"cannot write {target}: {exc.strerror or exc}", kind="io") from exc
            return
        # Replaced in one step: a reader sees the old document or the new one.
        write_config_file(target, data)

    guarded(write, json_output=json_output)
    if json_output:
        emit_json({"ok": True, "path": str(target)})
    else:
        say(f"wrote {printable(target)}")


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the `plugin` sub-app."""
    app.command("sbom")(sbom_command)
