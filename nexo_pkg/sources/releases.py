"""The GitHub-release source: a release's manifest asset and tarballs, their checksums (the
``.sha256`` sidecar and the API digest) and their signature material (signature assets and
the API's artifact attestations). A candidate whose sha256 is already pinned (a lock file's)
is fetched without reading the release first when the cache holds it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.version import VersionError, compare_versions
from nexo_pkg.sources.base import FetchedArtifact, Origin, ReleaseCandidate, fetched_artifact
from nexo_pkg.sources.cache import BlobSink
from nexo_pkg.sources.checksum import parse_digest, parse_sidecar, verify_checksums
from nexo_pkg.sources.download import cached_asset, check_listed_size
from nexo_pkg.sources.select import (
    MANIFEST_ASSETS,
    ManifestCheck,
    ReleaseIdentity,
    choose_asset,
    parse_tarball_name,
    release_identity,
    tarball_names,
)
from nexo_pkg.trust import entry as trust
from nexo_pkg.trust.commands import release_signer

if TYPE_CHECKING:
    from nexo_pkg.sources.context import SourceContext
    from nexo_pkg.sources.github import GitHubClient, Release, ReleaseAsset
    from nexo_pkg.sources.spec import GitHubSource

SOURCE_TYPE = "github-releases"
LATEST_TAG = "latest"
MAX_SIDECAR_BYTES = 64 * 1024
MAX_MANIFEST_ASSET_BYTES = 1024 * 1024
MAX_SIGNATURE_BYTES = 4 * 1024 * 1024
MAX_SIGNED_TARBALL_BYTES = 100 * 1024 * 1024


@dataclass(frozen=True)
class ResolvedRelease:
    """A release and the plugin it carries (read from its manifest asset, else its tarball
    names); ``manifest`` is the manifest asset as ``(name, text)`` when it has one."""

    release: Release
    identity: ReleaseIdentity
    manifest: tuple[str, str] | None = None


class GitHubReleaseSource:
    """``owner/repo[@tag]`` (no tag: the latest release) for the ``targets`` asked (the host's
    target triples, best first; ``noarch`` is always the last resort).

    ``manifest_problem`` is the installer's check of a manifest asset; ``expected_id``
    refuses a release of another plugin (``asset_not_found``); ``known`` is the latest
    release already read for a spec without a tag (many repositories asked in one request),
    checked from there on as one read here. ``installed`` is the version a lookup compares
    the release with (``outdated``): a release that offers nothing newer is judged without
    its manifest asset when its tarball names settle it (:func:`read_identity`).
    """

    def __init__(
        self,
        spec: GitHubSource,
        context: SourceContext,
        *,
        targets: tuple[str, ...],
        manifest_problem: ManifestCheck,
        expected_id: str | None = None,
        known: Release | None = None,
        installed: str | None = None,
    ) -> None:
        self.spec = spec
        self.installed = installed
        self.known = known if spec.tag is None else None
        self.context = context
        self.targets = targets
        self.manifest_problem = manifest_problem
        self.expected_id = expected_id
        self._found: ResolvedRelease | None = None

    def identify(self) -> ResolvedRelease:
        """Find the release (forgiving a missing ``v``) and read its id and version, once.
        Raises ``release_not_found``, ``manifest_invalid``, ``asset_not_found``, ``network``."""
        if self._found is None:
            client = self.context.github()
            release = self.known or client.find_release(
                self.spec.owner, self.spec.repo, self.spec.tag
            )
            identity, manifest = read_identity(
                client, release, self.manifest_problem, installed=self.installed
            )
            if self.expected_id is not None and identity.plugin_id != self.expected_id:
                raise NexoError(
                    f"release {release.tag} of {self.spec.owner}/{self.spec.repo} is plugin "
                    f"{identity.plugin_id!r}, not {self.expected_id!r}",
                    kind="asset_not_found",
                )
            self._found = ResolvedRelease(release, identity, manifest)
        return self._found

    def resolve(self) -> list[ReleaseCandidate]:
        """The tarball of the first asked target the release has (else ``noarch``)."""
        found = self.identify()
        release = found.release
        choice = choose_asset(release, self.targets, found.identity)
        asset = choice.asset
        spec = self.spec
        origin = Origin(
            source={
                "type": SOURCE_TYPE,
                "owner": spec.owner,
                "repo": spec.repo,
                "tag": release.tag,
                "asset": asset.name,
                "api_url": self.context.github().api_base,
            },
            display=spec.display(),
            owner=spec.owner,
            repo=spec.repo,
            tag=release.tag,
            requested_tag=LATEST_TAG if spec.tag in (None, LATEST_TAG) else release.tag,
        )
        return [
            ReleaseCandidate(
                plugin_id=choice.plugin_id,
                version=choice.version,
                target=choice.target,
                asset_name=asset.name,
                origin=origin,
                size=asset.size,
                manifest=found.manifest,
                locator=(release, asset),
            )
        ]

    def fetch(self, candidate: ReleaseCandidate, *, material: bool = True) -> FetchedArtifact:
        """The tarball in the blob cache, checked against the ``.sha256`` sidecar and the API
        digest (or, for a pinned candidate, its pinned sha256), with its signature material
        when ``material``. Raises ``checksum_missing``, ``checksum_mismatch``,
        ``asset_not_found``, ``archive_unsafe`` (over the download limit), ``network``,
        ``io``."""
        if candidate.locator is None:
            return self._fetch_pinned(candidate, material=material)
        release, asset = candidate.locator
        client = self.context.github()
        sidecar = release_sidecar(client, release, asset)
        digest = parse_digest(asset.digest)
        blob = self.context.hold(
            cached_asset(
                client,
                asset,
                self.context.cache,
                sidecar=sidecar,
                digest=digest,
                max_bytes=self.context.max_download,
                progress=self.context.progress,
            )
        )
        sha256 = sidecar or digest or ""
        checked = verify_checksums(sha256, asset.name, sidecar=sidecar, digest=digest)
        # Under mode ignore nothing is verified: no signature material is fetched and the
        # attestations endpoint is not asked.
        found = (
            release_material(
                client,
                release,
                asset_name=asset.name,
                sha256=sha256,
                repository=(self.spec.owner, self.spec.repo),
                directory=self.context.temp_dir(),
                attestations_as_file=False,
            )
            if material
            else {}
        )
        return fetched_artifact(candidate, blob, sha256, checked, found)

    def _fetch_pinned(self, candidate: ReleaseCandidate, *, material: bool) -> FetchedArtifact:
        """A candidate whose sha256 is pinned: the release is read only when the blob is not
        cached or the signature material is wanted."""
        sha256 = candidate.sha256
        if sha256 is None:
            raise AssertionError("a candidate without a locator pins its sha256")
        client = self.context.github()

        @functools.cache
        def release() -> Release:
            return client.get_release(self.spec.owner, self.spec.repo, self.spec.tag)

        found: dict[str, Path | bytes] = {}
        if material:
            found = release_material(
                client,
                release(),
                asset_name=candidate.asset_name,
                sha256=sha256,
                repository=(self.spec.owner, self.spec.repo),
                directory=self.context.temp_dir(),
            )

        def fetch(sink: BlobSink) -> None:
            asset = release().asset(candidate.asset_name)
            if asset is None:
                raise NexoError(
                    f"release {release().tag} no longer has {candidate.asset_name}",
                    kind="asset_not_found",
                )
            client.download(asset, sink, max_bytes=self.context.max_download)

        blob = self.context.hold(self.context.cache.open_blob(sha256, fetch))
        checked = verify_checksums(sha256, candidate.asset_name, sidecar=None, digest=sha256)
        return fetched_artifact(candidate, blob, sha256, checked, found)


def read_identity(
    client: GitHubClient,
    release: Release,
    manifest_problem: ManifestCheck,
    *,
    installed: str | None = None,
) -> tuple[ReleaseIdentity, tuple[str, str] | None]:
    """The plugin id and version of ``release`` (:func:`release_identity`), and its manifest
    asset as ``(name, text)`` when it has one.

    With ``installed`` (a lookup comparing the release with the version installed), a
    release whose tarball names carry one version of one plugin, not newer than
    ``installed``, is read from those names alone, without fetching its manifest asset: a
    manifest the daemon can read must name that same version (:func:`release_identity`
    refuses any other), so the asset could only add a refusal of a release that offers
    nothing to install. A newer release (or one the names do not settle) is judged from its
    manifest asset as ever; without a token, that lookup reads the asset from its browser
    download URL first, outside the API's rate limit (:meth:`GitHubClient.download`)."""
    if installed is not None:
        settled = _settled_by_names(release, installed)
        if settled is not None:
            return settled, None
    manifest = client.read_manifest_asset(
        release,
        MANIFEST_ASSETS,
        max_bytes=MAX_MANIFEST_ASSET_BYTES,
        browser_first=installed is not None and client.token is None,
    )
    return release_identity(release, manifest, manifest_problem=manifest_problem), manifest


def _settled_by_names(release: Release, installed: str) -> ReleaseIdentity | None:
    """The identity the tarball names of ``release`` give when they name exactly one
    ``(id, version)`` and that version is not newer than ``installed``; else ``None``."""
    named = {p[:2] for name in tarball_names(release) if (p := parse_tarball_name(name))}
    if len(named) != 1:
        return None
    ((plugin_id, version),) = named
    try:
        newer = compare_versions(version, installed) > 0
    except VersionError:
        # An installed version outside semver: only the same text is "not newer".
        newer = version != installed
    return None if newer else ReleaseIdentity(plugin_id, version, "tarball names")


def release_tarballs(
    client: GitHubClient, release: Release, manifest_problem: ManifestCheck
) -> tuple[str, str, dict[str, ReleaseAsset]]:
    """The plugin id, version and per-target tarballs of a release, read as ``install``
    reads them (the manifest asset, else the tarball names)."""
    identity, _ = read_identity(client, release, manifest_problem)
    assets: dict[str, ReleaseAsset] = {}
    for asset in release.assets:
        parsed = parse_tarball_name(asset.name)
        if parsed is not None and parsed[:2] == (identity.plugin_id, identity.version):
            assets[parsed[2]] = asset
    if not assets:
        raise NexoError(
            f"release {release.tag} has no {identity.plugin_id}-{identity.version}-<target>"
            ".tar.gz tarball",
            kind="asset_not_found",
        )
    return identity.plugin_id, identity.version, dict(sorted(assets.items()))


def release_sidecar(client: GitHubClient, release: Release, asset: ReleaseAsset) -> str | None:
    """The sha256 the release's ``<asset>.sha256`` sidecar names, ``None`` without one;
    raises what :func:`parse_sidecar` and the client's fetch raise."""
    sidecar_asset = release.asset(asset.name + ".sha256")
    if sidecar_asset is None:
        return None
    text = client.fetch_bytes(sidecar_asset, max_bytes=MAX_SIDECAR_BYTES)
    return parse_sidecar(text, asset.name)


def release_sha256(client: GitHubClient, release: Release, asset: ReleaseAsset) -> str:
    """The sha256 a release vouches for (``.sha256`` sidecar and/or API digest; they must
    agree); ``checksum_missing`` / ``checksum_mismatch`` otherwise."""
    digest = parse_digest(asset.digest)
    sidecar = release_sidecar(client, release, asset)
    if sidecar is None and digest is None:
        raise NexoError(
            f"no checksum for {asset.name}: the release has neither {asset.name}.sha256 nor an "
            "asset digest",
            kind="checksum_missing",
        )
    if sidecar is not None and digest is not None and sidecar != digest:
        raise NexoError(
            f"{asset.name}.sha256 says {sidecar} but the asset digest is {digest}",
            kind="checksum_mismatch",
        )
    return str(sidecar or digest)


def release_material(
    client: GitHubClient,
    release: Release,
    *,
    asset_name: str,
    sha256: str,
    repository: tuple[str, str],
    directory: Path,
    attestations_as_file: bool = True,
) -> dict[str, Path | bytes]:
    """The signature material a GitHub release offers for ``asset_name``, as files in
    ``directory``: what install reads (the asset's own bundles and signatures, signed checksums
    files), and else the API's artifact attestations of the asset (or of a checksums file),
    written as ``<file>.intoto.jsonl`` so they travel with a mirror and verify offline
    (``attestations_as_file`` false: kept in memory under the name the API offers them by)."""
    material: dict[str, Path | bytes] = {}
    for name in trust.material_names(asset_name, (item.name for item in release.assets)):
        found = release.asset(name)
        if found is None:
            continue
        path = directory / name
        path.write_bytes(client.fetch_bytes(found, max_bytes=MAX_SIGNATURE_BYTES))
        material[name] = path
    attested = trust.release_attestations(
        client,
        repository[0],
        repository[1],
        asset_name=asset_name,
        digest=sha256,
        material=material,
    )
    if attested is not None and not attestations_as_file:
        material[attested.name] = attested.data
    elif attested is not None:
        path = directory / attested.file_name
        path.write_bytes(attested.data)
        material[attested.file_name] = path
    return material


def read_release_signer(
    context: SourceContext, owner: str, repo: str, tag: str | None, *, trusted_root: Path | None
) -> dict[str, Any]:
    """Who signed the newest (or ``tag``) release of ``owner/repo``: what ``nexo plugin trust
    add OWNER/REPO`` proposes to trust.

    Its tarball enters the blob cache under the sha256 it hashes to, its signature material
    is fetched beside it, and :func:`~nexo_pkg.trust.commands.release_signer` verifies them
    with no author trusted, so the refusal names the signer (identity, issuer, claims,
    release and asset). Raises ``asset_not_found`` for a release without a tarball,
    ``archive_unsafe`` over the size limit, and the GitHub client's and the verifier's errors.
    """
    client = context.github()
    release = client.get_release(owner, repo, tag)
    names = [asset.name for asset in release.assets]
    tarballs = [asset for asset in release.assets if asset.name.endswith(".tar.gz")]
    if not tarballs:
        raise NexoError(
            f"release {release.tag} of {owner}/{repo} has no tarball to read a signature from",
            kind="asset_not_found",
        )
    tarball = next((a for a in tarballs if trust.material_names(a.name, names)), tarballs[0])
    check_listed_size(tarball, MAX_SIGNED_TARBALL_BYTES)

    def fetch(sink: BlobSink) -> None:
        client.download(tarball, sink, max_bytes=MAX_SIGNED_TARBALL_BYTES)

    blob = context.hold(context.cache.open_blob(None, fetch))
    material = release_material(
        client,
        release,
        asset_name=tarball.name,
        sha256=blob.name,
        repository=(owner, repo),
        directory=context.temp_dir(),
        attestations_as_file=False,
    )
    return release_signer(
        blob,
        asset_name=tarball.name,
        material=material,
        owner=owner,
        repo=repo,
        tag=release.tag,
        trusted_root=trusted_root,
    )
