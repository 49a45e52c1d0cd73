"""``nexo plugin outdated``: each installed plugin against the newest version its source
offers, read from release metadata and manifest assets alone — no tarball is downloaded.

The lookup of "the newest version" is passed in (:data:`LatestLookup`), one per kind of
source, so this module knows nothing of registries or HTTP: the CLI gives it the GitHub
lookup of :mod:`nexo_pkg.install.pipeline` and the registry one of :mod:`nexo_pkg.fleet`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import semver

from nexo_pkg.errors import NexoError
from nexo_pkg.install.store import Installed, Receipt, installed_versions, scan_installed

__all__ = ["LatestLookup", "LatestVersion", "OutdatedEntry", "Status", "outdated"]

Status = Literal["outdated", "current", "ahead", "local", "failed"]


@dataclass(frozen=True)
class LatestVersion:
    """The newest version a source offers: its version and where it was read (tag)."""

    version: str
    tag: str | None = None


# (receipt) -> the newest version its source offers; raises NexoError when it cannot tell.
LatestLookup = Callable[[Receipt], LatestVersion]


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
        if self.error is not None:
            document["error"] = self.error.to_json()
        return document


def source_label(receipt: Receipt) -> str:
    """Where a plugin came from, as ``list`` shows it (without the tag)."""
    if receipt.registry is not None:
        return receipt.registry.split("@", 1)[0]
    if receipt.source == "github-releases" and receipt.owner and receipt.repo:
        return f"{receipt.owner}/{receipt.repo}"
    return "local file"


def _compare(latest: str, installed: str) -> Status:
    try:
        order = semver.Version.parse(latest).compare(installed)
    except ValueError:
        # An installed version that is not semver cannot be ordered: report any other
        # version as newer, as ``upgrade`` would install it.
        return "current" if latest == installed else "outdated"
    if order > 0:
        return "outdated"
    return "current" if order == 0 else "ahead"


def _entry(item: Installed, lookups: dict[str, LatestLookup]) -> OutdatedEntry:
    receipt = item.receipt
    assert receipt is not None  # noqa: S101 (callers pass installs with receipts)
    label = source_label(receipt)
    kind = "registry" if receipt.registry is not None else receipt.source
    lookup = lookups.get(kind)

    def entry(
        status: Status, latest: LatestVersion | None = None, error: NexoError | None = None
    ) -> OutdatedEntry:
        return OutdatedEntry(
            receipt.id, receipt.version, label, item.path, status, latest=latest, error=error
        )

    if lookup is None or (kind == "github-releases" and not (receipt.owner and receipt.repo)):
        return entry("local")
    try:
        latest = lookup(receipt)
    except NexoError as error:
        return entry("failed", error=error)
    return entry(_compare(latest.version, receipt.version), latest)


def outdated(
    dest: Path,
    plugin_ids: Iterable[str],
    lookups: dict[str, LatestLookup],
) -> list[OutdatedEntry]:
    """Compare every installed plugin (or those named) with the newest version its source
    offers. ``lookups`` maps a receipt's source kind (``github-releases``, ``registry``) to
    its lookup; plugins from other sources (a local file) are reported as ``local``.

    A lookup that fails marks that plugin ``failed`` with its error and the others go on.
    Raises ``not_installed`` for a named id that is not installed, ``io`` when the root
    cannot be read.
    """
    wanted = list(dict.fromkeys(plugin_ids))
    if wanted:
        items: list[Installed] = []
        for plugin_id in wanted:
            matches = installed_versions(dest, plugin_id)
            if not matches:
                raise NexoError(
                    f"plugin {plugin_id!r} is not installed in {dest} (see `nexo plugin list`)",
                    kind="not_installed",
                    details={"id": plugin_id},
                )
            items.append(matches[0])
    else:
        items = [item for item in scan_installed(dest) if item.receipt is not None]
    return [_entry(item, lookups) for item in items]
