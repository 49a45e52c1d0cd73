"""The temporary directories ``check`` runs a plugin in (an extracted tarball, a state
directory), removed on every path even when the plugin turned them against ``check``.

The plugin runs as the same user as ``check`` and, unsandboxed, may rename the directory
``check`` made in the system's temporary directory and leave a link (or anything else) at its
name. Removing the tree by name would then fail on the link (``Cannot call rmtree on a
symbolic link``), lose the report for an ``io`` error, and leave the link and the renamed tree
behind. Instead, when the name no longer holds the directory ``check`` made, the directory is
looked up by its identity (device and inode) beside the name and removed where it is; a link or
file put at the name is unlinked (never followed), a directory put there is left alone (not
``check``'s). Cleanup never raises: what the plugin made impossible to remove (an immutable file)
is left, and where an unwritable directory of the tree is made writable to empty it, only a
directory's own mode is changed, never a link's target (``tempfile``'s own cleanup changes the
mode of what a link points to before Python 3.12.4 and raises when the change is refused).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path


@contextlib.contextmanager
def scratch_directory(prefix: str) -> Iterator[Path]:
    """A new private temporary directory, removed with everything in it when the block ends."""
    name = tempfile.mkdtemp(prefix=prefix)
    made = os.lstat(name)
    try:
        yield Path(name)
    finally:
        ours = _ours(Path(name), (made.st_dev, made.st_ino))
        if ours is not None:
            _remove_tree(str(ours))


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        found = os.lstat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino, found.st_mode


def _ours(path: Path, made: tuple[int, int]) -> Path | None:
    """Where the directory ``check`` made (device and inode ``made``) at ``path`` now is: at
    ``path``, or moved beside it; ``None`` when it is nowhere to be found. A link or file left
    at ``path`` is unlinked (its target untouched); a directory left there is someone else's
    and stays."""
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
    return None


def _remove_tree(name: str) -> None:
    """Remove the tree at ``name`` (a link there is not followed: it is left), as far as it
    can be removed; never raises."""
    tried: set[str] = set()

    def retry(_function: object, path: str, error: object) -> None:
        refused = error[1] if isinstance(error, tuple) else error
        if not isinstance(refused, PermissionError) or path in tried:
            return  # gone already, a link at the name, or refused again: left as it is
        tried.add(path)
        with contextlib.suppress(OSError):
            if path != name:
                _own_mode(str(Path(path).parent))
            if _own_mode(path):
                _rmtree(path, retry)
            else:
                Path(path).unlink()

    _rmtree(name, retry)


def _own_mode(path: str) -> bool:
    """Give the file or directory ``path`` (never a link's target) mode 0700; whether it is
    a directory."""
    found = os.lstat(path)
    if stat.S_ISLNK(found.st_mode):
        return False
    Path(path).chmod(0o700)
    return stat.S_ISDIR(found.st_mode)


def _rmtree(path: str, handler: Callable[[object, str, object], None]) -> None:
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=handler)
    else:
        shutil.rmtree(path, onerror=handler)
