"""A byte-reproducible ``tar.gz`` writer, by the rules of SPEC §3 (docs/pack.md,
"Reproducibility"): file contents and the one mtime are its only inputs, so the same inputs
always give the same bytes whatever the umask, file mtimes or directory order.
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import io
import os
import tarfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

#: ``tar -z`` runs ``gzip`` with its default level 6: the same size/speed trade-off, chosen so
#: that packing keeps pace with GNU tar (level 9 measured ~5x the time for ~1% smaller output).
DEFAULT_COMPRESSLEVEL = 6

FILE_MODE = 0o644
EXECUTABLE_MODE = 0o755
DIRECTORY_MODE = 0o755

_BLOCK = tarfile.BLOCKSIZE
_RECORD = tarfile.RECORDSIZE
# Small entries are batched before they reach zlib: one compressor call per entry costs more
# than the compression itself for the many tiny files of a vendored tree. Big files pass in
# pieces of this size, so memory stays flat; deflate's output does not depend on how its
# input is split, so the bytes are the same either way.
_FLUSH_AT = 1 << 20


@dataclass(frozen=True)
class ArchiveEntry:
    """One member of the archive.

    ``name`` is a relative POSIX path without a trailing slash. A file takes its bytes from
    ``data`` when given, else from ``source`` at write time. ``executable`` selects 0755.
    """

    name: str
    is_dir: bool = False
    executable: bool = False
    source: Path | None = None
    data: bytes | None = None


def complete_entries(entries: Iterable[ArchiveEntry]) -> list[ArchiveEntry]:
    """Add the missing parent directories and sort; a name given twice raises ``ValueError``."""
    by_name: dict[str, ArchiveEntry] = {}
    for entry in entries:
        if entry.name in by_name:
            raise ValueError(f"duplicate archive member {entry.name!r}")
        by_name[entry.name] = entry
    for name in list(by_name):
        parts = name.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            existing = by_name.get(parent)
            if existing is None:
                by_name[parent] = ArchiveEntry(parent, is_dir=True)
            elif not existing.is_dir:
                raise ValueError(f"archive member {parent!r} is both a file and a directory")
    # Component-wise order puts a directory's members right after it, as `tar --sort=name`.
    return sorted(by_name.values(), key=lambda entry: entry.name.split("/"))


def _header(name: str, *, is_dir: bool, mode: int, size: int, mtime: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE if is_dir else tarfile.REGTYPE
    info.mode = mode
    info.size = size
    info.mtime = mtime
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    # GNU headers spell long names with ././@LongLink records instead of PAX extended
    # headers, so no atime/ctime or other host-dependent field can slip in.
    return info.tobuf(tarfile.GNU_FORMAT, "utf-8", "surrogateescape")


def _append_file(
    pending: bytearray, entry: ArchiveEntry, mtime: int, flush: Callable[[], None]
) -> None:
    """Append a file member (header, bytes, padding) to ``pending``, calling ``flush`` each
    time it holds ``_FLUSH_AT`` bytes. ``OSError`` when the source cannot be read or changes
    size while it is read."""
    if entry.data is not None:
        handle: BinaryIO = io.BytesIO(entry.data)
        size = len(entry.data)
    elif entry.source is not None:
        handle = entry.source.open("rb")
        size = os.fstat(handle.fileno()).st_size
    else:
        raise ValueError(f"archive member {entry.name!r} has neither data nor a source")
    mode = EXECUTABLE_MODE if entry.executable else FILE_MODE
    pending += _header(entry.name, is_dir=False, mode=mode, size=size, mtime=mtime)
    with handle:
        left = size
        while left:
            chunk = handle.read(min(left, _FLUSH_AT))
            if not chunk:
                break
            pending += chunk
            left -= len(chunk)
            if len(pending) >= _FLUSH_AT:
                flush()
        if left or handle.read(1):
            raise OSError(
                errno.EAGAIN, "the file changed size while it was packed", str(entry.source)
            )
    remainder = size % _BLOCK
    if remainder:
        pending += bytes(_BLOCK - remainder)


class _HashingWriter:
    """A write-only file object that hashes and counts what passes through it."""

    def __init__(self, target: BinaryIO) -> None:
        self._target = target
        self.digest = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        self.size += len(data)
        return self._target.write(data)

    def flush(self) -> None:
        self._target.flush()


@dataclass(frozen=True)
class WrittenArchive:
    """What :func:`write_tar_gz` produced: the sha256 (hex) and size of the gzip stream."""

    sha256: str
    size: int


def write_tar_gz(
    entries: Iterable[ArchiveEntry], destination: BinaryIO, *, mtime: int
) -> WrittenArchive:
    """Write ``entries`` as a reproducible gzip-compressed tar to ``destination``.

    Missing parent directories are added. Raises ``OSError`` when a source file cannot be
    read and ``ValueError`` for inconsistent entries; the caller owns cleaning up
    ``destination`` then.
    """
    if mtime < 0:
        raise ValueError("mtime must be a non-negative integer")
    hashing = _HashingWriter(destination)
    pending = bytearray()
    written = 0
    with gzip.GzipFile(
        fileobj=hashing, mode="wb", compresslevel=DEFAULT_COMPRESSLEVEL, mtime=0, filename=""
    ) as compressed:

        def flush() -> None:
            nonlocal written
            compressed.write(pending)
            written += len(pending)
            pending.clear()

        for entry in complete_entries(entries):
            if entry.is_dir:
                pending += _header(
                    entry.name, is_dir=True, mode=DIRECTORY_MODE, size=0, mtime=mtime
                )
            else:
                _append_file(pending, entry, mtime, flush)
            if len(pending) >= _FLUSH_AT:
                flush()
        # End of archive: two zero blocks, then zero-fill to a whole record like tar does.
        pending += bytes(2 * _BLOCK)
        remainder = (written + len(pending)) % _RECORD
        if remainder:
            pending += bytes(_RECORD - remainder)
        flush()
    return WrittenArchive(sha256=hashing.digest.hexdigest(), size=hashing.size)
