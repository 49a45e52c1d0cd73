"""``nexo plugin sync``: make a plugin root hold exactly what the lock names.

One process, one lock (``<dest>/.nexo-sync.lock``) and the root's install lock for the whole
set; up to ``--jobs`` plugins are handled at a time by worker threads, each plugin exactly as
one at a time would be (see :mod:`nexo_pkg.fleet.pool`), and reported in id order. A plugin whose
installed receipt already records the locked version and sha256 is left alone (no request,
no write), so a second run is a no-op. Others are fetched (blob cache first), hash-checked
against the lock, verified under the trust policy *and* against the signer the lock
recorded, installed through the install pipeline, and only then are their other versions
removed (the versions replaced are kept for ``rollback``, one per plugin, as ``upgrade``
keeps them; a hold on a plugin sync changes is released: the lock named its version). A
failing plugin is reported and the others go on; ``--prune`` removes installed plugins the
lock does not name as ``remove`` does (their kept versions and hold too). ``dry_run_plan``
says what a run would do, from the lock and the receipts alone.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from nexo_pkg.core.dirs import make_dirs
from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.files import open_lock_file
from nexo_pkg.core.source_date import source_date_epoch
from nexo_pkg.core.version import Version, VersionError, parse_version
from nexo_pkg.fleet.lockfile import (
    WANTED_NAME,
    Lock,
    LockedPlugin,
    LockedTarget,
    lock_command,
    read_lock,
    read_wanted,
    render_lock,
    stale_entries,
    write_if_changed,
)
from nexo_pkg.fleet.pool import CpuPool, checked_jobs, run_bounded
from nexo_pkg.fleet.sources import FleetOptions, Session, locked_candidate
from nexo_pkg.fleet.treehash import installed_by_id
from nexo_pkg.install.api import (
    NO_CALLBACKS,
    REMOVING_AREA,
    InstallCallbacks,
    Installed,
    InstallRoot,
    InstallStep,
    LockedSigner,
    LockWait,
    left_behind,
    lock_timeout,
    locked_root,
    remove_tree,
    scan_kept,
    version_order,
)
from nexo_pkg.sources.api import NOARCH, extraction_workers, host_candidates

SYNC_LOCK_NAME = ".nexo-sync.lock"


# What sync does to one plugin, as its plan says: the locked version comes in where none is
# installed (install), replaces a lower one (upgrade) or a higher one (downgrade: "as locked"),
# replaces the same version with other bytes (reinstall); a plugin the lock does not name goes
# with --prune (remove); the rest stays (unchanged).
CHANGES = ("install", "upgrade", "downgrade", "reinstall", "remove", "unchanged")
# The changes that fetch the locked artifact.
_FETCHED = frozenset({"install", "upgrade", "downgrade", "reinstall"})


@dataclass(frozen=True)
class PlanStep:
    """One line of sync's plan: ``change`` (one of :data:`CHANGES`) of ``plugin_id`` from
    ``from_version`` (the installed one, if any) to ``version`` (the locked one; ``None`` for
    a removal)."""

    plugin_id: str
    change: str
    version: str | None
    from_version: str | None = None
    # A dry run's: the version a hold (`rollback`, `hold`) keeps the plugin at, which this
    # change ends (the lock names the version; a pruned plugin has nothing left to hold).
    releases_hold: str | None = None
    # A dry run's: the change the run would refuse (a development link holds the id), with
    # the kind and the words of the run's failure.
    kind: str | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        document = {
            "id": self.plugin_id,
            "action": self.change,
            "from_version": self.from_version,
            "version": self.version,
        }
        if self.releases_hold is not None:
            document["releases_hold"] = self.releases_hold
        if self.error is not None:
            document["kind"] = self.kind
            document["error"] = self.error
        return document


@dataclass
class PluginOutcome:
    """What sync did for one plugin id."""

    plugin_id: str
    action: str  # unchanged | installed | replaced | removed | failed
    version: str | None = None
    path: str | None = None
    kind: str | None = None
    error: str | None = None
    identity: str | None = None
    # The plan's change (see CHANGES) and the version it replaced, if any.
    change: str | None = None
    from_version: str | None = None
    # Versions set aside for `nexo plugin rollback` (as upgrade keeps them).
    kept: tuple[str, ...] = ()
    # What install would warn about (an unsigned artifact, a host requirement the daemon
    # would not meet), for the CLI to say as install says it.
    warnings: tuple[str, ...] = ()
    # The version a hold (`rollback`, `hold`) kept the plugin at, ended by this sync.
    released_hold: str | None = None
    # What install notes on the terminal (no daemon configured scans the root), not a warning.
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"id": self.plugin_id, "action": self.action}
        keys = ("version", "from_version", "change", "path", "identity", "kind", "error")
        for key in (*keys, "released_hold"):
            value = getattr(self, key)
            if value is not None:
                document[key] = value
        if self.kept:
            document["kept_paths"] = list(self.kept)
        if self.warnings:
            document["warnings"] = list(self.warnings)
        if self.notes:
            document["notes"] = list(self.notes)
        return document


@dataclass
class SyncResult:
    lock_path: Path
    dest: Path
    outcomes: list[PluginOutcome] = field(default_factory=list)
    requests: dict[str, Any] = field(default_factory=dict)
    relocked: bool = False
    plan: list[PlanStep] = field(default_factory=list)
    dry_run: bool = False
    # With dry_run: why the lock is stale against the wanted set (sync would lock first).
    stale: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed

    @property
    def failed(self) -> list[str]:
        """The plugins the run failed on, or (a dry run) would fail on."""
        failed = [item.plugin_id for item in self.outcomes if item.action == "failed"]
        return failed + [step.plugin_id for step in self.plan if step.error is not None]

    @property
    def changed(self) -> bool:
        return any(item.action not in {"unchanged", "failed"} for item in self.outcomes)

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "ok": self.ok,
            "lock": str(self.lock_path),
            "dest": str(self.dest),
            "dry_run": self.dry_run,
            "changed": self.changed,
            "relocked": self.relocked,
            "plan": [step.to_json() for step in self.plan],
            "plugins": [item.to_json() for item in self.outcomes],
            "requests": self.requests,
        }
        if self.dry_run:
            document["stale"] = self.stale
        if not self.ok:
            document["kind"] = "sync_failed"
            failed = self.failed
            verb = "would fail" if self.dry_run else "failed"
            document["error"] = f"{len(failed)} plugin(s) {verb}: {', '.join(failed)}"
        return document


@contextlib.contextmanager
def _sync_lock(dest: Path) -> Iterator[None]:
    try:
        # The root and its missing parents are 0755 whatever the umask, as install makes
        # them: a root every user could write would let anyone plant a plugin the daemon loads.
        make_dirs(dest)
    except OSError as exc:
        raise NexoError(f"cannot lock {dest}: {exc.strerror or exc}", kind="io") from exc
    lock_path = dest / SYNC_LOCK_NAME
    try:
        descriptor = open_lock_file(lock_path)
    except OSError as exc:
        # Name the file that failed (a link or FIFO planted there), not the root.
        raise NexoError(
            f"cannot open the lock file {lock_path}: {exc.strerror or exc}", kind="io"
        ) from exc
    try:
        # Bounded as the root's lock is (NEXO_INSTALL_LOCK_TIMEOUT), and said after a second.
        try:
            LockWait(lock_path, lock_timeout(), "another nexo sync").take(descriptor)
        except OSError as exc:
            raise NexoError(f"cannot lock {lock_path}: {exc.strerror or exc}", kind="io") from exc
        yield
    finally:
        os.close(descriptor)


def pick_target(entry: LockedPlugin, candidates: tuple[str, ...]) -> LockedTarget:
    for target in (*candidates, NOARCH):
        if target in entry.targets:
            return entry.targets[target]
    raise NexoError(
        f"the lock has no {entry.plugin_id} tarball for this host "
        f"({', '.join(candidates) or 'noarch only'}); it has {', '.join(entry.targets)}",
        kind="asset_not_found",
    )


def _installed_at(entry: LockedPlugin) -> str | None:
    """Receipts written by sync are the same on every host: the version's publication time,
    else ``SOURCE_DATE_EPOCH``, else (no stable time known) now."""
    if entry.published:
        return entry.published
    from nexo_pkg.sources.api import source_date  # noqa: PLC0415 - with the registry's modules

    return source_date()


def _version_key(text: str) -> Version | None:
    """``text`` as a version in the daemon's order, ``None`` when not SemVer."""
    try:
        return parse_version(text)
    except VersionError:
        return None


def plan_step(entry: LockedPlugin, present: list[Installed], sha256: str | None) -> PlanStep:
    """What sync does to ``entry``'s plugin given its installed trees ``present``: the locked
    tarball's ``sha256`` (``None``: not for this host) tells a reinstall from no change."""
    versions = [item.receipt.version for item in present if item.receipt is not None]
    if not versions:
        return PlanStep(entry.plugin_id, "install", entry.version)
    newest = max(present, key=version_order)
    installed = newest.receipt.version if newest.receipt is not None else versions[0]
    if installed == entry.version:
        receipt = newest.receipt
        unchanged = len(present) == 1 and receipt is not None and receipt.sha256 == sha256
        change = "unchanged" if unchanged else "reinstall"
        return PlanStep(entry.plugin_id, change, entry.version, installed)
    wanted, current = _version_key(entry.version), _version_key(installed)
    lower = wanted is not None and current is not None and wanted < current
    return PlanStep(entry.plugin_id, "downgrade" if lower else "upgrade", entry.version, installed)


def sync_plan(
    entries: Mapping[str, LockedPlugin],
    installed: Mapping[str, list[Installed]],
    candidates: tuple[str, ...],
    *,
    prune: bool,
) -> list[PlanStep]:
    """The plan of a sync: one step per locked plugin in id order, then (with ``prune``) one
    removal per installed plugin the lock does not name."""
    steps = []
    for plugin_id, entry in sorted(entries.items()):
        try:
            sha256: str | None = pick_target(entry, candidates).sha256
        except NexoError:
            sha256 = None  # the run fails it (asset_not_found); the plan shows the version
        steps.append(plan_step(entry, installed.get(plugin_id, []), sha256))
    if prune:
        for plugin_id in sorted(set(installed) - set(entries)):
            versions = [item.receipt.version for item in installed[plugin_id] if item.receipt]
            steps.append(PlanStep(plugin_id, "remove", None, versions[0] if versions else None))
    return steps


def dry_run_plan(
    lock_path: Path,
    dest: Path,
    *,
    wanted_path: Path | None = None,
    prune: bool = False,
    target: str | None = None,
    frozen: bool = False,
    registry_config: Path | None = None,
) -> SyncResult:
    """What ``sync`` would do to ``dest``, read from the lock and the installed receipts
    alone: no request, no lock taken, nothing written. A lock stale against the wanted set
    is planned as it stands, with the reasons (``stale``): sync would lock first; with
    ``frozen`` it is ``lock_stale``, as the run refuses it. A named ``registry_config`` that
    the run refuses is refused too."""
    source_date_epoch(os.environ)  # a malformed one fails the run: the rehearsal too
    result = SyncResult(lock_path, dest, dry_run=True)
    if not lock_path.exists():
        # Nothing to plan from: the run would lock first (or, --frozen, refuse) either way.
        if frozen:
            raise _frozen_needs(lock_path)
        if wanted_path is not None and wanted_path.exists():
            raise NexoError(
                f"{lock_path} does not exist: sync would resolve {wanted_path.name} first, "
                f"which a dry run does not do; run `{lock_command(wanted_path, lock_path)}`, "
                "then plan again",
                kind="lock_stale",
            )
        raise NexoError(
            f"{lock_path} does not exist: a dry run plans from a lock; {_lock_first(lock_path)}",
            kind="lock_stale",
        )
    locked = read_lock(lock_path)
    if wanted_path is not None and wanted_path.exists():
        result.stale = stale_entries(read_wanted(wanted_path), locked)
        if frozen:
            _refuse_stale(lock_path, result.stale)
    _check_registry_config(locked, registry_config)
    present = installed_by_id(dest) if dest.is_dir() else {}
    candidates = host_candidates(target)
    result.plan = sync_plan(locked.plugins, present, candidates, prune=prune)
    # A locked plugin with no tarball for this host is the run's failure (asset_not_found):
    # planned as refused, not as the install the run never makes.
    result.plan = [
        _refused_without_target(step, locked.plugins[step.plugin_id], candidates)
        if step.plugin_id in locked.plugins
        else step
        for step in result.plan
    ]
    if present:
        # The holds the run would end, said with the change that ends them.
        from nexo_pkg.install.api import holds  # noqa: PLC0415 - a dry run's reading

        held = holds(dest)
        result.plan = [
            replace(step, releases_hold=held[step.plugin_id].version)
            if step.plugin_id in held and step.change != "unchanged"
            else step
            for step in result.plan
        ]
    if dest.is_dir():
        result.plan = _refused_beside_links(result.plan, dest)
    return result


def _refused_without_target(
    step: PlanStep, entry: LockedPlugin, candidates: tuple[str, ...]
) -> PlanStep:
    """``step`` marked with the run's failure when the lock has no tarball of ``entry`` for
    this host."""
    try:
        pick_target(entry, candidates)
    except NexoError as error:
        return replace(step, kind=error.kind, error=error.message)
    return step


def _refused_beside_links(plan: list[PlanStep], dest: Path) -> list[PlanStep]:
    """``plan`` with each change the run refuses because a development link holds the
    plugin's id in ``dest`` (``install --link``: sync never replaces one) marked with the
    run's failure, so the rehearsal says what the run will do."""
    from nexo_pkg.install.api import linked_plugins  # noqa: PLC0415 - a dry run's reading

    links = {found.plugin_id: found for found in linked_plugins(dest)}
    if not links:
        return plan
    marked = []
    for step in plan:
        found = links.get(step.plugin_id)
        if found is not None and step.change in _FETCHED and step.error is None:
            words = _link_words(step.plugin_id, found.path, found.target, dest)
            marked.append(replace(step, kind="already_installed", error=words))
        else:
            marked.append(step)
    return marked


def _check_registry_config(locked: Lock, registry_config: Path | None) -> None:
    """A registry config that was named (``--registry-config``, ``REGISTRY_AUTH_FILE``) and
    is missing or no config refuses the whole run when the lock names a registry plugin
    (``registry_config``, exit 2), before the root is touched, as ``install`` and ``lock``
    refuse it: not one failure per registry plugin, nor a pass for the plugins already in
    place (a run that changes nothing never asks the registry)."""
    # Nothing named (the case of every run that passes no such flag): nothing is loaded.
    named = registry_config is not None or bool(os.environ.get("REGISTRY_AUTH_FILE"))
    if not named:
        return
    from nexo_pkg.sources.api import reads_registry_config  # noqa: PLC0415

    if any(reads_registry_config(entry.source) for entry in locked.plugins.values()):
        from nexo_pkg.sources.api import check_registry_config  # noqa: PLC0415

        check_registry_config(registry_config)


def _frozen_needs(lock_path: Path) -> NexoError:
    """``lock_stale`` for a ``--frozen`` run without a lock."""
    return NexoError(f"--frozen needs {lock_path}; {_lock_first(lock_path)}", kind="lock_stale")


def _lock_first(lock_path: Path) -> str:
    """The remedy for a missing lock: run ``lock``, after writing the wanted set it reads
    when there is none beside the lock (``lock`` alone would refuse, ``wanted_invalid``)."""
    wanted = lock_path.parent / WANTED_NAME
    again = f"run `{lock_command(wanted, lock_path)}` first"
    if wanted.exists():
        return again
    return f"write the plugins you want in {wanted} (docs/fleet.md), then {again}"


def _refuse_stale(lock_path: Path, reasons: list[str]) -> None:
    """``lock_stale`` naming ``reasons`` when there are any: ``--frozen`` never resolves."""
    if reasons:
        raise NexoError(
            f"{lock_path.name} is stale ({'; '.join(reasons)}); run "
            f"`{lock_command(lock_path.parent / WANTED_NAME, lock_path)}` (--frozen never "
            "resolves)",
            kind="lock_stale",
            details={"stale": reasons},
        )


def sync(
    lock_path: Path,
    dest: Path,
    options: FleetOptions,
    *,
    wanted_path: Path | None = None,
    frozen: bool = False,
    prune: bool = False,
    target: str | None = None,
    progress: Callable[[str], None] | None = None,
    callbacks: InstallCallbacks = NO_CALLBACKS,
) -> SyncResult:
    """Sync ``dest`` with the lock. Raises for problems with the whole set (unreadable or
    stale lock, bad policy); failures of single plugins are outcomes in the result, each
    with its plan step (a downgrade is one: the lock decides). The versions replaced are kept
    for ``nexo plugin rollback`` as ``upgrade`` keeps them (one per plugin). ``callbacks``:
    ``notice`` hears slow answers; ``confirm``, when given, sees each plugin's plan (on the
    worker threads) and may cancel it; the signer the lock recorded is enforced by the install
    step whatever it answers."""
    candidates = host_candidates(target)
    result = SyncResult(lock_path, dest)
    # A malformed SOURCE_DATE_EPOCH (receipts may take it) fails the run, not one plugin.
    source_date_epoch(os.environ)
    with Session(options, callbacks) as session:
        session.policy()  # a bad policy fails the whole run before anything is fetched
        # Each blob is extracted as soon as it is checked; the run syncs the blobs it
        # downloaded to disk once, at its end (the installed trees are synced before their
        # renames, as ever).
        session.cache.sync_later()
        if frozen and not lock_path.exists():
            raise _frozen_needs(lock_path)
        locked = None
        before: Lock | None = None
        if wanted_path is not None and wanted_path.exists():
            if frozen:
                locked = read_lock(lock_path)
                _refuse_stale(lock_path, stale_entries(read_wanted(wanted_path), locked))
            else:
                # Resolving is the lock command's work: its modules are imported for it only.
                from nexo_pkg.fleet.lock import lock as relock  # noqa: PLC0415

                before = read_lock(lock_path) if lock_path.exists() else Lock()
                relocked = relock(wanted_path, lock_path, options, session=session)
                result.relocked = relocked.written
                locked = relocked.lock
        if locked is None:
            locked = read_lock(lock_path)
        _check_registry_config(locked, options.install.registry_config)
        jobs = min(checked_jobs(options.jobs), len(locked.plugins))
        if not _any_to_install(locked.plugins, installed_by_id(dest), candidates):
            # Every plugin looks in line with the lock already: no worker process is forked
            # for a run with nothing to install (checked again under the root's lock below,
            # where a plugin changed meanwhile is still installed, one job at a time).
            jobs = 1
        else:
            # A proxy setting that cannot work fails the run once (exit 2), before the root
            # is touched, not each plugin it would fetch.
            from nexo_pkg.net.api import check_proxy_settings  # noqa: PLC0415

            check_proxy_settings()
        # The root's lock is held for the whole run, so the plugins' workers extract side by
        # side into their own staging trees, each in a worker process of `cpu` when there are
        # several jobs (one per core, up to the jobs: the downloads stay on one thread per
        # job, and an extraction is CPU work, a file created in the page cache, so more
        # processes than cores only add forks and contention; forked before the locks are
        # taken, so that they never hold them); the receipts and the rename that makes each
        # plugin visible stay here.
        with (
            CpuPool(jobs) as cpu,
            extraction_workers(cpu),
            _sync_lock(dest),
            locked_root(dest) as root,
            _InstallerLoading() as loading,
        ):
            if cpu.workers > 1:
                # The tarballs download a few at a time, at least one per extraction worker,
                # in the plugins' order: a tarball shares the network (or on loopback the
                # cores) with fewer others, so the first ones arrive sooner and the workers
                # start sooner, and the downloads still run ahead of the extractions. The
                # plugins' other requests (their signature files) go side by side.
                session.limit_downloads(max(2, cpu.workers))
            installed = installed_by_id(dest)
            result.plan = sync_plan(locked.plugins, installed, candidates, prune=prune)
            steps = {step.plugin_id: step for step in result.plan}
            # The plugins fetched at once (the others are unchanged), for the installer's import.
            fetched = sum(step.change in _FETCHED for step in result.plan)
            loading.together = min(jobs, fetched)
            # One extraction per plugin fetched: after the last, the workers end while the
            # last plugins are synced and renamed, not after.
            cpu.expect(fetched)
            kept_before: dict[str, list[Path]] = {}
            for item in scan_kept(dest):
                if item.plugin_id is not None:
                    kept_before.setdefault(item.plugin_id, []).append(item.path)
            entries = sorted(locked.plugins.items())
            started = itertools.count(1)
            guard = threading.Lock()

            def one(item: tuple[str, LockedPlugin]) -> PluginOutcome:
                plugin_id, entry = item
                if progress is not None:
                    # `[n/total] id version` as a worker takes it up, numbered in that order.
                    with guard:
                        progress(f"[{next(started)}/{len(entries)}] {plugin_id} {entry.version}")
                outcome = _sync_one(
                    session,
                    entry=entry,
                    present=installed.get(plugin_id, []),
                    candidates=candidates,
                    target=target,
                    root=root,
                    resolved_now=result.relocked,
                    kept_before=tuple(kept_before.get(plugin_id, ())),
                    callbacks=callbacks,
                    fetching=loading.fetching,
                )
                outcome.change = steps[plugin_id].change
                outcome.from_version = steps[plugin_id].from_version
                return outcome

            # Interrupted (Ctrl-C, SIGTERM), the run stops its requests: the plugins under
            # way end the step they are in (a download fails; an extraction or a rename
            # finishes) instead of waiting for the network, then the run ends.
            result.outcomes.extend(
                run_bounded(one, entries, jobs=jobs, on_interrupt=session.stop_requests)
            )
            if prune:
                for plugin_id in sorted(set(installed) - set(locked.plugins)):
                    removal = _remove_all(
                        plugin_id, installed[plugin_id], root, kept_before.get(plugin_id, [])
                    )
                    removal.change = "remove"
                    result.outcomes.append(removal)
        session.cache.sync_added()
        result.requests = session.request_counts()
    if result.relocked and before is not None:
        _unlock_refused_signers(lock_path, locked, before, result)
    return result


def _unlock_refused_signers(path: Path, locked: Lock, before: Lock, result: SyncResult) -> None:
    """Take back from the lock this run wrote the entries of the plugins refused as
    ``signer_changed``: their locked version is what the source said today, not a reviewed
    pin, and a lock that kept it would install it on the next run (a current lock is not
    resolved again, so its signer is no longer compared with the installed one). Each keeps
    its entry from before the run, or none, so the next run resolves it again and refuses it
    again, until ``--allow-signer-change``."""
    refused = {item.plugin_id for item in result.outcomes if item.kind == "signer_changed"}
    if not refused:
        return
    kept = Lock(dict(locked.plugins))
    for plugin_id in refused:
        if plugin_id in before.plugins:
            kept.plugins[plugin_id] = before.plugins[plugin_id]
        else:
            kept.plugins.pop(plugin_id, None)
    write_if_changed(path, render_lock(kept))
    result.relocked = render_lock(kept) != render_lock(before)


class _InstallerLoading(contextlib.AbstractContextManager["_InstallerLoading"]):
    """Loads the installer on a thread of its own once :attr:`together` plugins of the run have
    gone to fetch their artifacts (each calls :meth:`fetching` as it goes; set before they
    start): the network modules are loaded by then and their requests are on their way, so
    the import runs while the downloads wait on the network rather than before a request or
    after a download, and the first plugin downloaded finds it ready. (Should fewer go, a
    plugin loads it when it needs it.) On exit the thread is waited for."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self.together = 0
        self._fetching = 0
        self._thread: threading.Thread | None = None

    def fetching(self) -> None:
        with self._guard:
            self._fetching += 1
            if self._fetching != self.together:
                return
            self._thread = threading.Thread(target=_load_installer, name="nexo-installer")
        self._thread.start()

    def __exit__(self, *exc_info: object) -> None:
        with self._guard:
            thread = self._thread
        if thread is not None:
            thread.join()


def _load_installer() -> None:
    # An import that fails here fails again, with its error, where the installer is used:
    # this thread says nothing.
    with contextlib.suppress(Exception):
        from nexo_pkg.install.api import install_artifact  # noqa: PLC0415

        del install_artifact


def _sync_one(
    session: Session,
    *,
    entry: LockedPlugin,
    present: list[Installed],
    candidates: tuple[str, ...],
    target: str | None,
    root: InstallRoot,
    resolved_now: bool,
    kept_before: tuple[Path, ...] = (),
    callbacks: InstallCallbacks = NO_CALLBACKS,
    fetching: Callable[[], None] | None = None,
) -> PluginOutcome:
    """Bring one plugin in line with its lock entry inside the held ``root``; a failure is
    an outcome, never raised.

    ``resolved_now``: the lock was (re)written from the wanted set by this run, so its signer
    is what the source says today, not a reviewed pin; the new version must then keep the
    installed one's signer (``signer_changed``, unless ``--allow-signer-change``), as an
    upgrade must. ``fetching`` is called as the artifact is about to be fetched."""
    try:
        row = pick_target(entry, candidates)
        current = _current(entry, row, present)
        if len(present) == 1 and current:
            _judge_unverified(session, entry, row, present[0])
            return PluginOutcome(
                entry.plugin_id, "unchanged", entry.version, str(present[0].path),
                identity=_identity(present[0]),
            )  # fmt: skip
        final = root.dest / f"{entry.plugin_id}-{entry.version}"
        install_options = replace(
            session.options.install,
            dest=root.dest,
            target=target,
            force=final.exists() and not current,
            # The lock names the version the root must hold, older than the installed or not.
            allow_downgrade=True,
        )
        policy = session.policy()
        candidate = locked_candidate(entry, row, published=_installed_at(entry), policy=policy)
        if fetching is not None:
            fetching()
        fetched, mode = session.fetch_locked(candidate, entry.resolved)
        # A run with nothing to install never loads the installer (see _InstallerLoading).
        from nexo_pkg.install.api import install_artifact, release_hold  # noqa: PLC0415

        installed = install_artifact(
            fetched,
            install_options,
            policy=policy,
            mode=mode,
            callbacks=callbacks,
            # The root's lock is held since `present` was scanned: no rescan per plugin.
            step=InstallStep(
                root=root,
                installed=tuple(item.path for item in present),
                # The versions replaced are kept for `rollback`, as upgrade keeps them.
                keep_old=True,
                previous_signature=_installed_signature(present) if resolved_now else None,
                # The lock's signer binds the artifact, whatever the callbacks answer.
                locked_signer=(
                    LockedSigner(row.identity, row.issuer) if row.identity is not None else None
                ),
            ),
        )
        # The install itself replaces the other installed versions of the plugin.
        removed_other = bool(installed.set_aside)
        left: list[Path] = []
        for item in present:
            if item.path != installed.path and item.path.exists():
                left.extend(_removed(root, item.path))
                removed_other = True
        # The lock named the version: a hold (`rollback`, `hold`) on the plugin is over.
        released = release_hold(root.dest, entry.plugin_id)
        # The tree replaced at the locked version's own path (a receipt that no longer
        # matches the lock) went to be removed, not kept: it is no version to roll back to.
        kept = tuple(
            path for path in installed.set_aside if path.parent.parent.name != REMOVING_AREA
        )
        if kept:
            # One previous version per plugin, as upgrade keeps: the ones kept before go.
            for path in kept_before:
                if path not in kept and path.exists():
                    left.extend(_removed(root, path))
        action = "replaced" if present and (removed_other or install_options.force) else "installed"
        return PluginOutcome(
            entry.plugin_id, action, entry.version, str(installed.path),
            identity=installed.plan.signature.identity, kept=tuple(str(path) for path in kept),
            warnings=(*installed.plan.warnings, *(left_behind(holder) for holder in left)),
            released_hold=released.version if released is not None else None,
            notes=() if installed.plan.fallback_note is None else (installed.plan.fallback_note,),
        )  # fmt: skip
    except NexoError as error:
        # A signer refusal comes with the policy's warnings (a hidden entry may be why), said
        # with it as install says them.
        said = error.details.get("policy_warnings") or ()
        return PluginOutcome(
            entry.plugin_id, "failed", entry.version, kind=error.kind,
            error=_linked_refusal(entry.plugin_id, error, root.dest) or error.message,
            warnings=tuple(warning for warning in said if isinstance(warning, str)),
        )  # fmt: skip


def _linked_refusal(plugin_id: str, error: NexoError, dest: Path) -> str | None:
    """Sync's words for install's refusal to go beside a development link of the plugin:
    install's remedy, ``--force``, is no sync option (sync never replaces a link)."""
    link, target = error.details.get("path"), error.details.get("linked_to")
    if error.kind != "already_installed" or target is None:
        return None
    return _link_words(plugin_id, link, target, dest)


def _link_words(plugin_id: str, link: object, target: object, dest: Path) -> str:
    """Why sync leaves ``plugin_id`` alone: the development ``link`` (-> ``target``)."""
    from nexo_pkg.install.api import plugin_command  # noqa: PLC0415 (a refusal)

    remove = plugin_command("remove", plugin_id, root=dest)
    return (
        f"{plugin_id} is linked for development at {link} (-> {target}), and sync never "
        f"replaces a development link: remove it first (`{remove}` unlinks it and leaves the "
        "checkout alone), then sync again"
    )


def _judge_unverified(
    session: Session, entry: LockedPlugin, row: LockedTarget, item: Installed
) -> None:
    """An install already at the locked bytes is left alone, unless nothing vouches for its
    signer (the lock recorded none, and its receipt no verified signature) while this run
    requires a signature for it (``--require-signature`` or the policy): then the artifact
    is judged as a clean root's sync judges it, so every host gives the same verdict (an
    unsigned one is ``signature_missing``, and the installed tree stays as it is)."""
    receipt = item.receipt.signature if item.receipt is not None else None
    if row.identity is not None or (receipt and receipt.get("status") == "verified"):
        return
    policy, flags = session.policy(), session.trust
    if flags.skip_signature_verify or not (
        flags.require_signature
        or policy.default == "require"
        or any(author.mode == "require" for author in policy.authors)
    ):
        return  # nothing requires a signature: the usual no-op, with no source loaded
    candidate = locked_candidate(entry, row, published=entry.published, policy=policy)
    if session.trust_mode(candidate.origin.owner, candidate.origin.repo) != "require":
        return
    fetched, mode = session.fetch_locked(candidate, entry.resolved)
    from nexo_pkg.install.api import verify_artifact  # noqa: PLC0415 - for this case only

    verify_artifact(fetched, policy=policy, mode=mode)


def _current(entry: LockedPlugin, row: LockedTarget, present: list[Installed]) -> list[Installed]:
    """The installs of ``present`` that are the locked version and artifact."""
    return [
        item
        for item in present
        if item.receipt is not None
        and item.receipt.version == entry.version
        and item.receipt.sha256 == row.sha256
    ]


def _any_to_install(
    plugins: Mapping[str, LockedPlugin],
    installed: Mapping[str, list[Installed]],
    candidates: tuple[str, ...],
) -> bool:
    """Whether some locked plugin is not installed as :func:`_sync_one` would leave it
    unchanged (one install, the locked version and artifact); a lock entry without a target
    for this host counts as work (its failure is reported there)."""
    for plugin_id, entry in plugins.items():
        present = installed.get(plugin_id, [])
        try:
            row = pick_target(entry, candidates)
        except NexoError:
            return True
        if len(present) != 1 or not _current(entry, row, present):
            return True
    return False


def _identity(item: Installed) -> str | None:
    signature = item.receipt.signature if item.receipt is not None else None
    value = signature.get("identity") if signature else None
    return value if isinstance(value, str) else None


def _removed(root: InstallRoot, path: Path) -> list[Path]:
    """Remove the tree ``path``: its place under ``.nexo/removing`` when its files could not
    all be deleted (said as a warning), else nothing."""
    holder = remove_tree(root, path)
    return [] if holder is None else [holder]


def _remove_all(
    plugin_id: str, items: list[Installed], root: InstallRoot, kept: list[Path]
) -> PluginOutcome:
    """``--prune``'s removal of a plugin the lock does not name, as ``nexo plugin remove``
    removes it: every installed version, the versions kept for it (nothing is left to roll
    back to), and its hold (nothing is left to hold)."""
    left: list[Path] = []
    try:
        for path in (*(item.path for item in items), *kept):
            if path.exists():
                left.extend(_removed(root, path))
        from nexo_pkg.install.api import release_hold  # noqa: PLC0415 - a removal only

        released = release_hold(root.dest, plugin_id)
    except NexoError as error:
        return PluginOutcome(plugin_id, "failed", kind=error.kind, error=error.message)
    except OSError as exc:
        return PluginOutcome(plugin_id, "failed", kind="io", error=str(exc))
    # Out of the daemon's sight either way; what could not be deleted is said, as `remove`.
    return PluginOutcome(
        plugin_id, "removed", items[0].receipt.version if items[0].receipt else None,
        released_hold=released.version if released is not None else None,
        warnings=tuple(left_behind(holder) for holder in left),
    )  # fmt: skip


def _installed_signature(present: list[Installed]) -> Mapping[str, Any] | None:
    """The receipt signature of the highest installed version among ``present``, the one a
    version resolved by this run must keep the signer of."""
    with_receipts = [item for item in present if item.receipt is not None]
    newest = max(with_receipts, key=version_order, default=None)
    return newest.receipt.signature if newest is not None and newest.receipt else None
