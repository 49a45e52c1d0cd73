"""What an installed tree holds (file hashes, permission bits) and how it differs from its
receipt (``verify``)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexo_pkg.core import posix
from nexo_pkg.core.files import read_regular_bytes, sha256_file
from nexo_pkg.install.receipts import RECEIPT_NAME, Installed
from nexo_pkg.manifest.names import MANIFEST_NAMES, MAX_MANIFEST_BYTES
from nexo_pkg.manifest.read import ManifestTOMLError, read_manifest


def tree_modes(
    root: Path, written: Mapping[str, int] | None = None, *, changed: Iterable[str] = ()
) -> dict[str, int]:
    """Permission bits (``S_IMODE``, setuid/setgid/sticky included) of every entry below
    ``root``, by POSIX relative path, links not followed. Raises ``OSError``.

    ``written``: the modes an extraction read from everything it created below ``root``
    (``ArchiveListing.modes``), the whole tree, of which only the entries ``changed`` since
    are read again; nothing is walked. ``None``: the tree is walked."""
    if written is None:
        return {name: stat.S_IMODE(mode) for name, mode in _tree_stat_modes(root).items()}
    modes = dict(written)
    for name in changed:
        modes[name] = stat.S_IMODE((root / name).lstat().st_mode)
    return modes


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


@dataclass(frozen=True)
class VerifyReport:
    """How an installed tree differs from its receipt."""

    item: Installed
    modified: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    mode_changed: tuple[str, ...] = ()
    problem: str | None = None
    # A tree without a receipt that still names its plugin (a development link: the
    # checkout's manifest), for the report's id and version.
    named: tuple[str, str] | None = None

    @property
    def ok(self) -> bool:
        return not (
            self.modified or self.missing or self.extra or self.mode_changed or self.problem
        )

    def to_json(self) -> dict[str, Any]:
        receipt = self.item.receipt
        named = (receipt.id, receipt.version) if receipt else self.named
        plugin_id, version = named or (None, None)
        return {
            "id": plugin_id,
            "version": version,
            "path": str(self.item.path),
            "ok": self.ok,
            "modified": list(self.modified),
            "missing": list(self.missing),
            "extra": list(self.extra),
            "mode_changed": list(self.mode_changed),
            "problem": self.problem,
        }


#: Whether files carry POSIX permission bits. Windows keeps none: its ``stat`` gives every
#: file 0666 (0444 when read-only) and every directory 0777, so ``verify`` there compares
#: contents and names only.
MODES_ON_DISK = posix.POSIX
# Bits an install never sets: a file or directory that gained one was tampered with.
_SUSPICIOUS_BITS = stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX | stat.S_IWOTH
# What install makes every directory it extracts, the plugin directory included.
PLUGIN_DIRECTORY_MODE = 0o755


def plugin_directory_mode_changed(path: Path, *, recorded: bool = True) -> bool:
    """Whether the plugin directory ``path`` itself (``.`` in a report; the receipt records
    the modes below it) is no longer as install made it: another mode than 0755 for a
    receipt that records modes, a suspicious bit for one that does not. A directory that
    cannot be stat'ed is not judged here."""
    try:
        mode = stat.S_IMODE(path.lstat().st_mode)
    except OSError:
        return False
    return mode != PLUGIN_DIRECTORY_MODE if recorded else bool(mode & _SUSPICIOUS_BITS)


def verify_installed(
    item: Installed, *, manifest: tuple[str, Mapping[str, Any]] | None = None
) -> VerifyReport:
    """Re-hash every file of ``item`` and compare files and modes with its receipt.

    ``manifest``: the name of a manifest file of ``item`` and the document ``tomllib`` reads
    from it, when the caller has parsed it already (``doctor``): it is not parsed again.

    Never raises for content, and never opens anything but a regular file: a link, FIFO,
    socket or device in the tree is reported (as extra, or as modified where the receipt
    expects a file), never followed or read. A directory without a readable receipt, a
    directory that is a symbolic link and a receipt without file hashes (written by another
    installer) are failures naming the directory.
    """
    if item.receipt is None:
        if item.path.is_symlink():
            # A development link (install --link): its module only for a link in the root.
            from nexo_pkg.install.link import linked_plugin  # noqa: PLC0415

            linked = linked_plugin(item.path)
            # `install --link` names the link by the id; a link with another name (as a
            # plugin directory replaced by one) is no development install.
            if linked is not None and linked.path.name == linked.plugin_id:
                return VerifyReport(
                    item,
                    problem=f"is a development link (install --link) to {linked.target}: "
                    "nothing was installed there, so there is nothing to verify",
                    named=(linked.plugin_id, linked.version),
                )
        return VerifyReport(item, problem=item.problem or "no install receipt")
    if item.path.is_symlink() or not item.path.is_dir():
        return VerifyReport(item, problem="is a symbolic link, not a plugin directory")
    if item.receipt.files is None:
        # A failure's remedy (its module is not loaded for a tree that verifies).
        from nexo_pkg.install.remedy import reinstall_command  # noqa: PLC0415

        return VerifyReport(
            item,
            problem="its receipt has no file hashes to check (installed by another tool); "
            f"{reinstall_command(item)} to record them",
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
            if sha256_file(item.path / relative, regular=True) != digest:
                modified.append(relative)
        except OSError:
            modified.append(relative)
    extra = sorted({*oddities, *present} - expected.keys())
    recorded = item.receipt.modes
    if recorded is not None:
        extra = sorted({*extra, *(name for name in modes if name not in recorded)})
    changed: set[str] = set()  # without MODES_ON_DISK, no permission bits to compare
    if MODES_ON_DISK and recorded is not None:
        changed = {name for name, mode in modes.items() if recorded.get(name, mode) != mode}
    elif MODES_ON_DISK:
        changed = {name for name, mode in modes.items() if mode & _SUSPICIOUS_BITS}
    if MODES_ON_DISK and plugin_directory_mode_changed(item.path, recorded=recorded is not None):
        changed.add(".")
    unchanged = [name for name in MANIFEST_NAMES if name in present and name not in modified]
    problem = _named_otherwise(item, unchanged[0], manifest) if unchanged else None
    return VerifyReport(
        item, tuple(modified), tuple(missing), tuple(extra), tuple(sorted(changed)), problem
    )


def _manifest_document(path: Path) -> dict[str, Any]:
    """The document the daemon reads from the manifest at ``path``, as lint and ``doctor``
    read it (past a byte-order mark, the year 0000 and a leap second read). Raises
    ``ManifestTOMLError`` when it is no TOML the daemon reads, ``OSError`` when it cannot be
    read. Opened as the hashing opened it, a regular file and no link, and read up to the
    manifest limit: one that became a FIFO, a link to ``/dev/zero`` or a huge file since it
    was hashed is not read (nothing blocks, memory stays bounded)."""
    raw = read_regular_bytes(path, MAX_MANIFEST_BYTES)
    if len(raw) > MAX_MANIFEST_BYTES:
        raise OSError(errno.EFBIG, "larger than a manifest is read", str(path))
    return read_manifest(raw)


def _named_otherwise(
    item: Installed, manifest_name: str, parsed: tuple[str, Mapping[str, Any]] | None
) -> str | None:
    """What is wrong when the receipt names another plugin or version than the manifest the
    daemon loads (an edited receipt: `list`, `upgrade` and `remove` would act on what it
    says), else ``None``. A manifest without ``[plugin]`` id and version (a microapp's
    extension manifest) is not compared. ``parsed``: that manifest's document, when the
    caller read it (as :func:`verify_installed` takes it)."""
    receipt = item.receipt
    assert receipt is not None  # noqa: S101 (verify_installed read it)
    if parsed is not None and parsed[0] == manifest_name:
        plugin = parsed[1].get("plugin")
    else:
        try:
            plugin = _manifest_document(item.path / manifest_name).get("plugin")
        except (OSError, ManifestTOMLError):
            return None
    if not isinstance(plugin, dict):
        return None
    found_id, found_version = plugin.get("id"), plugin.get("version")
    if not isinstance(found_id, str) or not isinstance(found_version, str):
        return None
    if (found_id, found_version) == (receipt.id, receipt.version):
        return None
    return (
        f"the receipt names {receipt.id} {receipt.version}, but its {manifest_name} is "
        f"{found_id} {found_version} (the receipt was edited)"
    )
