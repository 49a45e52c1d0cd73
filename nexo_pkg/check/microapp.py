"""``nexo plugin check`` on a microapp: a host modelled on the daemon's extension runtime.

The session does what ``StdioRuntime`` (``crates/extensions/src/runtime/stdio.rs`` @
``eec3f33``) and the daemon's boot do with a stdio extension, in order:

1. spawn ``[transport] command`` with its ``args`` in the microapp's root, with the
   environment the host builds (:func:`~nexo_pkg.check.microapp_wire.child_environment`; a
   scratch directory stands in for ``$NEXO_HOME/extensions/<id>/state``); no sandbox;
2. ``initialize`` as id 0 with ``{agent_version, extension_id}`` within the handshake
   deadline, its result decoded as ``HandshakeInfo``;
3. the tools and hooks the daemon registers from it, with their LLM-visible names;
4. ``tools/list`` as ``nexo ext doctor --runtime`` calls it, one ``hooks/<name>`` call per
   registered hook with an event of the daemon's shape, and with ``invoke`` one
   ``tools/call {name, arguments}``;
5. ``shutdown`` as the host performs it: the frame is queued and the child killed at once.

Every stdout line is read as the host's reader reads it: replies are matched by numeric id,
``app:`` requests go to a mock admin router answering with the dispatcher's codes, and
notifications, other string ids, undecodable and late frames are dropped (reported).

Two levels, like the plugin check: **fail** where the daemon does not load the microapp or
a call fails (no reply in time, an exit, an ``initialize`` result it cannot decode, an admin
request it denies); **warn** where the daemon tolerates something a microapp author should
know about (skipped hooks, a dropped frame, hashed or colliding tool names) or where only
the contract page asks for something the daemon does not do. ``strict`` fails on warnings.
"""

from __future__ import annotations

import math
import os
import shlex
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nexo_pkg.check import frame_json
from nexo_pkg.check.host import PluginProcess
from nexo_pkg.check.microapp_target import AdminGrants, MicroappTarget, load_grants
from nexo_pkg.check.microapp_wire import (
    ADMIN_CAPABILITY_NOT_GRANTED,
    ADMIN_INTERNAL,
    ADMIN_METHOD_NOT_FOUND,
    ADMIN_METHODS,
    CALL_TIMEOUT_SECONDS,
    CHILD_EXITED_CODE,
    HANDSHAKE_TIMEOUT_SECONDS,
    SAMPLE_SESSION_ID,
    HandshakeInfo,
    child_environment,
    decode_handshake,
    fit_name,
    hook_reply_surprises,
    hook_response_problem,
    numeric_id,
    response_fields,
    response_problem,
    sample_hook_event,
)
from nexo_pkg.check.refusal import lint_refusal
from nexo_pkg.check.report import CheckReport, Status
from nexo_pkg.check.rpc import DEFAULT_TIMEOUT_MS, FrameLoop, NoReply, Pending, Reply
from nexo_pkg.check.sandbox import SandboxPlan
from nexo_pkg.check.scratch import scratch_directory
from nexo_pkg.check.target import is_script, python_entry_instead
from nexo_pkg.check.text import CHECK_AGENT_ID, encode_frame, exit_text, short, truncate
from nexo_pkg.core import posix
from nexo_pkg.core.files import open_regular
from nexo_pkg.manifest.microapp import EXT_NAME_PREFIX, HOOK_NAMES, env_is_blocked

#: The reason ``main`` gives every runtime at exit (``src/main.rs:5627-5641``).
SHUTDOWN_REASON = "sigterm"

#: What the report says about confinement, everywhere it says it.
NOT_SANDBOXED = (
    "not sandboxed: the daemon's extension host runs a microapp as a plain child process "
    "with the daemon's user, files and network"
)

SHUTDOWN_NOTE = (
    "the daemon's host does: it cancels the runtime before it queues the shutdown frame and "
    "kills the child at once (stdio.rs:374-381,968-976), so the frame is almost never "
    "delivered and a microapp must not rely on it to flush state"
)

_STDERR_PREFIXES = ("[INFO]", "[WARN]", "[ERROR]", "[DEBUG]", "[TRACE]")
_DETAIL_LIMIT = 200
# What of a script is read for its `#!` line when its interpreter is missing.
_SHEBANG_BYTES = 4096


@dataclass
class MicroappReport(CheckReport):
    """A :class:`CheckReport` with what the extension host derived from the microapp."""

    microapp: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The plugin document plus ``kind: "microapp"`` and a ``microapp`` section."""
        document = super().to_json()
        document["kind"] = "microapp"
        document["microapp"] = self.microapp
        return document


def run_microapp(
    target: MicroappTarget,
    *,
    timeout_ms: int | None,
    agent_version: str,
    invoke: tuple[str, dict[str, Any]] | None,
    strict: bool,
    config: Path | None,
) -> MicroappReport:
    """Run the extension host's session against ``target`` and report every check.

    ``timeout_ms`` bounds each reply (and never beyond the daemon's 10 s for ``initialize``,
    30 s for a call); without it, ``initialize`` gets the host's 10 s, the ``--invoke`` call
    the host's 30 s, and every other reply :data:`~nexo_pkg.check.rpc.DEFAULT_TIMEOUT_MS`.
    The mock admin router allows the grants
    of the daemon's configuration directory (``config``, else ``NEXO_CONFIG_DIR``,
    ``./config``, ``$NEXO_HOME/config``). Misbehaviour is reported, never raised; the child
    and everything it started are killed and reaped on every path. Raises
    :class:`~nexo_pkg.core.errors.ConfigError` (exit 2) for an unreadable ``extensions.yaml``.
    """
    from nexo_pkg.manifest.daemon_config import config_dir  # noqa: PLC0415 - only for microapps

    grants = load_grants(target, config_dir(config))
    argv = [_program(target), *target.args]
    # Windows runs no `#!` script: the Python entry the launcher runs, as for a plugin.
    entry_env: dict[str, str] = {}
    entry_note = None
    launcher = Path(argv[0])
    if (
        not posix.POSIX
        and launcher.is_relative_to(target.root)
        and launcher.is_file()
        and is_script(launcher)
    ):
        entry_argv, entry_env, entry_note = python_entry_instead(target.root, launcher, {})
        argv = [*entry_argv, *target.args]
    # The extension host never wraps the command: a plugin report's section, unwrapped.
    unwrapped = SandboxPlan(argv, NOT_SANDBOXED, target.manifest_path.name, enabled=False)
    report = MicroappReport(
        plugin_id=target.extension_id,
        root=str(target.root),
        argv=argv,
        strict=strict,
        sandbox=unwrapped.to_json(),
    )
    for note in target.notes:
        report.add("manifest", "warn", note)
    if entry_note is not None:
        report.add("manifest", "warn", entry_note)
    if grants.not_loaded is not None:
        report.add("discovery", "warn", f"{grants.not_loaded}; checked all the same")
    with scratch_directory("nexo-check-state-") as scratch:
        state_dir = scratch / "extensions" / target.extension_id / "state"
        state_dir.mkdir(parents=True)
        env, removed = child_environment(
            os.environ,
            extension_id=target.extension_id,
            agent_version=agent_version,
            state_dir=str(state_dir),
        )
        env.update(entry_env)
        report.microapp = _describe(target, grants, removed, agent_version)
        refusal = lint_refusal(target.manifest_path, agent_version)
        if refusal is not None:
            # Discovery refuses the manifest (discovery.rs:251-303): the daemon never spawns it.
            report.add("manifest", "fail", refusal)
            report.add("spawn", "fail", "not started: its manifest does not lint (see `manifest`)")
            return report
        _check_requires(target, report)
        try:
            process = PluginProcess(argv, cwd=target.root, env=env)
        except OSError as error:
            report.add("spawn", "fail", _spawn_failure(target, argv[0], error))
            return report
        with process:
            report.add(
                "spawn",
                "pass",
                f"started `{shlex.join(argv)}` (pid {process.pid}) in {target.root}; "
                + NOT_SANDBOXED,
            )
            report.add("environment", "pass", _environment_detail(removed, state_dir))
            session = _Session(process, target, report, timeout_ms, grants)
            try:
                session.run(agent_version, invoke)
            finally:
                session.add_frame_checks()
                session.add_admin_check()
        report.stderr_tail = list(process.stderr_tail)
        _check_stderr(report, process.stderr_stopped_detail("stdio.rs:930-944"))
    return report


def _program(target: MicroappTarget) -> str:
    """``Command::new(command)`` with ``current_dir(root)``: a path with a slash is relative
    to the root; a bare name is looked up on PATH."""
    if "/" in target.command:
        return str(target.root / target.command)  # an absolute path stays as it is
    return shutil.which(target.command) or target.command


def _spawn_failure(target: MicroappTarget, program: str, error: OSError) -> str:
    """The daemon's ``StartError::Spawn``, with its shebang diagnosis (``stdio.rs:598-651``)."""
    reason = error.strerror or str(error)
    hint = ""
    script = Path(program)
    if isinstance(error, FileNotFoundError) and script.is_file():
        try:
            # Its first line only (the kernel reads no more than 256 bytes of it): a huge script
            # is not read whole, a FIFO swapped in never blocks.
            with open_regular(script, follow_links=True) as handle:
                head = handle.read(_SHEBANG_BYTES)
            first = head.decode("utf-8", errors="replace").splitlines()[:1]
        except OSError:
            first = []
        if first and first[0].startswith("#!"):
            words = first[0][2:].split()
            if words[:1] == ["/usr/bin/env"] and len(words) > 1:
                words = words[1:]
            hint = f"; shebang interpreter `{words[0] if words else ''}` not found on this host"
    return (
        f"cannot start {program}: {reason}{hint} (the daemon logs `extension spawn failed` "
        f"and {target.extension_id} does not load)"
    )


def _describe(
    target: MicroappTarget, grants: AdminGrants, removed: list[str], agent_version: str
) -> dict[str, Any]:
    return {
        "id": target.extension_id,
        "manifest": str(target.manifest_path),
        "transport": {
            "kind": target.transport_kind,
            "command": target.command,
            "args": list(target.args),
        },
        "cwd": str(target.root),
        "sandboxed": False,
        "sandbox": NOT_SANDBOXED,
        "environment": {
            "cleared": True,
            "removed": removed,
            "stamped": ["AGENT_VERSION", "AGENT_EXTENSION_ID", "NEXO_EXTENSION_STATE_ROOT"],
            "agent_version": agent_version,
        },
        "admin": {
            "router": router_wired(target, grants),
            "required": list(target.admin_required),
            "optional": list(target.admin_optional),
            "granted": sorted(grants.granted),
            "grants_from": grants.source,
        },
        "tools": [],
        "hooks": {"registered": [], "skipped": []},
        "shutdown": SHUTDOWN_NOTE,
    }


def router_wired(target: MicroappTarget, grants: AdminGrants) -> bool:
    """Whether the daemon wires an admin router for ``target``: its companion declares admin
    capabilities under its id, and every required one is granted (else the admin bootstrap
    fails and admin RPC is off for every microapp, ``src/main.rs:1653-1656``)."""
    return target.admin_router and set(target.admin_required) <= grants.granted


def _environment_detail(removed: list[str], state_dir: Path) -> str:
    names = truncate(", ".join(removed), _DETAIL_LIMIT)
    stripped = (
        f"{len(removed)} blocklisted variable(s) removed ({names})"
        if removed
        else "no blocklisted variable to remove"
    )
    return (
        f"cleared and refilled as the host does: {stripped}; AGENT_VERSION, "
        f"AGENT_EXTENSION_ID and NEXO_EXTENSION_STATE_ROOT={state_dir} stamped"
    )


def _check_requires(target: MicroappTarget, report: CheckReport) -> None:
    """``[requires]``: the daemon skips a microapp whose bins or env are missing at boot
    (``src/main.rs:6602-6614``), and strips blocklisted names from the child."""
    if not target.requires_bins and not target.requires_env:
        return
    problems: list[str] = []
    missing_bins = [name for name in target.requires_bins if not _bin_on_path(name)]
    # `std::env::var_os(k).map(|v| v.is_empty()).unwrap_or(true)`: set but empty is missing.
    missing_env = [name for name in target.requires_env if not os.environ.get(name)]
    if missing_bins or missing_env:
        missing = ", ".join([*missing_bins, *missing_env])
        problems.append(
            f"missing here: {missing} (a daemon missing them skips the microapp at boot)"
        )
    stripped = [name for name in target.requires_env if env_is_blocked(name)]
    if stripped:
        problems.append(
            f"requires.env {', '.join(stripped)} passes the boot check but the host strips "
            "it from the child's environment (secret blocklist, stdio.rs:26-46)"
        )
    report.judge(
        "requires",
        "; ".join(problems) if problems else None,
        "warn",
        "every [requires] bin and env variable is present",
    )


def _bin_on_path(name: str) -> bool:
    """``Requires::missing`` (``crates/extensions/src/manifest.rs:220-233``): some ``PATH``
    directory joined with ``name`` is a regular file; executable or not, as the daemon
    looks."""
    path = os.environ.get("PATH")
    if path is None:
        return False
    return any((Path(directory) / name).is_file() for directory in path.split(os.pathsep))


def _check_stderr(report: CheckReport, stopped: str | None) -> None:
    """The contract page asks for ``[INFO]``-style prefixes; the host logs every line at
    WARN whatever it says (``stdio.rs:930-944``), and stops reading at one that is not UTF-8
    (``stopped`` says so)."""
    if stopped is not None:
        report.add("stderr", "warn", stopped)
        return
    unprefixed = [
        line
        for line in report.stderr_tail
        if line.strip() and not line.startswith(_STDERR_PREFIXES)
    ]
    report.judge(
        "stderr",
        f"{len(unprefixed)} stderr line(s) without an [INFO]/[WARN]/[ERROR] prefix, which "
        f"the contract page asks for (first: {short(unprefixed[0])}); the daemon logs "
        "every stderr line at WARN as `extension stderr` whatever its prefix"
        if unprefixed
        else None,
        "warn",
        "the daemon logs every stderr line at WARN as `extension stderr`, prefix or not",
    )


class _Session(FrameLoop):
    """One conversation with the microapp, as the extension host holds it."""

    def __init__(
        self,
        process: PluginProcess,
        target: MicroappTarget,
        report: MicroappReport,
        timeout_ms: int | None,
        grants: AdminGrants,
    ) -> None:
        super().__init__(process, (DEFAULT_TIMEOUT_MS if timeout_ms is None else timeout_ms) / 1000)
        # The host's own handshake and call deadlines, unless --timeout-ms asks for less.
        given = math.inf if timeout_ms is None else timeout_ms / 1000
        self.handshake_seconds = min(HANDSHAKE_TIMEOUT_SECONDS, given)
        self.call_seconds = min(CALL_TIMEOUT_SECONDS, given)
        self.target = target
        self.report = report
        self.grants = grants
        self.router = router_wired(target, grants)
        # The tools initialize advertised (what the daemon registers).
        self.advertised: list[str] = []
        # Worst verdict and details of the admin requests seen.
        self._admin: list[tuple[Status, str]] = []
        # The daemon binds the admin router's writer once the handshake is done.
        self._writer_bound = False

    def run(self, agent_version: str, invoke: tuple[str, dict[str, Any]] | None) -> None:
        """Every step in order; stops once a step leaves nothing to talk to."""
        if (
            self._initialize(agent_version)
            and self._tools_list()
            and self._hooks()
            and (invoke is None or self._invoke(*invoke))
        ):
            self._shutdown()

    def _initialize(self, agent_version: str) -> bool:
        params = {"agent_version": agent_version, "extension_id": self.target.extension_id}
        frame = {"jsonrpc": "2.0", "method": "initialize", "params": params, "id": 0}
        answer = self.exchange(frame, timeout=self.handshake_seconds)
        self._writer_bound = True
        self.report.timings["initialize_ms"] = (time.monotonic() - self.process.started_at) * 1000
        if isinstance(answer, NoReply):
            self.report.add(
                "initialize",
                "fail",
                f"no reply to initialize (id 0): {answer.detail}; the daemon waits "
                f"{HANDSHAKE_TIMEOUT_SECONDS:g} s, then the microapp does not load",
            )
            return False
        if answer.error is not None:
            self.report.add(
                "initialize",
                "fail",
                f"initialize answered with an error {_error_text(answer.error)}; the daemon "
                "fails the handshake (StartError::Handshake) and the microapp does not load",
            )
            return False
        decoded = decode_handshake(answer.result)
        replied = f"id 0 with {{agent_version, extension_id}} replied in {answer.elapsed_ms:.0f} ms"
        if isinstance(decoded, str):
            # The daemon's initialize itself fails (stdio.rs:829-830): say so on both lines.
            self.report.add(
                "initialize",
                "fail",
                f"{replied}, but the daemon cannot decode the result (see `handshake`): "
                "StartError::DecodeHandshake, the microapp does not load",
            )
            self.report.add(
                "handshake",
                "fail",
                f"the daemon cannot decode the initialize result: {decoded} "
                "(StartError::DecodeHandshake: the microapp does not load); it expects "
                '{"server_version", "tools": [{"name", "description", "input_schema"}], '
                '"hooks": ["before_message", ...]}',
            )
            return False
        self.report.add("initialize", "pass", replied)
        self.advertised = [tool.name for tool in decoded.tools]
        self._check_handshake(answer.result, decoded)
        self._check_tools(decoded)
        self._check_hooks(decoded)
        return True

    def _check_handshake(self, result: dict[str, Any], info: HandshakeInfo) -> None:
        contract_keys = [key for key in ("version", "server_info") if key in result]
        if contract_keys:
            keys = " and ".join(f"`{key}`" for key in contract_keys)
            self.report.add(
                "handshake",
                "warn",
                f"decodes, but the daemon ignores {keys}; it reads only server_version, "
                "tools and hooks",
            )
        else:
            version = (
                f"server_version {info.server_version!r}"
                if info.server_version
                else ("no server_version (optional)")
            )
            self.report.add(
                "handshake", "pass", f"decodes as the daemon's HandshakeInfo; {version}"
            )

    def _check_tools(self, info: HandshakeInfo) -> None:
        extension_id = self.target.extension_id
        if not info.tools:
            self.report.add("tools", "pass", "no tools advertised (the daemon registers none)")
            return
        defaulted = [
            f"{tool.name} ({', '.join(tool.defaulted)})" for tool in info.tools if tool.defaulted
        ]
        not_objects = [tool.name for tool in info.tools if not isinstance(tool.input_schema, dict)]
        problems = []
        if defaulted:
            problems.append(
                f"no description/input_schema for {', '.join(defaulted)}: the daemon uses "
                '"" and {}, so the model gets no guidance'
            )
        if not_objects:
            problems.append(
                f"input_schema of {', '.join(not_objects)} is not a JSON object; the daemon "
                "passes it to the model as it is"
            )
        self.report.judge(
            "tools",
            truncate("; ".join(problems), _DETAIL_LIMIT) if problems else None,
            "warn",
            f"{len(info.tools)} tool(s) advertised",
        )

        names: dict[str, list[str]] = {}
        hashed: list[str] = []
        listed: list[dict[str, str]] = []
        for tool in info.tools:
            llm_name = fit_name(EXT_NAME_PREFIX, extension_id, tool.name)
            listed.append({"name": tool.name, "llm_name": llm_name})
            if llm_name != f"{EXT_NAME_PREFIX}{extension_id}_{tool.name}" and (
                llm_name not in names
            ):
                hashed.append(llm_name)
            names.setdefault(llm_name, []).append(tool.name)
        self.report.microapp["tools"] = listed
        collisions = [name for name, tools in names.items() if len(tools) > 1]
        problems = []
        if hashed:
            problems.append(
                f"{len(hashed)} name(s) over 64 characters are cut and hashed by the daemon "
                f"(fit_name): {', '.join(hashed)}"
            )
        if collisions:
            problems.append(
                f"colliding names: {', '.join(collisions)} come from more than one tool "
                "(register_if_absent keeps the first and skips the rest)"
            )
        self.report.judge(
            "tools.names",
            "; ".join(problems) if problems else None,
            "warn",
            truncate(f"the model sees {', '.join(names)} (ext_<id>_<tool>)", _DETAIL_LIMIT),
        )
        prefix = f"{extension_id}_"
        outside = [tool.name for tool in info.tools if not tool.name.startswith(prefix)]
        self.report.judge(
            "tools.namespace",
            truncate(
                f"tool(s) {', '.join(outside)} do not start with {prefix!r}, which the "
                "contract page asks for; the daemon does not check it and names every tool "
                f"{EXT_NAME_PREFIX}{extension_id}_<tool> itself",
                _DETAIL_LIMIT,
            )
            if outside
            else None,
            "warn",
            f"every tool starts with {prefix!r} (the contract page's rule; the daemon "
            f"adds {EXT_NAME_PREFIX}{extension_id}_ in front)",
        )

    def _check_hooks(self, info: HandshakeInfo) -> None:
        registered = [hook for hook in info.hooks if hook in HOOK_NAMES]
        skipped = [hook for hook in info.hooks if hook not in HOOK_NAMES]
        self.report.microapp["hooks"] = {"registered": registered, "skipped": skipped}
        if skipped:
            self.report.add(
                "hooks",
                "warn",
                f"the daemon skips unknown hook(s) {', '.join(map(repr, skipped))} with a "
                f"warning (src/main.rs:4382-4391); it knows {', '.join(HOOK_NAMES)}",
            )
        else:
            registers = f"registers {', '.join(registered)}" if registered else "no hooks"
            self.report.add("hooks", "pass", registers)

    def _tools_list(self) -> bool:
        """``tools/list`` as ``nexo ext doctor --runtime`` calls it; the runtime never does."""
        answer = self.call("tools/list", {})
        if isinstance(answer, NoReply):
            if answer.reason == "timeout":
                self.report.add(
                    "tools.list",
                    "warn",
                    f"no reply to tools/list: {answer.detail} (only `nexo ext doctor "
                    "--runtime` calls it; the daemon registers tools from initialize)",
                )
                return True
            self.report.add("tools.list", "fail", f"no reply to tools/list: {answer.detail}")
            return False
        if answer.error is not None:
            self.report.add(
                "tools.list",
                "warn",
                f"tools/list answered {_error_text(answer.error)}; `nexo ext doctor --runtime` "
                "reports that as a failure (the daemon itself never calls it)",
            )
            return True
        result = answer.result
        tools = result.get("tools") if isinstance(result, dict) and "tools" in result else result
        decoded = decode_handshake({"tools": tools})
        if isinstance(decoded, str):
            self.report.add(
                "tools.list",
                "warn",
                f"`nexo ext doctor --runtime` cannot decode the tools/list result: {decoded}",
            )
        elif [tool.name for tool in decoded.tools] != self.advertised:
            self.report.add(
                "tools.list",
                "warn",
                truncate(
                    f"tools/list names {[tool.name for tool in decoded.tools]} but initialize "
                    f"advertised {self.advertised}; the contract page asks for the same list, and "
                    "the daemon registers only initialize's tools",
                    _DETAIL_LIMIT,
                ),
            )
        else:
            self.report.add("tools.list", "pass", "the same tools as initialize")
        return True

    def _hooks(self) -> bool:
        """One ``hooks/<name>`` call per registered hook, with an event of the daemon's shape."""
        for hook in self.report.microapp["hooks"]["registered"]:
            answer = self.call(f"hooks/{hook}", sample_hook_event(hook))
            name = f"hook.{hook}"
            if isinstance(answer, NoReply):
                status: Status = "warn" if answer.reason == "timeout" else "fail"
                self.report.add(
                    name,
                    status,
                    f"no reply: {answer.detail} (a hook that fails or times out fails open "
                    "in the daemon, after its 30 s call timeout)",
                )
                if status == "fail":
                    return False
                continue
            if answer.error is not None:
                self.report.add(
                    name,
                    "warn",
                    f"answered {_error_text(answer.error)}; the daemon logs it and goes on "
                    "(hooks fail open)",
                )
                continue
            problem = hook_response_problem(answer.result)
            if problem is not None:
                self.report.add(
                    name,
                    "warn",
                    f"the reply does not decode as HookResponse ({problem}); the daemon logs "
                    "it and goes on as if the hook allowed the event",
                )
            elif isinstance(answer.result, dict) and "vote" in answer.result:
                self.report.add(
                    name,
                    "warn",
                    f"replied {short(answer.result)}: the daemon ignores `vote` (the contract "
                    'page\'s shape), so a "deny" vote does not block; return {"abort": true, '
                    '"reason": "..."} to block a before_* event',
                )
            elif isinstance(answer.result, dict) and (
                surprises := hook_reply_surprises(hook, answer.result)
            ):
                self.report.add(
                    name, "warn", f"replied {short(answer.result)}: {'; '.join(surprises)}"
                )
            else:
                self.report.add(name, "pass", f"replied {short(answer.result)}")
        return True

    def _invoke(self, tool: str, arguments: dict[str, Any]) -> bool:
        if tool not in self.advertised:
            self.report.add(
                "invoke.tool",
                "warn",
                f"{tool!r} is not among the advertised tools {self.advertised}; the daemon would "
                "never call it (the call is sent anyway)",
            )
        if self.target.context_passthrough:
            # [context] passthrough: the daemon adds `_meta` (extension_tool.rs:133-158).
            meta = {"agent_id": CHECK_AGENT_ID, "session_id": SAMPLE_SESSION_ID}
            arguments = {**arguments, "_meta": meta}
        record: dict[str, Any] = {"tool": tool, "args": arguments}
        self.report.invoke = record
        # The daemon gives the call its 30 s (stdio.rs:71): a slow tool is no failure here.
        params = {"name": tool, "arguments": arguments}
        answer = self.call("tools/call", params, timeout=self.call_seconds)
        if isinstance(answer, NoReply):
            record["error"] = {"message": answer.detail}
            self.report.add("invoke", "fail", f"no reply to tools/call: {answer.detail}")
            return False
        if answer.error is not None:
            record["error"] = answer.error
            status: Status = "pass" if answer.error.get("code") == -32602 else "warn"
            self.report.add(
                "invoke",
                status,
                f"answered {_error_text(answer.error)}: the tool call fails and the error "
                "counts toward the host's circuit breaker (5 failures open it)",
            )
            return True
        record["result"] = answer.result
        result = answer.result
        if isinstance(result, dict) and set(result) <= {"output", "error"} and result:
            self.report.add(
                "invoke",
                "warn",
                f"result {short(result)} uses the contract page's {{output}}/{{error}} "
                "envelope; the daemon passes the result to the model as it is, envelope "
                "included, and a {error} result is not a failure",
            )
        else:
            self.report.add(
                "invoke", "pass", f"result (passed to the model as it is): {short(result)}"
            )
        return True

    def _shutdown(self) -> None:
        if self.process.has_exited():
            code = self.process.peek_exit_code()
            self.report.add(
                "shutdown",
                "fail",
                f"the microapp exited on its own {exit_text(code)} during the session; the "
                "daemon fails its pending calls with -32000 and restarts it (at most 5 times "
                "in 300 s)",
            )
            return
        params = {"reason": SHUTDOWN_REASON}
        frame = {"jsonrpc": "2.0", "method": "shutdown", "params": params, "id": 0}
        # The host queues the frame, then its supervisor kills the child straight away.
        self.process.send(encode_frame(frame), deadline=time.monotonic() + 0.05)
        self.process.kill()
        self.report.add(
            "shutdown",
            "pass",
            f"sent shutdown {{reason: {SHUTDOWN_REASON!r}}} as id 0 and killed the child at "
            f"once, as {SHUTDOWN_NOTE}",
        )

    def call(
        self,
        method: str,
        params: dict[str, Any],
        *,
        request_id: int | None = None,
        timeout: float | None = None,
    ) -> Reply | NoReply:
        """Send one request (``wire::encode``; the next numeric id unless one is given) and
        read frames as the host's reader does until its reply, ``timeout`` seconds (by default
        ``--timeout-ms``, never beyond the host's call timeout) or the child's exit."""
        request_id = next(self._ids) if request_id is None else request_id
        frame = {"jsonrpc": "2.0", "method": method, "params": params, "id": request_id}
        if timeout is None:
            timeout = min(self.timeout_seconds, CALL_TIMEOUT_SECONDS)
        return self.exchange(frame, timeout=timeout)

    def oversize(self, size: int) -> None:
        self._drop(
            f"a stdout line of over {size} bytes (beyond the check's memory cap; "
            "the daemon would read it)"
        )

    def gone(self, code: int | None, *, sending: bool) -> NoReply:
        if code is None:
            what = "stdin" if sending else "stdout"
            return NoReply("closed", f"the microapp closed its {what} but is still running")
        return NoReply(
            "exited",
            f"the microapp exited {exit_text(code)}; the host answers every pending call "
            f'with {CHILD_EXITED_CODE} "child exited"',
        )

    def read_line(self, line: bytes, pending: Pending) -> Reply | None:
        """``process_inbound_line`` (``stdio.rs:841-892``): the host takes a frame with the
        pending numeric id as the reply, drops the rest, and stops at a non-UTF-8 line."""
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            # `BufReader::lines` fails on invalid UTF-8 and the reader task ends
            # (stdio.rs:920-923): nothing the microapp writes afterwards is read.
            self._frames.note(
                "frames.utf8",
                f"stdout line is not UTF-8 ({short(line)}); the host's reader stops there",
            )
            self.stopped = NoReply("reader", "the host's reader stopped at a non-UTF-8 line")
            return None
        if not text.strip():
            self._drop("a blank stdout line (invalid jsonrpc line)")
            return None
        try:
            message = frame_json.loads(text, repeated_keys=True)
        except ValueError as refused:
            self._drop(f"non-JSON stdout line ({refused}) {short(text)}")
            return None
        message = response_fields(message)
        problem = response_problem(message)
        if problem is not None or not isinstance(message, dict):
            self._drop(f"{problem}: {short(text)}")
            return None
        frame_id = message.get("id")
        if frame_id is None:
            self._drop(
                f"notification {short(message.get('method', text))} (the host ignores frames "
                "without an id)"
            )
            return None
        if isinstance(frame_id, str):
            if frame_id.startswith("app:"):
                self._admin_frame(message)
            else:
                self._drop(f"string id {short(frame_id)} without the app: prefix")
            return None
        number = numeric_id(frame_id)
        if number is None:
            self._drop(f"non-numeric id {short(frame_id)}")
            return None
        if number != pending.request_id:
            self._drop(f"a reply with id {number}, for which no call is pending")
            return None
        if "method" in message:
            self._drop(
                f"request {short(message['method'])} with numeric id {number}: the host takes "
                "any frame with a numeric id as a reply"
            )
        result = message.get("result")
        error = message.get("error")
        if result is not None or not isinstance(error, dict):
            return pending.reply(result, None)
        return pending.reply(None, error)

    def _admin_frame(self, frame: dict[str, Any]) -> None:
        """The mock admin router: ``DispatcherAdminRouter::handle_frame`` (``admin_rpc/
        router.rs:74-154``) over ``AdminRpcDispatcher::dispatch`` (``dispatcher.rs:610-687``)."""
        frame_id = frame["id"]
        method = frame.get("method")
        if not self.target.admin_router:
            self._verdict(
                "warn",
                f"{short(method)} ({frame_id}) dropped: no admin router is wired for this "
                "microapp (its nexo-plugin.toml declares no admin capabilities under this "
                "id), so it waits for its own timeout",
            )
            return
        if not self.router:
            missing = sorted(set(self.target.admin_required) - self.grants.granted)
            self._verdict(
                "fail",
                f"{short(method)} ({frame_id}) dropped: required capabilities "
                f"{', '.join(missing)} are not granted ({self.grants.source}), so the "
                "daemon's admin bootstrap fails and admin RPC is off for every microapp",
            )
            return
        if not isinstance(method, str):
            return  # A response to nothing: the router drops it (router.rs:90-102).
        if not self._writer_bound:
            # The router runs it, but the answer goes to a writer that is bound to the
            # microapp's stdin only after the handshake (src/main.rs:6630-6643), and is dropped
            # (admin_adapters.rs:1383-1397).
            self._verdict(
                "warn",
                f"{short(method)} ({frame_id}) sent before the initialize reply: the daemon's "
                "router runs it, but drops the answer (its writer is bound to the microapp's "
                "stdin only once the handshake is done), so the microapp waits for its own "
                "timeout; send admin requests after answering initialize",
            )
            return
        capability = ADMIN_METHODS.get(method)
        if capability is None:
            note = (
                " (nexo/dispatch is on the contract page but not in the daemon)"
                if method == "nexo/dispatch"
                else ""
            )
            self._verdict(
                "warn", f"{short(method)} answered {ADMIN_METHOD_NOT_FOUND}: unknown method{note}"
            )
            message = f"method_not_found: no admin handler registered for `{method}`"
            self._respond(frame_id, error={"code": ADMIN_METHOD_NOT_FOUND, "message": message})
            return
        if capability not in self.grants.granted:
            optional = capability in self.target.admin_optional
            why = (
                "an optional capability the operator may withhold; handle the denial"
                if optional
                else "not declared in nexo-plugin.toml's [plugin.capabilities.admin], so no "
                "operator grant is expected"
                if capability not in self.target.admin_required
                else "required but not granted"
            )
            self._verdict(
                "warn" if optional else "fail",
                f"{method} needs {capability!r}, not granted ({self.grants.source}): "
                f"answered {ADMIN_CAPABILITY_NOT_GRANTED} ({why})",
            )
            data = {"capability": capability, "microapp_id": self.target.extension_id}
            error = {
                "code": ADMIN_CAPABILITY_NOT_GRANTED,
                "message": f"capability_not_granted: {capability} for method {method}",
                "data": {**data, "method": method},
            }
            self._respond(frame_id, error=error)
            return
        if method == "nexo/admin/echo":
            echoed = {"echoed": frame.get("params"), "microapp_id": self.target.extension_id}
            self._respond(frame_id, result=echoed)
            self._verdict("pass", f"{method} granted ({capability}) and answered")
            return
        message = f"internal: nexo plugin check has no admin backend for {method}"
        self._respond(frame_id, error={"code": ADMIN_INTERNAL, "message": message})
        self._verdict(
            "pass", f"{method} granted ({capability}); answered {ADMIN_INTERNAL} (no backend)"
        )

    def _verdict(self, status: Status, detail: str) -> None:
        """Note how one admin request went (reported as the one ``admin`` check)."""
        self._admin.append((status, detail))

    def _respond(
        self, frame_id: object, *, result: Any = None, error: dict[str, Any] | None = None
    ) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": frame_id}
        if error is not None:
            reply["error"] = error
        else:
            reply["result"] = result
        try:
            data = encode_frame(reply)
        except (RecursionError, ValueError):
            # Params nested too deeply to echo back: the request stays unanswered.
            self._verdict("warn", "an admin request too deeply nested to answer")
            return
        self.process.send(data, deadline=time.monotonic() + self.timeout_seconds)

    def _drop(self, detail: str) -> None:
        """Count a frame the host's reader drops."""
        self._frames.note("frames.dropped", detail)

    def add_frame_checks(self) -> None:
        # The reader stops at the first non-UTF-8 line: there is never a second one.
        utf8 = self._frames.summary("frames.utf8")
        self.report.judge("frames.utf8", utf8, "fail", "every stdout line was UTF-8")
        dropped = self._frames.summary("frames.dropped")
        if dropped is not None:
            dropped = truncate(f"the host drops {dropped}", 2 * _DETAIL_LIMIT)
        self.report.judge("frames.dropped", dropped, "warn", "the host took every frame")

    def add_admin_check(self) -> None:
        if not self._admin:
            return
        order: dict[Status, int] = {"pass": 0, "warn": 1, "fail": 2}
        worst = max((status for status, _ in self._admin), key=order.__getitem__)
        details = [detail for status, detail in self._admin if status == worst]
        self.report.add("admin", worst, truncate("; ".join(details), 2 * _DETAIL_LIMIT))


def _error_text(error: dict[str, Any]) -> str:
    return truncate(f"{error.get('code')} {error.get('message', '')}".rstrip(), _DETAIL_LIMIT)
