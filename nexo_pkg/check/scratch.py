"""The temporary directories ``check`` runs a plugin in (an extracted tarball, a state
directory), removed on every path even when the plugin turned them against ``check``.

The plugin runs as the same user as ``check`` and, unsandboxed, may rename the directory
``check`` made in the system's temporary directory and leave a link (or anything else) at its
name. Removing the tree by name would then fail on the link (``Cannot call rmtree on a
symbolic link``), lose the report for an ``io`` error, and leave the link and the renamed tree
behind. Instead, when the name no longer holds the directory ``check`` made, the directory is
looked up by its identity (device and inode) beside the name and removed where it is; a link or
file put at the name is unlinked (never followed), a directory put there is left alone (not
``check``'s). Cleanup never follows a link and never raises.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def scratch_directory(prefix: str) -> Iterator[Path]:
    """A new private temporary directory, removed with everything in it when the block ends."""
    scratch = tempfile.TemporaryDirectory(prefix=prefix, ignore_cleanup_errors=True)
    with scratch as name:
        made = os.lstat(name)
        try:
            yield Path(name)
        finally:
            # What the cleanup removes: check's own directory wherever it now is.
            scratch.name = str(_ours(Path(name), (made.st_dev, made.st_ino)))


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        found = os.lstat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino, found.st_mode


def _ours(path: Path, made: tuple[int, int]) -> Path:
    """Where the directory ``check`` made (device and inode ``made``) at ``path`` now is: at
    ``path``, or moved beside it. A link or file left at ``path`` is unlinked (its target
    untouched); a directory left there is someone else's and stays. When ours is nowhere to be
    found, a new empty directory beside ``path`` (so the cleanup removes nothing else)."""
    here = _identity(path)
    if here is not None and here[:2] == made:
        return path
    if here is not None and not stat.S_ISDIR(here[2]):
        with contextlib.suppress(OSError):
            path.unlink()
    with contextlib.suppress(OSError), os.scandir(path.parent) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                found = entry.stat(follow_symlinks=False)
                if (found.st_dev, found.st_ino) == made and stat.S_ISDIR(found.st_mode):
                    return Path(entry.path)
    try:
        return Path(tempfile.mkdtemp(prefix=".gone-", dir=path.parent))
    except OSError:
        return path.parent / f".gone-{os.urandom(16).hex()}"  # no such name: nothing removed
