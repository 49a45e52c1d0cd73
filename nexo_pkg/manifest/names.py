"""The file names a plugin manifest may have, and which one the daemon uses (docs/lint.md,
"Manifest names": in one directory ``nexo-plugin.toml`` comes first in the daemon's file-name
order, so a ``plugin.toml`` beside it is shadowed). :data:`MANIFEST_NAMES` lists the names in
that order; everything that looks for a manifest in a directory or an archive goes through here.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CANONICAL_MANIFEST_NAME",
    "MANIFEST_NAMES",
    "MAX_MANIFEST_BYTES",
    "RECEIPT_NAME",
    "RELEASE_MANIFEST_NAME",
    "ManifestChoice",
    "ManifestLookup",
    "choose_manifest",
    "find_manifest",
    "is_file",
    "is_manifest_name",
    "known_absent",
    "listed_directories",
    "listed_names",
    "no_manifest_problem",
    "shadowed_message",
]

MANIFEST_NAMES: tuple[str, ...] = ("nexo-plugin.toml", "plugin.toml")
"""Every manifest file name, in the daemon's precedence (the first present one is used)."""

RECEIPT_NAME = ".nexo-install.json"
"""The install receipt's name in an installed plugin's directory, beside its manifest: install
writes it, and check, verify, list and the fleet commands find installs by it."""

CANONICAL_MANIFEST_NAME = "plugin.toml"
"""The name the daemon calls canonical; ``nexo plugin new`` writes this one."""

RELEASE_MANIFEST_NAME = "nexo-plugin.toml"
"""The name a plugin's manifest has in a release (the tarball's root and the asset beside it):
the one name every daemon's plugin discovery reads (releases before the rename read no other)
and the reference installer requires, both as a release asset and inside the tarball."""

MAX_MANIFEST_BYTES = 4 * 1024 * 1024
"""Files above this size are refused unparsed (``NX004``): more than nexo-pkg reads safely.

The daemon reads a manifest whole, whatever its size; real manifests are a few KiB. Parsing
and locating findings in pure Python takes seconds per MiB of small keys, so this cap keeps
the worst case of ``lint`` (and of ``install``, which lints) in seconds."""


@dataclass(frozen=True)
class ManifestChoice:
    """The manifest the daemon would use among the names present, and the ones it shadows.

    ``name`` is ``None`` when no manifest name is present.
    """

    name: str | None
    shadowed: tuple[str, ...] = ()


def is_manifest_name(name: str) -> bool:
    """Whether ``name`` (a bare file name) is one of :data:`MANIFEST_NAMES`."""
    return name in MANIFEST_NAMES


def choose_manifest(present: Collection[str]) -> ManifestChoice:
    """Pick the manifest among the file names ``present`` in one directory (or archive root)."""
    found = [name for name in MANIFEST_NAMES if name in present]
    return ManifestChoice(found[0], tuple(found[1:])) if found else ManifestChoice(None)


@dataclass(frozen=True)
class ManifestLookup:
    """The manifest file of a directory, or ``None``, plus the manifest files it shadows."""

    path: Path | None
    shadowed: tuple[Path, ...] = ()


_LISTED: ContextVar[Mapping[str, Collection[str]] | None] = ContextVar(
    "nexo_listed_directories", default=None
)


@contextmanager
def listed_directories(listing: Mapping[str, Collection[str]]) -> Iterator[None]:
    """Within the block, a name that ``listing`` (a directory, as ``str(path)``, -> the names
    of its entries that are not directories, as a walk of it saw them) does not hold in a
    directory it lists is known to be no file, without asking the OS again; names it holds,
    and other directories, are still looked up. The mapping may be filled during the block."""
    token = _LISTED.set(listing)
    try:
        yield
    finally:
        _LISTED.reset(token)


def listed_names(directory: Path | str) -> Collection[str] | None:
    """The names :func:`listed_directories` lists in ``directory`` (``None``: not listed);
    only a name absent from them is known: it is no file."""
    listing = _LISTED.get()
    return None if listing is None else listing.get(os.fspath(directory))


def known_absent(path: Path | str) -> bool:
    """Whether :func:`listed_directories` says ``path`` is no file (``False``: not known)."""
    listing = _LISTED.get()
    if listing is None:
        return False
    directory, name = os.path.split(os.fspath(path))
    names = listing.get(directory)
    return names is not None and name not in names


def is_file(path: Path) -> bool:
    """``Path.is_file`` that answers ``False`` where the OS refuses to look (a name too long, a
    directory that cannot be read)."""
    if known_absent(path):
        return False
    try:
        return path.is_file()
    except OSError:
        return False


def find_manifest(directory: Path) -> ManifestLookup:
    """The manifest the daemon would read in ``directory``, and the manifests it shadows.

    Only regular files (or links to them) count. Never raises: a missing or unreadable
    directory gives an empty lookup.
    """
    present = [name for name in MANIFEST_NAMES if is_file(directory / name)]
    choice = choose_manifest(present)
    if choice.name is None:
        return ManifestLookup(None)
    return ManifestLookup(directory / choice.name, tuple(directory / n for n in choice.shadowed))


def no_manifest_problem(directory: Path) -> str | None:
    """When :func:`find_manifest` finds no manifest in ``directory``: what is there under the
    first manifest name that is present but no regular file (``plugin.toml is a FIFO, not a
    file``), ``None`` when no such name is there. Only asks ``stat``: never opens what it finds,
    so a FIFO cannot block."""
    import stat  # noqa: PLC0415 (only a command that found no manifest asks)

    for name in MANIFEST_NAMES:
        path = directory / name
        try:
            mode = path.lstat().st_mode
        except OSError:
            continue
        if stat.S_ISLNK(mode):
            try:
                mode = path.stat().st_mode
            except OSError:
                return f"{path} is a symlink that never reaches a file"
        kinds = (
            (stat.S_ISDIR, "a directory"),
            (stat.S_ISFIFO, "a FIFO"),
            (stat.S_ISSOCK, "a socket"),
            (stat.S_ISCHR, "a device"),
            (stat.S_ISBLK, "a device"),
        )
        for test, what in kinds:
            if test(mode):
                return f"{path} is {what}, not a file"
    return None


def shadowed_message(used: str, shadowed: str) -> str:
    """One sentence saying which manifest the daemon reads and which one it ignores."""
    return (
        f"{shadowed} is shadowed by {used} in the same directory: the daemon loads {used} "
        f"first and ignores a {shadowed} of the same plugin id; delete one of them"
    )
