"""The install pipeline: a source (``nexo_pkg.sources``) resolves and fetches the tarball
into the blob cache; then signature → inspect → payload → confirm → install, each step
taking what the previous one produced (:func:`install_artifact`, whatever the source).

A failure raises one :class:`NexoError` and nothing downstream runs; a refused or rehearsed
command takes the blobs it added out of the cache again, and ``<dest>`` is only touched by
the last step, under its lock.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexo_pkg.core.durable import sync_tree
from nexo_pkg.core.errors import NexoError, UsageError
from nexo_pkg.core.version import VersionError, compare_versions, parse_version
from nexo_pkg.install.compat import Admitting, check_compatible, min_nexo_version
from nexo_pkg.install.link import LinkedPlugin, linked_plugins
from nexo_pkg.install.listing import manifest_identity, skipped_removal_leftovers
from nexo_pkg.install.manifest_check import manifest_asset_problem
from nexo_pkg.install.options import (
    NO_CALLBACKS,
    ONE_INSTALL,
    PLAIN_INSTALL,
    InstallCallbacks,
    InstallOptions,
    InstallStep,
    LockedSigner,
)
from nexo_pkg.install.payload import check_payload
from nexo_pkg.install.receipts import (
    RECEIPT_NAME,
    Installed,
    Receipt,
    has_file_hashes,
    installed_versions,
    read_receipt,
    require_installed,
    scan_installed,
    scan_kept,
    unreadable_installs,
    utc_now,
    version_order,
    write_receipt,
)
from nexo_pkg.install.root import (
    BOOKKEEPING_DIR,
    KEPT_AREA,
    LEGACY_PREFIXES,
    InstallRoot,
    discard,
    is_removal_leftover,
    left_behind,
    locked_root,
    publish,
    remove_tree,
)
from nexo_pkg.install.summary import InstallPlan, ManifestSummary
from nexo_pkg.install.verify import tree_modes
from nexo_pkg.sbom import quick_check, vendored_packages
from nexo_pkg.sources.api import (
    ArchiveListing,
    FetchedArtifact,
    Prefetched,
    Source,
    SourceContext,
    SourceRequest,
    extract_archive,
    host_candidates,
    inspect_archive,
    open_source,
    origin_place,
    prefetch_newest,
    reopen,
    requested_target,
    upgrades_from,
)
from nexo_pkg.trust import api as trust

if TYPE_CHECKING:
    from nexo_pkg.install.reach import DaemonReach
    from nexo_pkg.net.api import Deadline
    from nexo_pkg.sources.api import Origin


@dataclass(frozen=True)
class InstallResult:
    """What ``install`` did (or, with ``dry_run``, would do)."""

    plan: InstallPlan
    path: Path
    was_already_present: bool = False
    dry_run: bool = False
    set_aside: tuple[Path, ...] = ()
    replaced_link: LinkedPlugin | None = None
    # ``install`` over another version: the version kept for ``rollback`` (one per plugin,
    # as ``upgrade`` keeps) and the versions kept before it that were removed.
    kept: tuple[Path, ...] = ()
    pruned: tuple[Path, ...] = ()
    # Of ``pruned``: the trees whose files could not all be deleted (their place under
    # ``.nexo/removing``), said as warnings; ``unfinished``: those of ``pruned`` themselves.
    left: tuple[Path, ...] = ()
    unfinished: tuple[Path, ...] = ()
    # The version a hold (`rollback`, `hold`) kept the plugin at, ended by this install.
    released_hold: str | None = None

    @property
    def link_warning(self) -> str | None:
        """What ``--force`` did to a development link of the id, if there was one."""
        link = self.replaced_link
        if link is None:
            return None
        verb = "would replace" if self.dry_run else "replaced"
        said = f"{verb} the development link {link.path} -> {link.target} (--force)"
        return f"{said}; the checkout is left alone"

    @property
    def warnings(self) -> tuple[str, ...]:
        link = self.link_warning
        said = self.plan.warnings if link is None else (*self.plan.warnings, link)
        return (*said, *(left_behind(path) for path in self.left))

    def _still_kept(self, path: Path) -> bool:
        """Whether ``path``, where a replaced tree was moved, is still there after the run:
        kept under ``.nexo/kept`` and not pruned. A tree moved under ``.nexo/removing`` was
        deleted by this same run (an unfinished deletion is a warning of its own)."""
        return path.parent.parent.name == KEPT_AREA and path not in self.pruned

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
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
            # A dry run moves nothing: the installed trees the install would replace. A tree
            # moved aside that this run then deleted (pruned, or moved to be removed) is no
            # longer there: never named.
            "replaced": list(self.plan.replacing)
            if self.dry_run
            else [str(path) for path in self.set_aside if self._still_kept(path)],
            "kept_paths": [str(path) for path in self.kept],
            "pruned_kept_paths": [str(path) for path in self.pruned],
            "manifest": self.plan.summary.to_json(),
            "warnings": list(self.warnings),
        }
        if self.was_already_present:
            # Not a failure (exit 0), but named like the refusal it would be with another hash.
            document["kind"] = "already_installed"
        if self.released_hold is not None:
            document["released_hold"] = self.released_hold  # as sync's outcome names it
        if self.plan.fallback_note is not None:
            # The terminal's `note:` (no daemon configured reads the root): said here too.
            document["notes"] = [self.plan.fallback_note]
        return document


def _check_flags(options: InstallOptions) -> None:
    if options.require_signature and options.skip_signature_verify:
        raise UsageError("--require-signature and --skip-signature-verify exclude each other")


def check_options(options: InstallOptions) -> None:
    """Judge, before any lookup, what the options name that cannot work: contradicting
    signature flags, a ``--timeout`` (or ``NEXO_HTTP_TIMEOUT``) that is no number of seconds,
    a ``--target`` that is no triple, a ``--github-api-url`` that is no URL, a
    trust policy (``--trusted-keys``, else the daemon's) that is no valid policy. ``upgrade``
    and a ``sync`` dry run call it first, so a plugin with nothing to do (held, pinned,
    newest) does not hide a usage or configuration error (exit 2), nor does ``--all`` make
    it one failure per plugin."""
    from nexo_pkg.sources.api import resolve_api_base  # noqa: PLC0415

    _check_flags(options)
    _network_deadline(options)
    if options.target:
        host_candidates(options.target)
    if options.github_api_url:
        resolve_api_base(options.github_api_url)
    options.trust.load_policy(options.nexo_home)


def _network_deadline(options: InstallOptions) -> Deadline:
    """One deadline from now for every request of the command together (the lookup, the
    manifest, the sidecar, the tarball, the signature and the attestations), so a server
    answering each of them slowly cannot add them up: ``--timeout``, else the environment's."""
    from nexo_pkg.net.api import (  # noqa: PLC0415
        Deadline,
        checked_timeout,
        timeout_from_env,
    )

    given = options.http_timeout
    seconds = timeout_from_env() if given is None else checked_timeout(given)
    return Deadline(seconds, "the whole command")


@contextlib.contextmanager
def command_context(
    options: InstallOptions, callbacks: InstallCallbacks = NO_CALLBACKS
) -> Iterator[SourceContext]:
    """The context of one ``install``/``upgrade``/``info``: its clients, the blob cache, the
    network deadline and the trust policy, built once. The blobs the command adds to the
    cache stay only when the body returns normally and is not a dry run (a refusal, an
    interruption or a dry run leaves the cache as it found it)."""
    context = SourceContext(
        options.nexo_home,
        options.network,
        options.trust,
        max_download=options.limits.max_download,
        deadline=_network_deadline(options),
        notice=callbacks.notice,
        progress=callbacks.progress,
    )
    kept = False
    try:
        with context:
            yield context
        kept = not options.dry_run
        if kept:
            context.cache.keep()
    finally:
        if not kept:
            with contextlib.suppress(NexoError):
                context.cache.discard_added()


def install(
    source_text: str,
    options: InstallOptions,
    callbacks: InstallCallbacks = NO_CALLBACKS,
    step: InstallStep = PLAIN_INSTALL,
) -> InstallResult:
    """Run the whole pipeline for SOURCE (``owner/repo[@tag]``, ``oci://…`` or a local
    tarball). Raises :class:`NexoError` with one of the kinds of SPEC §5; on any failure
    ``dest`` is left as it was and the cache holds no blob of this run. Other versions of
    the plugin it replaces bind it to their signer (``step``: :data:`PLAIN_INSTALL`)."""
    _check_flags(options)
    with command_context(options, callbacks) as context:
        earlier = scan_kept(options.dest) if step.keep_old else []
        result = _install_in(source_text, context, options, callbacks, step)
    return _keep_one(result, earlier) if step.keep_old else result


def _install_in(
    source_text: str,
    context: SourceContext,
    options: InstallOptions,
    callbacks: InstallCallbacks,
    step: InstallStep,
) -> InstallResult:
    """:func:`install`'s pipeline for SOURCE within ``context`` (its clients and deadline)."""
    # This host's targets (or --target), and the check of a release's manifest asset.
    request = SourceRequest(host_candidates(options.target), manifest_asset_problem)
    source = open_source(source_text, context, request)
    if options.daemon is not None and not options.force:
        source = source.compatible(Admitting(options.daemon)) or source
    return install_from(source, context, options, callbacks, step)


def _keep_one(result: InstallResult, earlier: list[Installed]) -> InstallResult:
    """After an install that kept the versions it replaced under ``.nexo/kept``: one
    previous version per plugin, as ``upgrade`` keeps by default — the newest one replaced
    stays, the others and the ones kept before it (``earlier``) are removed."""
    plugin_id = result.plan.plugin_id
    moved = [path for path in result.set_aside if path.parent.parent.name == KEPT_AREA]
    if not moved or result.dry_run:
        return result
    dest = result.path.parent
    kept_now = [item for item in scan_kept(dest) if item.path in moved]
    newest = max(kept_now, key=version_order).path if kept_now else moved[0]
    stale = [item.path for item in earlier if item.plugin_id == plugin_id]
    left: list[Path] = []
    unfinished: list[Path] = []
    pruned = _remove_trees(
        dest, [path for path in (*moved, *stale) if path != newest], left, unfinished
    )
    return replace(
        result, kept=(newest,), pruned=pruned, left=tuple(left), unfinished=tuple(unfinished)
    )


def install_from(
    source: Source,
    context: SourceContext,
    options: InstallOptions,
    callbacks: InstallCallbacks = NO_CALLBACKS,
    step: InstallStep = ONE_INSTALL,
) -> InstallResult:
    """Resolve ``source``, fetch its best candidate and install it.

    The trust policy is read before any network work (a bad policy fails fast, exit 2), a
    manifest asset that excludes the daemon is refused before any download, and the trust
    mode decides whether signature material is fetched at all (not under ``ignore``).
    """
    context.policy()
    candidate = source.resolve()[0]
    origin = candidate.origin
    if options.daemon is not None and candidate.manifest is not None and not options.force:
        # Before any download: the manifest asset says what the archive will say.
        release = origin_place(origin.source, exact=True) or origin.display
        check_compatible(
            candidate.manifest[1],
            options.daemon,
            where=f"{candidate.plugin_id} {candidate.version} ({release})",
            remedy=lambda: _install_anyway(origin, options),
        )
    mode = context.trust_mode(origin.owner, origin.repo)
    artifact = source.fetch(candidate, material=mode != "ignore")
    return install_artifact(
        artifact, options, policy=context.policy(), mode=mode, callbacks=callbacks, step=step
    )


def verify_artifact(
    artifact: FetchedArtifact,
    *,
    policy: trust.TrustPolicy,
    mode: trust.Mode,
    doing: str = "installing",
) -> trust.SignatureOutcome:
    """The signature step for a fetched artifact under ``policy`` and ``mode``, for the
    origin its source recorded (``doing``: what an unsigned artifact's warning says is done
    with it); raises what :func:`trust.verify_asset_signature` raises."""
    origin = artifact.origin
    return trust.verify_asset_signature(
        artifact.path,
        asset_name=artifact.asset_name,
        material=artifact.material,
        owner=origin.owner,
        repo=origin.repo,
        tag=origin.tag,
        policy=policy,
        mode=mode,
        doing=doing,
        looked_for=origin.signatures_at,
    )


def install_artifact(
    artifact: FetchedArtifact,
    options: InstallOptions,
    *,
    policy: trust.TrustPolicy,
    mode: trust.Mode,
    callbacks: InstallCallbacks = NO_CALLBACKS,
    step: InstallStep = ONE_INSTALL,
) -> InstallResult:
    """Steps 5-9 for a fetched, checksummed artifact (read where the source left it, in the
    blob cache), whichever source it came from: the signature under ``mode``, the signer of
    an upgrade, then :func:`_install_tree`. Raises every kind those steps raise."""
    _check_flags(options)
    origin = artifact.origin
    # A dry run (and `info`, which is one) installs nothing: its warning says what would.
    doing = "an install would take" if options.dry_run else "installing"
    outcome = verify_artifact(artifact, policy=policy, mode=mode, doing=doing)
    previous = [step.previous_signature] if step.previous_signature is not None else []
    if step.bind_installed:
        previous = _installed_signatures(options.dest, artifact.plugin_id)
    if not options.allow_signer_change:
        for signature in previous:
            check_signer_continuity(signature, outcome, artifact.plugin_id)
    if step.locked_signer is not None:
        check_locked_signer(step.locked_signer, outcome)
    final = options.dest / f"{artifact.plugin_id}-{artifact.version}"
    link = _development_link(options, artifact.plugin_id, final)
    try:
        if options.dry_run:
            listing = inspect_archive(artifact.path, options.limits)
            _check_archive_compatible(listing, artifact, options)
            # `info` (no step of its own) describes the release, whatever is installed.
            judged = step.bind_installed or bool(step.replaces)
            others = _replaced(options, step, artifact.plugin_id, final) if judged else ()
            plan = _plan(
                origin.display,
                artifact,
                outcome,
                listing,
                final,
                reach=options.reach,
                replacing=_replacing(options, final, others) if judged else (),
                keeping=_keeping(step, others) if judged else None,
            )
            present = False
            if step.bind_installed:
                # `install --dry-run` judges the root as the install would (`info`, which
                # describes the release whatever is installed, does not): the same archive
                # already there, another one in its place, a newer version installed.
                present = _already_present(plan, final, options)
                if not present:
                    _refuse_downgrade(options, artifact.plugin_id, artifact.version)
            return InstallResult(
                plan, final, was_already_present=present, dry_run=True, replaced_link=link
            )
        if link is not None:
            step = replace(step, replaces=(*step.replaces, link.path))
        result = _install_tree(
            origin.display, artifact, outcome, final, options, callbacks=callbacks, step=step
        )
        return result if result.was_already_present else replace(result, replaced_link=link)
    except NexoError as error:
        # A refusal after the signature step still says who signed what was refused.
        if outcome.status == "verified":
            error.details.setdefault("signature", outcome.to_json())
        raise


def _development_link(options: InstallOptions, plugin_id: str, final: Path) -> LinkedPlugin | None:
    """The development link (``install --link``) of ``plugin_id`` in the root, which an install
    beside it would leave for the daemon to load first. Without ``force`` it is refused
    (``already_installed``, naming the link and how to remove it); with ``force`` returned,
    to be replaced. A link at ``final`` itself is the install step's to judge."""
    links = [
        item
        for item in linked_plugins(options.dest)
        if item.plugin_id == plugin_id and item.path != final
    ]
    link = links[0] if links else None
    if link is None or options.force:
        return link
    from nexo_pkg.install.remedy import plugin_command  # noqa: PLC0415 (a refusal)

    remove = plugin_command("remove", plugin_id, root=options.dest)
    raise NexoError(
        f"{plugin_id} is linked for development at {link.path} (-> {link.target}); remove the "
        f"link first (`{remove}` unlinks it and leaves the checkout alone), or pass --force to "
        "replace it with this install",
        kind="already_installed",
        details={"path": str(link.path), "linked_to": str(link.target)},
    )


def _check_archive_compatible(
    listing: ArchiveListing, fetched: FetchedArtifact, options: InstallOptions
) -> None:
    """``incompatible`` when the archive's own manifest excludes the daemon (unless
    ``--force``); a local tarball or a registry copy has no manifest asset to ask first."""
    if options.daemon is None or options.force or listing.manifest is None:
        return
    check_compatible(
        listing.manifest.decode("utf-8", errors="replace"),
        options.daemon,
        where=f"{fetched.plugin_id} {fetched.version}",
        remedy=lambda: _install_anyway(fetched.origin, options),
    )


def _install_anyway(origin: Origin, options: InstallOptions) -> str:
    """The remedy of an ``incompatible`` refusal: the ``install --force`` command that
    installs this very version (its release, pinned registry reference or file), with the
    root and the flags its source was reached with, ready to paste."""
    from nexo_pkg.install.remedy import plugin_command  # noqa: PLC0415 (a refusal)
    from nexo_pkg.sources.api import reinstall_words  # noqa: PLC0415

    source, flags = reinstall_words(
        origin, plain_http=options.plain_http, github_api_url=options.github_api_url
    )
    command = plugin_command("install", source, "--force", *flags, root=options.dest)
    return f"install it anyway with `{command}`"


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
    at all, raises ``signer_changed`` naming both, under ``require`` and ``warn`` alike, as a
    changed signer on an update is the mark of a taken-over repository. An installed version
    that was never verified binds nothing, and mode ``ignore`` (from the policy or
    ``--skip-signature-verify``), which verifies nothing, is not checked.
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


def check_locked_signer(locked: LockedSigner, outcome: trust.SignatureOutcome) -> None:
    """Refuse (``signer_untrusted``) an artifact whose verified signature does not name the
    signer its lock recorded, or that is not verified at all; ``--skip-signature-verify``
    (which verifies nothing) is not checked."""
    if outcome.status == "skipped":
        return
    # Locks written before the SAN was the recorded identity may name the calling workflow
    # of a reusable-workflow signature: the same certificate, still accepted.
    known = {outcome.identity, outcome.claims.get("build_config_uri")} - {None}
    named = locked.identity in known and outcome.issuer == locked.issuer
    if outcome.status == "verified" and named:
        return
    found = outcome.identity or "no trusted signature"
    raise NexoError(
        f"the lock records signer {locked.identity} ({locked.issuer}); the artifact has {found}",
        kind="signer_untrusted",
        details={"expected_identity": locked.identity, "identity": outcome.identity},
    )


def _unreached(
    reach: Callable[[], DaemonReach | None] | None, final: Path, summary: ManifestSummary
) -> tuple[str | None, bool]:
    """Why the daemon ``reach`` gives (when it gives one) would never meet ``final``, and
    whether a daemon is configured there (else it is only the fallback root's note)."""
    judge = None if reach is None else reach()
    if judge is None:
        return None, False
    why = judge.unreached(final, summary.plugin_id, microapp=summary.microapp)
    return why, judge.configured


def _plan(
    source_display: str,
    fetched: FetchedArtifact,
    outcome: trust.SignatureOutcome,
    listing: ArchiveListing,
    final: Path,
    *,
    reach: Callable[[], DaemonReach | None] | None,
    replacing: tuple[Path, ...] = (),
    keeping: Path | None = None,
) -> InstallPlan:
    """Step 7 and what step 8 shows: the payload checks on what the archive holds,
    whether the daemon configured as ``reach`` says would find ``final`` at all, and the
    installed trees the install replaces (``replacing``), of which ``keeping`` is kept for
    ``rollback``."""
    summary = check_payload(listing, fetched.plugin_id, fetched.version)
    unreached, configured = _unreached(reach, final, summary)
    vendored = None
    if listing.sbom is not None:
        # check_payload has checked it: a CycloneDX 1.6 document about this plugin.
        document = quick_check(listing.sbom, fetched.plugin_id, fetched.version)
        vendored = tuple(vendored_packages(document))
    return InstallPlan(
        summary=summary,
        source_display=source_display,
        source=dict(fetched.origin.source),
        target=fetched.target,
        asset_name=fetched.asset_name,
        sha256=fetched.sha256,
        checksums=fetched.checksums,
        signature=outcome,
        destination=str(final),
        vendored=vendored,
        shadowing=_orphans_of(fetched.plugin_id, final),
        unreached=unreached if configured else None,
        fallback_note=None if configured else unreached,
        replacing=tuple(str(path) for path in replacing),
        keeping=None if keeping is None else str(keeping),
        keeping_unchecked=keeping is not None and not has_file_hashes(keeping),
    )


def _orphans_of(plugin_id: str, final: Path) -> tuple[str, ...]:
    """The directories beside ``final`` without a receipt whose manifest is plugin
    ``plugin_id``: the daemon discovers them as that plugin too, and no install replaces
    them. One ``lstat`` per directory; only a directory without a receipt is read."""
    found: list[str] = []
    try:
        with os.scandir(final.parent) as entries:
            names = sorted(entry.name for entry in entries if entry.is_dir(follow_symlinks=False))
    except OSError:
        return ()
    for name in names:
        path = final.parent / name
        if path == final or name == BOOKKEEPING_DIR or name.startswith(LEGACY_PREFIXES):
            continue
        if os.path.lexists(path / RECEIPT_NAME):
            continue
        if manifest_identity(path)[0] == plugin_id:
            found.append(str(path))
    return tuple(found)


def _is_empty_dir(path: Path) -> bool:
    """Whether ``path`` is a directory (not a link to one) with nothing in it."""
    if path.is_symlink() or not path.is_dir():
        return False
    try:
        return next(path.iterdir(), None) is None
    except OSError:
        return False


def _receipt_target(origin: Origin, installed: str, options: InstallOptions) -> str:
    """The target a receipt records: for a release or registry install, the one *asked for*
    (``--target``, ``NEXO_INSTALL_TARGET`` or this host's), as the daemon's installer records
    it, not ``noarch`` or the musl fallback actually installed, so a later ``upgrade`` resolves
    the host's own build again; for a local tarball, the target its name gives."""
    if not upgrades_from(origin.source):
        return installed
    return requested_target(options.target)


def _confirmed(plan: InstallPlan, callbacks: InstallCallbacks) -> None:
    if callbacks.confirm is not None and not callbacks.confirm(plan):
        raise NexoError("installation cancelled; nothing was changed", kind="cancelled")


def _replaced(
    options: InstallOptions, step: InstallStep, plugin_id: str, final: Path
) -> tuple[Path, ...]:
    """The installed trees the new one replaces (under the lock): those ``upgrade`` names and
    every other version of the same plugin, since the daemon must find exactly one version
    of an id (it would load whichever sorts first)."""
    installed = step.installed
    if installed is None:
        installed = tuple(
            item.path for item in scan_installed(options.dest) if item.plugin_id == plugin_id
        )
    others = [path for path in installed if path != final]
    return tuple(path for path in dict.fromkeys((*step.replaces, *others)) if path.exists())


def _replacing(options: InstallOptions, final: Path, others: tuple[Path, ...]) -> tuple[Path, ...]:
    """What the confirmation screen names as replaced: the other versions ``others``
    (:func:`_replaced`), and ``final`` itself when ``--force`` puts the new tree where a
    link, a file or a directory with entries is (an empty directory holds nothing)."""
    occupied = final.is_symlink() or final.exists()
    return (final, *others) if options.force and occupied and not _is_empty_dir(final) else others


def _keeping(step: InstallStep, others: tuple[Path, ...]) -> Path | None:
    """Which of the other installed versions ``others`` (:func:`_replaced`) is kept out of
    the daemon's sight for ``rollback``: with ``keep_old``, the newest with a readable
    receipt (one per plugin by default, as ``upgrade`` and ``install`` keep); a link (a
    development install), ``--force``'s own tree and a tree a ``remove`` left behind (the
    operator removed that version: it is no version to go back to) never are."""
    if not step.keep_old or not others:
        return None
    versions = [
        item
        for item in scan_installed(others[0].parent)
        if item.path in others
        and item.receipt is not None
        and not item.path.is_symlink()
        and not is_removal_leftover(item.path.name)
    ]
    return max(versions, key=version_order).path if versions else None


def _installed_signatures(dest: Path, plugin_id: str) -> list[Mapping[str, Any]]:
    """The signatures the receipts of ``plugin_id``'s installed versions record: an install
    replaces those versions, so each binds it as the installed version binds an upgrade. A
    tree a ``remove`` left that the daemon skips is no installed version (as ``list``,
    ``verify`` and ``doctor`` count it): its receipt binds nothing."""
    items = scan_installed(dest)
    if any(is_removal_leftover(item.path.name) for item in items):
        skipped = skipped_removal_leftovers(items, tuple(linked_plugins(dest)))
        items = [item for item in items if item.path not in skipped]
    return [
        item.receipt.signature
        for item in items
        if item.plugin_id == plugin_id and item.receipt is not None and item.receipt.signature
    ]


def _already_present(plan: InstallPlan, final: Path, options: InstallOptions) -> bool:
    """Whether ``final`` already holds this very archive (its receipt names the same hash):
    True. False when nothing (or an empty directory) is there, or with ``force``. Anything
    else in the plugin's place is ``already_installed``: a link (never followed to a
    receipt), a tree from another archive, a tree without a readable receipt."""
    if options.force or not (final.is_symlink() or final.exists()) or _is_empty_dir(final):
        return False
    unreadable = ""
    try:
        existing: Receipt | None = None if final.is_symlink() else read_receipt(final)
    except (OSError, ValueError) as exc:
        existing = None
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        unreadable = f"its install receipt is missing or unreadable ({why})"
    if existing is not None and existing.sha256 == plan.sha256:
        return True
    if final.is_symlink():
        raise NexoError(
            f"{final} is a symbolic link, not an install of {plan.plugin_id}; use "
            "--force to replace the link (what it points to is left alone)",
            kind="already_installed",
            details={"path": str(final)},
        )
    raise NexoError(
        f"{plan.plugin_id} {plan.version} is already installed at {final} "
        f"{'but ' + unreadable if unreadable else 'from a different archive'}; use "
        "--force to replace it",
        kind="already_installed",
        details={"path": str(final)},
    )


def _refuse_downgrade(options: InstallOptions, plugin_id: str, version: str) -> None:
    """``downgrade_refused`` when a newer version of ``plugin_id`` is installed, which this
    install would replace, unless ``allow_downgrade`` (as ``upgrade`` asks). Versions that
    are not semver cannot be ordered and are not held against the install."""
    if options.allow_downgrade:
        return
    try:
        new = True, parse_version(version)
    except VersionError:
        return
    for item in scan_installed(options.dest):
        receipt = item.receipt
        if item.plugin_id == plugin_id and receipt is not None and version_order(item) > new:
            raise NexoError(
                f"{plugin_id} {receipt.version} is installed, newer than {version}; pass "
                "--allow-downgrade to replace it with the older version",
                kind="downgrade_refused",
                details={"installed": receipt.version, "version": version},
            )


def _install_tree(
    source_display: str,
    fetched: FetchedArtifact,
    outcome: trust.SignatureOutcome,
    final: Path,
    options: InstallOptions,
    *,
    callbacks: InstallCallbacks,
    step: InstallStep,
) -> InstallResult:
    """Steps 6 to 9 under the root's lock: the archive is checked and extracted in one pass
    into a private staging directory, its payload checked, the plan confirmed, the receipt
    written, then the tree renamed into place. Nothing is visible before the rename."""
    held: contextlib.AbstractContextManager[InstallRoot] = (
        contextlib.nullcontext(step.root) if step.root is not None else locked_root(options.dest)
    )
    with held as root:
        if step.unless_held:
            _refuse_held(root.dest, fetched.plugin_id)
        # A link in the plugin's place is not an install (verify fails it): it is never
        # followed to a receipt, and only --force replaces it (the link, not its target).
        occupied = final.is_symlink() or final.exists()
        # An empty directory in the plugin's place holds no install: the daemon's installer
        # replaces it, and so does this one, without --force.
        replaceable = options.force or _is_empty_dir(final)
        if occupied and not replaceable:
            listing = inspect_archive(fetched.path, options.limits)
            # The payload is judged before the root (SPEC §5, step 7 before 9): the same
            # archive already in place is still `incompatible` for this daemon, as its
            # dry run and a first install say, never "already installed".
            _check_archive_compatible(listing, fetched, options)
            plan = _plan(source_display, fetched, outcome, listing, final, reach=options.reach)
            _confirmed(plan, callbacks)
            if _already_present(plan, final, options):
                return InstallResult(plan, final, was_already_present=True)
        _refuse_downgrade(options, fetched.plugin_id, fetched.version)
        staging: Path | None = None
        origin = fetched.origin
        try:
            staging = root.new_staging(fetched.plugin_id)
            listing = extract_archive(fetched.path, staging, options.limits)
            _check_archive_compatible(listing, fetched, options)
            # Under the lock: what the screen names is what the rename below replaces.
            others = _replaced(options, step, fetched.plugin_id, final)
            plan = _plan(
                source_display,
                fetched,
                outcome,
                listing,
                final,
                reach=options.reach,
                replacing=_replacing(options, final, others),
                keeping=(keeping := _keeping(step, others)),
            )
            _confirmed(plan, callbacks)
            (staging / "bin" / plan.plugin_id).chmod(0o755)
            receipt = Receipt(
                id=plan.plugin_id,
                version=plan.version,
                owner=origin.owner,
                repo=origin.repo,
                tag=origin.requested_tag or origin.tag,
                resolved_tag=origin.tag if origin.requested_tag else None,
                target=_receipt_target(origin, plan.target, options),
                sha256=plan.sha256,
                installed_at=origin.published or utc_now(),
                source=origin.type,
                signature=plan.signature.to_json(),
                files={name: info.sha256 for name, info in listing.files.items()},
                registry=origin.registry,
                modes=tree_modes(staging, listing.modes, changed=[f"bin/{plan.plugin_id}"]),
            )
            write_receipt(staging, receipt)
            sync_tree(staging)
            if callbacks.committing is not None:
                callbacks.committing()
            set_aside = publish(
                root,
                staging,
                final,
                replace=replaceable and occupied,
                replaces=others,
                keep_old=step.keep_old,
                # A plain install keeps the one version the screen named, as upgrade keeps one.
                keep_only=(
                    frozenset({keeping} if keeping else ()) if step.bind_installed else None
                ),
            )
        except BaseException as exc:
            if staging is not None:
                discard(staging.parent)
            if isinstance(exc, OSError):
                raise NexoError(
                    f"cannot install into {final}: {exc.strerror or exc}", kind="io"
                ) from exc
            raise
        released = _released_hold(root.dest, plan.plugin_id) if step.release_hold else None
    return InstallResult(plan, final, set_aside=set_aside, released_hold=released)


class HeldMeanwhileError(NexoError):
    """An upgrade that named no version found the plugin held under the root's lock (a
    ``hold`` or ``rollback`` ran since it looked): nothing was installed."""

    def __init__(self, version: str) -> None:
        super().__init__(f"held at {version}", kind="held")
        self.version = version


def _refuse_held(dest: Path, plugin_id: str) -> None:
    from nexo_pkg.install.hold import read_hold  # noqa: PLC0415 - holds are rare

    hold = read_hold(dest, plugin_id)
    if hold is not None:
        raise HeldMeanwhileError(hold.version)


def _released_hold(dest: Path, plugin_id: str) -> str | None:
    """End the hold on ``plugin_id`` (the caller holds the root's lock); the version it
    held, or ``None`` when there was none."""
    from nexo_pkg.install.hold import release_hold  # noqa: PLC0415 - holds are rare

    released = release_hold(dest, plugin_id)
    return released.version if released is not None else None


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
    # Versions kept by earlier upgrades that this one removed (one previous tree is kept).
    pruned: tuple[Path, ...] = ()
    # Set when nothing was looked up because the plugin is held (nexo_pkg.install.hold).
    held: str | None = None
    # With ``held``: the plugin's source is not upgraded from (a local file: no release to
    # name).
    held_local: bool = False
    # With ``held``: the receipt names no origin nexo-pkg knows (nothing to name a version
    # from until an install records one).
    held_unknown: bool = False
    # Of ``pruned``: the trees whose files could not all be deleted (``.nexo/removing``);
    # ``unfinished``: those of ``pruned`` themselves.
    left: tuple[Path, ...] = ()
    unfinished: tuple[Path, ...] = ()
    # The version a hold kept the plugin at, ended by this upgrade (``upgrade ID@TAG``).
    released_hold: str | None = None
    # The version a hold keeps the plugin at, left in place by an ``upgrade ID@TAG`` that
    # named the version already installed (as an install that finds it in place keeps it).
    kept_hold: str | None = None

    @property
    def warnings(self) -> tuple[str, ...]:
        """What the pruning of kept versions left behind, one warning per tree."""
        return tuple(left_behind(path) for path in self.left)

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any]
        if self.install is not None:
            document = self.install.to_json()
            # A version moved aside that this upgrade then pruned is gone: not `replaced`.
            document["replaced"] = [
                path for path in document["replaced"] if Path(path) not in self.pruned
            ]
        else:
            document = {"ok": True, "id": self.plugin_id, "version": self.to_version}
            document["path"] = str(self.old_path)
            document["was_already_present"] = True
        document["from_version"] = self.from_version
        document["upgraded"] = self.install is not None and not self.install.was_already_present
        document["old_path"] = str(self.old_path)
        document["removed_old"] = self.removed_old
        document["kept_paths"] = [str(path) for path in self.kept]
        document["pruned_kept_paths"] = [str(path) for path in self.pruned]
        if self.left:
            document["warnings"] = [*document.get("warnings", []), *self.warnings]
        if self.pinned_tag is not None:
            document["pinned_tag"] = self.pinned_tag
        if self.held is not None:
            document["held"] = self.held
        if self.released_hold is not None:
            document["released_hold"] = self.released_hold
        if self.kept_hold is not None:
            document["held"] = self.kept_hold  # still held: this upgrade changed nothing
        return document


def upgrade(
    plugin_id: str,
    options: InstallOptions,
    callbacks: InstallCallbacks = NO_CALLBACKS,
    *,
    allow_downgrade: bool = False,
    keep_old: bool | None = None,
    tag: str | None = None,
    known: Prefetched | None = None,
) -> UpgradeResult:
    """Upgrade an installed plugin along its receipt's coordinates (``--target`` overrides
    its target), as the reference does; one from a registry follows the highest semver tag
    of its repository. A receipt pinned to an explicit tag (:attr:`Receipt.pinned_tag`) stays
    on it (a no-op saying so) unless ``tag`` names the release to move to (``latest``: the
    newest). Same version: no-op. Lower: ``downgrade_refused`` unless ``allow_downgrade``.
    The old versions leave the daemon's sight in the step that brings the new one in: by
    default (``keep_old`` None) the version replaced is kept under ``.nexo/kept`` for
    ``rollback`` and older kept ones are removed; True keeps them all, False deletes it.
    Raises ``not_installed`` for an unknown id, ``source_invalid`` for local-file installs
    and receipts that name no known origin (nothing written).
    ``known`` is what was already read of the newest versions (:func:`known_latest_releases`);
    every check of the release is made as ever.
    """
    _check_flags(options)
    matches = require_installed(options.dest, plugin_id)
    current = matches[0]
    receipt = current.receipt
    assert receipt is not None  # noqa: S101 (require_installed only returns receipts)
    # A registry receipt's tag is the release it was mirrored from, not a pin; a registry
    # upgrade takes this host's targets, as it always has, where a release's follows the
    # receipt's.
    pinned = receipt.upgrade_pin
    if options.target is None and receipt.target and receipt.binds_upgrade:
        options = replace(options, target=receipt.target)
    origin = receipt.origin()
    # A source may say the installed version is still its newest from less than the whole
    # judgement of a release (one request): any other version is judged whole, as install does.
    request = SourceRequest(
        host_candidates(options.target),
        manifest_asset_problem,
        plugin_id,
        installed=receipt.version,
    )
    with command_context(options, callbacks) as context:
        source = reopen(origin, context, request, follow=True, tag=tag, known=known)
        if source is None:
            if not receipt.origin_known:
                from nexo_pkg.install.remedy import reinstall_command  # noqa: PLC0415 (a refusal)

                raise NexoError(
                    f"{plugin_id}'s receipt names no known origin (source "
                    f"{receipt.source!r}): nothing to upgrade it from; "
                    f"{reinstall_command(current)}",
                    kind="source_invalid",
                    details={"id": plugin_id, "path": str(current.path)},
                )
            raise NexoError(
                f"{plugin_id} was installed from a local file; install the new tarball with "
                "`nexo plugin install PATH`",
                kind="source_invalid",
            )
        context.policy()  # a bad policy fails before any network work
        if tag is None and pinned is not None:
            version = receipt.version
            return UpgradeResult(
                plugin_id, version, version, current.path, None, False, pinned_tag=pinned
            )
        stopped = None if known is None else known.stopped_for(origin)
        if stopped is not None:
            # Its service said the rate limit is spent: nothing more is asked of it.
            raise stopped
        offered = source.newest()
        if tag is None and options.daemon is not None and not options.force:
            # The newest version excludes the daemon: a newer version than the installed one
            # that admits it is the upgrade (chosen from manifests, before download); with
            # none, the newest is refused below as `incompatible`.
            admits = Admitting(options.daemon)
            chosen = source.compatible(admits, above=receipt.version, doing="upgrading to")
            if chosen is not None:
                source, offered = chosen, chosen.newest()
        # The version compared is the one the release's manifest (or tarball names, or the
        # registry's index) carries, which the payload check then holds the archive's own
        # manifest to: never the tag, which a mirror controls and which real releases do not
        # keep in step with the manifest.
        return _upgrade_to(
            source,
            context,
            matches,
            options,
            callbacks,
            new_version=offered.version,
            latest=offered.said + ",",
            allow_downgrade=allow_downgrade,
            keep_old=keep_old,
            named=tag is not None,
        )


def _upgrade_to(
    source: Source,
    context: SourceContext,
    matches: list[Installed],
    options: InstallOptions,
    callbacks: InstallCallbacks,
    *,
    new_version: str,
    latest: str,
    allow_downgrade: bool,
    keep_old: bool | None,
    named: bool = False,
) -> UpgradeResult:
    """:func:`upgrade` once the installed versions (``matches``, newest first) and the
    version ``source`` offers are known: same version, no-op; lower, ``downgrade_refused``
    unless allowed; else the new version is installed in place of the old ones."""
    current = matches[0]
    receipt = current.receipt
    assert receipt is not None  # noqa: S101 (require_installed only returns receipts)
    plugin_id = receipt.id
    try:
        order = compare_versions(new_version, receipt.version)
    except VersionError:
        order = 1  # an installed version that is not semver cannot be ordered; install anew
    if order == 0:
        return UpgradeResult(plugin_id, receipt.version, new_version, current.path, None, False)
    if order < 0 and not allow_downgrade:
        raise NexoError(
            f"{latest} older than the installed {receipt.version}; pass --allow-downgrade to "
            "install it",
            kind="downgrade_refused",
            details={"installed": receipt.version, "latest": new_version},
        )
    return replace_installed(
        plugin_id,
        matches,
        lambda upgrade_options, step: install_from(
            source, context, upgrade_options, callbacks, step
        ),
        options=options,
        versions=(receipt.version, new_version),
        keep_old=keep_old,
        named=named,
    )


def replace_installed(
    plugin_id: str,
    matches: list[Installed],
    run_install: Callable[[InstallOptions, InstallStep], InstallResult],
    *,
    options: InstallOptions,
    versions: tuple[str, str],
    keep_old: bool | None,
    named: bool = False,
) -> UpgradeResult:
    """The install step of an upgrade, whatever the source: ``run_install`` puts the new
    version in place of the installed ones (``matches``, current first), which leave the
    daemon's sight in the same step, and the new version must keep the installed signer.
    ``keep_old``: as :func:`upgrade` says. Unless the version was ``named``, a plugin found
    held under the root's lock is left as it is (``held``); a new version in place ends its
    hold."""
    keep = keep_old is not False
    current = matches[0]
    olds = tuple(item.path for item in matches)
    previous = current.receipt.signature if current.receipt is not None else None
    # Whether an older version may come in was decided by the caller, from the versions.
    step = InstallStep(
        replaces=olds,
        keep_old=keep,
        previous_signature=previous,
        unless_held=not named,
        release_hold=True,
    )
    earlier = [item.path for item in scan_kept(options.dest) if item.plugin_id == plugin_id]
    try:
        result = run_install(replace(options, allow_downgrade=True), step)
    except HeldMeanwhileError as held:
        return UpgradeResult(
            plugin_id, versions[0], versions[0], current.path, None, False, held=held.version
        )
    moved = result.set_aside
    if result.was_already_present:
        # The new version was already there beside the old: only the old ones move out.
        with locked_root(options.dest) as root:
            # Only a named version ends a hold here: the step above found none under the
            # lock, so a hold now is one a `hold` made since, which an upgrade that named
            # no version leaves standing.
            if (
                named
                and not result.dry_run
                and (released := _released_hold(options.dest, plugin_id))
            ):
                result = replace(result, released_hold=released)
            moved = tuple(
                root.set_aside(path, keep=keep)
                for path in olds
                if path != result.path and path.exists()
            )
            if not keep:
                for aside in moved:
                    discard(aside.parent)
    kept = moved if keep and not result.dry_run else ()
    pruned: tuple[Path, ...] = ()
    left: list[Path] = []
    unfinished: list[Path] = []
    if keep_old is None and kept:
        # One previous version per plugin: the newest of those replaced (they moved newest
        # first) is the one kept; the ones kept before it go, and so do older versions that
        # were installed beside it (the reference's upgrade leaves the old one in place).
        kept, beside = kept[:1], kept[1:]
        pruned = _remove_trees(
            options.dest,
            [path for path in earlier if path not in kept] + list(beside),
            left,
            unfinished,
        )
    removed = bool(moved) and not keep
    return UpgradeResult(
        plugin_id,
        *versions,
        current.path,
        result,
        removed,
        kept,
        pruned=pruned,
        left=tuple(left),
        unfinished=tuple(unfinished),
    )


def _remove_trees(
    dest: Path,
    paths: list[Path],
    left: list[Path] | None = None,
    unfinished: list[Path] | None = None,
) -> tuple[Path, ...]:
    """Remove installed or kept trees (each moved out of sight first, then deleted); those
    already gone are left out of the result. A tree moved out of sight whose files could not
    all be deleted is appended to ``left`` (its place under ``.nexo/removing``) and to
    ``unfinished`` (its path in ``paths``)."""
    removed = []
    with locked_root(dest) as root:
        for path in paths:
            with contextlib.suppress(FileNotFoundError):
                holder = remove_tree(root, path)
                removed.append(path)
                if holder is not None and left is not None:
                    left.append(holder)
                if holder is not None and unfinished is not None:
                    unfinished.append(path)
    return tuple(removed)


def remove(plugin_id: str, dest: Path, left: list[Path] | None = None) -> list[Installed]:
    """Remove every installed version of ``plugin_id`` (an install whose receipt is unreadable
    too), and the old versions ``upgrade`` kept; raises ``not_installed``/``io``. The trees
    moved out of the daemon's sight whose files could not all be deleted are appended to
    ``left`` (the plugin is no longer installed; the next run on the root deletes them)."""
    unreadable = unreadable_installs(dest, plugin_id)
    kept = [item for item in scan_kept(dest) if item.plugin_id == plugin_id]
    if unreadable:
        matches = installed_versions(dest, plugin_id) + unreadable
    elif kept and not installed_versions(dest, plugin_id):
        # Only versions kept for rollback are left (`list` shows them): they go too.
        matches = []
    else:
        matches = require_installed(dest, plugin_id)
    matches += kept
    _remove_trees(dest, [item.path for item in matches], left)
    return matches


def receipt_source(
    receipt: Receipt, context: SourceContext, known: Prefetched | None = None
) -> Source | None:
    """The source of the newest version where a receipt came from (its GitHub repository's
    latest release, its registry repository's highest semver tag), asked through
    ``context`` for metadata, manifest assets and indexes only (:meth:`Source.newest`), with
    what :func:`prefetch_latest` already read; ``None`` when the receipt's source cannot be
    asked again (a local file). Nothing is read until it is asked."""
    request = SourceRequest(
        (), manifest_asset_problem, receipt.id, installed=receipt.version, compares_only=True
    )
    return reopen(receipt.origin(), context, request, follow=True, known=known)


def prefetch_latest(
    receipts: Sequence[Receipt], context: SourceContext, *, jobs: int = 0
) -> Prefetched:
    """What can be read at once of the newest versions where ``receipts`` came from, before
    their lookups (with a GitHub token, many latest releases to a GraphQL request; with
    ``jobs``, those left out one by one, ``jobs`` at a time): see
    :func:`~nexo_pkg.sources.route.prefetch_newest`."""
    return prefetch_newest([r.origin() for r in receipts], context, jobs=jobs)


def known_latest_releases(
    receipts: Sequence[Receipt],
    options: InstallOptions,
    *,
    jobs: int,
    callbacks: InstallCallbacks = NO_CALLBACKS,
) -> Prefetched:
    """The newest versions where ``receipts`` came from, read before ``upgrade --all``'s
    upgrades start (not those pinned to a tag), ``jobs`` at a time on one command's clients
    (with a GitHub token, 50 to a GraphQL request). One that cannot be read is left out
    (its upgrade asks again and reports why); after a rate-limit answer nothing more is
    asked: the kind whose service said so is in :attr:`Prefetched.stopped`, and the
    upgrades of its plugins fail with that answer without asking it again. A proxy setting
    no connection could be made with raises ``config`` before any request: the run is
    refused once, not each upgrade."""
    from nexo_pkg.net.api import check_proxy_settings  # noqa: PLC0415

    # Those whose upgrade stays on their tag ask nothing; which those are, the seam says.
    followed = [r for r in receipts if r.upgradable and r.upgrade_pin is None]
    if not followed:
        return Prefetched()
    check_proxy_settings()
    with command_context(options, callbacks) as context:
        try:
            return prefetch_latest(followed, context, jobs=jobs)
        except NexoError:
            return Prefetched()


SEARCH_TOPIC = "nexo-plugin"
MAX_SEARCH_RESULTS = 100


def search_repositories(
    term: str,
    options: InstallOptions,
    *,
    limit: int = 30,
    callbacks: InstallCallbacks = NO_CALLBACKS,
) -> list[Any]:
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
    with command_context(options, callbacks) as context:
        client = context.github()
        url = f"{client.api_base}/search/repositories?q={query}&per_page={limit}"
        document, _ = client.get_json(url, what="the repository search")
    if document is None:
        raise NexoError(
            f"the repository search: HTTP 404 (the API at {client.api_base} has no repository "
            "search: is NEXO_GITHUB_API_BASE, or --github-api-url, a GitHub API base?)",
            kind="network",
            details={"http_status": 404},
        )
    items = document.get("items") if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise NexoError("the repository search answered no list of repositories", kind="network")
    # An entry without a repository name cannot be installed or shown: it is left out.
    named = [item for item in items if isinstance(item, dict)]
    return [item for item in named if isinstance(item.get("full_name"), str)][:limit]


@dataclass(frozen=True)
class ReleaseInfo:
    """What ``info`` shows of a release: every target it ships, and the checked plan of the
    target this host would install (its signature verified as ``install`` verifies it)."""

    plan: InstallPlan
    tag: str | None
    targets: tuple[tuple[str, str], ...]
    min_nexo_version: str | None
    #: A registry repository's version tags, highest first (``None``: a GitHub release or a
    #: file, whose releases are not listed).
    tags: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": True,
            "id": self.plan.plugin_id,
            "version": self.plan.version,
            "tag": self.tag,
            "tags": None if self.tags is None else list(self.tags),
            "source": self.plan.source,
            "targets": [{"target": target, "asset": name} for target, name in self.targets],
            "host_target": self.plan.target,
            "asset": self.plan.asset_name,
            "sha256": self.plan.sha256,
            "checksums": list(self.plan.checksums),
            "signature": self.plan.signature.to_json(),
            "min_nexo_version": self.min_nexo_version,
            "manifest": self.plan.summary.to_json(),
            "vendored": None if self.plan.vendored is None else list(self.plan.vendored),
            "warnings": list(self.plan.warnings),
        }


def release_info(
    source_text: str, options: InstallOptions, callbacks: InstallCallbacks = NO_CALLBACKS
) -> ReleaseInfo:
    """Everything ``install SOURCE`` would check, without installing: the release's targets,
    and for this host's target the asset, its checksums, its verified signer and its
    manifest (downloaded into the blob cache and checked as ``install --dry-run`` does).
    Raises what ``install`` raises. One network deadline bounds every request of it."""
    options = replace(options, dry_run=True)
    _check_flags(options)
    tag: str | None = None
    tags: tuple[str, ...] | None = None
    requirement: str | None = None
    with command_context(options, callbacks) as context:
        # What the release is, whatever is installed: no installed signer binds the answer.
        result = _install_in(source_text, context, options, callbacks, ONE_INSTALL)
        targets: tuple[tuple[str, str], ...] = ((result.plan.target, result.plan.asset_name),)
        # The version the install resolved, read again for what it ships beside this target.
        request = SourceRequest(None, manifest_asset_problem)
        source = reopen(result.plan.source, context, request)
        if source is not None:
            offered = source.newest()
            tag = offered.tag
            found = source.every_target()
            targets = tuple((each.target, each.asset_name) for each in found) or targets
            manifest = offered.manifest
            if manifest is not None:
                requirement = min_nexo_version(manifest)
            # A registry (pinned by digest here) names its versions by tag alone.
            version_tags = source.version_tags()
            if version_tags is not None:
                tags = tuple(name for _, name in version_tags)
                shown = parse_version(result.plan.version)
                tag = next((name for version, name in version_tags if version == shown), tag)
    # The daemon reads the tarball's manifest: what it says wins, and a local tarball or a
    # release without a manifest asset has only that one.
    requirement = result.plan.summary.min_nexo_version or requirement
    return ReleaseInfo(result.plan, tag, targets, requirement, tags)
