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
    daemon_version,
    unmet_host_requirements,
    wired_capabilities,
)
from nexo_pkg.install.config import config_dir
from nexo_pkg.install.discovery_edit import DiscoveryState, discovery_state
from nexo_pkg.install.hold import release_hold
from nexo_pkg.install.link import linked_plugin, linked_plugins, unlink
from nexo_pkg.install.manifest_check import manifest_asset_problem
from nexo_pkg.install.pipeline import (
    NO_CALLBACKS,
    InstallCallbacks,
    InstallOptions,
    InstallStep,
    LockedSigner,
    install_artifact,
    remove,
    verify_artifact,
)
from nexo_pkg.install.receipts import (
    RECEIPT_NAME,
    Installed,
    installed_versions,
    scan_installed,
    scan_kept,
    unreadable_installs,
    version_order,
)
from nexo_pkg.install.root import (
    BOOKKEEPING_DIR,
    JOURNAL_AREA,
    REMOVING_AREA,
    STAGING_AREA,
    InstallRoot,
    locked_root,
    remove_tree,
)
from nexo_pkg.install.summary import InstallPlan
from nexo_pkg.install.verify import verify_installed

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
    "config_dir",
    "daemon_version",
    "discovery_state",
    "install_artifact",
    "installed_versions",
    "linked_plugin",
    "linked_plugins",
    "locked_root",
    "manifest_asset_problem",
    "release_hold",
    "remove",
    "remove_tree",
    "scan_installed",
    "scan_kept",
    "unlink",
    "unmet_host_requirements",
    "unreadable_installs",
    "verify_artifact",
    "verify_installed",
    "version_order",
    "wired_capabilities",
]
