"""CLI for ``nexo plugin install``, ``upgrade``, ``list``, ``remove`` and ``verify`` (the work
is in :mod:`nexo_pkg.install`)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from nexo_pkg.cli import DEFERRED, SIGNAL_EXIT, defer_signals
from nexo_pkg.cli.common import (
    answer,
    colour_enabled,
    confirm,
    confirm_or_refuse,
    daemon_reach,
    fail,
    guarded,
    interactive,
    painted,
    policy_path,
    result_line,
)
from nexo_pkg.cli.completion import installed_ids
from nexo_pkg.cli.limits import archive_limits
from nexo_pkg.cli.listing import discovery_states, plugin_roots
from nexo_pkg.cli.options import (
    AllowSignerChangeOption,
    ConfigOption,
    DestOption,
    DryRunOption,
    GitHubApiOption,
    InstalledIdArgument,
    InstallTimeoutOption,
    JobsOption,
    JsonOption,
    MaxDownloadSizeOption,
    MaxEntriesOption,
    MaxEntrySizeOption,
    MaxTotalSizeOption,
    NexoVersionOption,
    PlainHttpOption,
    RegistryConfigOption,
    RequireSignatureOption,
    SkipSignatureOption,
    TargetOption,
    TrustedKeysOption,
    UpgradeTargetOption,
    YesOption,
    named_path,
)
from nexo_pkg.core.credentials import masked, without_credentials
from nexo_pkg.core.errors import EXIT_FAILURE, EXIT_OK, NexoError, UsageError
from nexo_pkg.core.output import OUTPUT, emit_json, say, say_policy_warnings, warn
from nexo_pkg.core.terminal import printable
from nexo_pkg.fleet import api as fleet_api
from nexo_pkg.install import api as install_api

# The install machinery (store, archive inspection, trust policy, httpx) is imported inside
# the commands: `nexo plugin install --help` and `list` should not pay for what they don't run.
if TYPE_CHECKING:
    from nexo_pkg.install.api import (
        InstallCallbacks,
        InstallOptions,
        InstallPlan,
        InstallResult,
        LinkResult,
        Receipt,
        UpgradeResult,
    )
    from nexo_pkg.sources.api import Prefetched

# Where the other commands find them (the helpers live with `list`, which runs without Typer).
_roots = plugin_roots
_discovery_states = discovery_states


def registry_mirrors() -> dict[str, tuple[str, ...]]:
    """The registry mirrors ``NEXO_REGISTRY_MIRRORS`` configures (sources.mirrors)."""
    from nexo_pkg.sources.api import configured  # noqa: PLC0415

    return configured(None)


def _holding(roots: tuple[Path, ...], plugin_id: str) -> list[Path]:
    """The roots holding ``plugin_id``, in order (raises ``not_installed`` naming every root
    when none does, and ``usage`` for a text that can be no plugin's id, as ``enable`` does)."""
    from nexo_pkg.manifest.daemon import check_id  # noqa: PLC0415

    check_id(plugin_id)
    holding = [
        root
        for root in roots
        if install_api.installed_versions(root, plugin_id)
        or install_api.unreadable_installs(root, plugin_id)
    ]
    if holding:
        return holding
    raise not_installed(plugin_id, roots)


def refuse_unreadable(dest: Path, plugin_id: str, doing: str) -> None:
    """``not_installed`` naming the receipt when ``plugin_id`` is in ``dest`` only with a
    receipt nexo-pkg cannot read: no version to ``doing`` from (``"hold it"``; reinstall with
    --force)."""
    unreadable = install_api.unreadable_installs(dest, plugin_id)
    if unreadable and not install_api.installed_versions(dest, plugin_id):
        raise NexoError(
            f"{plugin_id} at {unreadable[0].path} has a {unreadable[0].problem}; to {doing}, "
            f"{install_api.reinstall_command(unreadable[0])}",
            kind="not_installed",
            details={"id": plugin_id, "path": str(unreadable[0].path)},
        )


def not_installed(plugin_id: str, roots: tuple[Path, ...]) -> NexoError:
    """``not_installed`` naming every root, and the installed ids closest to ``plugin_id``
    (``Did you mean 'weather'?``), as a mistyped command name gets."""
    from difflib import get_close_matches  # noqa: PLC0415 - only on this error

    links = [
        link
        for root in roots
        for link in install_api.linked_plugins(root)
        if link.plugin_id == plugin_id
    ]
    if links:
        # `list` shows it: say what it is rather than that nothing is there.
        link = links[0]
        return NexoError(
            f"plugin {plugin_id!r} is a development link ({printable(link.path)} -> "
            f"{printable(link.target)}), not an installed copy: upgrade, rollback, hold and "
            "sbom work on installed copies; "
            f"`{install_api.plugin_command('remove', plugin_id, root=link.path.parent)}` unlinks "
            "it (the checkout stays)",
            kind="not_installed",
            details={"id": plugin_id, "linked_to": str(link.target), "suggestions": []},
        )
    known = {
        item.plugin_id
        for root in roots
        for item in install_api.scan_installed(root)
        if item.plugin_id
    }
    close = get_close_matches(plugin_id, sorted(known))
    hint = f" Did you mean {', '.join(repr(each) for each in close)}?" if close else ""
    where = ", ".join(str(root) for root in roots)
    return NexoError(
        f"plugin {plugin_id!r} is not installed in {where} (see `nexo plugin list`).{hint}",
        kind="not_installed",
        details={"id": plugin_id, "suggestions": close},
    )


def _show_plan(plan: InstallPlan) -> None:
    # render_plan escapes what came from the manifest and the release; this is the screen a
    # person decides on, so it is printed even with --quiet.
    for line in install_api.render_plan(plan):
        sys.stderr.write(without_credentials(line) + "\n")


def _report_install(result: InstallResult, *, json_output: bool, upgraded: bool = False) -> None:
    if json_output:
        emit_json(masked(result.to_json()))
        return
    plan = result.plan
    if result.dry_run:
        _show_plan(plan)
        for warning in result.warnings:
            warn(printable(warning))
        if result.was_already_present:
            label, where = printable(f"{plan.plugin_id} {plan.version}"), printable(result.path)
            say(f"Dry run: {label} is already installed at {where}; nothing to do.")
            return
        say(f"Dry run: every check passed; nothing was written to {printable(plan.destination)}.")
        return
    label, where = printable(f"{plan.plugin_id} {plan.version}"), printable(result.path)
    if result.was_already_present:
        say(f"{label} is already installed at {where}.")
    elif upgraded:
        say(f"Upgraded {printable(plan.plugin_id)} to {printable(plan.version)} at {where}.")
    else:
        say(f"Installed {label} to {where}.")
    if result.kept:
        root = Path(result.path).parent
        rollback = install_api.plugin_command("rollback", plan.plugin_id, root=root)
        for kept in result.kept:
            say(
                f"Kept the version it replaced out of the daemon's sight at {printable(kept)}"
                f" ({_bringing_back(result.plan, rollback)})."
            )
        _report_pruned(result.pruned, result.left, result.unfinished)
    if result.link_warning is not None:
        warn(printable(result.link_warning))
    if result.released_hold is not None and not upgraded:
        # (An upgrade says it once, as the upgrade's: _report_upgrade.)
        _say_released(result.released_hold, "install", plan.version)


def _say_released(held: str, command: str, version: str) -> None:
    """The note that this run ended a hold, as ``sync`` says it in its line."""
    say(f"note: hold at {printable(held)} released (the {command} names {printable(version)})")


def _bringing_back(plan: InstallPlan, rollback: str) -> str:
    """How a version an install kept comes back: by ``rollback``, unless its receipt holds no
    file hashes to check it against (another tool installed it)."""
    if plan.keeping_unchecked:
        return (
            "its receipt has no file hashes, so "
            f"`{printable(rollback)}` cannot check it and will not bring it back"
        )
    return f"`{printable(rollback)}` brings it back"


def _callbacks(*, yes: bool, json_output: bool) -> InstallCallbacks:
    """What ``install`` and ``upgrade`` show and ask: the plan (with ``--quiet`` or ``--json``
    only when it asks, so not with ``--yes`` nor without a terminal), a progress bar on a
    terminal, and notes about slow answers (not with ``--json``)."""

    def ask(plan: InstallPlan) -> bool:
        # The screen a person decides on: shown whenever someone is asked, even with --quiet
        # or --json (it goes to stderr); otherwise not with either.
        asking = not yes and interactive()
        if asking or not (json_output or OUTPUT.quiet):
            _show_plan(plan)
        for warning in plan.warnings:
            warn(printable(warning))
        if plan.fallback_note is not None and (asking or not json_output):
            say(f"note: {printable(plan.fallback_note)}")
        return not asking or confirm("Install this plugin?")

    return install_api.InstallCallbacks(
        confirm=ask,
        notice=None if json_output else say,
        progress=_download_bar if sys.stderr.isatty() and not OUTPUT.quiet else None,
    )


@contextlib.contextmanager
def _download_bar(name: str) -> Iterator[Callable[[int, int | None], None]]:
    """A download's rich progress bar on stderr, gone when the download is."""
    # rich is only paid for when a progress bar is shown.
    from rich.console import Console  # noqa: PLC0415
    from rich.progress import (  # noqa: PLC0415
        BarColumn,
        DownloadColumn,
        Progress,
        TransferSpeedColumn,
    )

    # Painted as every other output is (`--color`, NO_COLOR, CLICOLOR...), not by rich's
    # own reading of the environment, which knows neither the flag nor CLICOLOR.
    console = Console(stderr=True, color_system="auto" if colour_enabled(sys.stderr) else None)
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task(name, total=None)

        def update(done: int, total: int | None) -> None:
            progress.update(task, completed=done, total=total)

        yield update


def _upgrade_one(
    plugin_id: str,
    options: InstallOptions,
    callbacks: InstallCallbacks,
    *,
    allow_downgrade: bool,
    keep_old: bool | None,
    tag: str | None = None,
    known: Any = None,
) -> UpgradeResult:
    """Upgrade one plugin from where it came: its GitHub repository or its registry
    (``known``: what was already read of the newest versions)."""

    # As the reference: a plugin without a receipt it can read has nothing to upgrade from.
    refuse_unreadable(options.dest, plugin_id, "upgrade it")
    current = install_api.require_installed(options.dest, plugin_id)[0]
    assert current.receipt is not None  # noqa: S101 (require_installed only returns receipts)
    hold = install_api.read_hold(options.dest, plugin_id)
    if hold is not None and tag is None:
        # Held (a rollback, or `hold`): nothing is looked up until a version is named.
        version = current.receipt.version
        return install_api.UpgradeResult(
            plugin_id, version, version, current.path, None, False, held=hold.version,
            # A file is not upgraded from: `upgrade ID@TAG` is no way out of its hold.
            held_local=not current.receipt.upgradable,
            held_unknown=not current.receipt.origin_known,
        )  # fmt: skip
    result = install_api.upgrade(
        plugin_id,
        options,
        _announcing(callbacks, plugin_id, current.receipt.version),
        allow_downgrade=allow_downgrade,
        keep_old=keep_old,
        tag=tag,
        known=known,
    )
    from dataclasses import replace  # noqa: PLC0415

    if result.install is not None and result.install.released_hold is not None:
        # The version was named (or the hold came meanwhile): the install step ended the
        # hold under the root's lock, in the step that put the new version in place.
        return replace(result, released_hold=result.install.released_hold)
    if hold is not None and result.install is None:
        # The version named is the one installed: nothing changes, the hold included (as an
        # install that finds the version in place keeps it).
        return replace(result, kept_hold=hold.version)
    return result


def _announcing(callbacks: InstallCallbacks, plugin_id: str, version: str) -> InstallCallbacks:
    """``callbacks`` whose confirmation step first says ``weather 0.1.0 → 0.2.0`` (not with
    ``--json`` or ``--quiet``), before anything is written."""
    from dataclasses import replace  # noqa: PLC0415

    inner = callbacks.confirm
    if callbacks.notice is None:
        return callbacks

    def confirm(plan: InstallPlan) -> bool:
        say(f"{printable(plugin_id)} {printable(version)} \u2192 {printable(plan.version)}")
        return inner is None or inner(plan)

    return replace(callbacks, confirm=confirm)


def _report_upgrade(result: UpgradeResult) -> None:
    if result.held is not None:
        held = install_api.held_message(
            result.plugin_id,
            result.held,
            root=result.old_path.parent,
            local=result.held_local,
            unknown=result.held_unknown,
        )
        say(f"{printable(held)}; nothing was looked up.")
        return
    if result.pinned_tag is not None:
        say(
            f"{printable(result.plugin_id)} {printable(result.from_version)} is pinned to tag "
            f"{printable(result.pinned_tag)} (it was installed from that tag); nothing was "
            "looked up. Pass --tag TAG (or ID@TAG) to move it to another release."
        )
        return
    if result.install is None:
        current = f"{printable(result.plugin_id)} {printable(result.from_version)} is up to date"
        if result.kept_hold is None:
            say(f"{current}.")
            return
        unhold = install_api.plugin_command("unhold", result.plugin_id, root=result.old_path.parent)
        say(
            f"{current}; it stays held at {printable(result.kept_hold)}, as the version named is "
            f"the one installed (`{printable(unhold)}` releases the hold)."
        )
        return
    if result.install.dry_run:
        # What would change, as a real run says it before its screen (`_announcing`).
        change = f"{result.plugin_id} {result.from_version} \u2192 {result.install.plan.version}"
        say(printable(change))
    _report_install(result.install, json_output=False, upgraded=True)
    if result.removed_old:
        say(f"Removed {printable(result.from_version)} ({printable(result.old_path)}).")
    rollback = install_api.plugin_command("rollback", result.plugin_id, root=result.old_path.parent)
    for kept in result.kept:
        say(
            f"Kept {printable(result.from_version)} out of the daemon's sight at "
            f"{printable(kept)} ({_bringing_back(result.install.plan, rollback)})."
        )
    _report_pruned(result.pruned, result.left, result.unfinished)
    if result.released_hold is not None:
        _say_released(result.released_hold, "upgrade", result.install.plan.version)


def _report_pruned(
    pruned: Sequence[Path], left: Sequence[Path], unfinished: Sequence[Path]
) -> None:
    """The versions kept before that this run removed, and where a removal left files: one
    whose files could not all be deleted is never said removed (the warning says where)."""
    for path in pruned:
        if path in unfinished:
            say(
                f"The version kept before it ({printable(path)}) is no longer kept, but its "
                "files could not all be deleted."
            )
        else:
            say(f"Removed the version kept before it ({printable(path)}).")
    for holder in left:
        warn(printable(install_api.left_behind(holder)))


def _confirm_removal(plugin_id: str, yes: bool, shown: list[str]) -> None:
    confirm_or_refuse(
        yes,
        f"Remove {printable(plugin_id)}?",
        no_terminal=f"removing {plugin_id} needs confirmation and no terminal is attached; "
        "pass --yes to remove without asking",
        cancelled="removal cancelled; nothing was changed",
        shown=shown,
    )


def _install_link(
    link: Path, source: str | None, *, dest: Path | None, config: Path | None, json_output: bool
) -> None:
    """``install --link DIR``: see :mod:`nexo_pkg.install.link`."""

    def run() -> LinkResult:
        if source is not None:
            raise UsageError("--link DIR links the checkout DIR: give no SOURCE with it")
        states = _discovery_states(config)
        follow = None if states is None else states.follow_symlinks
        root = _roots(dest, config, installing=True)[0]
        result = install_api.link_install(link, root, follow_symlinks=follow)
        for message in result.warnings:
            warn(printable(message))
        return result

    def show(result: LinkResult) -> None:
        linked = result.linked
        shown = f"Linked {linked.plugin_id} {linked.version}: {linked.path} -> {linked.target}"
        say(printable(shown))

    answer(run, json_output=json_output, show=show)


def notices(json_output: bool) -> InstallCallbacks:
    """The callbacks of a command that only looks things up: its notes about slow answers
    (not with ``--json``), nothing to confirm."""
    return install_api.InstallCallbacks(notice=None if json_output else say)


def _latest_releases(
    roots: tuple[Path, ...], jobs: int | None, options: InstallOptions, *, json_output: bool
) -> Prefetched:
    """``upgrade --all``'s lookups, all at once before the upgrades (``jobs`` at a time, or
    GraphQL with a token; held plugins are not looked up): what was read of the newest
    versions their sources offer."""
    from nexo_pkg.core.threads import checked_jobs  # noqa: PLC0415

    receipts: dict[tuple[Path, str], Receipt] = {}
    for root in roots:
        for item in install_api.scan_installed(root):
            # A held plugin is not looked up at all (its upgrade names no version).
            if item.receipt is not None and install_api.read_hold(root, item.receipt.id) is None:
                receipts.setdefault((root, item.receipt.id), item.receipt)
    return install_api.known_latest_releases(
        list(receipts.values()), options, jobs=checked_jobs(jobs), callbacks=notices(json_output)
    )


def _upgradable_ids(root: Path, skipped: list[dict[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Ids of every installed plugin that has a release to upgrade from, in name order,
    each with where its receipt says it came from. A plugin installed from a local file, one
    whose receipt names no known origin and one whose receipt cannot be read are said to be
    skipped (the last two with how to record where they come from), and added to ``skipped``
    (for ``--json``: ``reason`` ``local``, ``unknown`` or ``unreadable``)."""
    ids: dict[str, Mapping[str, Any]] = {}
    unreadable: list[install_api.Installed] = []
    for item in install_api.scan_installed(root):
        receipt = item.receipt
        if receipt is None:
            if (item.problem or "").startswith(install_api.RECEIPT_UNREADABLE):
                unreadable.append(item)
            continue
        if receipt.id in ids:
            continue
        reason = None if receipt.upgradable else "local"
        if reason is None and not receipt.origin_known:
            reason = "unknown"
        if reason is None:
            ids[receipt.id] = receipt.origin()
            continue
        if item.kept or any(entry["id"] == receipt.id for entry in skipped):
            continue
        if reason == "local":
            say(f"skipped {printable(receipt.id)}: installed from a local file")
        else:
            say(
                printable(
                    f"skipped {receipt.id}: its receipt names no known origin (source "
                    f"{receipt.source!r}); {install_api.reinstall_command(item)}"
                )
            )
        skipped.append(
            {"id": receipt.id, "version": receipt.version, "path": str(item.path), "reason": reason}
        )
    for item in unreadable:
        # Named as `list` names it, by its manifest (the daemon loads it all the same); not
        # when a readable receipt of the same id is upgraded or said to be skipped.
        plugin_id, version = install_api.manifest_identity(item.path)
        if plugin_id is not None and (
            plugin_id in ids or any(entry["id"] == plugin_id for entry in skipped)
        ):
            continue
        named = plugin_id if plugin_id is not None else item.path.name
        say(
            printable(
                f"skipped {named}: {item.path} has a {item.problem}; to upgrade it, "
                f"{install_api.reinstall_command(item)}"
            )
        )
        skipped.append(
            {
                "id": plugin_id,
                "version": version,
                "path": str(item.path),
                "reason": "unreadable",
                "problem": item.problem,
            }
        )
    return ids


def install_command(
    *,
    source: Annotated[
        str | None,
        typer.Argument(
            metavar="SOURCE",
            help="owner/repo[@tag] of a GitHub release, oci://host/repo[:tag|@digest], or "
            "a path to a release .tar.gz (none with --link).",
        ),
    ] = None,
    dest: DestOption = None,
    config: ConfigOption = None,
    target: TargetOption = None,
    trusted_keys: TrustedKeysOption = None,
    require_signature: RequireSignatureOption = False,
    skip_signature_verify: SkipSignatureOption = False,
    github_api_url: GitHubApiOption = None,
    timeout: InstallTimeoutOption = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Replace an existing install, or a development link (install --link) of the id.",
        ),
    ] = False,
    allow_downgrade: Annotated[
        bool,
        typer.Option(
            "--allow-downgrade",
            help="Replace an installed newer version of the plugin with this older one.",
        ),
    ] = False,
    allow_signer_change: AllowSignerChangeOption = False,
    yes: YesOption = False,
    dry_run: DryRunOption = False,
    json_output: JsonOption = False,
    max_download_size: MaxDownloadSizeOption = None,
    max_entries: MaxEntriesOption = None,
    max_total_size: MaxTotalSizeOption = None,
    max_entry_size: MaxEntrySizeOption = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="After installing, run `nexo plugin check` on the installed plugin."
        ),
    ] = False,
    registry_config: RegistryConfigOption = None,
    plain_http: PlainHttpOption = False,
    nexo_version: NexoVersionOption = None,
    link: Annotated[
        Path | None,
        typer.Option(
            "--link",
            metavar="DIR",
            help="Development install: link <dest>/<id> to the plugin checkout DIR "
            "instead of installing a release (listed as linked, refused by verify).",
            parser=named_path("--link", "the plugin checkout", default=False),
        ),
    ] = None,
) -> None:
    """Resolve, download, verify and install a plugin.

    With --link DIR (and no SOURCE), link the plugin checkout DIR into the plugin root
    instead: every edit there is what the daemon runs at its next start, provided its
    discovery follows links (discovery.follow_symlinks: true). Nothing is verified;
    `nexo plugin remove ID` removes the link, never the checkout.

    Another version of the plugin already installed is replaced, as an upgrade replaces
    it: a newer one only with --allow-downgrade, and one whose signature was verified only by
    a version its signer signed (signer_changed otherwise, unless --allow-signer-change).

    An install that puts a version in place ends a hold `rollback` or `hold` put on the
    plugin, with or without a tag: `install owner/repo` installs the latest release, as
    asked, where `upgrade` would leave a held plugin alone. One that finds that version
    already installed keeps the hold.

    Exit codes: 0 installed (or already present, or --dry-run passed); 1 refused, or
    installed but --check failed; 2 usage or configuration error.
    """

    if link is not None:
        _install_link(link, source, dest=dest, config=config, json_output=json_output)
        return
    if source is None:
        fail(UsageError("missing argument SOURCE (or --link DIR)"), json_output=json_output)
    source_text = source

    def run() -> InstallResult:
        from nexo_pkg.manifest.daemon_config import nexo_home_from_env  # noqa: PLC0415

        options = install_api.InstallOptions(
            dest=_roots(dest, config, installing=True)[0],
            nexo_home=nexo_home_from_env(),
            policy_path=policy_path(config, trusted_keys),
            # Whether the daemon's discovery would find what is installed (a warning if not).
            reach=daemon_reach(config),
            target=target,
            trusted_keys=trusted_keys,
            require_signature=require_signature,
            skip_signature_verify=skip_signature_verify,
            github_api_url=github_api_url,
            http_timeout=timeout,
            force=force,
            allow_downgrade=allow_downgrade,
            allow_signer_change=allow_signer_change,
            dry_run=dry_run,
            limits=archive_limits(
                max_download=max_download_size,
                max_entries=max_entries,
                max_total=max_total_size,
                max_entry=max_entry_size,
            ),
            daemon=install_api.daemon_version(nexo_version),
            registry_config=registry_config,
            plain_http=plain_http,
            registry_mirrors=registry_mirrors(),
        )
        # The operator named what to install: a hold on that plugin is over once the new
        # tree is in place (ended under the root's lock, in the same step). An install that
        # found it in place changed nothing, the hold included (as a sync that leaves a
        # plugin as it is).
        from dataclasses import replace  # noqa: PLC0415

        # Once the new tree goes into place a signal waits for the result to be printed:
        # the plugin is installed, and the command says so before it says it was stopped.
        callbacks = replace(_callbacks(yes=yes, json_output=json_output), committing=deferring)
        return install_api.install(source_text, options, callbacks)

    handlers: dict[int, Any] = {}

    def deferring() -> None:
        import signal  # noqa: PLC0415

        with contextlib.suppress(ValueError):  # not the main thread: not ours to handle
            handlers.update({signum: signal.getsignal(signum) for signum in SIGNAL_EXIT})
        defer_signals()

    result = guarded(run, json_output=json_output)
    if not check or result.dry_run or DEFERRED:
        _report_install(result, json_output=json_output)
        return
    # The check after the install stops on Ctrl-C as any other step does.
    import signal  # noqa: PLC0415

    for signum, handler in handlers.items():
        signal.signal(signum, handler)
    if not json_output:
        _report_install(result, json_output=False)
    from nexo_pkg.cli.check import check_after  # noqa: PLC0415

    document = result.to_json()
    failure = "the installed plugin failed its checks"
    passed = check_after(Path(result.path), document, failure, json_output=json_output)
    if json_output:
        emit_json(masked(document))
    if not passed:
        # The plugin stays installed (the install itself succeeded); say so and how to undo.
        plugin = printable(result.plan.plugin_id)
        remove = install_api.plugin_command(
            "remove", result.plan.plugin_id, root=Path(result.path).parent
        )
        sys.stderr.write(
            without_credentials(
                f"error: {plugin} failed the handshake checks; it is installed at "
                f"{printable(result.path)} (remove it with `{printable(remove)}`) "
                "[check_failed]\n"
            )
        )
        raise typer.Exit(1)


def upgrade_command(
    *,
    plugin_id: Annotated[
        str | None,
        typer.Argument(
            metavar="[ID]",
            help="Id of an installed plugin (or pass --all).",
            autocompletion=installed_ids,
        ),
    ] = None,
    upgrade_all: Annotated[
        bool, typer.Option("--all", help="Upgrade every plugin installed from a release.")
    ] = False,
    dest: DestOption = None,
    config: ConfigOption = None,
    target: UpgradeTargetOption = None,
    trusted_keys: TrustedKeysOption = None,
    require_signature: RequireSignatureOption = False,
    skip_signature_verify: SkipSignatureOption = False,
    github_api_url: GitHubApiOption = None,
    timeout: InstallTimeoutOption = None,
    allow_downgrade: Annotated[
        bool,
        typer.Option("--allow-downgrade", help="Install the latest release even if it is older."),
    ] = False,
    keep_old: Annotated[
        bool | None,
        typer.Option(
            "--keep-old/--no-keep-old",
            help="By default the version replaced is kept out of the daemon's sight "
            "(under .nexo/kept) for `nexo plugin rollback`, one per plugin: a version "
            "kept by an earlier upgrade is removed. --keep-old keeps every version "
            "replaced; --no-keep-old deletes it.",
            show_default=False,
        ),
    ] = None,
    tag: Annotated[
        str | None,
        typer.Option(
            "--tag",
            help="Move to this release (also written ID@TAG); a plugin installed from an "
            "explicit tag stays on it without one.",
        ),
    ] = None,
    allow_signer_change: AllowSignerChangeOption = False,
    nexo_version: NexoVersionOption = None,
    yes: YesOption = False,
    dry_run: DryRunOption = False,
    json_output: JsonOption = False,
    registry_config: RegistryConfigOption = None,
    plain_http: PlainHttpOption = False,
    jobs: JobsOption = None,
    max_download_size: MaxDownloadSizeOption = None,
    max_entries: MaxEntriesOption = None,
    max_total_size: MaxTotalSizeOption = None,
    max_entry_size: MaxEntrySizeOption = None,
) -> None:
    """Install the newest release of an installed plugin, or of every one with --all.

    Follows the receipt as the reference installer does: the same owner/repo and target;
    a plugin installed from an explicit tag stays on it (a no-op saying so) unless --tag
    or ID@TAG names the release to move to, one installed as latest follows the newest
    release. Every search path of the daemon is looked in. The same version is a no-op;
    an older one is refused (downgrade_refused) unless --allow-downgrade. The old version
    leaves the plugin directory only after the new one is in place, and is kept out of
    the daemon's sight for `nexo plugin rollback` (one previous version per plugin;
    --keep-old keeps them all, --no-keep-old keeps none).
    A held plugin (`rollback`, `hold`) is left alone unless --tag or ID@TAG names a
    release: another version ends the hold (a note says so), the version installed
    keeps it (and says so), as an install that finds that version in place does.
    With --all, plugins installed from a local file, and those whose receipt names no
    known origin or cannot be read, are skipped (one line each), each plugin is upgraded
    on its own (one after another) and a failure does not stop the others; their sources
    are looked up first, --jobs at a time (with a GitHub token, many to one GraphQL
    request), and once GitHub says its rate limit is spent nothing more is asked of it
    and one line says when it resets. A version signed by another identity than the
    installed one, or unsigned after a signed one, is refused (signer_changed) under
    `require` and `warn` alike, unless --allow-signer-change (mode `ignore`, from the policy
    or --skip-signature-verify, reads no signature and so checks none).
    Exit codes: 0 upgraded or already newest; 1 refused (any plugin, with --all);
    2 usage or configuration error.
    """

    def options() -> tuple[InstallOptions, tuple[Path, ...], str | None, str | None]:
        """The choices, the roots, and the plugin id and tag named (``None`` for --all)."""
        from nexo_pkg.core.threads import checked_jobs  # noqa: PLC0415
        from nexo_pkg.manifest.daemon_config import nexo_home_from_env  # noqa: PLC0415

        if (plugin_id is None) == (not upgrade_all):
            raise UsageError("name one installed plugin ID, or pass --all (not both)")
        named, at_tag = plugin_id, tag
        # A URL (`https://USER:TOKEN@host/…`) is no ID@TAG: it is refused whole, as not an id.
        if plugin_id is not None and "@" in plugin_id and "://" not in plugin_id:
            named, _, at_tag = plugin_id.partition("@")
            if not named or not at_tag or (tag is not None and tag != at_tag):
                raise UsageError(f"{plugin_id!r}: write ID@TAG, or ID with --tag TAG")
        if upgrade_all and tag is not None:
            raise UsageError("--tag names the release of one plugin; it cannot go with --all")
        checked_jobs(jobs)
        roots = _roots(dest, config)
        chosen = install_api.InstallOptions(
            dest=roots[0] if named is None else _holding(roots, named)[0],
            nexo_home=nexo_home_from_env(),
            policy_path=policy_path(config, trusted_keys),
            target=target,
            trusted_keys=trusted_keys,
            require_signature=require_signature,
            skip_signature_verify=skip_signature_verify,
            github_api_url=github_api_url,
            http_timeout=timeout,
            dry_run=dry_run,
            allow_signer_change=allow_signer_change,
            limits=archive_limits(
                max_download=max_download_size,
                max_entries=max_entries,
                max_total=max_total_size,
                max_entry=max_entry_size,
            ),
            daemon=install_api.daemon_version(nexo_version),
            registry_config=registry_config,
            plain_http=plain_http,
            registry_mirrors=registry_mirrors(),
        )
        # Before anything is looked up: also when there turns out to be nothing to do.
        install_api.check_options(chosen)
        return chosen, roots, named, at_tag

    chosen, roots, named, at_tag = guarded(options, json_output=json_output)
    from dataclasses import replace  # noqa: PLC0415

    callbacks = _callbacks(yes=yes, json_output=json_output)
    if named is not None:
        # As install: once the new version goes into place, a signal waits for the result.
        committing = replace(callbacks, committing=defer_signals)
        answer(
            lambda: _upgrade_one(
                named,
                chosen,
                committing,
                tag=at_tag,
                allow_downgrade=allow_downgrade,
                keep_old=keep_old,
            ),
            json_output=json_output,
            show=_report_upgrade,
        )
        return

    skipped: list[dict[str, Any]] = []
    ids = guarded(
        lambda: [
            (root, *each) for root in roots for each in _upgradable_ids(root, skipped).items()
        ],
        json_output=json_output,
    )
    known = guarded(
        lambda: _latest_releases(roots, jobs, chosen, json_output=json_output),
        json_output=json_output,
    )
    documents: list[dict[str, Any]] = []
    failed: list[NexoError] = []
    for root, each, origin in ids:
        try:
            outcome = _upgrade_one(
                each,
                replace(chosen, dest=root),
                callbacks,
                allow_downgrade=allow_downgrade,
                keep_old=keep_old,
                known=known,
            )
        except NexoError as error:
            failed.append(error)
            documents.append({"id": each, **error.to_json()})
            if error.kind == "rate_limited":
                # The service's answer: the upgrades left that would ask it fail with it,
                # asking nothing more.
                known.stop(origin, error)
            else:
                say_policy_warnings(error)  # as for one plugin
                # As `sync` says a plugin it failed on: the id, the message, the kind.
                sys.stderr.write(
                    f"error: {printable(each)}: {printable(error.message)} [{error.kind}]\n"
                )
            continue
        documents.append(outcome.to_json())
        if not json_output:
            _report_upgrade(outcome)
    # A spent rate limit is one line, with when it resets, not one failure per plugin.
    stopped = [error for error in failed if error.kind == "rate_limited"]
    if stopped:
        sys.stderr.write(
            f"error: {printable(stopped[0].message)} "
            f"({len(stopped)} plugin(s) not upgraded) [rate_limited]\n"
        )
    if json_output:
        emit_json(masked({"ok": not failed, "plugins": documents, "skipped": skipped}))
    elif not ids:
        say(f"No plugins to upgrade in {printable(chosen.dest)}.")
    raise typer.Exit(EXIT_FAILURE if failed else EXIT_OK)


def list_command(
    *,
    dest: DestOption = None,
    config: ConfigOption = None,
    include_orphan: Annotated[
        bool, typer.Option("--include-orphan", help="Also show directories without a receipt.")
    ] = False,
    json_output: JsonOption = False,
) -> None:
    """List installed plugins: one line per plugin on stdout (id, version, origin,
    signature, state, path), so `nexo plugin list | wc -l` counts them; on a terminal a
    header names the columns.

    The signature column is what install verified (verified, unsigned, skipped...); the
    state column is what the daemon does with the plugin (enabled, disabled,
    not-allowlisted; kept for a version upgrade set aside for rollback; held for a plugin
    `upgrade` leaves alone until a version is named or `nexo plugin unhold` releases it;
    linked for a development link).
    """
    from nexo_pkg.cli.listing import list_plugins  # noqa: PLC0415

    list_plugins(dest, config, include_orphan=include_orphan, json_output=json_output)


def _removal_left(root: Path) -> bool:
    """Whether an interrupted removal left a tree under ``root``'s ``.nexo/removing``."""
    area = root / install_api.BOOKKEEPING_DIR / install_api.REMOVING_AREA
    try:
        return area.is_dir() and not area.is_symlink() and any(area.iterdir())
    except OSError:
        return False


def remove_command(
    *,
    plugin_id: InstalledIdArgument,
    dest: DestOption = None,
    config: ConfigOption = None,
    yes: YesOption = False,
    json_output: JsonOption = False,
) -> None:
    """Remove an installed plugin (every installed version of it).

    Asks for confirmation on a terminal; without one (a script, CI) it refuses unless
    --yes is given. Exit codes: 0 removed; 1 not installed, cancelled, or removed from the
    daemon's sight with files that could not be deleted (io, naming where they are left);
    2 usage error (no terminal and no --yes).
    """

    def run() -> list[str]:
        roots = _roots(dest, config)
        kept: list[Any] = []
        try:
            holding = _holding(roots, plugin_id)
        except NexoError as missing:
            if missing.kind != "not_installed":
                raise
            # A development link: the link goes, the checkout it points to stays.
            for root in roots:
                link = next(
                    (one for one in install_api.linked_plugins(root) if one.plugin_id == plugin_id),
                    None,
                )
                if link is not None:
                    where = printable(link.path)
                    _confirm_removal(
                        plugin_id,
                        yes,
                        [f"Will remove the link {where} (the checkout it points to stays)"],
                    )
                    removed = install_api.unlink(root, plugin_id)
                    return [str(removed)] if removed is not None else []
            # Only versions kept for rollback are left (`list` shows them): they go.
            kept = [
                item
                for root in roots
                for item in install_api.scan_kept(root)
                if item.plugin_id == plugin_id
            ]
            if not kept:
                # A removal killed once its trees left the daemon's sight: the files it had
                # not deleted yet go now, as the docs promise of the next remove. Never
                # waited for: a run that holds the lock swept them when it took it, and what
                # is there now is its own removal under way.
                for root in roots:
                    if _removal_left(root):
                        with (
                            contextlib.suppress(NexoError),
                            install_api.locked_root(root, timeout=0),
                        ):
                            pass
                raise
            holding = [
                root for root in roots if any(item.path.is_relative_to(root) for item in kept)
            ]
        matches = [
            *(item for root in holding for item in install_api.installed_versions(root, plugin_id)),
            *(
                item
                for root in holding
                for item in install_api.unreadable_installs(root, plugin_id)
            ),
            *kept,
        ]
        _confirm_removal(
            plugin_id, yes, [f"Will remove {printable(item.path)}" for item in matches]
        )
        left: list[Path] = []
        gone = [
            str(item.path) for root in holding for item in install_api.remove(plugin_id, root, left)
        ]
        for root in holding:
            install_api.release_hold(root, plugin_id)  # nothing left to hold
        if left:
            # Out of the daemon's sight, but not deleted: say so rather than "Removed".
            where = ", ".join(printable(path) for path in left)
            raise NexoError(
                f"{plugin_id} is no longer installed, but its files could not all be deleted:"
                f" {where} left ({install_api.CLEANED_BY})",
                kind="io",
                details={"id": plugin_id, "removed": gone, "left": [str(path) for path in left]},
            )
        return gone

    removed = guarded(run, json_output=json_output)
    if json_output:
        emit_json(masked({"ok": True, "id": plugin_id, "removed": removed}))
    else:
        for path in removed:
            say(f"Removed {printable(path)}.")


def verify_command(
    *,
    plugin_id: Annotated[
        str | None,
        typer.Argument(
            metavar="[ID]",
            help="Id to verify (default: every installed plugin).",
            autocompletion=installed_ids,
        ),
    ] = None,
    dest: DestOption = None,
    config: ConfigOption = None,
    lock_file: Annotated[
        Path | None,
        typer.Option(
            "--lock",
            help="Check the root against this lock's tree hashes instead (offline).",
            metavar="<path>",
            parser=named_path("--lock", "the lock file"),
        ),
    ] = None,
    json_output: JsonOption = False,
) -> None:
    """Re-hash installed files against their install receipts (exit 1 on any change).

    With --lock nexo-plugins.lock, every plugin the lock names (with ID, that one, which
    the lock must name) must be installed at the locked version with a tree that hashes
    to the lock's `tree` (paths, modes and contents), whatever the receipts say.

    The report goes to stdout: one line per plugin (ok or CHANGED), then what changed.
    Every directory the daemon could load is checked: one without a readable receipt, or
    a link where a plugin directory belongs, is a failure naming it.
    """
    from nexo_pkg.core.threads import DEFAULT_JOBS, run_bounded  # noqa: PLC0415

    def run() -> tuple[Path, list[Any]]:
        roots = _roots(dest, config)
        if lock_file is not None:
            return roots[0], fleet_api.check_root(lock_file, roots[0], plugin_id)
        items = install_api.scan_roots(roots, kept=False)
        if any(install_api.is_removal_leftover(item.path.name) for item in items):
            # A tree a `remove` left that the daemon skips is no install (one it loads is).
            links = tuple(link for root in roots for link in install_api.linked_plugins(root))
            skipped = install_api.skipped_removal_leftovers(items, links)
            items = [item for item in items if item.path not in skipped]
        if plugin_id is not None:
            named = [item for item in items if item.plugin_id == plugin_id]
            broken = [
                item
                for item in items
                if item.receipt is None
                and (item.path.name == plugin_id or item.path.name.startswith(f"{plugin_id}-"))
            ]
            if not named and not broken:
                _holding(roots, plugin_id)  # raises not_installed, naming every root
            items = named + broken
        # Plugins hashed a few at a time (hashlib and file reads release the GIL); the
        # reports in the order of the scan.
        return roots[0], run_bounded(install_api.verify_installed, items, jobs=DEFAULT_JOBS)

    root, reports = guarded(run, json_output=json_output)
    ok = all(report.ok for report in reports)
    ok_mark, changed_mark = painted("ok      ", "green"), painted("CHANGED ", "red")
    if json_output:
        lock = {"lock": str(lock_file), "dest": str(root)} if lock_file is not None else {}
        emit_json(masked({"ok": ok, **lock, "plugins": [report.to_json() for report in reports]}))
    elif lock_file is not None:
        for check in reports:
            label = f"{check.plugin_id} {check.version}"
            if check.ok:
                result_line(f"{ok_mark} {printable(f'{label} ({check.expected})')}")
                continue
            result_line(f"{changed_mark} {printable(f'{label} ({check.path or root})')}")
            tree = f"tree {check.actual}, the lock says {check.expected}"
            result_line(printable(f"  {check.problem or tree}"))
            for key, names in check.changes.items():
                for name in names:
                    result_line(printable(f"  {key.replace('_', ' ')}: {name}"))
    else:
        if not reports:
            say(f"No plugins installed in {printable(root)}.")
        elif not install_api.MODES_ON_DISK:
            say("note: file modes are not compared: Windows keeps no permission bits")
        for report in reports:
            receipt = report.item.receipt
            label = f"{receipt.id} {receipt.version}" if receipt else str(report.item.path)
            if report.ok:
                result_line(f"{ok_mark} {printable(label)}")
                continue
            # A directory without a readable receipt is named by its path, once.
            where = f"{label} ({report.item.path})" if receipt else label
            result_line(f"{changed_mark} {printable(where)}")
            kinds = ("modified: ", "missing:  ", "extra:    ", "mode:     ")
            changes = (report.modified, report.missing, report.extra, report.mode_changed)
            for kind, names in zip(kinds, changes, strict=True):
                for name in names:
                    # `.` is the plugin directory itself (its own mode).
                    shown = ". (the plugin directory)" if name == "." else name
                    result_line(printable(f"  {kind}{shown}"))
            if report.problem:
                result_line(printable(f"  {report.problem}"))
    raise typer.Exit(0 if ok else 1)


def register(app: typer.Typer) -> None:
    """Attach this module's commands to the `plugin` sub-app."""
    app.command("install")(install_command)
    app.command("upgrade")(upgrade_command)
    app.command("list")(list_command)
    app.command("remove")(remove_command)
    app.command("verify")(verify_command)
