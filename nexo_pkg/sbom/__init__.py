"""What is inside a plugin: the inventory of its vendored Python distributions and the
CycloneDX SBOM that records it (docs/pack.md, "SBOM").

This module holds what every room needs without the CycloneDX library: the member name, its
cap and a quick check of a carried SBOM. ``inventory`` reads ``*.dist-info`` directories and
pip's installation report; ``cyclonedx`` (which imports ``cyclonedx-python-lib``, so only
``pack`` and ``sbom`` load it) writes and reads the documents.
"""

from __future__ import annotations

import json
from typing import Any

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


def quick_check(data: bytes, plugin_id: str, version: str) -> dict[str, Any]:
    """The parsed document when ``data`` is a CycloneDX 1.6 JSON SBOM whose root component is
    ``plugin_id`` ``version``; :class:`SbomError` otherwise. Cheap (no schema, no library):
    installs run it on every tarball that carries an SBOM."""
    if len(data) > MAX_SBOM_BYTES:
        raise SbomError(f"it is larger than {MAX_SBOM_BYTES} bytes")
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise SbomError(f"it is not JSON ({exc})") from exc
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
