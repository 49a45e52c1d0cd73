"""``nexo plugin rollback ID``: put back the previous version an upgrade kept, offline.

``upgrade`` keeps the version it replaces under ``<dest>/.nexo/kept`` (by default only that
one per plugin; ``--keep-old`` keeps every version replaced). A rollback re-hashes that kept
tree against its own receipt, then swaps it with the installed version in one journalled step
(the installed one becomes the kept version): on Linux the two trees change places in one
``renameat2(RENAME_EXCHANGE)``, so a crash at any point leaves either the old or the new
version discoverable, never neither, and never both; where the kernel cannot exchange, the kept
tree is renamed in before the installed one leaves (both for a moment, never neither).

A rollback goes back, never forward: it puts back the version replaced last (by an upgrade
or a sync) among those kept, past the ones earlier rollbacks set aside, so a second rollback
goes one further back when ``--keep-old`` kept more, and otherwise says nothing earlier is
kept. The plugin is then held on the version put back
(:mod:`nexo_pkg.install.hold`) until the operator names a version or releases the hold.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.version import Version
from nexo_pkg.install.hold import Hold, read_hold, set_hold
from nexo_pkg.install.receipts import Installed, scan_installed, scan_kept, version_order
from nexo_pkg.install.remedy import plugin_command, version_source
from nexo_pkg.install.root import KEPT_AREA, locked_root, publish, swap_in
from nexo_pkg.install.verify import verify_installed


@dataclass(frozen=True)
class RollbackResult:
    """What a rollback did: ``to_version`` now installed at ``path``; ``from_version`` (if
    any was installed) kept at ``kept_path``."""

    plugin_id: str
    from_version: str | None
    to_version: str
    path: Path
    kept_path: Path | None
    dry_run: bool = False
    # The hold a rollback leaves (see :mod:`nexo_pkg.install.hold`).
    hold: Hold | None = None
    # The version put back came from a local file: no release to name (``upgrade ID@TAG``
    # refuses it); installing another tarball names a version.
    local: bool = False
    # The version put back names no origin nexo-pkg knows: an install records one.
    unknown: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": True,
            "id": self.plugin_id,
            "from_version": self.from_version,
            "version": self.to_version,
            "path": str(self.path),
            "kept_path": str(self.kept_path) if self.kept_path else None,
            "dry_run": self.dry_run,
            "held": self.hold is not None,
        }


def _order_key(item: Installed) -> tuple[int, str, tuple[bool, Version]]:
    """Kept versions in the order they were replaced: a kept tree's holder under
    ``.nexo/kept`` changes (its time of change) when the tree is renamed into it. The
    receipt's ``installed_at`` cannot say it (a registry or sync install records the
    version's creation time, the same for every version packed without
    ``SOURCE_DATE_EPOCH``); it and the version only break ties."""
    assert item.receipt is not None  # noqa: S101 (filtered by the callers)
    try:
        kept_at = item.path.parent.stat(follow_symlinks=False).st_mtime_ns
    except OSError:
        kept_at = 0
    return kept_at, item.receipt.installed_at, version_order(item)


def rollback_target(
    dest: Path,
    plugin_id: str,
    rolled_back_from: tuple[str, ...] = (),
    installed: frozenset[tuple[str, str]] = frozenset(),
) -> Installed:
    """The kept version a rollback of ``plugin_id`` would put back: the one replaced last
    (set aside most recently) of those kept, past the versions earlier rollbacks set aside
    (``rolled_back_from``) and the very artifact installed now (``installed``: version and
    sha256 of each installed tree; an install that released a hold can leave a kept copy of
    what it put back): a rollback goes back, never forward. Raises ``not_installed`` when
    none is left."""
    kept = [item for item in scan_kept(dest) if item.plugin_id == plugin_id]
    eligible = [
        item
        for item in kept
        if item.receipt is not None
        and item.receipt.version not in rolled_back_from
        and (item.receipt.version, item.receipt.sha256) not in installed
    ]
    if not eligible:
        local = all(not item.receipt.upgradable for item in kept if item.receipt)
        unknown = any(not item.receipt.origin_known for item in kept if item.receipt)
        if unknown:
            command = plugin_command("install", "SOURCE", "--force", root=dest)
            returning = f"`{command}` (SOURCE: where it came from)"
        elif local:
            returning = f"installing its tarball (`{plugin_command('install', 'PATH', root=dest)}`)"
        else:
            returning = f"`{plugin_command('upgrade', f'{plugin_id}@TAG', root=dest)}`"
        past = (
            f" (kept too: {', '.join(rolled_back_from)}, rolled back from; "
            f"{returning} returns to one)"
            if kept and rolled_back_from
            else ""
        )
        raise NexoError(
            f"no earlier version of {plugin_id!r} is kept in {dest}{past}: a rollback goes "
            "back, never forward; `nexo plugin upgrade`, `install` and `sync` keep the version "
            "they replace (see `nexo plugin list`, state `kept`)",
            kind="not_installed",
            details={"id": plugin_id},
        )
    return max(eligible, key=_order_key)


def _final_name(kept_tree: Path) -> str:
    """The directory name the kept tree had when it was installed: its holder's name is
    ``<name>-<12 hex digits>`` (see :meth:`InstallRoot.aside_path`)."""
    holder = kept_tree.parent.name
    name, _, suffix = holder.rpartition("-")
    if not name or len(suffix) != 12:
        raise NexoError(f"{kept_tree} is not a kept version", kind="io")
    return name


def _taken(final: Path, olds: tuple[Path, ...], plugin_id: str, version: str) -> bool:
    """Whether ``final`` (where the kept version goes) is an empty directory to replace;
    ``already_installed`` when something else that is no install of the plugin is there
    (a file, a link, a directory without a receipt): nothing is moved or written."""
    if final in olds or not (final.is_symlink() or final.exists()):
        return False
    if final.is_dir() and not final.is_symlink():
        try:
            if not any(final.iterdir()):
                return True
        except OSError as exc:
            raise NexoError(f"cannot read {final}: {exc.strerror or exc}", kind="io") from exc
    what = "a link" if final.is_symlink() else "a directory" if final.is_dir() else "a file"
    raise NexoError(
        f"{final} is {what} that is no install of {plugin_id}, where the rollback would put "
        f"back {version}; move or remove it first (nothing was changed)",
        kind="already_installed",
        details={"path": str(final)},
    )


def rollback(
    dest: Path,
    plugin_id: str,
    *,
    dry_run: bool = False,
    committing: Callable[[], None] | None = None,
) -> RollbackResult:
    """Swap the installed ``plugin_id`` with the version kept before it, once the kept tree
    is re-hashed against its receipt: a changed, missing or extra file refuses the rollback
    (``checksum_mismatch``, nothing moved), and so does a receipt without file hashes
    (``checksum_missing``). Raises ``not_installed`` when no earlier version
    is kept, ``io`` when the root cannot be changed. ``committing`` is called once everything
    is checked, just before the root changes (as :attr:`InstallCallbacks.committing`: the
    command holds a signal back from there until the rollback is done and said)."""
    with locked_root(dest) as root:
        current = [item for item in scan_installed(dest) if item.plugin_id == plugin_id]
        earlier = read_hold(dest, plugin_id)
        past = earlier.rolled_back_from if earlier is not None else ()
        now = frozenset(
            (item.receipt.version, item.receipt.sha256) for item in current if item.receipt
        )
        target = rollback_target(dest, plugin_id, past, now)
        assert target.receipt is not None  # noqa: S101 (scan_kept filtered by id)
        kept = target.receipt
        if kept.files is None:
            # Installed by another tool: nothing says what its files should be.
            source = version_source(target)
            where = (
                f"`{plugin_command('install', 'PATH', '--allow-downgrade', root=dest)}`, PATH "
                f"the tarball of {kept.version}"
                if source is None
                else f"`{plugin_command('install', source[0], '--allow-downgrade', root=dest)}`"
                + (f", TAG the release of {kept.version}" if source[1] else "")
            )
            raise NexoError(
                f"the kept {plugin_id} {kept.version} cannot be checked before it comes back: "
                "its receipt has no file hashes (it was installed by another tool); install "
                f"that version again instead ({where}); nothing was changed",
                kind="checksum_missing",
                details={"path": str(target.path)},
            )
        report = verify_installed(target)
        if not report.ok:
            # A file can differ in two ways (a link where a file was: content and mode), and
            # is named once.
            changed = list(
                dict.fromkeys(
                    [*report.modified, *report.missing, *report.extra, *report.mode_changed]
                )
            )
            detail = report.problem or ", ".join(changed[:5])
            raise NexoError(
                f"the kept {plugin_id} {target.receipt.version} no longer matches its receipt "
                f"({detail}); nothing was changed",
                kind="checksum_mismatch",
                details={"path": str(target.path), "changed": changed},
            )
        final = dest / _final_name(target.path)
        olds = tuple(item.path for item in current)
        empty = _taken(final, olds, plugin_id, target.receipt.version)
        from_version = current[0].receipt.version if current and current[0].receipt else None
        if dry_run:
            return RollbackResult(
                plugin_id, from_version, target.receipt.version, final, None, dry_run=True
            )
        if committing is not None:
            committing()
        if empty:
            final.rmdir()  # holds nothing: replaced, as install replaces it
        if len(olds) == 1 and olds[0].is_dir() and not olds[0].is_symlink():
            moved: tuple[Path, ...] = (swap_in(root, target.path, final, olds[0]),)
        else:
            moved = publish(root, target.path, final, replaces=olds, keep_old=True)
        held = set_hold(
            dest,
            plugin_id,
            target.receipt.version,
            reason="rollback",
            rolled_back_from=(*past, *([from_version] if from_version else [])),
        )
    kept_path = next((path for path in moved if path.parent.parent.name == KEPT_AREA), None)
    return RollbackResult(
        plugin_id, from_version, target.receipt.version, final, kept_path, hold=held,
        local=not target.receipt.upgradable, unknown=not target.receipt.origin_known,
    )  # fmt: skip
