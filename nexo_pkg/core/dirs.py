"""Directories the installer creates outside an archive (the install root and its missing
parents, the download and blob caches): 0755 whatever the umask, so a umask of 000 never makes
a plugin root, or a cache whose blobs are installed, writable by every user."""

from __future__ import annotations

from pathlib import Path

DIRECTORY_MODE = 0o755


def make_dir(path: Path, mode: int = DIRECTORY_MODE) -> None:
    """Create the directory ``path`` (its parent must exist) with exactly ``mode``. Raises
    ``OSError``, ``FileExistsError`` when it exists."""
    path.mkdir(mode)
    path.chmod(mode)


def make_dirs(path: Path, mode: int = DIRECTORY_MODE) -> list[Path]:
    """Create ``path`` and its missing parents, each set to exactly ``mode``; return the
    directories created, deepest first. Directories that already exist are left as they are.
    Raises ``OSError``."""
    missing: list[Path] = []
    current = path
    while not current.exists() and not current.is_symlink() and current != current.parent:
        missing.append(current)
        current = current.parent
    created: list[Path] = []
    for directory in reversed(missing):
        try:
            make_dir(directory, mode)
        except FileExistsError:
            if not directory.is_dir():
                raise
            continue  # made by a concurrent run in the meantime: theirs to set
        created.append(directory)
    path.mkdir(exist_ok=True)  # an existing non-directory still raises
    return created[::-1]
