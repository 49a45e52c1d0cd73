"""The hash of an unpacked plugin tree: the lock's ``tree`` beside the tarball's ``sha256``.

As Terraform's ``h1:`` beside ``zh:``, it lets an extracted root be checked against the lock
offline, whatever tarball it came from. Definition (``n1:``), over the tree as ``install``
leaves it, the receipt ``.nexo-install.json`` at its top left out:

* one line per entry below the root, directories included (implied parents too), sorted by
  path (UTF-8 bytes; ``/``-separated, relative, no ``./``):
  ``d 0755 <path>\\n`` for a directory, ``f <mode> <sha256 hex> <path>\\n`` for a regular
  file (``<mode>`` four octal digits: ``0644``, or ``0755`` for a file the archive marked
  executable by its owner and for ``bin/<id>``), ``x 0000 - <path>\\n`` for anything else;
* ``tree = "n1:" + sha256 hex of the lines``.

So the hash covers paths, modes and contents; it does not depend on the order of the tar
entries, owners, times or the umask. Computed at ``lock`` time from the tarball (read by the
install's own archive walker, under its limits), and from a directory by
:func:`hash_directory`.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nexo_pkg.core.errors import UsageError
from nexo_pkg.core.files import sha256_file
from nexo_pkg.install.api import (
    RECEIPT_NAME,
    Installed,
    is_removal_leftover,
    plugin_directory_mode_changed,
    scan_installed,
    verify_installed,
)
from nexo_pkg.sbom import SBOM_MEMBER
from nexo_pkg.sources.api import NOARCH, ArchiveLimits, ArchiveListing, TreeSink, walk_archive

if TYPE_CHECKING:
    from nexo_pkg.fleet.lockfile import LockedPlugin

PREFIX = "n1:"
DIRECTORY_MODE = 0o755
FILE_MODE = 0o644
EXECUTABLE_MODE = 0o755
# What an install receipt's verification lists as changed, in a LockCheck's order.
_CHANGES = ("modified", "missing", "extra", "mode_changed")


def tree_hash(lines: Iterable[tuple[str, str]]) -> str:
    """``n1:`` + the sha256 of ``(path, line)`` pairs sorted by path."""
    hasher = hashlib.sha256()
    for _, line in sorted(lines, key=lambda pair: pair[0].encode("utf-8", "surrogateescape")):
        hasher.update(line.encode("utf-8", "surrogateescape"))
    return PREFIX + hasher.hexdigest()


def _file_line(path: str, mode: int, digest: str) -> tuple[str, str]:
    return path, f"f {mode:04o} {digest} {path}\n"


def hash_tarball(tarball: Path, plugin_id: str, limits: ArchiveLimits) -> str:
    """The tree hash of what installing ``tarball`` as ``plugin_id`` leaves on disk.

    Built from the listing of the install's own archive walker (which hashes every file
    once, as it reads it). Raises what that walker raises (``archive_invalid``,
    ``archive_unsafe``, ``io``).
    """
    return tarball_hashes(tarball, plugin_id, limits)[0]


def tarball_hashes(
    tarball: Path, plugin_id: str, limits: ArchiveLimits, *, version: str | None = None
) -> tuple[str, str | None]:
    """The tree hash (:func:`hash_tarball`) and ``sha256:<hex>`` of the SBOM the tarball
    carries (``None`` when it carries none), from one read of the archive.

    With ``version``, an SBOM that ``install`` would refuse (over the cap, not CycloneDX 1.6,
    about another plugin) is ``archive_invalid`` naming it, as there: a lock never records
    the digest of an inventory no host can install."""
    listing = walk_archive(tarball, limits, TreeSink())
    if version is not None:
        # lock only: sync's fast path imports this module and must not load the payload check.
        from nexo_pkg.install.api import check_sbom  # noqa: PLC0415

        check_sbom(listing, plugin_id, version)
    sbom = listing.files.get(SBOM_MEMBER)
    return _listing_tree(listing, plugin_id), None if sbom is None else f"sha256:{sbom.sha256}"


def _listing_tree(listing: ArchiveListing, plugin_id: str) -> str:
    lines = [(name, f"d {DIRECTORY_MODE:04o} {name}\n") for name in listing.directories]
    launcher = f"bin/{plugin_id}"
    for name, info in listing.files.items():
        executable = bool(info.mode & 0o100) or name == launcher
        lines.append(_file_line(name, EXECUTABLE_MODE if executable else FILE_MODE, info.sha256))
    return tree_hash(lines)


def hash_directory(root: Path) -> str:
    """The tree hash of an installed plugin directory (links are never followed).

    Raises :class:`OSError` when the tree cannot be read.
    """
    lines: list[tuple[str, str]] = []
    for current, dirs, files in os.walk(root):
        base = Path(current)
        for name in sorted([*dirs, *files]):
            path = base / name
            relative = path.relative_to(root).as_posix()
            if relative == RECEIPT_NAME:
                continue
            info = path.lstat()
            if stat.S_ISDIR(info.st_mode):
                lines.append((relative, f"d {stat.S_IMODE(info.st_mode):04o} {relative}\n"))
            elif stat.S_ISREG(info.st_mode):
                mode = stat.S_IMODE(info.st_mode)
                lines.append(_file_line(relative, mode, sha256_file(path, regular=True)))
            else:
                lines.append((relative, f"x 0000 - {relative}\n"))
        dirs[:] = [d for d in dirs if stat.S_ISDIR((base / d).lstat().st_mode)]
    return tree_hash(lines)


def installed_by_id(root: Path) -> dict[str, list[Installed]]:
    """The plugins installed in ``root`` with a receipt, by id; ``io`` when it cannot be read.
    A tree a ``remove`` left that the daemon skips (an earlier directory holds its id) is no
    install, as ``list``, ``verify`` and ``doctor`` count it; one the daemon loads is one."""
    items = scan_installed(root)
    if any(is_removal_leftover(item.path.name) for item in items):
        # Read only when such a name is there: sync's plan stays as cheap as it was.
        from nexo_pkg.install.api import linked_plugins, skipped_removal_leftovers  # noqa: PLC0415

        skipped = skipped_removal_leftovers(items, tuple(linked_plugins(root)))
        items = [item for item in items if item.path not in skipped]
    grouped: dict[str, list[Installed]] = {}
    for item in items:
        if item.receipt is not None:
            grouped.setdefault(item.receipt.id, []).append(item)
    return grouped


@dataclass(frozen=True)
class LockCheck:
    """One locked plugin checked in a plugin root against the lock's tree hash."""

    plugin_id: str
    version: str
    target: str | None = None
    path: str | None = None
    expected: str | None = None
    actual: str | None = None
    problem: str | None = None
    # What the install receipt says changed (details only: the verdict is the tree hash).
    changes: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.problem is None and self.expected is not None and self.expected == self.actual

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.plugin_id,
            "version": self.version,
            "target": self.target,
            "path": self.path,
            "ok": self.ok,
            "tree": self.expected,
            "actual_tree": self.actual,
            "problem": self.problem,
            **self.changes,
        }


def check_root(lock_path: Path, root: Path, plugin_id: str | None = None) -> list[LockCheck]:
    """Check every plugin the lock names (or only ``plugin_id``) as installed in ``root``,
    offline: the installed version must be the locked one and its tree must hash to the
    lock's ``tree`` for the target it was installed for.

    Raises ``lock_invalid`` for an unreadable lock, ``usage`` for a ``plugin_id`` the lock
    does not name (nothing would be checked); problems of single plugins are results.
    """
    from nexo_pkg.fleet.lockfile import read_lock  # noqa: PLC0415

    lock = read_lock(lock_path)
    if plugin_id is not None and plugin_id not in lock.plugins:
        named = ", ".join(sorted(lock.plugins)) or "no plugin"
        raise UsageError(f"{lock_path} does not name {plugin_id!r} (it names {named})")
    installed = installed_by_id(root)
    return [
        _check_installed(name, entry, installed.get(name, []), root)
        for name, entry in sorted(lock.plugins.items())
        if plugin_id is None or name == plugin_id
    ]


def _check_installed(
    name: str, entry: LockedPlugin, found: list[Installed], root: Path
) -> LockCheck:
    """``entry`` against the installs of plugin ``name`` found in ``root``."""
    if not found:
        return LockCheck(name, entry.version, problem=f"not installed in {root}")
    item = found[0]
    receipt = item.receipt
    assert receipt is not None  # noqa: S101 - installed_by_id keeps installs with receipts
    if len(found) > 1 or receipt.version != entry.version:
        versions = ", ".join(sorted(str(i.receipt.version) for i in found if i.receipt))
        return LockCheck(
            name, entry.version, path=str(item.path),
            problem=f"installed {versions}, the lock names {entry.version}",
        )  # fmt: skip
    # The receipt names the host's target; sync installs the noarch tarball when the lock
    # has none for that target (fleet.sync.pick_target), so the noarch row then holds.
    target = receipt.target if receipt.target in entry.targets else NOARCH
    row = entry.targets.get(target)
    if row is None or row.tree is None:
        why = (
            f"the lock has no {receipt.target} target"
            if row is None
            else f"the lock records no tree hash for {target} (run `nexo plugin "
            "lock --upgrade` with this version of nexo-pkg to record it)"
        )
        return LockCheck(name, entry.version, target, str(item.path), problem=why)
    try:
        actual = hash_directory(item.path)
    except OSError as exc:
        return LockCheck(
            name, entry.version, target, str(item.path), row.tree,
            problem=f"cannot read the tree: {exc.strerror or exc}",
        )  # fmt: skip
    report = verify_installed(item)
    changes = {key: list(getattr(report, key)) for key in _CHANGES}
    # The tree hash covers what is below the plugin directory; the directory itself must be
    # as install makes it (a plugin directory every user could write is not the locked tree).
    # A receipt without modes (the reference installer's, whose directory has the umask's
    # mode) is judged as verify judges it: by the bits no install sets.
    problem = None
    if plugin_directory_mode_changed(item.path, recorded=receipt.modes is not None):
        mode = stat.S_IMODE(item.path.lstat().st_mode)
        problem = f"the plugin directory's mode is {mode:04o}, not {DIRECTORY_MODE:04o}"
    return LockCheck(
        name, entry.version, target, str(item.path), row.tree, actual, problem, changes
    )
