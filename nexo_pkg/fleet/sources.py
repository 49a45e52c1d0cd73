"""Where a fleet's plugins come from: GitHub releases and OCI registries, side by side.

A :class:`Session` is the command's :class:`~nexo_pkg.sources.context.SourceContext` (one
client per GitHub API and per registry host per worker thread, the blob cache, the trust
policy) for a whole ``lock``/``sync`` run. For each wanted plugin it *resolves* a version
(every target's asset name, size and sha256) through the sources, and for each locked target
it builds the :class:`~nexo_pkg.sources.base.ReleaseCandidate` the lock pins and *fetches* it
through the same source an install uses.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.version import Version, parse_version
from nexo_pkg.core.versionreq import VersionReq
from nexo_pkg.fleet.lockfile import LockedPlugin, LockedTarget, WantedPlugin
from nexo_pkg.install.api import (
    MAX_OLDER_RELEASES,
    NO_CALLBACKS,
    DaemonVersion,
    InstallCallbacks,
    InstallOptions,
    check_compatible,
    manifest_asset_problem,
    newest_compatible_tag,
    newest_compatible_version,
)
from nexo_pkg.sources.artifact import GitHubOrigin
from nexo_pkg.sources.base import FetchedArtifact, Origin, ReleaseCandidate, Source
from nexo_pkg.sources.context import SourceContext
from nexo_pkg.sources.github import Release
from nexo_pkg.sources.oci_reference import OciReference, is_oci, parse_reference
from nexo_pkg.sources.oci_source import OciSource, registry_origin
from nexo_pkg.sources.releases import (
    LATEST_TAG,
    MAX_MANIFEST_ASSET_BYTES,
    GitHubReleaseSource,
    release_sha256,
    release_tarballs,
)
from nexo_pkg.sources.releases import (
    SOURCE_TYPE as GITHUB_SOURCE_TYPE,
)
from nexo_pkg.sources.select import MANIFEST_ASSETS
from nexo_pkg.sources.spec import GitHubSource, parse_source
from nexo_pkg.trust import entry as trust


@dataclass(frozen=True)
class FleetOptions:
    """What the user chose for ``lock``, ``sync``, ``push`` and ``mirror``: install's choices
    (the home, the trust policy and its flags, the network, the archive limits; ``sync``
    installs with them, into the root it is given) and how many plugins go at a time."""

    install: InstallOptions
    # Plugins handled at a time by `lock` and `sync` (--jobs); None: pool.DEFAULT_JOBS.
    jobs: int | None = None


@dataclass(frozen=True)
class Resolved:
    """A version of one source, with every target it ships (not yet verified)."""

    plugin_id: str
    version: str
    resolved: str
    targets: dict[str, LockedTarget]
    published: str | None = None
    origin: GitHubOrigin | None = None


class Session(SourceContext):
    """The :class:`SourceContext` of one ``lock``/``sync``/``push``/``mirror`` run, built
    once from its :class:`FleetOptions` (and the notices of its callbacks); use as a context
    manager."""

    def __init__(self, options: FleetOptions, callbacks: InstallCallbacks = NO_CALLBACKS) -> None:
        choices = options.install
        super().__init__(
            choices.nexo_home,
            choices.network,
            choices.trust,
            max_download=choices.limits.max_download,
            notice=callbacks.notice,
        )
        self.options = options

    def __enter__(self) -> Session:
        return self

    # -- resolving ------------------------------------------------------------------------

    def resolve(self, wanted: WantedPlugin) -> Resolved:
        """Resolve ``wanted`` to a version and the targets it asks for (all by default)."""
        if is_oci(wanted.source):
            resolved = self._resolve_oci(parse_reference(wanted.source), wanted.version_req)
        else:
            parsed = parse_source(wanted.source)
            assert isinstance(parsed, GitHubSource)  # noqa: S101 - validated when read
            resolved = self._resolve_github(parsed, wanted.version_req)
        if resolved.plugin_id != wanted.plugin_id:
            raise NexoError(
                f"{wanted.source} is plugin {resolved.plugin_id!r}, not {wanted.plugin_id!r}",
                kind="asset_not_found",
            )
        if wanted.targets is not None:
            missing = sorted(set(wanted.targets) - set(resolved.targets))
            if missing:
                raise NexoError(
                    f"{wanted.plugin_id} {resolved.version} from {wanted.source} has no "
                    f"{', '.join(missing)} tarball (it has {', '.join(resolved.targets)})",
                    kind="asset_not_found",
                )
            resolved = replace(resolved, targets={t: resolved.targets[t] for t in wanted.targets})
        return resolved

    def _resolve_oci(self, reference: OciReference, requirement: VersionReq | None) -> Resolved:
        """A registry version with every target it ships."""
        source = OciSource(reference, self, targets=None, requirement=requirement)
        daemon = self.options.install.daemon
        if daemon is not None and not self.options.install.force:
            source = self._compatible_version(source, daemon)
        candidates = source.resolve()
        plugin = source.version()
        targets = {
            c.target: LockedTarget(
                c.target, c.asset_name, c.size or 0, c.sha256 or "", c.manifest_digest
            )
            for c in candidates
        }
        first = candidates[0].origin
        return Resolved(
            plugin_id=plugin.plugin_id,
            version=plugin.version,
            resolved=first.display,
            targets=targets,
            published=first.published,
            origin=plugin.origin,
        )

    def _resolve_github(self, source: GitHubSource, requirement: VersionReq | None) -> Resolved:
        client = self.github()
        release = client.find_release(source.owner, source.repo, source.tag)
        daemon = self.options.install.daemon
        if daemon is not None and self.options.install.force:
            daemon = None
        if requirement is not None and source.tag in (None, LATEST_TAG):
            # As cargo and uv: the newest release that matches, not only the latest.
            release = self._matching_release(source, release, requirement, daemon)
        elif daemon is not None:
            release = self._compatible_release(source, release, daemon)
        plugin_id, version, assets = release_tarballs(client, release, manifest_asset_problem)
        if requirement is not None and not requirement.matches(parse_version(version)):
            raise NexoError(
                f"{source.display()} resolves to {version}, which does not match {requirement}"
                + (
                    f", nor does any release before it (up to {MAX_OLDER_RELEASES} looked at)"
                    if source.tag in (None, LATEST_TAG)
                    else ""
                )
                + "; name a matching tag in the source (owner/repo@tag)",
                kind="release_not_found",
            )
        targets = {
            target: LockedTarget(
                target, asset.name, asset.size, release_sha256(client, release, asset)
            )
            for target, asset in assets.items()
        }
        return Resolved(
            plugin_id=plugin_id,
            version=version,
            resolved=f"{source.owner}/{source.repo}@{release.tag}",
            targets=targets,
            published=release.published_at,
        )

    def _matching_release(
        self,
        source: GitHubSource,
        latest: Release,
        requirement: VersionReq,
        daemon: DaemonVersion | None,
    ) -> Release:
        """The release of the highest version matching ``requirement`` (and, with
        ``daemon``, whose manifest asset admits it) among ``latest`` and the
        :data:`MAX_OLDER_RELEASES` releases GitHub lists after it, as ``install`` walks
        releases for ``min_nexo_version``: versions read from release metadata and manifest
        assets (else tarball names) alone, nothing downloaded. ``latest`` when none matches
        (the caller then says so); a release whose version cannot be read is passed over."""
        client = self.github()
        if self._admitted(latest, requirement, daemon) is not None:
            return latest
        tags = list(client.release_tags(source.owner, source.repo) or [])
        best: tuple[Version, Release] | None = None
        for tag in [tag for tag in tags if tag != latest.tag][:MAX_OLDER_RELEASES]:
            release = client.get_release(source.owner, source.repo, tag)
            try:
                version = self._admitted(release, requirement, daemon)
            except NexoError as error:
                if error.kind in {"network", "rate_limited"}:
                    raise
                continue  # not a release of this plugin that can be read: passed over
            if version is not None and (best is None or version > best[0]):
                best = (version, release)
        if best is None:
            return latest
        chosen = best[1]
        notice = self.notice
        if notice is not None:
            notice(
                f"note: the latest release of {source.owner}/{source.repo} ({latest.tag}) does "
                f"not match {requirement}; locking {chosen.tag}, the newest release that does"
            )
        return chosen

    def _admitted(
        self, release: Release, requirement: VersionReq, daemon: DaemonVersion | None
    ) -> Version | None:
        """The version order of ``release`` when it matches ``requirement`` and its manifest
        asset admits ``daemon`` (when given); ``None`` otherwise."""
        client = self.github()
        _, version_text, _ = release_tarballs(client, release, manifest_asset_problem)
        version = parse_version(version_text)
        if not requirement.matches(version):
            return None
        if daemon is not None:
            manifest = client.read_manifest_asset(
                release, MANIFEST_ASSETS, max_bytes=MAX_MANIFEST_ASSET_BYTES
            )
            if manifest is not None:
                try:
                    check_compatible(manifest[1], daemon, where=release.tag, remedy="")
                except NexoError as error:
                    if error.kind != "incompatible":
                        raise
                    return None
        return version

    def _compatible_release(
        self, source: GitHubSource, release: Release, daemon: DaemonVersion
    ) -> Release:
        """``release``, or without a tag in ``source``, when its manifest asset excludes
        ``daemon``, the newest older release whose manifest asset admits it (as ``install``
        chooses, from release metadata and manifest assets alone); a release that stays
        incompatible is ``incompatible`` (exit 1), an explicit tag included."""
        client = self.github()
        manifest = client.read_manifest_asset(
            release, MANIFEST_ASSETS, max_bytes=MAX_MANIFEST_ASSET_BYTES
        )
        if source.tag in (None, LATEST_TAG):
            tag = newest_compatible_tag(
                client, source.owner, source.repo, latest=release, latest_manifest=manifest,
                daemon=daemon, max_manifest_bytes=MAX_MANIFEST_ASSET_BYTES, doing="locking",
            )  # fmt: skip
            if tag is not None:
                return client.get_release(source.owner, source.repo, tag)
        if manifest is not None:
            check_compatible(
                manifest[1],
                daemon,
                where=f"{source.owner}/{source.repo}@{release.tag}",
                remedy="lock a release it admits (owner/repo@tag in nexo-plugins.toml)",
            )
        return release

    def _compatible_version(self, source: OciSource, daemon: DaemonVersion) -> OciSource:
        """``source``, or without a tag or digest, when the newest version's manifest excludes
        ``daemon``, the newest older version whose manifest admits it (as ``install``
        chooses, from the annotation ``push`` writes); a version that stays incompatible is
        ``incompatible`` (exit 1), an explicit tag included."""
        if source.reference.reference is None:
            source = newest_compatible_version(source, daemon, doing="locking") or source
        text = source.manifest_text()
        if text is not None:
            plugin = source.version()
            check_compatible(
                text,
                daemon,
                where=f"{source.reference.base} {plugin.plugin_id} {plugin.version}",
                remedy="lock a version it admits (a tag in nexo-plugins.toml)",
            )
        return source

    # -- fetching one locked target -------------------------------------------------------

    def fetch_locked(
        self, candidate: ReleaseCandidate, source: str, resolved: str
    ) -> tuple[FetchedArtifact, trust.Mode]:
        """``candidate`` (a locked target) in the blob cache, hash-checked against the lock,
        through the source ``resolved`` (the lock's pinned reference) names, with its
        signature material unless the trust mode, resolved here once for its signing origin,
        is ``ignore``; returns the artifact and that mode."""
        mode = self.trust_mode(candidate.origin.owner)
        fetcher: Source
        if is_oci(source):
            fetcher = OciSource(parse_reference(resolved), self, targets=None)
        else:
            spec = parse_source(resolved)
            assert isinstance(spec, GitHubSource)  # noqa: S101 - written by lock
            fetcher = GitHubReleaseSource(
                spec, self, targets=(), manifest_problem=manifest_asset_problem
            )
        return fetcher.fetch(candidate, material=mode != "ignore"), mode


def locked_candidate(
    entry: LockedPlugin,
    row: LockedTarget,
    *,
    published: str | None,
    policy: trust.TrustPolicy,
) -> ReleaseCandidate:
    """The candidate ``entry`` pins for one target: its asset, sha256 and (for a registry)
    manifest digest, and the origin its receipt (dated ``published``) and signature check
    name (``policy`` binds registry repositories to owners, :func:`registry_origin`)."""
    if is_oci(entry.source):
        origin = registry_origin(
            entry.resolved,
            asset_name=row.asset,
            manifest_digest=row.manifest,
            github=entry.github,
            published=published,
            policy=policy,
        )
    else:
        spec = parse_source(entry.resolved)
        assert isinstance(spec, GitHubSource)  # noqa: S101 - written by lock
        origin = Origin(
            source={
                "type": GITHUB_SOURCE_TYPE,
                "owner": spec.owner,
                "repo": spec.repo,
                "tag": spec.tag,
                "asset": row.asset,
            },
            display=row.asset,
            owner=spec.owner,
            repo=spec.repo,
            tag=spec.tag,
            published=published,
        )
    return ReleaseCandidate(
        plugin_id=entry.plugin_id,
        version=entry.version,
        target=row.target,
        asset_name=row.asset,
        origin=origin,
        sha256=row.sha256,
        size=row.size,
        manifest_digest=row.manifest,
    )
