"""Download step: stream an asset into the blob cache (or, when its sha256 is not known
beforehand, into a private temp file beside it), hashing as it goes."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from nexo_pkg.core.dirs import make_dirs
from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources.cache import BlobCache, BlobSink
from nexo_pkg.sources.checksum import verify_checksums

# httpx is only imported when a download really happens.
if TYPE_CHECKING:
    from nexo_pkg.sources.github import GitHubClient, ReleaseAsset

COPY_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class DownloadedFile:
    """A file in the cache with its sha256; the caller deletes it with :meth:`discard`."""

    path: Path
    name: str
    sha256: str
    size: int
    lock_fd: int = -1

    def discard(self) -> None:
        _release(self.path, self.lock_fd)


def _release(path: Path, lock_fd: int) -> None:
    """Delete a temp file, then drop the lock that marked it as in use."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    if lock_fd >= 0:
        with contextlib.suppress(OSError):
            os.close(lock_fd)


def cache_dir(nexo_home: Path) -> Path:
    """Where downloads whose sha256 is not known beforehand are streamed (``trust``'s
    look at a release): beside the blob store, under the one cache directory."""
    return nexo_home / "cache" / "blobs" / "parts"


def _io_error(action: str, exc: OSError) -> NexoError:
    return NexoError(f"cannot {action}: {exc.strerror or exc}", kind="io")


def remove_stale_parts(directory: Path) -> None:
    """Delete temp files left by installs that were killed (their ``flock`` is gone).

    Every live temp file is locked by its install until it is deleted, so an unlockable
    file belongs to a running install and is kept. (A file taken between its creation and
    its locking is noticed by its creator, which starts over: see :func:`make_temp_file`.)
    """
    for path in directory.glob(".*.part"):
        try:
            descriptor = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue
            with contextlib.suppress(OSError):
                path.unlink()
        finally:
            os.close(descriptor)


def make_temp_file(directory: Path, name: str) -> tuple[IO[bytes], Path, int]:
    """A new private temp file in ``directory`` (created if missing), locked while in use.

    Returns the open file, its path and the descriptor holding its lock (closed by
    :meth:`DownloadedFile.discard`). Raises ``io``.
    """
    try:
        make_dirs(directory)
        remove_stale_parts(directory)
        while True:
            descriptor, raw_path = tempfile.mkstemp(
                prefix=f".{name}.", suffix=".part", dir=directory
            )
            try:
                lock_fd = os.open(raw_path, os.O_RDONLY)
            except FileNotFoundError:
                # Taken by another install's clean-up before it could be opened: start over.
                os.close(descriptor)
                continue
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            # Another install's clean-up may have taken the file before it was locked.
            try:
                ours = Path(raw_path).stat().st_ino == os.fstat(lock_fd).st_ino
            except FileNotFoundError:
                ours = False
            if ours:
                return os.fdopen(descriptor, "w+b"), Path(raw_path), lock_fd
            os.close(descriptor)
            os.close(lock_fd)
    except OSError as exc:
        raise _io_error(f"create a temp file in {directory}", exc) from exc


def download_asset(
    client: GitHubClient,
    asset: ReleaseAsset,
    directory: Path,
    *,
    max_bytes: int,
    show_progress: bool = False,
) -> DownloadedFile:
    """Stream ``asset`` into a temp file under ``directory`` and hash it.

    The temp file is deleted on any failure. Raises what :meth:`GitHubClient.download` raises,
    or ``io`` when the cache is not writable.
    """
    _check_listed_size(asset, max_bytes)
    handle, path, lock_fd = make_temp_file(directory, asset.name)
    try:
        with handle, _progress_bar(asset.name, enabled=show_progress) as progress:
            sink = BlobSink(handle, progress)
            client.download(asset, sink, max_bytes=max_bytes)
            handle.flush()
        return DownloadedFile(path, asset.name, sink.hasher.hexdigest(), sink.size, lock_fd)
    except BaseException:
        _release(path, lock_fd)
        raise


def _check_listed_size(asset: ReleaseAsset, max_bytes: int) -> None:
    if asset.size and asset.size > max_bytes:
        raise NexoError(
            f"{asset.name} is {asset.size} bytes, over the download limit of {max_bytes} "
            "bytes (raise it with --max-download-size)",
            kind="archive_unsafe",
        )


@contextlib.contextmanager
def cached_asset(
    client: GitHubClient,
    asset: ReleaseAsset,
    blobs: BlobCache,
    *,
    sidecar: str | None = None,
    digest: str | None,
    max_bytes: int,
    show_progress: bool = False,
) -> Iterator[Path]:
    """``asset`` as a blob of the shared cache, read in place while the context is open; its
    sha256 must be known beforehand (from its ``.sha256`` ``sidecar`` or the API's
    ``digest``).

    A cached blob is re-hashed and used without a request; a missing or damaged one is
    downloaded into the cache (a temp file renamed into place, so concurrent installs race
    harmlessly), and only when its bytes hash to that sha256. Raises ``checksum_missing``
    when neither is known (nothing is downloaded), ``checksum_mismatch`` (as
    :func:`verify_checksums` words it) for bytes that do not hash to the sha256 (nothing is
    cached), ``archive_unsafe`` over ``max_bytes``, and what :meth:`GitHubClient.download`
    raises.
    """
    expected = sidecar or digest
    if expected is None:
        verify_checksums("", asset.name, sidecar=None, digest=None)
        raise AssertionError("unreachable: verify_checksums refuses a missing checksum")
    _check_listed_size(asset, max_bytes)

    def fetch(sink: BlobSink) -> None:
        client.download(asset, sink, max_bytes=max_bytes)

    with contextlib.ExitStack() as held:
        # The bar is gone before the blob is used (a confirmation may follow).
        with _progress_bar(asset.name, enabled=show_progress) as progress:
            try:
                blob = held.enter_context(blobs.open_blob(expected, fetch, progress))
            except NexoError as error:
                actual = error.details.get("actual")
                if error.kind == "checksum_mismatch" and isinstance(actual, str):
                    verify_checksums(actual, asset.name, sidecar=sidecar, digest=digest)
                raise
        yield blob


def copy_local(source: Path, directory: Path, *, max_bytes: int) -> DownloadedFile:
    """Copy a local tarball into the cache while hashing it, so later steps read a private,
    stable copy. Raises ``archive_unsafe`` over ``max_bytes``, ``io`` when unreadable."""
    handle, path, lock_fd = make_temp_file(directory, source.name)
    try:
        hasher = hashlib.sha256()
        size = 0
        with handle, source.open("rb") as origin:
            while chunk := origin.read(COPY_CHUNK):
                size += len(chunk)
                if size > max_bytes:
                    raise NexoError(
                        f"{source.name} is larger than the download limit of {max_bytes} "
                        "bytes (raise it with --max-download-size)",
                        kind="archive_unsafe",
                    )
                hasher.update(chunk)
                handle.write(chunk)
        return DownloadedFile(path, source.name, hasher.hexdigest(), size, lock_fd)
    except OSError as exc:
        _release(path, lock_fd)
        raise _io_error(f"read {source}", exc) from exc
    except BaseException:
        _release(path, lock_fd)
        raise


@contextlib.contextmanager
def _progress_bar(name: str, *, enabled: bool) -> Any:
    """A rich progress bar on stderr, only when asked (the CLI asks on a TTY)."""
    if not enabled:
        yield None
        return
    # rich is only paid for when a progress bar is shown.
    from rich.console import Console  # noqa: PLC0415
    from rich.progress import (  # noqa: PLC0415
        BarColumn,
        DownloadColumn,
        Progress,
        TransferSpeedColumn,
    )

    console = Console(stderr=True)
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task(name, total=None)

        def update(done: int, total: int | None) -> None:
            progress.update(task, completed=done, total=total)

        yield update
