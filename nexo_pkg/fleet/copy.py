"""``nexo plugin mirror oci://A/… oci://B/…``: copy one version registry to registry.

Everything is copied as the source stores it — manifest bytes, blobs, the tag-schema
referrer indexes — so every digest a lock names is the same on the copy. What is copied:
the version's index (or single manifest), every manifest it lists with their blobs, the
referrers of each (signature bundles, attestations, and foreign ones such as an SBOM), their
``sha256-<hex>`` tag-schema indexes, and every tag of the source repository that names the
version (or the destination's tag when one is given).

Children go before what refers to them and tags last, each only when the destination lacks
it (``HEAD`` first), so a run that was cut off resumes where it stopped and a second run
copies nothing. Blobs pass through the shared download cache (checked against their digest on
the way in). A source whose referrers only the OCI 1.1 API lists, copied to a registry without
that API, gets a ``sha256-<hex>`` index written for it there (the only bytes that are new).

Errors are the registry client's (``network``, ``registry_auth``, ``release_not_found``,
``checksum_mismatch``, ``registry_invalid``); a destination with a digest is a usage error,
one whose version tag names another version ``source_invalid`` (exit 2), as for ``push``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nexo_pkg.core.errors import NexoError, UsageError
from nexo_pkg.fleet.publish import PushResult, mirror, version_tagged
from nexo_pkg.fleet.sources import FleetOptions, Session
from nexo_pkg.install.api import NO_CALLBACKS, InstallCallbacks
from nexo_pkg.sources.api import (
    INDEX_MEDIA_TYPE,
    MANIFEST_MEDIA_TYPE,
    BlobSink,
    Manifest,
    OciReference,
    RegistryClient,
    canonical,
    copies_as_is,
    fallback_tag,
    latest_tag,
    parse_reference,
    plugin_of,
)

# Index -> manifest -> referrer -> its referrers …: a version is 3 or 4 levels deep.
MAX_DEPTH = 16


@dataclass
class CopyResult:
    """What one registry-to-registry mirror did."""

    source: str
    reference: str
    digest: str
    plugin_id: str
    version: str
    tags: list[str] = field(default_factory=list)
    blobs: int = 0
    manifests: int = 0
    tags_written: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": True,
            "source": self.source,
            "reference": self.reference,
            "digest": self.digest,
            # The repository at the digest (a reference without a tag has no ':TAG' to cut:
            # its last ':' is the registry's port).
            "pinned": str(parse_reference(self.reference).with_digest(self.digest)),
            "id": self.plugin_id,
            "version": self.version,
            "tags": self.tags,
            "copied": {
                "blobs": self.blobs,
                "manifests": self.manifests,
                "tags": self.tags_written,
            },
        }


class _Copier:
    """Copies manifests (children first), blobs and referrers from one repository to
    another, skipping what the destination already holds."""

    def __init__(
        self,
        session: Session,
        source: tuple[RegistryClient, str],
        destination: tuple[RegistryClient, str],
        result: CopyResult,
    ) -> None:
        self.session = session
        self.source, self.source_repository = source
        self.destination, self.destination_repository = destination
        self.result = result
        self.seen: set[str] = set()

    def blob(self, descriptor: object) -> None:
        if not isinstance(descriptor, dict) or not isinstance(descriptor.get("digest"), str):
            return
        digest = str(descriptor["digest"])
        if self.destination.blob_exists(self.destination_repository, digest):
            return
        limit = self.session.options.install.limits.max_download

        def fetch(sink: BlobSink) -> None:
            self.source.get_blob(
                self.source_repository, digest, sink.write, max_bytes=limit, reset=sink.reset
            )

        with self.session.cache.open_blob(digest, fetch) as path:
            self.destination.push_blob(self.destination_repository, path)
        self.result.blobs += 1

    def manifest(self, digest: str, found: Manifest | None = None, depth: int = 0) -> None:
        """Copy manifest ``digest`` with what it refers to and what refers to it;
        ``registry_invalid`` past :data:`MAX_DEPTH` levels of either."""
        if digest in self.seen:
            return
        if depth > MAX_DEPTH:
            raise NexoError(
                f"{digest} is more than {MAX_DEPTH} manifests or referrers deep below the "
                "version; a plugin version is never nested so far",
                kind="registry_invalid",
            )
        self.seen.add(digest)
        found = found or self.source.get_manifest(self.source_repository, digest)
        document = found.json()
        if found.media_type == INDEX_MEDIA_TYPE:
            self.children(document, depth)
        else:
            self.blob(document.get("config"))
            for layer in document.get("layers") or []:
                self.blob(layer)
        if not self.destination.manifest_exists(self.destination_repository, digest):
            self.destination.put_manifest(
                self.destination_repository, digest, found.data, found.media_type
            )
            self.result.manifests += 1
        self.referrers(digest, depth)

    def children(self, index: dict[str, Any], depth: int) -> None:
        """Copy every manifest ``index`` lists, one level below ``depth``."""
        for child in index.get("manifests") or []:
            if isinstance(child, dict) and isinstance(child.get("digest"), str):
                self.manifest(child["digest"], depth=depth + 1)

    def referrers(self, subject: str, depth: int) -> None:
        listed = self.source.referrers(self.source_repository, subject)
        for item in listed:
            if isinstance(item.get("digest"), str):
                self.manifest(item["digest"], depth=depth + 1)
        tag = fallback_tag(subject)
        index = _manifest_or_none(self.source, self.source_repository, tag)
        if index is not None:
            self.tag(tag, index, depth + 1)
        elif listed:
            self._index_for(subject, listed)

    def _index_for(self, subject: str, listed: list[dict[str, Any]]) -> None:
        """The source lists ``subject``'s referrers through the API only: make sure the
        destination lists them too, writing its tag-schema index when it has no API."""
        wanted = {item["digest"] for item in listed if isinstance(item.get("digest"), str)}
        there = self.destination.referrers(self.destination_repository, subject)
        if wanted <= {item.get("digest") for item in there}:
            return
        kept = [item for item in there if item.get("digest") not in wanted]
        document = {"schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE, "manifests": kept + listed}
        self.destination.put_manifest(
            self.destination_repository,
            fallback_tag(subject),
            canonical(document),
            INDEX_MEDIA_TYPE,
        )
        self.result.tags_written += 1

    def tag(self, tag: str, found: Manifest, depth: int = 0) -> None:
        """Point ``tag`` at ``found`` (its bytes as the source has them) unless it does."""
        self.children(found.json(), depth)
        current = _manifest_or_none(self.destination, self.destination_repository, tag)
        if current is not None and current.digest == found.digest:
            return
        self.destination.put_manifest(
            self.destination_repository, tag, found.data, found.media_type or MANIFEST_MEDIA_TYPE
        )
        self.result.tags_written += 1


def mirror_source(
    source_text: str,
    destination_text: str,
    options: FleetOptions,
    callbacks: InstallCallbacks = NO_CALLBACKS,
) -> CopyResult | PushResult:
    """``nexo plugin mirror SOURCE DESTINATION``: the version ``source_text`` names copied
    as it is when its source says so (a registry version, :func:`mirror_registry`), else a
    registry artifact built from the release it names (:func:`~nexo_pkg.fleet.publish.mirror`)."""
    if copies_as_is(source_text):
        return mirror_registry(source_text, destination_text, options, callbacks)
    return mirror(source_text, destination_text, options, callbacks)


def mirror_registry(
    source_text: str,
    destination_text: str,
    options: FleetOptions,
    callbacks: InstallCallbacks = NO_CALLBACKS,
) -> CopyResult:
    """Copy one plugin version (the source's tag or digest, else its highest version tag)
    from one registry repository to another, bytes unchanged."""
    source = parse_reference(source_text)
    destination = parse_reference(destination_text)
    if destination.digest:
        raise UsageError("mirror to a repository or tag (oci://HOST/NS/NAME[:TAG]), not a digest")
    with Session(options, callbacks) as session:
        reading = session.registry(source)
        writing = session.registry(destination)
        chosen = source.reference or latest_tag(reading, source, None)
        root = reading.get_manifest(source.repository, chosen)
        plugin = plugin_of(root, source, chosen)
        if destination.tag:
            # As push: a version tag on the copy must name the version it holds (install
            # refuses one that does not), refused before anything is written.
            version_tagged(destination, plugin.version, verb="mirror")
        tags = [destination.tag] if destination.tag else _tags_of(reading, source, root, chosen)
        target = OciReference(destination.host, destination.repository, tags[0] if tags else None)
        result = CopyResult(
            str(source), str(target), root.digest, plugin.plugin_id, plugin.version, tags
        )
        copier = _Copier(
            session, (reading, source.repository), (writing, destination.repository), result
        )
        copier.manifest(root.digest, root)
        for tag in tags:
            copier.tag(tag, root)
    return result


def _tags_of(
    client: RegistryClient, source: OciReference, root: Manifest, chosen: str
) -> list[str]:
    """Every tag of the source repository that names ``root`` (never a ``sha256-`` index)."""
    tags = set() if chosen.startswith("sha256:") else {chosen}
    for tag in client.list_tags(source.repository):
        if tag in tags or tag.startswith("sha256-"):
            continue
        found = _manifest_or_none(client, source.repository, tag)
        if found is not None and found.digest == root.digest:
            tags.add(tag)
    return sorted(tags)


def _manifest_or_none(client: RegistryClient, repository: str, reference: str) -> Manifest | None:
    """The manifest ``reference`` names, ``None`` when there is none (``release_not_found``);
    other failures are raised."""
    try:
        return client.get_manifest(repository, reference)
    except NexoError as error:
        if error.kind != "release_not_found":
            raise
        return None
