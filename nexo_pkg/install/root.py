"""The install root: its lock, staging and removal areas, the replacement journal, the atomic
renames that publish and remove trees.

Layout of ``<dest>``::

    .nexo-install.lock                  serialises installs, upgrades and removals
    <id>-<version>/                     one installed plugin
        .nexo-install.json              its receipt
    .nexo/staging/<id>-<random>/tree/   an install in progress (stale ones are cleaned up)
    .nexo/removing/<name>-<random>/tree/  a removal in progress
    .nexo/kept/<name>-<random>/tree/    an old version ``upgrade`` kept for ``rollback``
    .nexo/journal/<random>.json         a replacement in progress (finished by the next run)
    .nexo/holds/<id>.json               a plugin held on its version (``install/hold.py``)

The daemon discovers manifests up to two directory levels below each search path, hidden
directories included, and keeps the first manifest of an id in file-name order; every tree
that is not the installed version therefore lives four levels down, where it never looks.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nexo_pkg.core import posix
from nexo_pkg.core.dirs import make_dir, make_dirs
from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.files import open_lock_file, open_regular, write_config_file
from nexo_pkg.core.posix import exchange, fsync_directory

LOCK_NAME = ".nexo-install.lock"
BOOKKEEPING_DIR = ".nexo"
STAGING_AREA = "staging"
REMOVING_AREA = "removing"
KEPT_AREA = "kept"
JOURNAL_AREA = "journal"
HOLDS_AREA = "holds"
# Every directory a run makes under `.nexo`, in the order doctor names one that is blocked.
BOOKKEEPING_AREAS = (STAGING_AREA, REMOVING_AREA, JOURNAL_AREA, KEPT_AREA, HOLDS_AREA)
TREE_NAME = "tree"
# Where earlier versions staged and removed trees (directly in <dest>, where the daemon looked).
LEGACY_PREFIXES = (".staging-", ".removing-")
# The reference installer leaves the same kinds of tree in <dest>: `.staging-<id>-<hex>` from an
# install it did not finish (crates/ext-installer/src/extract.rs:47,139), and
# `<dir>.removing-<8 hex>` when its `remove` renamed a plugin aside and could not delete it
# (src/plugin_admin.rs:600-617,669-677).
REMOVING_MARK = ".removing-"
MAX_JOURNAL_BYTES = 32 * 1024 * 1024
LOCK_TIMEOUT_ENV = "NEXO_INSTALL_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 120.0
# How long a held lock is waited for before the wait is said (as apt says "Waiting for cache
# lock"): a lock that comes free at once, or soon, is taken in silence.
LOCK_NOTE_AFTER = 1.0


# What deletes what a run left under `.nexo/staging`, `.nexo/removing` (and finishes a journal):
# every command that takes the root's lock (`locked_root` runs `InstallRoot.recover`). An
# upgrade with nothing to install and a `sync --dry-run` take no lock; `list`, `verify` and
# `doctor` only read.
CLEANED_BY = (
    "the next install, remove, rollback or sync on the root, or an upgrade that installs a "
    "version, deletes it once it can"
)


def is_removal_leftover(name: str) -> bool:
    """Whether ``name`` is what the reference installer's ``remove`` renames a plugin
    directory to before deleting it (``<dir>.removing-<8 hex digits>``)."""
    head, mark, tail = name.rpartition(REMOVING_MARK)
    return bool(head and mark) and len(tail) == 8 and all(c in "0123456789abcdef" for c in tail)


def is_leftover(name: str) -> bool:
    """Whether a directory named ``name`` directly in a plugin root is a tree an install or a
    removal left there (the reference installer's, or an earlier nexo-pkg's), not an install."""
    return name.startswith(LEGACY_PREFIXES) or is_removal_leftover(name)


def io_error(action: str, exc: OSError) -> NexoError:
    return NexoError(f"cannot {action}: {exc.strerror or exc}", kind="io")


def bookkeeping_in_the_way(path: Path) -> NexoError:
    """``io`` for a command that needs the bookkeeping directory ``path`` (``.nexo`` or an
    area in it) where a file, or anything else that is not a directory, is in its place: no
    run made it, it may be the operator's, so it is named rather than deleted."""
    return NexoError(
        f"cannot create {path}: a file that is not a directory is in its place "
        "(nexo-pkg keeps the root's bookkeeping there); move it away",
        kind="io",
    )


def blocked_bookkeeping(dest: Path, areas: tuple[str, ...] = BOOKKEEPING_AREAS) -> list[Path]:
    """Where something that is not a directory stands in place of ``<dest>/.nexo`` (then
    only that), or of one of its ``areas``: what a command needing it refuses with
    :func:`bookkeeping_in_the_way`. A symbolic link is none of them: the command that needs
    the directory replaces it (never what it points to), so the areas behind a linked
    ``.nexo`` do not count either; a path that cannot be looked at is left to the command."""
    bookkeeping = dest / BOOKKEEPING_DIR
    if _not_a_directory(bookkeeping):
        return [bookkeeping]
    if bookkeeping.is_symlink():
        return []
    return [bookkeeping / area for area in areas if _not_a_directory(bookkeeping / area)]


def _not_a_directory(path: Path) -> bool:
    """Whether something other than a directory or a symbolic link is at ``path``."""
    try:
        mode = path.lstat().st_mode
    except OSError:
        return False
    return not (stat.S_ISDIR(mode) or stat.S_ISLNK(mode))


@dataclass
class InstallRoot:
    """An install root held under its lock; created with :func:`locked_root`."""

    dest: Path
    created: list[Path] = field(default_factory=list)
    # Several threads of one process may work in a held root (``sync``): the bookkeeping
    # areas are created under this lock; everything else they do has names of its own.
    guard: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    # Every staging holder this run may have made, named before it is made: a signal that
    # lands between its creation and the caller's bookkeeping still finds it (locked_root).
    staging_holders: list[Path] = field(default_factory=list)

    @property
    def bookkeeping(self) -> Path:
        return self.dest / BOOKKEEPING_DIR

    def area(self, name: str) -> Path:
        """``<dest>/.nexo/<name>``, created (0755) when missing; never a link."""
        area = self.bookkeeping / name
        with self.guard:
            for path in (self.bookkeeping, area):
                if path.is_symlink():
                    discard(path)
                if path.exists() and not path.is_dir():
                    raise bookkeeping_in_the_way(path)
                if not path.is_dir():
                    try:
                        make_dir(path)
                    except OSError as exc:
                        raise io_error(f"create {path}", exc) from exc
                    self.created.append(path)
        return area

    def _holder(self, area: str, name: str) -> Path:
        import secrets  # noqa: PLC0415 - not for a command that only reads (`list`)

        holder = self.area(area) / f"{name}-{secrets.token_hex(6)}"
        if area == STAGING_AREA:
            self.staging_holders.append(holder)
        try:
            make_dir(holder)
        except OSError as exc:
            raise io_error(f"create {holder}", exc) from exc
        return holder

    def new_staging(self, plugin_id: str) -> Path:
        """An empty ``.nexo/staging/<id>-<random>/tree`` to extract into, owned by the caller
        once this returns: a failure or a signal (SIGTERM) before takes the holder away."""
        holder = self._holder(STAGING_AREA, plugin_id)
        tree = holder / TREE_NAME
        try:
            make_dir(tree)
        except BaseException as exc:
            discard(holder)
            if isinstance(exc, OSError):
                raise io_error(f"create {tree}", exc) from exc
            raise
        return tree

    def aside_path(self, path: Path, *, keep: bool = False) -> Path:
        """Where ``path`` goes when it leaves the daemon's sight: a new holder under
        ``.nexo/kept`` (``keep``) or ``.nexo/removing``; the returned ``tree`` is not created."""
        return self._holder(KEPT_AREA if keep else REMOVING_AREA, path.name) / TREE_NAME

    def set_aside(self, path: Path, *, keep: bool = False) -> Path:
        """Rename ``path`` out of the daemon's sight (atomic), so it vanishes from listings."""
        aside = self.aside_path(path, keep=keep)
        try:
            path.rename(aside)
        except OSError as exc:
            discard(aside.parent)
            raise io_error(f"move {path} aside", exc) from exc
        return aside

    def recover(self) -> None:
        """Finish or undo what an interrupted run left (we hold the lock): replacements
        recorded in the journal first, then staging and removal leftovers are deleted."""
        journal_area = self.bookkeeping / JOURNAL_AREA
        if journal_area.is_dir() and not journal_area.is_symlink():
            for entry in sorted(journal_area.iterdir()):
                if entry.suffix == ".json" and not entry.is_symlink():
                    _replay(self.dest, entry)
                discard(entry)
        for area in (STAGING_AREA, REMOVING_AREA):
            path = self.bookkeeping / area
            if path.is_dir() and not path.is_symlink():
                for holder in path.iterdir():
                    discard(holder)
        for child in self.dest.iterdir():
            if child.name.startswith(LEGACY_PREFIXES):
                discard(child)

    def prune(self) -> None:
        """Remove the bookkeeping directories that are empty, so an idle root holds only
        the lock file and the installed plugins (and kept versions, if any)."""
        for name in (STAGING_AREA, REMOVING_AREA, JOURNAL_AREA, KEPT_AREA, ""):
            path = self.bookkeeping / name if name else self.bookkeeping
            if path.is_dir() and not path.is_symlink():
                with contextlib.suppress(OSError):
                    path.rmdir()


# -- replacement journal ----------------------------------------------------------------------


def _write_journal(root: InstallRoot, record: dict[str, Any]) -> Path:
    import secrets  # noqa: PLC0415 - not for a command that only reads (`list`)

    area = root.area(JOURNAL_AREA)
    path = area / f"{secrets.token_hex(8)}.json"
    write_config_file(path, json.dumps(record).encode("utf-8"))
    return path


# A journal entry's path: the directories under the root that lead to it, and its name.
_Spot = tuple[tuple[str, ...], str]
_DIR_FLAGS = os.O_RDONLY | posix.O_DIRECTORY | posix.O_NOFOLLOW | posix.O_CLOEXEC


def _spot(relative: Any) -> _Spot:
    """A journal entry's path as directories and a name under the root; ``ValueError`` for
    anything that would leave the root, or that no file system can hold (a NUL)."""
    if (
        not isinstance(relative, str)
        or not relative
        or relative.startswith("/")
        or "\x00" in relative
    ):
        raise ValueError(f"bad path {relative!r}")
    parts = Path(relative).parts
    if any(part in {"", ".", ".."} for part in parts):
        raise ValueError(f"bad path {relative!r}")
    return parts[:-1], parts[-1]


class _RootWalk:
    """The root's directory opened once; every journal path is reached from it one
    component at a time with ``O_NOFOLLOW`` (``openat``), so a link planted anywhere on the
    way (``.nexo/staging/x -> /elsewhere``) is never followed: the path counts as absent.
    Renames then name both ends relative to those descriptors."""

    def __init__(self, dest: Path) -> None:
        self.root = os.open(dest, _DIR_FLAGS)
        self._opened: list[int] = [self.root]

    def close(self) -> None:
        for descriptor in self._opened:
            os.close(descriptor)
        self._opened.clear()

    def parent(self, spot: _Spot, *, create: bool = False) -> int:
        """The descriptor of ``spot``'s directory; ``OSError`` (``ELOOP`` on a link) when
        it cannot be reached without following one. ``create`` makes missing ones (0755)."""
        descriptor = self.root
        for part in spot[0]:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=descriptor)
            descriptor = os.open(part, _DIR_FLAGS, dir_fd=descriptor)
            self._opened.append(descriptor)
        return descriptor

    def mode(self, spot: _Spot) -> int | None:
        """``spot``'s own ``st_mode`` (a link is a link), ``None`` when it is not there."""
        try:
            return os.stat(spot[1], dir_fd=self.parent(spot), follow_symlinks=False).st_mode
        except OSError:
            return None

    def is_dir(self, spot: _Spot) -> bool:
        mode = self.mode(spot)
        return mode is not None and stat.S_ISDIR(mode)

    def inode(self, spot: _Spot) -> int | None:
        """``spot``'s inode when it is a directory (not a link), else ``None``."""
        try:
            info = os.stat(spot[1], dir_fd=self.parent(spot), follow_symlinks=False)
        except OSError:
            return None
        return info.st_ino if stat.S_ISDIR(info.st_mode) else None

    def exchange(self, first: _Spot, second: _Spot) -> bool:
        return exchange(
            first[1], second[1], first_dir=self.parent(first), second_dir=self.parent(second)
        )

    def remove_dir(self, spot: _Spot) -> None:
        with contextlib.suppress(OSError):
            os.rmdir(spot[1], dir_fd=self.parent(spot))

    def rename(self, source: _Spot, target: _Spot, *, create: bool = False) -> None:
        os.rename(
            source[1],
            target[1],
            src_dir_fd=self.parent(source),
            dst_dir_fd=self.parent(target, create=create),
        )


def _replay(dest: Path, journal: Path) -> None:
    """Bring one interrupted replacement to a complete state, never losing both trees.

    The journal is written once the new tree is complete in staging, before anything moves.
    If the new tree is still staged, the old trees are moved out of sight and the new one is
    renamed in (the run is finished); if it is already in place, only the moves of the old
    trees are completed. Only when the new tree is gone are the old ones put back. Every
    path is walked from the root without following links (:class:`_RootWalk`): a journal
    whose path runs through a link moves nothing into or out of the root through it.
    """
    try:
        with open_regular(journal) as handle:
            record = json.loads(handle.read(MAX_JOURNAL_BYTES).decode("utf-8"))
        if "swap" in record:
            swap = _Swap.read(record["swap"])
            walk = _RootWalk(dest)
            try:
                _advance_swap(walk, swap, begin=False)
            finally:
                walk.close()
            return
        final = _spot(record["final"])
        staged = _spot(record["staged"])
        moves = [(_spot(old), _spot(aside)) for old, aside in record["moves"]]
        walk = _RootWalk(dest)
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return  # not ours, or torn before it was renamed into place: nothing was moved
    try:
        olds = {old for old, _ in moves}
        staged_present = walk.is_dir(staged)
        final_present = walk.mode(final) is not None
        if staged_present and (not final_present or final in olds):
            _move_out(walk, moves)
            try:
                walk.rename(staged, final)
            except OSError:
                _move_back(walk, moves)
        elif final_present and not staged_present:
            _move_out(walk, [(old, aside) for old, aside in moves if old != final])
        else:
            _move_back(walk, moves)
    finally:
        walk.close()
    with contextlib.suppress(OSError):
        fsync_directory(dest)


def _move_back(walk: _RootWalk, moves: list[tuple[_Spot, _Spot]]) -> None:
    for old, aside in moves:
        if walk.is_dir(aside) and walk.mode(old) is None:
            with contextlib.suppress(OSError):
                walk.rename(aside, old)


def _move_out(walk: _RootWalk, moves: list[tuple[_Spot, _Spot]]) -> None:
    for old, aside in moves:
        if walk.mode(old) is not None and walk.mode(aside) is None:
            with contextlib.suppress(OSError):
                walk.rename(old, aside, create=True)


@dataclass(frozen=True)
class _Swap:
    """A rollback in progress: the tree at ``inward`` (inode ``inward_inode``) becomes the
    installed ``final``; the installed tree at ``outward`` (inode ``outward_inode``) moves to
    ``aside``. Trees are told apart by inode, so every state between two steps is known."""

    inward: _Spot
    inward_inode: int
    outward: _Spot
    outward_inode: int
    final: _Spot
    aside: _Spot

    def to_json(self) -> dict[str, Any]:
        def text(spot: _Spot) -> str:
            return "/".join((*spot[0], spot[1]))

        return {
            "in": text(self.inward),
            "in_inode": self.inward_inode,
            "out": text(self.outward),
            "out_inode": self.outward_inode,
            "final": text(self.final),
            "aside": text(self.aside),
        }

    @classmethod
    def read(cls, record: Any) -> _Swap:
        inodes = (record["in_inode"], record["out_inode"])
        if not all(isinstance(inode, int) and not isinstance(inode, bool) for inode in inodes):
            raise ValueError("bad inode")
        return cls(
            _spot(record["in"]),
            inodes[0],
            _spot(record["out"]),
            inodes[1],
            _spot(record["final"]),
            _spot(record["aside"]),
        )


def _where(walk: _RootWalk, inode: int, spots: tuple[_Spot, ...]) -> _Spot | None:
    return next((spot for spot in spots if walk.inode(spot) == inode), None)


def _advance_swap(walk: _RootWalk, swap: _Swap, *, begin: bool) -> None:
    """Bring a rollback's trees to their places from wherever a run left them, never leaving
    the id without a discoverable tree: an atomic exchange where the kernel has one, else the
    kept tree renamed in before the installed one is moved out (two trees for a moment, never
    none). A rollback that moved nothing yet is started only when ``begin`` (the run itself);
    a later run leaves it undone."""
    inward = _where(walk, swap.inward_inode, (swap.final, swap.outward, swap.inward))
    outward = _where(walk, swap.outward_inode, (swap.aside, swap.inward, swap.outward))
    if inward is None or (inward == swap.inward and outward == swap.outward and not begin):
        _remove_holders(walk, swap)
        return
    if inward == swap.inward and outward == swap.outward:
        if walk.exchange(swap.outward, swap.inward):
            inward, outward = swap.outward, swap.inward
        elif swap.final != swap.outward:
            walk.rename(swap.inward, swap.final)
            inward = swap.final
        else:  # no exchange and one name for both: the only order with a moment of none
            walk.rename(swap.outward, swap.aside, create=True)
            outward = swap.aside
            walk.rename(swap.inward, swap.final)
            inward = swap.final
    if inward != swap.final:
        walk.rename(inward, swap.final)
    if outward is not None and outward != swap.aside:
        walk.rename(outward, swap.aside, create=True)
    _remove_holders(walk, swap)


def _remove_holders(walk: _RootWalk, swap: _Swap) -> None:
    """The kept holders a swap emptied (or made and never filled) go."""
    for holder in (swap.inward[0], swap.aside[0]):
        if holder:
            walk.remove_dir((holder[:-1], holder[-1]))


def swap_in(root: InstallRoot, kept: Path, final: Path, installed: Path) -> Path:
    """Put the kept tree ``kept`` in as ``final`` and keep the ``installed`` tree in its place
    under ``.nexo/kept``; return where it went. At every instant exactly one of the two is
    discoverable where the kernel can exchange two names (Linux ``renameat2``), else at least
    one; a journal lets the next run finish a swap that was interrupted. Raises ``io``."""
    aside = root.aside_path(installed, keep=True)

    def spot(path: Path) -> _Spot:
        return _spot(path.relative_to(root.dest).as_posix())

    try:
        swap = _Swap(
            spot(kept),
            kept.stat(follow_symlinks=False).st_ino,
            spot(installed),
            installed.stat(follow_symlinks=False).st_ino,
            spot(final),
            spot(aside),
        )
    except OSError as exc:
        discard(aside.parent)
        raise io_error(f"swap {installed} with {kept}", exc) from exc
    journal = _write_journal(root, {"swap": swap.to_json()})
    walk = _RootWalk(root.dest)
    try:
        _advance_swap(walk, swap, begin=True)
    except OSError as exc:
        # Whatever moved is finished by the next run from the journal, kept for it.
        raise io_error(f"swap {installed} with {kept}", exc) from exc
    finally:
        walk.close()
    for parent in dict.fromkeys((final.parent, kept.parent, aside.parent, kept.parent.parent)):
        with contextlib.suppress(OSError):
            fsync_directory(parent)
    discard(journal)
    return aside


def recover_interrupted(dest: Path) -> None:
    """If a replacement in ``dest`` was interrupted (its journal is there), finish or undo it
    now, so a read-only command (``list``, ``verify``) sees a complete state. Does nothing
    when another run holds the lock (that run is not interrupted)."""
    journal = dest / BOOKKEEPING_DIR / JOURNAL_AREA
    try:
        pending = journal.is_dir() and any(journal.iterdir())
    except OSError:
        return
    if not pending:
        return
    with contextlib.suppress(NexoError), locked_root(dest, timeout=0):
        pass


def lock_timeout() -> float:
    """How long a held lock of the root is waited for: ``NEXO_INSTALL_LOCK_TIMEOUT`` seconds,
    default 120."""
    raw = os.environ.get(LOCK_TIMEOUT_ENV)
    try:
        return float(raw) if raw else DEFAULT_LOCK_TIMEOUT
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT


@contextlib.contextmanager
def locked_root(dest: Path, *, timeout: float | None = None) -> Iterator[InstallRoot]:
    """Hold ``<dest>/.nexo-install.lock`` (``flock``), creating ``dest`` if needed; waits up to
    ``timeout`` seconds (``NEXO_INSTALL_LOCK_TIMEOUT``, default 120), then raises ``io``.
    When the body fails, a ``dest`` or lock file this call created is removed again, so a
    failed first install leaves no trace."""
    wait = lock_timeout() if timeout is None else timeout
    created: list[Path] = []
    try:
        created.extend(make_dirs(dest))
    except OSError as exc:
        raise io_error(f"create {dest}", exc) from exc
    lock_path = dest / LOCK_NAME
    handle = _acquire(lock_path, wait, created)
    root = InstallRoot(dest, created)
    try:
        root.recover()
        yield root
    except BaseException:
        # A staging tree of this run that was not published (a failure, or a signal at any
        # moment, even before the caller held on to it) is never left behind.
        for holder in root.staging_holders:
            discard(holder)
        root.prune()
        if lock_path in created:
            with contextlib.suppress(OSError):
                lock_path.unlink()
        # ``created`` lists the deepest new directory first, then its new parents.
        for path in created:
            if path != lock_path:
                with contextlib.suppress(OSError):
                    path.rmdir()
        raise
    else:
        root.prune()
    finally:
        handle.close()


def _acquire(lock_path: Path, wait: float, created: list[Path]) -> Any:
    waiting = LockWait(lock_path, wait, "another nexo install")
    while True:
        existed = lock_path.exists()
        try:
            handle = os.fdopen(open_lock_file(lock_path), "r+b")
            if not existed:
                with contextlib.suppress(OSError):
                    posix.set_mode(handle.fileno(), lock_path, 0o644)
        except OSError as exc:
            raise io_error(f"open the lock file {lock_path}", exc) from exc
        try:
            waiting.take(handle.fileno())
        except BaseException as exc:
            handle.close()
            if isinstance(exc, OSError):
                raise io_error(f"lock {lock_path}", exc) from exc
            raise
        # A failed first install unlinks the lock file; a waiter holding the old inode must
        # retry on the new file instead of believing it owns the lock.
        try:
            same = os.fstat(handle.fileno()).st_ino == lock_path.stat().st_ino
        except FileNotFoundError:
            same = False
        if same:
            if not existed:
                created.append(lock_path)
            return handle
        handle.close()


@dataclass
class LockWait:
    """One wait for a lock file another process holds: said once (a note on stderr, dropped
    by ``--quiet``) when it has lasted :data:`LOCK_NOTE_AFTER`, given up after ``wait``
    seconds with ``io``; a lock that is free is taken in silence."""

    lock_path: Path
    wait: float
    # Who holds the lock, in the refusal's words: "another nexo install".
    holder: str
    started: float = field(default_factory=time.monotonic)
    said: bool = False

    def take(self, descriptor: int) -> None:
        """``flock(LOCK_EX)`` on ``descriptor``, polled until this wait's end. Raises
        ``NexoError`` (``io``) when the wait ends, ``OSError`` when the lock cannot be taken."""
        while True:
            try:
                posix.lock_exclusive(descriptor, wait=False)
                return
            except OSError as exc:
                if exc.errno not in {errno.EAGAIN, errno.EACCES}:
                    raise
                waited = time.monotonic() - self.started
                if waited >= self.wait:
                    raise NexoError(
                        f"{self.holder} holds {self.lock_path}; try again when it is done",
                        kind="io",
                    ) from exc
                if not self.said and waited >= LOCK_NOTE_AFTER:
                    self.said = True
                    self._say()
            time.sleep(0.05)

    def _say(self) -> None:
        from nexo_pkg.core.output import say  # noqa: PLC0415 - only when a lock is held
        from nexo_pkg.core.terminal import printable  # noqa: PLC0415

        say(
            f"note: waiting for {printable(str(self.lock_path))}: {self.holder} holds it "
            f"(waiting at most {self.wait:g} s; {LOCK_TIMEOUT_ENV} sets the limit)"
        )


# -- publish and remove -----------------------------------------------------------------------


def publish(
    root: InstallRoot,
    staging: Path,
    final: Path,
    *,
    replace: bool = False,
    replaces: tuple[Path, ...] = (),
    keep_old: bool = False,
    keep_only: frozenset[Path] | None = None,
) -> tuple[Path, ...]:
    """Rename the complete ``staging`` tree to ``final``, taking the trees it replaces out of
    the daemon's sight first; return where they went. ``replaces`` (and ``final`` itself
    with ``replace``, for ``--force``) move to ``.nexo/removing`` and are deleted, or with
    ``keep_old`` to ``.nexo/kept`` (never ``final`` nor a link; with ``keep_only``, only
    those of it). A journal written before anything moves
    lets the next run finish an interrupted replacement (:meth:`InstallRoot.recover`), so a
    crash never loses both trees; a failed rename puts the old trees back. Raises ``io``."""
    olds = [
        path
        for path in dict.fromkeys((*replaces, *((final,) if replace else ())))
        if path.exists() or path.is_symlink()
    ]
    if not olds:
        try:
            staging.rename(final)
        except OSError as exc:
            raise io_error(f"move the new install into {final}", exc) from exc
        # The rename changed both parents: make the new name and the old one's removal durable.
        fsync_directory(final.parent)
        fsync_directory(staging.parent)
        _remove_empty_holder(staging)
        return ()

    def kept(old: Path) -> bool:
        chosen = keep_only is None or old in keep_only
        return keep_old and chosen and old != final and not old.is_symlink()

    moves = [(old, root.aside_path(old, keep=kept(old))) for old in olds]
    journal = _write_journal(
        root,
        {
            "final": final.name,
            "staged": staging.relative_to(root.dest).as_posix(),
            "moves": [[old.name, aside.relative_to(root.dest).as_posix()] for old, aside in moves],
        },
    )
    done: list[tuple[Path, Path]] = []
    try:
        for old, aside in moves:
            old.rename(aside)
            done.append((old, aside))
        staging.rename(final)
    except BaseException as exc:
        if not os.path.lexists(staging):
            # A signal's exception right after the last rename: the replacement is done
            # (the journal lets the next run finish its bookkeeping).
            raise
        # A failed rename, or a signal's exception between two of them (the caller then
        # discards the staged tree): the old trees go back, so the root is as it was.
        for old, aside in reversed(done):
            with contextlib.suppress(OSError):
                aside.rename(old)
        discard(journal)
        if isinstance(exc, OSError):
            raise io_error(f"move the new install into {final}", exc) from exc
        raise
    # The renames changed these parents: make the new names and the old ones' removal durable.
    for parent in dict.fromkeys((final.parent, staging.parent, *(a.parent for _, a in moves))):
        fsync_directory(parent)
    discard(journal)
    _remove_empty_holder(staging)
    for _, aside in moves:
        if aside.parent.parent.name == REMOVING_AREA:
            discard(aside.parent)
    return tuple(aside for _, aside in moves)


def _remove_empty_holder(tree: Path) -> None:
    with contextlib.suppress(OSError):
        tree.parent.rmdir()


def left_behind(holder: Path) -> str:
    """The warning for a removed tree whose files could not all be deleted: out of the
    daemon's sight at ``holder`` (under ``.nexo/removing``), as ``remove`` says it."""
    return f"a removed version's files could not all be deleted: {holder} left ({CLEANED_BY})"


def remove_tree(root: InstallRoot, path: Path) -> Path | None:
    """Remove an installed (or kept) tree: move it out of sight first, then delete it.
    Returns the holder under ``.nexo/removing`` when the tree could not all be deleted (a
    file in it that cannot be unlinked), which the next run under the lock deletes; else
    ``None``."""
    aside = root.set_aside(path)
    discard(aside.parent)
    if path.name == TREE_NAME and path.parent.parent.name == KEPT_AREA:
        discard(path.parent)
    return aside.parent if aside.parent.is_dir() else None


def discard(path: Path) -> None:
    """Delete ``path`` best-effort without following links: a symlink (say, one planted in the
    install root) is unlinked, never the tree it points to."""
    if path.is_symlink() or not path.is_dir():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    import shutil  # noqa: PLC0415

    shutil.rmtree(path, ignore_errors=True)
