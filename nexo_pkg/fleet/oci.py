"""Plugin versions in an OCI registry: resolve, fetch (through the blob cache) and push."""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass
from pathlib import Path

from nexo_pkg.errors import NexoError
from nexo_pkg.fleet import artifact
from nexo_pkg.fleet.artifact import PluginVersion, TargetAsset, TargetEntry
from nexo_pkg.fleet.reference import OciReference
from nexo_pkg.fleet.registry import (
    INDEX_MEDIA_TYPE,
    MANIFEST_MEDIA_TYPE,
    RegistryClient,
    fallback_tag,
    sha256_digest,
)
from nexo_pkg.install.blobcache import BlobCache, BlobSink
from nexo_pkg.manifest.versionreq import (
    Prerelease,
    Version,
    VersionError,
    VersionReq,
    parse_version,
)
from nexo_pkg.trust.material import material_names

MAX_SIGNATURE_BYTES = 4 * 1024 * 1024
_SEMVER_TAG = re.compile(r"^[vV]?\d+\.\d+\.\d+")


def _tag_version(tag: str) -> str | None:
    if not _SEMVER_TAG.match(tag):
        return None
    text = tag[1:] if tag[:1] in {"v", "V"} else tag
    try:
        parse_version(text)
    except VersionError:
        return None
    return text


def tag_contradicts(tag: str, version: str) -> bool:
    """Whether ``tag`` is semver-shaped (``1.2.3``, ``v1.2.3-rc.1``) and names another version
    than ``version`` (build metadata aside, which a tag cannot carry). A tag that is not a
    version (``latest``, ``stable``) contradicts nothing."""
    named = _tag_version(tag)
    if named is None:
        return False
    try:
        carried = parse_version(version)
    except VersionError:
        return True
    return _sort_key(parse_version(named)) != _sort_key(carried)


def _refuse_tag_mismatch(reference: OciReference, tag: str, plugin: PluginVersion) -> None:
    """``registry_invalid`` when a version tag names another version than the index carries:
    whoever can push could otherwise move an old release under a new version's tag."""
    if tag_contradicts(tag, plugin.version):
        raise NexoError(
            f"{reference.base}:{tag} holds {plugin.plugin_id} {plugin.version}: a version tag "
            "must name the version it holds",
            kind="registry_invalid",
            details={"tag": tag, "version": plugin.version},
        )


def resolve(
    client: RegistryClient, reference: OciReference, requirement: VersionReq | None = None
) -> PluginVersion:
    """The plugin version ``reference`` names.

    A digest or a tag is fetched as is (and must satisfy ``requirement``); with neither, the
    highest semver tag that satisfies ``requirement`` is taken. Raises ``release_not_found``.
    """
    chosen = reference.reference
    if chosen is None:
        candidates = []
        for tag in client.list_tags(reference.repository):
            version = _tag_version(tag)
            if version is None:
                continue
            parsed = parse_version(version)
            if requirement is not None and not requirement.matches(parsed):
                continue
            if requirement is None and not parsed.pre.is_empty:
                continue
            candidates.append((parsed, tag))
        if not candidates:
            wanted = f" matching {requirement}" if requirement is not None else ""
            raise NexoError(
                f"{reference} has no version tag{wanted}",
                kind="release_not_found",
                details={"source": str(reference)},
            )
        chosen = max(candidates, key=lambda pair: _sort_key(pair[0]))[1]
    index = client.get_manifest(reference.repository, chosen)
    if index.media_type != INDEX_MEDIA_TYPE:
        raise NexoError(
            f"{reference.base}:{chosen} is a {index.media_type or 'manifest'}, not a nexo "
            "plugin index",
            kind="registry_invalid",
        )
    plugin = artifact.parse_index(index.json(), index.digest, f"{reference.base}@{index.digest}")
    if reference.digest is None:
        _refuse_tag_mismatch(reference, chosen, plugin)
    if requirement is not None and not requirement.matches(parse_version(plugin.version)):
        raise NexoError(
            f"{reference} is {plugin.plugin_id} {plugin.version}, which does not match "
            f"{requirement}",
            kind="release_not_found",
        )
    return plugin


def _sort_key(version: Version) -> tuple[int, int, int, Prerelease]:
    return (version.major, version.minor, version.patch, version.pre)


def target_asset(
    client: RegistryClient, repository: str, plugin: PluginVersion, entry: TargetEntry
) -> TargetAsset:
    manifest = client.get_manifest(repository, entry.manifest_digest)
    return artifact.parse_target_manifest(manifest.json(), entry, plugin.plugin_id, plugin.version)


def fetch_signatures(
    client: RegistryClient,
    repository: str,
    asset: TargetAsset,
    cache: BlobCache,
    directory: Path,
) -> dict[str, Path]:
    """Copy the signature files attached to ``asset``'s manifest into ``directory``.

    Only layers titled as install would find them beside the asset (``<asset>.sigstore.json``,
    ``.sig``/``.pem``, ``.intoto.jsonl``, a signed ``checksums.txt`` …) are taken. Returns
    ``{file name: path}`` for the trust step.
    """
    offered: dict[str, str] = {}
    for referrer in client.referrers(repository, asset.manifest_digest):
        if referrer.get("artifactType") != artifact.SIGNATURE_ARTIFACT_TYPE:
            continue
        digest = artifact.followed_digest(
            referrer.get("digest"), f"a signature referrer of {asset.manifest_digest}"
        )
        manifest = client.get_manifest(repository, digest).json()
        for layer in manifest.get("layers") or []:
            if not isinstance(layer, dict):
                continue
            title = (layer.get("annotations") or {}).get(artifact.TITLE)
            layer_digest = layer.get("digest")
            if isinstance(title, str) and layer_digest is not None:
                where = f"the signature layer {title[:100]!r} of {digest}"
                offered.setdefault(title, artifact.followed_digest(layer_digest, where))
    # Only names install would read beside this asset, so a title can never name a path.
    material: dict[str, Path] = {}
    for title in material_names(asset.asset_name, offered):
        layer_digest = offered[title]
        path = directory / title

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


def created_now() -> str:
    """``SOURCE_DATE_EPOCH`` when set (reproducible pushes), else now, as RFC 3339 UTC."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    moment = (
        dt.datetime.fromtimestamp(int(epoch), dt.UTC)
        if epoch.isdigit()
        else dt.datetime.now(dt.UTC)
    )
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


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
        manifest = {
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA_TYPE,
            "artifactType": artifact.ARTIFACT_TYPE,
            "config": config,
            "layers": [
                artifact.descriptor(
                    artifact.LAYER_MEDIA_TYPE,
                    digest,
                    size,
                    annotations={artifact.TITLE: files.tarball.name},
                )
            ],
            "annotations": annotations,
        }
        data = artifact.canonical(manifest)
        manifest_digest = _put_by_digest(client, repository, data, MANIFEST_MEDIA_TYPE)
        subject = artifact.descriptor(MANIFEST_MEDIA_TYPE, manifest_digest, len(data))
        if files.signatures:
            _push_signatures(client, repository, subject, files, config)
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


def _put_by_digest(client: RegistryClient, repository: str, data: bytes, media_type: str) -> str:
    digest = sha256_digest(data)
    if not client.manifest_exists(repository, digest):
        client.put_manifest(repository, digest, data, media_type)
    return digest


def _push_signatures(
    client: RegistryClient,
    repository: str,
    subject: dict[str, object],
    files: TargetFiles,
    config: dict[str, object],
) -> None:
    layers = []
    for name, path in sorted(files.signatures.items()):
        digest, size = client.push_blob(repository, path)
        layers.append(
            artifact.descriptor(
                artifact.signature_media_type(name),
                digest,
                size,
                annotations={artifact.TITLE: name},
            )
        )
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "artifactType": artifact.SIGNATURE_ARTIFACT_TYPE,
        "config": config,
        "layers": layers,
        "subject": subject,
    }
    data = artifact.canonical(manifest)
    digest = sha256_digest(data)
    headers = client.put_manifest(repository, digest, data, MANIFEST_MEDIA_TYPE)
    if any(key.lower() == "oci-subject" for key in headers):
        return
    # No referrers API: keep the tag-schema index for the subject up to date.
    tag = fallback_tag(str(subject["digest"]))
    try:
        existing = client.get_manifest(repository, tag).json().get("manifests") or []
    except NexoError as error:
        if error.kind != "release_not_found":
            raise
        existing = []
    kept = [item for item in existing if isinstance(item, dict) and item.get("digest") != digest]
    kept.append(
        artifact.descriptor(
            MANIFEST_MEDIA_TYPE, digest, len(data), artifactType=artifact.SIGNATURE_ARTIFACT_TYPE
        )
    )
    fallback = {"schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE, "manifests": kept}
    client.put_manifest(repository, tag, artifact.canonical(fallback), INDEX_MEDIA_TYPE)
