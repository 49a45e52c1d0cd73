"""Where a fleet's plugins come from: GitHub releases and OCI registries, side by side.

A :class:`Session` is the command's :class:`~nexo_pkg.sources.context.SourceContext` (one
client per GitHub API and per registry host per worker thread, the blob cache, the trust
policy) for a whole ``lock``/``sync`` run. For each wanted plugin it *resolves* a version
(every target's asset name, size and sha256) through the sources, and for each locked target
it builds the :class:`~nexo_pkg.sources.base.ReleaseCandidate` the lock pins and *fetches* it
through the same source an install uses.
"""

from __future__ import annotations

from dataclasses import dataclass

from nexo_pkg.core.errors import NexoError
from nexo_pkg.fleet.lockfile import LockedPlugin, LockedTarget, WantedPlugin
from nexo_pkg.install.api import (
    NO_CALLBACKS,
    Admitting,
    InstallCallbacks,
    InstallOptions,
    check_compatible,
    manifest_asset_problem,
)
from nexo_pkg.sources.api import (
    FetchedArtifact,
    ReleaseCandidate,
    SourceContext,
    SourceRequest,
    locked_origin,
    open_source,
)
from nexo_pkg.trust import api as trust


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
    # The GitHub release a registry copy was mirrored from (owner/repo@tag).
    origin: str | None = None


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
        """Resolve ``wanted`` to a version and the targets it asks for (all by default): the
        newest version matching its requirement and, unless ``--force``, admitting the
        daemon (a version that stays incompatible is ``incompatible``, exit 1)."""
        source = open_source(wanted.source, self, SourceRequest(None, manifest_asset_problem))
        choices = self.options.install
        daemon = None if choices.force else choices.daemon
        admits = Admitting(daemon) if daemon is not None else None
        if wanted.version_req is not None:
            source = source.matching(wanted.version_req, admits)
        elif admits is not None:
            source = source.compatible(admits, doing="locking") or source
        offered = source.newest()
        manifest = offered.manifest if daemon is not None else None
        if daemon is not None and manifest is not None:
            check_compatible(
                manifest,
                daemon,
                where=offered.where,
                remedy=f"lock a {offered.unit} it admits ({offered.pin} in nexo-plugins.toml)",
            )
        if offered.plugin_id != wanted.plugin_id:
            raise NexoError(
                f"{wanted.source} is plugin {offered.plugin_id!r}, not {wanted.plugin_id!r}",
                kind="asset_not_found",
            )
        targets = {
            c.target: LockedTarget(
                c.target, c.asset_name, c.size or 0, c.sha256 or "", c.manifest_digest
            )
            for c in source.every_target(vouched=True)
        }
        if wanted.targets is not None:
            missing = sorted(set(wanted.targets) - set(targets))
            if missing:
                raise NexoError(
                    f"{wanted.plugin_id} {offered.version} from {wanted.source} has no "
                    f"{', '.join(missing)} tarball (it has {', '.join(targets)})",
                    kind="asset_not_found",
                )
            targets = {t: targets[t] for t in wanted.targets}
        return Resolved(
            plugin_id=offered.plugin_id,
            version=offered.version,
            resolved=offered.pinned,
            targets=targets,
            published=offered.published,
            origin=offered.copied_from,
        )

    # -- fetching one locked target -------------------------------------------------------

    def fetch_locked(
        self, candidate: ReleaseCandidate, resolved: str
    ) -> tuple[FetchedArtifact, trust.Mode]:
        """``candidate`` (a locked target) in the blob cache, hash-checked against the lock,
        through the source ``resolved`` (the lock's pinned reference) names, with its
        signature material unless the trust mode, resolved here once for its signing origin,
        is ``ignore``; returns the artifact and that mode."""
        mode = self.trust_mode(candidate.origin.owner, candidate.origin.repo)
        fetcher = open_source(resolved, self, SourceRequest(None, manifest_asset_problem))
        fetched = fetcher.fetch(candidate, material=mode != "ignore")
        # The bytes hash to the locked sha256, so a size the lock disagrees with is an edited
        # lock row: it is refused, as any other row that does not describe its tarball.
        if candidate.size is not None and fetched.size != candidate.size:
            raise NexoError(
                f"{candidate.asset_name} is {fetched.size} bytes, but the lock says "
                f"{candidate.size}: the lock does not describe the tarball it names",
                kind="checksum_mismatch",
                details={"expected_size": candidate.size, "size": fetched.size},
            )
        return fetched, mode


def locked_candidate(
    entry: LockedPlugin,
    row: LockedTarget,
    *,
    published: str | None,
    policy: trust.TrustPolicy,
) -> ReleaseCandidate:
    """The candidate ``entry`` pins for one target: its asset, sha256 and (for a registry)
    manifest digest, and the origin its receipt (dated ``published``) and signature check
    name (``policy`` binds registry repositories to owners: the registry kind's
    ``locked_origin``)."""
    origin = locked_origin(
        entry.source,
        entry.resolved,
        asset_name=row.asset,
        manifest_digest=row.manifest,
        github=entry.github,
        published=published,
        policy=policy,
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
