"""Reading configuration files that anyone may have put in place, and writing them back.

A trust policy, a daemon configuration, a registry credentials file or a lint configuration is
found at a well-known path: a FIFO or a device planted there must not hang the command (a read
of a FIFO blocks until someone writes) nor stream without end. :func:`read_config_bytes` opens
without blocking, refuses anything but a regular file (symbolic links are followed: configs
are often links into a managed directory), and reads at most a given size.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

__all__ = ["NotRegularFileError", "read_config_bytes", "write_file_atomically"]

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC


class NotRegularFileError(OSError):
    """The path names a FIFO, socket, device or directory, not a file."""


def read_config_bytes(path: Path, limit: int) -> bytes:
    """Up to ``limit + 1`` bytes of the regular file ``path`` (so a caller can tell "too
    large"); :class:`NotRegularFileError` for anything else, ``OSError`` when it cannot be
    opened or read (``FileNotFoundError`` when it does not exist)."""
    descriptor = os.open(path, _FLAGS)
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise NotRegularFileError(errno.EINVAL, "is not a regular file", str(path))
        os.set_blocking(descriptor, True)
        chunks: list[bytes] = []
        wanted = limit + 1
        while wanted > 0:
            chunk = os.read(descriptor, min(wanted, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            wanted -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(descriptor)


def write_file_atomically(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` in one step: a temporary file in the same directory is
    written, flushed to disk and renamed over ``path``, so a reader (or a crash) sees the old
    file or the new one, never a part. The temporary file is removed on every failure; the
    file gets ``mode`` whatever the umask. Raises ``OSError``."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        temp.replace(path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
