"""What goes into a plugin tarball (the noarch and per-target layouts: docs/pack.md): the
launcher, the target list and tree collection.
"""

from __future__ import annotations

import hashlib
import os
import stat
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.files import read_regular_bytes
from nexo_pkg.core.git import git_paths
from nexo_pkg.core.version import Version
from nexo_pkg.manifest.daemon import ID_PATTERN, is_valid_id
from nexo_pkg.pack.archive import ArchiveEntry
from nexo_pkg.pack.errors import io_error, layout_error, manifest_error
from nexo_pkg.sources.api import check_member_names

NOARCH = "noarch"

LAUNCHER = (
    "#!/usr/bin/env bash\n"
    'DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"\n'
    'exec env PYTHONPATH="$DIR/lib" python3 "$DIR/lib/plugin/main.py" "$@"\n'
)

#: Target triples a per-target tarball may name (the hosts the installer detects, plus the
#: usual cross targets of compiled plugins).
KNOWN_TARGETS = frozenset(
    {
        "x86_64-unknown-linux-gnu",
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-gnu",
        "aarch64-unknown-linux-musl",
        "armv7-unknown-linux-gnueabihf",
        "armv7-unknown-linux-musleabihf",
        "i686-unknown-linux-gnu",
        "i686-unknown-linux-musl",
        "riscv64gc-unknown-linux-gnu",
        "powerpc64le-unknown-linux-gnu",
        "s390x-unknown-linux-gnu",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
        "x86_64-pc-windows-msvc",
        "aarch64-pc-windows-msvc",
        "x86_64-pc-windows-gnu",
        "x86_64-unknown-freebsd",
    }
)


#: The longest file name (in bytes) the file systems plugins are packed and installed on allow.
_NAME_MAX = 255

# Interpreter-specific byte code never goes into a tarball.
_SKIPPED_SUFFIXES = (".pyc", ".pyo")

#: What a desktop's file manager leaves in the folders it shows (macOS Finder's ``.DS_Store``,
#: ``Icon\r`` of a folder given a custom icon and the ``._NAME`` AppleDouble files of a copy
#: to a non-Apple file system, Windows Explorer's ``Thumbs.db`` and ``desktop.ini`` of a
#: customised folder): the author's machine's, never the plugin's.
_DESKTOP_FILES = frozenset({".DS_Store", "Icon\r", "Thumbs.db", "desktop.ini"})


def _desktop_file(name: str) -> bool:
    return name in _DESKTOP_FILES or name.startswith("._")


def asset_name(plugin_id: str, version: str, target: str) -> str:
    """``<id>-<version>-<target>.tar.gz``; raises ``manifest_invalid`` for unusable parts."""
    if not is_valid_id(plugin_id):
        hyphen = (
            f" (a microapp id may hold `-` for the daemon, but the tarball, its bin/{plugin_id} "
            "and the install directory are named by the plugin id rule: use "
            f"{plugin_id.replace('-', '_')!r} in both manifests; NX217)"
            if "-" in plugin_id
            else ""
        )
        raise manifest_error(
            f"plugin.id {plugin_id!r} cannot name a tarball: it must match {ID_PATTERN}{hyphen}"
        )
    if not Version.is_valid(version):
        raise manifest_error(
            f"plugin.version {version!r} cannot name a tarball: it must be a semver 2.0 "
            "version such as 0.1.0 (no `v` prefix)"
        )
    name = f"{plugin_id}-{version}-{target}.tar.gz"
    # The longest file pack writes beside it is the sidecar `<name>.sha256`.
    if len(f"{name}.sha256".encode()) > _NAME_MAX:
        raise manifest_error(
            f"plugin.version {version!r} cannot name a tarball: {name}.sha256 would be longer "
            f"than the {_NAME_MAX} bytes a file name may have; shorten the version's "
            "pre-release or build part"
        )
    return name


def is_executable(mode: int) -> bool:
    """Any execute bit set means the member is stored as 0755."""
    return bool(mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH))


@dataclass(frozen=True)
class TreeWalk:
    """Options of :func:`collect_tree`.

    ``archive_prefix``: the archive directory the tree lands in (``lib/plugin``).
    ``containment_root``: symlinks must resolve to a file inside this directory.
    ``skip_top``: top-level names of the tree to leave out (pip's ``bin/`` scripts).
    ``exclude``: resolved directories to leave out (an output directory inside ``src/``).
    ``executables``: where the file system keeps no execute bit (Windows), the resolved files
    stored as 0755, every other one 0644; ``None``: each file's own mode says.
    ``links``: resolved files that git records as symbolic links but that were checked out as
    plain files holding the link's text (Windows without ``core.symlinks``), each with that
    text: packed as the symlink a Linux or macOS checkout has.
    """

    archive_prefix: str
    containment_root: Path
    skip_top: frozenset[str] = frozenset()
    exclude: frozenset[Path] = frozenset()
    executables: frozenset[Path] | None = None
    links: Mapping[Path, str] = field(default_factory=dict)


#: Whether this OS's file systems keep execute bits. Windows's do not: Python's ``stat`` there
#: makes ``.exe``, ``.bat``, ``.cmd`` and ``.com`` files executable, and nothing else.
MODES_ON_DISK = os.name != "nt"


def _is_executable(walk: TreeWalk, path: Path, mode: int) -> bool:
    if walk.executables is None:
        return is_executable(mode)
    return path.resolve() in walk.executables


@dataclass(frozen=True)
class GitModes:
    """What git's index says of the files under a project, for a file system that cannot:
    the executable files (mode ``100755``) and the symbolic links (``120000``) checked out
    as plain files holding the link's text, with that text (all resolved paths)."""

    executables: frozenset[Path] = frozenset()
    links: Mapping[Path, str] = field(default_factory=dict)


def git_modes(project: Path) -> GitModes:
    """:class:`GitModes` of ``project`` from the index of the repository it is in; nothing
    when ``project`` is no git checkout (or git is missing). A recorded link counts only when
    the file on disk is its blob exactly (not edited since)."""
    records = git_paths(project, "ls-files", "--stage", "-z")
    executables = set()
    links = {}
    for record in records or ():
        fields, _, relative = record.partition("\t")
        mode, _, rest = fields.partition(" ")
        if not relative:
            continue
        path = project / relative
        if mode == "100755":
            executables.add(path.resolve())
        elif mode == "120000" and not path.is_symlink():
            text = _link_text(path, rest.partition(" ")[0])
            if text is not None:
                links[path.resolve()] = text
    return GitModes(frozenset(executables), links)


#: The longest link text git's blob of a link may hold here (a path: PATH_MAX).
_LINK_TEXT_MAX = 4096


def _link_text(path: Path, blob: str) -> str | None:
    """The text of the plain file ``path`` when it is git's blob ``blob`` (a link's target).
    Read as a regular file no further than a link's text can be: a file edited since the
    checkout into a huge one, or a FIFO put there, is a file of its own, never read whole
    nor waited on."""
    try:
        # is_file first: where there is no O_NONBLOCK, opening a FIFO would wait.
        data = read_regular_bytes(path, _LINK_TEXT_MAX) if path.is_file() else b""
    except OSError:
        return None
    if not data or len(data) > _LINK_TEXT_MAX:
        return None
    digest = hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
    if digest != blob:
        return None
    return data.decode("utf-8", "surrogateescape")


def stored_names(entries: list[ArchiveEntry]) -> list[ArchiveEntry]:
    """``entries`` (complete and sorted) with their names as the tarball stores them, NFC, once
    they pass the installer's own name rules (``sources.archive.check_member_names``): a name
    ``install`` or ``check`` would refuse (two alike once case-folded or normalised, a
    backslash, a control character, bytes that are not UTF-8) is ``layout_invalid`` with the
    installer's message, naming both paths of a collision."""
    stored = [replace(entry, name=unicodedata.normalize("NFC", entry.name)) for entry in entries]
    try:
        check_member_names((entry.name, entry.is_dir) for entry in entries)
        # And as stored: NFC can make a name longer (U+0344 is two code points there).
        check_member_names((entry.name, entry.is_dir) for entry in stored)
    except NexoError as exc:
        raise layout_error(
            f"{exc.message}: `nexo plugin install` and `check` would refuse the tarball; "
            "rename it in the project",
            **exc.details,
        ) from exc
    return stored


def _follow_recorded_link(path: Path, text: str, links: Mapping[Path, str]) -> Path:
    """Where the link git records at ``path`` with ``text`` leads, following further recorded
    links as the OS follows symlinks; ``RuntimeError`` for a loop."""
    seen = {path.resolve()}
    target = (path.parent / text.replace("\\", "/")).resolve()
    while target in links:
        if target in seen:
            raise RuntimeError(f"symlink loop at {path}")
        seen.add(target)
        target = (target.parent / links[target].replace("\\", "/")).resolve()
    return target


def collect_tree(root: Path, walk: TreeWalk) -> list[ArchiveEntry]:
    """List the files and directories under ``root`` as archive entries (docs/pack.md, "What
    is copied from src/"): a symlink to a file inside ``walk.containment_root`` is stored as a
    copy; any other symlink or a special file is ``layout_invalid``, an unreadable directory
    ``io``."""
    containment = walk.containment_root.resolve()
    entries: list[ArchiveEntry] = []
    pending: list[tuple[Path, str]] = [(root, walk.archive_prefix)]
    while pending:
        directory, prefix = pending.pop()
        try:
            children = list(os.scandir(directory))
        except OSError as exc:
            raise io_error(f"cannot read directory {directory}: {exc.strerror}") from exc
        for child in children:
            if (directory == root and child.name in walk.skip_top) or _desktop_file(child.name):
                continue
            name = f"{prefix}/{child.name}"
            path = Path(child.path)
            link_text = walk.links.get(path.resolve()) if walk.links else None
            if child.is_symlink() or link_text is not None:
                try:
                    target = (
                        path.resolve()
                        if link_text is None
                        else _follow_recorded_link(path, link_text, walk.links)
                    )
                    if target.is_symlink():
                        # Python 3.13's resolve() stops at a loop instead of raising.
                        raise RuntimeError(f"symlink loop at {target}")
                except (RuntimeError, OSError) as exc:  # a loop, or a link to itself
                    raise layout_error(
                        f"{path} is a symlink that never reaches a file (a loop or a link to "
                        "itself); remove it",
                        path=str(path),
                    ) from exc
                if not target.is_relative_to(containment):
                    raise layout_error(
                        f"{path} is a symlink pointing outside {walk.containment_root} "
                        f"(to {target}); replace it with the file itself",
                        path=str(path),
                    )
                if not target.is_file():
                    raise layout_error(
                        f"{path} is a symlink to {'a directory' if target.is_dir() else 'nothing'};"
                        " only symlinks to files are packed (as copies)",
                        path=str(path),
                    )
                if child.name.endswith(_SKIPPED_SUFFIXES) or target.suffix in _SKIPPED_SUFFIXES:
                    continue
                mode = target.stat().st_mode
                entries.append(
                    ArchiveEntry(name, executable=_is_executable(walk, target, mode), source=target)
                )
                continue
            try:
                info = child.stat(follow_symlinks=False)
            except OSError as exc:
                raise io_error(f"cannot read {path}: {exc.strerror}") from exc
            if stat.S_ISDIR(info.st_mode):
                if child.name == "__pycache__" or (walk.exclude and path.resolve() in walk.exclude):
                    continue
                entries.append(ArchiveEntry(name, is_dir=True))
                pending.append((path, name))
            elif stat.S_ISREG(info.st_mode):
                if child.name.endswith(_SKIPPED_SUFFIXES):
                    continue
                executable = _is_executable(walk, path, info.st_mode)
                entries.append(ArchiveEntry(name, executable=executable, source=path))
            else:
                raise layout_error(
                    f"{path} is not a regular file or directory; remove it from the tree",
                    path=str(path),
                )
    return entries
