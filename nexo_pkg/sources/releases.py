"""The GitHub-release source: a release's manifest asset and tarballs, their checksums (the
``.sha256`` sidecar and the API digest) and their signature material (signature assets and
the API's artifact attestations). A candidate whose sha256 is already pinned (a lock file's)
is fetched without reading the release first when the cache holds it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.threads import Aside, run_bounded
from nexo_pkg.core.version import Version, compare_versions, parse_version
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
from nexo_pkg.sources.cache import BlobSink, over_size_cap
from nexo_pkg.sources.checksum import (
    no_checksum,
    one_listed,
    parse_digest,
    parse_sidecar,
    verify_checksums,
)
from nexo_pkg.sources.download import cached_asset, check_listed_size
from nexo_pkg.sources.select import (
    MANIFEST_ASSETS,
    ManifestCheck,
    ReleaseIdentity,
    choose_asset,
    identity_from_manifest,
    parse_tarball_name,
    release_identity,
    tarball_names,
    version_in_tag,
)
from nexo_pkg.sources.spec import (
    MAX_OWNER_LENGTH,
    MAX_REPO_LENGTH,
    GitHubSource,
    parse_source,
    validate_name,
    validate_tag,
)
from nexo_pkg.trust import api as trust
from nexo_pkg.trust.api import release_signer

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from nexo_pkg.core.versionreq import VersionReq
    from nexo_pkg.sources.context import SourceContext
    from nexo_pkg.sources.github import GitHubClient, Release, ReleaseAsset

SOURCE_TYPE = "github-releases"
LATEST_TAG = "latest"
MAX_SIDECAR_BYTES = 64 * 1024
MAX_MANIFEST_ASSET_BYTES = 1024 * 1024
MAX_SIGNATURE_BYTES = 4 * 1024 * 1024
MAX_SIGNED_TARBALL_BYTES = 100 * 1024 * 1024
# Checksums files a release may have (GoReleaser makes one; a project with a few tools a few):
# each is a request and up to 1 MiB, so a release with more is refused before any is read.
MAX_RELEASE_CHECKSUMS_FILES = 8


def open_text(text: str, context: SourceContext, request: SourceRequest) -> GitHubReleaseSource:
    """The release source ``owner/repo[@tag]`` names; ``source_invalid`` for anything else."""
    return _opened(_release_spec(text), context, request)


def _opened(
    spec: GitHubSource, context: SourceContext, request: SourceRequest, known: Release | None = None
) -> GitHubReleaseSource:
    return GitHubReleaseSource(
        spec,
        context,
        targets=request.targets,
        manifest_problem=request.manifest_problem,
        expected_id=request.expected_id,
        known=known,
        installed=request.installed,
        compares_only=request.compares_only,
    )


def check_text(text: str) -> None:
    """Raise ``source_invalid`` unless ``text`` is ``owner/repo[@tag]``."""
    _release_spec(text)


def _release_spec(text: str) -> GitHubSource:
    spec = parse_source(text)
    if not isinstance(spec, GitHubSource):
        raise NexoError(
            f"source {text!r} is a local path; a fleet names owner/repo or oci:// sources",
            kind="source_invalid",
        )
    return spec


def reopen(
    origin: Mapping[str, Any],
    context: SourceContext,
    request: SourceRequest,
    *,
    follow: bool,
    tag: str | None = None,
    known: Mapping[tuple[str, str], Release] | None = None,
) -> GitHubReleaseSource | None:
    """The release a receipt's or a plan's ``origin`` names, or with ``follow`` the latest
    release of its repository (``tag``: that release; ``known``: the latest releases
    :func:`prefetch_newest` already read); ``None`` when the origin names no repository."""
    owner, repo = origin.get("owner"), origin.get("repo")
    if not owner or not repo:
        return None
    spec = GitHubSource(str(owner), str(repo), tag if follow else str(origin.get("tag")))
    _check_recorded(spec)
    release = None if known is None else known.get((str(owner), str(repo)))
    return _opened(spec, context, request, release)


def _check_recorded(spec: GitHubSource) -> None:
    """Raise ``source_invalid`` for recorded coordinates (a receipt's, a plan's) that an
    install source could not name: `..` as an owner would climb out of ``/repos/`` in the
    API's URL."""
    text = f"{spec.owner}/{spec.repo}" + (f"@{spec.tag}" if spec.tag else "")
    hint = "the receipt or plan names no GitHub repository; reinstall from owner/repo"
    for value, what, longest in (
        (spec.owner, "owner", MAX_OWNER_LENGTH),
        (spec.repo, "repo", MAX_REPO_LENGTH),
    ):
        validate_name(value, what=what, max_length=longest, text=text, label="recorded source",
                      hint=hint)  # fmt: skip
    if spec.tag:
        validate_tag(spec.tag, text=text)


def _nameable(owner: str, repo: str) -> bool:
    try:
        _check_recorded(GitHubSource(owner, repo, None))
    except NexoError:
        return False
    return True


GRAPHQL_BATCH = 50
"""Repositories asked in one GraphQL request (each alias is a small part of the query)."""


def prefetch_newest(
    origins: Sequence[Mapping[str, Any]], context: SourceContext, *, jobs: int = 0
) -> dict[tuple[str, str], Release]:
    """The latest release of the repositories ``origins`` name, read before their lookups:
    with a token, :data:`GRAPHQL_BATCH` repositories to a GraphQL request (a batch the API
    does not answer is left out); with ``jobs``, those still missing one by one, ``jobs`` at
    a time (one that cannot be read is left out; after a rate-limit answer nothing more is
    asked). Raises ``rate_limited`` when a GraphQL request or one of those says so."""
    wanted = sorted(
        {(str(o["owner"]), str(o["repo"])) for o in origins if o.get("owner") and o.get("repo")}
    )
    # Recorded coordinates no install source could name are left to `reopen`, which refuses.
    wanted = [key for key in wanted if _nameable(*key)]
    if not wanted:
        return {}
    client = context.github()
    found: dict[tuple[str, str], Release] = {}
    if client.token is not None:
        for start in range(0, len(wanted), GRAPHQL_BATCH):
            if client.graphql_spent is not None:
                break  # GraphQL said its limit is spent: the rest go over REST
            try:
                found.update(client.latest_releases(wanted[start : start + GRAPHQL_BATCH]))
            except NexoError as error:
                if error.kind == "rate_limited":
                    raise
    if jobs:
        missing = [key for key in wanted if key not in found]
        for key, release in zip(missing, _each_latest(missing, context, jobs), strict=True):
            if release is not None:
                found[key] = release
    return found


def _each_latest(
    repositories: list[tuple[str, str]], context: SourceContext, jobs: int
) -> list[Release | None]:
    """The latest release of each of ``repositories``, ``jobs`` at a time (``None`` for
    one that cannot be read). Raises the first rate-limit answer once the lookups under
    way have ended: the service is asked nothing more in the command."""
    # (position, answer): the first in the repositories' order is raised, whichever came
    # first, so what is said does not depend on the number of jobs.
    stopped: list[tuple[int, NexoError]] = []

    def one(numbered: tuple[int, tuple[str, str]]) -> Release | None:
        if stopped:
            return None
        position, key = numbered
        try:
            return context.github().get_release(*key, None)
        except NexoError as error:
            if error.kind == "rate_limited":
                stopped.append((position, error))
            return None

    # Interrupted, the lookups under way fail at once instead of waiting for the network.
    found = run_bounded(
        one, list(enumerate(repositories)), jobs=jobs, on_interrupt=context.stop_requests
    )
    if stopped:
        raise min(stopped, key=lambda each: each[0])[1]
    return found


def locked_origin(
    resolved: str,
    *,
    asset_name: str,
    manifest_digest: str | None,
    github: str | None,
    published: str | None,
    policy: object,
) -> Origin:
    """The origin of one target a lock pins from the release ``resolved``
    (``owner/repo@tag``, as the lock wrote it)."""
    del manifest_digest, github, policy  # a registry's; a release is its own origin
    spec = parse_source(resolved)
    if not isinstance(spec, GitHubSource):
        raise NexoError(f"{resolved!r} names no release", kind="lock_invalid", exit_code=2)
    return Origin(
        source={
            "type": SOURCE_TYPE,
            "owner": spec.owner,
            "repo": spec.repo,
            "tag": spec.tag,
            "asset": asset_name,
        },
        display=asset_name,
        owner=spec.owner,
        repo=spec.repo,
        tag=spec.tag,
        published=published,
    )


def _is_prerelease_tag(tag: str) -> bool:
    """Whether the version ``tag`` ends with is a pre-release, however the tag spells it
    (``v2.0.0-rc.1``, ``vv2.0.0-rc.1``, ``hello-v2.0.0-rc.1``)."""
    version = version_in_tag(tag)
    return version is not None and not parse_version(version).pre.is_empty


def _is_prerelease_manifest(text: str) -> bool:
    """Whether a release's manifest asset names a pre-release (a tag may run ahead of it)."""
    found = identity_from_manifest(text)
    return found is not None and not parse_version(found[1]).pre.is_empty


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
    checked from there on as one read here. ``follows_latest``: a release chosen in place of
    the latest one (:meth:`compatible`), whose candidates still record ``latest`` as what was
    asked for, so ``upgrade`` follows the latest release. ``installed`` is the version
    installed: a release whose tarball names settle it as that version (an ``upgrade`` with
    nothing newer), or as any version when the command ``compares_only`` (``outdated``), is
    judged without its manifest asset (:func:`read_identity`).
    """

    def __init__(
        self,
        spec: GitHubSource,
        context: SourceContext,
        *,
        targets: tuple[str, ...] | None,
        manifest_problem: ManifestCheck,
        expected_id: str | None = None,
        known: Release | None = None,
        follows_latest: bool = False,
        installed: str | None = None,
        compares_only: bool = False,
    ) -> None:
        self.spec = spec
        self.installed = installed
        self.compares_only = compares_only
        self.known = known if spec.tag is None or follows_latest else None
        self.context = context
        self.targets = targets or ()
        self.manifest_problem = manifest_problem
        self.expected_id = expected_id
        self.follows_latest = follows_latest
        self._found: ResolvedRelease | None = None

    def _names_version(self) -> bool:
        return self.spec.tag not in (None, LATEST_TAG) and not self.follows_latest

    def _at(self, release: Release) -> GitHubReleaseSource:
        """This source pinned to ``release`` (already read), following the latest release."""
        return GitHubReleaseSource(
            replace(self.spec, tag=release.tag),
            self.context,
            targets=self.targets,
            manifest_problem=self.manifest_problem,
            expected_id=self.expected_id,
            known=release,
            follows_latest=True,
        )

    def identify(self) -> ResolvedRelease:
        """Find the release (forgiving a missing ``v``) and read its id and version, once.
        Raises ``release_not_found``, ``manifest_invalid``, ``asset_not_found``, ``network``."""
        if self._found is None:
            client = self.context.github()
            release = self.known or client.find_release(
                self.spec.owner, self.spec.repo, self.spec.tag
            )
            identity, manifest = read_identity(
                client,
                release,
                self.manifest_problem,
                installed=self.installed,
                same_only=not self.compares_only,
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
        origin = self._origin(release, asset.name)
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

    def _origin(self, release: Release, asset_name: str) -> Origin:
        spec = self.spec
        return Origin(
            source={
                "type": SOURCE_TYPE,
                "owner": spec.owner,
                "repo": spec.repo,
                "tag": release.tag,
                "asset": asset_name,
                "api_url": self.context.github().api_base,
            },
            display=spec.display(),
            owner=spec.owner,
            repo=spec.repo,
            tag=release.tag,
            requested_tag=release.tag if self._names_version() else LATEST_TAG,
        )

    def newest(self) -> Offered:
        """The release the spec names (no tag: the latest), read once."""
        found = self.identify()
        release, identity, spec = found.release, found.identity, self.spec
        return Offered(
            plugin_id=identity.plugin_id,
            version=identity.version,
            label=release.tag,
            where=f"{spec.owner}/{spec.repo}@{release.tag}",
            said=(
                (
                    f"release {release.tag} of {spec.owner}/{spec.repo}"
                    if self._names_version()
                    else f"the latest release of {spec.owner}/{spec.repo} ({release.tag})"
                )
                + f" carries {identity.plugin_id} {identity.version}"
            ),
            unit="release",
            pin="owner/repo@tag",
            pinned=f"{spec.owner}/{spec.repo}@{release.tag}",
            tag=release.tag,
            published=release.published_at,
            read_manifest=self._manifest_text,
        )

    def _manifest_text(self) -> str | None:
        """The text of :meth:`newest`'s manifest asset: the one :meth:`identify` read, or,
        when a lookup read the version from the tarball names alone (``installed``), the
        asset read now (from its browser download URL first without a token)."""
        found = self.identify()
        if found.manifest is None and self.installed is not None:
            client = self.context.github()
            manifest = client.read_manifest_asset(
                found.release,
                MANIFEST_ASSETS,
                max_bytes=MAX_MANIFEST_ASSET_BYTES,
                browser_first=self.compares_only and client.token is None,
            )
            return manifest[1] if manifest else None
        return found.manifest[1] if found.manifest else None

    def compatible(
        self, admits: Admits, *, above: str | None = None, doing: str = "installing"
    ) -> GitHubReleaseSource | None:
        """Without a tag, when the latest release's manifest asset is refused: the newest
        older release, as GitHub lists them (pre-releases and releases without a manifest
        asset passed over, :data:`MAX_OLDER_RELEASES` at most), whose manifest asset
        ``admits`` accepts, and which is newer than ``above``. Only release metadata and
        manifest assets are read. The note says ``installing`` whatever ``doing`` an upgrade
        names, as it always has; a lock's says ``locking``."""
        if self._names_version():
            return None
        latest = self.identify()
        if latest.manifest is None or admits(latest.manifest[1]):
            return None
        client, spec = self.context.github(), self.spec
        tags = [
            tag
            for tag in client.release_tags(spec.owner, spec.repo) or []
            if tag != latest.release.tag and not _is_prerelease_tag(tag)
        ]
        for tag in tags[:MAX_OLDER_RELEASES]:
            release = client.get_release(spec.owner, spec.repo, tag)
            manifest = client.read_manifest_asset(
                release, MANIFEST_ASSETS, max_bytes=MAX_MANIFEST_ASSET_BYTES
            )
            if manifest is None or _is_prerelease_manifest(manifest[1]) or not admits(manifest[1]):
                continue
            chosen = self._at(release)
            if above is not None and compare_versions(chosen.newest().version, above) <= 0:
                # Not newer than the installed version: nothing is installed, nothing said.
                return None
            said = "installing" if above is not None else doing
            note(
                f"the latest release of {spec.owner}/{spec.repo} ({latest.release.tag}) needs "
                f"a newer daemon than {admits.daemon}; {said} {tag}, the newest release "
                "compatible with it"
            )
            return chosen
        return None

    def matching(
        self, requirement: VersionReq, admits: Admits | None = None
    ) -> GitHubReleaseSource:
        """As cargo and uv: without a tag, the release of the highest version matching
        ``requirement`` (and, with ``admits``, whose manifest asset it accepts) among the
        latest and the :data:`MAX_OLDER_RELEASES` releases GitHub lists after it, read from
        release metadata and manifest assets (else tarball names) alone; a release whose
        version cannot be read is passed over. ``release_not_found`` when the version the
        source names does not match ``requirement``."""
        chosen = self if self._names_version() else self._matching_release(requirement, admits)
        version = chosen.newest().version
        if not requirement.matches(parse_version(version)):
            raise NexoError(
                f"{self.spec.display()} resolves to {version}, which does not match "
                f"{requirement}"
                + (
                    ""
                    if self._names_version()
                    else f", nor does any release before it (up to {MAX_OLDER_RELEASES} looked at)"
                )
                + "; name a matching tag in the source (owner/repo@tag)",
                kind="release_not_found",
            )
        return chosen

    def _matching_release(
        self, requirement: VersionReq, admits: Admits | None
    ) -> GitHubReleaseSource:
        latest = self.identify().release
        if self._admitted(latest, requirement, admits) is not None:
            return self
        client, spec = self.context.github(), self.spec
        tags = list(client.release_tags(spec.owner, spec.repo) or [])
        best: tuple[Version, Release] | None = None
        for tag in [tag for tag in tags if tag != latest.tag][:MAX_OLDER_RELEASES]:
            release = client.get_release(spec.owner, spec.repo, tag)
            try:
                version = self._admitted(release, requirement, admits)
            except NexoError as error:
                if error.kind in {"network", "rate_limited"}:
                    raise
                continue  # not a release of this plugin that can be read: passed over
            if version is not None and (best is None or version > best[0]):
                best = (version, release)
        if best is None:
            return self
        if self.context.notice is not None:
            self.context.notice(
                f"note: the latest release of {spec.owner}/{spec.repo} ({latest.tag}) does "
                f"not match {requirement}; locking {best[1].tag}, the newest release that does"
            )
        return self._at(best[1])

    def _admitted(
        self, release: Release, requirement: VersionReq, admits: Admits | None
    ) -> Version | None:
        """The version order of ``release`` when it matches ``requirement`` and its manifest
        asset is accepted by ``admits`` (when given); ``None`` otherwise."""
        client = self.context.github()
        _, version_text, _ = release_tarballs(client, release, self.manifest_problem)
        version = parse_version(version_text)
        if not requirement.matches(version):
            return None
        if admits is not None:
            manifest = client.read_manifest_asset(
                release, MANIFEST_ASSETS, max_bytes=MAX_MANIFEST_ASSET_BYTES
            )
            if manifest is not None and not admits(manifest[1]):
                return None
        return version

    def version_tags(self) -> None:
        """Releases are not listed here (``outdated`` and ``upgrade`` ask for the newest):
        ``None``."""

    def every_target(self, *, vouched: bool = False) -> list[ReleaseCandidate]:
        """Every ``<id>-<version>-<target>.tar.gz`` of the release, by target; with
        ``vouched``, each with the sha256 its ``.sha256`` sidecar and API digest agree on."""
        found = self.identify()
        release, client = found.release, self.context.github()
        assets = tarballs_of(release, found.identity)
        return [
            ReleaseCandidate(
                plugin_id=found.identity.plugin_id,
                version=found.identity.version,
                target=target,
                asset_name=asset.name,
                origin=self._origin(release, asset.name),
                sha256=release_sha256(client, release, asset) if vouched else None,
                size=asset.size,
                manifest=found.manifest,
                locator=(release, asset),
            )
            for target, asset in assets.items()
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
        listed_in = None
        # A GoReleaser-shaped release: one checksums file for every asset, read once for the
        # checksum here and again as signature material below (the same bytes both times).
        checksums_files: dict[str, bytes] = {}
        if sidecar is None and digest is None:
            checksums_files = release_checksums_files(client, release)
            listed = one_listed(asset.name, trust.listed_sha256(asset.name, checksums_files))
            if listed is not None:
                sidecar, listed_in = listed
        sha256 = sidecar or digest or ""
        # Under mode ignore nothing is verified: no signature material is fetched and the
        # attestations endpoint is not asked. Otherwise the material is fetched while the
        # tarball downloads (its sha256 is known before): its round trips do not wait for
        # the tarball's last byte. Nothing is verified here. (A tarball with no checksum is
        # refused once downloaded, as before, and nothing is looked up for it.)
        looked_up: Aside[dict[str, Path | bytes]] | None = None
        if material and sha256:
            directory = self.context.temp_dir()
            looked_up = Aside(
                lambda: release_material(
                    client,
                    release,
                    asset_name=asset.name,
                    sha256=sha256,
                    repository=(self.spec.owner, self.spec.repo),
                    directory=directory,
                    attestations_as_file=False,
                    fetched=checksums_files,
                ),
                name="nexo-signatures",
            )
        try:
            blob = self.context.hold(
                cached_asset(
                    client,
                    asset,
                    self.context.cache,
                    sidecar=sidecar,
                    sidecar_name=listed_in,
                    digest=digest,
                    max_bytes=self.context.max_download,
                    progress=self.context.progress,
                )
            )
            checked = verify_checksums(
                sha256, asset.name, sidecar=sidecar, digest=digest, sidecar_name=listed_in
            )
        except Exception:
            if looked_up is not None:
                looked_up.wait()  # the tarball's failure is the answer: nothing left under way
            raise
        found = looked_up.result() if looked_up is not None else {}
        return fetched_artifact(candidate, blob, sha256, checked, found)

    def _fetch_pinned(self, candidate: ReleaseCandidate, *, material: bool) -> FetchedArtifact:
        """A candidate whose sha256 is pinned: the release is read only when the blob is not
        cached or the signature material is wanted."""
        sha256 = candidate.sha256
        if sha256 is None:
            raise AssertionError("a candidate without a locator pins its sha256")
        client = self.context.github()

        read: list[Release] = []
        reading = threading.Lock()

        def release() -> Release:
            # Asked from two threads (the material's and the download's): read once.
            with reading:
                if not read:
                    read.append(client.get_release(self.spec.owner, self.spec.repo, self.spec.tag))
                return read[0]

        # The material is fetched while the tarball downloads (see fetch); the release is
        # read once, by whichever asks first.
        looked_up: Aside[dict[str, Path | bytes]] | None = None
        if material:
            directory = self.context.temp_dir()
            looked_up = Aside(
                lambda: release_material(
                    client,
                    release(),
                    asset_name=candidate.asset_name,
                    sha256=sha256,
                    repository=(self.spec.owner, self.spec.repo),
                    directory=directory,
                ),
                name="nexo-signatures",
            )

        def fetch(sink: BlobSink) -> None:
            asset = release().asset(candidate.asset_name)
            if asset is None:
                raise NexoError(
                    f"release {release().tag} no longer has {candidate.asset_name}",
                    kind="asset_not_found",
                )
            client.download(asset, sink, max_bytes=self.context.max_download)

        try:
            with self.context.download_slot():
                blob = self.context.hold(self.context.cache.open_blob(sha256, fetch))
        except Exception:
            if looked_up is not None:
                looked_up.wait()
            raise
        found = looked_up.result() if looked_up is not None else {}
        checked = verify_checksums(sha256, candidate.asset_name, sidecar=None, digest=sha256)
        return fetched_artifact(candidate, blob, sha256, checked, found)


def read_identity(
    client: GitHubClient,
    release: Release,
    manifest_problem: ManifestCheck,
    *,
    installed: str | None = None,
    same_only: bool = False,
) -> tuple[ReleaseIdentity, tuple[str, str] | None]:
    """The plugin id and version of ``release`` (:func:`release_identity`), and its manifest
    asset as ``(name, text)`` when it has one.

    With ``installed`` (a lookup that only compares the release with the version installed:
    ``outdated``), a release whose tarball names carry one version of one plugin, newer or
    not, is read from those names alone, without fetching its manifest asset: a manifest
    that :func:`release_identity` accepts must name that same version, so the asset could
    only add a refusal, and that refusal is the install's and the upgrade's to make (they
    read and check the manifest asset of any version they install). So such a lookup is one
    request per plugin, token or not. A release the names do not settle (several versions or
    plugins) is judged from its manifest asset; without a token, that lookup reads the asset
    from its browser download URL first, outside the API's rate limit
    (:meth:`GitHubClient.download`).

    With ``same_only`` (an ``upgrade``, which installs any other version it finds), only a
    release whose names settle it as ``installed`` itself is read from them: the plugin is
    up to date, nothing is installed, and the same refusal-only argument holds. A release
    of any other version is judged from its manifest asset as ``install`` judges it (read by
    its API asset URL, checked), before the upgrade compares, refuses or installs it."""
    if installed is not None:
        settled = _settled_by_names(release)
        if settled is not None and (not same_only or settled.version == installed):
            return settled, None
    manifest = client.read_manifest_asset(
        release,
        MANIFEST_ASSETS,
        max_bytes=MAX_MANIFEST_ASSET_BYTES,
        browser_first=installed is not None and not same_only and client.token is None,
    )
    return release_identity(release, manifest, manifest_problem=manifest_problem), manifest


def _settled_by_names(release: Release) -> ReleaseIdentity | None:
    """The identity the tarball names of ``release`` give when they name exactly one
    ``(id, version)``; else ``None``."""
    named = {p[:2] for name in tarball_names(release) if (p := parse_tarball_name(name))}
    if len(named) != 1:
        return None
    ((plugin_id, version),) = named
    return ReleaseIdentity(plugin_id, version, "tarball names")


def release_tarballs(
    client: GitHubClient, release: Release, manifest_problem: ManifestCheck
) -> tuple[str, str, dict[str, ReleaseAsset]]:
    """The plugin id, version and per-target tarballs of a release, read as ``install``
    reads them (the manifest asset, else the tarball names)."""
    identity, _ = read_identity(client, release, manifest_problem)
    return identity.plugin_id, identity.version, tarballs_of(release, identity)


def tarballs_of(release: Release, identity: ReleaseIdentity) -> dict[str, ReleaseAsset]:
    """The ``<id>-<version>-<target>.tar.gz`` assets of ``release`` by target;
    ``asset_not_found`` when it has none."""
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
    return dict(sorted(assets.items()))


def release_sidecar(client: GitHubClient, release: Release, asset: ReleaseAsset) -> str | None:
    """The sha256 the release's ``<asset>.sha256`` sidecar names, ``None`` without one;
    ``checksum_mismatch`` for one larger than a checksum file ever is; raises what
    :func:`parse_sidecar` and the client's fetch raise."""
    sidecar_asset = release.asset(asset.name + ".sha256")
    if sidecar_asset is None:
        return None
    too_large = over_size_cap(
        sidecar_asset.name,
        MAX_SIDECAR_BYTES,
        holds="a checksum file (one line: the sha256 and the tarball's name)",
        kind="checksum_mismatch",
    )
    text = client.fetch_bytes(sidecar_asset, max_bytes=MAX_SIDECAR_BYTES, too_large=too_large)
    return parse_sidecar(text, asset.name)


def release_checksums_names(release: Release) -> list[str]:
    """The names of the release's checksums files, any of which could list its tarball;
    ``checksum_mismatch`` when there are more than :data:`MAX_RELEASE_CHECKSUMS_FILES`
    (refused before any is fetched: each is a request and up to 1 MiB)."""
    names = sorted(item.name for item in release.assets if trust.is_checksums_file(item.name))
    if len(names) > MAX_RELEASE_CHECKSUMS_FILES:
        raise NexoError(
            f"release {release.tag} has {len(names)} checksums files ({', '.join(names[:3])}, "
            f"...), more than the {MAX_RELEASE_CHECKSUMS_FILES} a release is read for; "
            "refusing them unread (the release is broken or hostile: ask its publisher)",
            kind="checksum_mismatch",
            details={"checksums_files": len(names), "limit": MAX_RELEASE_CHECKSUMS_FILES},
        )
    return names


def release_checksums_files(client: GitHubClient, release: Release) -> dict[str, bytes]:
    """The bytes of the release's checksums files (``checksums.txt``, ``SHA256SUMS``,
    ``<name>_checksums.txt``) by name; ``checksum_mismatch`` for one larger than one ever
    is."""
    names = release_checksums_names(release)
    files: dict[str, bytes] = {}
    for name in names:
        found = release.asset(name)
        if found is None:
            continue
        too_large = over_size_cap(
            name,
            trust.MAX_CHECKSUMS_BYTES,
            holds="a checksums file (a line per release asset)",
            kind="checksum_mismatch",
        )
        files[name] = client.fetch_bytes(
            found, max_bytes=trust.MAX_CHECKSUMS_BYTES, too_large=too_large
        )
    return files


def release_sha256(client: GitHubClient, release: Release, asset: ReleaseAsset) -> str:
    """The sha256 a release vouches for (``.sha256`` sidecar and/or API digest; they must
    agree; else a checksums file that lists the asset); ``checksum_missing`` /
    ``checksum_mismatch`` otherwise."""
    digest = parse_digest(asset.digest)
    sidecar = release_sidecar(client, release, asset)
    if sidecar is None and digest is None:
        files = release_checksums_files(client, release)
        listed = one_listed(asset.name, trust.listed_sha256(asset.name, files))
        if listed is not None:
            return listed[0]
        raise no_checksum(asset.name, asset.digest)
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
    fetched: Mapping[str, bytes] | None = None,
) -> dict[str, Path | bytes]:
    """The signature material a GitHub release offers for ``asset_name``, as files in
    ``directory``: what install reads (the asset's own bundles and signatures, signed checksums
    files), and else the API's artifact attestations of the asset (or of a checksums file),
    written as ``<file>.intoto.jsonl`` so they travel with a mirror and verify offline
    (``attestations_as_file`` false: kept in memory under the name the API offers them by).
    ``fetched``: bytes of some of them read already (the checksums files), not asked again."""
    release_checksums_names(release)  # refuses a release with too many to read
    material: dict[str, Path | bytes] = {}
    for name in trust.material_names(asset_name, (item.name for item in release.assets)):
        found = release.asset(name)
        if found is None:
            continue
        path = directory / name
        too_large = over_size_cap(
            name, MAX_SIGNATURE_BYTES, holds="signature material", kind="signature_invalid"
        )
        known = (fetched or {}).get(name)
        path.write_bytes(
            known
            if known is not None
            else client.fetch_bytes(found, max_bytes=MAX_SIGNATURE_BYTES, too_large=too_large)
        )
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
