"""The installer's public surface: what the floors above it (``fleet``, the CLI) use.

An installer of fleets fetches artifacts through ``nexo_pkg.sources`` and hands each
:class:`~nexo_pkg.sources.base.FetchedArtifact` to :func:`install_artifact`; it reads and
changes an install root only through the names below. Everything else in ``install`` is
its own business.

The face is lazy: importing it loads nothing of ``install``, and a name loads the module it
lives in when first asked for (``install_api.read_hold`` loads ``install/hold.py``, not the
pipeline). A command module imports it once, at the top, as
``from nexo_pkg.install import api as install_api``, and ``nexo plugin hold`` pays for the
hold alone.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from nexo_pkg.core.faces import homes, lazy_getattr

if TYPE_CHECKING:
    from nexo_pkg.install.compat import (
        Admitting,
        DaemonVersion,
        check_compatible,
        daemon_version,
        unmet_host_requirements,
        wired_capabilities,
    )
    from nexo_pkg.install.config import (
        POLICY_FILE,
        config_dir,
        install_root,
        load_daemon_config,
    )
    from nexo_pkg.install.discovery_edit import (
        DiscoveryState,
        EditResult,
        discovery_state,
        set_enabled,
    )
    from nexo_pkg.install.hold import (
        held_message,
        holds,
        read_hold,
        release_hold,
        set_hold,
    )
    from nexo_pkg.install.link import (
        LinkResult,
        link_install,
        linked_plugin,
        linked_plugins,
        unlink,
    )
    from nexo_pkg.install.listing import (
        build_listing,
        first_installed,
        is_microapp,
        manifest_identity,
        skipped_removal_leftovers,
    )
    from nexo_pkg.install.manifest_check import (
        manifest_asset_problem,
        misnamed_manifest,
    )
    from nexo_pkg.install.options import (
        NO_CALLBACKS,
        InstallCallbacks,
        InstallOptions,
        InstallStep,
        LockedSigner,
    )
    from nexo_pkg.install.outdated import (
        LatestVersion,
        OutdatedEntry,
        outdated,
    )
    from nexo_pkg.install.payload import check_sbom
    from nexo_pkg.install.pipeline import (
        InstallResult,
        ReleaseInfo,
        UpgradeResult,
        check_options,
        command_context,
        install,
        install_artifact,
        known_latest_releases,
        prefetch_latest,
        receipt_source,
        release_info,
        remove,
        search_repositories,
        upgrade,
        verify_artifact,
    )
    from nexo_pkg.install.reach import (
        DaemonReach,
    )
    from nexo_pkg.install.receipts import (
        RECEIPT_NAME,
        RECEIPT_UNREADABLE,
        Installed,
        Receipt,
        installed_versions,
        kept_links,
        require_installed,
        scan_installed,
        scan_kept,
        scan_roots,
        unreadable_installs,
        version_order,
    )
    from nexo_pkg.install.remedy import plugin_command, reinstall_command
    from nexo_pkg.install.rollback import (
        RollbackResult,
        rollback,
    )
    from nexo_pkg.install.root import (
        BOOKKEEPING_DIR,
        CLEANED_BY,
        JOURNAL_AREA,
        LEGACY_PREFIXES,
        REMOVING_AREA,
        STAGING_AREA,
        InstallRoot,
        LockWait,
        blocked_bookkeeping,
        is_leftover,
        is_removal_leftover,
        left_behind,
        lock_timeout,
        locked_root,
        remove_tree,
    )
    from nexo_pkg.install.sbom import (
        InstalledSbom,
        installed_sbom,
    )
    from nexo_pkg.install.summary import (
        InstallPlan,
        render_plan,
    )
    from nexo_pkg.install.verify import (
        MODES_ON_DISK,
        plugin_directory_mode_changed,
        verify_installed,
    )

# Where each name lives: the module of ``nexo_pkg.install`` that ``__getattr__`` loads for it.
_HOMES = homes(
    {
        "compat": (
            "Admitting DaemonVersion check_compatible daemon_version unmet_host_requirements "
            "wired_capabilities"
        ),
        "config": "POLICY_FILE config_dir install_root load_daemon_config",
        "listing": (
            "build_listing first_installed is_microapp manifest_identity skipped_removal_leftovers"
        ),
        "discovery_edit": "DiscoveryState EditResult discovery_state set_enabled",
        "hold": "held_message holds read_hold release_hold set_hold",
        "link": "LinkResult link_install linked_plugin linked_plugins unlink",
        "manifest_check": "manifest_asset_problem misnamed_manifest",
        "options": "NO_CALLBACKS InstallCallbacks InstallOptions InstallStep LockedSigner",
        "outdated": "LatestVersion OutdatedEntry outdated",
        "payload": "check_sbom",
        "pipeline": (
            "InstallResult ReleaseInfo UpgradeResult check_options command_context install "
            "install_artifact known_latest_releases prefetch_latest receipt_source release_info "
            "remove search_repositories upgrade verify_artifact"
        ),
        "reach": "DaemonReach",
        "receipts": (
            "RECEIPT_NAME RECEIPT_UNREADABLE Installed Receipt installed_versions kept_links "
            "require_installed scan_installed scan_kept scan_roots unreadable_installs "
            "version_order"
        ),
        "remedy": "plugin_command reinstall_command",
        "rollback": "RollbackResult rollback",
        "root": (
            "BOOKKEEPING_DIR CLEANED_BY JOURNAL_AREA LEGACY_PREFIXES REMOVING_AREA STAGING_AREA "
            "InstallRoot LockWait blocked_bookkeeping is_leftover is_removal_leftover "
            "left_behind lock_timeout locked_root remove_tree"
        ),
        "sbom": "InstalledSbom installed_sbom",
        "summary": "InstallPlan render_plan",
        "verify": "MODES_ON_DISK plugin_directory_mode_changed verify_installed",
    }
)

__all__ = [
    "BOOKKEEPING_DIR",
    "CLEANED_BY",
    "JOURNAL_AREA",
    "LEGACY_PREFIXES",
    "MODES_ON_DISK",
    "NO_CALLBACKS",
    "POLICY_FILE",
    "RECEIPT_NAME",
    "RECEIPT_UNREADABLE",
    "REMOVING_AREA",
    "STAGING_AREA",
    "Admitting",
    "DaemonReach",
    "DaemonVersion",
    "DiscoveryState",
    "EditResult",
    "InstallCallbacks",
    "InstallOptions",
    "InstallPlan",
    "InstallResult",
    "InstallRoot",
    "InstallStep",
    "Installed",
    "InstalledSbom",
    "LatestVersion",
    "LinkResult",
    "LockWait",
    "LockedSigner",
    "OutdatedEntry",
    "Receipt",
    "ReleaseInfo",
    "RollbackResult",
    "UpgradeResult",
    "blocked_bookkeeping",
    "build_listing",
    "check_compatible",
    "check_options",
    "check_sbom",
    "command_context",
    "config_dir",
    "daemon_version",
    "discovery_state",
    "first_installed",
    "held_message",
    "holds",
    "install",
    "install_artifact",
    "install_root",
    "installed_sbom",
    "installed_versions",
    "is_leftover",
    "is_microapp",
    "is_removal_leftover",
    "kept_links",
    "known_latest_releases",
    "left_behind",
    "link_install",
    "linked_plugin",
    "linked_plugins",
    "load_daemon_config",
    "lock_timeout",
    "locked_root",
    "manifest_asset_problem",
    "manifest_identity",
    "misnamed_manifest",
    "outdated",
    "plugin_command",
    "plugin_directory_mode_changed",
    "prefetch_latest",
    "read_hold",
    "receipt_source",
    "reinstall_command",
    "release_hold",
    "release_info",
    "remove",
    "remove_tree",
    "render_plan",
    "require_installed",
    "rollback",
    "scan_installed",
    "scan_kept",
    "scan_roots",
    "search_repositories",
    "set_enabled",
    "set_hold",
    "skipped_removal_leftovers",
    "unlink",
    "unmet_host_requirements",
    "unreadable_installs",
    "upgrade",
    "verify_artifact",
    "verify_installed",
    "version_order",
    "wired_capabilities",
]


def _load(module: str) -> ModuleType:
    # Plain imports, one per module, so the import contracts see them.
    home: ModuleType
    if module == "compat":
        from nexo_pkg.install import compat as home  # noqa: PLC0415
    elif module == "config":
        from nexo_pkg.install import config as home  # noqa: PLC0415
    elif module == "discovery_edit":
        from nexo_pkg.install import discovery_edit as home  # noqa: PLC0415
    elif module == "hold":
        from nexo_pkg.install import hold as home  # noqa: PLC0415
    elif module == "link":
        from nexo_pkg.install import link as home  # noqa: PLC0415
    elif module == "listing":
        from nexo_pkg.install import listing as home  # noqa: PLC0415
    elif module == "manifest_check":
        from nexo_pkg.install import manifest_check as home  # noqa: PLC0415
    elif module == "options":
        from nexo_pkg.install import options as home  # noqa: PLC0415
    elif module == "outdated":
        from nexo_pkg.install import outdated as home  # noqa: PLC0415
    elif module == "payload":
        from nexo_pkg.install import payload as home  # noqa: PLC0415
    elif module == "pipeline":
        from nexo_pkg.install import pipeline as home  # noqa: PLC0415
    elif module == "reach":
        from nexo_pkg.install import reach as home  # noqa: PLC0415
    elif module == "receipts":
        from nexo_pkg.install import receipts as home  # noqa: PLC0415
    elif module == "remedy":
        from nexo_pkg.install import remedy as home  # noqa: PLC0415
    elif module == "rollback":
        from nexo_pkg.install import rollback as home  # noqa: PLC0415
    elif module == "root":
        from nexo_pkg.install import root as home  # noqa: PLC0415
    elif module == "sbom":
        from nexo_pkg.install import sbom as home  # noqa: PLC0415
    elif module == "summary":
        from nexo_pkg.install import summary as home  # noqa: PLC0415
    elif module == "verify":
        from nexo_pkg.install import verify as home  # noqa: PLC0415
    else:
        raise AttributeError(module)
    return home


__getattr__ = lazy_getattr(_HOMES, _load, globals())
