"""CLI for fleets: ``lock``, ``sync``, ``push``, ``mirror`` and ``cache dir|size|clean|prune``
(the work is in :mod:`nexo_pkg.fleet`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from nexo_pkg.cli.common import answer, fail, guarded, result_line, say_each_failure
from nexo_pkg.cli.limits import archive_limits
from nexo_pkg.cli.options import (
    AcceptedYesOption,
    AllowSignerChangeOption,
    ConfigOption,
    DestOption,
    GitHubApiOption,
    JobsOption,
    JsonOption,
    MaxDownloadSizeOption,
    MaxEntriesOption,
    MaxEntrySizeOption,
    MaxTotalSizeOption,
    NexoVersionOption,
    PlainHttpOption,
    RegistryConfigOption,
    RegistryReferenceArgument,
    RequireSignatureOption,
    SkipSignatureOption,
    TargetOption,
    TimeoutOption,
    TrustedKeysOption,
    named_path,
)
from nexo_pkg.cli.syncing import SyncRequest, fleet_callbacks, fleet_options, note, run_sync
from nexo_pkg.core.errors import NexoError, UsageError
from nexo_pkg.core.output import emit_json, warn
from nexo_pkg.core.terminal import printable
from nexo_pkg.fleet import api as fleet_api
from nexo_pkg.manifest.daemon_config import nexo_home_from_env

if TYPE_CHECKING:
    from nexo_pkg.fleet.api import CopyResult, FleetOptions, LockResult, PushResult

WantedOption = Annotated[
    Path,
    typer.Option(
        "--file",
        "-f",
        help="The wanted set (default ./nexo-plugins.toml).",
        metavar="<path>",
        parser=named_path("--file", "the wanted set"),
    ),
]
RegistryMirrorOption = Annotated[
    list[str] | None,
    typer.Option(
        "--registry-mirror",
        metavar="HOST=MIRROR",
        help="Fetch HOST's locked digests from MIRROR (HOST[:PORT][/PATH]) first; repeatable. "
        "Also $NEXO_REGISTRY_MIRRORS and [registries] in nexo-plugins.toml.",
    ),
]
LockOption = Annotated[
    Path | None,
    typer.Option(
        "--lock",
        help="The lock file (default: nexo-plugins.lock beside the wanted set).",
        metavar="<path>",
        parser=named_path("--lock", "the lock file"),
    ),
]


def lock_command(
    *,
    plugin_ids: Annotated[
        list[str] | None,
        typer.Argument(metavar="[ID]...", help="With --upgrade: the plugins to re-resolve."),
    ] = None,
    wanted: WantedOption = Path("nexo-plugins.toml"),
    lock_file: LockOption = None,
    upgrade: Annotated[
        bool,
        typer.Option(
            "--upgrade", help="Re-resolve the IDs named (every plugin when none is named)."
        ),
    ] = False,
    check: Annotated[
        bool, typer.Option("--check", help="Only say whether the lock is stale (exit 1 if so).")
    ] = False,
    config: ConfigOption = None,
    trusted_keys: TrustedKeysOption = None,
    require_signature: RequireSignatureOption = False,
    skip_signature_verify: SkipSignatureOption = False,
    github_api_url: GitHubApiOption = None,
    registry_config: RegistryConfigOption = None,
    plain_http: PlainHttpOption = False,
    timeout: TimeoutOption = None,
    jobs: JobsOption = None,
    nexo_version: NexoVersionOption = None,
    max_download_size: MaxDownloadSizeOption = None,
    max_entries: MaxEntriesOption = None,
    max_total_size: MaxTotalSizeOption = None,
    max_entry_size: MaxEntrySizeOption = None,
    yes: AcceptedYesOption = False,
    json_output: JsonOption = False,
) -> None:
    """Resolve nexo-plugins.toml into nexo-plugins.lock (every target, hash and signer).

    Unchanged entries are kept as they are; `--upgrade [ID]...` re-resolves those plugins
    (every plugin when no ID is named). With the daemon's version (--nexo-version or
    NEXO_DAEMON_VERSION) a GitHub source without a tag locks the newest release whose
    manifest asset admits it; a release that excludes it is incompatible.
    Exit codes: 0 the lock is current; 1 a plugin could not be locked, or --check found
    it stale; 2 usage or configuration error.
    """
    del yes  # nothing is asked: accepted as on every command that changes state
    path = lock_file if lock_file is not None else wanted.parent / fleet_api.LOCK_NAME
    if check and (upgrade or plugin_ids):
        # --check resolves nothing: an upgrade asked beside it would be silently not done.
        message = "--check only reads the lock; it takes no --upgrade or plugin ids"
        fail(UsageError(message), json_output=json_output)
    if check:
        result = guarded(lambda: fleet_api.check(wanted, path), json_output=json_output)
        if json_output:
            emit_json(result.to_json())
        if result.stale:
            # The answer is no, and why: said with --quiet too (as ruff -q keeps its findings).
            for reason in result.stale:
                sys.stderr.write(printable(f"stale: {reason}") + "\n")
            again = fleet_api.lock_command(wanted, path)
            line = f"error: {path} is stale; run `{again}` [lock_stale]"
            sys.stderr.write(printable(line) + "\n")
            raise typer.Exit(1)
        if not json_output:
            note(f"{path} is up to date.")
        return
    if plugin_ids and not upgrade:
        message = "plugin ids are only taken with --upgrade (lock --upgrade ID)"
        fail(UsageError(message), json_output=json_output)
    upgrade_ids = frozenset(plugin_ids or ()) if upgrade else None

    def show(result: LockResult) -> None:
        for plugin_id, change in sorted(result.changes.items()):
            note(f"{plugin_id}: {change}")
        note(f"Wrote {path}." if result.written else f"{path} is up to date.")

    def locking() -> LockResult:
        try:
            return fleet_api.lock(
                wanted,
                path,
                fleet_options(
                    config=config,
                    trusted_keys=trusted_keys,
                    require_signature=require_signature,
                    skip_signature_verify=skip_signature_verify,
                    github_api_url=github_api_url,
                    registry_config=registry_config,
                    plain_http=plain_http,
                    timeout=timeout,
                    jobs=jobs,
                    nexo_version=nexo_version,
                    limits=archive_limits(
                        max_download=max_download_size,
                        max_entries=max_entries,
                        max_total=max_total_size,
                        max_entry=max_entry_size,
                    ),
                ),
                callbacks=fleet_callbacks(json_output),
                upgrade=upgrade_ids,
            )
        except NexoError as error:
            say_each_failure(error)  # several plugins not locked: one line each
            raise

    locked = answer(locking, json_output=json_output, show=show)
    for message in locked.warnings:
        warn(printable(message))  # as install warns: with --quiet and --json too


def sync_command(
    *,
    lock_file: Annotated[
        Path,
        typer.Option(
            "--lock",
            help="The lock file (default ./nexo-plugins.lock).",
            metavar="<path>",
            parser=named_path("--lock", "the lock file"),
        ),
    ] = Path("nexo-plugins.lock"),
    dest: DestOption = None,
    prune: Annotated[
        bool, typer.Option("--prune", help="Remove installed plugins the lock does not name.")
    ] = False,
    frozen: Annotated[
        bool,
        typer.Option(
            "--frozen", help="Use the lock as it is; refuse when it is stale, resolve nothing."
        ),
    ] = False,
    target: TargetOption = None,
    config: ConfigOption = None,
    trusted_keys: TrustedKeysOption = None,
    require_signature: RequireSignatureOption = False,
    skip_signature_verify: SkipSignatureOption = False,
    github_api_url: GitHubApiOption = None,
    registry_config: RegistryConfigOption = None,
    plain_http: PlainHttpOption = False,
    registry_mirror: RegistryMirrorOption = None,
    timeout: TimeoutOption = None,
    jobs: JobsOption = None,
    allow_signer_change: AllowSignerChangeOption = False,
    nexo_version: NexoVersionOption = None,
    max_download_size: MaxDownloadSizeOption = None,
    max_entries: MaxEntriesOption = None,
    max_total_size: MaxTotalSizeOption = None,
    max_entry_size: MaxEntrySizeOption = None,
    yes: AcceptedYesOption = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the plan (install, upgrade, downgrade, reinstall, remove, "
            "unchanged, with versions) and change nothing: no request, no lock written.",
        ),
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Make the plugin root match the lock: install, upgrade, downgrade, and with --prune
    remove.

    The lock decides: a plugin installed at a higher version than the lock's is
    downgraded, and the summary names every downgrade ("as locked"). The version each
    plugin had is kept out of the daemon's sight for `nexo plugin rollback`, as upgrade
    keeps it (one per plugin). --dry-run prints the plan from the lock and the installed
    receipts alone (a lock stale against nexo-plugins.toml is planned as it stands, and
    said to be stale; with --frozen it is refused, as the run refuses it). Without
    --frozen a nexo-plugins.toml beside the lock is locked first when the lock is stale; a
    version that locking brings in must keep the installed version's signer
    (signer_changed, unless --allow-signer-change), as for upgrade. Exit codes: 0 in sync
    (or planned); 1 a plugin failed (the others are synced), or with --dry-run the run
    would fail one (a development link holds its id, or the lock has no tarball for this
    host); 2 usage or configuration error.
    """
    del yes  # nothing is asked: accepted as on every command that changes state
    code = run_sync(
        SyncRequest(
            lock_file=lock_file,
            dest=dest,
            prune=prune,
            frozen=frozen,
            target=target,
            config=config,
            trusted_keys=trusted_keys,
            require_signature=require_signature,
            skip_signature_verify=skip_signature_verify,
            github_api_url=github_api_url,
            registry_config=registry_config,
            plain_http=plain_http,
            registry_mirror=registry_mirror,
            timeout=timeout,
            jobs=jobs,
            allow_signer_change=allow_signer_change,
            nexo_version=nexo_version,
            max_download_size=max_download_size,
            max_entries=max_entries,
            max_total_size=max_total_size,
            max_entry_size=max_entry_size,
            dry_run=dry_run,
            json_output=json_output,
        )
    )
    if code:
        raise typer.Exit(code)


def push_command(
    *,
    arguments: Annotated[
        list[str],
        typer.Argument(
            metavar="[DIST] REFERENCE",
            help="DIST: the directory `nexo plugin pack` wrote (default: ./dist, where "
            "pack writes); REFERENCE: oci://HOST/NS/NAME[:TAG].",
            show_default=False,
        ),
    ],
    registry_config: RegistryConfigOption = None,
    plain_http: PlainHttpOption = False,
    timeout: TimeoutOption = None,
    yes: AcceptedYesOption = False,
    json_output: JsonOption = False,
) -> None:
    """Publish one version (every target, with sidecars and signatures) to a registry.

    DIST defaults to ./dist, where `nexo plugin pack` writes. The tag defaults to the
    version. Exit codes: 0 pushed; 1 refused; 2 usage error.
    """
    del yes  # nothing is asked: accepted as on every command that changes state

    if len(arguments) not in {1, 2}:
        message = "push takes [DIST] REFERENCE: the packed directory (default ./dist) and "
        fail(UsageError(message + "an oci:// reference"), json_output=json_output)
    dist = Path(arguments[0]) if len(arguments) == 2 else Path("dist")
    destination = arguments[-1]

    answer(
        lambda: fleet_api.push(
            dist,
            destination,
            fleet_options(
                registry_config=registry_config,
                plain_http=plain_http,
                timeout=timeout,
                reads_policy=False,
            ),
            callbacks=fleet_callbacks(json_output),
        ),
        json_output=json_output,
        show=lambda pushed: note(
            f"Pushed {pushed.plugin_id} {pushed.version} to {pushed.reference} ({pushed.digest})."
        ),
    )


def mirror_command(
    *,
    release: Annotated[
        str,
        typer.Argument(
            metavar="SOURCE",
            help="The GitHub release to copy (OWNER/REPO@TAG), or a registry version "
            "(oci://HOST/NS/NAME[:TAG|@sha256:DIGEST]).",
        ),
    ],
    destination: RegistryReferenceArgument,
    github_api_url: GitHubApiOption = None,
    registry_config: RegistryConfigOption = None,
    plain_http: PlainHttpOption = False,
    timeout: TimeoutOption = None,
    max_download_size: MaxDownloadSizeOption = None,
    yes: AcceptedYesOption = False,
    json_output: JsonOption = False,
) -> None:
    """Copy a GitHub release, or a registry version, with its signature material into a
    registry.

    From a registry every tag of the version and every referrer is copied with its bytes
    unchanged; what the destination holds already is skipped, so a cut-off run resumes
    and a second run copies nothing. Installs from the copy verify the original signer
    under the same trust policy. Exit codes: 0 mirrored; 1 refused; 2 usage error.
    """
    del yes  # nothing is asked: accepted as on every command that changes state
    callbacks = fleet_callbacks(json_output)

    def options() -> FleetOptions:
        return fleet_options(
            github_api_url=github_api_url,
            registry_config=registry_config,
            plain_http=plain_http,
            timeout=timeout,
            reads_policy=False,
            limits=archive_limits(max_download=max_download_size),
        )

    def show(done: CopyResult | PushResult) -> None:
        if isinstance(done, fleet_api.CopyResult):  # a version copied as it is
            note(
                f"Mirrored {done.source} to {done.reference} ({done.digest}): "
                f"{done.blobs} blob(s), {done.manifests} manifest(s), "
                f"{done.tags_written} tag(s) copied."
            )
        else:  # a registry artifact built from a release
            note(f"Mirrored {release} to {done.reference} ({done.digest}).")

    answer(
        lambda: fleet_api.mirror_source(release, destination, options(), callbacks),
        json_output=json_output,
        show=show,
    )


def cache_dir_command(*, json_output: JsonOption = False) -> None:
    """Print the cache directory (it may not exist yet)."""
    from nexo_pkg.sources.api import BlobCache  # noqa: PLC0415

    root = str(BlobCache(nexo_home_from_env()).root)
    if json_output:
        emit_json({"ok": True, "path": root})
    else:
        result_line(root)


def cache_size_command(
    *,
    human: Annotated[
        bool, typer.Option("--human", "-H", help="Print 1.5MiB instead of bytes.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Print the size of the cache in bytes, kept API answers included (0 when it does
    not exist)."""
    from nexo_pkg.sources.api import BlobCache  # noqa: PLC0415

    cache = BlobCache(nexo_home_from_env())
    count, size = guarded(cache.usage, json_output=json_output)
    if json_output:
        emit_json({"ok": True, "path": str(cache.root), "blobs": count, "bytes": size})
    else:
        result_line(human_size(size) if human else str(size))


def cache_clean_command(*, yes: AcceptedYesOption = False, json_output: JsonOption = False) -> None:
    """Remove every blob from the cache, and the API answers kept for `outdated`'s
    conditional requests (as `prune --all`)."""
    del yes  # nothing is asked: accepted as on every command that changes state
    _prune(None, json_output=json_output)


def cache_prune_command(
    *,
    all_blobs: Annotated[bool, typer.Option("--all", help="Remove every blob.")] = False,
    older_than_days: Annotated[
        float, typer.Option("--older-than-days", help="Remove blobs unused this long.")
    ] = 30.0,
    yes: AcceptedYesOption = False,
    json_output: JsonOption = False,
) -> None:
    """Remove the blobs unused for --older-than-days (default 30), and corrupt and
    half-written ones, from the cache, and the API answers kept for `outdated`'s
    conditional requests unused as long; --all (or `cache clean`) removes every blob and
    every answer."""
    del yes  # nothing is asked: accepted as on every command that changes state
    if not older_than_days >= 0:  # NaN too: no age is older than it
        fail(UsageError("--older-than-days must be 0 or more"), json_output=json_output)
    _prune(None if all_blobs else older_than_days * 86400, json_output=json_output)


def register(app: typer.Typer) -> None:
    """Attach the fleet commands to the ``plugin`` sub-app."""
    app.command("lock")(lock_command)
    app.command("sync")(sync_command)
    app.command("push")(push_command)
    app.command("mirror")(mirror_command)

    cache_app = typer.Typer(
        help="The shared download cache ($NEXO_HOME/cache/blobs), as uv's `cache`: dir, "
        "size, clean, prune.\n\n"
        "Exit codes: 0 success; 1 the cache could not be read or pruned; 2 usage error.",
        no_args_is_help=True,
    )
    app.add_typer(cache_app, name="cache")
    cache_app.command("dir")(cache_dir_command)
    cache_app.command("size")(cache_size_command)
    cache_app.command("clean")(cache_clean_command)
    cache_app.command("prune")(cache_prune_command)


def human_size(size: int) -> str:
    """``size`` bytes as uv prints them: ``0B``, ``512B``, ``1.5KiB``, ``2.0MiB``."""
    if size < 1024:
        return f"{size}B"
    value = size / 1024
    for unit in ("KiB", "MiB"):
        if value < 1024:
            return f"{value:.1f}{unit}"
        value /= 1024
    return f"{value:.1f}GiB"


def _prune(max_age: float | None, *, json_output: bool) -> None:
    """Remove the blobs unused for ``max_age`` seconds (every blob for ``None``) and say so."""
    from nexo_pkg.sources.api import BlobCache  # noqa: PLC0415

    cache = BlobCache(nexo_home_from_env())

    def waiting() -> None:
        note(f"waiting for the other nexo commands using {cache.root} (a download, an install)")

    report = guarded(lambda: cache.prune(max_age=max_age, on_wait=waiting), json_output=json_output)
    removed, freed, kept = report.removed, report.freed_bytes, report.kept
    if json_output:
        emit_json({"ok": True, "removed": removed, "freed_bytes": freed, "kept": kept})
    else:
        note(f"Removed {removed} blob(s), {freed} bytes; kept {kept}.")
