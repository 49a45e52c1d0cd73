"""What is inside a plugin: the inventory of its vendored Python distributions and the
CycloneDX SBOM that records it (docs/pack.md, "SBOM").

This module holds what every room needs without the CycloneDX library: the member name, its
cap and a quick check of a carried SBOM. ``inventory`` reads ``*.dist-info`` directories and
pip's installation report; ``cyclonedx`` (which imports ``cyclonedx-python-lib``, so only
``pack`` and ``sbom`` load it) writes and reads the documents.
"""

from __future__ import annotations

import json
import re
from typing import Any

from nexo_pkg.core.errors import exception_line

#: The SBOM's name in the tarball (at the root, beside the manifest) and so in an installed
#: tree; beside the tarball it is ``<id>-<version>-<target>.cdx.json``.
SBOM_MEMBER = "sbom.cdx.json"
SBOM_SUFFIX = ".cdx.json"
#: A plugin vendoring hundreds of distributions writes well under a megabyte;
#: actions/attest-sbom accepts up to 16 MB.
MAX_SBOM_BYTES = 4 * 1024 * 1024
SPEC_VERSION = "1.6"


class SbomError(ValueError):
    """An SBOM that cannot be read (the message names what is wrong, not the file)."""


def sbom_name(asset: str) -> str:
    """``<id>-<version>-<target>.cdx.json`` for the tarball ``asset``."""
    return asset.removesuffix(".tar.gz") + SBOM_SUFFIX


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def load_json(data: bytes) -> Any:
    """``data`` parsed as JSON (RFC 8259), or :class:`SbomError`. Python's parser also takes
    ``NaN``, ``Infinity`` and ``-Infinity``, which no JSON reader of a scanner accepts: a
    document holding one is not JSON, and never printed as an SBOM."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SbomError(f"it is not UTF-8 text ({exc})") from exc
    try:
        return json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise SbomError(f"it is not JSON ({exception_line(exc)[:200]})") from exc


def quick_check(data: bytes, plugin_id: str, version: str) -> dict[str, Any]:
    """The parsed document when ``data`` is a CycloneDX 1.6 JSON SBOM whose root component is
    ``plugin_id`` ``version``; :class:`SbomError` otherwise. Cheap (no schema, no library):
    installs run it on every tarball that carries an SBOM."""
    if len(data) > MAX_SBOM_BYTES:
        raise SbomError(f"it is larger than {MAX_SBOM_BYTES} bytes")
    document = load_json(data)
    if not isinstance(document, dict) or document.get("bomFormat") != "CycloneDX":
        raise SbomError("it is not a CycloneDX document (no bomFormat CycloneDX)")
    if document.get("specVersion") != SPEC_VERSION:
        raise SbomError(f"its specVersion is {document.get('specVersion')!r}, not {SPEC_VERSION}")
    metadata = document.get("metadata")
    root = metadata.get("component") if isinstance(metadata, dict) else None
    if not isinstance(root, dict):
        raise SbomError("it has no metadata.component (the plugin)")
    if root.get("name") != plugin_id or root.get("version") != version:
        raise SbomError(
            f"it describes {root.get('name')!r} {root.get('version')!r}, not {plugin_id} {version}"
        )
    components = document.get("components", [])
    if not isinstance(components, list) or not all(isinstance(c, dict) for c in components):
        raise SbomError("its components are not a list of objects")
    return document


def vendored_packages(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The vendored packages a quick-checked SBOM lists, as ``info`` and ``list --json`` show
    them: ``{"name", "version", "purl"}``, sorted by name."""
    found = [
        {
            "name": component.get("name"),
            "version": component.get("version"),
            "purl": component.get("purl"),
        }
        for component in document.get("components", [])
        if component.get("type") == "library"
    ]
    return sorted(found, key=lambda item: (str(item["name"]).lower(), str(item["version"])))


# What `pack` writes, and nothing else: a document of this shape is valid CycloneDX 1.6 that
# the library reads back, so `install` can take it without loading the schema or the library
# (tests/pack/test_pack_sbom.py holds the two to each other). Anything else goes through the
# library's strict validator, as `nexo plugin sbom` reads it.
_SCHEMA_URL = "http://cyclonedx.org/schema/bom-1.6.schema.json"
_SERIAL = re.compile(r"urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\+00:00")
_SHA256 = re.compile(r"[0-9a-f]{64}")
# The name's escapes are of non-ASCII bytes only (as `quote` writes a name pack lowercased),
# and one plain character comes after the leading ones (a lookahead, so that the pattern
# stays linear): packageurl strips what an escape of a blank (ASCII or not) or `/` decodes
# to, and refuses a name left empty.
_PURL_NAME = r"(?=(?:%[89A-Fa-f][0-9A-Fa-f])*[a-z0-9._-])(?:[a-z0-9._-]|%[89A-Fa-f][0-9A-Fa-f])+"
_PYPI_PURL = re.compile(rf"pkg:pypi/{_PURL_NAME}@(?:[A-Za-z0-9._:-]|%[0-9A-Fa-f]{{2}})+")
_MAX_VERSION = 1024


def _text(value: Any, limit: int | None = None) -> bool:
    return (
        isinstance(value, str)
        and value != ""
        and value.isprintable()
        and (limit is None or len(value) <= limit)
    )


def _only(item: Any, required: set[str], optional: set[str] | None = None) -> bool:
    """Whether ``item`` is an object with every ``required`` key and no key but those and
    the ``optional`` ones."""
    return isinstance(item, dict) and required <= item.keys() <= required | (optional or set())


def _properties_plain(value: Any) -> bool:
    return (
        isinstance(value, list)
        and value != []
        and all(
            _only(item, {"name", "value"}) and _text(item["name"]) and _text(item["value"])
            for item in value
        )
    )


def _licenses_plain(value: Any) -> bool:
    if not isinstance(value, list) or value == []:
        return False
    if len(value) == 1 and _only(value[0], {"expression"}):
        return _text(value[0]["expression"])
    return all(
        _only(item, {"license"})
        and _only(item["license"], {"name"})
        and _text(item["license"]["name"])
        for item in value
    )


def _library_plain(item: Any) -> bool:
    if not _only(
        item,
        {"bom-ref", "name", "type", "version"},
        {"hashes", "licenses", "properties", "purl"},
    ):
        return False
    hashes = item.get("hashes", [{"alg": "SHA-256", "content": "0" * 64}])
    return (
        item["type"] == "library"
        and _text(item["name"])
        and _text(item["version"], _MAX_VERSION)
        # No purl for a package installed from a direct reference (not from an index).
        and ("purl" not in item or isinstance(item["purl"], str))
        and ("purl" not in item or _PYPI_PURL.fullmatch(item["purl"]) is not None)
        and _text(item["bom-ref"])
        and not item["bom-ref"].startswith("urn:cdx:")
        and isinstance(hashes, list)
        and len(hashes) == 1
        and _only(hashes[0], {"alg", "content"})
        and hashes[0]["alg"] == "SHA-256"
        and isinstance(hashes[0]["content"], str)
        and _SHA256.fullmatch(hashes[0]["content"]) is not None
        and ("licenses" not in item or _licenses_plain(item["licenses"]))
        and ("properties" not in item or _properties_plain(item["properties"]))
    )


def _metadata_plain(metadata: Any) -> bool:
    if not _only(metadata, {"component", "timestamp"}, {"tools"}):
        return False
    root = metadata["component"]
    timestamp = metadata["timestamp"]
    tools = metadata.get("tools", {"components": []})
    return (
        _only(root, {"bom-ref", "name", "type", "version"}, {"properties"})
        and root["type"] == "application"
        and _text(root["bom-ref"])
        and not root["bom-ref"].startswith("urn:cdx:")
        and _text(root["name"])
        and _text(root["version"], _MAX_VERSION)
        and ("properties" not in root or _properties_plain(root["properties"]))
        and isinstance(timestamp, str)
        and _TIMESTAMP.fullmatch(timestamp) is not None
        and _valid_date(timestamp)
        and _only(tools, {"components"})
        and isinstance(tools["components"], list)
        and len(tools["components"]) <= 1
        and all(
            _only(tool, {"name", "type", "version"})
            and tool["type"] == "application"
            and _text(tool["name"])
            and _text(tool["version"], _MAX_VERSION)
            for tool in tools["components"]
        )
    )


def _valid_date(timestamp: str) -> bool:
    from datetime import datetime  # noqa: PLC0415

    try:
        datetime.fromisoformat(timestamp)
    except ValueError:
        return False
    return True


def _dependencies_plain(value: Any, refs: set[str]) -> bool:
    if not isinstance(value, list):
        return False
    seen: set[str] = set()
    for item in value:
        if (
            not _only(item, {"ref"}, {"dependsOn"})
            or not isinstance(item["ref"], str)
            or item["ref"] not in refs
        ):
            return False
        if item["ref"] in seen:
            return False
        seen.add(item["ref"])
        needs = item.get("dependsOn", [])
        if not isinstance(needs, list) or (needs == [] and "dependsOn" in item):
            return False
        if not all(isinstance(need, str) and need in refs for need in needs):
            return False
        if len(set(needs)) != len(needs):
            return False
    return True


def plainly_valid(document: dict[str, Any]) -> bool:
    """Whether ``document`` (a parsed JSON value) has exactly the shape ``pack`` writes
    (the fields it fills, of the types and patterns CycloneDX 1.6 gives them, every
    reference resolved, nothing repeated): then it is valid CycloneDX 1.6 that the library
    reads back, without loading either. ``False`` says only that the full check must judge
    it."""
    if not _only(
        document,
        {"$schema", "bomFormat", "metadata", "serialNumber", "specVersion", "version"},
        {"components", "dependencies"},
    ):
        return False
    version = document["version"]
    if (
        document["$schema"] != _SCHEMA_URL
        or document["bomFormat"] != "CycloneDX"
        or document["specVersion"] != SPEC_VERSION
        or not isinstance(document["serialNumber"], str)
        or _SERIAL.fullmatch(document["serialNumber"]) is None
        or type(version) is not int
        or version < 1
        or not _metadata_plain(document["metadata"])
    ):
        return False
    components = document.get("components", [])
    if not isinstance(components, list) or not all(_library_plain(item) for item in components):
        return False
    refs = {item["bom-ref"] for item in components}
    root_ref = document["metadata"]["component"]["bom-ref"]
    if len(refs) != len(components) or root_ref in refs:
        return False
    return _dependencies_plain(document.get("dependencies", []), refs | {root_ref})
