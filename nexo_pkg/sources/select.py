"""Pick the release asset to install: plugin id, version and the best tarball for this host."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.version import Version, parse_version
from nexo_pkg.manifest.names import MANIFEST_NAMES
from nexo_pkg.sources.hosttriple import NOARCH

if TYPE_CHECKING:
    from nexo_pkg.sources.github import Release, ReleaseAsset

# A release may carry its manifest under either name the daemon reads, in the daemon's order
# (the reference installer looks for ``nexo-plugin.toml``, which comes first).
MANIFEST_ASSETS = MANIFEST_NAMES
TARBALL_SUFFIX = ".tar.gz"
PLUGIN_ID = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
# The CPU a target triple starts with (rustc's and GNU's names), or noarch.
_ARCH = re.compile(
    r"^(?:noarch$|(?:x86_64|aarch64|arm64|amd64|arm\w*|thumb\w*|i[3-6]86|riscv\w+|powerpc\w*"
    r"|ppc\w*|s390x|mips\w*|loongarch\w+|sparc\w*|wasm\w+|x86)-)"
)
_TRAILING_SEMVER = re.compile(r"(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$")


@dataclass(frozen=True)
class ReleaseIdentity:
    """Which plugin and version a release carries, and where that was read from."""

    plugin_id: str
    version: str
    origin: str


@dataclass(frozen=True)
class AssetChoice:
    """The tarball chosen for this host, with the id, version and target it is named for."""

    plugin_id: str
    version: str
    target: str
    asset: ReleaseAsset


def is_semver(text: str) -> bool:
    return Version.is_valid(text)


def version_in_tag(tag: str) -> str | None:
    """The semver a tag ends with: ``v1.2.3``, ``vv1.2.3``, ``nexo-plugin-x-v1.2.3`` all give
    ``1.2.3``; ``None`` when it ends with none. The tag only selects a release; this only
    tells a pre-release tag apart when releases are looked through."""
    match = _TRAILING_SEMVER.search(tag)
    if match is None or not is_semver(match.group(1)):
        return None
    return match.group(1)


def identity_from_manifest(text: str, *, max_bytes: int | None = None) -> tuple[str, str] | None:
    """``([plugin] id, [plugin] version)`` of a release's manifest asset, or ``None`` when it
    is no manifest the model reads (:func:`~nexo_pkg.manifest.model.manifest_from_text`, at
    most ``max_bytes``, by default the model's ``MAX_MODEL_BYTES``) or its id is not a plugin
    id."""
    # The model is read here only: choosing an asset by its name (and `sync`) never needs it.
    from nexo_pkg.manifest.model import (  # noqa: PLC0415
        MAX_MODEL_BYTES,
        ManifestModelError,
        manifest_from_text,
    )

    try:
        model = manifest_from_text(
            text, max_bytes=MAX_MODEL_BYTES if max_bytes is None else max_bytes
        )
    except ManifestModelError:
        return None
    if not PLUGIN_ID.fullmatch(model.id):
        return None
    return model.id, model.version


def tarball_names(release: Release) -> list[str]:
    return sorted(asset.name for asset in release.assets if asset.name.endswith(TARBALL_SUFFIX))


def _not_found(release: Release, message: str, **details: object) -> NexoError:
    available = tarball_names(release)
    listing = ", ".join(available) if available else "none"
    return NexoError(
        f"{message}; tarballs in release {release.tag}: {listing}",
        kind="asset_not_found",
        details={"tag": release.tag, "available": available, **details},
    )


ManifestCheck = Callable[[str], str | None]
"""Why the daemon could not read a release's manifest asset (its text), or ``None``: the
installer passes its check in (``install.manifest_check.manifest_asset_problem``), since the
check is lint's and ``sources`` stands below it."""


def release_identity(
    release: Release, manifest: tuple[str, str] | None, *, manifest_problem: ManifestCheck
) -> ReleaseIdentity:
    """The plugin id and version of ``release``, as the reference installer reads them.

    ``manifest`` is the release's manifest asset as ``(name, text)``: its ``[plugin] id`` and
    ``version`` win, when a tarball of the release carries them (``asset_not_found``
    otherwise: ``install``, ``info``, ``upgrade``, ``outdated`` and ``lock`` all judge a
    release here). The reference installer parses it into its typed manifest, so one it
    cannot parse (``manifest_problem`` says why) refuses the release (``manifest_invalid``).
    Without a usable one, the tarball names decide: they must name exactly
    one plugin id and one version of it, else ``asset_not_found`` names the ids or versions
    found. The tag is never the version, nor decides between versions: real tags run ahead
    of the manifest, carry a package prefix or a doubled ``v``.
    """
    if manifest is not None:
        name, text = manifest
        problem = manifest_problem(text)
        if problem is not None:
            raise NexoError(
                f"release {release.tag}: its asset {name} is not a manifest the daemon can "
                f"read: {problem}",
                kind="manifest_invalid",
                details={"tag": release.tag, "asset": name},
            )
        found = identity_from_manifest(text)
        shipped = {
            p[:2] for tarball in tarball_names(release) if (p := parse_tarball_name(tarball))
        }
        if found is not None and found not in shipped:
            # A manifest asset naming a version no tarball ships is not believed (it would
            # offer an upgrade to a version that cannot be installed, or hide the real one).
            raise _not_found(
                release,
                f"its asset {name} says {found[0]} {found[1]}, but the release ships no "
                f"{found[0]}-{found[1]}-<target>.tar.gz",
                manifest_version=found[1],
            )
        if found is not None:
            return ReleaseIdentity(found[0], found[1], f"release asset {name}")
    parsed = [p for name in tarball_names(release) if (p := parse_tarball_name(name))]
    ids = sorted({plugin_id for plugin_id, _, _ in parsed})
    if not ids:
        raise _not_found(release, "no <id>-<version>-<target>.tar.gz tarball found")
    if len(ids) > 1:
        raise _not_found(
            release,
            f"the release holds tarballs of several plugins ({', '.join(ids)}) and no "
            "manifest asset saying which one it is",
            ids=ids,
        )
    versions = sorted({version for _, version, _ in parsed}, key=parse_version)
    if len(versions) > 1:
        # The tag only selects the release (as for the reference installer, which needs the
        # manifest asset here): a tag naming one of the versions does not decide either.
        raise _not_found(
            release,
            f"the tarballs name several versions of {ids[0]} ({', '.join(versions)}) and "
            "the release has no manifest asset saying which one it is (the tag does not "
            "decide)",
            versions=versions,
        )
    return ReleaseIdentity(ids[0], versions[0], "tarball names")


def choose_asset(
    release: Release, candidates: tuple[str, ...], identity: ReleaseIdentity
) -> AssetChoice:
    """Apply the naming convention ``<id>-<version>-<target>.tar.gz`` to ``release``.

    Targets are tried in ``candidates`` order, then ``noarch``. Raises ``asset_not_found``
    listing the tarballs on offer.
    """
    tried: list[str] = []
    for target in (*candidates, NOARCH):
        name = f"{identity.plugin_id}-{identity.version}-{target}{TARBALL_SUFFIX}"
        tried.append(name)
        asset = release.asset(name)
        if asset is not None:
            return AssetChoice(identity.plugin_id, identity.version, target, asset)
    raise _not_found(
        release,
        f"{identity.plugin_id} {identity.version} (from the {identity.origin}) has none of "
        f"{', '.join(tried)}",
    )


def parse_tarball_name(file_name: str) -> tuple[str, str, str] | None:
    """Split ``<id>-<version>-<target>.tar.gz`` into its parts, or ``None``.

    Versions may contain ``-`` (pre-releases) and triples always do, so the split tries a
    four-part triple, then a three-part one, then a two-part one (``wasm32-wasip1``, or the
    ``x-musl`` an ``x-gnu`` target falls back to: the daemon's installer looks a tarball up by
    its whole name, whatever the triple's shape), then ``noarch``, keeping the first whose
    version is valid semver.
    """
    if not file_name.endswith(TARBALL_SUFFIX):
        return None
    stem = file_name.removesuffix(TARBALL_SUFFIX)
    plugin_id, dash, rest = stem.partition("-")
    if not dash or not PLUGIN_ID.fullmatch(plugin_id):
        return None
    pieces = rest.split("-")
    splits = []
    for target_parts in (4, 3, 2, 1):
        if len(pieces) <= target_parts:
            continue
        target = "-".join(pieces[-target_parts:])
        version = "-".join(pieces[:-target_parts])
        if target_parts == 1 and target != NOARCH:
            continue
        if is_semver(version):
            splits.append((plugin_id, version, target))
    # `1.0.0-rc.1-aarch64-apple-darwin` also splits as version 1.0.0 with the "triple"
    # `rc.1-aarch64-apple-darwin`: the split whose triple starts with a CPU wins.
    return next((split for split in splits if _ARCH.match(split[2])), splits[0] if splits else None)
