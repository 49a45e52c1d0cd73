"""Which files ``nexo plugin lint PATH...`` lints (docs/lint.md, ``PATH``). Like the daemon,
every manifest found is checked, also one that another manifest of the same directory shadows;
the shadowed one is marked so the linter can say so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from nexo_pkg.core.errors import UsageError
from nexo_pkg.manifest.names import MANIFEST_NAMES, find_manifest, is_manifest_name

__all__ = ["FoundManifest", "discover_manifests"]
SKIPPED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".eggs",
        "site-packages",
        "build",
        "dist",
    }
)
"""Never searched: VCS metadata, dependencies, caches, virtualenvs and build output (as ruff)."""


def _is_virtualenv(directory: Path) -> bool:
    """Whether ``directory`` holds a ``pyvenv.cfg``; one that cannot be looked into is not
    a virtualenv (the walk then reports it as unreadable, or it was excluded)."""
    try:
        return (directory / "pyvenv.cfg").is_file()
    except OSError:
        return False


def _search(root: Path) -> list[Path]:
    found: list[Path] = []
    errors: list[OSError] = []
    for current, directories, files in os.walk(root, onerror=errors.append):
        base = Path(current)
        # Pruning in place stops os.walk from descending; sorted for a stable file order.
        directories[:] = sorted(
            name
            for name in directories
            if name not in SKIPPED_DIRECTORIES and not _is_virtualenv(base / name)
        )
        found.extend(base / name for name in MANIFEST_NAMES if name in files)
    if errors and not found and errors[0].filename == str(root):
        raise UsageError(f"cannot read directory {root}: {errors[0].strerror}")
    return found


@dataclass(frozen=True)
class FoundManifest:
    """A file to lint, and the manifest beside it that the daemon uses instead, if any."""

    path: Path
    shadowed_by: Path | None = None


def _shadowing(path: Path) -> Path | None:
    if not is_manifest_name(path.name):
        return None
    lookup = find_manifest(path.parent)
    if lookup.path is None or lookup.path.name == path.name:
        return None
    from nexo_pkg.lint.microapp import companion_of  # noqa: PLC0415 - rare path

    # A microapp's plugin.toml and its nexo-plugin.toml companion are read side by side.
    return None if companion_of(str(lookup.path)) is not None else lookup.path


def discover_manifests(paths: Iterable[str]) -> list[FoundManifest]:
    """The files to lint for the given PATH arguments, in a stable order, without repeats.

    Raises :class:`UsageError` (exit 2) for a path that does not exist or cannot be read.
    """
    files: list[FoundManifest] = []
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        if path.is_dir():
            candidates = _search(path)
        elif path.exists():
            candidates = [path]
        else:
            raise UsageError(f"no such file or directory: {given}")
        for candidate in candidates:
            key = candidate.resolve()
            if key not in seen:
                seen.add(key)
                files.append(FoundManifest(candidate, _shadowing(candidate)))
    return files
