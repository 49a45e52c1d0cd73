"""Plugin trees shaped like real releases, for the install and pack benchmarks.

Real plugins ship thousands of small vendored files (``lib/`` is a ``site-packages``), a few
native libraries and some data. Three shapes:

* ``vendored``: 3,000 files, ~75 MiB: the Python sources, metadata and native libraries of
  this interpreter's ``site-packages`` (copied, so compression sees real input), topped up
  with binary-like data files (half random, half repetitive, as ``.so`` and model files are)
  until the total is reached;
* ``small``: 10,000 small files of 1-6 KiB of Python-like text;
* ``tiny``: the manifest, the launcher and one module (a 3.5 KiB plugin);
* ``one-big-file``: one 100 MiB file (for memory: peak RSS must not follow it).

:func:`plugin_tree` makes a plugin root (``nexo-plugin.toml``, ``bin/<id>``, ``lib/``), what
``install`` unpacks; :func:`tar_gz` packs one the way ``nexo plugin pack`` does.
:func:`pack_project` makes the same payload as a project for ``nexo plugin pack``.
"""

from __future__ import annotations

import io
import os
import random
import shutil
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.tarballs import launcher_text, manifest_text

MiB = 1024 * 1024
SEED = 20_261_123


def _skeleton(root: Path, plugin_id: str, version: str) -> Path:
    """Manifest, launcher and one module; returns the directory vendored files go in."""
    (root / "bin").mkdir(parents=True)
    (root / "lib" / "plugin").mkdir(parents=True)
    (root / "nexo-plugin.toml").write_text(manifest_text(plugin_id, version))
    launcher = root / "bin" / plugin_id
    launcher.write_text(launcher_text())
    launcher.chmod(0o755)
    (root / "lib" / "plugin" / "main.py").write_text("print('hello')\n" + "# padding\n" * 300)
    return root / "lib"


def _binary_like(rng: random.Random, size: int) -> bytes:
    """Half random bytes, half runs of repeated 64-byte patterns: compresses about 2:1."""
    out = io.BytesIO()
    while out.tell() < size:
        out.write(rng.randbytes(4096))
        out.write(rng.randbytes(64) * 64)
    return out.getvalue()[:size]


def fill_vendored(target: Path, *, files: int, total_mib: int, pure: bool = False) -> None:
    """``files`` files, about ``total_mib`` MiB: site-packages, topped up with data files.

    ``pure`` leaves out native libraries and distribution metadata, which a noarch ``pack``
    refuses; the data files make up the difference.
    """
    rng = random.Random(SEED)
    site = Path(sysconfig.get_paths()["purelib"])
    data_files = max(1, files // 60)
    budget = total_mib * MiB
    copied = used = 0
    for path in sorted(site.rglob("*")):
        if copied >= files - data_files or used >= budget * 0.6:
            break
        if "__pycache__" in path.parts or path.is_symlink() or not path.is_file():
            continue
        if pure and (_is_native(path.name) or any(p.endswith(".dist-info") for p in path.parts)):
            continue
        size = path.stat().st_size
        if size > 4 * MiB:
            continue
        destination = target / "site" / path.relative_to(site)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)
        copied += 1
        used += size
    data_dir = target / "data"
    data_dir.mkdir(parents=True)
    remaining = files - copied
    left = max(budget - used, remaining * 4096)
    for index in range(remaining):
        size = left // (remaining - index)
        (data_dir / f"blob{index:03d}.bin").write_bytes(_binary_like(rng, size))
        left -= size


def _is_native(name: str) -> bool:
    return name.endswith((".so", ".pyd", ".dylib", ".dll")) or ".so." in name


def fill_uniform(target: Path, *, files: int, size: int = 4096) -> None:
    """``files`` files of exactly ``size`` bytes, 100 per directory: Python-like text (as
    :func:`fill_small` writes it), every tenth one random bytes (incompressible)."""
    rng = random.Random(SEED + 2)
    words = [f"name{index}" for index in range(400)]
    for index in range(files):
        directory = target / "uniform" / f"pkg{index // 100:03d}"
        if index % 100 == 0:
            directory.mkdir(parents=True)
        if index % 10 == 9:
            data, suffix = rng.randbytes(size), "bin"
        else:
            lines = []
            while sum(map(len, lines)) < size:
                lines.append(f"def {rng.choice(words)}(x):\n    return x + {rng.randint(0, 999)}\n")
            data, suffix = "".join(lines).encode()[:size], "py"
        (directory / f"mod{index % 100:03d}.{suffix}").write_bytes(data)


def fill_small(target: Path, *, files: int) -> None:
    """``files`` files of 1-6 KiB of Python-like text, 100 per directory."""
    rng = random.Random(SEED + 1)
    words = [f"name{index}" for index in range(400)]
    for index in range(files):
        directory = target / "vendor" / f"pkg{index // 100:03d}"
        if index % 100 == 0:
            directory.mkdir(parents=True)
        lines = []
        size = rng.randint(1024, 6144)
        while sum(map(len, lines)) < size:
            lines.append(f"def {rng.choice(words)}(x):\n    return x + {rng.randint(0, 999)}\n")
        (directory / f"mod{index % 100:03d}.py").write_text("".join(lines))


def fill_big_file(target: Path, *, size_mib: int) -> None:
    """One file of ``size_mib`` MiB of binary-like data (memory must stay flat)."""
    rng = random.Random(SEED + 2)
    target.mkdir(parents=True, exist_ok=True)
    with (target / "model.bin").open("wb") as handle:
        for _ in range(size_mib):
            handle.write(_binary_like(rng, MiB))


#: The shapes: what each is, and how to fill the vendored part of a tree with it. The plugin's
#: own three files (manifest, launcher, main module) come on top.
SHAPES: dict[str, tuple[str, Callable[[Path, bool], None]]] = {
    "vendored": (
        "3,000 files, 75 MiB: site-packages plus binary-like data",
        lambda target, pure: fill_vendored(target, files=2997, total_mib=75, pure=pure),
    ),
    "small": (
        "10,000 small files (1-6 KiB)",
        lambda target, pure: fill_small(target, files=9997),
    ),
    "tiny": ("a 3.5 KiB plugin: manifest, launcher, one module", lambda target, pure: None),
    "one-big-file": (
        "one 100 MiB file",
        lambda target, pure: fill_big_file(target, size_mib=100),
    ),
}


def plugin_tree(root: Path, shape: str, plugin_id: str, version: str) -> Path:
    """A plugin root (what an install unpacks) of the given shape."""
    SHAPES[shape][1](_skeleton(root, plugin_id, version), False)
    return root


def pack_project(root: Path, shape: str, plugin_id: str, version: str) -> Path:
    """A project for ``nexo plugin pack`` (manifest plus ``src/``) of the given shape, pure
    Python (a noarch pack refuses native code)."""
    src = root / "src"
    src.mkdir(parents=True)
    (root / "nexo-plugin.toml").write_text(
        manifest_text(
            plugin_id, version, extra=f'\n[plugin.entrypoint]\ncommand = "./bin/{plugin_id}"\n'
        )
    )
    (src / "main.py").write_text("print('hello')\n")
    SHAPES[shape][1](src, True)
    return root


def tar_gz(root: Path, out: Path, *, mtime: int = 1_700_000_000) -> bytes:
    """Pack the tree at ``root`` as ``nexo plugin pack`` writes archives; return the bytes."""
    from nexo_pkg.pack.archive import ArchiveEntry, write_tar_gz

    entries = []
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if path.is_dir():
            entries.append(ArchiveEntry(name, is_dir=True))
        else:
            executable = bool(path.stat().st_mode & 0o100)
            entries.append(ArchiveEntry(name, executable=executable, source=path))
    with out.open("wb") as handle:
        write_tar_gz(entries, handle, mtime=mtime)
    return out.read_bytes()


def tree_stats(root: Path) -> tuple[int, int]:
    """Files and bytes below ``root``."""
    count = size = 0
    for directory, _dirs, names in os.walk(root):
        for name in names:
            count += 1
            size += (Path(directory) / name).stat().st_size
    return count, size
