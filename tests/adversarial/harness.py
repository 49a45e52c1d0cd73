"""Helpers shared by the adversarial, fault and crash tests: tree snapshots.

:func:`snapshot` records every path under a directory (type, mode, size, content hash, link
target) so a test can prove that a refused command wrote nothing: compare the snapshot taken
before with the one taken after. The command line runs through :func:`support.cli.nexo`.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "REPO_ROOT",
    "Entry",
    "diff",
    "snapshot",
    "unchanged",
]

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Entry:
    """One path in a snapshot."""

    kind: str  # "file", "dir", "symlink" or "other"
    mode: int
    size: int
    digest: str  # sha256 of a file's bytes, a symlink's target, "" otherwise


def snapshot(root: Path) -> dict[str, Entry]:
    """Every path under ``root`` (relative, ``root`` itself as ``.``), links not followed."""
    found: dict[str, Entry] = {}
    if not root.exists() and not root.is_symlink():
        return found
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(directory)
        for name in [".", *dirnames, *filenames] if here == root else [*dirnames, *filenames]:
            path = here if name == "." else here / name
            info = path.lstat()
            relative = "." if path == root else str(path.relative_to(root))
            if stat.S_ISLNK(info.st_mode):
                entry = Entry("symlink", 0, 0, str(path.readlink()))
            elif stat.S_ISDIR(info.st_mode):
                entry = Entry("dir", stat.S_IMODE(info.st_mode), 0, "")
            elif stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                entry = Entry("file", stat.S_IMODE(info.st_mode), info.st_size, digest)
            else:
                entry = Entry("other", stat.S_IMODE(info.st_mode), 0, "")
            found[relative] = entry
    return found


def diff(before: Mapping[str, Entry], after: Mapping[str, Entry]) -> dict[str, list[str]]:
    """Paths added, removed and changed between two snapshots (empty lists: identical)."""
    return {
        "added": sorted(set(after) - set(before)),
        "removed": sorted(set(before) - set(after)),
        "changed": sorted(p for p in set(before) & set(after) if before[p] != after[p]),
    }


def unchanged(before: Mapping[str, Entry], after: Mapping[str, Entry]) -> bool:
    return not any(diff(before, after).values())
