"""The shared content-addressed blob cache: ``$NEXO_HOME/cache/blobs/sha256/<hex>``
(docs/fleet.md, "The shared blob cache").

A blob is written to a private temp file and renamed into place under its own sha256, so
readers only see whole blobs and concurrent writers race harmlessly; it is re-hashed before
use. ``prune`` takes the cache lock exclusively, readers and writers hold it shared, so a
prune never removes a blob between its lookup and its use.

A downloaded blob is synced to disk before it enters the store, unless the command lets that
happen beside its use (:meth:`BlobCache.sync_later`: ``sync`` extracts each blob as soon as
it is checked while another thread syncs it, and waits for those syncs at its end,
:meth:`BlobCache.sync_added`). Nothing relies on a blob surviving a crash: every blob is
re-hashed before use, so one a crash damaged is a miss, fetched again.

Windows has no ``flock``: there the cache takes no lock, and Windows itself refuses to delete
or replace a file another process has open, so a prune skips a blob being read and a writer's
temp file is never taken for a killed writer's; the read-only bit of a blob is cleared before
it is removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from nexo_pkg.core import posix
from nexo_pkg.core.dirs import make_dirs
from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.files import (
    NotRegularFileError,
    open_lock_file,
    open_regular,
    sha256_file,
    write_file_atomically,
)

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

CHUNK = 1024 * 1024
_HEX = re.compile(r"^[0-9a-f]{64}$")
# The directories that hold blobs in use (see BlobCache._holding_dir).
HELD_SUFFIX = ".held"
_HOLDING_ATTEMPTS = 100
_DIRECTORY_FLAGS = os.O_RDONLY | posix.O_DIRECTORY | posix.O_NOFOLLOW | posix.O_CLOEXEC
DEFAULT_MAX_AGE = 30 * 24 * 3600


def _io(action: str, exc: OSError) -> NexoError:
    return NexoError(f"cannot {action}: {exc.strerror or exc}", kind="io")


def hex_of(digest: str) -> str:
    """``sha256:<hex>`` or ``<hex>`` -> ``<hex>``; raises ``source_invalid`` otherwise."""
    value = digest.removeprefix("sha256:")
    if not _HEX.fullmatch(value):
        raise NexoError(f"{digest!r} is not a sha256 digest", kind="source_invalid")
    return value


# A file's bytes (and size) to disk, without its other metadata where the system can.
_sync_data: Callable[[int], None] = getattr(os, "fdatasync", os.fsync)


def _sync_blob(path: Path) -> None:
    """Sync the bytes (and size) of the blob at ``path`` to disk (``fdatasync``: its reading
    since, an access time, commits nothing). One that cannot be (gone, a write-back error) is
    left as it is: every blob is re-hashed before use, and one that is damaged fetched again."""
    with contextlib.suppress(OSError):
        descriptor = os.open(path, os.O_RDONLY | posix.O_NOFOLLOW | posix.O_CLOEXEC)
        try:
            _sync_data(descriptor)
        finally:
            os.close(descriptor)


def _hashes_to(path: Path, expected: str) -> bool:
    """Whether ``path`` is a regular file whose sha256 is ``expected`` (a link planted in
    the store is not a blob, whatever it points to)."""
    try:
        return sha256_file(path, regular=True) == expected
    except NotRegularFileError:
        return False


def _unlink(path: Path) -> None:
    """Unlink ``path``; where its read-only bit forbids that (Windows), clear the bit first."""
    try:
        path.unlink()
    except PermissionError:
        if posix.POSIX:
            raise
        path.chmod(0o644)
        path.unlink()


def _remove_held(holding: Path) -> None:
    """Remove a directory a blob was held in, and the blob's name in it (read-only: on
    Windows its bit is cleared first); what cannot be removed is left for ``cache prune``."""
    for entry in _entries(holding):
        with contextlib.suppress(OSError):
            _unlink(entry)
    with contextlib.suppress(OSError):
        holding.rmdir()


def _remove_abandoned_holding(path: Path) -> None:
    """Delete the directory ``path`` that held a blob, when no command holds its lock (its
    command was killed); one in use, or on a file system without locks, stays."""
    try:
        descriptor = os.open(path, _DIRECTORY_FLAGS | posix.O_NONBLOCK)
    except OSError:
        return
    try:
        try:
            posix.lock_exclusive(descriptor, wait=False)
        except OSError:
            return
        if os.path.samestat(os.lstat(path), os.fstat(descriptor)):
            _remove_held(path)
    except OSError:
        return
    finally:
        os.close(descriptor)


def _remove_entry(path: Path) -> None:
    """Unlink ``path``; a directory planted in the store is removed with what it holds (one
    a killed command held a blob in, its read-only name too)."""
    if path.is_dir() and not path.is_symlink():
        if path.name.endswith(".held"):
            _remove_held(path)
            if path.exists():
                raise OSError(f"cannot remove {path}")
            return
        shutil.rmtree(path)
    else:
        _unlink(path)


def _entries(directory: Path) -> list[Path]:
    """What ``directory`` holds; nothing when it is missing, a link or cannot be read."""
    if directory.is_symlink():
        return []
    try:
        return list(directory.iterdir())
    except OSError:
        return []


def _put_in_place(temp: Path, final: Path) -> bool:
    """Rename ``temp`` to ``final``; whether this put the blob there. On Windows a blob that is
    there already (read-only, or open in another process) cannot be replaced: it is kept when
    it hashes to its name, since it holds the same bytes."""
    try:
        temp.replace(final)
    except PermissionError:
        if posix.POSIX or not _hashes_to(final, final.name):
            raise
        return False
    return True


def over_download_limit(name: str, max_bytes: int) -> NexoError:
    """The ``archive_unsafe`` refusal of ``name``, found larger than ``max_bytes`` while its
    bytes were streamed into a :class:`BlobSink`."""
    return NexoError(
        f"{name} is larger than the download limit of {max_bytes} bytes "
        "(raise it with --max-download-size)",
        kind="archive_unsafe",
    )


def over_size_cap(name: str, max_bytes: int, *, holds: str, kind: str) -> NexoError:
    """The refusal (``kind``) of ``name``, a small file of a release (``holds`` says what it
    is: a checksum file, signature material, a manifest) found larger than the fixed
    ``max_bytes`` no such file comes near; no flag raises that cap."""
    return NexoError(
        f"{name} is larger than {max_bytes} bytes, more than {holds} ever holds; refusing it "
        "unread (the release is broken or hostile: ask its publisher)",
        kind=kind,
    )


class BlobSink:
    """Where a fetched blob's bytes go: a temp file and a hasher, restartable for retries;
    ``progress(done, total)`` is told of every chunk. Raises ``io`` when the disk refuses."""

    def __init__(
        self, handle: IO[bytes], progress: Callable[[int, int | None], None] | None = None
    ) -> None:
        self.handle = handle
        self.hasher = hashlib.sha256()
        self.size = 0
        self.total: int | None = None
        self.progress = progress

    def reset(self) -> None:
        self.handle.seek(0)
        self.handle.truncate()
        self.hasher = hashlib.sha256()
        self.size = 0

    def set_total(self, total: int | None) -> None:
        self.total = total  # for progress only: sizes are checked by the fetcher

    def write(self, chunk: bytes) -> None:
        try:
            self.handle.write(chunk)
        except OSError as exc:
            raise _io("write a download to disk", exc) from exc
        self.hasher.update(chunk)
        self.size += len(chunk)
        if self.progress is not None:
            self.progress(self.size, self.total)


@dataclass(frozen=True)
class PruneReport:
    removed: int
    freed_bytes: int
    kept: int


class BlobCache:
    """The cache under ``nexo_home``; every method raises ``io`` when the disk refuses."""

    def __init__(self, nexo_home: Path) -> None:
        self.root = nexo_home / "cache" / "blobs"
        self.store = self.root / "sha256"
        self.temp = self.root / "tmp"
        self.hits = 0
        self.misses = 0
        # The counters are shared by the worker threads of one `lock` or `sync`.
        self._counting = threading.Lock()
        # Blobs this instance put into the store (see :meth:`discard_added`).
        self.added: list[Path] = []
        # With :meth:`sync_later`: the blobs put into the store without being synced yet.
        # With :meth:`sync_later`: the thread that syncs the blobs added (one at a time).
        self._syncer: ThreadPoolExecutor | None = None
        # API answers to keep for conditional requests (:class:`AnswerCache`), written by
        # :meth:`keep` when the command ends well, by path.
        self.answers: dict[Path, bytes] = {}
        # The locked descriptors of the directories holding blobs in use (POSIX), by path.
        self._holding_locks: dict[Path, int] = {}

    @contextlib.contextmanager
    def _locked(
        self, *, exclusive: bool, on_wait: Callable[[], None] | None = None
    ) -> Iterator[None]:
        try:
            make_dirs(self.store)
            make_dirs(self.temp)
            descriptor = open_lock_file(self.root / ".lock")
        except OSError as exc:
            # Every download goes through the cache: say how to put it elsewhere.
            raise NexoError(
                f"cannot create the blob cache in {self.root}: {exc.strerror or exc} (it is "
                "$NEXO_HOME/cache/blobs: set NEXO_HOME to a writable directory)",
                kind="io",
            ) from exc
        try:
            if not posix.POSIX:
                pass  # no flock on Windows: see the module's docstring
            elif exclusive:
                try:
                    posix.lock_exclusive(descriptor, wait=False)
                except BlockingIOError:
                    # Another command is reading or writing blobs: say why nothing happens.
                    if on_wait is not None:
                        on_wait()
                    posix.lock_exclusive(descriptor)
            else:
                posix.lock_shared(descriptor)
            yield
        finally:
            os.close(descriptor)

    def _count(self, *, hit: bool) -> None:
        with self._counting:
            if hit:
                self.hits += 1
            else:
                self.misses += 1

    def path(self, digest: str) -> Path:
        return self.store / hex_of(digest)

    @contextlib.contextmanager
    def open_blob(
        self,
        digest: str | None,
        fetch: Callable[[BlobSink], object],
        progress: Callable[[int, int | None], None] | None = None,
        *,
        durable: bool = True,
    ) -> Iterator[Path]:
        """Yield the path of the blob ``digest``, calling ``fetch(sink)`` only on a miss
        (``digest`` ``None``: a blob not known beforehand, always fetched and stored under the
        sha256 its bytes hash to, the name of the path yielded).

        ``durable`` syncs a new blob to disk before it enters the store (after
        :meth:`sync_later`: once it is there, beside its use); a blob copied from a file that
        stays where it is (a local tarball) need not be, since every blob is re-hashed before
        it is used and one a crash damaged is simply made again.

        ``fetch`` streams the blob's bytes into ``sink.write`` (``sink.reset`` starts over
        before a retry) and must raise when they do not hash to ``digest`` (the registry client
        does, with the sink's own hash: the bytes are hashed once, as they are written); that
        hash is checked here as well before the blob enters the store. The blob stays in place
        while the context is open.
        """
        expected = "" if digest is None else hex_of(digest)
        with self._locked(exclusive=False):
            final = self.store / expected
            if digest is not None and (final.is_symlink() or final.exists()):
                held = self._hold_stored(final, expected)
                if held is not None:
                    self._count(hit=True)
                    with contextlib.suppress(OSError):
                        os.utime(final)
                        self._remove_stale_temps()
                    try:
                        yield held
                    finally:
                        self._release(held.parent)
                    return
                # Not the blob (damaged, a link, a directory planted there): fetched again.
                with contextlib.suppress(FileNotFoundError):
                    _remove_entry(final)
            self._count(hit=False)
            try:
                self._remove_stale_temps()
                descriptor, temp, lock_fd = self._new_temp(expected or "unknown")
            except OSError as exc:
                raise _io(f"write into the blob cache {self.temp}", exc) from exc
            holding: Path | None = None
            try:
                with os.fdopen(descriptor, "w+b") as handle:
                    sink = BlobSink(handle, progress)
                    fetch(sink)
                    handle.flush()
                    with self._counting:
                        syncer = self._syncer if durable else None
                    if durable and syncer is None:
                        os.fsync(handle.fileno())
                hasher = sink.hasher
                if digest is None:
                    expected = hasher.hexdigest()
                    final = self.store / expected
                if hasher.hexdigest() != expected:
                    raise NexoError(
                        f"blob sha256:{expected} hashes to sha256:{hasher.hexdigest()}",
                        kind="checksum_mismatch",
                        details={"expected": expected, "actual": hasher.hexdigest()},
                    )
                temp.chmod(0o444)
                # The bytes used are the ones hashed as they were written: a name of this
                # command's own for them, whatever later happens to the store's name.
                holding = self._holding_dir(expected)
                try:
                    if not posix.POSIX:
                        # Windows: a link shares the blob's read-only bit, which its removal
                        # would have to clear: held by a copy, below.
                        raise OSError("held by a copy")
                    os.link(temp, holding / expected)
                except OSError:
                    # A file system without hard links: held by a copy, below.
                    self._release(holding)
                    holding = None
                if _put_in_place(temp, final):
                    self.added.append(final)
                    if syncer is not None:
                        try:
                            syncer.submit(_sync_blob, final)
                        except RuntimeError:  # the syncs were waited for meanwhile: here
                            _sync_blob(final)
            except BaseException as exc:
                if holding is not None:
                    self._release(holding)
                if isinstance(exc, OSError):
                    raise _io(f"write blob {expected} into {self.store}", exc) from exc
                raise
            finally:
                with contextlib.suppress(FileNotFoundError):
                    _unlink(temp)
                if lock_fd >= 0:
                    os.close(lock_fd)
            if holding is None:
                # Copied from one descriptor while hashed again (see _hold_stored).
                held = self._hold_stored(final, expected)
                if held is None:
                    raise NexoError(
                        f"blob sha256:{expected} changed in {self.store} before it was used",
                        kind="checksum_mismatch",
                        details={"expected": expected},
                    )
                holding = held.parent
            try:
                yield holding / expected
            finally:
                self._release(holding)

    def _holding_dir(self, expected: str) -> Path:
        """A new private directory in the temp dir to hold the name of a blob in use (a
        directory: never taken for a killed writer's temp file). On POSIX it stays locked
        (``flock``) by this command until :meth:`_release`, so the next download's sweep
        removes one a killed command left and never one in use; ``prune`` removes them too.
        Raises ``OSError``."""
        for _attempt in range(_HOLDING_ATTEMPTS):
            holding = Path(
                tempfile.mkdtemp(prefix=f"{expected[:16]}.", suffix=HELD_SUFFIX, dir=self.temp)
            )
            if not posix.POSIX:
                return holding
            try:
                descriptor = os.open(holding, _DIRECTORY_FLAGS)
            except FileNotFoundError:
                continue  # swept before it was locked: made again
            try:
                posix.lock_exclusive(descriptor, wait=False)
                if not os.path.samestat(os.lstat(holding), os.fstat(descriptor)):
                    raise FileNotFoundError(holding)
            except (BlockingIOError, FileNotFoundError):
                os.close(descriptor)  # being swept, or swept: made again
                continue
            except OSError:
                os.close(descriptor)  # no locks on this file system: held as before
                return holding
            with self._counting:
                self._holding_locks[holding] = descriptor
            return holding
        raise OSError(f"cannot make a directory in {self.temp} that stays")

    def _release(self, holding: Path) -> None:
        """Delete the directory holding a blob in use, then give up its lock."""
        _remove_held(holding)
        with self._counting:
            descriptor = self._holding_locks.pop(holding, None)
        if descriptor is not None:
            os.close(descriptor)

    def _hold_stored(self, final: Path, expected: str) -> Path | None:
        """The stored blob ``final`` checked and held: a path of this command's own naming
        exactly the bytes that hashed to ``expected`` (``None`` when they do not, or it is not
        a regular file). The bytes are hashed from one descriptor; the path is a hard link
        found to name that same file, which only its owner could rewrite (a blob is
        read-only), or else a copy made from that descriptor while it is hashed. The store's
        name is never opened again: a blob swapped there since is not what is used."""
        try:
            with open_regular(final) as handle:
                info = os.fstat(handle.fileno())
                digest = hashlib.sha256()
                for chunk in iter(lambda: handle.read(CHUNK), b""):
                    digest.update(chunk)
                if digest.hexdigest() != expected:
                    return None
                try:
                    holding = self._holding_dir(expected)
                except OSError as exc:
                    raise _io(f"write into the blob cache {self.temp}", exc) from exc
                held = holding / expected
                try:
                    if self._linked(final, held, info):
                        return held
                    with contextlib.suppress(FileNotFoundError):
                        held.unlink()
                    handle.seek(0)
                    digest = hashlib.sha256()
                    with held.open("xb") as copy:
                        for chunk in iter(lambda: handle.read(CHUNK), b""):
                            digest.update(chunk)
                            copy.write(chunk)
                    if digest.hexdigest() != expected:
                        self._release(holding)
                        return None
                    held.chmod(0o444)
                    return held
                except OSError as exc:
                    self._release(holding)
                    raise _io(f"write into the blob cache {self.temp}", exc) from exc
        except NotRegularFileError:
            return None
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise _io(f"read blob {expected} in {self.store}", exc) from exc

    @staticmethod
    def _linked(final: Path, held: Path, info: os.stat_result) -> bool:
        """Whether ``held`` could be made a hard link of ``final`` naming the file ``info``
        describes, a file nobody but its owner, this user, can rewrite. Never on Windows: a
        link there shares the blob's read-only bit, which removing it would have to clear."""
        if not posix.POSIX:
            return False
        if info.st_uid != posix.effective_uid() or info.st_mode & 0o222:
            return False
        try:
            os.link(final, held, follow_symlinks=False)
            linked = held.lstat()
        except (OSError, NotImplementedError):
            return False
        return (linked.st_dev, linked.st_ino) == (info.st_dev, info.st_ino)

    def sync_later(self) -> None:
        """From now on, a blob this instance downloads is synced to disk once it is in the
        store, on a thread of its own, while it is used: the download is not held up by it
        (:meth:`sync_added` waits for those syncs)."""
        from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

        with self._counting:
            if self._syncer is None:
                self._syncer = ThreadPoolExecutor(1, thread_name_prefix="nexo-cache-sync")

    def sync_added(self) -> None:
        """Wait for the syncs :meth:`sync_later` started, then sync the store's directory
        (the blobs' names); later downloads are synced before they enter the store again.
        Call it while the blobs are still held (inside :meth:`open_blob`), so that no prune
        races the syncs."""
        with self._counting:
            syncer, self._syncer = self._syncer, None
        if syncer is None:
            return
        syncer.shutdown(wait=True)
        with contextlib.suppress(OSError):
            posix.fsync_directory(self.store)

    def _new_temp(self, expected: str) -> tuple[int, Path, int]:
        """A new temp file for blob ``expected``: its write descriptor, its path, and a
        second descriptor holding its ``flock`` until the blob is in place (so the clean-up
        of another writer never takes it; ``-1`` on Windows, where the open write descriptor
        does that). Raises ``OSError``."""
        while True:
            descriptor, raw = tempfile.mkstemp(prefix=f"{expected[:16]}.", dir=self.temp)
            if not posix.POSIX:
                return descriptor, Path(raw), -1
            try:
                lock_fd = os.open(raw, os.O_RDONLY)
            except FileNotFoundError:
                os.close(descriptor)  # taken by a clean-up before it was locked: again
                continue
            posix.lock_exclusive(lock_fd)
            try:
                ours = Path(raw).stat().st_ino == os.fstat(lock_fd).st_ino
            except FileNotFoundError:
                ours = False
            if ours:
                return descriptor, Path(raw), lock_fd
            os.close(descriptor)
            os.close(lock_fd)

    def _remove_stale_temps(self) -> None:
        """Delete the temp files of writers that were killed: every live one is locked by
        its writer until it is renamed into place or deleted; likewise the directories that
        held blobs for commands that were killed (see :meth:`_holding_dir`). Anything else
        found there (a link, a FIFO, a device: never a temp file) is removed without being
        followed or opened; another directory is left to ``cache prune``."""
        for path in self.temp.iterdir():
            if not posix.POSIX:
                # Windows refuses to delete a temp file its writer still has open.
                with contextlib.suppress(OSError):
                    _unlink(path)
                continue
            try:
                kind = path.lstat().st_mode
            except OSError:
                continue
            if not stat.S_ISREG(kind):
                if not stat.S_ISDIR(kind):
                    with contextlib.suppress(OSError):
                        path.unlink()
                elif path.name.endswith(HELD_SUFFIX):
                    _remove_abandoned_holding(path)
                continue
            try:
                # Never blocks (a FIFO swapped in since) nor follows a link.
                descriptor = os.open(
                    path, os.O_RDONLY | posix.O_NOFOLLOW | posix.O_NONBLOCK | posix.O_CLOEXEC
                )
            except OSError:
                continue
            try:
                try:
                    posix.lock_exclusive(descriptor, wait=False)
                except OSError:
                    continue
                with contextlib.suppress(OSError):
                    path.unlink()
            finally:
                os.close(descriptor)

    def keep_later(self, path: Path, data: bytes) -> None:
        """Write ``data`` to ``path`` (an API answer) when the command keeps what it added."""
        with self._counting:
            self.answers[path] = data

    def keep(self) -> None:
        """Write the API answers the command read (:class:`AnswerCache`); one that cannot be
        written is only a request that will not be conditional next time."""
        with self._counting:
            answers, self.answers = self.answers, {}
        for path, data in answers.items():
            with contextlib.suppress(OSError):
                make_dirs(path.parent)
                write_file_atomically(path, data, mode=0o600, durable=False)

    def discard_added(self) -> None:
        """Take the blobs this instance added out of the store again, so a command that was
        refused (or only rehearsed) leaves the cache as it found it. Waits for the readers
        of the cache, as :meth:`prune` does; must not be called inside :meth:`open_blob`."""
        self.answers.clear()
        if not self.added:
            return
        with self._locked(exclusive=True):
            for blob in self.added:
                with contextlib.suppress(FileNotFoundError):
                    _unlink(blob)
        self.added.clear()

    def usage(self) -> tuple[int, int]:
        """How many blobs (and temp files, and kept API answers) the cache holds and their
        bytes; ``(0, 0)`` when it does not exist. Read without the lock: a figure, not a
        snapshot."""
        count = size = 0
        for directory in (self.store, self.temp, self.root / ANSWERS_DIR):
            try:
                entries = list(directory.iterdir())
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise _io(f"read {directory}", exc) from exc
            for entry in entries:
                # A link is counted as itself, never followed (to a loop, or out of the cache).
                with contextlib.suppress(FileNotFoundError):  # pruned while we looked
                    size += entry.lstat().st_size
                    count += 1
        return count, size

    def prune(
        self,
        *,
        max_age: float | None = DEFAULT_MAX_AGE,
        on_wait: Callable[[], None] | None = None,
    ) -> PruneReport:
        """Remove blobs unused for ``max_age`` seconds (all of them with ``None``), blobs that
        do not hash to their name, temp files of killed writers, and the API answers kept
        for conditional requests that went unused as long. Whatever else is there (a link, a
        FIFO, a directory) is removed too, without being followed or read; an entry that
        cannot be removed is skipped and the rest still pruned. ``on_wait`` is called when
        another process holds the cache (an install, a sync) and the prune waits for it."""
        removed = freed = kept = 0
        now = time.time()
        with self._locked(exclusive=True, on_wait=on_wait):
            for answer in _entries(self.root / ANSWERS_DIR):
                try:
                    info = answer.lstat()
                    if (
                        max_age is None
                        or now - info.st_mtime > max_age
                        or not stat.S_ISREG(info.st_mode)
                    ):
                        _remove_entry(answer)
                        removed += 1
                        freed += info.st_size
                    else:
                        kept += 1
                except OSError:
                    continue
            for leftover in self.temp.iterdir():
                with contextlib.suppress(OSError):
                    # The names a killed command held its blobs by are directories.
                    freed += leftover.lstat().st_size
                    _remove_entry(leftover)
                    removed += 1
            for blob in self.store.iterdir():
                try:
                    info = blob.lstat()
                    stale = max_age is None or now - info.st_mtime > max_age
                    named = _HEX.fullmatch(blob.name)
                    if stale or not named or sha256_file(blob, regular=True) != blob.name:
                        _remove_entry(blob)
                        removed += 1
                        freed += info.st_size
                    else:
                        kept += 1
                except NotRegularFileError:
                    with contextlib.suppress(OSError):  # a link, FIFO or directory
                        _remove_entry(blob)
                        removed += 1
                except OSError:
                    continue  # gone meanwhile, or not ours to remove: the rest is pruned
        return PruneReport(removed, freed, kept)


@dataclass(frozen=True)
class StoredAnswer:
    """An API answer kept for a conditional request: its ``ETag``, the next page URL it
    named, and the body as it came (decoded, at most the document cap)."""

    etag: str
    following: str | None
    body: bytes


class AnswerCache:
    """API answers by request, beside the blob cache (``$NEXO_HOME/cache/blobs/answers``),
    for ``If-None-Match``: an answer is used again only when the server says, with a 304,
    that it has not changed. An entry that cannot be read or is not whole is no entry;
    writing one that fails is only a missed saving (never an error of the command). The
    entries of a command are written when it keeps what it added (:meth:`BlobCache.keep`),
    never when it is refused or rehearsed."""

    def __init__(self, blobs: BlobCache) -> None:
        self.root = blobs.root / ANSWERS_DIR
        self._blobs = blobs

    def _path(self, key: str) -> Path:
        return self.root / key_digest(key)

    def get(self, key: str, limit: int) -> StoredAnswer | None:
        from nexo_pkg.core.files import open_regular  # noqa: PLC0415

        try:
            with open_regular(self._path(key)) as handle:
                # Only an entry this user wrote and nobody else may write (as ssh reads its
                # files): another account's entry is no entry. Windows has no owner ids nor
                # such mode bits; the cache lives in the user's own profile there.
                info = os.fstat(handle.fileno())
                if posix.POSIX and (info.st_uid != posix.effective_uid() or info.st_mode & 0o022):
                    return None
                raw = handle.read(limit + _ANSWER_HEAD_MAX + 1)
                with contextlib.suppress(OSError, NotImplementedError):
                    # Asked with again: `cache prune` keeps what is in use.
                    os.utime(handle.fileno())
        except OSError:
            return None
        head, newline, body = raw.partition(b"\n")
        try:
            fields = head.decode("ascii").split("\t")
        except UnicodeDecodeError:
            return None
        if not newline or len(fields) != 3 or fields[0] != key_digest(key) or len(body) > limit:
            return None
        etag, following = fields[1], fields[2] or None
        return StoredAnswer(etag, following, body) if etag else None

    def put(self, key: str, answer: StoredAnswer) -> None:
        fields = (key_digest(key), answer.etag, answer.following or "")
        if any(not field.isascii() or "\t" in field or "\n" in field for field in fields):
            return
        head = "\t".join(fields).encode("ascii")
        if len(head) >= _ANSWER_HEAD_MAX:
            return
        self._blobs.keep_later(self._path(key), head + b"\n" + answer.body)


# Where the answers are kept, in the blob cache's directory.
ANSWERS_DIR = "answers"

# The first line of an entry (key digest, ETag, next page URL) is at most this long.
_ANSWER_HEAD_MAX = 8192


def key_digest(key: str) -> str:
    """The hex SHA-256 of a cache key: an entry names the request it answers."""
    return hashlib.sha256(key.encode()).hexdigest()
