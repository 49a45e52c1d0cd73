"""``nexo plugin lock``: resolve the wanted set into ``nexo-plugins.lock``.

Entries whose wanted line did not change are kept as they are (no network, no churn);
new or changed entries, and those named by ``--upgrade``, are resolved, up to ``--jobs`` at a
time: every target's tarball is fetched into the blob cache, hash-checked, and its signature
verified under the trust policy, so the lock records the signer of every target. The lock is
written in the same order and with the same bytes whatever the number of jobs.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from nexo_pkg.core.errors import NexoError
from nexo_pkg.fleet.lockfile import (
    Lock,
    LockedPlugin,
    LockedTarget,
    WantedPlugin,
    read_lock,
    read_wanted,
    render_lock,
    stale_entries,
    write_if_changed,
)
from nexo_pkg.fleet.pool import CpuPool, checked_jobs, run_bounded
from nexo_pkg.fleet.sources import FleetOptions, Session, locked_candidate
from nexo_pkg.fleet.treehash import tarball_hashes
from nexo_pkg.install.api import NO_CALLBACKS, InstallCallbacks, verify_artifact


@dataclass
class LockResult:
    """What ``lock`` did, or with ``check`` why the lock is stale (``stale`` non-empty)."""

    lock_path: Path
    changes: dict[str, str] = field(default_factory=dict)
    written: bool = False
    stale: list[str] = field(default_factory=list)
    lock: Lock | None = None
    # What install would warn about the artifacts locked (a NOT SIGNED one), in the wanted
    # set's order.
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "ok": not self.stale,
            "lock": str(self.lock_path),
            "written": self.written,
            "changes": dict(sorted(self.changes.items())),
            "stale": self.stale,
            "warnings": self.warnings,
        }
        if self.stale:
            # A "no" answer is a failure document like any other: it has a kind and an error.
            document["kind"] = "lock_stale"
            document["error"] = f"{self.lock_path.name} is stale: {'; '.join(self.stale)}"
        return document


def check(wanted_path: Path, lock_path: Path) -> LockResult:
    """Compare the lock with the wanted set without any network work."""
    wanted = read_wanted(wanted_path)
    if not lock_path.exists():
        return LockResult(lock_path, stale=[f"{lock_path.name} does not exist"])
    return LockResult(lock_path, stale=stale_entries(wanted, read_lock(lock_path)))


def lock_plugin(
    session: Session,
    wanted: WantedPlugin,
    cpu: CpuPool | None = None,
    warnings: list[str] | None = None,
) -> LockedPlugin:
    """Resolve one wanted plugin and verify every target it locks; the tree hash of each
    target is computed in ``cpu``'s worker processes when it has any. What the signature
    check warns about (an unsigned artifact under ``warn``) is added to ``warnings``."""
    resolved = session.resolve(wanted)
    entry = LockedPlugin(
        plugin_id=wanted.plugin_id,
        source=wanted.source,
        requirement=wanted.requirement,
        targets_wanted=wanted.targets,
        version=resolved.version,
        resolved=resolved.resolved,
        targets=resolved.targets,
        published=resolved.published,
        github=str(resolved.origin) if resolved.origin else None,
    )
    policy = session.policy()
    limits = session.options.install.limits
    targets: dict[str, LockedTarget] = {}
    fetched_paths: list[Path] = []
    for target, row in resolved.targets.items():
        candidate = locked_candidate(entry, row, published=entry.published, policy=policy)
        fetched, mode = session.fetch_locked(candidate, entry.resolved)
        outcome = verify_artifact(fetched, policy=policy, mode=mode, doing="locking")
        if warnings is not None:
            warnings.extend(message for message in outcome.warnings if message not in warnings)
        fetched_paths.append(fetched.path)
        verified = outcome.status == "verified"
        tree, sbom = (cpu or CpuPool(1)).call(
            tarball_hashes, fetched.path, entry.plugin_id, limits, version=entry.version
        )
        targets[target] = replace(
            row,
            identity=outcome.identity if verified else None,
            issuer=outcome.issuer if verified else None,
            tree=tree,
            sbom=sbom,
        )
    if entry.published is None:
        # A version with no date of its own (a single-manifest artifact, one target's
        # manifest by digest) is dated by its tarballs, so that every host's sync writes the
        # same receipt rather than stamping it with its own clock.
        from nexo_pkg.sources.api import tarball_date  # noqa: PLC0415 - lock only

        entry = replace(entry, published=tarball_date(fetched_paths))
    return replace(entry, targets=targets)


def lock(
    wanted_path: Path,
    lock_path: Path,
    options: FleetOptions,
    *,
    upgrade: frozenset[str] | None = None,
    session: Session | None = None,
    callbacks: InstallCallbacks = NO_CALLBACKS,
) -> LockResult:
    """Bring ``lock_path`` in line with ``wanted_path``; ``upgrade`` re-resolves those ids
    (an empty set: all). Writes the file only when its text changes. Every plugin is tried:
    one that cannot be locked raises its :class:`NexoError`, several raise one error naming
    each (:func:`_not_locked`); nothing is written then."""
    wanted = read_wanted(wanted_path)
    previous = read_lock(lock_path) if lock_path.exists() else Lock()
    if upgrade:
        unknown = sorted(upgrade - {item.plugin_id for item in wanted})
        if unknown:
            raise NexoError(
                f"--upgrade names {', '.join(unknown)}, which {wanted_path.name} does not list",
                kind="usage",
                exit_code=2,
            )
    result = LockResult(lock_path)
    fresh = Lock()

    def kept(item: WantedPlugin) -> LockedPlugin | None:
        current = previous.plugins.get(item.plugin_id)
        again = upgrade is not None and (not upgrade or item.plugin_id in upgrade)
        return current if current is not None and current.matches(item) and not again else None

    said: dict[str, list[str]] = {item.plugin_id: [] for item in wanted}

    def resolve(item: WantedPlugin) -> LockedPlugin | NexoError:
        # A plugin's failure is kept, not raised, so that every other plugin is still tried
        # and each one that cannot be locked is named (an interrupt still stops the run).
        try:
            return lock_plugin(active, item, cpu, said[item.plugin_id])
        except NexoError as error:
            error.details.setdefault("plugin", item.plugin_id)
            error.message = f"{item.plugin_id}: {error.message}"
            return error

    context = Session(options, callbacks) if session is None else contextlib.nullcontext(session)
    with context as active:
        # The plugins to resolve are resolved side by side (--jobs); the lock is assembled
        # in the wanted set's order. Any failure leaves the lock file as it was.
        unresolved = [item for item in wanted if kept(item) is None]
        if unresolved:
            # A proxy setting that cannot work fails the run once, not each plugin.
            from nexo_pkg.net.api import check_proxy_settings  # noqa: PLC0415

            check_proxy_settings()
        jobs = min(checked_jobs(options.jobs), len(unresolved))
        with CpuPool(jobs) as cpu:
            results = run_bounded(resolve, unresolved, jobs=jobs, on_interrupt=active.stop_requests)
    failed = [outcome for outcome in results if isinstance(outcome, NexoError)]
    if len(failed) == 1:
        raise failed[0]
    if failed:
        raise _not_locked(lock_path, failed)
    resolved = {
        item.plugin_id: locked
        for item, locked in zip(unresolved, results, strict=True)
        if isinstance(locked, LockedPlugin)
    }
    for item in wanted:
        current = previous.plugins.get(item.plugin_id)
        locked = resolved.get(item.plugin_id) or current
        assert locked is not None  # noqa: S101 - kept entries are the others
        fresh.plugins[item.plugin_id] = locked
        if item.plugin_id not in resolved:
            continue
        if current is None:
            result.changes[item.plugin_id] = f"locked {locked.version}"
        elif current.version != locked.version:
            result.changes[item.plugin_id] = f"{current.version} -> {locked.version}"
        elif current.source != locked.source:
            # The same version from elsewhere: "1.2.3 -> 1.2.3" would say nothing happened.
            change = f"source {current.source} -> {locked.source}"
            result.changes[item.plugin_id] = f"{locked.version} ({change})"
        elif current.targets != locked.targets:
            result.changes[item.plugin_id] = f"{locked.version} (artifacts changed)"
    for removed in sorted(set(previous.plugins) - set(fresh.plugins)):
        result.changes[removed] = "removed"
    result.warnings = [message for item in wanted for message in said[item.plugin_id]]
    result.written = write_if_changed(lock_path, render_lock(fresh))
    result.lock = fresh
    return result


def _not_locked(lock_path: Path, failed: list[NexoError]) -> NexoError:
    """The failure of a lock run in which several plugins could not be locked: the kind and
    exit code of the first in the wanted set's order, and under ``failures`` each plugin with
    its kind and message (the command line prints one ``error: ID: MESSAGE [KIND]`` line
    each)."""
    first = failed[0]
    names = ", ".join(str(error.details["plugin"]) for error in failed)
    return NexoError(
        f"{len(failed)} plugins could not be locked ({names}); {lock_path.name} was left as it was",
        kind=first.kind,
        exit_code=first.exit_code,
        details={
            "failures": [
                {"plugin": error.details["plugin"], "kind": error.kind, "error": error.message}
                for error in failed
            ]
        },
    )
