"""The vendored distributions of a plugin tree, read from their ``*.dist-info`` directories
(name, version, declared licence, requirements) and from pip's installation report (the
sha256 of the archive pip installed each one from).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

from nexo_pkg.core.files import read_capped_bytes

# A METADATA file is a few kilobytes (a long description at most a few hundred).
_MAX_METADATA_BYTES = 8 * 1024 * 1024
_NAME_NORMALISER = re.compile(r"[-_.]+")
_HEX = re.compile(r"^[0-9a-f]{64}$")
# A declared `License:` longer than this is the licence's text, not its name.
_MAX_LICENSE_NAME = 100
_CLASSIFIER_PREFIX = "License :: "


class InventoryError(ValueError):
    """A vendored tree or installation report that cannot be read; the message names the
    file."""


def canonical_name(name: str) -> str:
    """The PEP 503 normal form (``Typing_Extensions`` → ``typing-extensions``)."""
    return _NAME_NORMALISER.sub("-", name).lower()


@dataclass(frozen=True)
class Requirement:
    """One ``Requires-Dist`` line: the distribution it names, its marker (or ``None``) and
    the extras it asks of that distribution (``beta[fast]``)."""

    name: str
    marker: str | None = None
    extras: tuple[str, ...] = ()


@dataclass(frozen=True)
class Package:
    """One vendored distribution."""

    name: str
    version: str
    #: Where it lives in the tree (``lib/httpx-0.28.1.dist-info``).
    dist_info: str
    #: The SPDX expression it declares (``License-Expression``), else its ``License:`` name,
    #: else its licence classifiers; empty when it declares none.
    licenses: tuple[str, ...] = ()
    license_is_expression: bool = False
    #: The sha256 (hex) of the wheel or sdist pip installed it from, when known.
    sha256: str | None = None
    requires: tuple[Requirement, ...] = ()
    #: Named in the requirements file (rather than pulled in by another package).
    requested: bool = False
    extras: tuple[str, ...] = ()
    #: Installed from a direct reference (PEP 610: a local directory, a ``file:`` URL, a VCS
    #: checkout, an archive URL), not from a package index: it has no ``pkg:pypi`` purl.
    direct: bool = False

    @property
    def key(self) -> str:
        return canonical_name(self.name)

    @property
    def purl(self) -> str | None:
        """``pkg:pypi/<name>@<version>``, the name lowercased with ``_`` as ``-`` and its
        dots kept (the purl specification's PyPI type: ``Zope.Event_Hub`` is
        ``zope.event-hub``, not PEP 503's ``zope-event-hub``), percent-encoded as
        packageurl-python writes it (``1!2.0`` is ``1%212.0``, ``1.0+local`` is
        ``1.0%2Blocal``): the SBOM's ``purl``, its ``bom-ref`` and ``list --json`` say the
        same. ``None`` for a :attr:`direct` package: it is not PyPI's, and a purl naming
        PyPI's project of that name would send a scanner to another package."""
        if self.direct:
            return None
        from urllib.parse import quote  # noqa: PLC0415

        name = self.name.lower().replace("_", "-")
        return f"pkg:pypi/{quote(name)}@{quote(self.version, safe=':')}"

    @property
    def ref(self) -> str:
        """The SBOM's ``bom-ref``: the :attr:`purl`, else ``direct:<name>@<version>`` (the
        name as PEP 503 normalises it, percent-encoded as the purl is)."""
        if self.purl is not None:
            return self.purl
        from urllib.parse import quote  # noqa: PLC0415

        return f"direct:{quote(self.key)}@{quote(self.version, safe=':')}"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "purl": self.purl,
            "licenses": list(self.licenses),
            "sha256": self.sha256,
        }


@dataclass(frozen=True)
class Inventory:
    """What a plugin tree holds: its vendored packages, and whether the list is known to be
    complete (a ``lib/`` with code but no ``*.dist-info`` is not)."""

    packages: tuple[Package, ...] = ()
    warnings: tuple[str, ...] = field(default=())


def _metadata(dist_info: Path) -> Any:
    path = dist_info / "METADATA"
    try:
        raw = read_capped_bytes(path, _MAX_METADATA_BYTES, follow_links=False)
    except FileNotFoundError as exc:
        raise InventoryError(f"{path} is missing") from exc
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise InventoryError(f"cannot read {path}: {reason}") from exc
    return HeaderParser().parsestr(raw.decode("utf-8", errors="replace"))


def declared_licenses(metadata: Any) -> tuple[tuple[str, ...], bool]:
    """``(licences, is_expression)`` as the distribution declares them (see :class:`Package`)."""
    expression = (metadata.get("License-Expression") or "").strip()
    if expression:
        return (expression,), True
    text = (metadata.get("License") or "").strip()
    if text and "\n" not in text and len(text) <= _MAX_LICENSE_NAME and text.upper() != "UNKNOWN":
        return (text,), False
    classifiers = [
        str(value).strip().rsplit(" :: ", 1)[-1]
        for value in metadata.get_all("Classifier") or []
        if str(value).strip().startswith(_CLASSIFIER_PREFIX)
    ]
    names = tuple(dict.fromkeys(name for name in classifiers if name and name != "OSI Approved"))
    return names, False


def _requirement(line: str) -> Requirement | None:
    text, _, marker = line.partition(";")
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?", text)
    if match is None:
        return None
    extras = (canonical_name(e.strip()) for e in (match.group(2) or "").split(","))
    return Requirement(
        canonical_name(match.group(1)),
        marker.strip() or None,
        tuple(sorted({extra for extra in extras if extra})),
    )


def read_package(dist_info: Path, archive_prefix: str) -> Package:
    """The distribution of one ``*.dist-info`` directory; :class:`InventoryError` naming
    ``METADATA`` when it is missing, unreadable or has no name or version."""
    metadata = _metadata(dist_info)
    name = str(metadata.get("Name") or "").strip()
    version = str(metadata.get("Version") or "").strip()
    if not name or not version:
        raise InventoryError(f"{dist_info / 'METADATA'} has no Name or Version")
    licenses, is_expression = declared_licenses(metadata)
    requires = tuple(
        requirement
        for line in metadata.get_all("Requires-Dist") or []
        if (requirement := _requirement(str(line))) is not None
    )
    return Package(
        name=name,
        version=version,
        dist_info=f"{archive_prefix}/{dist_info.name}",
        licenses=licenses,
        license_is_expression=is_expression,
        requires=requires,
        direct=(dist_info / "direct_url.json").is_file(),
    )


def read_tree(lib: Path, archive_prefix: str = "lib") -> Inventory:
    """The packages vendored in ``lib`` (a plugin's ``lib/``, its own ``lib/plugin`` left
    out). A ``lib/`` holding code but no ``*.dist-info`` gives a warning naming it: its
    packages cannot be listed."""
    if not lib.is_dir() or lib.is_symlink():
        return Inventory()
    try:
        children = sorted(lib.iterdir())
    except OSError as exc:
        raise InventoryError(f"cannot read {lib}: {exc.strerror}") from exc
    dist_infos = [
        child for child in children if child.name.endswith(".dist-info") and child.is_dir()
    ]
    packages = tuple(read_package(path, archive_prefix) for path in dist_infos)
    owned = {canonical_name(p.name).replace("-", "_") for p in packages}
    strays = [
        child.name
        for child in children
        if child.name not in {"plugin", "bin"}
        and not child.name.endswith((".dist-info", ".pth"))
        and child.name.removesuffix(".py").lower() not in owned
        and not child.name.startswith(".")
    ]
    warnings: tuple[str, ...] = ()
    if strays and not packages:
        warnings = (
            f"{lib} holds {', '.join(strays[:5])}{' …' if len(strays) > 5 else ''} but no "
            "*.dist-info: its vendored packages cannot be listed",
        )
    return Inventory(packages, warnings)


def _report_sha256(item: Mapping[str, Any]) -> str | None:
    info = item.get("download_info")
    archive = info.get("archive_info") if isinstance(info, dict) else None
    if not isinstance(archive, dict):
        return None
    hashes = archive.get("hashes")
    digest = hashes.get("sha256") if isinstance(hashes, dict) else None
    if digest is None and isinstance(archive.get("hash"), str):
        algorithm, _, value = archive["hash"].partition("=")
        digest = value if algorithm == "sha256" else None
    return digest if isinstance(digest, str) and _HEX.fullmatch(digest) else None


def apply_report(inventory: Inventory, report: Any, where: str) -> Inventory:
    """Complete ``inventory`` (read from the tree pip just filled) with pip's installation
    report (``pip install --report``, format version 1): each package's archive sha256,
    whether it was requested and with which extras. Every package of the tree must be in the
    report and every reported install in the tree; :class:`InventoryError` naming ``where``
    otherwise."""
    installs = report.get("install") if isinstance(report, dict) else None
    if report is None or not isinstance(installs, list):
        raise InventoryError(f"{where} is not a pip installation report (no `install` list)")
    by_key: dict[str, Mapping[str, Any]] = {}
    for item in installs:
        metadata = item.get("metadata") if isinstance(item, dict) else None
        if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str):
            raise InventoryError(f"{where} lists an install without metadata.name")
        by_key[canonical_name(metadata["name"])] = item
    packages: list[Package] = []
    for package in inventory.packages:
        item = by_key.pop(package.key, None)
        if item is None:
            raise InventoryError(f"{package.dist_info} is not in pip's installation report {where}")
        extras = item.get("requested_extras")
        packages.append(
            replace(
                package,
                sha256=_report_sha256(item),
                requested=item.get("requested") is True,
                direct=package.direct or item.get("is_direct") is True,
                extras=tuple(sorted(e for e in extras if isinstance(e, str)))
                if isinstance(extras, list)
                else (),
            )
        )
    if by_key:
        raise InventoryError(
            f"{where} lists {', '.join(sorted(by_key))}, which left no *.dist-info in the tree"
        )
    return Inventory(tuple(packages), inventory.warnings)


def dependency_graph(
    packages: Iterable[Package], environment: Mapping[str, str] | None = None
) -> dict[str, tuple[str, ...]]:
    """For each package (by key), the vendored packages it requires: a ``Requires-Dist``
    whose marker holds in ``environment`` (pip's report's, else this interpreter's) for no
    extra or one of the package's extras: those requested of it, and those another vendored
    package asks of it (``beta[fast]``), as pip resolved them."""
    from packaging.markers import InvalidMarker, Marker  # noqa: PLC0415

    present = {package.key: package for package in packages}
    extras = {key: {canonical_name(e) for e in p.extras} for key, p in present.items()}
    graph: dict[str, set[str]] = {key: set() for key in present}
    changed = True
    while changed:  # an extra asked of a package may open requirements asking for more
        changed = False
        for key, package in present.items():
            for requirement in package.requires:
                if requirement.name not in present or requirement.name == key:
                    continue
                if not _holds(requirement.marker, extras[key], environment, Marker, InvalidMarker):
                    continue
                graph[key].add(requirement.name)
                more = set(requirement.extras) - extras[requirement.name]
                if more:
                    extras[requirement.name] |= more
                    changed = True
    return {key: tuple(sorted(needed)) for key, needed in graph.items()}


def _holds(
    marker: str | None,
    extras: Iterable[str],
    environment: Mapping[str, str] | None,
    parse: Any,
    invalid: type[Exception],
) -> bool:
    """Whether a requirement's ``marker`` holds for no extra or one of ``extras``."""
    if marker is None:
        return True
    try:
        parsed = parse(marker)
    except invalid:
        return False
    return any(
        parsed.evaluate({**(environment or {}), "extra": extra}) for extra in ("", *sorted(extras))
    )


def roots(packages: Iterable[Package], graph: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The packages the plugin itself depends on: those requested, else (when that is not
    known, as for a tree read back) those no other vendored package requires, and then one of
    each ring of packages requiring one another that none of those reaches (``a`` needs ``b``
    and ``b`` needs ``a``): every vendored package is reached from the plugin."""
    listed = list(packages)
    requested = [package.key for package in listed if package.requested]
    if requested:
        return tuple(sorted(requested))
    required = {name for names in graph.values() for name in names}
    found = sorted(package.key for package in listed if package.key not in required)
    reached: set[str] = set()

    def reach(start: str) -> None:
        pending = [start]
        while pending:
            key = pending.pop()
            if key not in reached:
                reached.add(key)
                pending.extend(graph.get(key, ()))

    for key in found:
        reach(key)
    for key in sorted(package.key for package in listed):
        if key not in reached:
            found.append(key)
            reach(key)
    return tuple(sorted(found))


def files_digest(files: Mapping[str, str]) -> str:
    """The sha256 (hex) of ``<sha256>  <path>\\n`` lines, one per file, sorted by path (UTF-8
    bytes): ``sha256sum`` of the files, hashed. Applied to every file of a tarball but the SBOM
    itself, it is what the SBOM's serial number is derived from (docs/pack.md, "SBOM")."""
    hasher = hashlib.sha256()
    for path in sorted(files, key=lambda name: name.encode("utf-8", "surrogateescape")):
        hasher.update(f"{files[path]}  {path}\n".encode("utf-8", "surrogateescape"))
    return hasher.hexdigest()
