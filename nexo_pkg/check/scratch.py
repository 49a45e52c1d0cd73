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
import contextvars
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

# What the scratch directories of the current check run could not remove, said in its report
# (:func:`collecting_leftovers`).
_LEFT: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "nexo_check_scratch_left", default=None
)


@contextlib.contextmanager
def collecting_leftovers() -> Iterator[list[str]]:
    """Collect, for the block, what :func:`scratch_directory` could not remove because the
    plugin moved it where it cannot be found: one sentence each, for the check's report."""
    left: list[str] = []
    token = _LEFT.set(left)
    try:
        yield left
    finally:
        _LEFT.reset(token)


@contextlib.contextmanager
def scratch_directory(prefix: str) -> Iterator[Path]:
    """A new private temporary directory, removed with everything in it when the block ends.
    One the plugin moved away is found by its identity (beside its name, else where the
    kernel says an open descriptor of it now is) and removed there; one that cannot be found
    is said (:func:`collecting_leftovers`, else a warning), never left silently."""
    name = tempfile.mkdtemp(prefix=prefix)
    made = os.lstat(name)
    handle = _open_directory(name)
    try:
        yield Path(name)
    finally:
        try:
            identity = (made.st_dev, made.st_ino)
            ours = _ours(Path(name), identity)
            if ours is None and handle is not None:
                ours = _moved_to(handle, identity)
            if ours is not None:
                _remove_tree(str(ours))
            elif handle is None or _still_linked(handle):
                _said_left(name, made.st_ino)
        finally:
            if handle is not None:
                os.close(handle)


def _open_directory(name: str) -> int | None:
    """A descriptor of the directory ``name`` (not inherited by the plugin), by which it is
    found wherever it is moved; ``None`` where a directory cannot be opened."""
    try:
        return os.open(name, os.O_RDONLY)
    except OSError:
        return None


def _still_linked(handle: int) -> bool:
    """Whether the directory open as ``handle`` still has a name (the plugin moved it, rather
    than deleting it)."""
    try:
        return os.fstat(handle).st_nlink > 0
    except OSError:
        return True


def _moved_to(handle: int, made: tuple[int, int]) -> Path | None:
    """Where the directory open as ``handle`` (device and inode ``made``) now is, as the
    kernel names it (``/proc/self/fd``: Linux); ``None`` when that cannot be known or the
    name no longer holds it (a link there is not followed)."""
    try:
        where = Path(f"/proc/self/fd/{handle}").readlink()
        found = os.lstat(where)
    except OSError:
        return None
    if (found.st_dev, found.st_ino) != made or not stat.S_ISDIR(found.st_mode):
        return None
    return where


def _mount_point(path: Path) -> str:
    """The mount point of the file system holding ``path`` (``path`` itself when unknown)."""
    try:
        found = path.resolve()
        while not found.is_mount() and found.parent != found:
            found = found.parent
    except (OSError, NotImplementedError):
        return str(path)
    return str(found)


def _said_left(name: str, inode: int) -> None:
    """Say that the directory made at ``name`` (inode ``inode``) was moved where it cannot be
    found, so it is left: in the check's report, else as a warning."""
    from nexo_pkg.core.terminal import shell_command  # noqa: PLC0415

    finding = shell_command("find", _mount_point(Path(name).parent), "-xdev", "-inum", str(inode))
    note = (
        f"the plugin moved check's temporary directory {name} away, and it was not found to "
        f"be removed: it is left where the plugin put it (`{finding}` names it)"
    )
    left = _LEFT.get()
    if left is not None:
        left.append(note)
        return
    from nexo_pkg.core.output import warn  # noqa: PLC0415
    from nexo_pkg.core.terminal import printable  # noqa: PLC0415

    warn(printable(note))


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
