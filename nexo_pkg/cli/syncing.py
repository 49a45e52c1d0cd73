"""``nexo plugin sync``'s run, shared by its Typer command (:mod:`nexo_pkg.cli.fleet`) and by
:func:`fast_sync`, with the options every fleet command turns into
:class:`~nexo_pkg.fleet.api.FleetOptions`.

:func:`fast_sync` is a small argument parser that :func:`nexo_pkg.cli.main.main` uses for
``plugin sync``, so a sync does not pay for importing Typer before its first request (as
``plugin list``'s :func:`~nexo_pkg.cli.listing.fast_list`): nothing here imports it. Anything it
does not understand (``--help``, a typo, an argument, an option given twice, an empty or odd
value, shell completion) falls through to Typer, which gives the usual help and usage errors.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nexo_pkg.cli import defer_signals
from nexo_pkg.cli.common import (
    answer,
    daemon_reach,
    plain_options,
    policy_path,
    result_line,
    say_each_failure,
)
from nexo_pkg.cli.limits import archive_limits, entries_value, parse_size
from nexo_pkg.core.errors import NexoError, UsageError
from nexo_pkg.core.leaving import silence_left_readers
from nexo_pkg.core.output import say, say_once
from nexo_pkg.core.terminal import printable
from nexo_pkg.fleet import api as fleet_api
from nexo_pkg.install import api as install_api
from nexo_pkg.manifest.daemon_config import nexo_home_from_env

if TYPE_CHECKING:
    from nexo_pkg.fleet.api import FleetOptions, PlanStep, PluginOutcome, SyncResult
    from nexo_pkg.install.api import InstallCallbacks
    from nexo_pkg.sources.api import ArchiveLimits


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
    limits: ArchiveLimits | None = None,
) -> FleetOptions:
    """What the user chose with a fleet command's flags: install's choices (home, policy,
    signature flags, network) and ``--jobs``. ``reads_policy`` false (``push``, ``mirror``,
    which verify nothing): the daemon's configuration directory is not looked for, nor
    named. ``limits``: the archive limits (default: SPEC §5's)."""
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
        limits=archive_limits() if limits is None else limits,
        daemon=install_api.daemon_version(nexo_version),
        # What sync installs outside the daemon's discovery is said, as install says it.
        reach=daemon_reach(config) if reads_policy else None,
    )
    return fleet_api.FleetOptions(choices, jobs=checked_jobs(jobs))


def fleet_callbacks(json_output: bool) -> InstallCallbacks:
    """Slow answers are noted on stderr, unless the output is ``--json``; a reader of stderr
    that left stops the notes, not the run (they come from its worker threads)."""

    return install_api.InstallCallbacks(notice=None if json_output else _notice)


def _notice(message: str) -> None:
    try:
        say(message)
    except BrokenPipeError:
        if not silence_left_readers():
            raise


@dataclass(frozen=True)
class SyncRequest:
    """The parsed options of one ``nexo plugin sync`` run (``--yes`` is accepted and means
    nothing: sync asks nothing)."""

    lock_file: Path = Path("nexo-plugins.lock")
    dest: Path | None = None
    prune: bool = False
    frozen: bool = False
    target: str | None = None
    config: Path | None = None
    trusted_keys: Path | None = None
    require_signature: bool = False
    skip_signature_verify: bool = False
    github_api_url: str | None = None
    registry_config: Path | None = None
    plain_http: bool = False
    registry_mirror: list[str] | None = None
    timeout: float | None = None
    jobs: int | None = None
    allow_signer_change: bool = False
    nexo_version: str | None = None
    max_download_size: int | None = None
    max_entries: int | None = None
    max_total_size: int | None = None
    max_entry_size: int | None = None
    dry_run: bool = False
    json_output: bool = False


def run_sync(request: SyncRequest) -> int:
    """Run ``nexo plugin sync`` as ``request`` says and print its outcome; the exit code (0 in
    sync or planned, 1 a plugin failed). A failure of the whole run exits through
    :func:`~nexo_pkg.cli.common.fail`, as every command's does."""
    lock_file, dest, json_output = request.lock_file, request.dest, request.json_output

    def run() -> SyncResult:
        from nexo_pkg.sources.api import configured  # noqa: PLC0415

        root = (
            install_api.install_root(dest)
            if dest is not None
            else install_api.install_root(None, install_api.config_dir(request.config))
        )
        wanted_path = lock_file.parent / fleet_api.WANTED_NAME
        mirrors = configured(
            request.registry_mirror,
            fleet_api.read_registries(wanted_path) if wanted_path.exists() else None,
        )
        # Checked for a dry run too: a rehearsal that passes what the run refuses is none.
        options = fleet_options(
            config=request.config,
            trusted_keys=request.trusted_keys,
            require_signature=request.require_signature,
            skip_signature_verify=request.skip_signature_verify,
            github_api_url=request.github_api_url,
            registry_config=request.registry_config,
            plain_http=request.plain_http,
            timeout=request.timeout,
            jobs=request.jobs,
            registry_mirrors=mirrors,
            allow_signer_change=request.allow_signer_change,
            nexo_version=request.nexo_version,
            limits=archive_limits(
                max_download=request.max_download_size,
                max_entries=request.max_entries,
                max_total=request.max_total_size,
                max_entry=request.max_entry_size,
            ),
        )
        if request.dry_run:
            install_api.check_options(options.install)
            return fleet_api.dry_run_plan(
                lock_file, root, wanted_path=wanted_path, prune=request.prune,
                target=request.target, frozen=request.frozen,
                registry_config=request.registry_config,
            )  # fmt: skip
        return fleet_api.sync(
            lock_file,
            root,
            options,
            callbacks=fleet_callbacks(json_output),
            wanted_path=wanted_path,
            frozen=request.frozen,
            prune=request.prune,
            target=request.target,
            progress=None if json_output or not sys.stderr.isatty() else note,
        )

    # The exit code of the run once it is known, kept for when the output cannot be written.
    codes: list[int] = []

    def kept() -> SyncResult:
        try:
            result = run()
        except NexoError as error:
            codes.append(error.exit_code)
            defer_signals()  # the failure is printed whole, then a signal is answered
            say_each_failure(error)  # several plugins not relocked: one line each
            raise
        codes.append(0 if result.ok else 1)
        defer_signals()  # the outcome is printed whole, then a signal is answered
        if json_output:  # on stderr as without --json, where show() says them
            for item in result.outcomes:
                if item.action == "failed":
                    _say_failure(item)
            for step in result.plan:
                if step.error is not None:
                    _say_refusal(step)
        return _warned(result)

    def show(result: SyncResult) -> None:
        if result.dry_run:
            _show_plan(result)
            return
        if result.relocked:
            note(f"Locked {lock_file} again: {fleet_api.WANTED_NAME} had changed.")
        for item in result.outcomes:
            if item.action == "failed":
                _say_failure(item)  # an error: said with --quiet too
            elif item.action != "unchanged":
                note(_outcome_line(item))
                for said in item.notes:
                    note(f"note: {said}")  # as install notes it
        changed = sum(item.action not in {"unchanged", "failed"} for item in result.outcomes)
        downgraded = [
            f"{item.plugin_id} {item.from_version} \u2192 {item.version}"
            for item in result.outcomes
            if item.change == "downgrade" and item.action != "failed"
        ]
        as_locked = f"; downgraded as locked: {', '.join(downgraded)}" if downgraded else ""
        failed = sum(item.action == "failed" for item in result.outcomes)
        failing = f", {failed} failed" if failed else ""
        note(
            f"{result.dest}: {changed} change(s), {len(result.outcomes)} plugin(s) "
            f"checked{failing}{as_locked}."
        )

    try:
        return 0 if answer(kept, json_output=json_output, show=show).ok else 1
    except BrokenPipeError:
        # The reader of the output left (`| head -1`): the rest goes nowhere, and the exit
        # code still says what the sync did to the root.
        if not codes or not silence_left_readers():
            raise
        return codes[0]


def _say_failure(item: PluginOutcome) -> None:
    """The ``error:`` line of a plugin the sync failed on."""
    sys.stderr.write(printable(f"error: {item.plugin_id}: {item.error} [{item.kind}]"))
    sys.stderr.write("\n")


def _say_refusal(step: PlanStep) -> None:
    """The ``error:`` line of a plugin a dry run found the run would fail on, as the run
    says it."""
    sys.stderr.write(printable(f"error: {step.plugin_id}: {step.error} [{step.kind}]"))
    sys.stderr.write("\n")


def _warned(result: SyncResult) -> SyncResult:
    """Say what install would warn about each plugin sync installed (an unsigned artifact, a
    capability the daemon would not wire), as install does: with --quiet and --json too."""
    for item in result.outcomes:
        for message in item.warnings:
            # A trust warning names its asset (`WARNING: echo-1.0.0-….tar.gz is NOT SIGNED`).
            named = message if message.startswith("WARNING") else f"{item.plugin_id}: {message}"
            # Once a run: the policy's own warnings come with every plugin it refuses.
            say_once(printable(named), warning=True)
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
        ends = f"; ends the hold at {step.releases_hold}" if step.releases_hold else ""
        refusal = f": refused [{step.kind}]" if step.error is not None else ""
        words = f"{_PLAN_WORDS[step.change]}{ends}{refusal}"
        result_line(printable(f"{step.plugin_id:<24} {versions:<24} {words}"))
    for step in result.plan:
        if step.error is not None:
            _say_refusal(step)  # an error: said with --quiet too
    changes = sum(step.change != "unchanged" and step.error is None for step in result.plan)
    downgrades = [
        f"{step.plugin_id} {step.from_version} \u2192 {step.version}"
        for step in result.plan
        if step.change == "downgrade" and step.error is None
    ]
    as_locked = f"; would downgrade as locked: {', '.join(downgrades)}" if downgrades else ""
    refused = [step.plugin_id for step in result.plan if step.error is not None]
    failing = f"; the run would fail: {', '.join(refused)}" if refused else ""
    note(
        f"Dry run: {changes} change(s) planned in {result.dest}{as_locked}{failing}; "
        "nothing was changed."
    )


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
    if item.released_hold is not None and item.change == "remove":
        line += f"; hold at {item.released_hold} released (the lock does not name it)"
    elif item.released_hold is not None:
        line += f"; hold at {item.released_hold} released (the lock names {item.version})"
    return line


# Option name -> SyncRequest field, for what the small parser takes; a value is one argument
# (`--lock L` or `--lock=L`), never empty, never starting with `-`.
_PATH_FLAGS = {
    "--lock": "lock_file",
    "--dest": "dest",
    "--config": "config",
    "--trusted-keys": "trusted_keys",
    "--registry-config": "registry_config",
}
_TEXT_FLAGS = {
    "--target": "target",
    "--github-api-url": "github_api_url",
    "--nexo-version": "nexo_version",
    "--timeout": "timeout",
    "--jobs": "jobs",
    "-j": "jobs",
    "--color": "color",
    "--max-download-size": "max_download_size",
    "--max-entries": "max_entries",
    "--max-total-size": "max_total_size",
    "--max-entry-size": "max_entry_size",
}
_BOOL_FLAGS = {
    "--prune": "prune",
    "--frozen": "frozen",
    "--require-signature": "require_signature",
    "--skip-signature-verify": "skip_signature_verify",
    "--plain-http": "plain_http",
    "--allow-signer-change": "allow_signer_change",
    "--yes": "yes",
    "-y": "yes",
    "--dry-run": "dry_run",
    "--json": "json_output",
    "--quiet": "quiet",
    "-q": "quiet",
    "--verbose": "verbose",
    "-v": "verbose",
}
_SIZE_FLAGS = {
    "max_download_size": "--max-download-size",
    "max_total_size": "--max-total-size",
    "max_entry_size": "--max-entry-size",
}
# Numbers as click reads them, in their plain spelling only (anything else goes to Typer).
_INTEGER = re.compile(r"[0-9]{1,9}")
_DECIMAL = re.compile(r"[0-9]{1,9}(\.[0-9]{1,9})?")


def _parse_fast(arguments: Sequence[str]) -> dict[str, object] | None:
    """``plugin sync`` options by field, or ``None`` for anything Typer should handle."""
    from nexo_pkg.core import posix  # noqa: PLC0415

    if not posix.POSIX:
        return None  # Typer's command refuses to run there, in its own words
    values = {**_PATH_FLAGS, **_TEXT_FLAGS, "--registry-mirror": "registry_mirror"}
    parsed = plain_options(
        arguments, _BOOL_FLAGS, values, repeatable=frozenset({"--registry-mirror"})
    )
    if parsed is None:
        return None
    for field in _PATH_FLAGS.values():
        if field in parsed:
            parsed[field] = Path(str(parsed[field]))
    for field, pattern, number in (("jobs", _INTEGER, int), ("timeout", _DECIMAL, float)):
        if field in parsed:
            text = str(parsed[field])
            if not pattern.fullmatch(text):
                return None
            parsed[field] = number(text)
    try:
        if "max_entries" in parsed:
            parsed["max_entries"] = entries_value(str(parsed["max_entries"]))
        for field, flag in _SIZE_FLAGS.items():
            if field in parsed:
                parsed[field] = parse_size(str(parsed[field]), flag=flag)
    except UsageError:
        return None  # Typer says it, in the words of the other commands
    return parsed


def fast_sync(arguments: Sequence[str]) -> int | None:
    """Run ``nexo plugin sync ARGUMENTS`` without Typer; ``None`` means "let Typer do it"."""
    parsed = _parse_fast(arguments)
    if parsed is None:
        return None
    from nexo_pkg.cli.common import set_color, set_verbosity  # noqa: PLC0415
    from nexo_pkg.core.output import report_error  # noqa: PLC0415

    json_output = bool(parsed.get("json_output"))
    color = parsed.pop("color", None)
    quiet, verbose = bool(parsed.pop("quiet", False)), bool(parsed.pop("verbose", False))
    parsed.pop("yes", None)
    try:
        if color is not None:
            set_color(str(color))
        set_verbosity(quiet=quiet, verbose=verbose)
        return run_sync(SyncRequest(**parsed))  # type: ignore[arg-type]
    except NexoError as error:
        return report_error(error, json_output=json_output)
