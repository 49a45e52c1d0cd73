"""Where a fleet's plugins come from: GitHub releases and OCI registries, side by side.

A :class:`Session` holds one client per GitHub API and per registry host for a whole
``lock``/``sync``/``install`` run (so requests are counted and auth is answered once), the
blob cache, and the trust policy. For each source it can *resolve* a version (every target's
asset name, size and sha256) and *open* one target: the tarball in the blob cache plus its
signature material, downloaded only when the cache does not hold it.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.versionreq import VersionReq, parse_version
from nexo_pkg.fleet import oci
from nexo_pkg.fleet.artifact import GitHubOrigin, TargetEntry, parse_target_manifest
from nexo_pkg.fleet.lockfile import LockedPlugin, LockedTarget, WantedPlugin
from nexo_pkg.install.select import MANIFEST_ASSETS, parse_tarball_name, release_identity
from nexo_pkg.sources.archive import ArchiveLimits
from nexo_pkg.sources.cache import BlobCache, BlobSink
from nexo_pkg.sources.checksum import parse_digest, parse_sidecar
from nexo_pkg.sources.hosttriple import NOARCH
from nexo_pkg.sources.oci_reference import OciReference, is_oci, parse_reference
from nexo_pkg.sources.spec import GitHubSource, parse_source, timestamp_or_none
from nexo_pkg.trust import entry as trust

if TYPE_CHECKING:
    from nexo_pkg.sources.github import GitHubClient, Release, ReleaseAsset
    from nexo_pkg.sources.registry import Manifest, RegistryClient

MAX_SIDECAR_BYTES = 64 * 1024
MAX_MANIFEST_BYTES = 1024 * 1024
MAX_SIGNATURE_BYTES = 4 * 1024 * 1024
# The key of a thread's GitHub client among its clients (registry hosts are the others).
_GITHUB = "<github>"


@dataclass(frozen=True)
class FleetOptions:
    """Settings shared by ``lock``, ``sync``, ``push``, ``mirror`` and registry installs."""

    nexo_home: Path
    trusted_keys: Path | None = None
    policy_path: Path | None = None
    require_signature: bool = False
    skip_signature_verify: bool = False
    github_api_url: str | None = None
    registry_config: Path | None = None
    plain_http: bool = False
    limits: ArchiveLimits = field(default_factory=ArchiveLimits)
    retry_base_delay: float | None = None
    # Total seconds one HTTP request may take (--timeout); None: NEXO_HTTP_TIMEOUT, else 300.
    http_timeout: float | None = None
    # Plugins handled at a time by `lock` and `sync` (--jobs); None: pool.DEFAULT_JOBS.
    jobs: int | None = None
    # Registry host -> mirrors that may serve the bytes a lock pins (fleet.mirrors).
    registry_mirrors: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Hears "still waiting" lines about slow GitHub answers (the CLI's notes); None: quiet.
    notice: Callable[[str], None] | None = None


@dataclass(frozen=True)
class OpenedTarget:
    """One target's tarball (in the blob cache) and its signature files (in a temp dir)."""

    tarball: Path
    asset_name: str
    sha256: str
    material: dict[str, Path]


@dataclass(frozen=True)
class Resolved:
    """A version of one source, with every target it ships (not yet verified)."""

    plugin_id: str
    version: str
    resolved: str
    targets: dict[str, LockedTarget]
    published: str | None = None
    origin: GitHubOrigin | None = None


def signing_origin(
    source: str, resolved: str, github: str | None, policy: trust.TrustPolicy | None = None
) -> tuple[str | None, str | None, str | None]:
    """The owner, repo and tag a signature must be bound to, whose trust-policy entries
    apply: a GitHub source's resolved release, or the release a registry copy was mirrored
    from. A registry repository the ``policy`` binds to an owner (``registry_owners.toml``)
    is that owner's: a copy without an origin is judged by the owner's entries, and one whose
    origin names another owner is ``registry_invalid``. Otherwise ``None`` for a version
    pushed straight to a registry (every author entry is then a candidate, as for a local
    tarball)."""
    if not is_oci(source):
        parsed = parse_source(resolved)
        assert isinstance(parsed, GitHubSource)  # noqa: S101 - written by lock
        return parsed.owner, parsed.repo, parsed.tag
    origin = GitHubOrigin.parse(github) if github else None
    reference = parse_reference(resolved)
    repository = f"{reference.host}/{reference.repository}"
    bound = policy.registry_owner(repository) if policy is not None else None
    if bound is not None and origin is not None and origin.owner.casefold() != bound.casefold():
        raise NexoError(
            f"{repository} is bound to owner {bound!r} in the registry bindings, but this "
            f"copy says it was published from {origin}; refusing it",
            kind="registry_invalid",
            details={"repository": repository, "bound_owner": bound, "origin": str(origin)},
        )
    if origin is not None:
        return origin.owner, origin.repo, origin.tag
    return bound, None, None


class Session:
    """Clients, cache and policy for one run; use as a context manager."""

    def __init__(self, options: FleetOptions) -> None:
        self.options = options
        self.cache = BlobCache(options.nexo_home)
        # HTTP clients keep per-request state (deadline, auth answers, a kept-alive
        # connection): each worker thread of a run gets its own, made on first use.
        self._local = threading.local()
        self._clients: list[tuple[str, RegistryClient]] = []
        self._github_used = False
        self._policy: trust.TrustPolicy | None = None
        self._stack = contextlib.ExitStack()
        self._guard = threading.Lock()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()

    # -- clients --------------------------------------------------------------------------

    def _thread_clients(self) -> dict[str, Any]:
        clients: dict[str, Any] | None = getattr(self._local, "clients", None)
        if clients is None:
            clients = self._local.clients = {}
        return clients

    def _keep(self, close: Callable[[], object]) -> None:
        with self._guard:
            self._stack.callback(close)

    def registry(self, reference: OciReference) -> RegistryClient:
        """This thread's client for the registry of ``reference``."""
        registries = self._thread_clients()
        client: RegistryClient | None = registries.get(reference.host)
        if client is None:
            from nexo_pkg.sources.registry import open_client  # noqa: PLC0415 - httpx on use

            client = open_client(
                reference,
                registry_config=self.options.registry_config,
                plain_http=self.options.plain_http,
                timeout=self.options.http_timeout,
                retry_base_delay=self.options.retry_base_delay,
            )
            self._keep(client.close)
            with self._guard:
                self._clients.append((reference.host, client))
            registries[reference.host] = client
        return client

    def github(self) -> GitHubClient:
        """This thread's GitHub API client."""
        clients = self._thread_clients()
        github: GitHubClient | None = clients.get(_GITHUB)
        if github is None:
            from nexo_pkg.sources.github import (  # noqa: PLC0415 - httpx on use
                GitHubClient,
                resolve_api_base,
                resolve_token,
            )

            api_base = resolve_api_base(self.options.github_api_url)
            github = GitHubClient(
                api_base,
                resolve_token(api_base),
                retry_base_delay=self.options.retry_base_delay,
                timeout=self.options.http_timeout,
                notice=self.options.notice,
            )
            self._keep(github.close)
            self._github_used = True
            clients[_GITHUB] = github
        return github

    def request_counts(self) -> dict[str, Any]:
        """Requests made so far: per registry host and kind (summed over the clients of every
        thread), and whether GitHub was asked."""
        totals: dict[str, Counter[str]] = {}
        with self._guard:
            clients = list(self._clients)
        for host, client in clients:
            totals.setdefault(host, Counter()).update(client.requests)
        registries = {host: dict(sorted(totals[host].items())) for host in sorted(totals)}
        return {
            "registries": registries,
            "github_client_used": self._github_used,
            "cache": {"hits": self.cache.hits, "misses": self.cache.misses},
        }

    def policy(self) -> trust.TrustPolicy:
        if self._policy is None:
            if self.options.trusted_keys is not None:
                self._policy = trust.load_policy(self.options.trusted_keys, explicit=True)
            else:
                default = self.options.policy_path or trust.default_policy_path(
                    self.options.nexo_home
                )
                self._policy = trust.load_policy(default, explicit=False)
        return self._policy

    def temp_dir(self) -> Path:
        with self._guard:
            return Path(
                self._stack.enter_context(tempfile.TemporaryDirectory(prefix="nexo-fleet-"))
            )

    # -- resolving ------------------------------------------------------------------------

    def resolve(self, wanted: WantedPlugin) -> Resolved:
        """Resolve ``wanted`` to a version and the targets it asks for (all by default)."""
        if is_oci(wanted.source):
            resolved = self.resolve_oci(parse_reference(wanted.source), wanted.version_req)
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
            kept = {t: resolved.targets[t] for t in wanted.targets}
            resolved = Resolved(
                resolved.plugin_id, resolved.version, resolved.resolved, kept,
                resolved.published, resolved.origin,
            )  # fmt: skip
        return resolved

    def resolve_oci(
        self,
        reference: OciReference,
        requirement: VersionReq | None,
        *,
        host: tuple[str, ...] | None = None,
    ) -> Resolved:
        """Resolve a registry version with every target it ships, or with ``host`` (the host's
        target candidates, in order) only the one target an install takes: the first of them
        the version has, else its ``noarch``. Only the targets kept have their manifest read."""
        client = self.registry(reference)
        plugin = oci.resolve(client, reference, requirement)
        chosen = plugin.targets
        if host is not None:
            first = next((t for t in (*host, NOARCH) if t in plugin.targets), None)
            if first is None:
                raise NexoError(
                    f"{plugin.plugin_id} {plugin.version} in {reference.base} has no tarball "
                    f"for this host ({', '.join(host) or 'noarch only'}); it has "
                    f"{', '.join(plugin.targets) or 'none'}",
                    kind="asset_not_found",
                )
            chosen = {first: plugin.targets[first]}
        targets: dict[str, LockedTarget] = {}
        for target, entry in chosen.items():
            asset = oci.target_asset(client, reference.repository, plugin, entry)
            targets[target] = LockedTarget(
                target=target,
                asset=asset.asset_name,
                size=asset.size,
                sha256=asset.sha256,
                manifest=entry.manifest_digest,
            )
        if not targets:
            raise NexoError(f"{reference} holds no plugin tarball", kind="asset_not_found")
        return Resolved(
            plugin_id=plugin.plugin_id,
            version=plugin.version,
            resolved=str(reference.with_digest(plugin.index_digest)),
            targets=targets,
            published=timestamp_or_none(plugin.created),
            origin=plugin.origin,
        )

    def _resolve_github(self, source: GitHubSource, requirement: VersionReq | None) -> Resolved:
        client = self.github()
        release = client.find_release(source.owner, source.repo, source.tag)
        plugin_id, version, assets = release_tarballs(client, release)
        if requirement is not None and not requirement.matches(parse_version(version)):
            raise NexoError(
                f"{source.display()} resolves to {version}, which does not match {requirement}; "
                "name a matching tag in the source (owner/repo@tag)",
                kind="release_not_found",
            )
        targets: dict[str, LockedTarget] = {}
        for target, asset in assets.items():
            targets[target] = LockedTarget(
                target=target,
                asset=asset.name,
                size=asset.size,
                sha256=release_sha256(client, release, asset),
            )
        return Resolved(
            plugin_id=plugin_id,
            version=version,
            resolved=f"{source.owner}/{source.repo}@{release.tag}",
            targets=targets,
            published=release.published_at,
        )

    # -- opening one target ---------------------------------------------------------------

    @contextlib.contextmanager
    def open_target(
        self, source: str, resolved: str, row: LockedTarget, plugin_id: str
    ) -> Iterator[OpenedTarget]:
        """The tarball of ``row`` (cache first) and its signature files, hash-checked."""
        directory = self.temp_dir()
        if is_oci(source):
            if row.manifest is None:
                raise NexoError(
                    f"the lock entry of {plugin_id} {row.target} has no manifest digest",
                    kind="lock_invalid",
                    exit_code=2,
                )
            reference, client, found = self._pinned_manifest(
                parse_reference(resolved), row.manifest
            )
            manifest = found.json()
            entry = TargetEntry(row.target, row.manifest, 0)
            asset = parse_target_manifest(manifest, entry, plugin_id, _version_of(row.asset))
            if asset.sha256 != row.sha256:
                raise NexoError(
                    f"{row.asset} in {reference} is sha256 {asset.sha256}, the lock says "
                    f"{row.sha256}",
                    kind="checksum_mismatch",
                )

            def fetch(sink: BlobSink) -> None:
                client.get_blob(
                    reference.repository,
                    "sha256:" + row.sha256,
                    sink.write,
                    max_bytes=self.options.limits.max_download,
                    reset=sink.reset,
                )

            material = oci.fetch_signatures(
                client, reference.repository, asset, self.cache, directory
            )
        else:
            github_source = parse_source(resolved)
            assert isinstance(github_source, GitHubSource)  # noqa: S101 - written by lock
            gh_client = self.github()
            release_holder: list[Release] = []

            def release() -> Release:
                if not release_holder:
                    release_holder.append(
                        gh_client.get_release(
                            github_source.owner, github_source.repo, github_source.tag
                        )
                    )
                return release_holder[0]

            def fetch(sink: BlobSink) -> None:
                found = _asset(release(), row.asset)
                gh_client.download(found, sink, max_bytes=self.options.limits.max_download)

            owner, repo = github_source.owner, github_source.repo
            mode = trust.resolve_mode(
                self.policy(),
                owner,
                require_signature=self.options.require_signature,
                skip_verify=self.options.skip_signature_verify,
            )
            # Nothing is verified under mode ignore: no material, no attestations request.
            material = (
                release_material(
                    gh_client,
                    release(),
                    asset_name=row.asset,
                    sha256=row.sha256,
                    repository=(owner, repo),
                    directory=directory,
                )
                if mode != "ignore"
                else {}
            )
        with self.cache.open_blob(row.sha256, fetch) as blob:
            yield OpenedTarget(blob, row.asset, row.sha256, material)

    def _pinned_manifest(
        self, reference: OciReference, digest: str
    ) -> tuple[OciReference, RegistryClient, Manifest]:
        """The manifest ``digest`` of ``reference`` from the first of its mirrors that has
        it, else from its own registry (:mod:`nexo_pkg.fleet.mirrors`). What comes from a
        mirror is checked against the digest like anything else; a mirror that is down,
        refuses or lacks it is passed over, the registry's own failure is raised."""
        from nexo_pkg.fleet.mirrors import candidates  # noqa: PLC0415

        for candidate in candidates(reference, self.options.registry_mirrors):
            client = self.registry(candidate)
            try:
                return candidate, client, client.get_manifest(candidate.repository, digest)
            except NexoError as error:
                if candidate == reference or error.kind == "checksum_mismatch":
                    raise
        raise AssertionError("unreachable: the registry itself is the last candidate")

    def verify(
        self, opened: OpenedTarget, entry: LockedPlugin | Resolved, source: str
    ) -> trust.SignatureOutcome:
        """The signature step for one opened target under the session's policy and flags."""
        github = (
            entry.github
            if isinstance(entry, LockedPlugin)
            else (str(entry.origin) if entry.origin else None)
        )
        policy = self.policy()
        owner, repo, tag = signing_origin(source, entry.resolved, github, policy)
        mode = trust.resolve_mode(
            policy,
            owner,
            require_signature=self.options.require_signature,
            skip_verify=self.options.skip_signature_verify,
        )
        return trust.verify_asset_signature(
            opened.tarball,
            asset_name=opened.asset_name,
            material=opened.material,
            owner=owner,
            repo=repo,
            tag=tag,
            policy=policy,
            mode=mode,
        )


def release_material(
    client: GitHubClient,
    release: Release,
    *,
    asset_name: str,
    sha256: str,
    repository: tuple[str, str],
    directory: Path,
) -> dict[str, Path]:
    """The signature material a GitHub release offers for ``asset_name``, as files in
    ``directory``: what install reads (the asset's own bundles and signatures, signed checksums
    files), and else the API's artifact attestations of the asset (or of a checksums file),
    written as ``<file>.intoto.jsonl`` so they travel with a mirror and verify offline."""
    material: dict[str, Path] = {}
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
    if attested is not None:
        path = directory / attested.file_name
        path.write_bytes(attested.data)
        material[attested.file_name] = path
    return material


def _version_of(asset_name: str) -> str:
    parsed = parse_tarball_name(asset_name)
    return parsed[1] if parsed else ""


def _asset(release: Release, name: str) -> ReleaseAsset:
    found = release.asset(name)
    if found is None:
        raise NexoError(f"release {release.tag} no longer has {name}", kind="asset_not_found")
    return found


def release_tarballs(
    client: GitHubClient, release: Release
) -> tuple[str, str, dict[str, ReleaseAsset]]:
    """The plugin id, version and per-target tarballs of a release, read as ``install``
    reads them (the manifest asset, else the tarball names)."""
    manifest = client.read_manifest_asset(release, MANIFEST_ASSETS, max_bytes=MAX_MANIFEST_BYTES)
    identity = release_identity(release, manifest)
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


def release_sha256(client: GitHubClient, release: Release, asset: ReleaseAsset) -> str:
    """The sha256 a release vouches for (``.sha256`` sidecar and/or API digest; they must
    agree); ``checksum_missing`` / ``checksum_mismatch`` otherwise."""
    digest = parse_digest(asset.digest)
    sidecar = None
    sidecar_asset = release.asset(asset.name + ".sha256")
    if sidecar_asset is not None:
        text = client.fetch_bytes(sidecar_asset, max_bytes=MAX_SIDECAR_BYTES)
        sidecar = parse_sidecar(text.decode("utf-8", errors="replace"), asset.name)
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
