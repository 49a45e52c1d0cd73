"""What ``nexo plugin list`` shows of the daemon's plugin roots: every installed plugin with
what install recorded and what the daemon does with it (its discovery state, a hold), the
versions kept for rollback, the development links, and the directories without a readable
receipt. The command line renders a :class:`Listing` as its ``--json`` document or as one
line per plugin (:meth:`Listing.rows`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexo_pkg.core.files import read_regular_bytes
from nexo_pkg.install.hold import holds
from nexo_pkg.install.link import LinkedPlugin, linked_plugins
from nexo_pkg.install.receipts import RECEIPT_UNREADABLE, Installed, Receipt
from nexo_pkg.install.root import is_removal_leftover
from nexo_pkg.manifest.names import MANIFEST_NAMES
from nexo_pkg.manifest.read import ManifestTOMLError, read_manifest

if TYPE_CHECKING:
    from nexo_pkg.install.discovery_edit import DiscoveryState


@dataclass(frozen=True)
class ListingRow:
    """One line of ``list``: the columns a person reads."""

    plugin: str
    version: str
    origin: str
    signature: str
    state: str
    path: Path | str


@dataclass(frozen=True)
class Listing:
    """The plugins of ``roots`` (the install root first). ``states`` is ``None`` when the
    daemon's discovery configuration could not be read (the state is then unknown)."""

    roots: tuple[Path, ...]
    plugins: tuple[tuple[Installed, Receipt], ...]
    links: tuple[LinkedPlugin, ...]
    orphans: tuple[Installed, ...]
    states: DiscoveryState | None
    #: ``(root, id)`` of every hold: a hold is its root's (``<root>/.nexo/holds``), so the same
    #: id in another search path is not held by it.
    held: frozenset[tuple[Path, str]]
    #: Directories the daemon skips: an earlier one (by search path, then by name) has
    #: the same id, as ``doctor``'s ``shadowed`` finding says.
    shadowed: frozenset[Path] = frozenset()
    #: Trees a ``remove`` renamed aside and could not delete (the reference installer's
    #: ``<dir>.removing-<hex>``) that the daemon skips: no installs, listed as orphans.
    removed: frozenset[Path] = frozenset()

    @property
    def unreadable(self) -> tuple[Installed, ...]:
        """The directories whose receipt the reference installer cannot read (always shown:
        the daemon's installer treats them as orphans it lists)."""
        return tuple(
            item for item in self.orphans if (item.problem or "").startswith(RECEIPT_UNREADABLE)
        )

    def is_empty(self, *, include_orphan: bool) -> bool:
        """Nothing to show (``No plugins installed in …``)."""
        orphans = self.orphans if include_orphan else self.unreadable
        return not self.plugins and not self.links and not orphans

    def to_json(self, *, include_orphan: bool) -> dict[str, Any]:
        """``list --json``'s document (``orphans`` only with ``include_orphan``)."""
        # The SBOM reader (and what it imports) only for the document, never for the rows.
        from nexo_pkg.install.sbom import vendored_summary  # noqa: PLC0415

        states, held = self.states, self.held
        document: dict[str, Any] = {
            "ok": True,
            "dest": str(self.roots[0]),
            "roots": [str(each) for each in self.roots],
            "unreadable": [
                {"path": str(item.path), "problem": item.problem} for item in self.unreadable
            ],
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
                    "discovery": None
                    if states is None
                    else states.state(receipt.id, microapp=partial(is_microapp, item.path)),
                    "held": not item.kept and (item.path.parent, receipt.id) in held,
                    "shadowed": item.path in self.shadowed,
                    "vendored": vendored_summary(item),
                }
                for item, receipt in self.plugins
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
                    "discovery": None
                    if states is None
                    else states.state(link.plugin_id, microapp=partial(is_microapp, link.target)),
                    "shadowed": link.path in self.shadowed,
                }
                for link in self.links
            ],
        }
        if include_orphan:
            document["orphans"] = [
                {"id": plugin, "version": version, "path": str(item.path), "problem": item.problem}
                for item in self.orphans
                for plugin, version in [manifest_identity(item.path)]
            ]
        return document

    def rows(self, *, include_orphan: bool) -> list[ListingRow]:
        """One row per plugin, kept version and link, then the orphans (every one with
        ``include_orphan``, else those with an unreadable receipt)."""
        from nexo_pkg.sources.api import origin_label  # noqa: PLC0415

        states, held = self.states, self.held
        rows: list[ListingRow] = []
        for item, receipt in self.plugins:
            # Where it came from and the version it is: `owner/repo@tag`, the pinned registry
            # reference, `local file`.
            origin = origin_label(receipt.origin(), exact=True)
            signature = str(receipt.signature.get("status", "unknown"))
            if item.kept:
                state = "kept"
            else:
                state = (
                    "unknown"
                    if states is None
                    else states.state(receipt.id, microapp=partial(is_microapp, item.path))
                )
                if (item.path.parent, receipt.id) in held:
                    state += ",held"
            rows.append(
                ListingRow(receipt.id, receipt.version, origin, signature, state, item.path)
            )
        for link in self.links:
            linked_microapp = partial(is_microapp, link.target)
            state = (
                "linked"
                if states is None
                else f"{states.state(link.plugin_id, microapp=linked_microapp)},linked"
            )
            rows.append(
                ListingRow(
                    link.plugin_id, link.version, f"link: {link.target}", "-", state, link.path
                )
            )
        for item in self.orphans if include_orphan else self.unreadable:
            plugin, version = manifest_identity(item.path)
            # The id and version its manifest gives, which the daemon loads it as.
            label = "(orphan)" if plugin is None else f"(orphan) {plugin}"
            rows.append(ListingRow(label, version or "", item.problem or "", "", "", item.path))
        return rows


# A manifest longer than this is no plugin's (the daemon's own limit is far below).
_MANIFEST_READ_LIMIT = 1 << 20


def manifest_identity(directory: Path) -> tuple[str | None, str | None]:
    """``[plugin]`` id and version of the manifest the daemon would load from ``directory``
    (``nexo-plugin.toml``, then ``plugin.toml``), each ``None`` when it does not say: only a
    regular file is read, never through a link, at most 1 MiB."""
    for name in MANIFEST_NAMES:
        try:
            raw = read_regular_bytes(directory / name, _MANIFEST_READ_LIMIT)
        except OSError:
            continue
        if len(raw) > _MANIFEST_READ_LIMIT:
            return None, None
        try:
            plugin = read_manifest(raw).get("plugin")
        except ManifestTOMLError:
            return None, None
        if not isinstance(plugin, dict):
            return None, None
        found_id, version = plugin.get("id"), plugin.get("version")
        return (
            found_id if isinstance(found_id, str) else None,
            version if isinstance(version, str) else None,
        )
    return None, None


def is_microapp(directory: Path) -> bool:
    """Whether ``directory`` holds a microapp: an extension-shaped ``plugin.toml``, which the
    daemon's extension host discovers (under ``extensions.yaml``'s rules), not its plugin
    discovery."""
    from nexo_pkg.manifest.microapp import (  # noqa: PLC0415
        MICROAPP_MANIFEST_NAME,
        is_extension_shape,
        read_toml_or_none,
    )

    data = read_toml_or_none(directory / MICROAPP_MANIFEST_NAME)
    return data is not None and is_extension_shape(data)


def first_installed(roots: tuple[Path, ...], plugin_id: str) -> tuple[Path, bool] | None:
    """The install of ``plugin_id`` the daemon meets first in ``roots`` (an installed
    version, a development link, a directory named after it whose receipt cannot be read)
    and whether it is a microapp; ``None`` when no root holds it."""
    from nexo_pkg.install.receipts import scan_installed  # noqa: PLC0415

    for root in roots:
        links = {each.path: each for each in linked_plugins(root)}
        for item in scan_installed(root):
            link = links.get(item.path)
            if link is not None:
                if link.plugin_id == plugin_id:
                    return item.path, is_microapp(link.target)
                continue
            named = item.path.name == plugin_id or item.path.name.startswith(f"{plugin_id}-")
            if item.plugin_id == plugin_id or (item.receipt is None and named):
                return item.path, is_microapp(item.path)
    return None


def build_listing(
    roots: tuple[Path, ...], items: list[Installed], states: DiscoveryState | None
) -> Listing:
    """The listing of ``roots`` from their scanned directories ``items`` (kept versions
    included: :func:`~nexo_pkg.install.receipts.scan_roots`), their holds and development
    links. Reads only; raises nothing for what a root holds."""
    held = frozenset((root, plugin) for root in roots for plugin in holds(root))
    links = tuple(link for each in roots for link in linked_plugins(each))
    linked_paths = {link.path for link in links}
    shadowed = _shadowed(items, links)
    removed = skipped_removal_leftovers(items, links, shadowed=shadowed)
    return Listing(
        roots=roots,
        plugins=tuple(
            (item, item.receipt)
            for item in items
            if item.receipt is not None and item.path not in removed
        ),
        links=links,
        orphans=tuple(
            Installed(item.path, None, REMOVAL_LEFTOVER) if item.path in removed else item
            for item in items
            if (item.receipt is None or item.path in removed)
            and not item.kept
            and item.path not in linked_paths
        ),
        states=states,
        held=held,
        shadowed=shadowed - removed,
        removed=removed,
    )


REMOVAL_LEFTOVER = "left by a `remove` that could not delete it; the daemon skips it"


def skipped_removal_leftovers(
    items: list[Installed],
    links: tuple[LinkedPlugin, ...],
    *,
    shadowed: frozenset[Path] | None = None,
) -> frozenset[Path]:
    """The trees of ``items`` a ``remove`` renamed aside and could not delete (the reference
    installer's ``<dir>.removing-<hex>``) that the daemon skips, an earlier directory holding
    their id: no installs. One it still loads counts as one (the daemon runs it)."""
    if not any(is_removal_leftover(item.path.name) for item in items):
        return frozenset()
    skipped = _shadowed(items, links) if shadowed is None else shadowed
    return frozenset(path for path in skipped if is_removal_leftover(path.name))


def _shadowed(items: list[Installed], links: tuple[LinkedPlugin, ...]) -> frozenset[Path]:
    """The directories of ``items`` (in the daemon's order: search path, then name) whose id
    an earlier one has: the daemon keeps the first and skips them. A directory without a
    readable receipt counts by the id its manifest gives, as the daemon loads it."""
    linked = {link.path: link.plugin_id for link in links}
    first: set[str] = set()
    skipped: set[Path] = set()
    for item in items:
        if item.kept:
            continue
        plugin_id = linked.get(item.path) or item.plugin_id
        if plugin_id is None and item.path not in linked:
            plugin_id = manifest_identity(item.path)[0]
        if plugin_id is None:
            continue
        if plugin_id in first:
            skipped.add(item.path)
        else:
            first.add(plugin_id)
    return frozenset(skipped)
