"""The OCI-registry source: a plugin version stored as an image index (one manifest per
target), its tarball layers and the signature referrers of each target; the pinned target
manifest is read from a configured mirror first when there is one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.threads import Aside
from nexo_pkg.core.version import Version, parse_version
from nexo_pkg.sources import oci
from nexo_pkg.sources.artifact import (
    PluginVersion,
    TargetAsset,
    TargetEntry,
    parse_target_manifest,
)
from nexo_pkg.sources.base import (
    MAX_OLDER_RELEASES,
    Admits,
    FetchedArtifact,
    Offered,
    Origin,
    ReleaseCandidate,
    SourceRequest,
    fetched_artifact,
    note,
)
from nexo_pkg.sources.cache import BlobSink
from nexo_pkg.sources.hosttriple import NOARCH
from nexo_pkg.sources.oci_reference import OciReference, parse_reference
from nexo_pkg.sources.select import parse_tarball_name
from nexo_pkg.sources.spec import timestamp_or_none

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from nexo_pkg.core.versionreq import VersionReq
    from nexo_pkg.sources.context import SourceContext
    from nexo_pkg.sources.registry import RegistryClient
    from nexo_pkg.trust.api import TrustPolicy

SOURCE_TYPE = "oci-registry"
# What `upgrade ID@latest` names: the newest version, as for a release.
LATEST_TAG = "latest"
SCHEME = "oci://"


def open_text(text: str, context: SourceContext, request: SourceRequest) -> OciSource:
    """The registry source ``text`` (``oci://…``) names; ``source_invalid`` when malformed."""
    return OciSource(
        parse_reference(text),
        context,
        targets=request.targets,
        expected_id=request.expected_id,
        text=text,
    )


def check_text(text: str) -> None:
    """Raise ``source_invalid`` for a malformed ``oci://`` reference."""
    parse_reference(text)


def reopen(
    origin: Mapping[str, Any],
    context: SourceContext,
    request: SourceRequest,
    *,
    follow: bool,
    tag: str | None = None,
    known: object = None,
) -> OciSource | None:
    """The registry version a receipt's or a plan's ``origin`` pinned, or with ``follow``
    the newest version of its repository (its highest semver tag), or ``tag`` of it when one
    is named (``upgrade ID@TAG``; ``latest`` is the newest version, as for a release);
    ``None`` without a pinned reference. A tag that is no registry tag is ``source_invalid``."""
    del known  # what a GitHub lookup read: a registry reads its tags
    registry = origin.get("registry")
    if not isinstance(registry, str):
        return None
    pinned = parse_reference(registry)
    if not follow:
        return OciSource(pinned, context, targets=request.targets, expected_id=request.expected_id)
    repository = OciReference(pinned.host, pinned.repository)
    if tag is not None and tag != LATEST_TAG:
        repository = parse_reference(f"{repository}:{tag}")
    return OciSource(
        repository,
        context,
        targets=request.targets,
        expected_id=request.expected_id,
        text=str(repository),
    )


def prefetch_newest(
    origins: Sequence[Mapping[str, Any]], context: SourceContext, *, jobs: int = 0
) -> None:
    """Nothing is read at once: each lookup reads its repository's tags."""
    del origins, context, jobs


def locked_origin(
    resolved: str,
    *,
    asset_name: str,
    manifest_digest: str | None,
    github: str | None,
    published: str | None = None,
    policy: TrustPolicy | None = None,
) -> Origin:
    """The origin of one target of a registry version pinned as ``resolved``
    (``oci://…@sha256:…``; a lock's row, or a version read from the registry): a copy
    mirrored from a GitHub release (``github``, ``owner/repo@tag``) is bound to that
    release's signer and policy entries. A repository the ``policy`` binds to an owner
    (``registry_owners.toml``) is that owner's: a copy without an origin is judged by the
    owner's entries, and one whose origin names another owner is ``registry_invalid``."""
    from nexo_pkg.sources.artifact import GitHubOrigin  # noqa: PLC0415

    source: dict[str, object] = {
        "type": SOURCE_TYPE,
        "registry": resolved,
        "manifest": manifest_digest,
        "asset": asset_name,
    }
    if github:
        source["github_release"] = github
    release = GitHubOrigin.parse(github) if github else None
    reference = parse_reference(resolved)
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
        display=resolved,
        owner=release.owner if release else bound,
        repo=release.repo if release else None,
        tag=release.tag if release else None,
        published=published,
        signatures_at=SIGNATURES_AT,
    )


#: Where a registry version's signatures are: referrers of each target's manifest.
SIGNATURES_AT = (
    "signature referrers of its manifest, through the referrers API and the sha256-<digest> "
    "tag; a copy made with skopeo or crane carries them only when those sha256-… tags are "
    "copied too"
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
        self._serving: tuple[OciReference, RegistryClient] | None = None

    def _served(self) -> tuple[OciReference, RegistryClient]:
        """Where the version's index and target manifests are read: a reference by digest
        from the first of its registry's mirrors that has it (what a digest pins, a mirror
        cannot change), anything else from the registry itself, where tags are resolved."""
        if self._serving is None:
            if self.reference.digest is not None and self.context.mirrored(self.reference):
                digest = self.reference.digest
                where, client, _ = self.context.pinned_registry(
                    self.reference,
                    lambda at, registry: registry.get_manifest(at.repository, digest),
                )
                self._serving = where, client
            else:
                self._serving = self.reference, self.context.registry(self.reference)
        return self._serving

    def version(self) -> PluginVersion:
        """The version the reference names (its index), read once."""
        if self._version is None:
            where, client = self._served()
            plugin = oci.resolve(client, where, self.requirement)
            if self.expected_id is not None and plugin.plugin_id != self.expected_id:
                raise NexoError(
                    f"{self.text} now holds plugin {plugin.plugin_id!r}, not {self.expected_id!r}",
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

    def version_tags(self) -> list[tuple[Version, str]]:
        """Every semver tag of the repository with the version it names, highest first: a
        registry has no releases, its tags are what an operator picks from (``info``)."""
        where, client = self._served()
        return oci.all_version_tags(client, where)

    def manifest_text(self) -> str | None:
        """The plugin manifest the first chosen target's manifest carries in its annotation
        (``push`` writes it), read without the tarball; ``None`` when it carries none."""
        plugin = self.version()
        entry = next(iter(self._chosen(plugin).values()), None)
        if entry is None:
            return None
        where, client = self._served()
        return oci.target_asset(client, where.repository, plugin, entry).manifest_text

    def resolve(self) -> list[ReleaseCandidate]:
        """Every target kept (for a host: the first of its triples the version has, else its
        ``noarch``), each with its layer's sha256 read from its manifest."""
        return self._candidates(self._chosen(self.version()))

    def _candidates(self, chosen: dict[str, TargetEntry]) -> list[ReleaseCandidate]:
        plugin = self.version()
        where, client = self._served()
        pinned = str(self.reference.with_digest(plugin.index_digest))
        github = str(plugin.origin) if plugin.origin else None
        candidates = []
        for target, entry in chosen.items():
            asset = oci.target_asset(client, where.repository, plugin, entry)
            origin = locked_origin(
                pinned,
                asset_name=asset.asset_name,
                manifest_digest=entry.manifest_digest,
                github=github,
                # Not the version's creation time: a plain install stamps its receipt with
                # its own time, as the reference installer does (sync passes the lock's).
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
                    # The registry's descriptor of the layer: its size bounds the download.
                    locator=asset,
                    manifest_digest=entry.manifest_digest,
                )
            )
        if not candidates:
            raise NexoError(f"{self.reference} holds no plugin tarball", kind="asset_not_found")
        return candidates

    def newest(self) -> Offered:
        """The version the reference names (no tag or digest: the highest semver tag)."""
        plugin = self.version()
        base = self.reference.base
        return Offered(
            plugin_id=plugin.plugin_id,
            version=plugin.version,
            label=plugin.index_digest,
            where=f"{base} {plugin.plugin_id} {plugin.version}",
            said=f"the newest version in {base} is {plugin.version}",
            unit="version",
            pin="a tag",
            pinned=str(self.reference.with_digest(plugin.index_digest)),
            copied_from=str(plugin.origin) if plugin.origin else None,
            published=timestamp_or_none(plugin.created),
            read_manifest=self.manifest_text,
        )

    def compatible(
        self, admits: Admits, *, above: str | None = None, doing: str = "installing"
    ) -> OciSource | None:
        """Without a tag or digest, when the newest version's manifest annotation is refused:
        the newest older version (matching the requirement, newer than ``above``) whose
        annotation ``admits`` accepts; versions without this host's target or an annotation
        are passed over, :data:`MAX_OLDER_RELEASES` at most. Only tags, indexes and target
        manifests are read."""
        if self.reference.reference is not None:
            return None
        latest = self.version()
        text = self.manifest_text()
        if text is None or admits(text):
            return None
        base = OciReference(self.reference.host, self.reference.repository)
        newest = parse_version(latest.version)
        floor = parse_version(above) if above is not None else None
        client = self.context.registry(base)
        older = [
            tag
            for version, tag in oci.version_tags(client, base, self.requirement)
            if version < _against(version, newest)
            and (floor is None or version > _against(version, floor))
        ]
        for tag in older[:MAX_OLDER_RELEASES]:
            candidate = OciSource(
                base.with_tag(tag),
                self.context,
                targets=self.targets,
                requirement=self.requirement,
                expected_id=self.expected_id,
            )
            try:
                text = candidate.manifest_text()
            except NexoError as error:
                if error.kind in {"asset_not_found", "registry_invalid"}:
                    continue  # no tarball for this host, or a tag that lies: not a choice
                raise
            if text is None or not admits(text):
                continue
            note(
                f"the newest version in {base} ({latest.version}) needs a newer daemon than "
                f"{admits.daemon}; {doing} {tag}, the newest version compatible with it"
            )
            return candidate
        return None

    def matching(self, requirement: VersionReq, admits: Admits | None = None) -> OciSource:
        """The highest semver tag matching ``requirement`` (and accepted by ``admits``)."""
        chosen = OciSource(
            self.reference,
            self.context,
            targets=self.targets,
            requirement=requirement,
            expected_id=self.expected_id,
            text=self.text,
        )
        if admits is not None:
            return chosen.compatible(admits, doing="locking") or chosen
        return chosen

    def every_target(self, *, vouched: bool = False) -> list[ReleaseCandidate]:
        """Every target of the version (a registry vouches for each sha256 in its target
        manifest)."""
        del vouched
        return self._candidates(dict(self.version().targets))

    def fetch(self, candidate: ReleaseCandidate, *, material: bool = True) -> FetchedArtifact:
        """The target's layer in the blob cache, held to the candidate's sha256, with the
        signature files its manifest's referrers carry when ``material``. Raises
        ``lock_invalid`` (no manifest digest), ``checksum_mismatch``, ``registry_invalid``,
        ``network``, ``io``.

        The candidate pins the manifest by digest and the layer by sha256 (a lock's row, or
        what :meth:`resolve` read), so the manifest is not read again to fetch them: only
        with mirrors, where the first mirror that has the manifest serves the rest, and to
        tell why a registry has no such layer (the lock and the registry disagree:
        ``checksum_mismatch``). The signature files are looked up while the layer downloads,
        so that the layer can be on its way to extraction as soon as it is in."""
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
        if self.context.mirrored(pinned):
            reference, client, found = self.context.pinned_registry(
                pinned, lambda where, registry: registry.get_manifest(where.repository, digest)
            )
            asset = _pinned_asset(candidate, found.json(), reference)
        else:
            reference, client = pinned, self.context.registry(pinned)
            asset = TargetAsset(
                candidate.target, digest, candidate.asset_name, "sha256:" + sha256,
                candidate.size or 0,
            )  # fmt: skip

        named = candidate.locator.size if isinstance(candidate.locator, TargetAsset) else None

        def fetch(sink: BlobSink) -> None:
            client.get_blob(
                reference.repository,
                "sha256:" + sha256,
                sink.write,
                max_bytes=self.context.max_download,
                reset=sink.reset,
                # Only a size the registry's own descriptor names (a lock's size is checked
                # against the tarball afterwards, by the lock's rule).
                size=named,
            )

        looked_up: Aside[dict[str, Path]] | None = None
        if material:
            # The signature files are looked up while the layer downloads: their round trips
            # (the referrers, then each file) do not wait for the layer's last byte, and the
            # layer goes to extraction as soon as both are in. Nothing is verified here.
            # (The files' directory is made only when there are some: removing one costs.)
            cache, directory = self.context.cache, self.context.temp_dir
            looked_up = Aside(
                lambda: oci.fetch_signatures(client, reference.repository, asset, cache, directory),
                name="nexo-signatures",
            )
        try:
            with self.context.download_slot():
                blob = self.context.hold(self.context.cache.open_blob(sha256, fetch))
        except Exception as error:
            if looked_up is not None:
                looked_up.wait()  # the layer's failure is the answer: nothing left under way
            if isinstance(error, NexoError) and error.kind == "release_not_found":
                # No such layer: a manifest that names another one says why (and raises).
                found = client.get_manifest(reference.repository, digest)
                _pinned_asset(candidate, found.json(), reference)
            raise
        signatures: dict[str, Path | bytes] = {}
        if looked_up is not None:
            signatures.update(looked_up.result())
        # Loaded with the first blob fetched, not before the first request.
        from nexo_pkg.sources.checksum import verify_checksums  # noqa: PLC0415

        checked = verify_checksums(sha256, candidate.asset_name, sidecar=None, digest=sha256)
        return fetched_artifact(candidate, blob, sha256, checked, signatures)


def _pinned_asset(
    candidate: ReleaseCandidate, document: dict[str, Any], reference: OciReference
) -> TargetAsset:
    """The tarball layer ``document`` (the candidate's manifest, read from ``reference``)
    describes, held to the candidate's sha256 (``checksum_mismatch`` otherwise)."""
    parsed = parse_tarball_name(candidate.asset_name)
    asset = parse_target_manifest(
        document,
        TargetEntry(candidate.target, candidate.manifest_digest or ""),
        candidate.plugin_id,
        parsed[1] if parsed else "",
    )
    if asset.sha256 != candidate.sha256:
        raise NexoError(
            f"{candidate.asset_name} in {reference} is sha256 {asset.sha256}, the lock says "
            f"{candidate.sha256}",
            kind="checksum_mismatch",
        )
    return asset


def _against(tagged: Version, version: Version) -> Version:
    """What a version tag's ``tagged`` version is compared with for ``version``, in the
    crate's order (build metadata counts): a tag that names build metadata (written with
    ``_``, as ``+`` is no tag character) names that build, so ``version`` as it is; one that
    names none names every build of its version (:func:`oci.tag_contradicts`), so
    ``version`` without its build."""
    return version if tagged.build else version.without_build()
