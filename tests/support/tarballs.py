"""Build plugin release tarballs for install tests with :mod:`tarfile`, good or malicious.

``write_plugin(directory, "hello", "1.0.0")`` writes a valid noarch release (tarball and
``.sha256`` sidecar, as ``nexo plugin pack`` names them). ``targz(members)`` builds any archive
from :class:`Member` specs, including links, devices and PAX tricks.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path


def manifest_text(plugin_id: str, version: str, *, extra: str = "") -> str:
    """A ``nexo-plugin.toml`` that lints clean."""
    return (
        "manifest_version = 2\n\n"
        "[plugin]\n"
        f'id = "{plugin_id}"\n'
        f'version = "{version}"\n'
        f'name = "{plugin_id.capitalize()} plugin"\n'
        'description = "A plugin used by the install tests."\n'
        'min_nexo_version = ">=0.1.0"\n'
        f"{extra}"
    )


def launcher_text() -> str:
    return (
        "#!/usr/bin/env bash\n"
        'DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"\n'
        'exec env PYTHONPATH="$DIR/lib" python3 "$DIR/lib/plugin/main.py" "$@"\n'
    )


@dataclass
class Member:
    """One archive member; ``kind`` is a tarfile type constant (REGTYPE, SYMTYPE, ...)."""

    name: str
    data: bytes = b""
    kind: bytes = tarfile.REGTYPE
    mode: int = 0o644
    linkname: str = ""
    pax: dict[str, str] = field(default_factory=dict)


def file(name: str, data: bytes | str, mode: int = 0o644) -> Member:
    return Member(name, data.encode() if isinstance(data, str) else data, mode=mode)


def directory(name: str, mode: int = 0o755) -> Member:
    return Member(name, kind=tarfile.DIRTYPE, mode=mode)


def plugin_members(
    plugin_id: str, version: str, *, manifest: str | None = None, payload: bytes = b""
) -> list[Member]:
    """The members of a valid noarch plugin (``payload`` adds ``lib/plugin/data.bin``)."""
    members = [
        file(
            "nexo-plugin.toml",
            manifest if manifest is not None else manifest_text(plugin_id, version),
        ),
        directory("bin"),
        file(f"bin/{plugin_id}", launcher_text(), mode=0o755),
        directory("lib"),
        directory("lib/plugin"),
        file("lib/plugin/main.py", "print('hello')\n"),
    ]
    if payload:
        members.append(file("lib/plugin/data.bin", payload))
    return members


def tar_bytes(members: Iterable[Member], *, fmt: int = tarfile.PAX_FORMAT) -> bytes:
    """An uncompressed tar of ``members`` (no validation whatsoever)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=fmt) as archive:
        for member in members:
            info = tarfile.TarInfo(member.name)
            info.type = member.kind
            info.mode = member.mode
            info.mtime = 1_700_000_000
            info.linkname = member.linkname
            info.pax_headers = dict(member.pax)
            if member.kind in (tarfile.REGTYPE, tarfile.AREGTYPE):
                info.size = len(member.data)
                archive.addfile(info, io.BytesIO(member.data))
            else:
                archive.addfile(info)
    return buffer.getvalue()


def gzip_bytes(raw: bytes) -> bytes:
    return gzip.compress(raw, compresslevel=6, mtime=0)


def targz(members: Iterable[Member], *, fmt: int = tarfile.PAX_FORMAT) -> bytes:
    return gzip_bytes(tar_bytes(members, fmt=fmt))


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sidecar_line(data: bytes, name: str) -> str:
    """The ``<hex>  <name>`` line ``pack`` writes (``sha256sum -c`` compatible)."""
    return f"{sha256_hex(data)}  {name}\n"


def asset_name(plugin_id: str, version: str, target: str = "noarch") -> str:
    return f"{plugin_id}-{version}-{target}.tar.gz"


def plugin_tarball(
    plugin_id: str, version: str, *, manifest: str | None = None, payload: bytes = b""
) -> bytes:
    """The bytes of a valid plugin tarball (arguments as :func:`plugin_members`)."""
    return targz(plugin_members(plugin_id, version, manifest=manifest, payload=payload))


def release_assets(
    plugin_id: str,
    version: str,
    *,
    target: str = "noarch",
    data: bytes | None = None,
    sidecar: bool = True,
    manifest_asset: bool = True,
) -> dict[str, bytes]:
    """Assets of a release as ``pack`` produces them: tarball, ``.sha256``, manifest copy."""
    tarball = data if data is not None else plugin_tarball(plugin_id, version)
    name = asset_name(plugin_id, version, target)
    assets = {name: tarball}
    if sidecar:
        assets[name + ".sha256"] = sidecar_line(tarball, name).encode()
    if manifest_asset:
        assets["nexo-plugin.toml"] = manifest_text(plugin_id, version).encode()
    return assets


def write_plugin(
    directory: Path,
    plugin_id: str,
    version: str,
    *,
    target: str = "noarch",
    data: bytes | None = None,
    sidecar: bool = True,
) -> Path:
    """Write a release tarball (and its sidecar) into ``directory``; return the tarball path."""
    directory.mkdir(parents=True, exist_ok=True)
    tarball = data if data is not None else plugin_tarball(plugin_id, version)
    path = directory / asset_name(plugin_id, version, target)
    path.write_bytes(tarball)
    if sidecar:
        path.with_name(path.name + ".sha256").write_text(sidecar_line(tarball, path.name))
    return path


def tree_snapshot(root: Path) -> dict[str, tuple[str, int, str]]:
    """Every entry below ``root``: kind, mode and content hash (or link target).

    Two equal snapshots mean the tree is byte-for-byte the same. A missing root is ``{}``.
    A FIFO, socket or device is recorded by its type and mode, never opened (a FIFO's read
    would wait for a writer).
    """
    snapshot: dict[str, tuple[str, int, str]] = {}
    if not root.exists():
        return snapshot
    snapshot["."] = ("dir", stat.S_IMODE(root.stat().st_mode), "")
    for current, dirs, files in os.walk(root):
        base = Path(current)
        for name in [*dirs, *files]:
            path = base / name
            relative = path.relative_to(root).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                snapshot[relative] = ("link", 0, str(path.readlink()))
            elif stat.S_ISDIR(info.st_mode):
                snapshot[relative] = ("dir", stat.S_IMODE(info.st_mode), "")
            elif not stat.S_ISREG(info.st_mode):
                snapshot[relative] = ("special", info.st_mode, "")
            else:
                digest = sha256_hex(path.read_bytes())
                snapshot[relative] = ("file", stat.S_IMODE(info.st_mode), digest)
    return snapshot
