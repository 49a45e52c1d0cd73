"""Opening files that anyone may have put in place, and writing configuration files back.

A trust policy, a daemon configuration, a registry credentials file, a lint configuration, a
fleet's lock, a receipt or a cached blob is found at a well-known path: a FIFO or a device
planted there must not hang the command (a read of a FIFO blocks until someone writes) nor
stream without end, and a link planted there must not lead a write outside. Hence one reader,
:func:`open_regular` (every ``read_*`` below goes through it), one opener of a lock file,
:func:`open_lock_file`, and one writer, :func:`write_file_atomically`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

from nexo_pkg.core import posix
from nexo_pkg.core.errors import ConfigError, NexoError

_OPEN_FLAGS = posix.O_NONBLOCK | posix.O_CLOEXEC | posix.O_BINARY
_FLAGS = os.O_RDONLY | _OPEN_FLAGS
_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | _OPEN_FLAGS


class NotRegularFileError(OSError):
    """The path names a link (where none is followed), FIFO, socket, device or directory."""


class FileTooLargeError(ValueError):
    """The file holds more bytes than its reader accepts."""


def _regular_descriptor(
    path: Path, flags: int, mode: int = 0o644, *, follow_links: bool = False
) -> int:
    """``os.open(path, flags)`` checked to be a regular file, set to blocking again. Without
    ``follow_links`` a link is refused (``O_NOFOLLOW``; where there is none, an ``lstat``
    first)."""
    descriptor, _ = _regular_opened(path, flags, mode, follow_links=follow_links)
    if posix.O_NONBLOCK:
        try:
            os.set_blocking(descriptor, True)
        except BaseException:
            os.close(descriptor)
            raise
    return descriptor


def _regular_opened(
    path: str | Path, flags: int, mode: int = 0o644, *, follow_links: bool = False
) -> tuple[int, os.stat_result]:
    """``os.open(path, flags)`` checked to be a regular file, and its ``fstat``; still
    non-blocking (``O_NONBLOCK``: harmless for a regular file read to its end at once)."""
    if not follow_links:
        if posix.O_NOFOLLOW:
            flags |= posix.O_NOFOLLOW
        elif Path(path).is_symlink():
            raise NotRegularFileError(errno.ELOOP, "is a symbolic link", str(path))
    try:
        descriptor = os.open(path, flags, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_links:
            raise NotRegularFileError(errno.ELOOP, "is a symbolic link", str(path)) from exc
        raise
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(errno.EINVAL, "is not a regular file", str(path))
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor, info


@contextlib.contextmanager
def open_regular(path: Path, *, follow_links: bool = False) -> Iterator[BinaryIO]:
    """``path`` open for binary reading if it is a regular file, without blocking on a FIFO
    and (unless ``follow_links``) without following a link: ``O_NONBLOCK`` (``O_NOFOLLOW``),
    then ``fstat`` before any read. Raises :class:`NotRegularFileError` for anything else,
    ``OSError`` when it cannot be opened (``FileNotFoundError`` when it does not exist)."""
    descriptor = _regular_descriptor(path, _FLAGS, follow_links=follow_links)
    try:
        handle = os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise
    with handle:
        yield handle


def read_regular_bytes(path: str | Path, limit: int, *, follow_links: bool = False) -> bytes:
    """Up to ``limit + 1`` bytes of the regular file ``path`` (so a caller can tell "too
    large"), opened as :func:`open_regular` does; raises as it does."""
    # Read at once and closed: left non-blocking, which a regular file does not heed (two
    # system calls fewer per file; `list` reads a thousand receipts).
    descriptor, info = _regular_opened(path, _FLAGS, follow_links=follow_links)
    try:
        # Pieces the file's size (and a byte more, to meet its end), from 64 KiB to 1 MiB:
        # a small file costs no 1 MiB buffer (a receipt, a manifest: list reads a thousand).
        piece = min(max(info.st_size + 1, 1 << 16), 1 << 20)
        chunks: list[bytes] = []
        wanted = limit + 1
        while wanted > 0:
            try:
                chunk = os.read(descriptor, min(wanted, piece))
            except BlockingIOError:  # a file system that heeds it after all: wait as ever
                os.set_blocking(descriptor, True)
                continue
            if not chunk:
                break
            chunks.append(chunk)
            wanted -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(descriptor)


def read_config_bytes(path: Path, limit: int) -> bytes:
    """Up to ``limit + 1`` bytes of the configuration file ``path``, a link to one followed;
    :class:`NotRegularFileError` for anything else, ``OSError`` when it cannot be opened or
    read (``FileNotFoundError`` when it does not exist)."""
    return read_regular_bytes(path, limit, follow_links=True)


def open_lock_file(path: Path) -> int:
    """A descriptor of the lock file ``path`` (read-write, created 0644 when missing), for
    ``flock``. A link there (dangling or not) is :class:`NotRegularFileError` rather than a
    file created wherever it points; so are a FIFO, a device and a directory."""
    return _regular_descriptor(path, _LOCK_FLAGS)


def read_capped_bytes(path: str | Path, limit: int, *, follow_links: bool = True) -> bytes:
    """The bytes of the regular file ``path`` (a final link followed unless ``follow_links`` is
    false) when it holds at most ``limit`` of them; :class:`FileTooLargeError` ("it is larger
    than N bytes") when it holds more, and as :func:`read_regular_bytes` otherwise."""
    raw = read_regular_bytes(path, limit, follow_links=follow_links)
    if len(raw) > limit:
        raise FileTooLargeError(f"it is larger than {limit} bytes")
    return raw


def read_config_file(
    path: Path,
    limit: int,
    *,
    error: type[NexoError] = ConfigError,
    kind: str | None = None,
    missing_ok: bool = False,
) -> bytes:
    """The bytes of the configuration file ``path`` (a link to one followed, read as
    :func:`read_capped_bytes` reads) when it holds at most ``limit`` of them. Otherwise
    ``error`` (of ``kind`` when given): ``cannot read PATH: REASON`` (a FIFO, a directory, no
    permission, no such file) or ``PATH is larger than N bytes``. With ``missing_ok`` a missing
    file raises ``FileNotFoundError`` as it is, for a caller to whom it means "none"."""
    try:
        return read_capped_bytes(path, limit)
    except FileTooLargeError as exc:
        raise error(f"{path} is larger than {limit} bytes", kind=kind) from exc
    except FileNotFoundError:
        if missing_ok:
            raise
        raise error(f"cannot read {path}: it does not exist", kind=kind) from None
    except OSError as exc:
        raise error(f"cannot read {path}: {exc.strerror or exc}", kind=kind) from exc


def write_file_atomically(
    path: Path, data: bytes, *, mode: int = 0o644, durable: bool = True
) -> None:
    """Replace ``path`` with ``data`` in one step: a new temporary file in the same directory
    (``mkstemp``: never an existing file or a link) is written, flushed to disk and renamed
    over ``path``, then the directory is flushed, so a reader (or a crash) sees the old file or
    the new one, never a part. The file gets ``mode`` whatever the umask; a link at ``path`` is
    replaced, not followed. The temporary file is removed on every failure (a full disk, a
    rename refused because ``path`` is a directory, an interrupt). Without ``durable`` nothing
    is flushed: for a file inside a staged tree whose caller flushes the whole tree
    (:func:`~nexo_pkg.core.durable.sync_tree`) before publishing it. Raises ``OSError``;
    :class:`NotRegularFileError` when ``path`` is (or links to) a device, FIFO or socket, which
    a rename would replace with a regular file (``/dev/null`` or ``/dev/stdout`` for root)."""
    # Imported by the writers and hashers only: commands that just read (`list`) skip them.
    import tempfile  # noqa: PLC0415

    refuse_special_file(path)
    descriptor, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    temp = Path(name)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            posix.set_mode(handle.fileno(), temp, mode)
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        temp.replace(path)
        if durable:
            posix.fsync_directory(path.parent)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def refuse_special_file(path: Path) -> None:
    """:class:`NotRegularFileError` when ``path`` exists, after its links, and is neither a
    regular file nor a directory (a rename over a directory fails on its own)."""
    try:
        info = path.stat()
    except OSError:
        return  # nothing there (or a dangling link, which is replaced)
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
        raise NotRegularFileError(errno.EINVAL, "is not a regular file", str(path))


class NowhereLink(NamedTuple):
    """A symbolic link that reaches nothing: ``what`` it is, in words ("a symbolic link that
    loops", "a symbolic link to TARGET, which does not exist"), and whether it ``loops``."""

    what: str
    loops: bool


def link_leading_nowhere(path: Path) -> NowhereLink | None:
    """What ``path`` is when it is a symbolic link that reaches nothing (dangling, or looping);
    ``None`` otherwise. Nothing can be created through such a link: ``mkdir`` says only "File
    exists", so a command that would make a directory there names the link instead."""
    if not path.is_symlink() or path.exists():
        return None
    # What `realpath` leaves is still a link only when the chain loops (`Path.resolve` raises
    # RuntimeError on a loop before Python 3.13).
    if Path(os.path.realpath(path)).is_symlink():
        return NowhereLink("a symbolic link that loops", loops=True)
    return NowhereLink(f"a symbolic link to {path.readlink()}, which does not exist", loops=False)


def file_above(path: Path) -> Path | None:
    """The first path above ``path`` that is not a directory (a file, where a directory of
    the path was expected): nothing can be read or made below it, so a command given such a
    path names it. ``None`` when ``path`` can be reached, or fails for another reason (it is
    then the command's to say; Windows says "not found" for a path below a file)."""
    try:
        path.stat()
    except NotADirectoryError:
        pass
    except (OSError, ValueError):
        return None
    else:
        return None
    for above in reversed(path.absolute().parents):
        try:
            if not stat.S_ISDIR(above.stat().st_mode):
                return above
        except OSError:
            return None
    return None


def write_config_file(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """:func:`write_file_atomically` for a file a command edits (a trust policy, a lock file,
    the daemon's discovery configuration): any ``OSError`` becomes one ``io`` error naming
    ``path``."""
    try:
        write_file_atomically(path, data, mode=mode)
    except OSError as exc:
        raise NexoError(f"cannot write {path}: {exc.strerror or exc}", kind="io") from exc


def sha256_file(path: Path, *, regular: bool = False) -> str:
    """The SHA-256 of the file at ``path`` (hex), streamed so memory stays flat in its size;
    ``OSError`` when it cannot be read. With ``regular``, only a regular file, opened as
    :func:`open_regular` opens it (a link or a FIFO raises :class:`NotRegularFileError`)."""
    import hashlib  # noqa: PLC0415

    digest = hashlib.sha256()
    with open_regular(path) if regular else path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
