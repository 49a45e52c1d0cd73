"""CLI for fleets: ``lock``, ``sync``, ``push``, ``mirror`` and ``cache dir|size|clean|prune``
(the work is in :mod:`nexo_pkg.fleet`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from nexo_pkg.cli.common import answer, fail, guarded, policy_path, result_line
from nexo_pkg.cli.options import (
    AllowSignerChangeOption,
    ConfigOption,
    DestOption,
    GitHubApiOption,
    JsonOption,
    NexoVersionOption,
    PlainHttpOption,
    RegistryConfigOption,
    RegistryReferenceArgument,
    RequireSignatureOption,
    SkipSignatureOption,
    TargetOption,
    TimeoutOption,
    TrustedKeysOption,
    YesOption,
)
from nexo_pkg.core.errors import UsageError
from nexo_pkg.core.output import emit_json, say, warn
from nexo_pkg.core.terminal import printable
from nexo_pkg.fleet import api as fleet_api
from nexo_pkg.install import api as install_api
from nexo_pkg.manifest.daemon_config import nexo_home_from_env

if TYPE_CHECKING:
    from nexo_pkg.fleet.api import FleetOptions, LockResult, PluginOutcome, SyncResult
    from nexo_pkg.install.api import InstallCallbacks

JobsOption = Annotated[
    int | None,
    typer.Option(
        "--jobs", "-j", help="Plugins handled at a time (default 8; 1: one after another)."
    ),
]
WantedOption = Annotated[
    Path, typer.Option("--file", "-f", help="The wanted set (default ./nexo-plugins.toml).")
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
        "--lock", help="The lock file (default: nexo-plugins.lock beside the wanted set)."
    ),
]


def note(message: str) -> None:
    """A line for the terminal (stderr). Fleet messages carry what registries, GitHub and
    lock files say (error bodies, annotations, versions, references): escaped, one line."""
    say(printable(message))


def fleet_options(
    *,
    config: Path | None = None,
    trusted_keys: Path | None = None,
    require_signature: bool = False,
    skip_signature_verify: bool = False,
    github_api_url: str | None = None,
    registry_config: Path | None = None,
    plain_http: bool = False,
    timeout: float | None = None,
    jobs: int | None = None,
    registry_mirrors: dict[str, tuple[str, ...]] | None = None,
    allow_signer_change: bool = False,
    nexo_version: str | None = None,
    reads_policy: bool = True,
) -> FleetOptions:
    """What the user chose with a fleet command's flags: install's choices (home, policy,
    signature flags, network) and ``--jobs``. ``reads_policy`` false (``push``, ``mirror``,
    which verify nothing): the daemon's configuration directory is not looked for, nor
    named."""
    from nexo_pkg.core.threads import checked_jobs  # noqa: PLC0415
    from nexo_pkg.net.api import checked_timeout  # noqa: PLC0415

    if require_signature and skip_signature_verify:
        raise UsageError("--require-signature and --skip-signature-verify exclude each other")
    home = nexo_home_from_env()
    choices = install_api.InstallOptions(
        # Where `sync` installs is the root it is given; this is the daemon's default.
        dest=home / "state" / "plugins",
        nexo_home=home,
        trusted_keys=trusted_keys,
        policy_path=policy_path(config, trusted_keys) if reads_policy else None,
        require_signature=require_signature,
        skip_signature_verify=skip_signature_verify,
        github_api_url=github_api_url,
        registry_config=registry_config,
        plain_http=plain_http,
        http_timeout=None if timeout is None else checked_timeout(timeout),
        registry_mirrors=registry_mirrors or {},
        allow_signer_change=allow_signer_change,
        daemon=install_api.daemon_version(nexo_version),
    )
    return fleet_api.FleetOptions(choices, jobs=checked_jobs(jobs))


def fleet_callbacks(json_output: bool) -> InstallCallbacks:
    """Slow answers are noted on stderr, unless the output is ``--json``."""

    return install_api.InstallCallbacks(notice=None if json_output else say)


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
    yes: YesOption = False,
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
    if check:
        result = guarded(lambda: fleet_api.check(wanted, path), json_output=json_output)
        if json_output:
            emit_json(result.to_json())
        for reason in result.stale:
            note(f"stale: {reason}")
        if result.stale:
            note(f"error: {path} is stale; run `nexo plugin lock`")
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

    locked = answer(
        lambda: fleet_api.lock(
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
            ),
            callbacks=fleet_callbacks(json_output),
            upgrade=upgrade_ids,
        ),
        json_output=json_output,
        show=show,
    )
    for message in locked.warnings:
        warn(printable(message))  # as install warns: with --quiet and --json too


def sync_command(
    *,
    lock_file: Annotated[
        Path, typer.Option("--lock", help="The lock file (default ./nexo-plugins.lock).")
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
    yes: YesOption = False,
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
    said to be stale). Without --frozen a nexo-plugins.toml beside the lock is locked
    first when the lock is stale; a version that locking brings in must keep the
    installed version's signer (signer_changed, unless --allow-signer-change), as for
    upgrade. Exit codes: 0 in sync (or planned); 1 a plugin failed (the others are
    synced); 2 usage or configuration error.
    """
    del yes  # nothing is asked: accepted as on every command that changes state

    def run() -> SyncResult:
        from nexo_pkg.sources.api import configured  # noqa: PLC0415

        root = (
            install_api.install_root(dest)
            if dest is not None
            else install_api.install_root(None, install_api.config_dir(config))
        )
        wanted_path = lock_file.parent / fleet_api.WANTED_NAME
        if dry_run:
            return fleet_api.dry_run_plan(
                lock_file, root, wanted_path=wanted_path, prune=prune, target=target
            )
        mirrors = configured(
            registry_mirror,
            fleet_api.read_registries(wanted_path) if wanted_path.exists() else None,
        )
        result = fleet_api.sync(
            lock_file,
            root,
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
                registry_mirrors=mirrors,
                allow_signer_change=allow_signer_change,
                nexo_version=nexo_version,
            ),
            callbacks=fleet_callbacks(json_output),
            wanted_path=wanted_path,
            frozen=frozen,
            prune=prune,
            target=target,
            progress=None if json_output or not sys.stderr.isatty() else note,
        )
        return _warned(result)

    def show(result: SyncResult) -> None:
        if result.dry_run:
            _show_plan(result)
            return
        if result.relocked:
            note(f"Locked {lock_file} again: {fleet_api.WANTED_NAME} had changed.")
        for item in result.outcomes:
            if item.action == "failed":
                note(f"error: {item.plugin_id}: {item.error} [{item.kind}]")
            elif item.action != "unchanged":
                note(_outcome_line(item))
        changed = sum(item.action not in {"unchanged", "failed"} for item in result.outcomes)
        downgraded = [
            f"{item.plugin_id} {item.from_version} \u2192 {item.version}"
            for item in result.outcomes
            if item.change == "downgrade" and item.action != "failed"
        ]
        as_locked = f"; downgraded as locked: {', '.join(downgraded)}" if downgraded else ""
        note(
            f"{result.dest}: {changed} change(s), {len(result.outcomes)} plugin(s) "
            f"checked{as_locked}."
        )

    if not answer(run, json_output=json_output, show=show).ok:
        raise typer.Exit(1)


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
    yes: YesOption = False,
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
    yes: YesOption = False,
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
    from nexo_pkg.sources.api import copies_as_is  # noqa: PLC0415

    callbacks = fleet_callbacks(json_output)

    def options() -> FleetOptions:
        return fleet_options(
            github_api_url=github_api_url,
            registry_config=registry_config,
            plain_http=plain_http,
            timeout=timeout,
            reads_policy=False,
        )

    if copies_as_is(release):
        answer(
            lambda: fleet_api.mirror_registry(release, destination, options(), callbacks),
            json_output=json_output,
            show=lambda copied: note(
                f"Mirrored {copied.source} to {copied.reference} ({copied.digest}): "
                f"{copied.blobs} blob(s), {copied.manifests} manifest(s), "
                f"{copied.tags_written} tag(s) copied."
            ),
        )
        return

    answer(
        lambda: fleet_api.mirror(release, destination, options(), callbacks),
        json_output=json_output,
        show=lambda mirrored: note(
            f"Mirrored {release} to {mirrored.reference} ({mirrored.digest})."
        ),
    )


def cache_dir_command() -> None:
    """Print the cache directory (it may not exist yet)."""
    from nexo_pkg.sources.api import BlobCache  # noqa: PLC0415

    result_line(str(BlobCache(nexo_home_from_env()).root))


def cache_size_command(
    *,
    human: Annotated[
        bool, typer.Option("--human", "-H", help="Print 1.5MiB instead of bytes.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """Print the size of the cache in bytes (0 when it does not exist)."""
    from nexo_pkg.sources.api import BlobCache  # noqa: PLC0415

    cache = BlobCache(nexo_home_from_env())
    count, size = guarded(cache.usage, json_output=json_output)
    if json_output:
        emit_json({"ok": True, "path": str(cache.root), "blobs": count, "bytes": size})
    else:
        result_line(human_size(size) if human else str(size))


def cache_clean_command(*, yes: YesOption = False, json_output: JsonOption = False) -> None:
    """Remove every blob from the cache (as `prune --all`)."""
    del yes  # nothing is asked: accepted as on every command that changes state
    _prune(None, json_output=json_output)


def cache_prune_command(
    *,
    all_blobs: Annotated[bool, typer.Option("--all", help="Remove every blob.")] = False,
    older_than_days: Annotated[
        float, typer.Option("--older-than-days", help="Remove blobs unused this long.")
    ] = 30.0,
    yes: YesOption = False,
    json_output: JsonOption = False,
) -> None:
    """Remove the blobs unused for --older-than-days (default 30), and corrupt and
    half-written ones, from the cache; --all (or `cache clean`) removes every blob."""
    del yes  # nothing is asked: accepted as on every command that changes state
    if older_than_days < 0:
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
        "Exit codes: 0 success; 1 the cache could not be read or pruned; 2 usage error."
    )
    app.add_typer(cache_app, name="cache")
    cache_app.command("dir")(cache_dir_command)
    cache_app.command("size")(cache_size_command)
    cache_app.command("clean")(cache_clean_command)
    cache_app.command("prune")(cache_prune_command)


def _warned(result: SyncResult) -> SyncResult:
    """Say what install would warn about each plugin sync installed (an unsigned artifact, a
    capability the daemon would not wire), as install does: with --quiet and --json too."""
    for item in result.outcomes:
        for message in item.warnings:
            # A trust warning names its asset (`WARNING: echo-1.0.0-….tar.gz is NOT SIGNED`).
            named = message if message.startswith("WARNING") else f"{item.plugin_id}: {message}"
            warn(printable(named))
    return result


_PLAN_WORDS = {
    "install": "install",
    "upgrade": "upgrade",
    "downgrade": "downgrade (as locked)",
    "reinstall": "reinstall (other bytes, same version)",
    "remove": "remove (--prune: not in the lock)",
    "unchanged": "unchanged",
}


def _show_plan(result: SyncResult) -> None:
    """``sync --dry-run``: one line per plugin on stdout (the command's result), then what
    would change on stderr."""
    for reason in result.stale:
        note(f"stale: {reason} (sync would lock first; the plan below is the lock as it stands)")
    for step in result.plan:
        if step.change in {"upgrade", "downgrade"}:
            versions = f"{step.from_version} \u2192 {step.version}"
        else:
            versions = step.version or step.from_version or ""
        result_line(printable(f"{step.plugin_id:<24} {versions:<24} {_PLAN_WORDS[step.change]}"))
    changes = sum(step.change != "unchanged" for step in result.plan)
    note(f"Dry run: {changes} change(s) planned in {result.dest}; nothing was changed.")


def _outcome_line(item: PluginOutcome) -> str:
    """What sync did to one plugin: ``weather 0.2.0 → 0.1.0: downgraded (as locked)``."""
    words = {
        "upgrade": "upgraded",
        "downgrade": "downgraded (as locked)",
        "reinstall": "reinstalled",
        "install": "installed",
        "remove": "removed",
    }
    if item.change in {"upgrade", "downgrade"}:
        line = f"{item.plugin_id} {item.from_version} \u2192 {item.version}: {words[item.change]}"
    else:
        shown = item.version or item.from_version or ""
        line = f"{item.plugin_id} {shown}: {words.get(item.change or '', item.action)}"
    for kept in item.kept:
        line += f"; {item.from_version or 'the old version'} kept for rollback at {kept}"
    return line


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

    report = guarded(
        lambda: BlobCache(nexo_home_from_env()).prune(max_age=max_age), json_output=json_output
    )
    removed, freed, kept = report.removed, report.freed_bytes, report.kept
    if json_output:
        emit_json({"ok": True, "removed": removed, "freed_bytes": freed, "kept": kept})
    else:
        note(f"Removed {removed} blob(s), {freed} bytes; kept {kept}.")
