"""The install root: lock, staging directories, receipts, atomic rename, list/remove/verify.

Layout of ``<dest>``::

    .nexo-install.lock                  serialises installs, upgrades and removals
    <id>-<version>/                     one installed plugin
        .nexo-install.json              its receipt
    .nexo/staging/<id>-<random>/tree/   an install in progress (stale ones are cleaned up)
    .nexo/removing/<name>-<random>/tree/  a removal in progress
    .nexo/kept/<name>-<random>/tree/    an old version ``upgrade`` kept for ``rollback``
    .nexo/journal/<random>.json         a replacement in progress (finished by the next run)

The daemon discovers manifests up to two directory levels below each search path, hidden
directories included, and keeps the first manifest of an id in file-name order; every tree
that is not the installed version therefore lives four levels down, where it never looks.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import hashlib
import json
import os
import secrets
import shutil
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import Any

from nexo_pkg.core import posix
from nexo_pkg.core.dirs import make_dir, make_dirs
from nexo_pkg.core.durable import fsync_dir
from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.files import (
    open_lock_file,
    open_regular,
    read_capped_bytes,
    write_file_atomically,
)
from nexo_pkg.core.posix import exchange
from nexo_pkg.core.version import Version, VersionError, parse_version

RECEIPT_NAME = ".nexo-install.json"
LOCK_NAME = ".nexo-install.lock"
BOOKKEEPING_DIR = ".nexo"
STAGING_AREA = "staging"
REMOVING_AREA = "removing"
KEPT_AREA = "kept"
JOURNAL_AREA = "journal"
TREE_NAME = "tree"
# Where earlier versions staged and removed trees (directly in <dest>, where the daemon looked).
LEGACY_PREFIXES = (".staging-", ".removing-")
RECEIPT_SCHEMA_VERSION = "1.0"
LATEST_TAG = "latest"
"""The ``tag`` of a receipt whose plugin follows the newest release (the reference's word)."""

RECEIPT_UNREADABLE = "receipt unreadable"
"""How a receipt the reference installer cannot deserialise is shown: its plugin is an orphan
to the reference, so ``list`` shows it, ``remove`` removes it and ``verify`` fails on it."""

# The fields of the reference installer's receipt, every one a JSON string.
REFERENCE_RECEIPT_FIELDS = (
    "schema_version",
    "id",
    "version",
    "owner",
    "repo",
    "tag",
    "target",
    "sha256",
    "installed_at",
    "source",
)
MAX_RECEIPT_BYTES = 32 * 1024 * 1024
LOCK_TIMEOUT_ENV = "NEXO_INSTALL_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 120.0
HASH_CHUNK = 1024 * 1024


def io_error(action: str, exc: OSError) -> NexoError:
    return NexoError(f"cannot {action}: {exc.strerror or exc}", kind="io")


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def sha256_file(path: Path) -> str:
    """SHA-256 of a regular file (see :func:`open_regular` for what else raises)."""
    hasher = hashlib.sha256()
    with open_regular(path) as handle:
        while chunk := handle.read(HASH_CHUNK):
            hasher.update(chunk)
    return hasher.hexdigest()


def tree_modes(root: Path) -> dict[str, int]:
    """Permission bits (``S_IMODE``, setuid/setgid/sticky included) of every entry below
    ``root``, by POSIX relative path, links not followed. Raises ``OSError``."""
    return {name: stat.S_IMODE(mode) for name, mode in _tree_stat_modes(root).items()}


def _tree_stat_modes(root: Path, *, strict: bool = True) -> dict[str, int]:
    """``st_mode`` of every entry below ``root``, by POSIX relative path, links not followed
    (one ``scandir`` pass: it runs on every install, over trees of thousands of vendored
    files). What cannot be listed or stat'ed raises ``OSError``; without ``strict`` it is
    left out."""
    modes: dict[str, int] = {}
    pending = [("", os.fspath(root))]
    while pending:
        prefix, directory = pending.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    name = prefix + entry.name
                    try:
                        modes[name] = mode = entry.stat(follow_symlinks=False).st_mode
                    except OSError:
                        if strict:
                            raise
                        continue
                    if stat.S_ISDIR(mode):
                        pending.append((name + "/", entry.path))
        except OSError:
            if strict:
                raise
    return modes


def _optional_string(document: dict[str, Any], key: str) -> str | None:
    value = document.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"`{key}` is not a string")
    return value


@dataclass(frozen=True)
class Receipt:
    """The ``.nexo-install.json`` of one installed plugin: the reference installer's fields
    first, every one a JSON string (``""`` where a local install has none), so it reads our
    receipts; it ignores ours (``signature``, ``files``, ``modes``). ``files`` is ``None`` for
    a receipt the reference installer wrote: there are no hashes to check."""

    id: str
    version: str
    owner: str | None
    repo: str | None
    tag: str | None
    target: str
    sha256: str
    installed_at: str
    source: str
    signature: dict[str, Any]
    files: dict[str, str] | None
    modes: dict[str, int] | None = None
    schema_version: str = RECEIPT_SCHEMA_VERSION
    # Registry installs: the pinned ``oci://…@sha256:…`` they came from (``upgrade`` asks
    # that repository again). Absent from the JSON otherwise.
    registry: str | None = None
    # Release installs: the tag of the release actually installed. ``tag`` is what was asked
    # for, as the reference installer records it: ``latest``, or the explicit tag that pins
    # upgrades to it. Absent from receipts written before it was recorded.
    resolved_tag: str | None = None

    def origin(self) -> dict[str, Any]:
        """The source object the receipt recorded (its ``type`` and the kind's fields), as
        the route of ``sources`` takes it (``reopen``, ``origin_label``)."""
        return {
            "type": self.source,
            "owner": self.owner,
            "repo": self.repo,
            "tag": self.resolved_tag or self.tag,
            "registry": self.registry,
        }

    @property
    def pinned_tag(self) -> str | None:
        """The explicit tag ``upgrade`` stays on, or ``None`` when it follows the latest
        release: ``tag`` ``latest`` (or empty), and nexo-pkg's receipts from before
        ``resolved_tag`` (which followed the latest release whatever their ``tag``)."""
        if not self.tag or self.tag == LATEST_TAG:
            return None
        if self.resolved_tag is None and self.files is not None:
            return None
        return self.tag

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "schema_version": RECEIPT_SCHEMA_VERSION,
            "id": self.id,
            "version": self.version,
            "owner": self.owner or "",
            "repo": self.repo or "",
            "tag": self.tag or "",
            "target": self.target,
            "sha256": self.sha256,
            "installed_at": self.installed_at,
            "source": self.source,
            "signature": self.signature,
            "files": dict(sorted((self.files or {}).items())),
        }
        if self.registry is not None:
            document["registry"] = self.registry
        if self.resolved_tag is not None:
            document["resolved_tag"] = self.resolved_tag
        if self.modes is not None:
            document["modes"] = {name: f"{mode:04o}" for name, mode in sorted(self.modes.items())}
        return document

    @classmethod
    def from_json(cls, document: Any) -> Receipt:
        """Parse a receipt written by nexo-pkg (now or earlier) or by the reference installer;
        ``ValueError`` when a field is missing or mistyped."""
        if not isinstance(document, dict):
            raise ValueError("not a JSON object")
        for key in ("id", "version", "target", "sha256", "installed_at", "source"):
            if not isinstance(document.get(key), str):
                raise ValueError(f"`{key}` is missing or not a string")
        schema = document.get("schema_version", RECEIPT_SCHEMA_VERSION)
        # nexo-pkg's earlier receipts wrote the integer 1.
        if isinstance(schema, bool) or not isinstance(schema, str | int):
            raise ValueError("`schema_version` is not a string")
        files = document.get("files")
        if files is not None and (
            not isinstance(files, dict)
            # map(): no Python frame per file (a receipt lists every file of its plugin)
            or not all(map(isinstance, files, repeat(str)))
            or not all(map(isinstance, files.values(), repeat(str)))
        ):
            raise ValueError("`files` is not a map of path to sha256")
        signature = document.get("signature")
        return cls(
            id=document["id"],
            version=document["version"],
            owner=_optional_string(document, "owner"),
            repo=_optional_string(document, "repo"),
            tag=_optional_string(document, "tag"),
            target=document["target"],
            sha256=document["sha256"],
            installed_at=document["installed_at"],
            source=document["source"],
            signature=signature if isinstance(signature, dict) else {"status": "unknown"},
            files=dict(files) if files is not None else None,
            modes=_parse_modes(document.get("modes")),
            schema_version=str(schema),
            registry=registry if isinstance(registry := document.get("registry"), str) else None,
            resolved_tag=resolved
            if isinstance(resolved := document.get("resolved_tag"), str)
            else None,
        )


# ``int(text, 8)`` of the permission bits as :meth:`Receipt.to_json` writes them, looked up
# in C (setuid, setgid and sticky bits take the slower way).
_FOUR_DIGIT_MODES = {f"{mode:04o}": mode for mode in range(0o1000)}


def _parse_modes(value: Any) -> dict[str, int] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("`modes` is not a map of path to octal mode")
    try:  # the common case at once: every mode four octal digits, as receipts write them
        return dict(
            zip(map(str, value), map(_FOUR_DIGIT_MODES.__getitem__, value.values()), strict=True)
        )
    except (KeyError, TypeError):
        pass
    try:  # every mode an octal string
        return {str(name): int(mode, 8) for name, mode in value.items()}
    except (TypeError, ValueError):
        pass  # one by one, to name the one that is not an octal mode (or take an integer)
    modes: dict[str, int] = {}
    for name, mode in value.items():
        try:
            modes[str(name)] = int(mode, 8) if isinstance(mode, str) else int(mode)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"`modes` holds {mode!r} for {name!r}, not an octal mode") from exc
    return modes


@dataclass(frozen=True)
class Installed:
    """One directory under the install root, with its receipt when it has a valid one.

    ``kept`` marks an old version ``upgrade`` kept for ``rollback`` (out of the daemon's sight).
    """

    path: Path
    receipt: Receipt | None
    problem: str | None = None
    kept: bool = False

    @property
    def plugin_id(self) -> str | None:
        return self.receipt.id if self.receipt else None


def read_receipt(directory: Path) -> Receipt:
    """Load ``directory/.nexo-install.json``; raises ``ValueError``/``OSError`` when unusable
    (a receipt that is a link, a FIFO or larger than 32 MiB is unusable, never waited on)."""
    raw = read_capped_bytes(directory / RECEIPT_NAME, MAX_RECEIPT_BYTES, follow_links=False)
    try:
        text = raw.decode("utf-8")
        receipt = _plain_receipt(text)
        if receipt is not None:
            return receipt
        # Anything the quick reading did not take is read again here, so every refusal is
        # worded as before.
        document = json.loads(text, object_pairs_hook=_JsonObject.of)
    except RecursionError as exc:
        raise ValueError("nested too deeply") from exc
    if isinstance(document, _JsonObject):
        reference_receipt_problem(document.pairs)
    return Receipt.from_json(document)


def _plain_receipt(text: str) -> Receipt | None:
    """The receipt ``text`` holds when it is one the installer takes as it stands: a JSON
    object without a repeated key at any depth, every field of the reference installer
    present once as a string, and :meth:`Receipt.from_json` satisfied; ``None`` for anything
    else, which :func:`read_receipt` reads again to word its refusal. Objects are read as
    tuples of pairs (duplicates kept, in C, without a Python call per object), so a repeated
    field is seen without the hook's cost (a receipt lists every file of its plugin)."""
    try:
        top = _PAIRS_DECODER.decode(text)
    except ValueError:
        return None
    if type(top) is not tuple:
        return None
    try:
        document = _plain_value(top)
    except _NotPlainError:
        return None  # a repeated key: the reference installer may refuse it
    if not all(map(isinstance, map(document.get, REFERENCE_RECEIPT_FIELDS), repeat(str))):
        return None
    try:
        return Receipt.from_json(document)
    except ValueError:
        return None


# ``json.loads(text, object_pairs_hook=tuple)`` without a decoder made for every receipt.
_PAIRS_DECODER = json.JSONDecoder(object_pairs_hook=tuple)


class _NotPlainError(Exception):
    pass


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain_value(value: Any) -> Any:
    """``value`` as :func:`json.loads` gives it, objects read as tuples of pairs made dicts
    (C calls for the common case: an object of strings); :class:`_NotPlainError` for an
    object with a repeated key."""
    if type(value) is tuple:
        made = dict(value)
        if len(made) != len(value):
            raise _NotPlainError
        if not all(map(_SCALARS.__contains__, map(type, made.values()))):
            for key, item in made.items():
                if type(item) not in _SCALARS:
                    made[key] = _plain_value(item)
        return made
    if not all(map(_SCALARS.__contains__, map(type, value))):  # a list
        return [item if type(item) in _SCALARS else _plain_value(item) for item in value]
    return value


class _JsonObject(dict[str, Any]):
    """A JSON object as a dict (the last duplicate wins) that keeps its ``(key, value)``
    pairs in document order, duplicates included, for :func:`reference_receipt_problem`.
    Built as the parser meets each object, so no second pass over the document is needed
    (a receipt lists every file of its plugin)."""

    __slots__ = ("pairs",)
    pairs: list[tuple[str, Any]]

    @classmethod
    def of(cls, pairs: list[tuple[str, Any]]) -> _JsonObject:
        made = cls(pairs)
        made.pairs = pairs
        return made


def reference_receipt_problem(pairs: list[tuple[str, Any]]) -> None:
    """Raise ``ValueError`` with serde's words when the reference installer could not
    deserialise this receipt (``InstallMetadata`` in its ``plugin_admin.rs``).

    Every one of :data:`REFERENCE_RECEIPT_FIELDS` must be present once, as a JSON string; the
    first problem in document order is reported, a missing field after them. Other keys are
    ignored, as serde does.
    """
    seen: set[str] = set()
    for key, value in pairs:
        if key not in REFERENCE_RECEIPT_FIELDS:
            continue
        if key in seen:
            raise ValueError(f"duplicate field `{key}`")
        seen.add(key)
        if not isinstance(value, str):
            raise ValueError(
                f"invalid type: {_json_kind(value)}, expected a string (field `{key}`)"
            )
    for field_name in REFERENCE_RECEIPT_FIELDS:
        if field_name not in seen:
            raise ValueError(f"missing field `{field_name}`")


def _json_kind(value: Any) -> str:
    """How serde names the JSON value it did not expect."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{str(value).lower()}`"
    if isinstance(value, int | float):
        return f"integer `{value}`" if isinstance(value, int) else f"floating point `{value}`"
    return "sequence" if isinstance(value, list) else "map"


def _examine(path: Path, *, kept: bool = False) -> Installed:
    try:
        receipt = read_receipt(path)
    except FileNotFoundError:
        return Installed(path, None, "no install receipt", kept)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        return Installed(path, None, f"{RECEIPT_UNREADABLE}: {reason}", kept)
    return Installed(path, receipt, None, kept)


def scan_installed(dest: Path) -> list[Installed]:
    """Every plugin directory under ``dest``, sorted by name: hidden ones too (the daemon
    discovers them), except nexo-pkg's bookkeeping (``.nexo``, and the ``.staging-*``/
    ``.removing-*`` of earlier versions); a symbolic link is listed with its problem, never
    followed."""
    found: list[Installed] = []
    try:
        with os.scandir(dest) if dest.is_dir() else contextlib.nullcontext(()) as listing:
            # By name: the order of sorted paths of one directory (POSIX compares names).
            children = sorted(listing, key=_entry_order)
    except OSError as exc:
        raise io_error(f"list {dest}", exc) from exc
    for child in children:
        if child.name == BOOKKEEPING_DIR or child.name.startswith(LEGACY_PREFIXES):
            continue
        if child.is_symlink():
            found.append(
                Installed(dest / child.name, None, "is a symbolic link, not a plugin directory")
            )
        elif child.is_dir():
            found.append(_examine(dest / child.name))
    return found


def _entry_order(entry: os.DirEntry[str]) -> Any:
    """How :class:`Path` orders the children of one directory: by name, case-folded where
    the platform's paths are (Windows)."""
    return entry.name if os.name != "nt" else Path(entry.path)


def scan_kept(dest: Path) -> list[Installed]:
    """Old versions ``upgrade`` kept under ``.nexo/kept``, sorted by name."""
    area = dest / BOOKKEEPING_DIR / KEPT_AREA
    try:
        holders = sorted(area.iterdir()) if area.is_dir() and not area.is_symlink() else []
    except OSError as exc:
        raise io_error(f"list {area}", exc) from exc
    return [
        _examine(holder / TREE_NAME, kept=True)
        for holder in holders
        if (holder / TREE_NAME).is_dir() and not (holder / TREE_NAME).is_symlink()
    ]


def installed_versions(dest: Path, plugin_id: str) -> list[Installed]:
    """The installs of ``plugin_id``, highest version first (an interrupted replacement is
    finished first, so a plugin whose old tree was moved aside is found)."""
    recover_interrupted(dest)
    matches = [item for item in scan_installed(dest) if item.plugin_id == plugin_id]
    return sorted(matches, key=version_order, reverse=True)


def version_order(item: Installed) -> tuple[bool, Version]:
    """Sort key of an install by its receipt's version, in the daemon's order (build metadata
    counts); a receipt without one, or with one that is not semver (edited by hand), sorts
    lowest instead of failing."""
    try:
        return True, parse_version(item.receipt.version if item.receipt is not None else "")
    except VersionError:
        return False, Version(0, 0, 0)


def unreadable_installs(dest: Path, plugin_id: str | None = None) -> list[Installed]:
    """Directories in ``dest`` whose receipt the reference installer cannot read (of
    ``plugin_id`` when given: named ``<id>`` or ``<id>-<version>``, as installs are)."""
    return [
        item
        for item in scan_installed(dest)
        if item.receipt is None
        and (item.problem or "").startswith(RECEIPT_UNREADABLE)
        and (
            plugin_id is None
            or item.path.name == plugin_id
            or item.path.name.startswith(f"{plugin_id}-")
        )
    ]


def require_installed(dest: Path, plugin_id: str) -> list[Installed]:
    """Like :func:`installed_versions`, but an unknown id raises ``not_installed``."""
    matches = installed_versions(dest, plugin_id)
    if not matches:
        raise NexoError(
            f"plugin {plugin_id!r} is not installed in {dest} (see `nexo plugin list`)",
            kind="not_installed",
            details={"id": plugin_id},
        )
    return matches


# -- locking ----------------------------------------------------------------------------------


@dataclass
class InstallRoot:
    """An install root held under its lock; created with :func:`locked_root`."""

    dest: Path
    created: list[Path] = field(default_factory=list)
    # Several threads of one process may work in a held root (``sync``): the bookkeeping
    # areas are created under this lock; everything else they do has names of its own.
    guard: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    # Every staging holder this run may have made, named before it is made: a signal that
    # lands between its creation and the caller's bookkeeping still finds it (locked_root).
    staging_holders: list[Path] = field(default_factory=list)

    @property
    def bookkeeping(self) -> Path:
        return self.dest / BOOKKEEPING_DIR

    def area(self, name: str) -> Path:
        """``<dest>/.nexo/<name>``, created (0755) when missing; never a link."""
        area = self.bookkeeping / name
        with self.guard:
            for path in (self.bookkeeping, area):
                if path.is_symlink():
                    discard(path)
                if not path.is_dir():
                    try:
                        make_dir(path)
                    except OSError as exc:
                        raise io_error(f"create {path}", exc) from exc
                    self.created.append(path)
        return area

    def _holder(self, area: str, name: str) -> Path:
        holder = self.area(area) / f"{name}-{secrets.token_hex(6)}"
        if area == STAGING_AREA:
            self.staging_holders.append(holder)
        try:
            make_dir(holder)
        except OSError as exc:
            raise io_error(f"create {holder}", exc) from exc
        return holder

    def new_staging(self, plugin_id: str) -> Path:
        """An empty ``.nexo/staging/<id>-<random>/tree`` to extract into, owned by the caller
        once this returns: a failure or a signal (SIGTERM) before takes the holder away."""
        holder = self._holder(STAGING_AREA, plugin_id)
        tree = holder / TREE_NAME
        try:
            make_dir(tree)
        except BaseException as exc:
            discard(holder)
            if isinstance(exc, OSError):
                raise io_error(f"create {tree}", exc) from exc
            raise
        return tree

    def aside_path(self, path: Path, *, keep: bool = False) -> Path:
        """Where ``path`` goes when it leaves the daemon's sight: a new holder under
        ``.nexo/kept`` (``keep``) or ``.nexo/removing``; the returned ``tree`` is not created."""
        return self._holder(KEPT_AREA if keep else REMOVING_AREA, path.name) / TREE_NAME

    def set_aside(self, path: Path, *, keep: bool = False) -> Path:
        """Rename ``path`` out of the daemon's sight (atomic), so it vanishes from listings."""
        aside = self.aside_path(path, keep=keep)
        try:
            path.rename(aside)
        except OSError as exc:
            discard(aside.parent)
            raise io_error(f"move {path} aside", exc) from exc
        return aside

    def recover(self) -> None:
        """Finish or undo what an interrupted run left (we hold the lock): replacements
        recorded in the journal first, then staging and removal leftovers are deleted."""
        journal_area = self.bookkeeping / JOURNAL_AREA
        if journal_area.is_dir() and not journal_area.is_symlink():
            for entry in sorted(journal_area.iterdir()):
                if entry.suffix == ".json" and not entry.is_symlink():
                    _replay(self.dest, entry)
                discard(entry)
        for area in (STAGING_AREA, REMOVING_AREA):
            path = self.bookkeeping / area
            if path.is_dir() and not path.is_symlink():
                for holder in path.iterdir():
                    discard(holder)
        for child in self.dest.iterdir():
            if child.name.startswith(LEGACY_PREFIXES):
                discard(child)

    def prune(self) -> None:
        """Remove the bookkeeping directories that are empty, so an idle root holds only
        the lock file and the installed plugins (and kept versions, if any)."""
        for name in (STAGING_AREA, REMOVING_AREA, JOURNAL_AREA, KEPT_AREA, ""):
            path = self.bookkeeping / name if name else self.bookkeeping
            if path.is_dir() and not path.is_symlink():
                with contextlib.suppress(OSError):
                    path.rmdir()


# -- replacement journal ----------------------------------------------------------------------


def _write_journal(root: InstallRoot, record: dict[str, Any]) -> Path:
    area = root.area(JOURNAL_AREA)
    path = area / f"{secrets.token_hex(8)}.json"
    try:
        write_file_atomically(path, json.dumps(record).encode("utf-8"))
    except OSError as exc:
        raise io_error(f"write {path}", exc) from exc
    return path


# A journal entry's path: the directories under the root that lead to it, and its name.
_Spot = tuple[tuple[str, ...], str]
_DIR_FLAGS = os.O_RDONLY | posix.O_DIRECTORY | posix.O_NOFOLLOW | posix.O_CLOEXEC


def _spot(relative: Any) -> _Spot:
    """A journal entry's path as directories and a name under the root; ``ValueError`` for
    anything that would leave the root."""
    if not isinstance(relative, str) or not relative or relative.startswith("/"):
        raise ValueError(f"bad path {relative!r}")
    parts = Path(relative).parts
    if any(part in {"", ".", ".."} for part in parts):
        raise ValueError(f"bad path {relative!r}")
    return parts[:-1], parts[-1]


class _RootWalk:
    """The root's directory opened once; every journal path is reached from it one
    component at a time with ``O_NOFOLLOW`` (``openat``), so a link planted anywhere on the
    way (``.nexo/staging/x -> /elsewhere``) is never followed: the path counts as absent.
    Renames then name both ends relative to those descriptors."""

    def __init__(self, dest: Path) -> None:
        self.root = os.open(dest, _DIR_FLAGS)
        self._opened: list[int] = [self.root]

    def close(self) -> None:
        for descriptor in self._opened:
            os.close(descriptor)
        self._opened.clear()

    def parent(self, spot: _Spot, *, create: bool = False) -> int:
        """The descriptor of ``spot``'s directory; ``OSError`` (``ELOOP`` on a link) when
        it cannot be reached without following one. ``create`` makes missing ones (0755)."""
        descriptor = self.root
        for part in spot[0]:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=descriptor)
            descriptor = os.open(part, _DIR_FLAGS, dir_fd=descriptor)
            self._opened.append(descriptor)
        return descriptor

    def mode(self, spot: _Spot) -> int | None:
        """``spot``'s own ``st_mode`` (a link is a link), ``None`` when it is not there."""
        try:
            return os.stat(spot[1], dir_fd=self.parent(spot), follow_symlinks=False).st_mode
        except OSError:
            return None

    def is_dir(self, spot: _Spot) -> bool:
        mode = self.mode(spot)
        return mode is not None and stat.S_ISDIR(mode)

    def inode(self, spot: _Spot) -> int | None:
        """``spot``'s inode when it is a directory (not a link), else ``None``."""
        try:
            info = os.stat(spot[1], dir_fd=self.parent(spot), follow_symlinks=False)
        except OSError:
            return None
        return info.st_ino if stat.S_ISDIR(info.st_mode) else None

    def exchange(self, first: _Spot, second: _Spot) -> bool:
        return exchange(
            first[1], second[1], first_dir=self.parent(first), second_dir=self.parent(second)
        )

    def remove_dir(self, spot: _Spot) -> None:
        with contextlib.suppress(OSError):
            os.rmdir(spot[1], dir_fd=self.parent(spot))

    def rename(self, source: _Spot, target: _Spot, *, create: bool = False) -> None:
        os.rename(
            source[1],
            target[1],
            src_dir_fd=self.parent(source),
            dst_dir_fd=self.parent(target, create=create),
        )


def _replay(dest: Path, journal: Path) -> None:
    """Bring one interrupted replacement to a complete state, never losing both trees.

    The journal is written once the new tree is complete in staging, before anything moves.
    If the new tree is still staged, the old trees are moved out of sight and the new one is
    renamed in (the run is finished); if it is already in place, only the moves of the old
    trees are completed. Only when the new tree is gone are the old ones put back. Every
    path is walked from the root without following links (:class:`_RootWalk`): a journal
    whose path runs through a link moves nothing into or out of the root through it.
    """
    try:
        with open_regular(journal) as handle:
            record = json.loads(handle.read(MAX_RECEIPT_BYTES).decode("utf-8"))
        if "swap" in record:
            swap = _Swap.read(record["swap"])
            walk = _RootWalk(dest)
            try:
                _advance_swap(walk, swap, begin=False)
            finally:
                walk.close()
            return
        final = _spot(record["final"])
        staged = _spot(record["staged"])
        moves = [(_spot(old), _spot(aside)) for old, aside in record["moves"]]
        walk = _RootWalk(dest)
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return  # not ours, or torn before it was renamed into place: nothing was moved
    try:
        olds = {old for old, _ in moves}
        staged_present = walk.is_dir(staged)
        final_present = walk.mode(final) is not None
        if staged_present and (not final_present or final in olds):
            _move_out(walk, moves)
            try:
                walk.rename(staged, final)
            except OSError:
                _move_back(walk, moves)
        elif final_present and not staged_present:
            _move_out(walk, [(old, aside) for old, aside in moves if old != final])
        else:
            _move_back(walk, moves)
    finally:
        walk.close()
    with contextlib.suppress(OSError):
        fsync_dir(dest)


def _move_back(walk: _RootWalk, moves: list[tuple[_Spot, _Spot]]) -> None:
    for old, aside in moves:
        if walk.is_dir(aside) and walk.mode(old) is None:
            with contextlib.suppress(OSError):
                walk.rename(aside, old)


def _move_out(walk: _RootWalk, moves: list[tuple[_Spot, _Spot]]) -> None:
    for old, aside in moves:
        if walk.mode(old) is not None and walk.mode(aside) is None:
            with contextlib.suppress(OSError):
                walk.rename(old, aside, create=True)


@dataclass(frozen=True)
class _Swap:
    """A rollback in progress: the tree at ``inward`` (inode ``inward_inode``) becomes the
    installed ``final``; the installed tree at ``outward`` (inode ``outward_inode``) moves to
    ``aside``. Trees are told apart by inode, so every state between two steps is known."""

    inward: _Spot
    inward_inode: int
    outward: _Spot
    outward_inode: int
    final: _Spot
    aside: _Spot

    def to_json(self) -> dict[str, Any]:
        def text(spot: _Spot) -> str:
            return "/".join((*spot[0], spot[1]))

        return {
            "in": text(self.inward),
            "in_inode": self.inward_inode,
            "out": text(self.outward),
            "out_inode": self.outward_inode,
            "final": text(self.final),
            "aside": text(self.aside),
        }

    @classmethod
    def read(cls, record: Any) -> _Swap:
        inodes = (record["in_inode"], record["out_inode"])
        if not all(isinstance(inode, int) and not isinstance(inode, bool) for inode in inodes):
            raise ValueError("bad inode")
        return cls(
            _spot(record["in"]),
            inodes[0],
            _spot(record["out"]),
            inodes[1],
            _spot(record["final"]),
            _spot(record["aside"]),
        )


def _where(walk: _RootWalk, inode: int, spots: tuple[_Spot, ...]) -> _Spot | None:
    return next((spot for spot in spots if walk.inode(spot) == inode), None)


def _advance_swap(walk: _RootWalk, swap: _Swap, *, begin: bool) -> None:
    """Bring a rollback's trees to their places from wherever a run left them, never leaving
    the id without a discoverable tree: an atomic exchange where the kernel has one, else the
    kept tree renamed in before the installed one is moved out (two trees for a moment, never
    none). A rollback that moved nothing yet is started only when ``begin`` (the run itself);
    a later run leaves it undone."""
    inward = _where(walk, swap.inward_inode, (swap.final, swap.outward, swap.inward))
    outward = _where(walk, swap.outward_inode, (swap.aside, swap.inward, swap.outward))
    if inward is None or (inward == swap.inward and outward == swap.outward and not begin):
        _remove_holders(walk, swap)
        return
    if inward == swap.inward and outward == swap.outward:
        if walk.exchange(swap.outward, swap.inward):
            inward, outward = swap.outward, swap.inward
        elif swap.final != swap.outward:
            walk.rename(swap.inward, swap.final)
            inward = swap.final
        else:  # no exchange and one name for both: the only order with a moment of none
            walk.rename(swap.outward, swap.aside, create=True)
            outward = swap.aside
            walk.rename(swap.inward, swap.final)
            inward = swap.final
    if inward != swap.final:
        walk.rename(inward, swap.final)
    if outward is not None and outward != swap.aside:
        walk.rename(outward, swap.aside, create=True)
    _remove_holders(walk, swap)


def _remove_holders(walk: _RootWalk, swap: _Swap) -> None:
    """The kept holders a swap emptied (or made and never filled) go."""
    for holder in (swap.inward[0], swap.aside[0]):
        if holder:
            walk.remove_dir((holder[:-1], holder[-1]))


def swap_in(root: InstallRoot, kept: Path, final: Path, installed: Path) -> Path:
    """Put the kept tree ``kept`` in as ``final`` and keep the ``installed`` tree in its place
    under ``.nexo/kept``; return where it went. At every instant exactly one of the two is
    discoverable where the kernel can exchange two names (Linux ``renameat2``), else at least
    one; a journal lets the next run finish a swap that was interrupted. Raises ``io``."""
    aside = root.aside_path(installed, keep=True)

    def spot(path: Path) -> _Spot:
        return _spot(path.relative_to(root.dest).as_posix())

    try:
        swap = _Swap(
            spot(kept),
            kept.stat(follow_symlinks=False).st_ino,
            spot(installed),
            installed.stat(follow_symlinks=False).st_ino,
            spot(final),
            spot(aside),
        )
    except OSError as exc:
        discard(aside.parent)
        raise io_error(f"swap {installed} with {kept}", exc) from exc
    journal = _write_journal(root, {"swap": swap.to_json()})
    walk = _RootWalk(root.dest)
    try:
        _advance_swap(walk, swap, begin=True)
    except OSError as exc:
        # Whatever moved is finished by the next run from the journal, kept for it.
        raise io_error(f"swap {installed} with {kept}", exc) from exc
    finally:
        walk.close()
    for parent in dict.fromkeys((final.parent, kept.parent, aside.parent, kept.parent.parent)):
        with contextlib.suppress(OSError):
            fsync_dir(parent)
    discard(journal)
    return aside


def recover_interrupted(dest: Path) -> None:
    """If a replacement in ``dest`` was interrupted (its journal is there), finish or undo it
    now, so a read-only command (``list``, ``verify``) sees a complete state. Does nothing
    when another run holds the lock (that run is not interrupted)."""
    journal = dest / BOOKKEEPING_DIR / JOURNAL_AREA
    try:
        pending = journal.is_dir() and any(journal.iterdir())
    except OSError:
        return
    if not pending:
        return
    with contextlib.suppress(NexoError), locked_root(dest, timeout=0):
        pass


def _lock_timeout() -> float:
    raw = os.environ.get(LOCK_TIMEOUT_ENV)
    try:
        return float(raw) if raw else DEFAULT_LOCK_TIMEOUT
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT


@contextlib.contextmanager
def locked_root(dest: Path, *, timeout: float | None = None) -> Iterator[InstallRoot]:
    """Hold ``<dest>/.nexo-install.lock`` (``flock``), creating ``dest`` if needed; waits up to
    ``timeout`` seconds (``NEXO_INSTALL_LOCK_TIMEOUT``, default 120), then raises ``io``.
    When the body fails, a ``dest`` or lock file this call created is removed again, so a
    failed first install leaves no trace."""
    wait = _lock_timeout() if timeout is None else timeout
    created: list[Path] = []
    try:
        created.extend(make_dirs(dest))
    except OSError as exc:
        raise io_error(f"create {dest}", exc) from exc
    lock_path = dest / LOCK_NAME
    handle = _acquire(lock_path, wait, created)
    root = InstallRoot(dest, created)
    try:
        root.recover()
        yield root
    except BaseException:
        # A staging tree of this run that was not published (a failure, or a signal at any
        # moment, even before the caller held on to it) is never left behind.
        for holder in root.staging_holders:
            discard(holder)
        root.prune()
        if lock_path in created:
            with contextlib.suppress(OSError):
                lock_path.unlink()
        # ``created`` lists the deepest new directory first, then its new parents.
        for path in created:
            if path != lock_path:
                with contextlib.suppress(OSError):
                    path.rmdir()
        raise
    else:
        root.prune()
    finally:
        handle.close()


def _acquire(lock_path: Path, wait: float, created: list[Path]) -> Any:
    deadline = time.monotonic() + wait
    while True:
        existed = lock_path.exists()
        try:
            handle = os.fdopen(open_lock_file(lock_path), "r+b")
            if not existed:
                with contextlib.suppress(OSError):
                    posix.set_mode(handle.fileno(), lock_path, 0o644)
        except OSError as exc:
            raise io_error(f"open the lock file {lock_path}", exc) from exc
        while True:
            try:
                posix.lock_exclusive(handle.fileno(), wait=False)
                break
            except OSError as exc:
                if exc.errno not in {errno.EAGAIN, errno.EACCES}:
                    handle.close()
                    raise io_error(f"lock {lock_path}", exc) from exc
                if time.monotonic() >= deadline:
                    handle.close()
                    raise NexoError(
                        f"another nexo install holds {lock_path}; try again when it is done",
                        kind="io",
                    ) from exc
                time.sleep(0.05)
        # A failed first install unlinks the lock file; a waiter holding the old inode must
        # retry on the new file instead of believing it owns the lock.
        try:
            same = os.fstat(handle.fileno()).st_ino == lock_path.stat().st_ino
        except FileNotFoundError:
            same = False
        if same:
            if not existed:
                created.append(lock_path)
            return handle
        handle.close()


# -- install and remove -----------------------------------------------------------------------


_FLAT_VALUES = frozenset({str, int, bool, type(None)})


def indented_json(document: dict[str, Any]) -> str:
    """``json.dumps(document, indent=2, ensure_ascii=False)``, the same text, with the maps
    of strings at its first level (a receipt's ``files`` and ``modes``: an entry a file)
    encoded by the C encoder instead of ``json``'s Python one, which ``indent`` otherwise
    takes for every entry."""
    if not document or not all(map(str.__instancecheck__, document)):
        return json.dumps(document, indent=2, ensure_ascii=False)  # keys json turns to text
    entries = [
        f"{json.dumps(key, ensure_ascii=False)}: {_indented_value(value)}"
        for key, value in document.items()
    ]
    return "{\n  " + ",\n  ".join(entries) + "\n}"


def _indented_value(value: Any) -> str:
    """``value`` as ``json.dumps(..., indent=2)`` writes it one level down."""
    if (
        type(value) is dict
        and value
        and all(map(_FLAT_VALUES.__contains__, map(type, value.values())))
    ):
        inner = json.dumps(value, ensure_ascii=False, separators=(",\n    ", ": "))
        return "{\n    " + inner[1:-1] + "\n  }"
    # Newlines are structure only (strings escape theirs): one level down is two spaces more.
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")


def write_receipt(directory: Path, receipt: Receipt) -> None:
    """Write the receipt atomically (:func:`~nexo_pkg.core.files.write_file_atomically`), 0644
    whatever the umask: a receipt anyone can rewrite could redirect upgrades. The caller then
    makes the tree durable (:func:`~nexo_pkg.core.durable.sync_tree`) before publishing it.
    Raises ``OSError``."""
    data = indented_json(receipt.to_json()) + "\n"
    path = directory / RECEIPT_NAME
    write_file_atomically(path, data.encode("utf-8"), mode=0o644, durable=False)


def publish(
    root: InstallRoot,
    staging: Path,
    final: Path,
    *,
    replace: bool = False,
    replaces: tuple[Path, ...] = (),
    keep_old: bool = False,
) -> tuple[Path, ...]:
    """Rename the complete ``staging`` tree to ``final``, taking the trees it replaces out of
    the daemon's sight first; return where they went. ``replaces`` (and ``final`` itself
    with ``replace``, for ``--force``) move to ``.nexo/removing`` and are deleted, or with
    ``keep_old`` to ``.nexo/kept`` (never ``final``). A journal written before anything moves
    lets the next run finish an interrupted replacement (:meth:`InstallRoot.recover`), so a
    crash never loses both trees; a failed rename puts the old trees back. Raises ``io``."""
    olds = [
        path
        for path in dict.fromkeys((*replaces, *((final,) if replace else ())))
        if path.exists() or path.is_symlink()
    ]
    if not olds:
        try:
            staging.rename(final)
        except OSError as exc:
            raise io_error(f"move the new install into {final}", exc) from exc
        # The rename changed both parents: make the new name and the old one's removal durable.
        fsync_dir(final.parent)
        fsync_dir(staging.parent)
        _remove_empty_holder(staging)
        return ()
    moves = [(old, root.aside_path(old, keep=keep_old and old != final)) for old in olds]
    journal = _write_journal(
        root,
        {
            "final": final.name,
            "staged": staging.relative_to(root.dest).as_posix(),
            "moves": [[old.name, aside.relative_to(root.dest).as_posix()] for old, aside in moves],
        },
    )
    done: list[tuple[Path, Path]] = []
    try:
        for old, aside in moves:
            old.rename(aside)
            done.append((old, aside))
        staging.rename(final)
    except OSError as exc:
        for old, aside in reversed(done):
            with contextlib.suppress(OSError):
                aside.rename(old)
        discard(journal)
        raise io_error(f"move the new install into {final}", exc) from exc
    # The renames changed these parents: make the new names and the old ones' removal durable.
    for parent in dict.fromkeys((final.parent, staging.parent, *(a.parent for _, a in moves))):
        fsync_dir(parent)
    discard(journal)
    _remove_empty_holder(staging)
    for _, aside in moves:
        if aside.parent.parent.name == REMOVING_AREA:
            discard(aside.parent)
    return tuple(aside for _, aside in moves)


def _remove_empty_holder(tree: Path) -> None:
    with contextlib.suppress(OSError):
        tree.parent.rmdir()


def remove_tree(root: InstallRoot, path: Path) -> None:
    """Remove an installed (or kept) tree: move it out of sight first, then delete it."""
    aside = root.set_aside(path)
    discard(aside.parent)
    if path.name == TREE_NAME and path.parent.parent.name == KEPT_AREA:
        discard(path.parent)


def discard(path: Path) -> None:
    """Delete ``path`` best-effort without following links: a symlink (say, one planted in the
    install root) is unlinked, never the tree it points to."""
    if path.is_symlink() or not path.is_dir():
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    shutil.rmtree(path, ignore_errors=True)


# -- verify -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class VerifyReport:
    """How an installed tree differs from its receipt."""

    item: Installed
    modified: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    mode_changed: tuple[str, ...] = ()
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return not (
            self.modified or self.missing or self.extra or self.mode_changed or self.problem
        )

    def to_json(self) -> dict[str, Any]:
        receipt = self.item.receipt
        return {
            "id": receipt.id if receipt else None,
            "version": receipt.version if receipt else None,
            "path": str(self.item.path),
            "ok": self.ok,
            "modified": list(self.modified),
            "missing": list(self.missing),
            "extra": list(self.extra),
            "mode_changed": list(self.mode_changed),
            "problem": self.problem,
        }


# Bits an install never sets: a file or directory that gained one was tampered with.
_SUSPICIOUS_BITS = stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX | stat.S_IWOTH


def verify_installed(item: Installed) -> VerifyReport:
    """Re-hash every file of ``item`` and compare files and modes with its receipt.

    Never raises for content, and never opens anything but a regular file: a link, FIFO,
    socket or device in the tree is reported (as extra, or as modified where the receipt
    expects a file), never followed or read. A directory without a readable receipt, a
    directory that is a symbolic link and a receipt without file hashes (written by another
    installer) are failures naming the directory.
    """
    if item.receipt is None:
        return VerifyReport(item, problem=item.problem or "no install receipt")
    if item.path.is_symlink() or not item.path.is_dir():
        return VerifyReport(item, problem="is a symbolic link, not a plugin directory")
    if item.receipt.files is None:
        return VerifyReport(
            item,
            problem="its receipt has no file hashes to check (installed by another tool); "
            "reinstall it with `nexo plugin install --force` to record them",
        )
    expected = item.receipt.files
    found = _tree_stat_modes(item.path, strict=False)
    found.pop(RECEIPT_NAME, None)
    modes = {name: stat.S_IMODE(mode) for name, mode in found.items()}
    present = {name for name, mode in found.items() if stat.S_ISREG(mode)}
    oddities = {
        name for name, mode in found.items() if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))
    }
    modified: list[str] = []
    missing: list[str] = []
    for relative, digest in sorted(expected.items()):
        if relative not in present:
            (modified if relative in oddities else missing).append(relative)
            continue
        try:
            if sha256_file(item.path / relative) != digest:
                modified.append(relative)
        except OSError:
            modified.append(relative)
    extra = sorted({*oddities, *present} - expected.keys())
    recorded = item.receipt.modes
    if recorded is not None:
        changed = {name for name, mode in modes.items() if recorded.get(name, mode) != mode}
        extra = sorted({*extra, *(name for name in modes if name not in recorded)})
    else:
        changed = {name for name, mode in modes.items() if mode & _SUSPICIOUS_BITS}
    return VerifyReport(item, tuple(modified), tuple(missing), tuple(extra), tuple(sorted(changed)))
