"""Compatibility with the daemon a plugin is installed for: ``min_nexo_version``.

The daemon refuses at boot a plugin whose ``[plugin] min_nexo_version`` requirement (Cargo
semantics) its own version does not satisfy, ignoring its own pre-release tag (a 0.1.6-rc3
daemon satisfies ``>=0.1.0``); ``lint`` reports the same as NX105. ``install`` and ``upgrade``
compare before downloading, from a release's manifest asset, and again from the archive's own
manifest, so an incompatible plugin is ``incompatible`` (exit 1) unless ``--force``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from nexo_pkg.core.errors import NexoError, UsageError
from nexo_pkg.core.versionreq import VersionError, parse_version, parse_version_req
from nexo_pkg.manifest.document import MAX_MANIFEST_BYTES
from nexo_pkg.manifest.model import ManifestModelError, PluginManifest, manifest_from_text

__all__ = [
    "DAEMON_VERSION_ENV",
    "DaemonVersion",
    "check_compatible",
    "daemon_version",
    "min_nexo_version",
]

DAEMON_VERSION_ENV = "NEXO_DAEMON_VERSION"


@dataclass(frozen=True)
class DaemonVersion:
    """The version of the daemon plugins are installed for, and where it was read."""

    version: str
    source: str


def daemon_version(flag: str | None) -> DaemonVersion | None:
    """``--nexo-version``, else ``NEXO_DAEMON_VERSION``, else ``None`` (not compared).

    Raises ``usage`` for a value that is not a version."""
    if flag:
        found = DaemonVersion(flag.strip(), "--nexo-version")
    elif value := os.environ.get(DAEMON_VERSION_ENV, "").strip():
        found = DaemonVersion(value, DAEMON_VERSION_ENV)
    else:
        return None
    try:
        parse_version(found.version.removeprefix("v"))
    except VersionError as exc:
        raise UsageError(f"{found.source} {found.version!r} is not a version: {exc}") from exc
    return found


def min_nexo_version(manifest_text: str) -> str | None:
    """The ``[plugin] min_nexo_version`` string of a manifest, or ``None`` when it has none or
    is no manifest the model reads (a microapp's has none). Never raises."""
    try:
        model = manifest_from_text(manifest_text, max_bytes=MAX_MANIFEST_BYTES)
    except ManifestModelError:
        return None
    return model.plugin.min_nexo_version if isinstance(model, PluginManifest) else None


def check_compatible(manifest_text: str, daemon: DaemonVersion, *, where: str) -> None:
    """Raise ``incompatible`` when the manifest's ``min_nexo_version`` does not admit the
    daemon's version. A manifest without the key, or one the model does not read
    (:func:`min_nexo_version`) or whose requirement does not parse, is left to the manifest
    checks (nothing is raised)."""
    requirement_text = min_nexo_version(manifest_text)
    if requirement_text is None:
        return
    try:
        requirement = parse_version_req(requirement_text)
        current = parse_version(daemon.version.removeprefix("v")).without_prerelease()
    except VersionError:
        return
    if requirement.matches(current):
        return
    raise NexoError(
        f"{where} needs a daemon matching min_nexo_version `{requirement_text}`; the daemon is "
        f"{daemon.version} ({daemon.source}). Upgrade the daemon, or install it anyway with "
        "`nexo plugin install … --force` (the daemon will refuse to load it)",
        kind="incompatible",
        details={
            "min_nexo_version": requirement_text,
            "nexo_version": daemon.version,
            "nexo_version_source": daemon.source,
        },
    )
