"""Plugin versions in an OCI registry: resolve, fetch (through the blob cache) and push."""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import re
import tarfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.source_date import source_date_epoch
from nexo_pkg.core.version import Version, VersionError, parse_version
from nexo_pkg.core.versionreq import VersionReq
from nexo_pkg.sources import artifact
from nexo_pkg.sources.artifact import PluginVersion, TargetAsset, TargetEntry
from nexo_pkg.sources.cache import BlobCache, BlobSink
from nexo_pkg.sources.oci_reference import OciReference
from nexo_pkg.sources.registry import (
    INDEX_MEDIA_TYPE,
    MANIFEST_MEDIA_TYPE,
    Manifest,
    RegistryClient,
    fallback_tag,
    sha256_digest,
)

MAX_SIGNATURE_BYTES = 4 * 1024 * 1024
_SEMVER_TAG = re.compile(r"^[vV]?\d+\.\d+\.\d+")


def _tag_version(tag: str) -> str | None:
    if not _SEMVER_TAG.match(tag):
        return None
    # A tag cannot hold `+`: Helm and ORAS write a version's build metadata with `_`
    # (`1.2.3_linux` is 1.2.3+linux).
    text = (tag[1:] if tag[:1] in {"v", "V"} else tag).replace("_", "+")
    try:
        parse_version(text)
    except VersionError:
        return None
    return text


def tag_contradicts(tag: str, version: str) -> bool:
    """Whether ``tag`` is semver-shaped (``1.2.3``, ``v1.2.3-rc.1``, ``1.2.3_build``) and names
    another version than ``version`` (build metadata aside, which a tag spells with ``_`` if at
    all). A tag that starts as a version but is none (``02.0.0``, ``2.0.0.1``) contradicts
    every version; one that is not a version at all (``latest``, ``stable``, ``2``) nothing."""
    named = _tag_version(tag)
    if named is None:
        return _SEMVER_TAG.match(tag) is not None
    try:
        carried = parse_version(version)
    except VersionError:
        return True
    tagged = parse_version(named)
    # A tag without build metadata names every build of its version; one with it, that build.
    return tagged != (carried if tagged.build else carried.without_build())


def resolve(
    client: RegistryClient, reference: OciReference, requirement: VersionReq | None = None
) -> PluginVersion:
    """The plugin version ``reference`` names.

    A digest or a tag is fetched as is (and must satisfy ``requirement``); with neither, the
    highest semver tag that satisfies ``requirement`` is taken. Raises ``release_not_found``,
    and ``registry_invalid`` for a version tag that holds another version.
    """
    chosen = reference.reference or latest_tag(client, reference, requirement)
    plugin = plugin_of(client.get_manifest(reference.repository, chosen), reference, chosen)
    # A version tag must name the version the index carries: whoever can push could otherwise
    # move an old release under a new version's tag.
    if reference.digest is None and tag_contradicts(chosen, plugin.version):
        raise NexoError(
            f"{reference.base}:{chosen} holds {plugin.plugin_id} {plugin.version}: a version "
            "tag must name the version it holds",
            kind="registry_invalid",
            details={"tag": chosen, "version": plugin.version},
        )
    if requirement is not None and not requirement.matches(parse_version(plugin.version)):
        raise NexoError(
            f"{reference} is {plugin.plugin_id} {plugin.version}, which does not match "
            f"{requirement}",
            kind="release_not_found",
        )
    return plugin


def version_tags(
    client: RegistryClient, reference: OciReference, requirement: VersionReq | None
) -> list[tuple[Version, str]]:
    """The semver tags of ``reference``'s repository that satisfy ``requirement`` (no
    prerelease unless it asks for one) with their versions, highest first."""
    return _matching(all_version_tags(client, reference), requirement)


def _matching(
    tags: list[tuple[Version, str]], requirement: VersionReq | None
) -> list[tuple[Version, str]]:
    """``tags`` that satisfy ``requirement`` (no prerelease unless it asks for one)."""
    return [
        (parsed, tag)
        for parsed, tag in tags
        if (requirement.matches(parsed) if requirement is not None else parsed.pre.is_empty)
    ]


def all_version_tags(client: RegistryClient, reference: OciReference) -> list[tuple[Version, str]]:
    """Every semver tag of ``reference``'s repository with its version, highest first."""
    found = []
    for tag in client.list_tags(reference.repository):
        version = _tag_version(tag)
        if version is not None:
            found.append((parse_version(version), tag))
    return sorted(found, key=lambda pair: pair[0], reverse=True)


def latest_tag(
    client: RegistryClient, reference: OciReference, requirement: VersionReq | None
) -> str:
    """The highest semver tag of ``reference``'s repository that satisfies ``requirement``
    (no prerelease unless it asks for one); ``release_not_found`` when there is none."""
    every = all_version_tags(client, reference)
    candidates = _matching(every, requirement)
    if not candidates:
        wanted = f" matching {requirement}" if requirement is not None else ""
        # Say what is there: a repository of prereleases only is not an empty one.
        there = (
            f" (its version tags: {', '.join(tag for _, tag in every[:5])}"
            f"{', …' if len(every) > 5 else ''}; name one as the tag, or ask for a "
            "prerelease in the version requirement, e.g. `>=1.0.0-rc.1`)"
            if every
            else ""
        )
        raise NexoError(
            f"{reference} has no version tag{wanted}{there}",
            kind="release_not_found",
            details={"source": str(reference)},
        )
    return candidates[0][1]


def plugin_of(found: Manifest, reference: OciReference, chosen: str) -> PluginVersion:
    """The plugin version an index or a single manifest ``found`` (fetched as ``chosen``, a
    tag or digest of ``reference``) holds; ``registry_invalid`` for anything else."""
    pinned = f"{reference.base}@{found.digest}"
    if found.media_type == INDEX_MEDIA_TYPE:
        return artifact.parse_index(found.json(), found.digest, pinned)
    if found.media_type == MANIFEST_MEDIA_TYPE:
        return artifact.parse_single_manifest(found.json(), found.digest, pinned)
    named = (
        reference.with_digest(chosen)
        if chosen.startswith("sha256:")
        else reference.with_tag(chosen)
    )
    raise NexoError(
        f"{named} is a {found.media_type or 'manifest of no media type'}, not a nexo plugin "
        "(an OCI image index or manifest)",
        kind="registry_invalid",
    )


def target_asset(
    client: RegistryClient, repository: str, plugin: PluginVersion, entry: TargetEntry
) -> TargetAsset:
    manifest = client.get_manifest(repository, entry.manifest_digest)
    return artifact.parse_target_manifest(manifest.json(), entry, plugin.plugin_id, plugin.version)


# The layer title cosign's bundle spec suggests: the bundle's own digest, not a release name.
_COSIGN_BUNDLE_TITLE = re.compile(r"sha256-[0-9a-f]{64}\.sigstore\.json\Z")


def fetch_signatures(
    client: RegistryClient,
    repository: str,
    asset: TargetAsset,
    cache: BlobCache,
    directory: Callable[[], Path],
) -> dict[str, Path]:
    """Copy the signature files attached to ``asset``'s manifest into the directory
    ``directory()`` makes (only when there is one to copy).

    Only layers titled as install would find them beside the asset (``<asset>.sigstore.json``,
    ``.sig``/``.pem``, ``.intoto.jsonl``, a signed ``checksums.txt`` …) are taken. Returns
    ``{file name: path}`` for the trust step.
    """
    offered: dict[str, str] = {}
    # Bundle layers of Sigstore-bundle referrers as cosign attaches them: untitled, or titled
    # by the bundle's own digest (``sha256-<hex>.sigstore.json``), a name of no release file.
    bundles: list[str] = []
    for referrer in client.referrers(repository, asset.manifest_digest):
        declared = referrer.get("artifactType")
        # A descriptor without artifactType (a copy tool re-serialised the index) is judged
        # by its manifest's own; one that names another type (an SBOM …) is left alone.
        if declared is not None and not artifact.is_signature_type(declared):
            continue
        digest = artifact.followed_digest(
            referrer.get("digest"), f"a signature referrer of {asset.manifest_digest}"
        )
        manifest = client.get_manifest(repository, digest).json()
        if not artifact.is_signature_type(manifest.get("artifactType")):
            continue
        for layer in manifest.get("layers") or []:
            if not isinstance(layer, dict):
                continue
            title = (layer.get("annotations") or {}).get(artifact.TITLE)
            layer_digest = layer.get("digest")
            if layer_digest is None:
                continue
            cosign_named = not isinstance(title, str) or _COSIGN_BUNDLE_TITLE.match(title)
            bundle = cosign_named and artifact.is_signature_type(layer.get("mediaType"))
            if not isinstance(title, str) and not bundle:
                continue
            shown = title if isinstance(title, str) else "(untitled)"
            where = f"the signature layer {shown[:100]!r} of {digest}"
            followed = artifact.followed_digest(layer_digest, where)
            if bundle:
                bundles.append(followed)
            elif isinstance(title, str):
                offered.setdefault(title, followed)
    # Only names install would read beside this asset, so a title can never name a path.
    # The material readers load with the first blob fetched, not before the first request.
    from nexo_pkg.trust.api import material_names  # noqa: PLC0415

    if bundles:
        # A cosign-attached bundle is the asset's Sigstore bundle (unless a layer titled so
        # was offered too).
        offered.setdefault(asset.asset_name + ".sigstore.json", bundles[0])
    names = material_names(asset.asset_name, offered)
    if not names:
        return {}
    into = directory()
    material: dict[str, Path] = {}
    for title in names:
        layer_digest = offered[title]
        path = into / title

        def fetch(sink: BlobSink, digest: str = layer_digest) -> None:
            client.get_blob(
                repository, digest, sink.write, max_bytes=MAX_SIGNATURE_BYTES, reset=sink.reset
            )

        with cache.open_blob(layer_digest, fetch) as blob:
            path.write_bytes(blob.read_bytes())
        material[title] = path
    return material


# -- push ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TargetFiles:
    """One target's tarball and its signature files (name -> path) to publish."""

    target: str
    tarball: Path
    sha256: str
    signatures: dict[str, Path]


def _rfc3339(seconds: int) -> str:
    moment = dt.datetime.fromtimestamp(seconds, dt.UTC)
    return moment.isoformat().replace("+00:00", "Z")


def _tarball_mtime(path: Path) -> int | None:
    """The mtime of a tarball's first entry (``pack`` gives every entry the same one);
    ``None`` when the file is not a readable gzip tar."""
    import gzip  # noqa: PLC0415 - for push only: a sync never reads a tarball's dates

    try:
        with gzip.open(path, "rb") as stream:
            header = stream.read(tarfile.BLOCKSIZE)
        return int(tarfile.TarInfo.frombuf(header, "utf-8", "surrogateescape").mtime)
    except (OSError, EOFError, tarfile.TarError, ValueError, zlib.error):
        return None


def source_date() -> str | None:
    """``SOURCE_DATE_EPOCH`` (reproducible pushes) as RFC 3339 UTC, when it is set; ``usage``
    when it is malformed, as ``pack`` says."""
    epoch = source_date_epoch(os.environ)
    return None if epoch is None else _rfc3339(epoch)


def created_now() -> str:
    """``SOURCE_DATE_EPOCH`` when set, else now, as RFC 3339 UTC."""
    return source_date() or _rfc3339(int(dt.datetime.now(dt.UTC).timestamp()))


def tarball_date(tarballs: list[Path]) -> str | None:
    """The newest entry mtime ``pack`` wrote into ``tarballs``, as RFC 3339 UTC: a date that
    belongs to the bytes, so every host reading them gets the same one. ``None`` when there
    is no tarball or one is not a readable gzip tar."""
    times = [_tarball_mtime(path) for path in tarballs]
    if not times or any(found is None for found in times):
        return None
    return _rfc3339(max(found for found in times if found is not None))


def created_for(tarballs: list[Path]) -> str:
    """The created time of a version pushed from ``tarballs``: ``SOURCE_DATE_EPOCH`` when
    set, else the newest entry mtime ``pack`` wrote into them (so pushing the same files
    twice gives the same index), else the newest file mtime; never the clock."""
    if (epoch := source_date()) is not None:
        return epoch
    if (packed := tarball_date(tarballs)) is not None:
        return packed
    return _rfc3339(max((int(path.stat().st_mtime) for path in tarballs), default=0))


def push_version(
    client: RegistryClient,
    reference: OciReference,
    *,
    plugin_id: str,
    version: str,
    targets: list[TargetFiles],
    manifest_text: str | None,
    origin: artifact.GitHubOrigin | None,
    created: str,
) -> str:
    """Publish one version under ``reference``'s tag; returns the index digest."""
    repository = reference.repository
    empty_digest, empty_size = client.push_blob(repository, artifact.EMPTY_DATA)
    config = artifact.descriptor(artifact.EMPTY_MEDIA_TYPE, empty_digest, empty_size)
    entries = []
    for files in sorted(targets, key=lambda item: item.target):
        digest, size = client.push_blob(repository, files.tarball)
        if digest != "sha256:" + files.sha256:
            raise NexoError(
                f"{files.tarball.name} changed while it was pushed", kind="checksum_mismatch"
            )
        annotations = {
            artifact.PLUGIN_ID: plugin_id,
            artifact.PLUGIN_VERSION: version,
            artifact.PLUGIN_TARGET: files.target,
            artifact.PLUGIN_ASSET: files.tarball.name,
            artifact.PLUGIN_SHA256: files.sha256,
        }
        if manifest_text is not None:
            annotations[artifact.PLUGIN_MANIFEST] = manifest_text
        layer = artifact.descriptor(
            artifact.LAYER_MEDIA_TYPE,
            digest,
            size,
            annotations={artifact.TITLE: files.tarball.name},
        )
        manifest = _image_manifest(artifact.ARTIFACT_TYPE, config, [layer], annotations=annotations)
        data = artifact.canonical(manifest)
        manifest_digest = _put_by_digest(client, repository, data, MANIFEST_MEDIA_TYPE)
        subject = artifact.descriptor(MANIFEST_MEDIA_TYPE, manifest_digest, len(data))
        if files.signatures:
            _push_signatures(client, repository, subject, files, config, created=created)
        entries.append(
            artifact.descriptor(
                MANIFEST_MEDIA_TYPE,
                manifest_digest,
                len(data),
                artifactType=artifact.ARTIFACT_TYPE,
                platform=artifact.platform_of(files.target),
                annotations={artifact.PLUGIN_TARGET: files.target},
            )
        )
    index_annotations = {
        artifact.PLUGIN_ID: plugin_id,
        artifact.PLUGIN_VERSION: version,
        artifact.IMAGE_VERSION: version,
        artifact.CREATED: created,
    }
    if origin is not None:
        index_annotations[artifact.GITHUB_RELEASE] = str(origin)
        index_annotations[artifact.IMAGE_SOURCE] = (
            f"https://github.com/{origin.owner}/{origin.repo}"
        )
    index = {
        "schemaVersion": 2,
        "mediaType": INDEX_MEDIA_TYPE,
        "artifactType": artifact.ARTIFACT_TYPE,
        "manifests": entries,
        "annotations": index_annotations,
    }
    data = artifact.canonical(index)
    tag = reference.tag or version
    client.put_manifest(repository, tag, data, INDEX_MEDIA_TYPE)
    return sha256_digest(data)


def _image_manifest(
    artifact_type: str, config: dict[str, Any], layers: list[dict[str, Any]], **extra: Any
) -> dict[str, Any]:
    """An OCI image manifest of ``artifact_type`` with ``layers`` (and ``extra`` keys)."""
    return {
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "artifactType": artifact_type,
        "config": config,
        "layers": layers,
        **extra,
    }


def _put_by_digest(client: RegistryClient, repository: str, data: bytes, media_type: str) -> str:
    digest = sha256_digest(data)
    if not client.manifest_exists(repository, digest):
        client.put_manifest(repository, digest, data, media_type)
    return digest


def _bundle_annotations(data: bytes, created: str) -> tuple[str, dict[str, str]]:
    """The media type of a Sigstore bundle file and the annotations cosign's bundle spec puts
    on its referrer (content kind, predicate type, creation time). A file that is not a
    bundle document gets the v0.3 type and the message-signature defaults."""
    try:
        document = json.loads(data)
    except ValueError:
        document = None
    document = document if isinstance(document, dict) else {}
    declared = document.get("mediaType")
    media_type = (
        declared
        if isinstance(declared, str) and declared.startswith(artifact.BUNDLE_TYPE_PREFIX)
        else artifact.BUNDLE_MEDIA_TYPE
    )
    content, predicate = "message-signature", artifact.COSIGN_SIGN_PREDICATE
    envelope = document.get("dsseEnvelope")
    if isinstance(envelope, dict):
        content = "dsse-envelope"
        try:
            statement = json.loads(base64.b64decode(str(envelope.get("payload", ""))))
        except ValueError:
            statement = None
        found = statement.get("predicateType") if isinstance(statement, dict) else None
        predicate = found if isinstance(found, str) else ""
    annotations = {artifact.BUNDLE_CONTENT: content, artifact.CREATED: created}
    if predicate:
        annotations[artifact.BUNDLE_PREDICATE_TYPE] = predicate
    return media_type, annotations


def _sigstore_bundle(name: str, path: Path) -> bool:
    """Whether ``name`` is a Sigstore bundle: a ``.sigstore.json``/``.sigstore`` file, or a
    ``.bundle`` whose document declares a Sigstore bundle media type (what ``cosign sign-blob
    --new-bundle-format --bundle`` writes), not a legacy cosign bundle."""
    if artifact.signature_media_type(name) == artifact.BUNDLE_MEDIA_TYPE:
        return True
    if not name.endswith(".bundle"):
        return False
    try:
        document = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return False
    declared = document.get("mediaType") if isinstance(document, dict) else None
    return isinstance(declared, str) and declared.startswith(artifact.BUNDLE_TYPE_PREFIX)


def _push_signatures(
    client: RegistryClient,
    repository: str,
    subject: dict[str, object],
    files: TargetFiles,
    config: dict[str, object],
    *,
    created: str,
) -> None:
    """Attach ``files``' signature material to ``subject``: each Sigstore bundle as cosign's
    bundle spec does (its own referrer, one layer), the other files in one referrer of nexo's
    signature type; the ``sha256-<hex>`` tag-schema index too when the registry has no
    referrers API."""
    referrers: list[dict[str, Any]] = []
    others = []
    for name, path in sorted(files.signatures.items()):
        digest, size = client.push_blob(repository, path)
        if not _sigstore_bundle(name, path):
            others.append(
                artifact.descriptor(
                    artifact.OCTET_STREAM, digest, size, annotations={artifact.TITLE: name}
                )
            )
            continue
        media_type, annotations = _bundle_annotations(path.read_bytes(), created)
        layer = artifact.descriptor(media_type, digest, size, annotations={artifact.TITLE: name})
        referrers.append(
            _image_manifest(media_type, config, [layer], subject=subject, annotations=annotations)
        )
    if others:
        referrers.append(
            _image_manifest(artifact.SIGNATURE_ARTIFACT_TYPE, config, others, subject=subject)
        )
    listed = []
    api = False
    for manifest in referrers:
        data = artifact.canonical(manifest)
        digest = sha256_digest(data)
        headers = client.put_manifest(repository, digest, data, MANIFEST_MEDIA_TYPE)
        api = api or any(key.lower() == "oci-subject" for key in headers)
        listed.append(
            artifact.descriptor(
                MANIFEST_MEDIA_TYPE,
                digest,
                len(data),
                artifactType=manifest["artifactType"],
                annotations=manifest.get("annotations"),
            )
        )
    if api or not listed:
        return
    # No referrers API: keep the tag-schema index for the subject up to date.
    tag = fallback_tag(str(subject["digest"]))
    try:
        existing = client.get_manifest(repository, tag).json().get("manifests") or []
    except NexoError as error:
        if error.kind != "release_not_found":
            raise
        existing = []
    ours = {item["digest"] for item in listed}
    kept = [item for item in existing if isinstance(item, dict) and item.get("digest") not in ours]
    fallback = {"schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE, "manifests": kept + listed}
    client.put_manifest(repository, tag, artifact.canonical(fallback), INDEX_MEDIA_TYPE)
