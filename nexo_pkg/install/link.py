"""``nexo plugin install --link DIR``: a development install that points at a checkout.

The plugin root gets ``<dest>/<id>`` as a symbolic link to the real path of the checkout
(as the reference's ``agent ext install --link`` makes ``<search path>/<id>``), so every edit
in the checkout is what the daemon runs at its next start. There is no receipt and nothing
to re-hash: ``list`` shows the install as ``linked``, ``verify`` refuses it (it vouches only
for installed copies), ``remove`` unlinks it (the checkout is never touched) and ``sync``
leaves it alone. The daemon follows such a link only when ``discovery.follow_symlinks`` is
true (``PluginDiscoveryConfig`` in its ``crates/config/src/types/plugins.rs``): the result
says when it is not.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexo_pkg.core.errors import NexoError, UsageError
from nexo_pkg.core.files import read_config_bytes
from nexo_pkg.core.posix import fsync_directory
from nexo_pkg.install.receipts import installed_versions
from nexo_pkg.install.root import locked_root

MAX_MANIFEST_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class LinkedPlugin:
    """A development link in a plugin root: its id and version as the checkout's manifest
    says now, and where it points."""

    path: Path
    target: Path
    plugin_id: str
    version: str


@dataclass(frozen=True)
class LinkResult:
    """What ``install --link`` made."""

    linked: LinkedPlugin
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": True,
            "id": self.linked.plugin_id,
            "version": self.linked.version,
            "path": str(self.linked.path),
            "linked_to": str(self.linked.target),
            "source": {"type": "link", "path": str(self.linked.target)},
            "warnings": list(self.warnings),
        }


def _identity(directory: Path) -> tuple[str, str]:
    """``(id, version)`` of the plugin checkout in ``directory``; raises ``usage`` or
    ``manifest_invalid``."""
    # The manifest search only to make a link: `list` reads links without it.
    from nexo_pkg.manifest.names import find_manifest  # noqa: PLC0415

    lookup = find_manifest(directory)
    if lookup.path is None:
        raise UsageError(f"{directory} holds no plugin.toml or nexo-plugin.toml to link")
    try:
        raw = read_config_bytes(lookup.path, MAX_MANIFEST_BYTES)
    except OSError as exc:
        raise UsageError(f"cannot read {lookup.path}: {exc.strerror or exc}") from exc
    try:
        text = raw[:MAX_MANIFEST_BYTES].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NexoError(f"{lookup.path} is not UTF-8 TOML", kind="manifest_invalid") from exc
    # The manifest model only here: `list` reads links but never makes one.
    from nexo_pkg.sources.api import identity_from_manifest  # noqa: PLC0415

    identity = identity_from_manifest(text, max_bytes=MAX_MANIFEST_BYTES)
    if identity is None:
        raise NexoError(
            f"{lookup.path} does not name a valid [plugin] id and semver version "
            f"(`nexo plugin lint {directory}` says why)",
            kind="manifest_invalid",
        )
    return identity


def linked_plugin(path: Path) -> LinkedPlugin | None:
    """The development link at ``path``, or ``None`` when ``path`` is no link to a readable
    plugin checkout. Never raises."""
    try:
        if not path.is_symlink():
            return None
        target = path.readlink()
        if not target.is_absolute() or not target.is_dir():
            return None
        plugin_id, version = _identity(target)
    except (OSError, NexoError):
        return None
    return LinkedPlugin(path, target, plugin_id, version)


def link_install(source: Path, dest: Path, *, follow_symlinks: bool | None) -> LinkResult:
    """Link ``<dest>/<id>`` to the checkout ``source``; a false ``follow_symlinks`` (the
    daemon's ``discovery.follow_symlinks``; ``None``: unknown) is named in the warnings.
    Raises ``usage`` for a ``source`` that is no plugin checkout, ``manifest_invalid`` for one
    whose manifest names no id and version, ``already_installed`` when the id is installed (or
    linked) in ``dest`` already, ``io``."""
    # `..` and links on the way resolved now, as the kernel resolves them: a link to
    # `<cwd>/../checkout` would break once <cwd> goes.
    target = source.expanduser().resolve()
    if not target.is_dir():
        raise UsageError(f"--link {source}: not a directory")
    plugin_id, version = _identity(target)
    final = dest / plugin_id
    warnings: list[str] = []
    if not follow_symlinks:
        warnings.append(
            "the daemon follows links out of its plugin root only with "
            "`discovery.follow_symlinks: true` in plugins/discovery.yaml; set it on this "
            "development host, or it will not load the linked plugin"
        )
    with locked_root(dest):
        installed = installed_versions(dest, plugin_id)
        if installed:
            from nexo_pkg.install.remedy import plugin_command  # noqa: PLC0415 (a refusal)

            raise NexoError(
                f"{plugin_id} is installed at {installed[0].path}; remove it first "
                f"(`{plugin_command('remove', plugin_id, root=dest)}`), so the daemon meets "
                f"one {plugin_id}",
                kind="already_installed",
                details={"path": str(installed[0].path)},
            )
        if final.is_symlink() or final.exists():
            raise NexoError(f"{final} exists already; remove it first", kind="already_installed")
        import secrets  # noqa: PLC0415 - not for `list`, which only reads links

        temp = dest / f".{plugin_id}.link-{secrets.token_hex(6)}"
        try:
            temp.symlink_to(target, target_is_directory=True)
            temp.rename(final)
            fsync_directory(dest)
        except OSError as exc:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise NexoError(f"cannot link {final}: {exc.strerror or exc}", kind="io") from exc
    return LinkResult(LinkedPlugin(final, target, plugin_id, version), tuple(warnings))


def linked_plugins(dest: Path) -> list[LinkedPlugin]:
    """Every development link in ``dest``, sorted by name. Never raises."""
    try:
        # Only links can be development links: the listing's types spare a stat per plugin.
        with os.scandir(dest) as listing:
            children = sorted(dest / entry.name for entry in listing if entry.is_symlink())
    except OSError:
        return []
    return [found for child in children if (found := linked_plugin(child)) is not None]


def unlink(dest: Path, plugin_id: str) -> Path | None:
    """Remove the development link of ``plugin_id`` from ``dest`` (never what it points
    to); the link's path, or ``None`` when there is none. Raises ``io``."""
    for found in linked_plugins(dest):
        if found.plugin_id == plugin_id:
            with locked_root(dest):
                try:
                    found.path.unlink()
                except FileNotFoundError:
                    return None
                except OSError as exc:
                    raise NexoError(
                        f"cannot remove {found.path}: {exc.strerror or exc}", kind="io"
                    ) from exc
            return found.path
    return None
