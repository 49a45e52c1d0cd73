"""Payload check: the manifest at the archive root lints clean and matches the asset name."""

from __future__ import annotations

import dataclasses

from nexo_pkg.core.diagnostics import first_of_errors
from nexo_pkg.core.errors import NexoError
from nexo_pkg.install.manifest_check import misnamed_manifest
from nexo_pkg.install.summary import ManifestSummary, summarise_manifest
from nexo_pkg.lint.engine import lint_source
from nexo_pkg.manifest.document import MAX_MANIFEST_BYTES
from nexo_pkg.manifest.microapp import (
    COMPANION_MANIFEST_NAME,
    MICROAPP_MANIFEST_NAME,
    is_extension_shape,
)
from nexo_pkg.manifest.model import manifest_from_text
from nexo_pkg.manifest.names import MANIFEST_NAMES, choose_manifest, shadowed_message
from nexo_pkg.manifest.options import LintOptions
from nexo_pkg.manifest.read import ManifestTOMLError, read_manifest
from nexo_pkg.sbom import MAX_SBOM_BYTES, SBOM_MEMBER, SbomError, plainly_valid, quick_check
from nexo_pkg.sources.api import ArchiveListing

RUNTIME_SETTINGS_GRANTED = LintOptions(host_net_allowed=True, sandbox_required=False)


def check_payload(listing: ArchiveListing, plugin_id: str, version: str) -> ManifestSummary:
    """Check what an inspected archive carries, before anything is extracted: its manifest
    (:func:`_payload_manifest`; a microapp's companion ``nexo-plugin.toml`` is installed as
    it is). Raises ``manifest_invalid`` when neither is at the root or it has lint errors the daemon
    would reject it for (a setting of the daemon's runtime, such as the host-network
    permission, is not one: :attr:`ManifestSummary.operator_must_allow` names it),
    ``manifest_mismatch`` when its id/version differ from the asset's, and
    ``archive_invalid`` when ``bin/<id>`` is not a regular file in the archive or its SBOM
    (``sbom.cdx.json``) is over the cap, not CycloneDX 1.6 JSON or about another plugin.
    """
    for name in MANIFEST_NAMES:
        if name in listing.files and name not in listing.manifests:
            # Unread, it could be the manifest the daemon loads (an extension-shaped
            # plugin.toml is a microapp's), not the one checked here.
            raise NexoError(
                f"{name} at the archive root is {listing.files[name].size:,} bytes, over the "
                f"{MAX_MANIFEST_BYTES:,} nexo-pkg reads of a manifest",
                kind="manifest_invalid",
                details={"member": name},
            )
    manifest_name, manifest = _payload_manifest(listing)
    if manifest is None or manifest_name is None:
        names = " or ".join(MANIFEST_NAMES)
        raise NexoError(f"{names} at the archive root is missing", kind="manifest_invalid")
    try:
        text = manifest.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NexoError(f"{manifest_name} is not UTF-8 text", kind="manifest_invalid") from exc
    # Settings of the daemon's runtime (host networking) are the operator's to grant where the
    # daemon runs, not the installer's to demand: they are shown on the confirmation screen.
    # The file decides the rules: an extension-shaped plugin.toml gets the microapp's.
    result = lint_source(text, path=manifest_name, options=RUNTIME_SETTINGS_GRANTED)
    if not result.success:
        errors = result.errors
        first = errors[0]
        where, more = first_of_errors(manifest_name, first.span, len(errors))
        raise NexoError(
            f"{where}: {first.code} {first.message}{more}; the plugin's manifest does not lint",
            kind="manifest_invalid",
            details={"diagnostics": [d.to_json() for d in errors]},
        )
    # Linted clean, so the model reads it (whatever its size below lint's cap).
    model = manifest_from_text(text, max_bytes=MAX_MANIFEST_BYTES)
    if (model.id, model.version) != (plugin_id, version):
        raise misnamed_manifest(
            (model.id, model.version), (plugin_id, version), archive="the archive"
        )
    entrypoint = f"bin/{plugin_id}"
    if entrypoint not in listing.files:
        raise NexoError(
            f"the archive has no {entrypoint} file (the plugin's launcher)", kind="archive_invalid"
        )
    check_sbom(listing, plugin_id, version)
    summary = summarise_manifest(model)
    if manifest_name == MICROAPP_MANIFEST_NAME:
        return _with_companion_admin(summary, listing, model.id)
    # Both names at the root: the daemon reads the first and ignores the other, as lint's
    # NX006 and check say; the operator hears which one before saying yes.
    shadowed = choose_manifest([name for name in MANIFEST_NAMES if name in listing.files]).shadowed
    if shadowed:
        messages = tuple(shadowed_message(manifest_name, name) for name in shadowed)
        summary = dataclasses.replace(summary, shadowed_manifests=messages)
    return summary


def _with_companion_admin(
    summary: ManifestSummary, listing: ArchiveListing, plugin_id: str | None
) -> ManifestSummary:
    """A microapp asks for admin RPCs in its companion ``nexo-plugin.toml``, which the daemon
    reads for them, keyed by the companion's ``plugin.id`` (``admin_capability_collect.rs:
    38-65``): ``summary`` with them, unless the daemon would skip the file or key them to
    another id."""
    raw = listing.manifests.get(COMPANION_MANIFEST_NAME)
    if raw is None:
        return summary
    # Only a microapp's install reads a companion: a plugin's install and a sync load neither.
    from nexo_pkg.manifest.microapp_model import companion_from_data  # noqa: PLC0415
    from nexo_pkg.manifest.rules_microapp import companion_refused  # noqa: PLC0415

    try:
        document = read_manifest(raw)
    except ManifestTOMLError:
        return summary
    companion = companion_from_data(document)
    if companion.id != plugin_id or not companion.admin_declared or companion_refused(document):
        return summary
    return dataclasses.replace(
        summary, admin_required=companion.admin_required, admin_optional=companion.admin_optional
    )


def check_sbom(listing: ArchiveListing, plugin_id: str, version: str) -> None:
    """``archive_invalid`` naming ``sbom.cdx.json`` when the archive carries one that is over
    the cap, is not a CycloneDX 1.6 JSON document (one the CycloneDX 1.6 schema or the
    library refuses, as ``nexo plugin sbom`` reads it: shown by ``list`` and ``info`` until
    then), or describes another plugin: an installed tree must never hold an inventory that
    ``nexo plugin sbom`` would report wrongly, nor a document it cannot read."""
    if SBOM_MEMBER not in listing.files:
        if SBOM_MEMBER in listing.directories:
            # A directory under the SBOM's name: `sbom` would derive a document and call the
            # tarball one that carried none.
            raise NexoError(
                f"the archive's {SBOM_MEMBER} is not a regular file; an SBOM is one",
                kind="archive_invalid",
                details={"member": SBOM_MEMBER},
            )
        return
    try:
        if listing.sbom is None:
            raise SbomError(
                f"it is {listing.files[SBOM_MEMBER].size} bytes, over the cap of {MAX_SBOM_BYTES}"
            )
        document = quick_check(listing.sbom, plugin_id, version)
        if not plainly_valid(document):
            # Not the shape pack writes: judged as `nexo plugin sbom` will read it.
            from nexo_pkg.sbom.cyclonedx import read_sbom  # noqa: PLC0415

            read_sbom(listing.sbom)
    except SbomError as exc:
        raise NexoError(
            f"the archive's {SBOM_MEMBER} is not the plugin's SBOM: {exc}",
            kind="archive_invalid",
            details={"member": SBOM_MEMBER},
        ) from exc


def _payload_manifest(listing: ArchiveListing) -> tuple[str | None, bytes | None]:
    """A microapp's extension-shaped ``plugin.toml`` when the archive holds one, else the
    manifest the daemon's plugin discovery reads first."""
    extension = listing.manifests.get(MICROAPP_MANIFEST_NAME)
    if extension is not None:
        try:
            document = read_manifest(extension)
        except ManifestTOMLError:
            document = {}
        if is_extension_shape(document):
            return MICROAPP_MANIFEST_NAME, extension
    return listing.manifest_name, listing.manifest
