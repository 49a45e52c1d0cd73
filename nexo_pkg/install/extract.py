"""Extraction of an inspected archive with tarfile's ``data`` filter, on top of the pre-scan."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import stat
import tarfile
from pathlib import Path

from nexo_pkg.errors import NexoError
from nexo_pkg.install.inspect import (
    ArchiveLimits,
    ArchiveListing,
    check_member,
    open_stream,
    unsafe,
)

_HASH_CHUNK = 1 << 20


def extract_listed(
    tarball: Path, destination: Path, listing: ArchiveListing, limits: ArchiveLimits
) -> None:
    """Extract ``tarball`` into the existing ``destination``, member by member.

    Every member must match the pre-scan ``listing`` in order (the file is ours, but a
    mismatch means it changed, so nothing is trusted). On failure the contents written so far
    are removed. Raises ``archive_unsafe``, ``archive_invalid`` or ``io``.
    """
    try:
        index = 0
        with open_stream(tarball, limits) as archive:
            for member in archive:
                checked = check_member(member)
                if checked is None:
                    continue
                if index >= len(listing.entries) or listing.entries[index] != checked:
                    raise unsafe("the archive changed between inspection and extraction")
                index += 1
                try:
                    archive.extract(member, destination, set_attrs=True, filter="data")
                    if checked[1] == "file":
                        _same_content(destination / checked[0], listing.files[checked[0]].sha256)
                except tarfile.FilterError as exc:
                    raise unsafe(str(exc), member=member.name) from exc
                except OSError as exc:
                    raise NexoError(
                        f"cannot extract {checked[0]}: {exc.strerror or exc}", kind="io"
                    ) from exc
        if index != len(listing.entries):
            raise unsafe("the archive changed between inspection and extraction")
        _normalise_modes(destination, listing)
    except BaseException:
        _empty_directory(destination)
        raise


def _same_content(path: Path, expected_sha256: str) -> None:
    """The extracted file must hold the bytes the pre-scan hashed (and the receipt records).

    The archive is read twice, so a file rewritten in place between the two reads would
    otherwise be installed unchecked.
    """
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    if digest.hexdigest() != expected_sha256:
        raise unsafe("the archive changed between inspection and extraction", member=path.name)


def _normalise_modes(destination: Path, listing: ArchiveListing) -> None:
    """Directories 0755; files 0644, or 0755 when the archive marked them executable."""
    for name, kind in listing.entries:
        path = destination / name
        if kind == "dir":
            path.chmod(0o755)
        else:
            executable = listing.files[name].mode & stat.S_IXUSR
            path.chmod(0o755 if executable else 0o644)


def _empty_directory(directory: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        for child in directory.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    child.unlink()
