"""The install pipeline: resolve → pick → download → checksum → signature → inspect →
payload → confirm → install, each step taking what the previous one produced.

A failure raises one :class:`NexoError` and nothing downstream runs; temp files in the cache
are always deleted, and ``<dest>`` is only touched by the last step, under its lock.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import semver

from nexo_pkg.core.durable import sync_tree
from nexo_pkg.core.errors import NexoError, UsageError
from nexo_pkg.install.compat import (
    DaemonVersion,
    check_compatible,
    min_nexo_version,
    newest_compatible_tag,
)
from nexo_pkg.install.payload import check_payload
from nexo_pkg.install.select import (
    MANIFEST_ASSETS,
    ReleaseIdentity,
    choose_asset,
    parse_tarball_name,
    release_identity,
)
from nexo_pkg.install.store import (
    LATEST_TAG,
    Installed,
    InstallRoot,
    Receipt,
    discard,
    installed_versions,
    locked_root,
    publish,
    read_receipt,
    remove_tree,
    require_installed,
    scan_installed,
    scan_kept,
    tree_modes,
    unreadable_installs,
    utc_now,
    write_receipt,
)
from nexo_pkg.install.summary import InstallPlan
from nexo_pkg.sources.archive import ArchiveLimits, ArchiveListing, inspect_archive
from nexo_pkg.sources.cache import BlobCache
from nexo_pkg.sources.checksum import parse_digest, parse_sidecar, verify_checksums
from nexo_pkg.sources.download import (
    DownloadedFile,
    cache_dir,
    copy_local,
    fetch_asset,
)
from nexo_pkg.sources.extract import extract_archive
from nexo_pkg.sources.hosttriple import NOARCH, host_candidates
from nexo_pkg.sources.spec import GitHubSource, LocalSource, parse_source
from nexo_pkg.trust import entry as trust

if TYPE_CHECKING:
    from nexo_pkg.net.bounded import Deadline
    from nexo_pkg.sources.github import GitHubClient, Release

MAX_SIDECAR_BYTES = 64 * 1024
MAX_MANIFEST_ASSET_BYTES = 1024 * 1024
MAX_SIGNATURE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class InstallOptions:
    """Everything ``install`` and ``upgrade`` take besides the source."""

    dest: Path
    nexo_home: Path
    target: str | None = None
    trusted_keys: Path | None = None
    # The daemon's policy file (<config dir>/extensions/trusted_keys.toml), used when
    # `trusted_keys` is not given; a missing one means "warn" with no authors.
    policy_path: Path | None = None
    require_signature: bool = False
    skip_signature_verify: bool = False
    github_api_url: str | None = None
    force: bool = False
    dry_run: bool = False
    limits: ArchiveLimits = field(default_factory=ArchiveLimits)
    show_progress: bool = False
    confirm: Callable[[InstallPlan], bool] | None = None
    retry_base_delay: float | None = None
    expected_id: str | None = None
    # Seconds one HTTP request may take in all (--timeout); None: NEXO_HTTP_TIMEOUT or 300.
    http_timeout: float | None = None
    # The moment the command's whole network work must be done by (``install`` and
    # ``upgrade`` set it to ``http_timeout`` from their start); None: per request only.
    network_deadline: Deadline | None = None
    # The blob cache of this one command (``install`` and ``upgrade`` set it), so what it
    # added can be taken out again when the command is refused or is a dry run.
    blob_cache: BlobCache | None = None
    replaces: tuple[Path, ...] = ()
    keep_old: bool = False
    # Install a version older than one already installed (which it replaces).
    allow_downgrade: bool = False
    # The root ``dest`` when the caller already holds its lock (``sync`` holds it for all its
    # plugins); None: the install takes the lock itself.
    root: InstallRoot | None = None
    # Hears "still waiting" lines about slow answers (the CLI's notes on stderr); None: quiet.
    notice: Callable[[str], None] | None = None
    # An upgrade's installed signature (the receipt's ``signature``): the new version must be
    # signed by the same identity (``signer_changed`` otherwise) unless allow_signer_change.
    previous_signature: Mapping[str, Any] | None = None
    allow_signer_change: bool = False
    # The daemon the plugin is for (--nexo-version, NEXO_DAEMON_VERSION): its min_nexo_version
    # must admit it (``incompatible`` otherwise, unless ``force``). None: not compared.
    daemon: DaemonVersion | None = None


@dataclass(frozen=True)
class InstallResult:
    """What ``install`` did (or, with ``dry_run``, would do)."""

    plan: InstallPlan
    path: Path
    was_already_present: bool = False
    dry_run: bool = False
    set_aside: tuple[Path, ...] = ()

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.plan.warnings

    def to_json(self) -> dict[str, Any]:
        document = self._document()
        if self.was_already_present:
            # Not a failure (exit 0), but named like the refusal it would be with another hash.
            document["kind"] = "already_installed"
        return document

    def _document(self) -> dict[str, Any]:
        return {
            "ok": True,
            "id": self.plan.plugin_id,
            "version": self.plan.version,
            "target": self.plan.target,
            "path": str(self.path),
            "sha256": self.plan.sha256,
            "source": self.plan.source,
            "signature": self.plan.signature.to_json(),
            "was_already_present": self.was_already_present,
            "dry_run": self.dry_run,
            "replaced": [str(path) for path in self.set_aside],
            "manifest": self.plan.summary.to_json(),
            "warnings": list(self.warnings),
        }


@dataclass
class _Fetched:
    """A checksummed tarball in the cache, with what is known about where it came from."""

    tarball: DownloadedFile
    plugin_id: str
    version: str
    target: str
    source: dict[str, Any]
    owner: str | None
    repo: str | None
    tag: str | None
    checksums: tuple[str, ...]
    material: Mapping[str, Path | bytes]
    installed_at: str | None = None
    # What the user asked for, recorded as the receipt's ``tag``: ``latest`` or an explicit
    # tag. ``None``: the ``tag`` above.
    requested_tag: str | None = None


def _check_flags(options: InstallOptions) -> None:
    if options.require_signature and options.skip_signature_verify:
        raise UsageError("--require-signature and --skip-signature-verify exclude each other")


def _load_policy(options: InstallOptions) -> trust.TrustPolicy:
    if options.trusted_keys is not None:
        return trust.load_policy(options.trusted_keys, explicit=True)
    default = options.policy_path or trust.default_policy_path(options.nexo_home)
    return trust.load_policy(default, explicit=False)


def _client(options: InstallOptions) -> GitHubClient:
    # httpx is imported only when GitHub is contacted: local-file installs never pay for it.
    from nexo_pkg.sources.github import (  # noqa: PLC0415
        GitHubClient,
        resolve_api_base,
        resolve_token,
    )

    api_base = resolve_api_base(options.github_api_url)
    return GitHubClient(
        api_base,
        resolve_token(api_base),
        retry_base_delay=options.retry_base_delay,
        timeout=options.http_timeout,
        blobs=options.blob_cache or BlobCache(options.nexo_home),
        overall=options.network_deadline,
        notice=options.notice,
    )


def _with_network_deadline(options: InstallOptions) -> InstallOptions:
    """``options`` whose every GitHub request, together, ends within ``--timeout`` (one
    deadline from now for the lookup, the manifest, the sidecar, the tarball, the signature
    and the attestations), so a server answering each of them slowly cannot add them up."""
    from nexo_pkg.net.bounded import (  # noqa: PLC0415
        Deadline,
        checked_timeout,
        timeout_from_env,
    )

    if options.network_deadline is not None:
        return options
    given = options.http_timeout
    seconds = timeout_from_env() if given is None else checked_timeout(given)
    return replace(options, network_deadline=Deadline(seconds, "the whole command"))


@contextlib.contextmanager
def _own_blob_cache(options: InstallOptions) -> Iterator[InstallOptions]:
    """``options`` with a blob cache of this command's own; the blobs it adds stay only when
    the body returns normally and is not a dry run (a refusal, an interruption or a dry run
    leaves the cache as it found it)."""
    if options.blob_cache is not None:
        yield options
        return
    blobs = BlobCache(options.nexo_home)
    kept = False
    try:
        yield replace(options, blob_cache=blobs)
        kept = not options.dry_run
    finally:
        if not kept:
            with contextlib.suppress(NexoError):
                blobs.discard_added()


def install(source_text: str, options: InstallOptions) -> InstallResult:
    """Run the whole pipeline for SOURCE (``owner/repo[@tag]`` or a local tarball).

    Raises :class:`NexoError` with one of the kinds of SPEC §5; on any failure ``dest`` is
    left as it was and the cache holds no temp file of this run.
    """
    _check_flags(options)
    source = parse_source(source_text)
    if not isinstance(source, GitHubSource):
        return _install_source(source, options)
    with _own_blob_cache(_with_network_deadline(options)) as own:
        return _install_source(source, own)


def _install_source(
    source: GitHubSource | LocalSource,
    options: InstallOptions,
    resolved: _Resolved | None = None,
) -> InstallResult:
    """The pipeline after SOURCE is parsed; ``resolved`` skips step 1 (``upgrade`` has
    already resolved the release and checked its version)."""
    candidates = host_candidates(options.target)
    # The policy is read before any network work, so a bad policy fails fast (exit 2).
    policy = _load_policy(options)
    temp_files: list[DownloadedFile] = []
    try:
        if isinstance(source, GitHubSource):
            mode = trust.resolve_mode(
                policy,
                source.owner,
                require_signature=options.require_signature,
                skip_verify=options.skip_signature_verify,
            )
            fetched = _fetch_github(
                source, candidates, options, temp_files, resolved, verify=mode != "ignore"
            )
        else:
            fetched = _fetch_local(source, candidates, options, temp_files)
        return _verify_and_install(fetched, policy, source.display(), options)
    finally:
        for temp in temp_files:
            temp.discard()


@dataclass(frozen=True)
class _Resolved:
    """Step 1 and the first half of step 2: a release and the plugin it carries."""

    release: Release
    identity: ReleaseIdentity
    # The release's manifest asset as (name, text), when it has one.
    manifest: tuple[str, str] | None = None


def _resolve(
    client: GitHubClient, source: GitHubSource, expected_id: str | None = None
) -> _Resolved:
    """Find the release (forgiving a missing ``v``) and read its id and version from its
    manifest asset, else its tarball names. ``expected_id`` refuses a release of another
    plugin (``asset_not_found``)."""
    release = client.find_release(source.owner, source.repo, source.tag)
    manifest = client.read_manifest_asset(
        release, MANIFEST_ASSETS, max_bytes=MAX_MANIFEST_ASSET_BYTES
    )
    identity = release_identity(release, manifest)
    if expected_id is not None and identity.plugin_id != expected_id:
        raise NexoError(
            f"release {release.tag} of {source.owner}/{source.repo} is plugin "
            f"{identity.plugin_id!r}, not {expected_id!r}",
            kind="asset_not_found",
        )
    return _Resolved(release, identity, manifest)


@dataclass(frozen=True)
class Prefetched:
    """A tarball another source (a registry, a blob cache) already downloaded and hashed.

    ``sha256`` is the hash that source vouches for (a lock file, a registry descriptor); the
    file is copied privately and must match it. ``source`` is the ``--json``/receipt source
    object (its ``type`` goes into the receipt); ``owner`` selects the trust policy's author
    entries as for a GitHub release (``None``: every entry, as for a local tarball).
    ``installed_at`` fixes the receipt's time (reproducible fleets); ``None`` means now.
    """

    path: Path
    asset_name: str
    plugin_id: str
    version: str
    target: str
    sha256: str
    source: dict[str, Any]
    material: Mapping[str, Path | bytes]
    owner: str | None = None
    repo: str | None = None
    tag: str | None = None
    installed_at: str | None = None


def install_prefetched(asset: Prefetched, options: InstallOptions) -> InstallResult:
    """Steps 4-9 of the pipeline for a tarball that is already on disk.

    Raises ``checksum_mismatch`` when the file's bytes do not hash to ``asset.sha256``, and
    every kind the signature, archive, payload and install steps raise.
    """
    _check_flags(options)
    policy = _load_policy(options)
    tarball = copy_local(
        asset.path, cache_dir(options.nexo_home), max_bytes=options.limits.max_download
    )
    try:
        tarball = replace(tarball, name=asset.asset_name)
        checked = verify_checksums(
            tarball.sha256, asset.asset_name, sidecar=None, digest=asset.sha256
        )
        fetched = _Fetched(
            tarball=tarball,
            plugin_id=asset.plugin_id,
            version=asset.version,
            target=asset.target,
            source=asset.source,
            owner=asset.owner,
            repo=asset.repo,
            tag=asset.tag,
            checksums=checked,
            material=asset.material,
            installed_at=asset.installed_at,
        )
        display = str(asset.source.get("registry") or asset.asset_name)
        return _verify_and_install(fetched, policy, display, options)
    finally:
        tarball.discard()


def _verify_and_install(
    fetched: _Fetched, policy: trust.TrustPolicy, source_display: str, options: InstallOptions
) -> InstallResult:
    """Steps 5-9 for a checksummed tarball, whichever source it came from."""
    mode = trust.resolve_mode(
        policy,
        fetched.owner,
        require_signature=options.require_signature,
        skip_verify=options.skip_signature_verify,
    )
    outcome = trust.verify_asset_signature(
        fetched.tarball.path,
        asset_name=fetched.tarball.name,
        material=fetched.material,
        owner=fetched.owner,
        repo=fetched.repo,
        tag=fetched.tag,
        policy=policy,
        mode=mode,
    )
    if options.previous_signature is not None and not options.allow_signer_change:
        check_signer_continuity(options.previous_signature, outcome, fetched.plugin_id)
    final = options.dest / f"{fetched.plugin_id}-{fetched.version}"
    try:
        if options.dry_run:
            listing = inspect_archive(fetched.tarball.path, options.limits)
            _check_archive_compatible(listing, fetched, options)
            plan = _plan(source_display, fetched, outcome, listing, final)
            return InstallResult(plan, final, dry_run=True)
        return _install_tree(source_display, fetched, outcome, final, options)
    except NexoError as error:
        # A refusal after the signature step still says who signed what was refused.
        if outcome.status == "verified":
            error.details.setdefault("signature", outcome.to_json())
        raise


def _check_archive_compatible(
    listing: ArchiveListing, fetched: _Fetched, options: InstallOptions
) -> None:
    """``incompatible`` when the archive's own manifest excludes the daemon (unless
    ``--force``); a local tarball or a registry copy has no manifest asset to ask first."""
    if options.daemon is None or options.force or listing.manifest is None:
        return
    check_compatible(
        listing.manifest.decode("utf-8", errors="replace"),
        options.daemon,
        where=f"{fetched.plugin_id} {fetched.version}",
    )


def _signer_key(signature: Mapping[str, Any]) -> tuple[object, object]:
    """The signer a signature stands for: issuer and identity, without the git ref a
    workflow identity ends with (``…/release.yml@refs/tags/v1.2.3``), since every release
    is signed from its own tag by the same workflow."""
    identity = signature.get("identity")
    if isinstance(identity, str) and identity.startswith("https://") and "@refs/" in identity:
        identity = identity.split("@refs/", 1)[0]
    return identity, signature.get("issuer")


def _signer_text(signature: Mapping[str, Any]) -> str:
    identity = signature.get("identity") or "an unknown identity"
    issuer = signature.get("issuer")
    return f"{identity} (issuer {issuer})" if issuer else str(identity)


def check_signer_continuity(
    previous: Mapping[str, Any], outcome: trust.SignatureOutcome, plugin_id: str
) -> None:
    """Refuse an upgrade whose signer differs from the installed version's.

    An installed version that was verified binds its successors to the same identity (the
    same workflow, whatever tag it ran for) and issuer: a different signer, or no signature
    at all, raises ``signer_changed`` naming both, whatever the trust mode (``warn``
    included), as a changed signer on an update is the mark of a taken-over repository.
    An installed version that was never verified binds nothing, and
    ``--skip-signature-verify`` (which verifies nothing) is not checked.
    """
    if previous.get("status") != "verified" or outcome.status == "skipped":
        return
    new = outcome.to_json()
    if outcome.status == "verified" and _signer_key(new) == _signer_key(previous):
        return
    was = _signer_text(previous)
    now = _signer_text(new) if outcome.status == "verified" else "nobody (it is not signed)"
    raise NexoError(
        f"the installed {plugin_id} was signed by {was}; the new version is signed by {now}. "
        "A changed signer can mean a taken-over repository: check with the author, then pass "
        "--allow-signer-change to accept it",
        kind="signer_changed",
        details={"installed_signer": dict(previous), "new_signer": new},
    )


def _fetch_github(
    source: GitHubSource,
    candidates: tuple[str, ...],
    options: InstallOptions,
    temp_files: list[DownloadedFile],
    resolved: _Resolved | None = None,
    *,
    verify: bool = True,
) -> _Fetched:
    with _client(options) as client:
        if resolved is None:
            resolved = _resolve(client, source, options.expected_id)
            if (
                source.tag in (None, LATEST_TAG)
                and options.daemon is not None
                and not options.force
            ):
                older = newest_compatible_tag(
                    client, source.owner, source.repo, latest=resolved.release,
                    latest_manifest=resolved.manifest, daemon=options.daemon,
                    max_manifest_bytes=MAX_MANIFEST_ASSET_BYTES,
                )  # fmt: skip
                if older is not None:
                    resolved = _resolve(client, replace(source, tag=older), options.expected_id)
        if options.daemon is not None and resolved.manifest is not None and not options.force:
            # Before any download: the manifest asset says what the archive will say.
            check_compatible(
                resolved.manifest[1],
                options.daemon,
                where=f"{resolved.identity.plugin_id} {resolved.identity.version} "
                f"({source.owner}/{source.repo}@{resolved.release.tag})",
            )
        release = resolved.release
        choice = choose_asset(release, candidates, resolved.identity)
        asset = choice.asset
        cache = cache_dir(options.nexo_home)
        # Every asset whose sha256 the release vouches for goes through the shared blob cache.
        blobs = options.blob_cache or BlobCache(options.nexo_home)
        sidecar_asset = release.asset(asset.name + ".sha256")
        sidecar = None
        if sidecar_asset is not None:
            text = client.fetch_bytes(sidecar_asset, max_bytes=MAX_SIDECAR_BYTES)
            sidecar = parse_sidecar(text.decode("utf-8", errors="replace"), asset.name)
        tarball = fetch_asset(
            client,
            asset,
            cache,
            blobs,
            sidecar=sidecar,
            digest=parse_digest(asset.digest),
            max_bytes=options.limits.max_download,
            show_progress=options.show_progress,
        )
        temp_files.append(tarball)
        checked = verify_checksums(
            tarball.sha256, asset.name, sidecar=sidecar, digest=parse_digest(asset.digest)
        )
        material: dict[str, Path | bytes] = {}
        # Under mode ignore nothing is verified: no signature material is fetched and the
        # attestations endpoint is not asked.
        names = trust.material_names(asset.name, (a.name for a in release.assets))
        for name in names if verify else ():
            signature_asset = release.asset(name)
            if signature_asset is None:
                continue
            downloaded = fetch_asset(
                client,
                signature_asset,
                cache,
                blobs,
                digest=parse_digest(signature_asset.digest),
                max_bytes=MAX_SIGNATURE_BYTES,
            )
            temp_files.append(downloaded)
            material[signature_asset.name] = downloaded.path
        attested = (
            trust.release_attestations(
                client,
                source.owner,
                source.repo,
                asset_name=asset.name,
                digest=tarball.sha256,
                material=material,
            )
            if verify
            else None
        )
        if attested is not None:
            material[attested.name] = attested.data
    return _Fetched(
        tarball=tarball,
        plugin_id=choice.plugin_id,
        version=choice.version,
        target=choice.target,
        source={
            "type": "github-releases",
            "owner": source.owner,
            "repo": source.repo,
            "tag": release.tag,
            "asset": asset.name,
            "api_url": client.api_base,
        },
        owner=source.owner,
        repo=source.repo,
        tag=release.tag,
        checksums=checked,
        material=material,
        requested_tag=LATEST_TAG if source.tag in (None, LATEST_TAG) else release.tag,
    )


def _fetch_local(
    source: LocalSource,
    candidates: tuple[str, ...],
    options: InstallOptions,
    temp_files: list[DownloadedFile],
) -> _Fetched:
    path = source.path
    parsed = parse_tarball_name(path.name)
    if parsed is None:
        raise NexoError(
            f"{path.name} is not named <id>-<version>-<target>.tar.gz",
            kind="source_invalid",
            details={"source": str(path)},
        )
    plugin_id, version, target = parsed
    if target != NOARCH and target not in candidates:
        host = ", ".join(candidates) or "noarch only"
        raise NexoError(
            f"{path.name} is built for {target}, but this host runs {host}; pass "
            f"--target {target} to install it anyway",
            kind="asset_not_found",
            details={"target": target, "host": list(candidates)},
        )
    tarball = copy_local(path, cache_dir(options.nexo_home), max_bytes=options.limits.max_download)
    temp_files.append(tarball)
    sidecar_path = path.with_name(path.name + ".sha256")
    sidecar = None
    if sidecar_path.is_file():
        try:
            with sidecar_path.open("rb") as handle:
                raw = handle.read(MAX_SIDECAR_BYTES)
        except OSError as exc:
            raise NexoError(f"cannot read {sidecar_path}: {exc.strerror}", kind="io") from exc
        sidecar = parse_sidecar(raw.decode("utf-8", errors="replace"), path.name)
    checked = verify_checksums(
        tarball.sha256, path.name, sidecar=sidecar, digest=None, local_dir=path.parent
    )
    material = trust.local_material(path)
    return _Fetched(
        tarball=tarball,
        plugin_id=plugin_id,
        version=version,
        target=target,
        source={"type": "local-file", "path": str(path)},
        owner=None,
        repo=None,
        tag=None,
        checksums=checked,
        material=material,
    )


def _plan(
    source_display: str,
    fetched: _Fetched,
    outcome: trust.SignatureOutcome,
    listing: ArchiveListing,
    final: Path,
) -> InstallPlan:
    """Step 7 and what step 8 shows: the payload checks on what the archive holds."""
    summary = check_payload(listing, fetched.plugin_id, fetched.version)
    return InstallPlan(
        summary=summary,
        source_display=source_display,
        source=fetched.source,
        target=fetched.target,
        asset_name=fetched.tarball.name,
        sha256=fetched.tarball.sha256,
        checksums=fetched.checksums,
        signature=outcome,
        destination=str(final),
    )


def _confirmed(plan: InstallPlan, options: InstallOptions) -> None:
    if options.confirm is not None and not options.confirm(plan):
        raise NexoError("installation cancelled; nothing was changed", kind="cancelled")


def _replaced(options: InstallOptions, plugin_id: str, final: Path) -> tuple[Path, ...]:
    """The installed trees the new one replaces (under the lock): those ``upgrade`` names and
    every other version of the same plugin, since the daemon must find exactly one version
    of an id (it would load whichever sorts first)."""
    others = [
        item.path
        for item in scan_installed(options.dest)
        if item.plugin_id == plugin_id and item.path != final
    ]
    return tuple(path for path in dict.fromkeys((*options.replaces, *others)) if path.exists())


def _refuse_downgrade(options: InstallOptions, plugin_id: str, version: str) -> None:
    """``downgrade_refused`` when a newer version of ``plugin_id`` is installed, which this
    install would replace, unless ``allow_downgrade`` (as ``upgrade`` asks). Versions that
    are not semver cannot be ordered and are not held against the install."""
    if options.allow_downgrade:
        return
    try:
        new = semver.Version.parse(version)
    except ValueError:
        return
    for item in scan_installed(options.dest):
        receipt = item.receipt
        if item.plugin_id != plugin_id or receipt is None:
            continue
        try:
            newer = semver.Version.parse(receipt.version).compare(new) > 0
        except ValueError:
            continue
        if newer:
            raise NexoError(
                f"{plugin_id} {receipt.version} is installed, newer than {version}; pass "
                "--allow-downgrade to replace it with the older version",
                kind="downgrade_refused",
                details={"installed": receipt.version, "version": version},
            )


def _install_tree(
    source_display: str,
    fetched: _Fetched,
    outcome: trust.SignatureOutcome,
    final: Path,
    options: InstallOptions,
) -> InstallResult:
    """Steps 6 to 9 under the root's lock: the archive is checked and extracted in one pass
    into a private staging directory, its payload checked, the plan confirmed, the receipt
    written, then the tree renamed into place. Nothing is visible before the rename."""
    held: contextlib.AbstractContextManager[InstallRoot] = (
        contextlib.nullcontext(options.root)
        if options.root is not None
        else locked_root(options.dest)
    )
    with held as root:
        # A link in the plugin's place is not an install (verify fails it): it is never
        # followed to a receipt, and only --force replaces it (the link, not its target).
        occupied = final.is_symlink() or final.exists()
        if occupied and not options.force:
            listing = inspect_archive(fetched.tarball.path, options.limits)
            plan = _plan(source_display, fetched, outcome, listing, final)
            _confirmed(plan, options)
            try:
                existing: Receipt | None = None if final.is_symlink() else read_receipt(final)
            except (OSError, ValueError):
                existing = None
            if existing is not None and existing.sha256 == plan.sha256:
                return InstallResult(plan, final, was_already_present=True)
            if final.is_symlink():
                raise NexoError(
                    f"{final} is a symbolic link, not an install of {plan.plugin_id}; use "
                    "--force to replace the link (what it points to is left alone)",
                    kind="already_installed",
                    details={"path": str(final)},
                )
            raise NexoError(
                f"{plan.plugin_id} {plan.version} is already installed at {final} from a "
                "different archive; use --force to replace it",
                kind="already_installed",
                details={"path": str(final)},
            )
        _refuse_downgrade(options, fetched.plugin_id, fetched.version)
        staging: Path | None = None
        try:
            staging = root.new_staging(fetched.plugin_id)
            listing = extract_archive(fetched.tarball.path, staging, options.limits)
            _check_archive_compatible(listing, fetched, options)
            plan = _plan(source_display, fetched, outcome, listing, final)
            _confirmed(plan, options)
            (staging / "bin" / plan.plugin_id).chmod(0o755)
            receipt = Receipt(
                id=plan.plugin_id,
                version=plan.version,
                owner=fetched.owner,
                repo=fetched.repo,
                tag=fetched.requested_tag or fetched.tag,
                resolved_tag=fetched.tag if fetched.requested_tag else None,
                target=plan.target,
                sha256=plan.sha256,
                installed_at=fetched.installed_at or utc_now(),
                source=fetched.source["type"],
                signature=plan.signature.to_json(),
                files={name: info.sha256 for name, info in listing.files.items()},
                registry=fetched.source.get("registry"),
                modes=tree_modes(staging),
            )
            write_receipt(staging, receipt)
            sync_tree(staging)
            set_aside = publish(
                root,
                staging,
                final,
                replace=options.force and occupied,
                replaces=_replaced(options, fetched.plugin_id, final),
                keep_old=options.keep_old,
            )
        except OSError as exc:
            if staging is not None:
                discard(staging.parent)
            raise NexoError(
                f"cannot install into {final}: {exc.strerror or exc}", kind="io"
            ) from exc
        except BaseException:
            if staging is not None:
                discard(staging.parent)
            raise
    return InstallResult(plan, final, set_aside=set_aside)


# -- upgrade and remove -----------------------------------------------------------------------


@dataclass(frozen=True)
class UpgradeResult:
    """What ``upgrade`` did: nothing (up to date), or an install plus the old dir's fate."""

    plugin_id: str
    from_version: str
    to_version: str
    old_path: Path
    install: InstallResult | None
    removed_old: bool
    kept: tuple[Path, ...] = ()
    # Set when nothing was looked up because the receipt pins this tag.
    pinned_tag: str | None = None

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any]
        if self.install is not None:
            document = self.install.to_json()
        else:
            document = {"ok": True, "id": self.plugin_id, "version": self.to_version}
            document["path"] = str(self.old_path)
            document["was_already_present"] = True
        document["from_version"] = self.from_version
        document["upgraded"] = self.install is not None and not self.install.was_already_present
        document["old_path"] = str(self.old_path)
        document["removed_old"] = self.removed_old
        document["kept_paths"] = [str(path) for path in self.kept]
        if self.pinned_tag is not None:
            document["pinned_tag"] = self.pinned_tag
        return document


def upgrade(
    plugin_id: str,
    options: InstallOptions,
    *,
    allow_downgrade: bool = False,
    keep_old: bool = False,
    tag: str | None = None,
) -> UpgradeResult:
    """Upgrade an installed plugin along its receipt's coordinates, as the reference does.

    The receipt's ``owner/repo`` and ``target`` are kept (``--target`` overrides the target).
    A receipt pinned to an explicit tag (:attr:`Receipt.pinned_tag`) stays on it: a no-op
    saying so, unless ``tag`` names the release to move to; ``latest`` follows the newest
    release. Same version: no-op. Lower: ``downgrade_refused`` unless ``allow_downgrade``. The
    old versions leave the daemon's sight in the same step that brings the new one in
    (deleted, or kept under ``.nexo/kept`` with ``keep_old``), so exactly one version is
    discoverable. Raises ``not_installed`` for an unknown id, ``source_invalid`` for
    local-file installs.
    """
    _check_flags(options)
    matches = require_installed(options.dest, plugin_id)
    current = matches[0]
    receipt = current.receipt
    assert receipt is not None  # noqa: S101 (require_installed only returns receipts)
    if receipt.source != "github-releases" or not receipt.owner or not receipt.repo:
        raise NexoError(
            f"{plugin_id} was installed from a local file; install the new tarball with "
            "`nexo plugin install PATH`",
            kind="source_invalid",
        )
    trust_check = _load_policy(options)
    del trust_check  # fail on a bad policy before any network work
    if tag is None and receipt.pinned_tag is not None:
        return UpgradeResult(
            plugin_id,
            receipt.version,
            receipt.version,
            current.path,
            None,
            False,
            pinned_tag=receipt.pinned_tag,
        )
    if options.target is None and receipt.target:
        options = replace(options, target=receipt.target)
    source = GitHubSource(receipt.owner, receipt.repo, tag)
    with _own_blob_cache(_with_network_deadline(options)) as own:
        return _upgrade_to_latest(
            source, matches, own, allow_downgrade=allow_downgrade, keep_old=keep_old
        )


def _upgrade_to_latest(
    source: GitHubSource,
    matches: list[Installed],
    options: InstallOptions,
    *,
    allow_downgrade: bool,
    keep_old: bool,
) -> UpgradeResult:
    """:func:`upgrade` once the installed versions (``matches``, newest first) are known."""
    current = matches[0]
    receipt = current.receipt
    assert receipt is not None  # noqa: S101 (require_installed only returns receipts)
    plugin_id = receipt.id
    with _client(options) as client:
        resolved = _resolve(client, source, plugin_id)
    # The version compared is the one the release's manifest (or tarball names) carries, which
    # the payload check then holds the archive's own manifest to: never the tag, which a
    # mirror controls and which real releases do not keep in step with the manifest.
    new_version = resolved.identity.version
    try:
        order = semver.Version.parse(new_version).compare(receipt.version)
    except ValueError:
        order = 1  # an installed version that is not semver cannot be ordered; install anew
    if order == 0:
        return UpgradeResult(plugin_id, receipt.version, new_version, current.path, None, False)
    if order < 0 and not allow_downgrade:
        raise NexoError(
            f"the latest release of {receipt.owner}/{receipt.repo} ({resolved.release.tag}) "
            f"carries {plugin_id} {new_version}, older than the installed "
            f"{receipt.version}; pass --allow-downgrade to install it",
            kind="downgrade_refused",
            details={"installed": receipt.version, "latest": new_version},
        )
    return replace_installed(
        plugin_id,
        matches,
        lambda upgrade_options: _install_source(source, upgrade_options, resolved),
        options=options,
        versions=(receipt.version, new_version),
        keep_old=keep_old,
    )


def replace_installed(
    plugin_id: str,
    matches: list[Installed],
    run_install: Callable[[InstallOptions], InstallResult],
    *,
    options: InstallOptions,
    versions: tuple[str, str],
    keep_old: bool,
) -> UpgradeResult:
    """The install step of an upgrade, whatever the source: ``run_install`` puts the new
    version in place with the installed ones (``matches``, current first) named as replaced,
    so they leave the daemon's sight in the same step (deleted, or kept with ``keep_old``)."""
    current = matches[0]
    olds = tuple(item.path for item in matches)
    previous = current.receipt.signature if current.receipt is not None else None
    # Whether an older version may come in was decided by the caller, from the versions.
    upgrade_options = replace(
        options,
        expected_id=plugin_id,
        replaces=olds,
        keep_old=keep_old,
        previous_signature=previous,
        allow_downgrade=True,
    )
    result = run_install(upgrade_options)
    moved = result.set_aside
    if result.was_already_present:
        # The new version was already there beside the old: only the old ones move out.
        with locked_root(options.dest) as root:
            moved = tuple(
                root.set_aside(path, keep=keep_old)
                for path in olds
                if path != result.path and path.exists()
            )
            if not keep_old:
                for aside in moved:
                    discard(aside.parent)
    kept = moved if keep_old and not result.dry_run else ()
    removed = bool(moved) and not keep_old
    return UpgradeResult(plugin_id, *versions, current.path, result, removed, kept)


def remove(plugin_id: str, dest: Path) -> list[Installed]:
    """Remove every installed version of ``plugin_id`` (an install whose receipt is unreadable
    too), and the old versions ``upgrade --keep-old`` kept; raises ``not_installed``/``io``."""
    unreadable = unreadable_installs(dest, plugin_id)
    if unreadable:
        matches = installed_versions(dest, plugin_id) + unreadable
    else:
        matches = require_installed(dest, plugin_id)
    matches += [item for item in scan_kept(dest) if item.plugin_id == plugin_id]
    with locked_root(dest) as root:
        for item in matches:
            with contextlib.suppress(FileNotFoundError):
                remove_tree(root, item.path)
    return matches


def latest_release(receipt: Receipt, options: InstallOptions) -> tuple[str, str]:
    """The newest release of the GitHub repository a receipt names, as ``(version, tag)``.

    Reads the release metadata and its manifest asset (or tarball names) only: no tarball,
    checksum or signature is downloaded. Raises ``source_invalid`` for a receipt that names
    no repository, and what :func:`_resolve` raises (``release_not_found``, ``network``, …).
    """
    if receipt.source != "github-releases" or not receipt.owner or not receipt.repo:
        raise NexoError(f"{receipt.id} was not installed from a release", kind="source_invalid")
    source = GitHubSource(receipt.owner, receipt.repo, None)
    with _client(_with_network_deadline(options)) as client:
        resolved = _resolve(client, source, receipt.id)
    return resolved.identity.version, resolved.release.tag


SEARCH_TOPIC = "nexo-plugin"
MAX_SEARCH_RESULTS = 100


def search_repositories(term: str, options: InstallOptions, *, limit: int = 30) -> list[Any]:
    """GitHub repositories with the ``nexo-plugin`` topic that match ``term``, best match
    first, through the same API host, token and limits as ``install`` (the search API's
    ``/search/repositories``). Raises ``usage`` for an empty term or a bad limit, and the
    network kinds of the GitHub client."""
    from urllib.parse import quote  # noqa: PLC0415

    if not term.strip():
        raise UsageError("give a search term")
    if not 1 <= limit <= MAX_SEARCH_RESULTS:
        raise UsageError(f"--limit must be from 1 to {MAX_SEARCH_RESULTS}")
    query = quote(f"{term.strip()} topic:{SEARCH_TOPIC}", safe="")
    with _client(_with_network_deadline(options)) as client:
        url = f"{client.api_base}/search/repositories?q={query}&per_page={limit}"
        document, _ = client.get_json(url, what="the repository search")
    items = document.get("items") if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise NexoError("the repository search answered no list of repositories", kind="network")
    return [item for item in items if isinstance(item, dict)][:limit]


@dataclass(frozen=True)
class ReleaseInfo:
    """What ``info`` shows of a release: every target it ships, and the checked plan of the
    target this host would install (its signature verified as ``install`` verifies it)."""

    plan: InstallPlan
    tag: str | None
    targets: tuple[tuple[str, str], ...]
    min_nexo_version: str | None

    def to_json(self) -> dict[str, Any]:
        signature = self.plan.signature.to_json()
        return {
            "ok": True,
            "id": self.plan.plugin_id,
            "version": self.plan.version,
            "tag": self.tag,
            "source": self.plan.source,
            "targets": [{"target": target, "asset": name} for target, name in self.targets],
            "host_target": self.plan.target,
            "asset": self.plan.asset_name,
            "sha256": self.plan.sha256,
            "checksums": list(self.plan.checksums),
            "signature": signature,
            "min_nexo_version": self.min_nexo_version,
            "manifest": self.plan.summary.to_json(),
            "warnings": list(self.plan.warnings),
        }


def release_info(source_text: str, options: InstallOptions) -> ReleaseInfo:
    """Everything ``install SOURCE`` would check, without installing: the release's targets,
    and for this host's target the asset, its checksums, its verified signer and its
    manifest (downloaded into the blob cache and checked as ``install --dry-run`` does).
    Raises what ``install`` raises."""
    result = install(source_text, replace(options, dry_run=True, confirm=None))
    source = parse_source(source_text)
    targets: tuple[tuple[str, str], ...] = ((result.plan.target, result.plan.asset_name),)
    tag: str | None = None
    requirement: str | None = None
    if isinstance(source, GitHubSource):
        with _client(_with_network_deadline(options)) as client:
            resolved = _resolve(client, source, None)
        tag = resolved.release.tag
        found = []
        for asset in resolved.release.assets:
            parsed = parse_tarball_name(asset.name)
            if parsed is not None and parsed[0] == result.plan.plugin_id:
                found.append((parsed[2], asset.name))
        targets = tuple(sorted(found)) or targets
        if resolved.manifest is not None:
            requirement = min_nexo_version(resolved.manifest[1])
    return ReleaseInfo(result.plan, tag, targets, requirement)
