"""The installer's public surface: what the floors above it (``fleet``, the CLI) use.

An installer of fleets fetches artifacts through ``nexo_pkg.sources`` and hands each
:class:`~nexo_pkg.sources.base.FetchedArtifact` to :func:`install_artifact`; it reads and
changes an install root only through the names below. Everything else in ``install`` is
its own business.
"""

from __future__ import annotations

from nexo_pkg.install.compat import (
    Admitting,
    DaemonVersion,
    check_compatible,
    unmet_host_requirements,
    wired_capabilities,
)
from nexo_pkg.install.discovery_edit import DiscoveryState
from nexo_pkg.install.hold import release_hold
from nexo_pkg.install.link import linked_plugin
from nexo_pkg.install.manifest_check import manifest_asset_problem
from nexo_pkg.install.pipeline import (
    NO_CALLBACKS,
    InstallCallbacks,
    InstallOptions,
    InstallStep,
    LockedSigner,
    install_artifact,
    verify_artifact,
)
from nexo_pkg.install.store import (
    BOOKKEEPING_DIR,
    JOURNAL_AREA,
    RECEIPT_NAME,
    REMOVING_AREA,
    STAGING_AREA,
    Installed,
    InstallRoot,
    locked_root,
    remove_tree,
    scan_installed,
    scan_kept,
    sha256_file,
    verify_installed,
    version_order,
)
from nexo_pkg.install.summary import InstallPlan

__all__ = [
    "BOOKKEEPING_DIR",
    "JOURNAL_AREA",
    "NO_CALLBACKS",
    "RECEIPT_NAME",
    "REMOVING_AREA",
    "STAGING_AREA",
    "Admitting",
    "DaemonVersion",
    "DiscoveryState",
    "InstallCallbacks",
    "InstallOptions",
    "InstallPlan",
    "InstallRoot",
    "InstallStep",
    "Installed",
    "LockedSigner",
    "check_compatible",
    "install_artifact",
    "linked_plugin",
    "locked_root",
    "manifest_asset_problem",
    "release_hold",
    "remove_tree",
    "scan_installed",
    "scan_kept",
    "sha256_file",
    "unmet_host_requirements",
    "verify_artifact",
    "verify_installed",
    "version_order",
    "wired_capabilities",
]
