"""``nexo plugin doctor``: one report over a host's installed plugins and the daemon's plugin
configuration, saying what would make the daemon skip or fail a plugin.

Every directory of the plugin root is looked at as the daemon's discovery would meet it, and
each installed plugin goes through the checks nexo-pkg has: its files re-hashed against the
receipt (``verify``), its manifest linted against the daemon it is for (``lint``, with
``--nexo-version`` when the version is known, so ``min_nexo_version`` counts), its handshake
spawned and checked (``check``), its host requirements (``requires``: the
``requires.nexo_capabilities`` the daemon would not find wired, a warning as at the daemon's
boot), its discovery state (``disabled``, outside the allowlist, a root the daemon's discovery does
not walk).
Around them: ids the daemon would meet twice (it keeps the first by name and skips the
rest), directories without a receipt or with one that cannot be read, development links,
leftovers of interrupted runs under ``.nexo/``, and a lock file older than its wanted set.

A finding is an ``error`` when the daemon would refuse, skip or fail to start the plugin (or
its files are not what was installed), or when the commands that change the root would fail
on it (a file in place of its bookkeeping directory), a ``warning`` when the daemon would load
a plugin but something needs a look, a ``note`` for a state the operator chose (a disabled
plugin).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.terminal import shell_command
from nexo_pkg.fleet.pool import run_bounded
from nexo_pkg.install.api import (
    BOOKKEEPING_DIR,
    CLEANED_BY,
    JOURNAL_AREA,
    LEGACY_PREFIXES,
    RECEIPT_UNREADABLE,
    REMOVING_AREA,
    STAGING_AREA,
    DaemonReach,
    DiscoveryState,
    Installed,
    blocked_bookkeeping,
    is_leftover,
    is_microapp,
    is_removal_leftover,
    kept_links,
    linked_plugin,
    reinstall_command,
    scan_installed,
    scan_kept,
    unmet_host_requirements,
    verify_installed,
)
from nexo_pkg.manifest.names import find_manifest

if TYPE_CHECKING:
    from nexo_pkg.core.diagnostics import FileResult
    from nexo_pkg.manifest.document import ParsedManifest

__all__ = ["DoctorReport", "Finding", "HandshakeCheck", "diagnose"]

Severity = Literal["error", "warning", "note"]

# (plugin directory, its manifest as doctor read it: path, bytes, lint's parse, or None) ->
# (ok, warnings, one-line summary); raises NexoError when the plugin cannot be spawned at all.
# Passed in so this module does not depend on how checks run.
HandshakeCheck = Callable[
    [Path, "tuple[Path, bytes, ParsedManifest] | None"], tuple[bool, int, str]
]


@dataclass(frozen=True)
class Finding:
    """One thing the doctor noticed."""

    severity: Severity
    check: str
    message: str
    plugin_id: str | None = None
    path: Path | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "check": self.check,
            "id": self.plugin_id,
            "path": str(self.path) if self.path else None,
            "message": self.message,
        }


@dataclass
class DoctorReport:
    """Everything :func:`diagnose` found, plugin by plugin and for the root as a whole."""

    dest: Path
    plugins: list[str] = field(default_factory=list)
    roots: tuple[Path, ...] = ()
    findings: list[Finding] = field(default_factory=list)
    #: The framework capabilities the daemon wires; ``None`` when its configuration is unknown.
    wired: frozenset[str] | None = None

    @property
    def ok(self) -> bool:
        """No finding would make the daemon skip or fail a plugin, nor the commands that
        change the root fail on it."""
        return not any(finding.severity == "error" for finding in self.findings)

    def add(self, severity: Severity, check: str, message: str, **where: Any) -> None:
        self.findings.append(Finding(severity, check, message, **where))

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "dest": str(self.dest),
            "roots": [str(root) for root in self.roots or (self.dest,)],
            "plugins": self.plugins,
            "errors": sum(1 for f in self.findings if f.severity == "error"),
            "warnings": sum(1 for f in self.findings if f.severity == "warning"),
            "findings": [finding.to_json() for finding in self.findings],
            "wired_capabilities": None if self.wired is None else sorted(self.wired),
        }


def _lint_manifest(
    path: Path, nexo_version: str | None
) -> tuple[bytes, FileResult, ParsedManifest | None] | OSError:
    """The manifest at ``path`` read and linted: its bytes, the lint result and the manifest
    lint parsed (``None`` when it was not linted as one); the error when it cannot be read."""
    from nexo_pkg.core.files import read_regular_bytes  # noqa: PLC0415
    from nexo_pkg.lint.engine import lint_bytes_keeping  # noqa: PLC0415
    from nexo_pkg.manifest.names import MAX_MANIFEST_BYTES  # noqa: PLC0415
    from nexo_pkg.manifest.options import LintOptions  # noqa: PLC0415

    try:
        # As the daemon reads it (a link followed), but only a regular file, and no more than
        # lint reads (a byte past the limit is enough for lint to say it is too large): one
        # swapped for a FIFO since it was found never blocks, a huge one is never read whole.
        raw = read_regular_bytes(path, MAX_MANIFEST_BYTES, follow_links=True)
    except OSError as exc:
        return exc
    result, parsed = lint_bytes_keeping(
        raw, path=str(path), options=LintOptions(nexo_version=nexo_version)
    )
    return raw, result, parsed


def _as_tomllib_reads(
    path: Path, linted: tuple[bytes, FileResult, ParsedManifest | None] | OSError
) -> tuple[str, dict[str, Any]] | None:
    """The name of the manifest at ``path`` and the document lint parsed from it, when that is
    exactly what ``tomllib`` reads from its bytes (for :func:`verify_installed`, which then
    does not parse it again); else ``None``."""
    if isinstance(linted, OSError):
        return None
    raw, _, parsed = linted
    if parsed is None or parsed.syntax_errors:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return (path.name, parsed.data) if parsed.text == text else None


def _as_read(
    path: Path | None, linted: tuple[bytes, FileResult, ParsedManifest | None] | OSError | None
) -> tuple[Path, bytes, ParsedManifest] | None:
    """The manifest at ``path`` as lint read and parsed it, for the handshake not to parse it
    again; ``None`` when it was not read or not parsed as a manifest."""
    if path is None or linted is None or isinstance(linted, OSError) or linted[2] is None:
        return None
    return path, linted[0], linted[2]


def _manifest_findings(
    report: DoctorReport,
    path: Path,
    plugin_id: str | None,
    linted: tuple[bytes, FileResult, ParsedManifest | None] | OSError,
) -> tuple[bytes, ParsedManifest | None] | None:
    """The lint findings of the manifest at ``path`` (``linted``: :func:`_lint_manifest`);
    its bytes and the manifest lint parsed (``None`` when it cannot be read)."""
    if isinstance(linted, OSError):
        report.add(
            "error", "manifest", f"cannot read {path.name}: {linted.strerror or linted}",
            plugin_id=plugin_id, path=path,
        )  # fmt: skip
        return None
    raw, result, parsed = linted
    for diagnostic in result.diagnostics:
        severity: Severity = "error" if diagnostic.is_error else "warning"
        line = diagnostic.span.start.line
        report.add(
            severity, "manifest", f"{path.name}:{line}: {diagnostic.code} {diagnostic.message}",
            plugin_id=plugin_id, path=path,
        )  # fmt: skip
    return raw, parsed


def _requirement_findings(
    report: DoctorReport,
    path: Path,
    plugin_id: str | None,
    wired: frozenset[str] | None,
    linted: tuple[bytes, ParsedManifest | None] | None,
) -> None:
    """A ``warning`` per ``requires.nexo_capabilities`` entry the daemon would not find wired:
    it warns at boot and loads the plugin anyway
    (``crates/core/src/agent/nexo_plugin_registry/capability_aggregator.rs:148-163``), and
    its own doctor exits 0 on it (``doctor_render.rs:36-55``). A manifest that cannot be read
    is the manifest check's finding. The document lint parsed (``linted``: the bytes and the
    manifest) is used when it is exactly the one the model reads; else the text is parsed
    here, as the model reads it (undecodable bytes replaced)."""
    from nexo_pkg.manifest.document import MAX_MANIFEST_BYTES  # noqa: PLC0415
    from nexo_pkg.manifest.model import (  # noqa: PLC0415
        ManifestModelError,
        PluginManifest,
        manifest_from_data,
        manifest_from_text,
    )

    if linted is None:
        return  # unreadable: the manifest check said so
    raw, parsed = linted
    # As `read_text` reads it: undecodable bytes replaced, universal newlines.
    text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    try:
        if parsed is not None and not parsed.syntax_errors and parsed.text == text:
            model = manifest_from_data(parsed.data)  # the same document tomllib gives
        else:
            model = manifest_from_text(text, max_bytes=MAX_MANIFEST_BYTES)
    except ManifestModelError:
        return
    if not isinstance(model, PluginManifest):
        return
    for requirement in unmet_host_requirements(model, wired=wired):
        report.add("warning", "requires", requirement.message, plugin_id=plugin_id, path=path)


def _installed_findings(
    report: DoctorReport,
    item: Installed,
    *,
    discovery: DiscoveryState | None,
    nexo_version: str | None,
    handshake: HandshakeCheck | None,
    wired: frozenset[str] | None = None,
    reach: DaemonReach | None = None,
) -> None:
    receipt = item.receipt
    manifest = find_manifest(item.path).path
    # Read and parsed once, for verify's comparison of ids and for the lint findings.
    linted = _lint_manifest(manifest, nexo_version) if manifest is not None else None
    plugin_id: str | None
    if receipt is None:
        # No readable receipt (the root's findings say so): nothing to verify the files
        # against, but the daemon reads the manifest and spawns the plugin all the same.
        assert manifest is not None  # noqa: S101 (diagnose passes such a one with a manifest)
        plugin_id = _manifest_id(manifest)
    else:
        plugin_id = receipt.id
        report.plugins.append(plugin_id)
        if not receipt.origin_known:
            # A hand-edited receipt: the daemon loads the plugin, nothing can be asked again.
            report.add(
                "warning", "receipt",
                f"its receipt names no known origin (source {receipt.source!r}): `upgrade` "
                f"and `outdated` cannot ask where it came from; {reinstall_command(item)}",
                plugin_id=plugin_id, path=item.path,
            )  # fmt: skip
        document = (
            _as_tomllib_reads(manifest, linted)
            if manifest is not None and linted is not None
            else None
        )
        verified = verify_installed(item, manifest=document)
        if receipt.files is None and not item.path.is_symlink() and item.path.is_dir():
            # A receipt the reference installer wrote: nothing changed, nothing to compare
            # with; the daemon loads the plugin all the same (a warning, as for no receipt).
            report.add(
                "warning", "verify", f"cannot verify its files: {verified.problem}",
                plugin_id=plugin_id, path=item.path,
            )  # fmt: skip
        elif not verified.ok:
            changed = [
                *verified.modified, *verified.missing, *verified.extra, *verified.mode_changed
            ]  # fmt: skip
            detail = verified.problem or ", ".join(changed[:5])
            report.add(
                "error", "verify", f"files differ from the install receipt: {detail}",
                plugin_id=plugin_id, path=item.path,
            )  # fmt: skip
    if manifest is None or linted is None:
        report.add(
            "error", "manifest", "no plugin.toml or nexo-plugin.toml: the daemon skips it",
            plugin_id=plugin_id, path=item.path,
        )  # fmt: skip
    else:
        kept = _manifest_findings(report, manifest, plugin_id, linted)
        _requirement_findings(report, manifest, plugin_id, wired, kept)
    if plugin_id is None:
        return  # a manifest the daemon refuses: it loads and spawns nothing from here
    # A microapp is loaded by the extension host under extensions.yaml's lists, never under
    # discovery.yaml's (src/main.rs:6530-6543, crates/extensions/src/discovery.rs:329-360).
    microapp = partial(is_microapp, item.path)
    # A root the daemon's discovery never walks: nothing there is loaded (a warning: the
    # operator may mean to list it; see nexo_pkg/install/reach.py for the daemon's walks).
    unreached = None if reach is None else reach.unreached(item.path, plugin_id, microapp=microapp)
    if unreached is not None:
        # With no daemon configured, only the fallback root is judged: a note, as the
        # reference installer's line when it falls back to that root.
        severity: Severity = "warning" if reach is not None and reach.configured else "note"
        report.add(severity, "discovery", unreached, plugin_id=plugin_id, path=item.path)
    why = discovery.skipped_by(plugin_id, microapp=microapp) if discovery is not None else None
    if why is not None:
        report.add(
            "note", "discovery", f"{why}: the daemon does not load it",
            plugin_id=plugin_id, path=item.path,
        )  # fmt: skip
        return  # the daemon never spawns it: its handshake does not matter
    if handshake is None:
        return
    try:
        ok, warnings, summary = handshake(item.path, _as_read(manifest, linted))
    except NexoError as error:
        ok, warnings, summary = False, False, f"cannot be spawned: {error.message}"
    if not ok and not os.path.lexists(item.path):
        # doctor only reads the root: an upgrade, rollback or remove that ran meanwhile took
        # this version out of the daemon's sight while it ran, which is no fault of the plugin.
        report.add(
            "warning", "check",
            f"{item.path.name} left the root while it was checked (another nexo command "
            "replaced or removed it); run doctor again once it is done",
            plugin_id=plugin_id, path=item.path,
        )  # fmt: skip
        return
    if not ok:
        report.add("error", "check", summary, plugin_id=plugin_id, path=item.path)
    elif warnings:
        report.add("warning", "check", summary, plugin_id=plugin_id, path=item.path)


def _root_findings(
    report: DoctorReport, items: list[Installed], leftovers: dict[Path, _Leftover]
) -> None:
    """Ids met twice, directories that are not installs, leftovers of interrupted runs
    (``leftovers``: :func:`_leftovers_in_order`)."""
    first: dict[str, Path] = {}
    for item, plugin_id, loaded_from in leftovers.values():
        _leftover_in_root(report, item.path, plugin_id, loaded_from)
    for item in items:
        if item.path in leftovers:
            # What the daemon loads from a leftover is its id's first directory (said above).
            _, plugin_id, loaded_from = leftovers[item.path]
            if plugin_id is not None and loaded_from == item.path:
                first.setdefault(plugin_id, item.path)
            continue
        plugin_id = item.plugin_id
        if plugin_id is None:
            link = linked_plugin(item.path)
            if link is not None:
                report.add(
                    "warning", "link",
                    f"development link to {link.target} (`install --link`): not verified",
                    plugin_id=link.plugin_id, path=item.path,
                )  # fmt: skip
                plugin_id = link.plugin_id
            elif (manifest := find_manifest(item.path).path) is not None:
                report.add(
                    "warning", "receipt",
                    f"{item.problem}: the daemon still reads its manifest, but nexo-pkg cannot "
                    "verify, upgrade or roll it back",
                    path=item.path,
                )  # fmt: skip
                # The daemon loads it all the same: an installed plugin of its id named after
                # it is skipped.
                plugin_id = _manifest_id(manifest)
                if plugin_id is None:
                    continue
            else:
                if (item.problem or "").startswith(RECEIPT_UNREADABLE):
                    # Neither its receipt nor a manifest can be read (a directory this user
                    # may not open): an install nothing here can judge.
                    report.add(
                        "warning", "receipt",
                        f"{item.problem}, and no manifest can be read there: nexo-pkg cannot "
                        "verify, upgrade or roll it back, nor tell which plugin the daemon "
                        "would load from it",
                        path=item.path,
                    )  # fmt: skip
                continue
        if plugin_id in first:
            report.add(
                "error", "shadowed",
                f"{item.path} is skipped: the daemon loads {plugin_id} from "
                f"{first[plugin_id]}, first by name",
                plugin_id=plugin_id, path=item.path,
            )  # fmt: skip
        else:
            first[plugin_id] = item.path
    for root in report.roots or (report.dest,):
        _bookkeeping_findings(report, root)
        _leftover_findings(report, root)


# A leftover directly in a root: the tree, the id the daemon would load from it (None: none),
# and the directory the daemon loads that id from (the leftover itself when it comes first).
_Leftover = tuple[Installed, str | None, Path | None]


def _leftovers_in_order(report: DoctorReport, items: list[Installed]) -> dict[Path, _Leftover]:
    """The trees installs and removals left directly in the roots (``.staging-*``,
    ``.removing-*``, and the reference installer's ``<dir>.removing-<hex>``), each with what the
    daemon's walk makes of it: it meets the roots in order and each root's directories by name,
    leftovers included, and loads the first manifest of each id."""
    by_root: dict[Path, list[Installed]] = {}
    for item in items:
        by_root.setdefault(item.path.parent, []).append(item)
    first: dict[str, Path] = {}
    found: dict[Path, _Leftover] = {}
    for root in report.roots or (report.dest,):
        try:
            hidden = [
                Installed(root / entry.name, None)
                for entry in os.scandir(root)
                if entry.name.startswith(LEGACY_PREFIXES) and entry.is_dir(follow_symlinks=False)
            ]
        except OSError:
            hidden = []
        for item in sorted([*by_root.get(root, ()), *hidden], key=lambda item: item.path.name):
            if item.receipt is not None:
                plugin_id = item.plugin_id
            elif (link := linked_plugin(item.path)) is not None:
                plugin_id = link.plugin_id
            else:
                manifest = find_manifest(item.path).path
                plugin_id = _manifest_id(manifest) if manifest is not None else None
            if plugin_id is not None:
                first.setdefault(plugin_id, item.path)
            if is_leftover(item.path.name):
                found[item.path] = (item, plugin_id, first.get(plugin_id or ""))
    return found


def _leftover_in_root(
    report: DoctorReport, path: Path, plugin_id: str | None, loaded_from: Path | None
) -> None:
    """A warning naming a tree an install or a removal left directly in a root, what the
    daemon makes of it, and the command that deletes it."""
    if is_removal_leftover(path.name):
        what = "left by a `remove` that could not delete it (the reference installer's)"
    else:
        what = "left by an install that did not finish"
    if plugin_id is None:
        effect = "the daemon loads nothing from it; it only takes space"
    elif loaded_from == path:
        effect = f"the daemon loads {plugin_id} from it (first by name)"
    else:
        effect = (
            f"the daemon skips it (it loads {plugin_id} from {loaded_from}); it only takes space"
        )
    report.add(
        "warning", "leftover",
        f"{what}: {effect}; delete it: {shell_command('rm', '-rf', '--', str(path))}",
        plugin_id=plugin_id, path=path,
    )  # fmt: skip


def _manifest_id(manifest: Path) -> str | None:
    """The id of the plugin the daemon would load from ``manifest``; ``None`` when it would
    load none (a manifest it refuses shadows nothing)."""
    from nexo_pkg.core.files import read_capped_bytes  # noqa: PLC0415
    from nexo_pkg.manifest.model import (  # noqa: PLC0415
        MAX_MODEL_BYTES,
        ManifestModelError,
        manifest_from_text,
    )

    try:
        text = read_capped_bytes(manifest, MAX_MODEL_BYTES).decode("utf-8")
        return manifest_from_text(text).id
    except (OSError, ValueError, ManifestModelError):
        return None


def _bookkeeping_findings(report: DoctorReport, root: Path) -> None:
    """An error for each file (or anything else that is not a directory) in place of the
    root's bookkeeping directory or one of its areas: the daemon loads the plugins all the
    same, but every command that needs it there (an install, to begin with) refuses the root
    until the operator moves it away, which only they can do: it may be theirs."""
    for path in blocked_bookkeeping(root):
        report.add(
            "error", "root",
            f"a file that is not a directory is in place of {path}, where nexo-pkg keeps the "
            "root's bookkeeping, so the commands that need it there fail; move it away",
            path=path,
        )  # fmt: skip


def _leftover_findings(report: DoctorReport, root: Path) -> None:
    bookkeeping = root / BOOKKEEPING_DIR
    for area in (STAGING_AREA, REMOVING_AREA, JOURNAL_AREA):
        path = bookkeeping / area
        try:
            leftovers = sorted(path.iterdir()) if path.is_dir() else []
        except OSError:
            leftovers = []
        # Under `removing`: also a removal that could not delete every file (`remove`, or
        # the pruning of a kept version), which said so.
        cause = (
            "left by an interrupted run or a removal that could not delete all its files"
            if area == REMOVING_AREA
            else "left by an interrupted run"
        )
        for leftover in leftovers:
            report.add(
                "warning", "leftover", f"{cause}; {CLEANED_BY}",
                path=leftover,
            )  # fmt: skip
    try:
        kept = scan_kept(root)
    except NexoError:
        kept = []
    for item in kept:
        if item.receipt is None:
            # Nothing reads it again: list, rollback and the pruning of kept versions skip it.
            report.add(
                "warning", "leftover",
                f"kept for rollback, but {item.problem}: no rollback can put it back and no "
                "command deletes it; delete it: "
                f"{shell_command('rm', '-rf', '--', str(item.path.parent))}",
                path=item.path.parent,
            )  # fmt: skip
    for link in kept_links(root):
        # Deleting the link leaves what it points to (perhaps outside the root) alone.
        report.add(
            "warning", "leftover",
            "a symbolic link where kept versions go, never made by a run: no rollback puts it "
            "back and no command deletes it; delete it (the link only): "
            f"{shell_command('rm', '--', str(link))}",
            path=link,
        )  # fmt: skip


def _lock_findings(report: DoctorReport, wanted: Path, lock_path: Path) -> None:
    from nexo_pkg.fleet.lock import check  # noqa: PLC0415

    try:
        result = check(wanted, lock_path)
    except NexoError as error:
        # The finding carries the path: its message says what is wrong with the file (and
        # where in it), not the file's name again.
        message = error.message.removeprefix(str(lock_path))
        if position := re.match(r":(\d+):(\d+): ", message):
            line, column = position.groups()
            message = f"line {line}, column {column}: {message[position.end() :]}"
        else:
            message = message.removeprefix(": ")
        report.add("warning", "lock", message, path=lock_path)
        return
    if result.stale:
        report.add(
            "warning", "lock",
            f"{lock_path.name} is stale against {wanted.name} ({'; '.join(result.stale)}): "
            "run `nexo plugin lock`",
            path=lock_path,
        )  # fmt: skip


def diagnose(
    roots: Path | tuple[Path, ...],
    *,
    discovery: DiscoveryState | None,
    nexo_version: str | None = None,
    handshake: HandshakeCheck | None = None,
    lock_files: tuple[Path, Path] | None = None,
    wired: frozenset[str] | None = None,
    jobs: int = 1,
    walker: Sequence[tuple[Path, str]] = (),
    reach: DaemonReach | None = None,
) -> DoctorReport:
    """Look at every plugin under each of ``roots``, the daemon's search paths in its order
    (see the module docstring: an id met in two roots is loaded from the first).

    ``discovery`` is the daemon's discovery state (``None``: unknown); ``handshake`` spawns
    and checks one plugin directory (``None``: not spawned); ``lock_files`` is a wanted set
    and its lock to compare; ``wired`` the capabilities the daemon wires
    (``install.api.wired_capabilities``; ``None``: its configuration is unknown); ``walker``
    the bookkeeping directories the daemon's extension walk reaches, each with what that
    means (``lint.daemon_files.reached_bookkeeping``); ``reach`` where the daemon's two
    discovery walks go (``None``: not judged), a plugin or microapp outside them a warning.
    ``jobs``
    plugins are looked at, and spawned, at a time (each in its own sandbox, under its own
    deadline); the report is the same whatever their number. Raises ``io`` when a root
    cannot be read.
    """
    all_roots = (roots,) if isinstance(roots, Path) else roots
    report = DoctorReport(all_roots[0], roots=all_roots, wired=wired)
    items = [item for root in all_roots for item in scan_installed(root)]

    def one(item: Installed) -> DoctorReport:
        # Each plugin's findings in a report of its own, merged below in the order of the
        # roots: the report does not depend on which plugin finished first.
        own = DoctorReport(report.dest, roots=all_roots, wired=wired)
        _installed_findings(
            own, item, discovery=discovery, nexo_version=nexo_version,
            handshake=handshake, wired=wired, reach=reach,
        )  # fmt: skip
        return own

    # With a receipt, or without a readable one but with a manifest the daemon reads; a tree a
    # removal left counts only when the daemon loads it.
    leftovers = _leftovers_in_order(report, items)
    skipped = {path for path, (_, _, loaded_from) in leftovers.items() if loaded_from != path}
    installed = [
        item
        for item in items
        if item.path not in skipped
        and (
            item.receipt is not None
            or (linked_plugin(item.path) is None and find_manifest(item.path).path is not None)
        )
    ]
    for own in run_bounded(one, installed, jobs=jobs):
        report.plugins.extend(own.plugins)
        report.findings.extend(own.findings)
    _root_findings(report, items, leftovers)
    for path, message in walker:
        report.add("warning", "discovery", message, path=path)
    if lock_files is not None:
        _lock_findings(report, *lock_files)
    return report
