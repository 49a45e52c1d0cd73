"""The handshake conformance checks: drive one plugin session and judge every answer.

The session follows the daemon's lifecycle (plugin contract §4): ``initialize``, optionally
one ``tool.invoke``, an unknown method, then ``shutdown``, closing stdin and the exit. Every
stdout line is judged on the way (UTF-8, JSON, JSON-RPC 2.0 shape, size, echoed ids); those
verdicts are reported as the ``frames.*`` checks at the end. A step that gets no answer
(timeout, the plugin exited) ends the session; the plugin and every process it started are
killed and reaped on every path.

Two levels, like the daemon's host: **fail** where the daemon would refuse or kill the plugin
(an impersonating id, a malformed tool list, a reply with the wrong id or with any ``error``
member, even ``null``, a stdout line that is not UTF-8, no reply, a crash); **warn** where
only the written contract is broken (docs/check.md lists every check). ``strict`` fails on
warnings.
"""

from __future__ import annotations

import itertools
import os
import shlex
import time
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexo_pkg.check import frame_json
from nexo_pkg.check.host import MAX_FRAME_BYTES, MAX_LINE_BYTES, PluginProcess
from nexo_pkg.check.host_calls import (
    EVENTS_PER_TOPIC,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    HostCalls,
)
from nexo_pkg.check.microapp_target import ManifestRefusedError
from nexo_pkg.check.refusal import lint_refusal
from nexo_pkg.check.report import CheckReport, CheckResult, Status
from nexo_pkg.check.rpc import (
    DEFAULT_TIMEOUT_MS,
    FrameLoop,
    NoReply,
    Pending,
    Reply,
    plugin_timeout_ms,
)
from nexo_pkg.check.sandbox import (
    SandboxPlan,
    current_platform,
    daemon_program,
    find_bwrap,
    plan_sandbox,
)
from nexo_pkg.check.scratch import collecting_leftovers, scratch_directory
from nexo_pkg.check.shebang import missing_interpreter
from nexo_pkg.check.target import (
    ResolvedPlugin,
    default_install_root,
    resolve_target,
)
from nexo_pkg.check.text import CHECK_AGENT_ID, encode_frame, exit_text, short, truncate
from nexo_pkg.core.errors import UsageError
from nexo_pkg.core.version import Version
from nexo_pkg.manifest.daemon import NEWEST_DAEMON_VERSION
from nexo_pkg.manifest.model import Sandbox
from nexo_pkg.manifest.rust_text import rust_trim

if TYPE_CHECKING:
    from nexo_pkg.check.target import KnownManifest
    from nexo_pkg.sources.api import ArchiveLimits

#: After replying to ``shutdown`` the daemon closes stdin and waits this long before SIGKILL
#: (contract §4.2).
SHUTDOWN_GRACE_SECONDS = 1.0

#: How long the daemon waits for the reply to ``shutdown``: a fixed 5 s, whatever
#: ``NEXO_PLUGIN_INIT_TIMEOUT_MS`` says (``subprocess.rs`` 1300-1303 at eec3f33); then it closes
#: stdin and kills the plugin :data:`SHUTDOWN_GRACE_SECONDS` later. ``--timeout-ms`` does not
#: change it, so a later reply is missed and an earlier one is taken, as there.
SHUTDOWN_REPLY_SECONDS = 5.0

#: The ``shutdown`` request as the daemon writes it: always id 2 (the only id it allocates
#: besides ``initialize``'s 1) with this reason (``subprocess.rs`` ``shutdown`` at eec3f33).
SHUTDOWN_ID = 2
SHUTDOWN_REASON = "host requested"

#: How long a plugin gets to exit on its own after replying to ``shutdown``, before the host
#: closes its stdin (a plugin that needs the closed stdin gets a warning).
OWN_EXIT_SECONDS = 0.5

#: The daemon's switch from logging tool-namespace violations to refusing the plugin
#: (``scoped_tool_registry.rs`` ``NamespaceEnforcement::from_env`` at eec3f33: ``1``/``true``).
NAMESPACE_STRICT_ENV = "NEXO_PLUGIN_NAMESPACE_STRICT"

_NOT_STARTED = "not started: its manifest does not lint (see `manifest`)"

#: A method no plugin implements; the answer must be ``-32601``.
UNKNOWN_METHOD = "nexo.check.unknown_method"

TOOL_ERRORS = {
    -33401: "ToolNotFound",
    -33402: "ToolArgumentInvalid",
    -33403: "ToolExecutionFailed",
    -33404: "ToolUnavailable",
    -33405: "ToolDenied",
}


# The frames.* checks, in report order: the detail shown when nothing went wrong, and the
# status of a problem. The daemon matches replies by id: a reply with another id never answers
# the request; its stdout reader (tokio ``lines()``) ends at the first line that is not UTF-8.
# Every other frame problem is one the daemon's reader skips over.
_FRAME_CHECKS: dict[str, tuple[str, Status]] = {
    "frames.utf8": ("every stdout line was valid UTF-8", "fail"),
    "frames.json": ("every stdout line was JSON (no stray output)", "warn"),
    "frames.jsonrpc": ("every frame was a well-formed JSON-RPC 2.0 message", "warn"),
    "frames.size": (f"no frame exceeded {MAX_FRAME_BYTES} bytes", "warn"),
    "frames.id": ("every reply echoed its request id", "fail"),
}

# After a broker.event, the host listens until the plugin has been quiet this long.
_EVENT_QUIET_SECONDS = 0.4


def run_check(
    target: Path | str,
    *,
    timeout_ms: int | None = None,
    nexo_version: str | None = None,
    invoke: tuple[str, dict[str, Any]] | None = None,
    dest: Path | None = None,
    strict: bool = False,
    installed_root: Callable[[], Path] | None = None,
    sandbox: bool = True,
    host_calls: bool = False,
    config: Path | None = None,
    known: KnownManifest | None = None,
    limits: ArchiveLimits | None = None,
) -> CheckReport:
    """Spawn the plugin at ``target`` and run the handshake conformance checks.

    ``target`` is resolved by :func:`~nexo_pkg.check.target.resolve_target` (``dest``, else
    ``installed_root()``, holds installed ids); ``timeout_ms`` bounds each reply (default
    the daemon's ``NEXO_PLUGIN_INIT_TIMEOUT_MS``, else :data:`DEFAULT_TIMEOUT_MS`; a
    microapp's ``initialize`` the extension host's 10 s, which reads no such variable);
    ``nexo_version`` defaults to the newest daemon
    release nexo-pkg knows; ``invoke`` = ``(tool_name, args)`` adds one ``tool.invoke``;
    ``strict`` implies ``host_calls`` (see :mod:`nexo_pkg.check.host_calls`). A microapp is
    checked by :func:`nexo_pkg.check.microapp.run_microapp` (with the grants of ``config``'s
    ``extensions.yaml``): the daemon runs microapps unsandboxed, so ``sandbox`` and
    ``host_calls`` do not apply. Plugin misbehaviour is reported in the returned
    :class:`CheckReport`, never raised, and so is a manifest the daemon refuses
    (:class:`~nexo_pkg.check.microapp_target.ManifestRefusedError`: the failed ``manifest``
    check naming the lint rule; nothing starts). Raises :class:`UsageError` for bad arguments and
    ``TargetError`` (exit 2) or the archive errors when the target names nothing runnable.
    ``known``: a directory target's manifest as the caller already read and parsed it
    (``doctor``), not parsed again while the file holds those bytes. ``limits``: those a
    release tarball is extracted within (default: SPEC §5's).
    """
    if timeout_ms is not None and timeout_ms <= 0:
        raise UsageError("--timeout-ms must be a positive number of milliseconds")
    version = nexo_version or NEWEST_DAEMON_VERSION
    if not Version.is_valid(version):
        raise UsageError(f"--nexo-version {version!r} is not a semver version such as 0.1.5")
    if invoke is not None and not isinstance(invoke[1], dict):
        raise UsageError("--args must be a JSON object")
    installed = installed_root or default_install_root
    with collecting_leftovers() as left:
        report = _resolved_and_checked(
            target,
            dest=dest,
            installed_root=installed,
            timeout_ms=timeout_ms,
            version=version,
            invoke=invoke,
            strict=strict,
            sandbox=sandbox,
            host_calls=host_calls,
            config=config,
            known=known,
            limits=limits,
        )
    for note in left:
        # A temporary directory the plugin moved where check could not find it: never left
        # without a word.
        report.add("cleanup", "warn", note)
    return report


def _resolved_and_checked(
    target: Path | str,
    *,
    dest: Path | None,
    installed_root: Callable[[], Path],
    timeout_ms: int | None,
    version: str,
    invoke: tuple[str, dict[str, Any]] | None,
    strict: bool,
    sandbox: bool,
    host_calls: bool,
    config: Path | None,
    known: KnownManifest | None,
    limits: ArchiveLimits | None,
) -> CheckReport:
    """:func:`run_check` once its arguments are judged."""
    try:
        with resolve_target(
            target, dest=dest, installed_root=installed_root, known=known, limits=limits
        ) as plugin:
            if plugin.microapp is not None:
                from nexo_pkg.check.microapp import run_microapp  # noqa: PLC0415

                return run_microapp(
                    plugin.microapp,
                    timeout_ms=timeout_ms,
                    agent_version=version,
                    invoke=invoke,
                    strict=strict,
                    config=config,
                )
            return check_plugin(
                plugin,
                timeout_ms=plugin_timeout_ms() if timeout_ms is None else timeout_ms,
                nexo_version=version,
                invoke=invoke,
                strict=strict,
                sandbox=sandbox,
                host_calls=host_calls or strict,
            )
    except ManifestRefusedError as refused:
        # The daemon's own refusal stops the check first, naming the rule: nothing starts.
        report = CheckReport(
            plugin_id=refused.plugin_id, root=str(refused.root), argv=[], strict=strict
        )
        report.add("manifest", "fail", refused.refusal)
        report.add("spawn", "fail", _NOT_STARTED)
        return report


def daemon_environment(inherited: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """The environment the daemon's ``Command`` gives a plugin: its own, then the manifest's
    ``[plugin.entrypoint.env]`` (``subprocess.rs:200-202`` at eec3f33).

    Rust builds the child's environment as a map sorted by key and writes each entry as
    ``key=value`` as it is, so a manifest key holding ``=`` (the daemon accepts it) is the
    entry ``A=B=x`` for ``"A=B" = "x"``: the child reads ``A`` as ``B=x``, unless an ``A``
    sorts before it (the first entry of a name wins, in ``getenv`` as in Python's
    ``os.environ``). Python's ``subprocess`` refuses such a key, so it is folded here into the
    entry the child reads."""
    merged = {**inherited, **extra}
    if not any("=" in key for key in merged):
        return merged
    environment: dict[str, str] = {}
    for key in sorted(merged):
        name, equals, head = key.partition("=")
        value = f"{head}={merged[key]}" if equals else merged[key]
        environment.setdefault(name, value)
    return environment


def check_plugin(
    plugin: ResolvedPlugin,
    *,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    nexo_version: str = NEWEST_DAEMON_VERSION,
    invoke: tuple[str, dict[str, Any]] | None = None,
    strict: bool = False,
    sandbox: bool = True,
    host_calls: bool = False,
) -> CheckReport:
    """Run the checks against an already resolved plugin (see :func:`run_check`).

    The plugin is spawned as the daemon spawns it: wrapped in ``bwrap`` when its manifest
    enables the sandbox (see :mod:`nexo_pkg.check.sandbox`), with a temporary directory as
    its state directory. A spawn the daemon refuses, or a mount ``bwrap`` cannot make, fails
    ``spawn`` and nothing is started.
    """
    report = CheckReport(
        plugin_id=plugin.plugin_id, root=str(plugin.root), argv=plugin.argv, strict=strict
    )
    for note in plugin.notes:
        report.add("manifest", "warn", note)
    refusal = manifest_refusal(plugin, nexo_version)
    env = daemon_environment(os.environ, plugin.env)
    with scratch_directory("nexo-check-state-") as state_root:
        state_dir = state_root / "plugins" / plugin.plugin_id
        state_dir.mkdir(parents=True)
        platform = current_platform()
        model = plugin.model
        plan = plan_sandbox(
            model.plugin.sandbox if model is not None else Sandbox(),
            plugin.plugin_id,
            plugin.argv,
            root=plugin.root,
            state_dir=state_dir,
            env=os.environ,
            bwrap=find_bwrap(platform),
            platform=platform,
            skip=not sandbox,
            program=daemon_program(
                model.plugin.entrypoint.command if model is not None else None, plugin.argv
            ),
            manifest_file=plugin.manifest_file,
        )
        report.sandbox = plan.to_json()
        if refusal is not None:
            report.add("manifest", "fail", refusal)
            if plan.daemon_spawns and plan.refusal is not None:
                # What the daemon would bind on this host, beside the lint error.
                report.add("sandbox", "fail", plan.refusal)
            report.add("spawn", "fail", _NOT_STARTED)
            return report
        if not _report_sandbox(report, plan) or plan.argv is None:
            return report
        host = HostCalls.from_manifest(model) if host_calls else None
        try:
            process = PluginProcess(plan.argv, cwd=plugin.root, env=env, trim_stderr=True)
        except OSError as error:
            reason = error.strerror or str(error)
            lacking = missing_interpreter(plugin.argv[0], cwd=plugin.root, env=env)
            hint = f"; {lacking}" if lacking is not None else ""
            report.add("spawn", "fail", f"cannot start {plan.argv[0]}: {reason}{hint}")
            return report
        with process:
            inside = " inside the daemon's bwrap sandbox" if plan.wrapped else ""
            started = f"started `{shlex.join(plugin.argv)}`{inside} (pid {process.pid})"
            spawn = report.add("spawn", "pass", started)
            session = _Session(process, plugin, report, timeout_ms / 1000, host)
            try:
                session.run(nexo_version, invoke)
            finally:
                session.add_host_checks()
                session.add_frame_checks()
    report.stderr_tail = list(process.stderr_tail)
    _name_a_missing_interpreter(report, plugin, env)
    stopped = process.stderr_stopped_detail("subprocess.rs:294-310")
    if stopped is not None:
        report.add("stderr", "warn", stopped)
    tail = report.stderr_tail
    refused = tail[0] if tail and tail[0].startswith("bwrap: ") else None
    if plan.wrapped and refused is not None and not process.stdout_seen:
        # bwrap itself gave up (a mount, a namespace): the plugin never ran. bwrap speaks
        # only before it runs the plugin, so its line comes first and nothing reached stdout;
        # a plugin's own log line that starts the same way is no failure of bwrap's.
        report.checks[report.checks.index(spawn)] = CheckResult(
            "spawn", "fail", f"bwrap could not start the plugin: {refused}"
        )
    return report


def _name_a_missing_interpreter(
    report: CheckReport, plugin: ResolvedPlugin, env: Mapping[str, str]
) -> None:
    """A plugin that never answered ``initialize`` because its launcher's ``#!`` interpreter
    is not on this host (``env`` exited 127): its failure line says which, and what to
    install. Only the words change: the verdict is the same."""
    failed = next(
        (check for check in report.checks if check.name == "initialize" and check.status == "fail"),
        None,
    )
    if failed is None:
        return
    lacking = missing_interpreter(plugin.argv[0], cwd=plugin.root, env=env)
    if lacking is not None:
        report.checks[report.checks.index(failed)] = CheckResult(
            failed.name, failed.status, f"{failed.detail}; {lacking}"
        )


def manifest_refusal(plugin: ResolvedPlugin, nexo_version: str | None) -> str | None:
    """Why the plugin is not started (:func:`~nexo_pkg.check.refusal.lint_refusal` of its
    manifest); ``None`` for a manifest that lints clean, and for a microapp (its host lints
    its manifest itself). The daemon's runtime settings (host networking, a required sandbox)
    are the sandbox plan's to judge, with the daemon's words."""
    if plugin.model is None or plugin.manifest_file is None:
        return None
    # The bytes the model was read from: a manifest changed since is not what is judged.
    manifest, raw = plugin.manifest_file
    known = plugin.known
    parsed = (
        known[2]
        if known is not None and known[1] == raw and known[0].resolve() == manifest.resolve()
        else None
    )
    return lint_refusal(manifest, nexo_version, parsed, raw=raw)


def _report_sandbox(report: CheckReport, plan: SandboxPlan) -> bool:
    """Add the ``sandbox`` check; False (with ``spawn`` failed) when nothing may be started."""
    if plan.refusal is not None and plan.daemon_spawns:
        report.add("sandbox", "fail", plan.refusal)
        report.add("spawn", "fail", "not started: a sandbox path reaches the host (see `sandbox`)")
        return False
    if plan.refusal is not None:
        report.add("sandbox", "fail", f"the daemon refuses to spawn the plugin: {plan.refusal}")
        report.add("spawn", "fail", f"not started: {plan.refusal}")
        return False
    if plan.wrapped and plan.argv is not None:
        report.add("sandbox", "pass", f"wrapped as the daemon wraps it: `{shlex.join(plan.argv)}`")
    elif plan.note is not None:
        report.add("sandbox", "warn", f"the daemon warns: {plan.note}")
    elif plan.skipped:
        report.add("sandbox", "warn", f"not sandboxed ({plan.reason})")
    else:
        report.add("sandbox", "pass", f"not sandboxed: {plan.reason}")
    problems = "; ".join(problem.describe(plan.manifest_name) for problem in plan.problems)
    if problems:
        report.add("spawn", "fail", problems)
    return not problems


class _Session(FrameLoop):
    """One conversation with the plugin; adds checks to ``report`` as it goes."""

    def __init__(
        self,
        process: PluginProcess,
        plugin: ResolvedPlugin,
        report: CheckReport,
        timeout_seconds: float,
        host: HostCalls | None = None,
    ) -> None:
        super().__init__(process, timeout_seconds)
        self.host = host
        # Whether shutdown got a reply (None until it was sent).
        self.shutdown_answered: bool | None = None
        self.plugin = plugin
        self.report = report
        self.advertised: dict[str, dict[str, Any]] = {}
        # Request ids as the daemon numbers them: initialize 1, shutdown 2; the check's own
        # extra requests (tool.invoke, the unknown method) take 3 and up.
        self._ids = (n for n in itertools.count(1) if n != SHUTDOWN_ID)
        self._issued: set[int] = set()

    def encode(self, frame: dict[str, Any]) -> bytes:
        """Frames as the daemon's plugin host writes them: keys in ``serde_json`` map order."""
        return encode_frame(frame, sort_keys=True)

    def run(self, nexo_version: str, invoke: tuple[str, dict[str, Any]] | None) -> None:
        """Every step in order; stops early once the plugin stops answering."""
        if (
            self._initialize(nexo_version)
            and (self.host is None or self._deliver_events(self.host))
            and (invoke is None or self._invoke(*invoke))
            and self._unknown_method()
        ):
            self._shutdown()

    def _initialize(self, nexo_version: str) -> bool:
        answer = self.request("initialize", {"nexo_version": nexo_version})
        self.report.timings["initialize_ms"] = (time.monotonic() - self.process.started_at) * 1000
        if isinstance(answer, NoReply):
            self.report.add("initialize", "fail", f"no reply to initialize: {answer.detail}")
            return False
        if answer.error is not None:
            self.report.add(
                "initialize", "fail", f"initialize answered with an error: {_error_text(answer)}"
            )
            return False
        result = answer.result
        if not isinstance(result, dict):
            self.report.add(
                "initialize", "fail", f"`result` must be an object, got {short(result)}"
            )
            return False
        self.report.add("initialize", "pass", f"replied in {answer.elapsed_ms:.0f} ms")
        self._check_identity(result)
        self._check_server_version(result)
        self._check_tools(result)
        return True

    def _check_identity(self, result: dict[str, Any]) -> None:
        expected = self.plugin.plugin_id
        manifest = result.get("manifest")
        plugin = manifest.get("plugin") if isinstance(manifest, dict) else None
        echoed = plugin.get("id") if isinstance(plugin, dict) else None
        if echoed is None:
            self.report.add(
                "identity", "fail", "reply has no `result.manifest.plugin.id` to verify"
            )
        elif echoed != expected:
            self.report.add(
                "identity",
                "fail",
                f"reply claims plugin id {short(echoed)} but the manifest says {expected!r} "
                "(the daemon refuses impersonation)",
            )
        else:
            self.report.add("identity", "pass", f"plugin id {expected!r} matches the manifest")

    def _check_server_version(self, result: dict[str, Any]) -> None:
        if "server_version" not in result:
            self.report.add("server_version", "warn", "reply has no `server_version`")
            return
        value = result["server_version"]
        if not isinstance(value, str):
            self.report.add(
                "server_version", "warn", f"`server_version` must be a string, got {short(value)}"
            )
        elif not value.strip():
            self.report.add("server_version", "warn", "`server_version` is empty")
        else:
            self.report.add("server_version", "pass", short(value))

    def _check_tools(self, result: dict[str, Any]) -> None:
        declared = self.plugin.declared_tools
        tools = result.get("tools")
        if tools is None:
            if declared:
                self.report.add(
                    "tools.present",
                    "warn",
                    f"the manifest declares {', '.join(declared)} in [plugin.extends].tools "
                    "but the reply has no `tools` array (the daemon registers no tool)",
                )
            else:
                self.report.add("tools.present", "pass", "no tools declared or advertised")
            return
        if not isinstance(tools, list):
            self.report.add(
                "tools.present", "fail", f"`tools` must be an array, got {short(tools)}"
            )
            return
        malformed = [
            problem
            for index, entry in enumerate(tools)
            if (problem := _tool_entry_problem(index, entry)) is not None
        ]
        for entry in tools:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                self.advertised.setdefault(entry["name"], entry)
        if malformed:
            self.report.add(
                "tools.present",
                "fail",
                f"{'; '.join(malformed)} (the daemon refuses the handshake)",
            )
        elif declared and not tools:
            self.report.add(
                "tools.present",
                "warn",
                "`tools` is empty but the manifest declares tools in [plugin.extends].tools",
            )
        else:
            self.report.add("tools.present", "pass", f"{len(tools)} tool(s) advertised")
        names = list(self.advertised)

        undeclared = [name for name in names if name not in declared]
        self.report.judge(
            "tools.declared",
            f"advertised but not in [plugin.extends].tools: {', '.join(undeclared)} "
            "(the daemon refuses to load the plugin)"
            if undeclared
            else None,
            "fail",
            "every advertised tool is in [plugin.extends].tools",
        )
        missing = [name for name in declared if name not in self.advertised]
        self.report.judge(
            "tools.advertised",
            f"declared but not advertised: {', '.join(missing)} (calls get -33401)"
            if missing
            else None,
            "warn",
            "every declared tool is advertised",
        )
        plugin_id = self.plugin.plugin_id
        prefixes = (f"{plugin_id}_", f"ext_{plugin_id}_")
        outside = [name for name in names if not name.startswith(prefixes)]
        strict = os.environ.get(NAMESPACE_STRICT_ENV) in {"1", "true"}
        self.report.judge(
            "tools.namespace",
            f"{', '.join(outside)}: tool names must start with {prefixes[0]!r} or {prefixes[1]!r}"
            + (
                f" (the daemon refuses the plugin: {NAMESPACE_STRICT_ENV} is on)"
                if strict
                else f" (the daemon logs it and goes on unless {NAMESPACE_STRICT_ENV}=1)"
            )
            if outside
            else None,
            "fail" if strict else "warn",
            f"every name starts with {prefixes[0]!r}",
        )
        problems = "; ".join(
            problem
            for name, entry in self.advertised.items()
            if "input_schema" in entry and (problem := _schema_problem(name, entry)) is not None
        )
        self.report.judge(
            "tools.schema",
            truncate(problems) if problems else None,
            "warn",
            "every input_schema is a valid JSON Schema",
        )

    def _invoke(self, tool_name: str, args: dict[str, Any]) -> bool:
        self._check_invoke_args(tool_name, args)
        params = {
            "plugin_id": self.plugin.plugin_id,
            "tool_name": tool_name,
            "args": args,
            "agent_id": CHECK_AGENT_ID,
        }
        record: dict[str, Any] = {"tool": tool_name, "args": args}
        self.report.invoke = record
        if self.host is not None:
            self.host.phase = "invoke"  # the host calls the plugin makes while it runs the tool
        answer = self.request("tool.invoke", params)
        if self.host is not None:
            self.host.phase = "after"
        if isinstance(answer, NoReply):
            record["error"] = {"message": answer.detail}
            self.report.add("invoke", "fail", f"no reply to tool.invoke: {answer.detail}")
            return False
        error = answer.error
        if error is None:
            record["result"] = answer.result
            self.report.add("invoke", "pass", f"result: {short(answer.result)}")
            return True
        record["error"] = error
        code = error.get("code")
        if answer.result is not None:
            # JSON-RPC allows one of the two; the daemon's reader takes any `error` member
            # (`"error": null` included) as the answer and drops the result (subprocess.rs:476),
            # so the agent gets an error from every such call.
            self.report.add(
                "invoke",
                "fail",
                f"the reply carries a result and {_error_text(answer)}: the daemon takes any "
                "`error` member as the answer and drops the result, so the tool call fails",
            )
        elif code in TOOL_ERRORS:
            problem = _tool_error_data_problem(code, error.get("data"))
            if problem is not None:
                self.report.add("invoke", "fail", f"{_error_text(answer)}: {problem}")
            else:
                self.report.add(
                    "invoke", "pass", f"typed error {TOOL_ERRORS[code]}: {_error_text(answer)}"
                )
        elif code == METHOD_NOT_FOUND:
            status: Status = "warn" if self.plugin.declared_tools else "pass"
            self.report.add(
                "invoke", status, f"tool.invoke is not implemented: {_error_text(answer)}"
            )
        elif code == INVALID_PARAMS:
            self.report.add("invoke", "pass", f"params refused: {_error_text(answer)}")
        else:
            self.report.add(
                "invoke",
                "warn",
                f"{_error_text(answer)} is not a tool.invoke error code "
                "(-33401..-33405, -32601, -32602)",
            )
        return True

    def _check_invoke_args(self, tool_name: str, args: dict[str, Any]) -> None:
        entry = self.advertised.get(tool_name)
        if entry is None:
            self.report.add("invoke.args", "warn", f"{tool_name!r} is not an advertised tool")
            return
        schema = entry.get("input_schema")
        if not isinstance(schema, dict) or _schema_problem(tool_name, entry) is not None:
            self.report.add("invoke.args", "warn", "no valid input_schema to check the args")
            return
        from jsonschema import validators  # noqa: PLC0415 - costly import, only needed here

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            validator = validators.validator_for(schema)(schema)
        error = next(iter(validator.iter_errors(args)), None)
        if error is None:
            self.report.add("invoke.args", "pass", "args satisfy the advertised input_schema")
        else:
            where = "/".join(str(part) for part in error.absolute_path) or "(root)"
            self.report.add(
                "invoke.args",
                "warn",
                f"args do not satisfy the input_schema at {where}: {error.message} "
                "(the daemon validates args before tool.invoke)",
            )

    def _unknown_method(self) -> bool:
        answer = self.request(UNKNOWN_METHOD, {})
        if isinstance(answer, NoReply):
            # The daemon times the call out and goes on; the session can go on too. A plugin
            # that closed a pipe but still runs is the same to it: its stdout reader ends at
            # end-of-file, a failed write is only logged, and the call times out.
            goes_on = answer.reason in {"timeout", "pipe_closed"}
            detail = f"no reply to an unknown method: {answer.detail}"
            self.report.add("unknown_method", "warn" if goes_on else "fail", detail)
            return goes_on
        error = answer.error
        if error is None:
            self.report.add(
                "unknown_method",
                "warn",
                f"an unknown method got a result ({short(answer.result)}) instead of -32601",
            )
        elif error.get("code") != METHOD_NOT_FOUND:
            detail = f"expected error -32601, got {_error_text(answer)}"
            self.report.add("unknown_method", "warn", detail)
        else:
            self.report.add("unknown_method", "pass", "answered -32601 method not found")
        return True

    def _deliver_events(self, host: HostCalls) -> bool:
        """Send ``broker.event`` on every subscribed topic and play the host while the plugin
        reacts; False once the plugin is gone."""
        host.phase = "events"
        try:
            for topic in host.subscribed_topics():
                for sequence in range(1, EVENTS_PER_TOPIC + 1):
                    deadline = time.monotonic() + self.timeout_seconds
                    frame = self.encode(host.event(topic, sequence))
                    if not (self.process.send(frame, deadline=deadline) and self._listen(deadline)):
                        return False
        finally:
            host.phase = "after"
        return True

    def _listen(self, deadline: float) -> bool:
        """Handle the plugin's frames until it has been quiet a moment (or ``deadline``);
        False when it closed stdout or exited."""
        quiet_until = time.monotonic() + _EVENT_QUIET_SECONDS
        while True:
            until = min(quiet_until, deadline)
            if time.monotonic() >= until:
                return True
            event = self.process.next_stdout_event(deadline=until)
            if event is None:
                if self.process.has_exited():
                    return False
                continue
            if event.kind == "eof":
                return False
            if event.kind == "oversize":
                self.oversize(event.size)
                continue
            self._parse(event.data, deadline)
            if self.stopped is not None:
                return False
            quiet_until = time.monotonic() + _EVENT_QUIET_SECONDS

    def add_host_checks(self) -> None:
        """Report the ``host.*`` checks of ``--host-calls``."""
        if self.host is None:
            return
        for name, status, detail in self.host.results(shutdown_answered=self.shutdown_answered):
            self.report.add(name, status, detail)

    def _shutdown(self) -> None:
        answer = self.request(
            "shutdown",
            {"reason": SHUTDOWN_REASON},
            timeout=SHUTDOWN_REPLY_SECONDS,
            request_id=SHUTDOWN_ID,
        )
        self.shutdown_answered = not isinstance(answer, NoReply)
        if isinstance(answer, NoReply):
            waits = (
                f" (the daemon waits {SHUTDOWN_REPLY_SECONDS:g} s for it, then closes stdin and "
                f"kills the plugin {SHUTDOWN_GRACE_SECONDS:g} s later)"
                if answer.reason == "timeout"
                else ""
            )
            self.report.add("shutdown", "warn", f"no reply to shutdown: {answer.detail}{waits}")
        elif answer.error is not None:
            self.report.add("shutdown", "warn", f"shutdown failed: {_error_text(answer)}")
        elif not isinstance(answer.result, dict) or answer.result.get("ok") is not True:
            self.report.add(
                "shutdown", "warn", f'expected {{"ok": true}}, got {short(answer.result)}'
            )
        else:
            self.report.add("shutdown", "pass", 'replied {"ok": true}')
        self._await_exit()

    def _await_exit(self) -> None:
        """Give the plugin a moment to exit on its own, then close stdin as the daemon does
        and wait :data:`SHUTDOWN_GRACE_SECONDS` before killing it."""
        replied_at = time.monotonic()
        if self.process.wait_exit(OWN_EXIT_SECONDS):
            waited = (time.monotonic() - replied_at) * 1000
            code = self.process.peek_exit_code()
            status: Status = "pass" if code == 0 else "warn"
            self.report.add(
                "exit", status, f"exited {exit_text(code)} {waited:.0f} ms after shutdown"
            )
            return
        self.process.close_stdin()
        if self.process.wait_exit(SHUTDOWN_GRACE_SECONDS):
            waited = time.monotonic() - replied_at
            late = (
                f"; {waited * 1000:.0f} ms after the reply: the daemon closes stdin at the "
                f"reply and kills the plugin {SHUTDOWN_GRACE_SECONDS:g} s later, so unless it "
                "exits on end-of-input it would be killed"
                if waited > SHUTDOWN_GRACE_SECONDS
                else ""
            )
            self.report.add(
                "exit",
                "warn",
                f"exited {exit_text(self.process.peek_exit_code())} only once stdin was closed "
                f"(not within {OWN_EXIT_SECONDS:g} s of replying to shutdown){late}",
            )
            return
        self.process.kill()
        self.report.add(
            "exit",
            "fail",
            f"still running {SHUTDOWN_GRACE_SECONDS:g} s after shutdown and closed stdin; killed",
        )

    def request(
        self,
        method: str,
        params: dict[str, Any],
        *,
        timeout: float | None = None,
        request_id: int | None = None,
    ) -> Reply | NoReply:
        """Send one request (``request_id``, by default the next free one) and wait for its
        reply (``timeout`` seconds, by default the session's), judging every frame that
        arrives."""
        request_id = next(self._ids) if request_id is None else request_id
        self._issued.add(request_id)
        frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        return self.exchange(frame, timeout=self.timeout_seconds if timeout is None else timeout)

    def oversize(self, size: int) -> None:
        self._frames.note(
            "frames.size",
            f"a stdout line of at least {size} bytes exceeds the "
            f"{MAX_LINE_BYTES}-byte memory cap of the check (dropped unread)",
        )

    def read_line(self, line: bytes, pending: Pending) -> Reply | None:
        """Judge one frame; the daemon takes a response as the reply whatever its id (a wrong
        one fails ``frames.id``), and any ``error`` member as an error, even ``null`` next to a
        ``result`` (a member that is not an object is described)."""
        message = self._parse(line, pending.deadline)
        if message is None or self.stopped is not None:
            return None
        # JSON-RPC ids must match in type as well: 1 is not "1", and true is not 1.
        received = message.get("id")
        if type(received) is int and received != pending.request_id and received in self._issued:
            # A second (late) reply to a request already answered or given up: the daemon
            # has no pending entry for it, logs "response with unknown id" and goes on
            # waiting for the real reply (subprocess.rs), and so does the check.
            self._frames.note(
                "frames.jsonrpc",
                f"a late reply with id {received} (an earlier request) arrived while "
                f"{pending.method} (id {pending.request_id}) waited; the daemon ignores it",
            )
            return None
        if type(received) is not int or received != pending.request_id:
            self._frames.note(
                "frames.id",
                f"reply to {pending.method} (id {pending.request_id}) carried id {short(received)}",
            )
        error = message.get("error")
        if "error" in message and not isinstance(error, dict):
            error = {"message": f"`error` is {short(error)} (any `error` member is an error)"}
        return pending.reply(message.get("result"), error)

    def gone(self, code: int | None, *, sending: bool) -> NoReply:
        """Describe a plugin that closed its pipes: usually it exited."""
        if code is None:
            what = "closed its stdin" if sending else "closed its stdout"
            return NoReply("pipe_closed", f"the plugin {what} but is still running")
        return NoReply("exited", f"the plugin exited {exit_text(code)} before replying")

    def _parse(self, line: bytes, deadline: float) -> dict[str, Any] | None:
        """Judge one stdout line and answer it when it is the plugin's request; return it when
        it is a reply for the session."""
        if len(line) > MAX_FRAME_BYTES:
            self._frames.note(
                "frames.size",
                f"a frame of {len(line)} bytes exceeds the SDKs' "
                f"{MAX_FRAME_BYTES}-byte frame limit (the daemon reads it all the same)",
            )
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as error:
            self._frames.note(
                "frames.utf8",
                f"stdout line is not valid UTF-8 ({error.reason} at byte "
                f"{error.start}): {short(line)}; the daemon's line reader stops there and "
                "reads no later reply",
            )
            self.stopped = NoReply(
                "reader_stopped",
                "the daemon's stdout reader stopped at a line that is not UTF-8 "
                "(no later reply reaches it)",
            )
            return None
        # The daemon's reader trims each line as Rust's `str::trim` does (Unicode
        # White_Space, not U+001C-U+001F) and skips it when nothing is left (subprocess.rs).
        trimmed = rust_trim(text)
        if not trimmed:
            # Blank lines do not corrupt an NDJSON reader; the SDKs' stdout guard lets them by.
            return None
        try:
            message = frame_json.loads(trimmed)
        except frame_json.FrameJsonError as error:
            if str(error) == "recursion limit exceeded":
                detail = f"frame nested too deeply to read (dropped): {short(text)}"
            else:
                detail = f"stray non-JSON stdout line ({error}): {short(text)}"
            self._frames.note("frames.json", detail)
            return None
        except ValueError:
            self._frames.note("frames.json", f"stray non-JSON stdout line: {short(text)}")
            return None
        if not isinstance(message, dict):
            self._frames.note("frames.jsonrpc", f"frame is not a JSON object: {short(text)}")
            return None
        problem = _jsonrpc_problem(message)
        if problem is not None:
            self._frames.note("frames.jsonrpc", f"{problem}: {short(text)}")
        method = message.get("method")
        if "id" not in message or (isinstance(method, str) and method):
            # A notification, or the plugin's request (an id and a non-empty method name, as
            # subprocess.rs routes it). A frame with an id and a `method` that is no name is
            # a response to the daemon.
            self._answer_plugin_request(message, deadline)
            return None
        return message

    def _answer_plugin_request(self, message: dict[str, Any], deadline: float) -> None:
        """Plugin → host traffic. With ``--host-calls`` the host's script answers requests
        and judges ``broker.publish``; without, notifications are fine and requests get an
        error reply, as from a daemon without those services."""
        method = message.get("method")
        if "id" not in message:
            if self.host is not None and method == "broker.publish":
                self.host.publish(message)
            return
        if self.host is not None:
            replies = self.host.answer(message)
        else:
            if self.report.get("initialize") is None:
                # Until the handshake ends the daemon has no bridge and answers every request
                # so, whatever its method (subprocess.rs, the reader task).
                code, text = INTERNAL_ERROR, "host services not yet wired"
            elif method in ("memory.recall", "llm.complete"):
                code, text = INTERNAL_ERROR, f"{method} is not configured in nexo plugin check"
            else:
                code, text = METHOD_NOT_FOUND, "method not found"
            error = {"code": code, "message": text}
            replies = [{"jsonrpc": "2.0", "id": message["id"], "error": error}]
        for frame in replies:
            self.process.send(self.encode(frame), deadline=deadline)

    def add_frame_checks(self) -> None:
        """Report the frames.* verdicts gathered during the session."""
        for name, (clean, status) in _FRAME_CHECKS.items():
            self.report.judge(name, self._frames.summary(name), status, clean)


def _tool_entry_problem(index: int, entry: object) -> str | None:
    """What the daemon refuses in one advertised tool entry, or None."""
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        return f"tools[{index}] needs a string `name`"
    missing = []
    if not isinstance(entry.get("description"), str):
        missing.append("a string `description`")
    # The daemon reads `input_schema` as any JSON value but requires the key; a value that is
    # not a schema object is the written contract's business (a warning of tools.schema).
    if "input_schema" not in entry:
        missing.append("an `input_schema`")
    if missing:
        return f"tools[{index}] ({short(entry['name'])}) needs {' and '.join(missing)}"
    return None


def _jsonrpc_problem(message: dict[str, Any]) -> str | None:
    """What makes ``message`` not a JSON-RPC 2.0 request, notification or response."""
    if "jsonrpc" not in message:
        return "frame has no `jsonrpc` member"
    if message["jsonrpc"] != "2.0":
        return f'`jsonrpc` must be "2.0", got {short(message["jsonrpc"])}'
    if "method" in message:
        if not isinstance(message["method"], str):
            return "`method` must be a string"
        if "result" in message or "error" in message:
            return "a frame is a request or a response, not both `method` and a result"
        params = message.get("params")
        if params is not None and not isinstance(params, dict | list):
            return "`params` must be an object or an array"
        return None
    if "id" not in message:
        return "response has no `id`"
    if not isinstance(message["id"], int | str) and message["id"] is not None:
        return "`id` must be an integer or a string"
    has_result, has_error = "result" in message, "error" in message
    if has_result == has_error:
        return "a response needs exactly one of `result` and `error`"
    if has_error:
        error = message["error"]
        if not isinstance(error, dict):
            return "`error` must be an object"
        if type(error.get("code")) is not int:
            return "`error.code` must be an integer"
        if not isinstance(error.get("message"), str):
            return "`error.message` must be a string"
    return None


def _tool_error_data_problem(code: int, data: object) -> str | None:
    """The contract's ``data`` shapes: ``{details}`` for -33402, ``{retry_after_ms}``
    for -33404, always an object when present."""
    if data is None:
        return None
    if not isinstance(data, dict):
        return "`error.data` must be an object"
    if code == -33404 and "retry_after_ms" in data:
        retry = data["retry_after_ms"]
        if type(retry) is not int or retry < 0:
            return "`error.data.retry_after_ms` must be a non-negative integer"
    return None


def _schema_problem(name: str, entry: dict[str, Any]) -> str | None:
    """Why ``entry["input_schema"]`` is not a valid JSON Schema, or None."""
    schema = entry.get("input_schema")
    if not isinstance(schema, dict):
        return (
            f"{name}: `input_schema` should be a JSON Schema object, got {short(schema)} "
            "(the daemon passes it to the model as it is)"
        )
    from jsonschema import exceptions, validators  # noqa: PLC0415 - costly import

    try:
        with warnings.catch_warnings():
            # An unknown "$schema" makes jsonschema fall back to the latest draft (a warning).
            warnings.simplefilter("ignore")
            validator = validators.validator_for(schema)
            validator.check_schema(schema)
    except exceptions.SchemaError as error:
        where = "/".join(str(part) for part in error.absolute_path) or "(root)"
        return f"{name}: invalid input_schema at {where}: {error.message}"
    except RecursionError:
        return f"{name}: input_schema is nested too deeply to check"
    except Exception as error:  # noqa: BLE001 - a hostile schema must not crash the check
        return f"{name}: input_schema cannot be checked ({type(error).__name__})"
    return None


def _error_text(reply: Reply) -> str:
    error = reply.error or {}
    code = f"{error['code']} " if "code" in error else ""
    text = f"{code}{error.get('message', '')}".rstrip()
    if "data" in error:
        text += f" data={short(error['data'])}"
    return truncate(text)
