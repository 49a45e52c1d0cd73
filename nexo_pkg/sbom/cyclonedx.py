"""CycloneDX 1.6 JSON documents of plugin inventories, written and read with the OWASP
project's own ``cyclonedx-python-lib`` (imported here only: ``pack`` and ``sbom`` pay for it,
``lint`` and ``install`` do not).

A plugin's SBOM: the plugin as ``metadata.component`` (an application, its target and the
digest of its files as properties), one library component per vendored distribution (name,
version, ``pkg:pypi`` purl, licence as declared, sha256 of the archive pip installed), and the
dependency graph. Reproducible: the timestamp is the tarball's ``SOURCE_DATE_EPOCH`` and the
serial number is derived from the digest of the tarball's other files
(:func:`serial_number`); keys are written sorted, two-space indented.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cache
from typing import Any

from nexo_pkg import __version__
from nexo_pkg.sbom import SbomError, load_json
from nexo_pkg.sbom.inventory import Package, Requirement, canonical_name, dependency_graph, roots

FILES_PROPERTY = "nexo:files-sha256"
TARGET_PROPERTY = "nexo:target"
ORIGIN_PROPERTY = "nexo:sbom-origin"
PLUGIN_PROPERTY = "nexo:plugin"
#: ``pack`` wrote it (and the tarball carried it), or ``sbom`` derived it from the tree's
#: ``*.dist-info``.
ORIGIN_PACK = "pack"
ORIGIN_DERIVED = "derived"


@dataclass(frozen=True)
class PluginSbom:
    """One plugin and what it vendors, as an SBOM states it."""

    plugin_id: str
    version: str
    target: str
    packages: tuple[Package, ...]
    origin: str = ORIGIN_PACK
    epoch: int = 0
    files_sha256: str | None = None
    environment: Mapping[str, str] | None = field(default=None, compare=False)


def serial_number(files_sha256: str) -> uuid.UUID:
    """``uuid5(NAMESPACE_URL, "urn:nexo-pkg:files:sha256:<hex>")``, where ``<hex>`` is
    :func:`~nexo_pkg.sbom.inventory.files_digest` of every file of the tarball but the SBOM."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"urn:nexo-pkg:files:sha256:{files_sha256}")


def _content_serial(sbom: PluginSbom) -> uuid.UUID:
    """The serial number of an SBOM with no files digest (derived for a tree whose receipt
    has no file hashes): from what it says, so the same tree gives the same document (the
    library would draw a random one)."""
    lines = [f"{sbom.plugin_id}@{sbom.version} {sbom.target} {sbom.origin} {sbom.epoch}"]
    lines += sorted(f"{p.ref} {p.sha256 or '-'}" for p in sbom.packages)
    return uuid.uuid5(uuid.NAMESPACE_URL, "urn:nexo-pkg:content:" + "\n".join(lines))


def _licenses(package: Package) -> list[Any]:
    from cyclonedx.model.license import DisjunctiveLicense, LicenseExpression  # noqa: PLC0415

    if package.license_is_expression:
        return [LicenseExpression(package.licenses[0])]
    return [DisjunctiveLicense(name=name) for name in package.licenses]


def _component(package: Package, bom_ref: str, properties: Iterable[tuple[str, str]]) -> Any:
    from cyclonedx.model import HashAlgorithm, HashType, Property  # noqa: PLC0415
    from cyclonedx.model.component import Component, ComponentType  # noqa: PLC0415
    from packageurl import PackageURL  # noqa: PLC0415

    hashes = [HashType(alg=HashAlgorithm.SHA_256, content=package.sha256)] if package.sha256 else []
    return Component(
        name=package.name,
        version=package.version,
        type=ComponentType.LIBRARY,
        bom_ref=bom_ref,
        purl=None if package.purl is None else PackageURL.from_string(package.purl),
        licenses=_licenses(package),
        hashes=hashes,
        properties=[Property(name=key, value=value) for key, value in properties],
    )


def _root(sbom: PluginSbom, bom_ref: str, with_properties: bool = True) -> Any:
    from cyclonedx.model import Property  # noqa: PLC0415
    from cyclonedx.model.component import Component, ComponentType  # noqa: PLC0415

    properties = [(TARGET_PROPERTY, sbom.target), (ORIGIN_PROPERTY, sbom.origin)]
    if sbom.files_sha256 is not None:
        properties.append((FILES_PROPERTY, sbom.files_sha256))
    return Component(
        name=sbom.plugin_id,
        version=sbom.version,
        type=ComponentType.APPLICATION,
        bom_ref=bom_ref,
        properties=[Property(name=k, value=v) for k, v in properties] if with_properties else [],
    )


def _tools() -> Any:
    from cyclonedx.model.component import Component, ComponentType  # noqa: PLC0415
    from cyclonedx.model.tool import ToolRepository  # noqa: PLC0415

    nexo = Component(name="nexo-pkg", version=__version__, type=ComponentType.APPLICATION)
    return ToolRepository(components=[nexo])


def _add_plugin(bom: Any, sbom: PluginSbom, root: Any, prefix: str, tag: bool) -> None:
    """The components of ``sbom``'s packages, and its dependency graph under ``root``."""
    from cyclonedx.model.dependency import Dependency  # noqa: PLC0415

    components: dict[str, Any] = {}
    label = f"{sbom.plugin_id}@{sbom.version}"
    for package in sbom.packages:
        properties = [(PLUGIN_PROPERTY, label)] if tag else []
        components[package.key] = _component(package, prefix + package.ref, properties)
        bom.components.add(components[package.key])
    graph = dependency_graph(sbom.packages, sbom.environment)
    for key, needed in graph.items():
        bom.dependencies.add(
            Dependency(
                ref=components[key].bom_ref,
                dependencies=[Dependency(ref=components[name].bom_ref) for name in needed],
            )
        )
    direct = roots(sbom.packages, graph)
    bom.dependencies.add(
        Dependency(
            ref=root.bom_ref, dependencies=[Dependency(ref=components[k].bom_ref) for k in direct]
        )
    )


def _render(bom: Any) -> bytes:
    from cyclonedx.output.json import JsonV1Dot6  # noqa: PLC0415

    text = JsonV1Dot6(bom).output_as_string()
    return (json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n").encode("utf-8")


def write_sbom(sbom: PluginSbom) -> bytes:
    """The CycloneDX 1.6 JSON bytes of one plugin's SBOM."""
    from cyclonedx.model.bom import Bom, BomMetaData  # noqa: PLC0415

    root = _root(sbom, f"plugin:{sbom.plugin_id}@{sbom.version}")
    bom = Bom(
        serial_number=(
            serial_number(sbom.files_sha256) if sbom.files_sha256 else _content_serial(sbom)
        ),
        metadata=BomMetaData(
            component=root, timestamp=datetime.fromtimestamp(sbom.epoch, UTC), tools=_tools()
        ),
    )
    _add_plugin(bom, sbom, root, "", tag=False)
    return _render(bom)


def write_merged(sboms: list[PluginSbom], host: str) -> bytes:
    """One document for several plugins (``sbom --all``): ``host`` as ``metadata.component``,
    each plugin an application component depending on its own vendored packages (their
    bom-refs prefixed by the plugin, each tagged with a ``nexo:plugin`` property), so one
    scanner run covers the whole root. Reproducible: the serial number is derived from the
    plugins' own, the timestamp is the newest of theirs."""
    from cyclonedx.model.bom import Bom, BomMetaData  # noqa: PLC0415
    from cyclonedx.model.component import Component, ComponentType  # noqa: PLC0415
    from cyclonedx.model.dependency import Dependency  # noqa: PLC0415

    seed = "\n".join(
        f"{s.plugin_id}@{s.version} {s.target} {s.origin} {s.files_sha256}" for s in sboms
    )
    top = Component(name=host, type=ComponentType.PLATFORM, bom_ref="nexo-plugin-root")
    bom = Bom(
        serial_number=uuid.uuid5(uuid.NAMESPACE_URL, f"urn:nexo-pkg:root:{seed}"),
        metadata=BomMetaData(
            component=top,
            timestamp=datetime.fromtimestamp(max((s.epoch for s in sboms), default=0), UTC),
            tools=_tools(),
        ),
    )
    refs = []
    # The same id and version in two roots (one shadowing the other) are two trees on disk:
    # each keeps its components, under refs of its own (a bom-ref met twice would be renamed
    # at random by the library, and identical components merged into one).
    seen: dict[str, int] = {}
    for sbom in sboms:
        label = f"plugin:{sbom.plugin_id}@{sbom.version}"
        seen[label] = seen.get(label, 0) + 1
        ref = label if seen[label] == 1 else f"{label}#{seen[label]}"
        root = _root(sbom, ref)
        bom.components.add(root)
        _add_plugin(bom, sbom, root, f"{ref}|", tag=True)
        refs.append(Dependency(ref=root.bom_ref))
    bom.dependencies.add(Dependency(ref=top.bom_ref, dependencies=refs))
    return _render(bom)


@cache
def _validator() -> Any:
    """One validator per process: loading the schema is most of its cost."""
    from cyclonedx.schema import SchemaVersion  # noqa: PLC0415
    from cyclonedx.validation.json import JsonStrictValidator  # noqa: PLC0415

    return JsonStrictValidator(SchemaVersion.V1_6)


def validate(data: bytes) -> list[str]:
    """The CycloneDX 1.6 JSON schema's complaints about ``data`` (the library's strict
    validator, offline: the schemas ship with it); empty when it is valid."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [f"it is not UTF-8 text ({exc})"]
    try:
        errors = _validator().validate_str(text, all_errors=True)
    except (ValueError, RecursionError) as exc:
        return [f"it is not JSON ({str(exc)[:200]})"]
    if errors is None:
        return []
    found = [errors] if not isinstance(errors, Iterable) else list(errors)
    # The first line of each, cut: a complaint may quote the whole offending value.
    return [_cut(str(getattr(error, "data", error)).splitlines()[0] or "?", 200) for error in found]


def _cut(text: str, limit: int) -> str:
    """``text`` at most about ``limit`` characters: its middle left out (the complaint, such
    as ``has non-unique elements``, is at its end)."""
    half = limit // 2
    return text if len(text) <= limit else f"{text[:half]} … {text[-half:]}"


def _properties(items: Iterable[Any]) -> dict[str, str]:
    return {str(item.name): str(item.value) for item in items}


def read_sbom(data: bytes, target: str | None = None) -> PluginSbom:
    """Read a plugin's SBOM back with the library (schema-checked first); :class:`SbomError`
    saying what is wrong when it is not one ``pack`` or ``sbom`` could have written."""
    from cyclonedx.model.bom import Bom  # noqa: PLC0415

    load_json(data)  # strict JSON first: the schema's reader takes NaN and Infinity
    problems = validate(data)
    if problems:
        raise SbomError(f"it does not validate against CycloneDX 1.6: {problems[0]}")
    try:
        bom = Bom.from_json(json.loads(data))  # type: ignore[attr-defined]
    except Exception as exc:  # the library raises what its parsers raise
        raise SbomError(f"the CycloneDX library cannot read it: {exc}") from exc
    root = bom.metadata.component
    if root is None or not root.version:
        raise SbomError("it has no metadata.component with a version (the plugin)")
    meta = _properties(root.properties)
    by_ref: dict[str, str] = {}
    packages: list[Package] = []
    for component in bom.components:
        if not component.version or (component.purl is not None and component.purl.type != "pypi"):
            raise SbomError(f"component {component.name!r} has no version, or a purl not pkg:pypi")
        key = canonical_name(component.name)
        by_ref[str(component.bom_ref.value)] = key
        packages.append(
            Package(
                name=component.name,
                version=component.version,
                dist_info="",
                licenses=tuple(_license_text(item) for item in component.licenses),
                license_is_expression=any(
                    type(item).__name__ == "LicenseExpression" for item in component.licenses
                ),
                sha256=next(
                    (h.content for h in component.hashes if h.alg.value == "SHA-256"), None
                ),
                # No purl: pack wrote none, the package is not from a package index.
                direct=component.purl is None,
            )
        )
    edges: dict[str, set[str]] = {}
    direct: set[str] = set()
    for dependency in bom.dependencies:
        ref = str(dependency.ref.value)
        needed = {
            by_ref[str(d.ref.value)] for d in dependency.dependencies if str(d.ref.value) in by_ref
        }
        if ref in by_ref:
            edges.setdefault(by_ref[ref], set()).update(needed)
        elif root.bom_ref is not None and ref == str(root.bom_ref.value):
            direct |= needed
    rebuilt = tuple(
        replace(
            p,
            requires=tuple(Requirement(name) for name in sorted(edges.get(p.key, ()))),
            requested=p.key in direct,
        )
        for p in packages
    )
    timestamp = bom.metadata.timestamp
    return PluginSbom(
        plugin_id=root.name,
        version=root.version,
        target=meta.get(TARGET_PROPERTY, target or ""),
        packages=rebuilt,
        origin=meta.get(ORIGIN_PROPERTY, ORIGIN_PACK),
        epoch=int(timestamp.timestamp()) if timestamp is not None else 0,
        files_sha256=meta.get(FILES_PROPERTY),
    )


def _license_text(item: Any) -> str:
    value = getattr(item, "value", None)
    if isinstance(value, str):
        return value
    return str(getattr(item, "id", None) or getattr(item, "name", None) or "")
