"""Extraction in the same pass as the checks: members are written as they are read.

Every member has passed the rules of :mod:`nexo_pkg.sources.archive` before its first byte
arrives here, and is created relative to directory descriptors this module made itself:
files with ``O_CREAT | O_EXCL | O_NOFOLLOW``, directories reopened with ``O_DIRECTORY |
O_NOFOLLOW``, so no path is resolved by name and nothing is written through a link; modes
come from this module, not from the archive, whatever the umask (docs/security.md states
each guarantee). The bytes hashed for the receipt are the bytes written. The first bad member
stops the pass and empties the destination again.

Inside :func:`extraction_workers` (``sync`` with several jobs), each extraction runs in one of
the given worker processes, so that the header parsing and hashing of several plugins use
several cores; the tree is written where it would have been, the listing comes back.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ParamSpec, Protocol, TypeVar

from nexo_pkg.core import posix
from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources.archive import ArchiveLimits, ArchiveListing, TreeSink, walk_archive

DIRECTORY_MODE = 0o755
FILE_MODE = 0o644
EXECUTABLE_MODE = 0o755
# Open directory descriptors kept for the members that follow (archives list a directory's
# members together, so a few suffice); the rest are reopened when needed.
MAX_OPEN_DIRECTORIES = 64
_DIR_FLAGS = os.O_RDONLY | posix.O_DIRECTORY | posix.O_NOFOLLOW | posix.O_CLOEXEC
_FILE_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | posix.O_NOFOLLOW | posix.O_CLOEXEC | posix.O_BINARY
)

_Params = ParamSpec("_Params")
_Result = TypeVar("_Result")


class Workers(Protocol):
    """Runs a module-level function, with arguments and a result that pickle, elsewhere
    (``fleet.pool.CpuPool``), raising what it raised there."""

    def call(
        self,
        function: Callable[_Params, _Result],
        *args: _Params.args,
        **kwargs: _Params.kwargs,
    ) -> _Result: ...


class _Routing:
    """Where :func:`extract_archive` runs: here, or in the workers of the open
    :func:`extraction_workers`."""

    workers: Workers | None = None


@contextlib.contextmanager
def extraction_workers(workers: Workers) -> Iterator[None]:
    """While open, every :func:`extract_archive` of this process (from any thread) runs in
    ``workers``; the caller still owns the destination and everything done with it after."""
    previous, _Routing.workers = _Routing.workers, workers
    try:
        yield
    finally:
        _Routing.workers = previous


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class _TreeWriter(TreeSink):
    """Writes the members into the directory open as ``root_fd`` (which it then owns).

    Where ``dir_fd`` does not exist (Windows: ``check`` of a tarball; installs refuse to run
    there), ``root_fd`` is -1 and members are created by path below ``destination``, a
    directory the caller made empty, with ``O_EXCL``: nothing there can be a link the
    archive did not make, and an archive makes none."""

    def __init__(self, destination: Path, root_fd: int) -> None:
        self.destination = destination
        self.root_fd = root_fd
        self.umask = _current_umask()
        self.directories: OrderedDict[str, int] = OrderedDict()
        self.file_fd: int | None = None
        self.file_name = ""
        # The directory of the last file written whole, and its descriptor (one of
        # ``directories``, or the root): files come a directory at a time.
        self.last_parent: str | None = None
        self.last_parent_fd = root_fd
        # The permission bits of what was created, read back from it once made.
        self.modes: dict[str, int] = {}

    def _fail(self, action: str, name: str, exc: OSError) -> NexoError:
        return NexoError(f"cannot {action} {name}: {exc.strerror or exc}", kind="io")

    def _directory_fd(self, name: str) -> int:
        """The descriptor of the directory ``name`` we created ("" is the root)."""
        if not name:
            return self.root_fd
        descriptor = self.directories.get(name)
        if descriptor is not None:
            self.directories.move_to_end(name)
            return descriptor
        parent, _, last = name.rpartition("/")
        descriptor = os.open(last, _DIR_FLAGS, dir_fd=self._directory_fd(parent))
        self._keep(name, descriptor)
        return descriptor

    def _keep(self, name: str, descriptor: int) -> None:
        self.directories[name] = descriptor
        if len(self.directories) > MAX_OPEN_DIRECTORIES:
            _, oldest = self.directories.popitem(last=False)
            self.last_parent = None  # it may be the one closed
            os.close(oldest)

    def directory(self, name: str) -> None:
        parent, _, last = name.rpartition("/")
        try:
            if self.root_fd < 0:
                path = self.destination / name
                path.mkdir(DIRECTORY_MODE)
                self.modes[name] = stat.S_IMODE(path.lstat().st_mode)
                return
            parent_fd = self._directory_fd(parent)
            os.mkdir(last, DIRECTORY_MODE, dir_fd=parent_fd)
            descriptor = os.open(last, _DIR_FLAGS, dir_fd=parent_fd)
            self._keep(name, descriptor)
            if DIRECTORY_MODE & self.umask:
                posix.set_mode(descriptor, self.destination / name, DIRECTORY_MODE)
            self.modes[name] = stat.S_IMODE(os.fstat(descriptor).st_mode)
        except OSError as exc:
            raise self._fail("create the directory", name, exc) from exc

    def open_file(self, name: str, executable: bool) -> None:
        parent, _, last = name.rpartition("/")
        mode = EXECUTABLE_MODE if executable else FILE_MODE
        try:
            if self.root_fd < 0:
                descriptor = os.open(self.destination / name, _FILE_FLAGS, mode)
            else:
                descriptor = os.open(last, _FILE_FLAGS, mode, dir_fd=self._directory_fd(parent))
            self.file_fd, self.file_name = descriptor, name
            if mode & self.umask:
                posix.set_mode(descriptor, self.destination / name, mode)
        except OSError as exc:
            raise self._fail("create", name, exc) from exc

    def write_file(self, name: str, executable: bool, data: bytes | memoryview) -> None:
        """:meth:`open_file`, :meth:`write` and :meth:`close_file` in one call (most members
        come whole), with the same system calls and errors."""
        mode = EXECUTABLE_MODE if executable else FILE_MODE
        if self.root_fd < 0 or mode & self.umask:  # created by path, or a mode to set
            super().write_file(name, executable, data)
            return
        parent, _, last = name.rpartition("/")
        try:
            if parent != self.last_parent:
                self.last_parent_fd = self._directory_fd(parent)
                self.last_parent = parent
            descriptor = os.open(last, _FILE_FLAGS, mode, dir_fd=self.last_parent_fd)
        except OSError as exc:
            raise self._fail("create", name, exc) from exc
        self.file_fd, self.file_name = descriptor, name
        try:
            written = os.write(descriptor, data) if data else 0
            if written < len(data):
                self.write(memoryview(data)[written:])
            self.modes[name] = os.fstat(descriptor).st_mode & 0o7777  # stat.S_IMODE
            self.file_fd = None
            os.close(descriptor)
        except OSError as exc:
            raise self._fail("write", name, exc) from exc

    def write(self, data: bytes | memoryview) -> None:
        assert self.file_fd is not None  # noqa: S101 (open_file comes first)
        try:
            while data:
                written = os.write(self.file_fd, data)
                data = memoryview(data)[written:]
        except OSError as exc:
            raise self._fail("write", self.file_name, exc) from exc

    def close_file(self) -> None:
        descriptor, self.file_fd = self.file_fd, None
        if descriptor is not None:
            try:
                try:
                    self.modes[self.file_name] = stat.S_IMODE(os.fstat(descriptor).st_mode)
                finally:
                    os.close(descriptor)
            except OSError as exc:
                raise self._fail("write", self.file_name, exc) from exc

    def close(self) -> None:
        """Close every descriptor (the written tree stays)."""
        with contextlib.suppress(OSError):
            if self.file_fd is not None:
                os.close(self.file_fd)
        self.file_fd = None
        for descriptor in self.directories.values():
            with contextlib.suppress(OSError):
                os.close(descriptor)
        self.directories.clear()
        self.last_parent = None
        if self.root_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.root_fd)

    def abort(self) -> None:
        self.close()
        _empty_directory(self.destination)


def extract_archive(
    tarball: Path,
    destination: Path,
    limits: ArchiveLimits,
    *,
    expect: ArchiveListing | None = None,
) -> ArchiveListing:
    """Check and extract ``tarball`` into the existing, empty ``destination`` in one pass.

    ``destination`` itself is made 0755; the listing's ``modes`` are those of what was
    created below it, read from each file and directory once made. With ``expect``, the
    archive must hold exactly that listing (see
    :func:`~nexo_pkg.sources.archive.walk_archive`). On failure ``destination`` is left
    empty. Raises ``archive_unsafe``, ``archive_invalid`` or ``io``.
    Inside :func:`extraction_workers`, the pass runs in a worker process.
    """
    workers = _Routing.workers
    if workers is not None:
        return workers.call(extract_here, tarball, destination, limits, expect=expect)
    return extract_here(tarball, destination, limits, expect=expect)


def extract_here(
    tarball: Path,
    destination: Path,
    limits: ArchiveLimits,
    *,
    expect: ArchiveListing | None = None,
) -> ArchiveListing:
    """:func:`extract_archive` in this process."""
    writer: _TreeWriter | None = None
    try:
        if not posix.DIR_FD:
            writer = _TreeWriter(destination, -1)
            destination.chmod(DIRECTORY_MODE)
        else:
            writer = _TreeWriter(destination, os.open(destination, _DIR_FLAGS))
            posix.set_mode(writer.root_fd, destination, DIRECTORY_MODE)
    except OSError as exc:
        if writer is not None:
            writer.close()
        raise NexoError(f"cannot use {destination}: {exc.strerror or exc}", kind="io") from exc
    listing = walk_archive(tarball, limits, writer, expect=expect)
    writer.close()
    listing.modes = writer.modes
    return listing


def safe_extract(
    tarball: Path, dest_dir: Path, limits: ArchiveLimits | None = None
) -> ArchiveListing:
    """Check and extract ``tarball`` into the empty ``dest_dir``; return its listing.

    On failure ``dest_dir`` is left empty. Raises ``archive_unsafe``, ``archive_invalid``, or
    ``io`` when ``dest_dir`` is missing, not empty or not writable.
    """
    try:
        if not dest_dir.is_dir() or any(dest_dir.iterdir()):
            raise NexoError(f"{dest_dir} must be an existing empty directory", kind="io")
    except OSError as exc:
        raise NexoError(f"cannot use {dest_dir}: {exc.strerror or exc}", kind="io") from exc
    return extract_archive(tarball, dest_dir, limits or ArchiveLimits())


def _empty_directory(directory: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        for child in directory.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    child.unlink()
