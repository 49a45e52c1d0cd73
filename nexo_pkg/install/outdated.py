"""``nexo plugin outdated``: each installed plugin against the newest version its source
offers, read from release metadata and manifest assets alone — no tarball is downloaded.

The lookup of "the newest version" is passed in (:data:`LatestLookup`), so this module
knows nothing of registries or HTTP: the CLI gives it one built on
:func:`nexo_pkg.install.pipeline.receipt_source`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.threads import run_bounded
from nexo_pkg.core.version import VersionError, compare_versions
from nexo_pkg.install.compat import DaemonVersion, excluding_requirement
from nexo_pkg.install.receipts import (
    RECEIPT_UNREADABLE,
    Installed,
    Receipt,
    installed_versions,
    scan_installed,
    unreadable_installs,
)
from nexo_pkg.install.root import is_removal_leftover
from nexo_pkg.sources.api import UNKNOWN_ORIGIN, origin_label

Status = Literal[
    "outdated", "current", "ahead", "pinned", "held", "incompatible", "local", "unknown", "failed"
]


@dataclass(frozen=True)
class LatestVersion:
    """The newest version a source offers: its version, where it was read (tag) and its
    manifest (a release's manifest asset, a registry annotation), read when first asked."""

    version: str
    tag: str | None = None
    read_manifest: Callable[[], str | None] = field(default=lambda: None, compare=False, repr=False)


# (receipt) -> the newest version its source offers, ``None`` when its source cannot be
# asked again (a local file); raises NexoError when it cannot tell.
LatestLookup = Callable[[Receipt], LatestVersion | None]


@dataclass(frozen=True)
class OutdatedEntry:
    """One installed plugin and what its source offers now."""

    plugin_id: str
    installed: str
    source: str
    path: Path
    status: Status
    latest: LatestVersion | None = None
    error: NexoError | None = None
    # With the daemon's version known: the newest version's min_nexo_version that excludes it.
    needs: str | None = None
    daemon: DaemonVersion | None = None
    # Status ``unknown``: why the plugin is not checked, and how to make its origin known.
    note: str | None = None

    @property
    def is_outdated(self) -> bool:
        return self.status == "outdated"

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "id": self.plugin_id,
            "installed": self.installed,
            "latest": self.latest.version if self.latest else None,
            "latest_tag": self.latest.tag if self.latest else None,
            "source": self.source,
            "status": self.status,
            "outdated": self.is_outdated,
            "path": str(self.path),
        }
        if self.needs is not None and self.daemon is not None:
            document["min_nexo_version"] = self.needs
            document["nexo_version"] = self.daemon.version
            document["nexo_version_source"] = self.daemon.source
        if self.error is not None:
            document["error"] = self.error.to_json()
        if self.note is not None:
            document["note"] = self.note
        return document


def source_label(receipt: Receipt) -> str:
    """Where a plugin came from, as ``list`` shows it (without the tag)."""
    return origin_label(receipt.origin())


def unknown_origin_note(item: Installed) -> str:
    """Why a plugin whose receipt names no known origin is not checked, and how to record
    where it comes from."""
    from nexo_pkg.install.remedy import reinstall_command  # noqa: PLC0415 (a note)

    receipt = item.receipt
    source = receipt.source if receipt is not None else ""
    return (
        f"its receipt names no known origin (source {source!r}), so there is nothing to "
        f"check it against; {reinstall_command(item)}"
    )


def _compare(latest: str, installed: str) -> Status:
    try:
        order = compare_versions(latest, installed)
    except VersionError:
        # An installed version that is not semver cannot be ordered: report any other
        # version as newer, as ``upgrade`` would install it.
        return "current" if latest == installed else "outdated"
    if order > 0:
        return "outdated"
    return "current" if order == 0 else "ahead"


def _manifest_id(path: Path) -> str | None:
    from nexo_pkg.install.listing import manifest_identity  # noqa: PLC0415

    return manifest_identity(path)[0]


def _unreadable_entry(item: Installed) -> OutdatedEntry:
    """A plugin whose receipt cannot be read, named as ``list`` names it (by its manifest,
    which the daemon loads all the same): ``unknown``, with how to record where it comes
    from."""
    from nexo_pkg.install.listing import manifest_identity  # noqa: PLC0415
    from nexo_pkg.install.remedy import reinstall_command  # noqa: PLC0415 (a note)

    plugin_id, version = manifest_identity(item.path)
    note = f"{item.problem}, so there is nothing to check it against; {reinstall_command(item)}"
    return OutdatedEntry(
        plugin_id or item.path.name, version or "-", UNKNOWN_ORIGIN, item.path, "unknown",
        note=note,
    )  # fmt: skip


def _entry(item: Installed, lookup: LatestLookup, daemon: DaemonVersion | None) -> OutdatedEntry:
    receipt = item.receipt
    if receipt is None:
        return _unreadable_entry(item)
    label = source_label(receipt)

    def entry(
        status: Status,
        latest: LatestVersion | None = None,
        error: NexoError | None = None,
        needs: str | None = None,
    ) -> OutdatedEntry:
        return OutdatedEntry(
            receipt.id, receipt.version, label, item.path, status, latest=latest, error=error,
            needs=needs, daemon=daemon if needs is not None else None,
        )  # fmt: skip

    try:
        latest = lookup(receipt)
    except NexoError as error:
        return entry("failed", error=error)
    if latest is None:
        if receipt.origin_known:
            return entry("local")  # a local file is what it is
        return replace(entry("unknown"), note=unknown_origin_note(item))
    status = _compare(latest.version, receipt.version)
    if status == "outdated" and receipt.upgrade_pin is not None:
        # Installed from an explicit tag: `upgrade` stays on it (as the reference does).
        status = "pinned"
    if status == "outdated" and daemon is not None:
        # `upgrade` does not install a newest version whose manifest excludes the daemon.
        try:
            manifest = latest.read_manifest()
        except NexoError as error:
            return entry("failed", latest, error=error)
        needs = excluding_requirement(manifest, daemon) if manifest is not None else None
        if needs is not None:
            return entry("incompatible", latest, needs=needs)
    return entry(status, latest)


def outdated(
    roots: Path | tuple[Path, ...],
    plugin_ids: Iterable[str],
    lookup: LatestLookup,
    *,
    jobs: int = 1,
    prepare: Callable[[list[Receipt]], None] | None = None,
    daemon: DaemonVersion | None = None,
    on_interrupt: Callable[[], object] | None = None,
) -> list[OutdatedEntry]:
    """Compare every installed plugin of every plugin root (or those named) with the newest
    version its source offers, as ``lookup`` reads it; plugins whose source cannot be asked
    again are reported as ``local`` (a local file) or ``unknown`` (a receipt that names no
    known origin), those installed from an explicit tag
    with a newer release as ``pinned``, those whose lookup fails as ``failed`` (the others
    go on). With the ``daemon``'s version known, a newer version whose manifest's
    ``min_nexo_version`` excludes it is ``incompatible`` (its manifest read for that alone),
    as ``upgrade`` does not install it. ``prepare`` hears every receipt before the first
    lookup (to ask for many at once); ``jobs`` lookups run at a time; the entries come in
    the same order whatever their number; ``on_interrupt`` stops the lookups under way when
    the run is interrupted (:func:`~nexo_pkg.core.threads.run_bounded`). Raises
    ``not_installed`` for a named id installed in no root, ``io`` when a root cannot be
    read."""
    all_roots = (roots,) if isinstance(roots, Path) else roots
    wanted = list(dict.fromkeys(plugin_ids))
    items: list[Installed] = []
    if wanted:
        for plugin_id in wanted:
            found = next(
                (m[0] for root in all_roots if (m := installed_versions(root, plugin_id))), None
            )
            if found is None:
                # Installed with a receipt that cannot be read: reported (``unknown``).
                found = next(
                    (m[0] for root in all_roots if (m := unreadable_installs(root, plugin_id))),
                    None,
                )
            if found is None:
                where = ", ".join(str(root) for root in all_roots)
                raise NexoError(
                    f"plugin {plugin_id!r} is not installed in {where} (see `nexo plugin list`)",
                    kind="not_installed",
                    details={"id": plugin_id},
                )
            items.append(found)
    else:
        listed: list[Installed] = []
        for root in all_roots:
            listed.extend(
                item
                for item in scan_installed(root)
                if item.receipt is not None or (item.problem or "").startswith(RECEIPT_UNREADABLE)
            )
        # A tree whose receipt cannot be read is reported (``unknown``) unless a readable
        # receipt names the id its manifest gives.
        named = {item.receipt.id for item in listed if item.receipt is not None}
        items.extend(
            item
            for item in listed
            if item.receipt is not None or _manifest_id(item.path) not in named
        )
        if any(is_removal_leftover(item.path.name) for item in items):
            # A tree a `remove` left that the daemon skips is no install (one it loads is).
            from nexo_pkg.install.link import linked_plugins  # noqa: PLC0415
            from nexo_pkg.install.listing import skipped_removal_leftovers  # noqa: PLC0415

            links = tuple(link for root in all_roots for link in linked_plugins(root))
            skipped = skipped_removal_leftovers(items, links)
            items = [item for item in items if item.path not in skipped]
    if prepare is not None:
        prepare([item.receipt for item in items if item.receipt is not None])
    return run_bounded(
        lambda item: _entry(item, lookup, daemon), items, jobs=jobs, on_interrupt=on_interrupt
    )
