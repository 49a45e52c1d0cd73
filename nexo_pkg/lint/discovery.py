"""Which files ``nexo plugin lint PATH...`` lints.

A file given by name is linted whatever it is called; a directory is searched recursively for
``nexo-plugin.toml``, skipping VCS metadata, ``node_modules``, caches, virtualenvs and build output.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from nexo_pkg.errors import UsageError

__all__ = ["MANIFEST_FILENAME", "SKIPPED_DIRECTORIES", "discover_manifests"]

MANIFEST_FILENAME = "nexo-plugin.toml"
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
    return (directory / "pyvenv.cfg").is_file()


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
        if MANIFEST_FILENAME in files:
            found.append(base / MANIFEST_FILENAME)
    if errors and not found and errors[0].filename == str(root):
        raise UsageError(f"cannot read directory {root}: {errors[0].strerror}")
    return found


def discover_manifests(paths: Iterable[str]) -> list[Path]:
    """The files to lint for the given PATH arguments, in a stable order, without repeats.

    Raises :class:`UsageError` (exit 2) for a path that does not exist or cannot be read.
    """
    files: list[Path] = []
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
                files.append(candidate)
    return files
