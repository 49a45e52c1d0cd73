"""CLI for the operator's everyday commands: ``nexo plugin search``, ``info``, ``doctor``,
``enable``, ``disable``, ``outdated`` and ``rollback`` (the work is in :mod:`nexo_pkg.install`
and :mod:`nexo_pkg.fleet.doctor`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from nexo_pkg.cli import defer_signals
from nexo_pkg.cli.common import answer, guarded, painted, policy_path, result_line
from nexo_pkg.cli.completion import installed_ids
from nexo_pkg.cli.install import _holding, _roots, notices, refuse_unreadable, registry_mirrors
from nexo_pkg.cli.options import (
    AcceptedYesOption,
    CommandTimeoutOption,
    ConfigOption,
    DestOption,
    DryRunOption,
    GitHubApiOption,
    InstalledIdArgument,
    JobsOption,
    JsonOption,
    PlainHttpOption,
    RegistryConfigOption,
    TargetOption,
    TrustedKeysOption,
)
from nexo_pkg.core.credentials import masked, without_credentials
from nexo_pkg.core.errors import EXIT_FAILURE, EXIT_OK, NexoError
from nexo_pkg.core.output import emit_json, say, warn
from nexo_pkg.core.terminal import printable
from nexo_pkg.fleet import api as fleet_api
from nexo_pkg.install import api as install_api
from nexo_pkg.manifest.daemon import check_id
from nexo_pkg.manifest.daemon_config import nexo_home_from_env

if TYPE_CHECKING:
    from nexo_pkg.install.api import (
        EditResult,
        LatestVersion,
        OutdatedEntry,
        Receipt,
        ReleaseInfo,
        RollbackResult,
    )
    from nexo_pkg.sources.api import SourceContext


class _Lookups:
    """The newest-version lookup of every receipt (:meth:`lookup`), all through the one
    ``context`` (its clients keep their connections from one lookup to the next; the GitHub
    documents asked with the ETag of the answer kept from the run before). :meth:`prepare`
    first reads what can be read at once (with a GitHub token, the latest releases of many
    repositories to a GraphQL request) and the lookups start from those answers. Once a
    source's service answers that its rate limit is spent, the lookups left that would ask
    it send nothing more and fail with that same answer."""

    def __init__(self, context: SourceContext) -> None:
        import threading  # noqa: PLC0415

        from nexo_pkg.sources.api import Prefetched  # noqa: PLC0415

        self.context = context
        context.conditional_requests = True
        self.known = Prefetched()
        # Plugin id -> where its receipt says it came from, and -> the rate-limit answer its
        # lookup failed with, for :meth:`settled`.
        self.origins: dict[str, Mapping[str, Any]] = {}
        self.limited: dict[str, NexoError] = {}
        self.guard = threading.Lock()

    def prepare(self, receipts: list[Receipt]) -> None:
        self.known = install_api.prefetch_latest(receipts, self.context)

    def lookup(self, receipt: Receipt) -> LatestVersion | None:
        from nexo_pkg.core.errors import NexoError  # noqa: PLC0415

        source = install_api.receipt_source(receipt, self.context, self.known)
        if source is None:
            return None
        origin = receipt.origin()
        with self.guard:
            self.origins[receipt.id] = origin
        try:
            stopped = self.known.stopped_for(origin)
            if stopped is not None:
                raise stopped
            offered = source.newest()
        except NexoError as error:
            if error.kind == "rate_limited":
                self.known.stop(origin, error)
                with self.guard:
                    self.limited[receipt.id] = error
            raise
        return install_api.LatestVersion(
            offered.version, offered.label, read_manifest=lambda: offered.manifest
        )

    def settled(self, entries: list[OutdatedEntry]) -> list[OutdatedEntry]:
        """``entries`` as ``--jobs 1`` reports them: every rate-limit answer of one service
        replaced by the first one in their order, and from the first lookup that service
        answered so, every later lookup of it failed with that answer. Lookups running
        side by side each get their own answer before the first stops the others, and
        some of those after it in the order were answered before it came."""
        from nexo_pkg.sources.api import first_per_service, stopped_in_order  # noqa: PLC0415

        limited = [
            (self.origins.get(entry.plugin_id, {}), entry.error)
            for entry in entries
            if entry.error is not None and entry.error.kind == "rate_limited"
        ]
        firsts = iter(first_per_service(limited))
        settled = []
        for entry in entries:
            error = entry.error
            if error is not None and error.kind == "rate_limited":
                error = next(firsts)
            settled.append(entry if error is entry.error else replace(entry, error=error))
        stops = stopped_in_order([
            (
                self.origins.get(entry.plugin_id),
                entry.error if entry.plugin_id in self.limited else None,
            )
            for entry in settled
        ])  # fmt: skip
        return [
            entry
            if stop is None or entry.error is stop
            else replace(entry, status="failed", latest=None, error=stop, needs=None, daemon=None)
            for entry, stop in zip(settled, stops, strict=True)
        ]


_STATUS_WORDS = {
    "outdated": "outdated",
    "current": "up to date",
    "ahead": "newer than the source",
    "pinned": "pinned to its tag",
    "held": "held (see unhold)",
    "incompatible": "needs nexo",
    "local": "local file: not checked",
    "unknown": "unknown: not checked",
    "failed": "could not check",
}
# Wide enough for every word above, so the SOURCE column lines up under its header.
_STATUS_WIDTH = max(len(words) for words in _STATUS_WORDS.values())


def _render(entries: list[OutdatedEntry]) -> None:
    if not entries:
        say("No plugins installed.")
        return
    result_line(f"{'ID':<24} {'INSTALLED':<12} {'LATEST':<12} {'STATUS':<{_STATUS_WIDTH}} SOURCE")
    for entry in entries:
        latest = entry.latest.version if entry.latest else "-"
        status = _STATUS_WORDS[entry.status]
        if entry.needs is not None:
            status = f"{status} {entry.needs}"
        row = (
            f"{entry.plugin_id:<24} {entry.installed:<12} {latest:<12} "
            f"{status:<{_STATUS_WIDTH}} {entry.source}"
        )
        result_line(printable(row))
        if entry.needs is not None and entry.daemon is not None:
            say(
                f"  {printable(entry.plugin_id)}: {entry.latest.version if entry.latest else ''} "
                f"needs a daemon matching min_nexo_version `{printable(entry.needs)}`; the daemon "
                f"is {printable(entry.daemon.version)} ({entry.daemon.source}): upgrade installs "
                f"the newest older version that admits it if one is newer than {entry.installed}, "
                "else refuses (incompatible)"
            )
        if entry.note is not None:
            say(f"  {printable(entry.plugin_id)}: {printable(entry.note)}")
        _say_failure(entry)
    _say_rate_limit(entries)


def _say_failure(entry: OutdatedEntry) -> None:
    """The ``error:`` line of a plugin that could not be checked, shown with --quiet and
    --json too, in the shape ``upgrade --all`` and ``sync`` give a plugin they failed on."""
    if entry.error is not None and entry.error.kind != "rate_limited":
        sys.stderr.write(
            f"error: {printable(entry.plugin_id)}: {printable(entry.error.message)} "
            f"[{entry.error.kind}]\n"
        )


def _say_rate_limit(entries: list[OutdatedEntry]) -> None:
    """A spent rate limit: one line, with when it resets, not one failure per plugin."""
    limited = [
        entry.error.message
        for entry in entries
        if entry.error is not None and entry.error.kind == "rate_limited"
    ]
    if limited:
        sys.stderr.write(
            f"error: {printable(limited[0])} ({len(limited)} plugin(s) not checked) "
            "[rate_limited]\n"
        )


ENABLE_HELP = """Let the daemon load a plugin again: take it out of discovery.disabled.

Edits plugins/discovery.yaml of the daemon's configuration directory (see --config)
as the daemon's own `ext enable` edits extensions.yaml, keeping the file's comments
and layout; when discovery.allowlist is in force, the id is added to it too. A
microapp is loaded by the daemon's extension host, which reads extensions.yaml and
never discovery.yaml: for one, extensions.disabled and extensions.allowlist are
edited instead (refused while extensions.enabled is false, which keeps every
microapp off). The daemon reads the file at start. Exit codes: 0 enabled (or
already); 1 not installed; 2 usage or configuration error.
"""
DISABLE_HELP = """Keep the daemon from loading a plugin: add it to discovery.disabled.

The plugin stays installed (list shows it as disabled). Edits plugins/discovery.yaml
of the daemon's configuration directory (see --config), keeping its comments and
layout; for a microapp, extensions.disabled of extensions.yaml (created if missing),
the list the daemon's extension host reads. Exit codes: 0 disabled (or already);
1 not installed; 2 usage or configuration error.
"""


def _discovery_command(*, enabled: bool) -> Callable[..., None]:
    """``enable`` or ``disable``: the daemon's discovery lists, edited for one plugin."""

    def command(
        *,
        plugin_id: InstalledIdArgument,
        dest: DestOption = None,
        config: ConfigOption = None,
        yes: AcceptedYesOption = False,
        json_output: JsonOption = False,
    ) -> None:
        del yes  # nothing is asked: accepted as on every command that changes state

        def run() -> EditResult:
            check_id(plugin_id)
            directory = install_api.config_dir(config)
            roots = _roots(dest, config)
            listed = install_api.discovery_state(directory)
            as_plugin = plugin_id in listed.disabled or plugin_id in listed.allowlist
            as_microapp = (
                plugin_id in listed.extensions_disabled or plugin_id in listed.extensions_allowlist
            )
            # A microapp's lists are extensions.yaml's, which the extension host applies
            # (src/main.rs:6530-6543); the plugin discovery's never reach it.
            found = install_api.first_installed(roots, plugin_id)
            if found is None:
                if not as_plugin and not as_microapp:
                    # As the daemon's own `ext enable/disable`: an id nobody installed is a
                    # typo. Every root the daemon discovers counts, as for `list`, and so do
                    # a development link and an install whose receipt is unreadable (the
                    # daemon reads manifests, not receipts).
                    _holding(roots, plugin_id)
                # Not installed (any more), but named in a list: the list that names it.
                microapp = as_microapp and not as_plugin
            else:
                microapp = found[1]
            result = install_api.set_enabled(
                directory, plugin_id, enabled=enabled, microapp=microapp
            )
            if found is None:
                return result
            # The edit is made either way; as install does, say when the daemon would still
            # never meet the plugin where it is installed (read after the edit).
            reach = install_api.DaemonReach(directory)
            why = reach.unreached(found[0], plugin_id, microapp=microapp)
            if why is None or not reach.configured:
                return result
            warn(printable(why))
            return replace(result, warnings=(why,))

        def show(result: EditResult) -> None:
            verb = "enabled" if enabled else "disabled"
            if not result.changed:
                say(f"{printable(plugin_id)} is already {verb} in {printable(result.path)}.")
                return
            extra = f" (added to {result.section}.allowlist)" if result.allowlisted else ""
            say(
                f"{printable(plugin_id)} {verb} in {printable(result.path)}{extra}; the daemon "
                "applies it at its next start."
            )

        answer(run, json_output=json_output, show=show)

    return command


enable_command = _discovery_command(enabled=True)
disable_command = _discovery_command(enabled=False)


def _handshake(timeout_ms: int, nexo_version: str | None, config: Path | None = None) -> Any:
    """One plugin's handshake as ``nexo plugin check`` runs it; a microapp's admin grants come
    from the same configuration directory as the rest of the report (``config``)."""
    from nexo_pkg.check import run_check  # noqa: PLC0415

    def run(directory: Path, known: Any = None) -> tuple[bool, int, str]:
        report = run_check(
            directory, timeout_ms=timeout_ms, nexo_version=nexo_version, config=config,
            known=known,
        )  # fmt: skip
        failing = [check for check in report.checks if check.status == "fail"]
        warning = [check for check in report.checks if check.status == "warn"]
        shown = (failing or warning)[:1]
        summary = f"{shown[0].name}: {shown[0].detail}" if shown else "handshake passed"
        return report.ok, len(warning), summary

    return run


def _shows_progress() -> bool:
    """Per-plugin progress lines: on a terminal (stderr), not with --quiet."""
    import sys  # noqa: PLC0415

    from nexo_pkg.core.output import OUTPUT  # noqa: PLC0415

    return sys.stderr.isatty() and not OUTPUT.quiet


def _with_progress(handshake: Any, roots: tuple[Path, ...]) -> Any:
    """``handshake`` that first says ``[2/5] checking weather-0.2.0`` on stderr: spawning
    every plugin takes seconds each, and a person at the terminal sees where it is."""
    import threading  # noqa: PLC0415

    total = sum(1 for root in roots for item in install_api.scan_installed(root) if item.receipt)
    done = [0]
    guard = threading.Lock()

    def run(directory: Path, known: Any = None) -> tuple[bool, int, str]:
        with guard:
            done[0] += 1
            say(printable(f"[{done[0]}/{total}] checking {directory.name}"))
        result: tuple[bool, int, str] = handshake(directory, known)
        return result

    return run


_MARKS = {"error": ("ERROR", "red"), "warning": ("warn", "yellow"), "note": ("note", "dim")}


def _vendored_text(vendored: list[dict[str, Any]] | None) -> str:
    """``info``'s line of vendored packages, from the SBOM the tarball carries."""
    if vendored is None:
        return "- (the tarball carries no SBOM)"
    if not vendored:
        return "none"
    return ", ".join(f"{item['name']} {item['version']}" for item in vendored)


def search_command(
    *,
    term: Annotated[str, typer.Argument(metavar="TERM", help="Words to look for.")],
    limit: Annotated[
        int, typer.Option("--limit", min=1, max=100, help="Most repositories to show.")
    ] = 30,
    github_api_url: GitHubApiOption = None,
    timeout: CommandTimeoutOption = None,
    json_output: JsonOption = False,
) -> None:
    """Search GitHub for plugin repositories (those with the nexo-plugin topic).

    Uses GitHub's repository search with the same API host, token and network rules as
    install; one repository per line on stdout (owner/repo, stars, description), best
    match first. Install one with `nexo plugin install OWNER/REPO`; look at its latest
    release first with `nexo plugin info OWNER/REPO`.
    Exit codes: 0 (also when nothing matches); 1 the search failed; 2 usage error.
    """

    def run() -> list[Any]:

        home = nexo_home_from_env()
        options = install_api.InstallOptions(
            dest=home, nexo_home=home, github_api_url=github_api_url, http_timeout=timeout
        )
        return install_api.search_repositories(
            term, options, limit=limit, callbacks=notices(json_output)
        )

    found = guarded(run, json_output=json_output)
    if json_output:
        emit_json({"ok": True, "query": term, "repositories": found})
        return
    if not found:
        say(f"No plugin repository matches {printable(term)!r}.")
        return
    for item in found:
        # What the answer says is shown only where it has the type GitHub gives it.
        stars = item.get("stargazers_count")
        stars_text = str(stars) if isinstance(stars, int) else "-"
        description = item.get("description")
        text = description if isinstance(description, str) else ""
        result_line(printable(f"{item['full_name']:<40} {stars_text:>6}  {text}"))


def info_command(
    *,
    source: Annotated[
        str,
        typer.Argument(
            metavar="SOURCE",
            help="owner/repo[@tag], oci://host/repo[:tag|@digest] or a release .tar.gz.",
        ),
    ],
    target: TargetOption = None,
    trusted_keys: TrustedKeysOption = None,
    config: ConfigOption = None,
    github_api_url: GitHubApiOption = None,
    timeout: CommandTimeoutOption = None,
    registry_config: RegistryConfigOption = None,
    plain_http: PlainHttpOption = False,
    json_output: JsonOption = False,
) -> None:
    """Show what installing SOURCE would install, without installing it.

    The release's plugin id, version, the targets it ships (for a registry, its version
    tags too), min_nexo_version, and for this host's target (or --target) the asset, its
    checksums and its signer, verified against the trust policy exactly as install
    verifies it (the asset is downloaded into the shared cache for that; nothing is
    written to a plugin root).
    Exit codes: 0 shown; 1 a check failed (the same refusal install would give);
    2 usage or configuration error.
    """

    def run() -> ReleaseInfo:

        home = nexo_home_from_env()
        options = install_api.InstallOptions(
            dest=home / "state" / "plugins",
            nexo_home=home,
            policy_path=policy_path(config, trusted_keys),
            target=target,
            trusted_keys=trusted_keys,
            github_api_url=github_api_url,
            http_timeout=timeout,
            dry_run=True,
            registry_config=registry_config,
            plain_http=plain_http,
            registry_mirrors=registry_mirrors(),
        )
        return install_api.release_info(source, options, notices(json_output))

    def show(info: ReleaseInfo) -> None:
        document = info.to_json()
        signature = document["signature"]
        identity, status = signature.get("identity"), signature.get("status")
        # The identity with the verdict on it; without one the verdict alone ("unsigned").
        signer = f"{identity} ({status})" if identity else str(status)
        rows = [
            ("Plugin", f"{document['id']} {document['version']}"),
            ("Release", document["tag"] or "-"),
            *(
                [("Tags", ", ".join(document["tags"]) or "-")]
                if document["tags"] is not None
                else []
            ),
            ("Targets", ", ".join(entry["target"] for entry in document["targets"])),
            ("Asset", f"{document['asset']} ({document['host_target']})"),
            ("sha256", document["sha256"]),
            ("Checksums", ", ".join(document["checksums"]) or "-"),
            ("Signer", signer),
            ("min_nexo", document["min_nexo_version"] or "-"),
            ("Vendored", _vendored_text(document["vendored"])),
        ]
        for label, value in rows:
            result_line(printable(f"{label + ':':<11} {value}"))
        for message in info.plan.warnings:
            warn(printable(message))  # one `warning:` prefix, shown even with --quiet

    answer(run, json_output=json_output, show=show)


def doctor_command(
    *,
    dest: DestOption = None,
    config: ConfigOption = None,
    nexo_version: Annotated[
        str | None,
        typer.Option(
            "--nexo-version",
            metavar="VERSION",
            help="Version of the daemon the plugins are for (default: NEXO_DAEMON_VERSION); "
            "min_nexo_version is checked against it.",
        ),
    ] = None,
    no_check: Annotated[
        bool, typer.Option("--no-check", help="Do not spawn the plugins (no handshake).")
    ] = False,
    timeout_ms: Annotated[
        int,
        typer.Option("--timeout-ms", min=1, help="Deadline of each handshake reply, in ms."),
    ] = 5000,
    jobs: JobsOption = None,
    json_output: JsonOption = False,
) -> None:
    """Check every installed plugin and the daemon's plugin configuration in one report.

    For each installed plugin: its files against the install receipt, its manifest
    against the daemon it is for (min_nexo_version with --nexo-version), the framework
    capabilities it requires that the daemon would not wire (a warning), its handshake
    (spawned as `nexo plugin check` does, unless --no-check), and whether discovery
    loads it (discovery.disabled, discovery.allowlist; a warning when its root is not one
    the daemon's discovery walks). For the root: ids the daemon
    would meet twice, directories without a readable receipt (their manifest and
    handshake are checked all the same), development links, a file in place of the
    root's bookkeeping directory (.nexo, or an area in it: an error, as the commands
    that need it fail), leftovers of interrupted
    installs and removals (under .nexo, and the reference installer's .staging-* and
    *.removing-* at the top of the root, each with what the daemon makes of it and the
    command that deletes it), an extensions.yaml max_depth that lets the daemon's
    microapp walk reach the versions upgrade keeps under .nexo/kept, and
    ./nexo-plugins.lock against ./nexo-plugins.toml. A microapp's discovery state is
    extensions.yaml's.
    --jobs plugins are checked at a time, each spawned in its own sandbox under its own
    deadline; the report is the same, in the same order, whatever the number.
    Exit codes: 0 nothing would make the daemon skip or fail a plugin; 1 something
    would, or the commands that change the root would fail on it (an error finding);
    2 usage or configuration error.
    """

    # A --nexo-version that is no version is refused (usage), as install and lock do.
    found = guarded(lambda: install_api.daemon_version(nexo_version), json_output=json_output)
    version = found.version if found else None
    version_source = (
        found.source if found else "unknown (give --nexo-version or NEXO_DAEMON_VERSION)"
    )

    def run() -> Any:
        from nexo_pkg.core.threads import checked_jobs  # noqa: PLC0415

        roots = _roots(dest, config)
        directory = install_api.config_dir(config)
        discovery = install_api.discovery_state(directory)
        # extensions.yaml's `max_depth` deep enough to reach the versions upgrade keeps (lint's
        # reader of the daemon's YAML is loaded only when there is such a file to read).
        walker: list[tuple[Path, str]] = []
        if (directory / "extensions.yaml").exists():
            from nexo_pkg.lint.daemon_files import reached_bookkeeping  # noqa: PLC0415

            walker = [
                (reached.path, f"{reached.message()}; {reached.remedy()}")
                for reached in reached_bookkeeping(directory)
            ]
        wanted, lock = Path(fleet_api.WANTED_NAME), Path(fleet_api.LOCK_NAME)
        handshake = None if no_check else _handshake(timeout_ms, version, config)
        if handshake is not None and not json_output and _shows_progress():
            handshake = _with_progress(handshake, roots)
        return fleet_api.diagnose(
            roots,
            discovery=discovery,
            nexo_version=version,
            handshake=handshake,
            lock_files=(wanted, lock) if wanted.is_file() else None,
            wired=install_api.wired_capabilities(directory),
            jobs=checked_jobs(jobs),
            walker=walker,
            reach=install_api.DaemonReach(directory),
        )

    report = guarded(run, json_output=json_output)
    if json_output:
        nexo = {"version": version, "source": version_source}
        # A root named with a URL's credentials (`--dest https://USER:TOKEN@…`) never shows them.
        emit_json(masked({**report.to_json(), "nexo_version": nexo}))
    else:
        # `0.2.1 (--nexo-version)`; without one, only why it is unknown.
        say(
            f"daemon version: {version} ({version_source})"
            if version
            else f"daemon version: {version_source}"
        )
        for finding in report.findings:
            where = finding.plugin_id or (finding.path.name if finding.path else "")
            mark, colour = _MARKS[finding.severity]
            rest = printable(without_credentials(f"{finding.check:<10} {where}: {finding.message}"))
            result_line(f"{painted(f'{mark:<6}', colour)} {rest}")
        errors = sum(1 for f in report.findings if f.severity == "error")
        say(
            f"{len(report.plugins)} plugin(s) in "
            f"{', '.join(printable(without_credentials(str(root))) for root in report.roots)}: "
            f"{'no problem the daemon would trip on' if report.ok else f'{errors} error(s)'}"
        )
    raise typer.Exit(EXIT_OK if report.ok else EXIT_FAILURE)


def outdated_command(
    *,
    plugin_ids: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[ID]...",
            help="Installed plugins (default: every one).",
            autocompletion=installed_ids,
        ),
    ] = None,
    dest: DestOption = None,
    config: ConfigOption = None,
    github_api_url: GitHubApiOption = None,
    timeout: CommandTimeoutOption = None,
    registry_config: RegistryConfigOption = None,
    plain_http: PlainHttpOption = False,
    nexo_version: Annotated[
        str | None,
        typer.Option(
            "--nexo-version",
            metavar="VERSION",
            help="Version of the daemon the plugins are for (default: NEXO_DAEMON_VERSION): a "
            "newer version whose manifest's min_nexo_version excludes it is shown as \"needs "
            'nexo REQ", not outdated, as upgrade does not install it.',
        ),
    ] = None,
    exit_code: Annotated[
        bool,
        typer.Option(
            "--exit-code", help="Exit 1 when a plugin is outdated (as `git diff --exit-code`)."
        ),
    ] = False,
    jobs: JobsOption = None,
    json_output: JsonOption = False,
) -> None:
    """Show installed plugins whose source has a newer version, without downloading one.

    For each installed plugin, in every search path of the daemon's configuration (or
    --dest): its version, the newest version its source offers (the latest GitHub
    release's manifest asset or tarball names; the highest semver tag of its registry
    repository) and where it came from; a release whose tarball names carry one version
    of one plugin is read from those names (one API request per plugin without a token;
    upgrade reads and checks its manifest asset), any other from its manifest asset. A
    plugin installed from an explicit tag is "pinned": upgrade stays on that tag. Only
    release metadata and manifest assets are read: no tarball is downloaded, nothing is
    installed. A plugin whose source cannot be
    reached is reported as such and the others go on; once GitHub says its rate limit
    is spent, nothing more is asked of it and one line says when it resets. --timeout
    is one deadline for all the lookups together: once it passes, each plugin not
    checked yet is "could not check" (network). A plugin held by `rollback` or `hold`
    is "held": upgrade leaves it alone until a version is named or `nexo plugin unhold`
    releases it, so --exit-code does not count it. --jobs
    sources are asked at a time over kept-alive connections; a release document asked
    before is asked again with its ETag (If-None-Match), and a 304 reuses the answer
    kept beside the blob cache. With the daemon's version (--nexo-version or
    NEXO_DAEMON_VERSION), a newer version is also held to its manifest's
    min_nexo_version (one more request for its manifest asset where its version was read
    from tarball names): one that excludes the daemon is "needs nexo REQ", not counted
    by --exit-code, and a line says what upgrade does instead.
    Exit codes: 0 (with --exit-code: 0 nothing outdated, 1 something is); 1 a source
    could not be checked; 2 usage or configuration error.
    """

    def run() -> list[OutdatedEntry]:
        from nexo_pkg.core.threads import checked_jobs  # noqa: PLC0415

        daemon = install_api.daemon_version(nexo_version)
        roots = _roots(dest, config)
        for plugin_id in plugin_ids or ():
            _holding(roots, plugin_id)  # a mistyped id gets the closest installed ones
        options = install_api.InstallOptions(
            dest=roots[0],
            nexo_home=nexo_home_from_env(),
            github_api_url=github_api_url,
            http_timeout=timeout,
            registry_config=registry_config,
            plain_http=plain_http,
            registry_mirrors=registry_mirrors(),
        )

        # A hold is its root's: the same id in another search path is not held by it.
        held = {(root, plugin) for root in roots for plugin in install_api.holds(root)}
        with install_api.command_context(options, notices(json_output)) as context:
            lookups = _Lookups(context)
            found = lookups.settled(install_api.outdated(
                roots, plugin_ids or (), lookups.lookup,
                jobs=checked_jobs(jobs), prepare=lookups.prepare, daemon=daemon,
                on_interrupt=context.stop_requests,
            ))  # fmt: skip
        return [
            # A held plugin is left alone by `upgrade`: what its source offers is shown,
            # not counted as outdated. A hold outranks a tag pin, as `upgrade` names it.
            replace(entry, status="held", needs=None, daemon=None)
            if (entry.path.parent, entry.plugin_id) in held
            and entry.status in {"outdated", "current", "ahead", "pinned", "incompatible"}
            else entry
            for entry in found
        ]

    entries = guarded(run, json_output=json_output)
    failed = any(entry.status == "failed" for entry in entries)
    stale = any(entry.is_outdated for entry in entries)
    if json_output:
        plugins = [entry.to_json() for entry in entries]
        emit_json(masked({"ok": not failed, "outdated": stale, "plugins": plugins}))
        for entry in entries:
            _say_failure(entry)
        _say_rate_limit(entries)
    else:
        _render(entries)
    raise typer.Exit(EXIT_FAILURE if failed or (exit_code and stale) else EXIT_OK)


def rollback_command(
    *,
    plugin_id: InstalledIdArgument,
    dest: DestOption = None,
    config: ConfigOption = None,
    yes: AcceptedYesOption = False,
    dry_run: DryRunOption = False,
    json_output: JsonOption = False,
) -> None:
    """Put back the version of a plugin that its last upgrade replaced, offline, and hold
    the plugin there.

    The kept version (`nexo plugin list` shows it as `kept`) is re-hashed against its
    receipt first, then swapped with the installed one in one step: the version rolled
    back from is kept in turn. An interruption leaves one of the two versions installed,
    never neither. A rollback goes back, never forward: it puts back the version the last
    upgrade or sync replaced, past those earlier rollbacks set aside, so a second rollback
    goes one version further back when `upgrade --keep-old` kept more, and otherwise says
    nothing earlier is kept.
    The plugin is then held: `upgrade` and `upgrade --all` leave it on that version
    (`list` and `outdated` show it held) until `nexo plugin upgrade ID@TAG` or an
    `install` of it, with or without a tag (`install owner/repo` installs the latest
    release), names a version, or `nexo plugin unhold ID` releases the hold. --yes is
    accepted for scripts
    (a rollback asks nothing).
    Exit codes: 0 rolled back; 1 not installed, nothing earlier kept, or the kept tree
    changed; 2 usage error.
    """
    del yes  # nothing is asked: accepted as on every command that changes state

    def run() -> RollbackResult:
        root = _holding(_roots(dest, config), plugin_id)[0]
        # The installed version's receipt cannot be read: the kept one would come back beside
        # it (two installs of one id, `doctor`'s `shadowed`), so refused as `hold` refuses.
        refuse_unreadable(root, plugin_id, "roll it back")
        # Once the two versions start to change places a signal waits for the result: the
        # rollback is done (the hold written), and the command says so before it says it
        # was stopped.
        return install_api.rollback(root, plugin_id, dry_run=dry_run, committing=defer_signals)

    def show(result: RollbackResult) -> None:
        before = f" (from {result.from_version})" if result.from_version else ""
        verb = "Would roll back" if result.dry_run else "Rolled back"
        done = f"{verb} {result.plugin_id} to {result.to_version}{before} at {result.path}."
        say(printable(done))
        if result.hold is not None:
            held = install_api.held_message(
                result.plugin_id,
                result.to_version,
                root=result.path.parent,
                local=result.local,
                unknown=result.unknown,
            )
            say(printable(f"{held}."))

    answer(run, json_output=json_output, show=show)


def hold_command(
    *,
    plugin_id: InstalledIdArgument,
    dest: DestOption = None,
    config: ConfigOption = None,
    yes: AcceptedYesOption = False,
    json_output: JsonOption = False,
) -> None:
    """Hold a plugin on its installed version (as `apt-mark hold`, `brew pin`).

    `upgrade` and `upgrade --all` leave a held plugin alone (saying so), `list` and
    `outdated` show it held, until `nexo plugin upgrade ID@TAG` or an `install` of it,
    with or without a tag (`install owner/repo` installs the latest release), puts
    another version in place (one naming the version held keeps the hold), or
    `nexo plugin unhold ID` releases the hold; `remove` releases it too.
    `rollback` holds the plugin on the version it puts back.
    Exit codes: 0 held (or already); 1 not installed; 2 usage error.
    """
    del yes  # nothing is asked

    held_in: list[Path] = []

    def run() -> dict[str, Any]:
        root = _holding(_roots(dest, config), plugin_id)[0]
        held_in.append(root)
        refuse_unreadable(root, plugin_id, "hold it")  # no version to hold it at
        with install_api.locked_root(root):
            # Looked up again under the lock: a `remove` that ran meanwhile leaves nothing
            # to hold (`not_installed`), never a hold on a version that is gone.
            current = install_api.require_installed(root, plugin_id)
            version = current[0].receipt.version if current[0].receipt else "?"
            earlier = install_api.read_hold(root, plugin_id)
            if earlier is not None and earlier.version == version:
                return {"ok": True, "id": plugin_id, "version": version, "changed": False}
            install_api.set_hold(root, plugin_id, version, reason="hold")
        return {"ok": True, "id": plugin_id, "version": version, "changed": True}

    def show(document: dict[str, Any]) -> None:
        plugin, version = printable(plugin_id), printable(document["version"])
        if document["changed"]:
            unhold = install_api.plugin_command("unhold", plugin_id, root=held_in[0])
            say(f"{plugin} is held at {version}; `{printable(unhold)}` releases it.")
        else:
            say(f"{plugin} is already held at {version}.")

    answer(run, json_output=json_output, show=show)


def unhold_command(
    *,
    plugin_id: InstalledIdArgument,
    dest: DestOption = None,
    config: ConfigOption = None,
    yes: AcceptedYesOption = False,
    json_output: JsonOption = False,
) -> None:
    """Release the hold `rollback` or `hold` put on a plugin (as `apt-mark unhold`):
    `upgrade` and `upgrade --all` follow its source again (a plugin installed from a local
    tarball has none to follow: `install` a new tarball; nor has one whose receipt names no
    known origin: `install SOURCE --force` records where it comes from).

    Exit codes: 0 released (or it was not held); 1 not installed; 2 usage error.
    """
    del yes  # nothing is asked

    released_in: list[Path] = []
    # Installed from a tarball (in the first root released): `upgrade` skips it.
    local: list[bool] = []
    # Its receipt names no known origin: how to record where it comes from.
    unknown: list[str] = []

    def run() -> dict[str, Any]:
        roots = _roots(dest, config)
        try:
            holding = _holding(roots, plugin_id)
        except NexoError:
            # Removed by other means: a hold left behind is still released (only where one
            # is: a root with nothing to release is not locked, let alone created).
            holding = [root for root in roots if install_api.read_hold(root, plugin_id)]
        released = None
        released_in.extend(holding)
        for root in holding:
            with install_api.locked_root(root):
                released = install_api.release_hold(root, plugin_id) or released
        if released is None:
            _holding(roots, plugin_id)  # not installed anywhere: say so
        version = released.version if released is not None else None
        if released is not None:
            items = [
                item
                for item in install_api.installed_versions(released_in[0], plugin_id)
                if item.receipt is not None
            ]
            receipts = [item.receipt for item in items if item.receipt is not None]
            local.append(bool(receipts) and not receipts[0].upgradable)  # as upgrade
            if receipts and not receipts[0].origin_known:
                unknown.append(install_api.reinstall_command(items[0]))
        return {"ok": True, "id": plugin_id, "version": version, "changed": bool(released)}

    def show(document: dict[str, Any]) -> None:
        plugin = printable(plugin_id)
        if document["changed"]:
            root = released_in[0]
            upgrade = install_api.plugin_command("upgrade", plugin_id, root=root)
            released = f"{plugin} is no longer held at {printable(document['version'])}"
            if unknown:
                say(
                    f"{released}; `{printable(upgrade)}` has nothing to follow: its receipt "
                    f"names no known origin; {printable(unknown[0])}."
                )
            elif local and local[0]:
                # `upgrade` skips a plugin installed from a tarball: name what installs one.
                install = install_api.plugin_command("install", "PATH", root=root)
                say(
                    f"{released}; `{printable(upgrade)}` does not follow a local tarball: "
                    f"install a new one with `{printable(install)}`."
                )
            else:
                say(f"{released}; `{printable(upgrade)}` follows its source again.")
        else:
            say(f"{plugin} was not held.")

    answer(run, json_output=json_output, show=show)


def register(app: typer.Typer) -> None:
    """Add the operator's commands to the ``plugin`` group."""
    app.command("search")(search_command)
    app.command("info")(info_command)
    app.command("doctor")(doctor_command)
    app.command("enable", help=ENABLE_HELP)(enable_command)
    app.command("disable", help=DISABLE_HELP)(disable_command)
    app.command("outdated")(outdated_command)
    app.command("rollback")(rollback_command)
    app.command("hold")(hold_command)
    app.command("unhold")(unhold_command)
