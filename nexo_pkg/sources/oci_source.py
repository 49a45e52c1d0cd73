"""The OCI-registry source: a plugin version stored as an image index (one manifest per
target), its tarball layers and the signature referrers of each target; the pinned target
manifest is read from a configured mirror first when there is one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources import oci
from nexo_pkg.sources.artifact import PluginVersion, TargetEntry, parse_target_manifest
from nexo_pkg.sources.base import FetchedArtifact, Origin, ReleaseCandidate, fetched_artifact
from nexo_pkg.sources.cache import BlobSink
from nexo_pkg.sources.checksum import verify_checksums
from nexo_pkg.sources.hosttriple import NOARCH
from nexo_pkg.sources.oci_reference import OciReference, parse_reference
from nexo_pkg.sources.select import parse_tarball_name
from nexo_pkg.sources.spec import timestamp_or_none

if TYPE_CHECKING:
    from pathlib import Path

    from nexo_pkg.core.versionreq import VersionReq
    from nexo_pkg.sources.context import SourceContext
    from nexo_pkg.trust.policy import TrustPolicy

SOURCE_TYPE = "oci-registry"


def registry_origin(
    pinned: str,
    *,
    asset_name: str,
    manifest_digest: str | None,
    github: str | None,
    published: str | None = None,
    policy: TrustPolicy | None = None,
) -> Origin:
    """The origin of one target of a registry version pinned as ``pinned``
    (``oci://…@sha256:…``): a copy mirrored from a GitHub release (``github``,
    ``owner/repo@tag``) is bound to that release's signer and policy entries. A repository
    the ``policy`` binds to an owner (``registry_owners.toml``) is that owner's: a copy without
    an origin is judged by the owner's entries, and one whose origin names another owner is
    ``registry_invalid``."""
    from nexo_pkg.sources.artifact import GitHubOrigin  # noqa: PLC0415

    source: dict[str, object] = {
        "type": SOURCE_TYPE,
        "registry": pinned,
        "manifest": manifest_digest,
        "asset": asset_name,
    }
    if github:
        source["github_release"] = github
    release = GitHubOrigin.parse(github) if github else None
    reference = parse_reference(pinned)
    repository = f"{reference.host}/{reference.repository}"
    bound = policy.registry_owner(repository) if policy is not None else None
    if bound is not None and release is not None and release.owner.casefold() != bound.casefold():
        raise NexoError(
            f"{repository} is bound to owner {bound!r} in the registry bindings, but this "
            f"copy says it was published from {release}; refusing it",
            kind="registry_invalid",
            details={"repository": repository, "bound_owner": bound, "origin": str(release)},
        )
    return Origin(
        source=source,
        display=pinned,
        owner=release.owner if release else bound,
        repo=release.repo if release else None,
        tag=release.tag if release else None,
        published=published,
    )


class OciSource:
    """``oci://host/repo[:tag|@digest]`` (no tag: the highest semver tag) for the ``targets``
    asked (the host's triples, best first, with ``noarch`` as the last resort; ``None``: every
    target the version ships).

    ``requirement`` bounds the version a tagless reference resolves to; ``expected_id``
    refuses a version of another plugin (``asset_not_found``).
    """

    def __init__(
        self,
        reference: OciReference,
        context: SourceContext,
        *,
        targets: tuple[str, ...] | None,
        requirement: VersionReq | None = None,
        expected_id: str | None = None,
        text: str | None = None,
    ) -> None:
        self.reference = reference
        self.context = context
        self.targets = targets
        self.requirement = requirement
        self.expected_id = expected_id
        self.text = text or str(reference)
        self._version: PluginVersion | None = None

    def version(self) -> PluginVersion:
        """The version the reference names (its index), read once."""
        if self._version is None:
            client = self.context.registry(self.reference)
            plugin = oci.resolve(client, self.reference, self.requirement)
            if self.expected_id is not None and plugin.plugin_id != self.expected_id:
                raise NexoError(
                    f"{self.text} is plugin {plugin.plugin_id!r}, not {self.expected_id!r}",
                    kind="asset_not_found",
                )
            self._version = plugin
        return self._version

    def _chosen(self, plugin: PluginVersion) -> dict[str, TargetEntry]:
        """Every target of ``plugin``, or for a host the first of its triples the version
        has, else its ``noarch``; ``asset_not_found`` when it has none of them."""
        if self.targets is None:
            return dict(plugin.targets)
        first = next((t for t in (*self.targets, NOARCH) if t in plugin.targets), None)
        if first is None:
            raise NexoError(
                f"{plugin.plugin_id} {plugin.version} in {self.reference.base} has no "
                f"tarball for this host ({', '.join(self.targets) or 'noarch only'}); it "
                f"has {', '.join(plugin.targets) or 'none'}",
                kind="asset_not_found",
            )
        return {first: plugin.targets[first]}

    def manifest_text(self) -> str | None:
        """The plugin manifest the first chosen target's manifest carries in its annotation
        (``push`` writes it), read without the tarball; ``None`` when it carries none."""
        plugin = self.version()
        entry = next(iter(self._chosen(plugin).values()), None)
        if entry is None:
            return None
        client = self.context.registry(self.reference)
        return oci.target_asset(client, self.reference.repository, plugin, entry).manifest_text

    def resolve(self) -> list[ReleaseCandidate]:
        """Every target kept (for a host: the first of its triples the version has, else its
        ``noarch``), each with its layer's sha256 read from its manifest."""
        plugin = self.version()
        chosen = self._chosen(plugin)
        client = self.context.registry(self.reference)
        pinned = str(self.reference.with_digest(plugin.index_digest))
        github = str(plugin.origin) if plugin.origin else None
        candidates = []
        for target, entry in chosen.items():
            asset = oci.target_asset(client, self.reference.repository, plugin, entry)
            origin = registry_origin(
                pinned,
                asset_name=asset.asset_name,
                manifest_digest=entry.manifest_digest,
                github=github,
                published=timestamp_or_none(plugin.created),
                policy=self.context.policy(),
            )
            candidates.append(
                ReleaseCandidate(
                    plugin.plugin_id,
                    plugin.version,
                    target,
                    asset.asset_name,
                    origin,
                    sha256=asset.sha256,
                    size=asset.size,
                    manifest_digest=entry.manifest_digest,
                )
            )
        if not candidates:
            raise NexoError(f"{self.reference} holds no plugin tarball", kind="asset_not_found")
        return candidates

    def fetch(self, candidate: ReleaseCandidate, *, material: bool = True) -> FetchedArtifact:
        """The target's layer in the blob cache, its manifest read by digest (from a mirror
        first) and held to the candidate's sha256, with the signature files its referrers
        carry when ``material``. Raises ``lock_invalid`` (no manifest digest),
        ``checksum_mismatch``, ``registry_invalid``, ``network``, ``io``."""
        digest = candidate.manifest_digest
        sha256 = candidate.sha256
        if digest is None or sha256 is None:
            raise NexoError(
                f"the lock entry of {candidate.plugin_id} {candidate.target} has no manifest "
                "digest",
                kind="lock_invalid",
                exit_code=2,
            )
        pinned = parse_reference(candidate.origin.registry or str(self.reference))
        reference, client, found = self.context.pinned_registry(
            pinned, lambda where, registry: registry.get_manifest(where.repository, digest)
        )
        parsed = parse_tarball_name(candidate.asset_name)
        asset = parse_target_manifest(
            found.json(),
            TargetEntry(candidate.target, digest),
            candidate.plugin_id,
            parsed[1] if parsed else "",
        )
        if asset.sha256 != sha256:
            raise NexoError(
                f"{candidate.asset_name} in {reference} is sha256 {asset.sha256}, the lock says "
                f"{sha256}",
                kind="checksum_mismatch",
            )
        signatures: dict[str, Path | bytes] = {}
        if material:
            cache, directory = self.context.cache, self.context.temp_dir()
            signatures.update(
                oci.fetch_signatures(client, reference.repository, asset, cache, directory)
            )

        def fetch(sink: BlobSink) -> None:
            client.get_blob(
                reference.repository,
                "sha256:" + sha256,
                sink.write,
                max_bytes=self.context.max_download,
                reset=sink.reset,
            )

        blob = self.context.hold(self.context.cache.open_blob(sha256, fetch))
        checked = verify_checksums(sha256, candidate.asset_name, sidecar=None, digest=sha256)
        return fetched_artifact(candidate, blob, sha256, checked, signatures)
