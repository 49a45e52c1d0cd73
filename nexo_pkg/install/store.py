"""The install root: lock, staging directories, receipts, atomic rename, list/remove/verify.

Layout of ``<dest>``::

    .nexo-install.lock          serialises installs, upgrades and removals
    <id>-<version>/             one installed plugin
        .nexo-install.json      its receipt
    .staging-<id>-<random>/     an install in progress (stale ones are cleaned up)
    .removing-<name>-<random>/  a removal in progress
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import fcntl
import hashlib
import json
import os
import secrets
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import semver

from nexo_pkg.errors import NexoError
from nexo_pkg.install.durable import fsync_dir

RECEIPT_NAME = ".nexo-install.json"
LOCK_NAME = ".nexo-install.lock"
STAGING_PREFIX = ".staging-"
REMOVING_PREFIX = ".removing-"
RECEIPT_SCHEMA_VERSION = 1
LOCK_TIMEOUT_ENV = "NEXO_INSTALL_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 120.0
HASH_CHUNK = 1024 * 1024


def io_error(action: str, exc: OSError) -> NexoError:
    return NexoError(f"cannot {action}: {exc.strerror or exc}", kind="io")


def nexo_home_from_env() -> Path:
    """``NEXO_HOME``, else ``~/.nexo``."""
    value = os.environ.get("NEXO_HOME")
    return Path(value).expanduser() if value else Path.home() / ".nexo"


def default_dest(nexo_home: Path) -> Path:
    return nexo_home / "state" / "plugins"


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def sha256_file(path: Path) -> str:
    hasher = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(HASH_CHUNK):
            hasher.update(chunk)
    return hasher.hexdigest()


@dataclass(frozen=True)
class Receipt:
    """The ``.nexo-install.json`` of one installed plugin."""

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
    files: dict[str, str]
    schema_version: int = RECEIPT_SCHEMA_VERSION
    # Registry installs: the pinned ``oci://…@sha256:…`` they came from (``upgrade`` asks
    # that repository again). Absent from the JSON otherwise.
    registry: str | None = None

    def to_json(self) -> dict[str, Any]:
        document = {
            "schema_version": self.schema_version,
            "id": self.id,
            "version": self.version,
            "owner": self.owner,
            "repo": self.repo,
            "tag": self.tag,
            "target": self.target,
            "sha256": self.sha256,
            "installed_at": self.installed_at,
            "source": self.source,
            "signature": self.signature,
            "files": dict(sorted(self.files.items())),
        }
        if self.registry is not None:
            document["registry"] = self.registry
        return document

    @classmethod
    def from_json(cls, document: Any) -> Receipt:
        """Parse a receipt; raises ``ValueError`` when a field is missing or mistyped."""
        if not isinstance(document, dict):
            raise ValueError("not a JSON object")
        strings = ("id", "version", "target", "sha256", "installed_at", "source")
        for key in strings:
            if not isinstance(document.get(key), str):
                raise ValueError(f"`{key}` is missing or not a string")
        files = document.get("files")
        if not isinstance(files, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in files.items()
        ):
            raise ValueError("`files` is not a map of path to sha256")
        signature = document.get("signature")
        schema = document.get("schema_version")
        optional = {k: document.get(k) for k in ("owner", "repo", "tag")}
        return cls(
            id=document["id"],
            version=document["version"],
            owner=optional["owner"] if isinstance(optional["owner"], str) else None,
            repo=optional["repo"] if isinstance(optional["repo"], str) else None,
            tag=optional["tag"] if isinstance(optional["tag"], str) else None,
            target=document["target"],
            sha256=document["sha256"],
            installed_at=document["installed_at"],
            source=document["source"],
            signature=signature if isinstance(signature, dict) else {"status": "unknown"},
            files=dict(files),
            schema_version=schema if isinstance(schema, int) else RECEIPT_SCHEMA_VERSION,
            registry=registry if isinstance(registry := document.get("registry"), str) else None,
        )


@dataclass(frozen=True)
class Installed:
    """One directory under the install root, with its receipt when it has a valid one."""

    path: Path
    receipt: Receipt | None
    problem: str | None = None

    @property
    def plugin_id(self) -> str | None:
        return self.receipt.id if self.receipt else None


def read_receipt(directory: Path) -> Receipt:
    """Load ``directory/.nexo-install.json``; raises ``ValueError``/``OSError`` when unusable."""
    text = (directory / RECEIPT_NAME).read_text(encoding="utf-8")
    return Receipt.from_json(json.loads(text))


def scan_installed(dest: Path) -> list[Installed]:
    """Every plugin directory under ``dest`` (hidden entries are bookkeeping), sorted by name."""
    found: list[Installed] = []
    try:
        children = sorted(dest.iterdir()) if dest.is_dir() else []
    except OSError as exc:
        raise io_error(f"list {dest}", exc) from exc
    for child in children:
        if child.name.startswith(".") or child.is_symlink() or not child.is_dir():
            continue
        try:
            receipt = read_receipt(child)
        except FileNotFoundError:
            found.append(Installed(child, None, "no install receipt"))
        except (OSError, ValueError) as exc:
            found.append(Installed(child, None, f"unreadable install receipt: {exc}"))
        else:
            found.append(Installed(child, receipt))
    return found


def installed_versions(dest: Path, plugin_id: str) -> list[Installed]:
    """The installs of ``plugin_id``, highest version first."""
    matches = [item for item in scan_installed(dest) if item.plugin_id == plugin_id]

    def key(item: Installed) -> semver.Version:
        assert item.receipt is not None  # noqa: S101 (filtered above)
        try:
            return semver.Version.parse(item.receipt.version)
        except ValueError:
            return semver.Version(0)

    return sorted(matches, key=key, reverse=True)


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

    def clean_stale(self) -> None:
        """Remove leftovers of interrupted installs and removals (we hold the lock)."""
        for child in self.dest.iterdir():
            if child.name.startswith((STAGING_PREFIX, REMOVING_PREFIX)):
                discard(child)

    def new_staging(self, plugin_id: str) -> Path:
        path = self.dest / f"{STAGING_PREFIX}{plugin_id}-{secrets.token_hex(6)}"
        try:
            path.mkdir(mode=0o755)
        except OSError as exc:
            raise io_error(f"create {path}", exc) from exc
        return path

    def set_aside(self, path: Path) -> Path:
        """Rename ``path`` to ``.removing-*`` (atomic), so it vanishes from listings at once."""
        aside = self.dest / f"{REMOVING_PREFIX}{path.name}-{secrets.token_hex(6)}"
        try:
            path.rename(aside)
        except OSError as exc:
            raise io_error(f"move {path} aside", exc) from exc
        return aside


def _lock_timeout() -> float:
    raw = os.environ.get(LOCK_TIMEOUT_ENV)
    try:
        return float(raw) if raw else DEFAULT_LOCK_TIMEOUT
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT


@contextlib.contextmanager
def locked_root(dest: Path, *, timeout: float | None = None) -> Iterator[InstallRoot]:
    """Hold ``<dest>/.nexo-install.lock`` (``flock``), creating ``dest`` if needed.

    Waits up to ``timeout`` seconds (``NEXO_INSTALL_LOCK_TIMEOUT``, default 120) for another
    install to finish, then raises ``io``. When the body fails and this call created ``dest``
    or the lock file, both are removed again, so a failed first install leaves no trace.
    """
    wait = _lock_timeout() if timeout is None else timeout
    created: list[Path] = []
    try:
        missing = [p for p in (dest, *dest.parents) if not p.exists()]
        dest.mkdir(parents=True, exist_ok=True)
        created.extend(missing)
    except OSError as exc:
        raise io_error(f"create {dest}", exc) from exc
    lock_path = dest / LOCK_NAME
    handle = _acquire(lock_path, wait, created)
    root = InstallRoot(dest, created)
    try:
        root.clean_stale()
        yield root
    except BaseException:
        if lock_path in created:
            with contextlib.suppress(OSError):
                lock_path.unlink()
        # ``created`` lists the deepest new directory first, then its new parents.
        for path in created:
            if path != lock_path:
                with contextlib.suppress(OSError):
                    path.rmdir()
        raise
    finally:
        handle.close()


def _acquire(lock_path: Path, wait: float, created: list[Path]) -> Any:
    deadline = time.monotonic() + wait
    while True:
        existed = lock_path.exists()
        try:
            handle = lock_path.open("a+b")
        except OSError as exc:
            raise io_error(f"open the lock file {lock_path}", exc) from exc
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
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


def write_receipt(directory: Path, receipt: Receipt) -> None:
    """Write the receipt atomically (temp file + ``os.replace``); the caller then makes the
    tree durable (:func:`~nexo_pkg.install.durable.sync_tree`) before publishing it."""
    target = directory / RECEIPT_NAME
    temp = directory / f"{RECEIPT_NAME}.tmp"
    data = json.dumps(receipt.to_json(), indent=2, ensure_ascii=False) + "\n"
    with temp.open("w", encoding="utf-8") as handle:
        handle.write(data)
    temp.replace(target)


def publish(root: InstallRoot, staging: Path, final: Path, *, replace: bool) -> None:
    """Rename ``staging`` to ``final``; with ``replace`` swap out an existing ``final``.

    The old tree is moved aside first and restored if the second rename fails, so ``final``
    is always either the old or the new complete tree. Raises ``io``.
    """
    aside: Path | None = None
    if replace and final.exists():
        aside = root.set_aside(final)
    try:
        staging.rename(final)
    except OSError as exc:
        if aside is not None:
            aside.rename(final)
        raise io_error(f"move the new install into {final}", exc) from exc
    # The rename changed both parents: make the new name and the old one's removal durable.
    fsync_dir(final.parent)
    if staging.parent != final.parent:
        fsync_dir(staging.parent)
    if aside is not None:
        discard(aside)


def remove_tree(root: InstallRoot, path: Path) -> None:
    """Remove an installed directory: rename to ``.removing-*`` first, then delete."""
    aside = root.set_aside(path)
    discard(aside)


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
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return not (self.modified or self.missing or self.extra or self.problem)

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
            "problem": self.problem,
        }


def verify_installed(item: Installed) -> VerifyReport:
    """Re-hash every file of ``item`` and compare with its receipt (never raises for content)."""
    if item.receipt is None:
        return VerifyReport(item, problem=item.problem or "no install receipt")
    expected = item.receipt.files
    present: dict[str, Path] = {}
    oddities: list[str] = []
    for directory, dirs, files in os.walk(item.path):
        base = Path(directory)
        for name in [*dirs, *files]:
            path = base / name
            relative = path.relative_to(item.path).as_posix()
            if path.is_symlink():
                oddities.append(relative)
            elif name in files:
                present[relative] = path
        dirs[:] = [d for d in dirs if not (base / d).is_symlink()]
    present.pop(RECEIPT_NAME, None)
    modified: list[str] = []
    missing: list[str] = []
    for relative, digest in sorted(expected.items()):
        found = present.get(relative)
        if found is None:
            missing.append(relative)
            continue
        try:
            if sha256_file(found) != digest:
                modified.append(relative)
        except OSError:
            modified.append(relative)
    extra = sorted({*oddities, *(r for r in present if r not in expected)})
    return VerifyReport(item, tuple(modified), tuple(missing), tuple(extra))
