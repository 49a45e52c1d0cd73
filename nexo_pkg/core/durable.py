"""Durability at file-system cost: flush a staged tree to disk before a rename publishes it.

On Linux one ``syncfs(2)`` (through ``ctypes``) writes back everything dirty on the staging
tree's file system, the tree's files and directories included, at the cost of one call instead
of one ``fsync`` per file (threads flushing the same file system at once share a call). Where
there is no ``syncfs`` (macOS, other Unixes), or it fails, every file and directory of the tree
is fsynced instead. A write-back error that ``syncfs`` reports is the file system's, and is
reported once: to the first descriptor that asks, whichever tree lost the data. So from then
on the trees of that file system are fsynced file by file, which reports each file's own
error to the tree that wrote it (the kernel keeps one per file), and nothing else is failed
for it. Either way the directories a rename touches are fsynced after it
(:func:`~nexo_pkg.core.posix.fsync_directory`), so the new name is durable too.
"""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

from nexo_pkg.core import posix


def syncfs_available() -> bool:
    """Whether this platform has ``syncfs(2)``."""
    return posix.libc_function("syncfs") is not None


def syncfs(descriptor: int) -> bool:
    """Flush the file system holding ``descriptor``; ``False`` when that is not possible here.
    Raises ``OSError`` when the kernel reports a write-back error."""
    function = posix.libc_function("syncfs")
    if function is None:
        return False
    if function(descriptor) != 0:
        error = posix.last_errno()
        if error == errno.ENOSYS:  # a kernel or seccomp filter without the call
            return False
        raise OSError(error, os.strerror(error))
    return True


class _SharedSyncfs:
    """One ``syncfs`` for the threads that want the same file system flushed at once.

    A caller takes a ticket once its writes are done. A ``syncfs`` that *started* after a
    ticket was taken has flushed that caller's writes, so when the call another thread made
    meanwhile started late enough, the caller returns without one of its own. Threads of one
    ``sync`` that finish their plugins together so share a flush, where each made one before.
    """

    def __init__(self) -> None:
        self._tickets = threading.Lock()
        self._flushing = threading.Lock()
        self._issued = 0
        self._covered: dict[int, int] = {}  # st_dev -> highest ticket a finished call covered
        # File systems whose syncfs reported a write-back error: flushed file by file since.
        self._failed: set[int] = set()

    def flush(self, descriptor: int) -> bool:
        """Like :func:`syncfs`, sharing a call with other threads where that is enough;
        ``False`` (flush the tree file by file) once a ``syncfs`` of this file system has
        reported a write-back error, the failing caller's included: that error may be
        another tree's, and the next ``syncfs`` would not report it again."""
        device = os.fstat(descriptor).st_dev
        with self._tickets:
            self._issued += 1
            mine = self._issued
        with self._flushing:
            if device in self._failed:
                return False
            if self._covered.get(device, 0) >= mine:
                return True
            with self._tickets:
                covers = self._issued
            try:
                flushed = syncfs(descriptor)
            except OSError:
                self._failed.add(device)
                return False
            if not flushed:
                return False
            self._covered[device] = max(self._covered.get(device, 0), covers)
            return True


_SHARED = _SharedSyncfs()


def sync_tree(root: Path) -> None:
    """Make every file and directory below ``root`` durable (see the module docstring); raises
    ``OSError``."""
    if posix.POSIX:
        flags = os.O_RDONLY | posix.O_DIRECTORY | posix.O_NOFOLLOW | posix.O_CLOEXEC
        descriptor = os.open(root, flags)
        try:
            if _SHARED.flush(descriptor):
                return
        finally:
            os.close(descriptor)
    # The portable fallback: every file and directory, one by one.
    for directory, _, files in os.walk(root):
        for name in files:
            _fsync(Path(directory) / name, os.O_RDONLY | posix.O_NOFOLLOW)
        posix.fsync_directory(directory)


def _fsync(path: Path, flags: int) -> None:
    descriptor = os.open(path, flags)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
