"""Pick the release asset to install: plugin id, version and the best tarball for this host."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import semver

from nexo_pkg.errors import NexoError
from nexo_pkg.install.hosttriple import NOARCH

if TYPE_CHECKING:
    from nexo_pkg.install.github import Release, ReleaseAsset

MANIFEST_ASSET = "nexo-plugin.toml"
TARBALL_SUFFIX = ".tar.gz"
PLUGIN_ID = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


@dataclass(frozen=True)
class AssetChoice:
    """The tarball chosen for this host, with the id, version and target it is named for."""

    plugin_id: str
    version: str
    target: str
    asset: ReleaseAsset


def is_semver(text: str) -> bool:
    return bool(semver.Version.is_valid(text))


def version_from_tag(tag: str) -> str:
    """``v1.2.3`` -> ``1.2.3``; raises ``asset_not_found`` when the rest is not semver."""
    version = tag[1:] if tag[:1] in {"v", "V"} else tag
    if not is_semver(version):
        raise NexoError(
            f"release tag {tag!r} is not v<semver>, so no plugin tarball can be named from it",
            kind="asset_not_found",
            details={"tag": tag},
        )
    return version


def plugin_id_from_manifest(text: str) -> str | None:
    """The ``[plugin] id`` of a release's ``nexo-plugin.toml``, or ``None`` when unusable."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    plugin = document.get("plugin")
    if isinstance(plugin, dict):
        plugin_id = plugin.get("id")
        if isinstance(plugin_id, str) and PLUGIN_ID.match(plugin_id):
            return plugin_id
    return None


def tarball_names(release: Release) -> list[str]:
    return sorted(asset.name for asset in release.assets if asset.name.endswith(TARBALL_SUFFIX))


def _ids_from_tarballs(release: Release, version: str) -> list[str]:
    pattern = re.compile(r"^([a-z][a-z0-9_]{0,63})-" + re.escape(version) + r"-[^/]+\.tar\.gz$")
    found = {match.group(1) for name in tarball_names(release) if (match := pattern.match(name))}
    return sorted(found)


def _not_found(release: Release, message: str) -> NexoError:
    available = tarball_names(release)
    listing = ", ".join(available) if available else "none"
    return NexoError(
        f"{message}; tarballs in release {release.tag}: {listing}",
        kind="asset_not_found",
        details={"tag": release.tag, "available": available},
    )


def choose_asset(
    release: Release, candidates: tuple[str, ...], *, manifest_id: str | None
) -> AssetChoice:
    """Apply the naming convention ``<id>-<version>-<target>.tar.gz`` to ``release``.

    The id comes from the release's ``nexo-plugin.toml`` (``manifest_id``) when known, else
    from the tarball names (which must agree on one id). Targets are tried in ``candidates``
    order, then ``noarch``. Raises ``asset_not_found`` listing the tarballs on offer.
    """
    version = version_from_tag(release.tag)
    plugin_id = manifest_id
    if plugin_id is None:
        ids = _ids_from_tarballs(release, version)
        if not ids:
            raise _not_found(release, f"no <id>-{version}-<target>.tar.gz tarball found")
        if len(ids) > 1:
            raise _not_found(release, f"tarballs name several plugin ids ({', '.join(ids)})")
        plugin_id = ids[0]
    tried: list[str] = []
    for target in (*candidates, NOARCH):
        name = f"{plugin_id}-{version}-{target}{TARBALL_SUFFIX}"
        tried.append(name)
        asset = release.asset(name)
        if asset is not None:
            return AssetChoice(plugin_id, version, target, asset)
    raise _not_found(release, f"none of {', '.join(tried)} is in the release")


def parse_tarball_name(file_name: str) -> tuple[str, str, str] | None:
    """Split ``<id>-<version>-<target>.tar.gz`` into its parts, or ``None``.

    Versions may contain ``-`` (pre-releases) and triples always do, so the split tries a
    four-part triple, then a three-part one, then ``noarch``, keeping the first whose version
    is valid semver.
    """
    if not file_name.endswith(TARBALL_SUFFIX):
        return None
    stem = file_name.removesuffix(TARBALL_SUFFIX)
    plugin_id, dash, rest = stem.partition("-")
    if not dash or not PLUGIN_ID.match(plugin_id):
        return None
    pieces = rest.split("-")
    for target_parts in (4, 3, 1):
        if len(pieces) <= target_parts:
            continue
        target = "-".join(pieces[-target_parts:])
        version = "-".join(pieces[:-target_parts])
        if target_parts == 1 and target != NOARCH:
            continue
        if is_semver(version):
            return plugin_id, version, target
    return None
