"""Extraction of an inspected archive with tarfile's ``data`` filter, on top of the pre-scan."""

from __future__ import annotations

import contextlib
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
