"""The face of ``fleet``: what the command line uses of lock files, sync, push, mirror and
doctor.

The face is lazy (:mod:`nexo_pkg.core.faces`): importing it loads nothing of ``fleet``, and a
name loads its module when first asked for, so ``nexo plugin push`` does not pay for sync. A
command module imports it once, at the top, as ``from nexo_pkg.fleet import api as fleet_api``.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from nexo_pkg.core.faces import homes, lazy_getattr

if TYPE_CHECKING:
    from nexo_pkg.fleet.copy import CopyResult, mirror_registry, mirror_source
    from nexo_pkg.fleet.doctor import diagnose
    from nexo_pkg.fleet.lock import LockResult, check, lock
    from nexo_pkg.fleet.lockfile import LOCK_NAME, WANTED_NAME, lock_command, read_registries
    from nexo_pkg.fleet.publish import PushResult, mirror, push
    from nexo_pkg.fleet.sources import FleetOptions
    from nexo_pkg.fleet.sync import PlanStep, PluginOutcome, SyncResult, dry_run_plan, sync
    from nexo_pkg.fleet.treehash import check_root

# Where each name lives: the module of ``nexo_pkg.fleet`` that ``__getattr__`` loads for it.
_HOMES = homes(
    {
        "copy": "CopyResult mirror_registry mirror_source",
        "doctor": "diagnose",
        "lock": "LockResult check lock",
        "lockfile": "LOCK_NAME WANTED_NAME lock_command read_registries",
        "publish": "PushResult mirror push",
        "sources": "FleetOptions",
        "sync": "PlanStep PluginOutcome SyncResult dry_run_plan sync",
        "treehash": "check_root",
    }
)

__all__ = [
    "LOCK_NAME",
    "WANTED_NAME",
    "CopyResult",
    "FleetOptions",
    "LockResult",
    "PlanStep",
    "PluginOutcome",
    "PushResult",
    "SyncResult",
    "check",
    "check_root",
    "diagnose",
    "dry_run_plan",
    "lock",
    "lock_command",
    "mirror",
    "mirror_registry",
    "mirror_source",
    "push",
    "read_registries",
    "sync",
]


def _load(module: str) -> ModuleType:
    # Plain imports, one per module, so the import contracts see them.
    home: ModuleType
    if module == "copy":
        from nexo_pkg.fleet import copy as home  # noqa: PLC0415
    elif module == "doctor":
        from nexo_pkg.fleet import doctor as home  # noqa: PLC0415
    elif module == "lock":
        from nexo_pkg.fleet import lock as home  # noqa: PLC0415
    elif module == "lockfile":
        from nexo_pkg.fleet import lockfile as home  # noqa: PLC0415
    elif module == "publish":
        from nexo_pkg.fleet import publish as home  # noqa: PLC0415
    elif module == "sources":
        from nexo_pkg.fleet import sources as home  # noqa: PLC0415
    elif module == "sync":
        from nexo_pkg.fleet import sync as home  # noqa: PLC0415
    elif module == "treehash":
        from nexo_pkg.fleet import treehash as home  # noqa: PLC0415
    else:
        raise AttributeError(module)
    return home


__getattr__ = lazy_getattr(_HOMES, _load, globals())
