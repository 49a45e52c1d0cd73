"""Builders shared by the pack tests: plugin projects on disk and hand-made wheels."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from collections.abc import Callable
from pathlib import Path

MANIFEST = """\
[plugin]
id = "{plugin_id}"
version = "{version}"
name = "Demo"
description = "A plugin for tests."
min_nexo_version = ">=0.1.0"

[plugin.entrypoint]
command = "./bin/{plugin_id}"
"""

ProjectFactory = Callable[..., Path]
WheelFactory = Callable[..., Path]


def write_project(
    root: Path,
    *,
    plugin_id: str = "demo",
    version: str = "0.1.0",
    requirements: str | None = None,
    files: dict[str, str] | None = None,
) -> Path:
    """A minimal plugin project: manifest, src/main.py, optional requirements and files."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "nexo-plugin.toml").write_text(
        MANIFEST.format(plugin_id=plugin_id, version=version), encoding="utf-8"
    )
    (root / "src" / "main.py").write_text("print('hello')\n", encoding="utf-8")
    if requirements is not None:
        (root / "requirements.txt").write_text(requirements, encoding="utf-8")
    for relative, text in (files or {}).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def build_wheel(
    directory: Path,
    name: str,
    version: str,
    files: dict[str, bytes],
    *,
    purelib: bool,
    tag: str,
    metadata: str = "",
    executables: frozenset[str] = frozenset(),
) -> Path:
    """Write a real wheel (zip with METADATA, WHEEL and RECORD) that pip can install;
    ``metadata`` adds header lines to METADATA (``License-Expression: MIT\n``); the
    ``executables`` among ``files`` get an execute bit in the zip (0755)."""
    dist_info = f"{name}-{version}.dist-info"
    contents = dict(files)
    contents[f"{dist_info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{metadata}"
    ).encode()
    contents[f"{dist_info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: nexo-pkg-tests\n"
        f"Root-Is-Purelib: {'true' if purelib else 'false'}\nTag: {tag}\n"
    ).encode()
    record = "".join(
        f"{path},{_record_hash(data)},{len(data)}\n" for path, data in contents.items()
    )
    record += f"{dist_info}/RECORD,,\n"
    contents[f"{dist_info}/RECORD"] = record.encode()
    directory.mkdir(parents=True, exist_ok=True)
    wheel = directory / f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in contents.items():
            if path in executables:
                entry = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
                entry.external_attr = 0o100755 << 16
                archive.writestr(entry, data)
            else:
                archive.writestr(path, data)
    return wheel
