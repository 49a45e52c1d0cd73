"""The pure-Python audit of a noarch tree: no compiled code may ride in a ``noarch`` tarball
(what counts as native: docs/pack.md). Files are traced back to their distribution through
each ``RECORD``.
"""

from __future__ import annotations

import csv
import io
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path

from nexo_pkg.core.terminal import printable
from nexo_pkg.pack.archive import ArchiveEntry
from nexo_pkg.pack.errors import PackError

NATIVE_SUFFIXES = (".so", ".pyd", ".dylib", ".dll")

PER_TARGET_HINT = (
    "hint: noarch tarballs must run on every CPU; drop the native dependency (or use its "
    "pure-Python variant), or ship per-target tarballs built with "
    "`nexo plugin pack --target TRIPLE` (one per Linux or macOS triple: each vendors that "
    "platform's wheels)"
)
#: Compiled code no Linux or macOS host loads: refused in a tarball for a triple.
WINDOWS_SUFFIXES = (".pyd", ".dll")


@dataclass(frozen=True)
class Offender:
    """One reason the tree is not pure Python."""

    path: str
    distribution: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "distribution": self.distribution, "reason": self.reason}

    def describe(self) -> str:
        return f"{self.path} ({self.distribution}): {self.reason}"


@dataclass(frozen=True)
class Distribution:
    """An installed distribution found in the vendored tree."""

    label: str
    dist_info: str
    purelib: bool | None
    tags: tuple[str, ...]
    files: frozenset[str]


def is_native_file(name: str) -> bool:
    """True for shared libraries and extension modules, including ``libfoo.so.1.2``."""
    base = posixpath.basename(name).lower()
    return base.endswith(NATIVE_SUFFIXES) or ".so." in base


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise PackError(f"cannot read {path}: {exc.strerror}", kind="io") from exc


def read_distribution(dist_info: Path, archive_prefix: str) -> Distribution:
    """Read a ``*.dist-info`` directory; file paths in the result are archive names."""
    metadata = HeaderParser().parsestr(_read_text(dist_info / "METADATA"))
    stem = dist_info.name.removesuffix(".dist-info")
    name = metadata.get("Name") or stem.rsplit("-", 1)[0]
    version = metadata.get("Version") or (stem.rsplit("-", 1)[1] if "-" in stem else "")
    wheel = HeaderParser().parsestr(_read_text(dist_info / "WHEEL"))
    purelib_text = wheel.get("Root-Is-Purelib")
    purelib = None if purelib_text is None else purelib_text.strip().lower() == "true"
    tags = tuple(tag.strip() for tag in wheel.get_all("Tag") or [])
    rows = csv.reader(io.StringIO(_read_text(dist_info / "RECORD")))
    relatives = {posixpath.normpath(row[0]) for row in rows if row and row[0]}
    files = {f"{archive_prefix}/{path}" for path in relatives if not path.startswith("../")}
    label = f"{name} {version}".strip()
    location = f"{archive_prefix}/{dist_info.name}"
    return Distribution(label, location, purelib, tags, frozenset(files))


def find_distributions(vendor_root: Path, archive_prefix: str) -> list[Distribution]:
    """Every ``*.dist-info`` directly under ``vendor_root``, in name order."""
    return [
        read_distribution(path, archive_prefix)
        for path in sorted(vendor_root.glob("*.dist-info"))
        if path.is_dir()
    ]


def find_offenders(
    entries: Iterable[ArchiveEntry], distributions: Iterable[Distribution]
) -> list[Offender]:
    """List every native file and every non-pure distribution, in archive order."""
    dists = list(distributions)
    # A file two distributions list belongs to the first of them.
    owner = {name: dist.label for dist in reversed(dists) for name in dist.files}
    offenders: list[Offender] = []
    for dist in dists:
        if dist.purelib is False:
            offenders.append(
                Offender(f"{dist.dist_info}/WHEEL", dist.label, "Root-Is-Purelib: false")
            )
        platform_tags = [tag for tag in dist.tags if tag.strip().split("-")[1:] != ["none", "any"]]
        if platform_tags:
            offenders.append(
                Offender(
                    f"{dist.dist_info}/WHEEL",
                    dist.label,
                    "wheel tag " + ", ".join(platform_tags) + " is not <python>-none-any",
                )
            )
    for entry in sorted(entries, key=lambda item: item.name):
        if entry.is_dir or not is_native_file(entry.name):
            continue
        if entry.name.startswith("lib/plugin/"):
            source = "the plugin's own src/"
        else:
            source = owner.get(entry.name, "no installed distribution")
        offenders.append(Offender(entry.name, source, "native code (shared library)"))
    return offenders


def audit_noarch(entries: Iterable[ArchiveEntry], distributions: Iterable[Distribution]) -> None:
    """Raise ``native_code`` (exit 1) listing every offender, or return when the tree is pure."""
    offenders = find_offenders(entries, distributions)
    if offenders:
        _refuse(offenders, "a noarch tarball must be pure Python", PER_TARGET_HINT)


def audit_target(entries: Iterable[ArchiveEntry], triple: str) -> None:
    """Raise ``native_code`` (exit 1) listing every Windows binary (``.pyd``, ``.dll``) of the
    Python tree of a tarball for ``triple`` (a Linux or macOS host, which loads neither; pip
    already took that platform's wheels)."""
    offenders = [
        Offender(entry.name, "the plugin's own src/", "Windows code (.pyd/.dll)")
        if entry.name.startswith("lib/plugin/")
        else Offender(entry.name, "the vendored tree", "Windows code (.pyd/.dll)")
        for entry in sorted(entries, key=lambda item: item.name)
        if not entry.is_dir and entry.name.lower().endswith(WINDOWS_SUFFIXES)
    ]
    if offenders:
        _refuse(
            offenders,
            f"a tarball for {triple} cannot hold Windows code",
            "hint: remove the Windows binaries (.pyd, .dll): no host the daemon runs on loads them",
        )


def _refuse(offenders: list[Offender], headline: str, hint: str) -> None:
    count = len(offenders)
    lines = [f"{headline}; found {count} {'offender' if count == 1 else 'offenders'}:"]
    # Names come from the tree and its wheels: escaped here, so only these line feeds remain.
    lines += [f"  - {printable(offender.describe())}" for offender in offenders]
    lines.append(hint)
    raise PackError(
        "\n".join(lines),
        kind="native_code",
        details={"offenders": [offender.to_json() for offender in offenders]},
        multiline=True,
    )
