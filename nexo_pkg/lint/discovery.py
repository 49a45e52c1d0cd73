"""Which files ``nexo plugin lint PATH...`` lints (docs/lint.md, ``PATH``). Like the daemon,
every manifest found is checked, also one that another manifest of the same directory shadows;
the shadowed one is marked so the linter can say so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from nexo_pkg.core.errors import UsageError
from nexo_pkg.manifest.names import (
    MANIFEST_NAMES,
    find_manifest,
    is_manifest_name,
    listed_names,
)

__all__ = ["FoundManifest", "Walked", "discover_manifests", "shadowing_manifest"]
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
VIRTUALENV_MARKER = "pyvenv.cfg"


def _is_virtualenv(directory: Path) -> bool:
    """Whether ``directory`` holds a ``pyvenv.cfg``; one that cannot be looked into is not
    a virtualenv (the walk then reports it as unreadable, or it was excluded)."""
    try:
        return (directory / VIRTUALENV_MARKER).is_file()
    except OSError:
        return False


@dataclass
class Walked:
    """What the directory searches of one run saw, for the lookups after them
    (:func:`nexo_pkg.manifest.names.listed_directories`, the settings' directories): every
    directory walked, as ``str`` (as given and resolved) -> the names of its entries that
    are not directories, and as a path -> its ``resolve()``. A walk never enters a symbolic
    link, so a directory below the resolved root resolves to that root joined with its
    relative path, without a system call."""

    files: dict[str, frozenset[str]] = field(default_factory=dict)
    resolved: dict[Path, Path] = field(default_factory=dict)

    def note(self, directory: Path, resolved: Path, files: Iterable[str]) -> None:
        names = frozenset(files)
        self.resolved[directory] = resolved
        given = str(directory)
        self.files[given] = self.files[str(resolved)] = names
        if given == ".":
            self.files[""] = names  # `Path(".") / name` prints as the bare name


def _search(
    root: Path, walked: Walked | None = None, unlisted: list[tuple[Path, OSError]] | None = None
) -> list[Path]:
    """The manifests below ``root``; each directory below it that cannot be listed goes to
    ``unlisted`` with its error (the walk goes on, as ruff's)."""
    found: list[Path] = []
    errors: list[OSError] = []
    resolved = {str(root): root.resolve()} if walked is not None else {}
    top = True
    for current, directories, files in os.walk(root, onerror=errors.append):
        # A virtualenv below the root is not searched: it is seen from its own listing, as
        # os.walk lists it anyway (a `pyvenv.cfg` that is no regular file does not count).
        if not top and VIRTUALENV_MARKER in files and _is_virtualenv(Path(current)):
            directories.clear()
            continue
        top = False
        base = Path(current)
        # Pruning in place stops os.walk from descending; sorted for a stable file order.
        directories[:] = sorted(name for name in directories if name not in SKIPPED_DIRECTORIES)
        if walked is not None:
            here = resolved.pop(current)
            walked.note(base, here, files)
            # The key os.walk will yield for each subdirectory: its own join.
            resolved.update(
                (os.path.join(current, name), here / name)  # noqa: PTH118
                for name in directories
            )
        found.extend(base / name for name in MANIFEST_NAMES if name in files)
    if errors and not found and errors[0].filename == str(root):
        raise UsageError(f"cannot read directory {root}: {errors[0].strerror}")
    if unlisted is not None:
        unlisted.extend(
            (Path(error.filename), error)
            for error in errors
            if isinstance(error.filename, str) and error.filename != str(root)
        )
    return found


@dataclass(frozen=True)
class FoundManifest:
    """A file to lint, and the manifest beside it that the daemon uses instead, if any."""

    path: Path
    shadowed_by: Path | None = None
    # ``path.resolve()``, as the search found it (the settings' lookups start from it).
    resolved: Path | None = field(default=None, compare=False)
    # A directory the search could not list: ``path`` is that directory, reported as
    # unreadable (``NX008``) rather than linted.
    unlisted: OSError | None = field(default=None, compare=False)
    # The directory PATH whose search found it, resolved (``None`` for a file named on the
    # command line): as in ruff, ``exclude`` looks only at what lies below it.
    searched: Path | None = field(default=None, compare=False)


def shadowing_manifest(path: Path) -> Path | None:
    """The manifest beside ``path`` that the daemon reads instead of it (``nexo-plugin.toml``
    beside a ``plugin.toml``), or ``None``: lint warns about it (``NX006``) wherever the text
    comes from, a file, standard input under ``--stdin-filename`` or an editor's buffer."""
    if not is_manifest_name(path.name):
        return None
    listed = listed_names(path.parent)
    if listed is not None and not any(n in listed for n in MANIFEST_NAMES if n != path.name):
        return None  # no other manifest beside it (as the walk saw the directory)
    lookup = find_manifest(path.parent)
    if lookup.path is None or lookup.path.name == path.name:
        return None
    from nexo_pkg.lint.microapp import companion_of  # noqa: PLC0415 - rare path

    # A microapp's plugin.toml and its nexo-plugin.toml companion are read side by side.
    return None if companion_of(str(lookup.path)) is not None else lookup.path


def _resolved(candidate: Path, walked: Walked | None) -> Path:
    """``candidate.resolve()``, from its walked directory when it is not a link itself."""
    directory = walked.resolved.get(candidate.parent) if walked is not None else None
    if directory is None or candidate.is_symlink():
        return candidate.resolve()
    return directory / candidate.name


def discover_manifests(paths: Iterable[str], walked: Walked | None = None) -> list[FoundManifest]:
    """The files to lint for the given PATH arguments, in a stable order, without repeats;
    ``walked`` collects what the directory searches saw.

    Raises :class:`UsageError` (exit 2) for a path that does not exist or cannot be read. A
    dangling symbolic link named on the command line is a file to lint (its finding says it
    dangles), as one the directory search meets, and so is a PATH that cannot be looked at
    (a directory above it cannot be searched); so is a directory below a PATH that cannot
    be listed (``unlisted``).
    """
    files: list[FoundManifest] = []
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        unlisted: list[tuple[Path, OSError]] = []
        searched = None
        try:
            is_dir = path.is_dir()
            present = is_dir or path.exists() or path.is_symlink()
        except OSError:
            # It cannot be looked at (a directory above it cannot be searched): a file to
            # lint, whose reading fails as an unreadable file's (NX008), as ruff's E902.
            is_dir, present = False, True
        if is_dir:
            candidates = _search(path, walked, unlisted)
            searched = walked.resolved.get(path) if walked is not None else None
            searched = searched if searched is not None else path.resolve()
        elif present:
            candidates = [path]
        else:
            raise UsageError(f"no such file or directory: {given}")
        for candidate in candidates:
            key = _resolved(candidate, walked)
            if key not in seen:
                seen.add(key)
                files.append(
                    FoundManifest(candidate, shadowing_manifest(candidate), key, searched=searched)
                )
        for directory, error in unlisted:
            key = directory.absolute()
            if key not in seen:
                seen.add(key)
                files.append(FoundManifest(directory, None, key, unlisted=error, searched=searched))
    return files
