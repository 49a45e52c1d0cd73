"""`nexo plugin check` on microapps: real subprocess microapps against a host modelled on the
daemon's extension runtime (lordmacu/nexo-rs @ eec3f33,
crates/extensions/src/runtime/stdio.rs)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo

from check.check_microapps import companion, copy_microapp, scripted_microapp
from check.check_plugins import assert_not_running, assert_reaped, process_state, recorded_pids
from nexo_pkg.check.microapp_wire import (
    ADMIN_CAPABILITY_NOT_GRANTED,
    ADMIN_INTERNAL,
    ADMIN_METHOD_NOT_FOUND,
    ADMIN_METHODS,
    decode_handshake,
    fit_name,
    hook_response_problem,
    response_problem,
)


def nexo_check(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    """Run `nexo plugin check ... --json` and return its exit code and document."""
    completed = nexo(
        "plugin",
        "check",
        *args,
        "--json",
        env={**os.environ, **(env or {})},
        cwd=cwd,
        in_process=True,
    )
    assert "Traceback" not in completed.stderr, completed.stderr
    return completed.code, json.loads(completed.stdout)


def statuses(document: dict[str, Any]) -> dict[str, str]:
    return {check["name"]: check["status"] for check in document["checks"]}


def detail(document: dict[str, Any], name: str) -> str:
    found: str = next(c["detail"] for c in document["checks"] if c["name"] == name)
    return found


def test_golden_daemon_shaped_microapp_passes(tmp_path: Path) -> None:
    """echo_ext.rs's shapes (crates/extensions/examples/echo_ext.rs:40-56) load: initialize as
    id 0 (stdio.rs:787-797), HandshakeInfo decodes (runtime/mod.rs:159-182), both hooks are in
    HOOK_NAMES, tools/call {name, arguments} (stdio.rs:351-361) answers."""
    root = copy_microapp("golden", tmp_path / "echo")
    code, document = nexo_check(
        str(root), "--invoke", "echo", "--args", '{"text": "hi"}', cwd=tmp_path
    )
    assert code == 0, document
    assert document["ok"] is True
    assert document["kind"] == "microapp"
    found = statuses(document)
    assert "fail" not in found.values()
    for name in (
        "spawn",
        "initialize",
        "handshake",
        "tools",
        "tools.names",
        "hooks",
        "tools.list",
        "hook.before_message",
        "hook.before_tool_call",
        "invoke",
        "shutdown",
    ):
        assert found[name] == "pass", (name, document)
    # The daemon's own example does not follow the contract page's `<id>_` prefix rule.
    assert found["tools.namespace"] == "warn"
    assert document["invoke"]["result"] == {"echoed": {"text": "hi"}}
    microapp = document["microapp"]
    assert microapp["sandboxed"] is False
    assert "not sandboxed" in detail(document, "spawn")
    # The same `sandbox` section as a plugin's report: no wrapper, the command as it runs.
    assert document["sandbox"]["wrapped"] is False
    assert document["sandbox"]["argv"] == document["plugin"]["command"]
    assert document["sandbox"]["reason"].startswith("not sandboxed: the daemon's extension host")
    assert microapp["tools"] == [{"name": "echo", "llm_name": "ext_echo_echo"}]
    assert microapp["hooks"] == {
        "registered": ["before_message", "before_tool_call"],
        "skipped": [],
    }
    assert "kills the child at once" in detail(document, "shutdown")


def test_a_required_plugin_sandbox_does_not_stop_a_microapp(tmp_path: Path) -> None:
    """`NEXO_PLUGIN_SANDBOX_REQUIRE` is read by the plugin host's sandbox runner
    (`SandboxRunner::discover`, plugin_sandbox.rs), which the extension host never calls: a
    microapp still starts, unsandboxed, where every plugin must be sandboxed."""
    root = copy_microapp("golden", tmp_path / "echo")
    code, document = nexo_check(str(root), cwd=tmp_path, env={"NEXO_PLUGIN_SANDBOX_REQUIRE": "1"})
    assert code == 0, document
    assert statuses(document)["spawn"] == "pass"
    assert document["microapp"]["sandboxed"] is False
    assert document["sandbox"]["refusal"] is None
    assert document["sandbox"]["wrapped"] is False
    assert "not sandboxed" in detail(document, "spawn")


def test_sdk_string_tools_fail_initialize_with_the_daemons_reason(tmp_path: Path) -> None:
    """The Rust SDK answers tools as strings (microapp-sdk/src/runtime.rs:171-181); serde
    cannot decode a string as ToolDescriptor, so StartError::DecodeHandshake
    (stdio.rs:829-830) and the microapp does not load."""
    root = copy_microapp("sdk_string_tools", tmp_path / "sdk")
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 1
    assert statuses(document)["handshake"] == "fail"
    assert 'tools[0]: invalid type: string "greet", expected struct ToolDescriptor' in detail(
        document, "handshake"
    )
    # The daemon's initialize is what fails (stdio.rs:829-830): the step says so too.
    assert statuses(document)["initialize"] == "fail"
    assert "StartError::DecodeHandshake" in detail(document, "initialize")


def test_a_hang_in_initialize_fails_and_leaves_nothing_running(tmp_path: Path) -> None:
    """No reply within the handshake deadline is StartError::HandshakeTimeout
    (stdio.rs:822-827); the child is killed and reaped."""
    pid_file = tmp_path / "pids"
    root = scripted_microapp(tmp_path / "hang", "hang")
    code, document = nexo_check(
        str(root), "--timeout-ms", "400", cwd=tmp_path, env={"FIXTURE_PID_FILE": str(pid_file)}
    )
    assert code == 1
    assert statuses(document)["initialize"] == "fail"
    assert "no reply within 400 ms" in detail(document, "initialize")
    (pid,) = recorded_pids(pid_file)
    assert_reaped(pid)


def test_initialize_gets_the_hosts_ten_seconds_unless_timeout_ms_is_given(
    tmp_path: Path,
) -> None:
    """The extension host waits `handshake_timeout` (10 s, stdio.rs:72) for `initialize`,
    not the plugin host's 5 s: a microapp answering after 5.5 s loads in the daemon, so it
    passes; an explicit --timeout-ms still bounds the wait."""
    root = scripted_microapp(tmp_path / "slow", "slow", "5.5")
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 0, document["checks"]
    assert statuses(document)["initialize"] == "pass"
    assert document["timings_ms"]["initialize_ms"] >= 5500
    code, document = nexo_check(str(root), "--timeout-ms", "5000", cwd=tmp_path)
    assert code == 1
    assert "no reply within 5000 ms; the daemon waits 10 s" in detail(document, "initialize")


def test_nothing_the_microapp_started_is_left_running(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    root = scripted_microapp(tmp_path / "child", "child")
    code, _document = nexo_check(str(root), cwd=tmp_path, env={"FIXTURE_PID_FILE": str(pid_file)})
    assert code == 0
    microapp_pid, child_pid = recorded_pids(pid_file)
    assert_reaped(microapp_pid)
    assert_not_running(child_pid)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER")
@pytest.mark.parametrize(("mode", "expected"), [("escape", 0), ("escape_hang", 1)])
def test_a_grandchild_that_escapes_with_setsid_and_a_bare_exec_is_killed_and_reaped(
    tmp_path: Path, mode: str, expected: int
) -> None:
    """Microapps as plugins: a grandchild that calls setsid(), is double-forked away and
    execs with an empty environment is gone when check returns, after a pass and after a
    timeout: killed and reaped (not even a zombie), whatever it did to hide."""
    pid_file = tmp_path / "pids"
    root = scripted_microapp(tmp_path / mode, mode)
    code, document = nexo_check(
        str(root), "--timeout-ms", "1500", cwd=tmp_path, env={"FIXTURE_PID_FILE": str(pid_file)}
    )
    assert code == expected, document["checks"]
    microapp_pid, escaped_pid = recorded_pids(pid_file)
    assert_reaped(microapp_pid)
    assert process_state(escaped_pid) is None


def test_an_exit_during_a_call_fails_the_call(tmp_path: Path) -> None:
    """On child exit every pending call gets -32000 "child exited" (stdio.rs:1087-1098)."""
    pid_file = tmp_path / "pids"
    root = scripted_microapp(tmp_path / "exit", "exit")
    code, document = nexo_check(
        str(root),
        "--invoke",
        "scripted_probe",
        cwd=tmp_path,
        env={"FIXTURE_PID_FILE": str(pid_file)},
    )
    assert code == 1
    assert statuses(document)["invoke"] == "fail"
    assert "exited with code 3" in detail(document, "invoke")
    assert "-32000" in detail(document, "invoke")
    assert "shutdown" not in statuses(document)
    (pid,) = recorded_pids(pid_file)
    assert_reaped(pid)


def test_a_tool_call_gets_the_hosts_thirty_seconds_unless_timeout_ms_is_given(
    tmp_path: Path,
) -> None:
    """StdioSpawnOptions::default() gives every call 30 s (stdio.rs:71; the boot spawns with
    the defaults, src/main.rs:6620-6634): a tool answering in 6 s works in the daemon."""
    root = scripted_microapp(tmp_path / "slow", "slow_call", "6")
    code, document = nexo_check(str(root), "--invoke", "scripted_probe", cwd=tmp_path)
    assert code == 0, document
    assert statuses(document)["invoke"] == "pass"
    code, document = nexo_check(
        str(root), "--invoke", "scripted_probe", "--timeout-ms", "1000", cwd=tmp_path
    )
    assert code == 1
    assert "no reply within 1000 ms" in detail(document, "invoke")


def test_a_hook_vote_is_a_warning_that_says_the_daemon_ignores_it(tmp_path: Path) -> None:
    """HookResponse has no `vote` (runtime/mod.rs:58-85): {"vote": "deny"} decodes as the
    default abort=false, so it never blocks (hook_registry.rs:133-182)."""
    root = scripted_microapp(tmp_path / "vote", "vote")
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 0
    assert statuses(document)["hook.before_message"] == "warn"
    assert "ignores `vote`" in detail(document, "hook.before_message")
    strict_code, strict = nexo_check(str(root), "--strict", cwd=tmp_path)
    assert strict_code == 1
    assert strict["ok"] is False


def test_hook_replies_the_daemon_acts_on_differently_are_warnings(tmp_path: Path) -> None:
    """hook_registry.rs:133-182 (fire_with_merge): abort on an after_* hook is ignored
    (advisory), an `override` that is not an object is dropped, and `decision`,
    `transformed_body` and `do_not_reply_again` are decoded (runtime/mod.rs:58-85) but
    nothing reads them, so only `abort: true` blocks."""
    replies = {
        "before_message": {"decision": "block", "reason": "spam"},
        "after_message": {"abort": True, "reason": "too late"},
        "before_tool_call": {"override": "not an object"},
        "after_tool_call": {"abort": False, "decision": "allow", "override": {"note": 1}},
    }
    root = scripted_microapp(tmp_path / "m", "hook_replies", json.dumps(replies))
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 0, document
    found = statuses(document)
    assert found["hook.before_message"] == "warn"
    assert "only `abort: true` blocks" in detail(document, "hook.before_message")
    assert found["hook.after_message"] == "warn"
    assert "after_* hooks are advisory" in detail(document, "hook.after_message")
    assert found["hook.before_tool_call"] == "warn"
    assert "`override` is not a JSON object" in detail(document, "hook.before_tool_call")
    assert found["hook.after_tool_call"] == "pass"


def test_hooks_outside_the_hosts_list_are_skipped_with_a_warning(tmp_path: Path) -> None:
    """src/main.rs:4382-4391 skips names not in HOOK_NAMES (runtime/mod.rs:26-31)."""
    root = scripted_microapp(tmp_path / "hooks", "hooks")
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 0
    assert statuses(document)["hooks"] == "warn"
    assert "'on_heartbeat'" in detail(document, "hooks")
    assert document["microapp"]["hooks"] == {
        "registered": ["before_message"],
        "skipped": ["on_heartbeat"],
    }


def test_requires_that_the_daemon_would_miss_or_strip_warn(tmp_path: Path) -> None:
    """Missing [requires] skip the microapp at boot (src/main.rs:6602-6614); a requires.env
    name on the blocklist passes that gate but is stripped from the child (stdio.rs:690-697)."""
    root = scripted_microapp(
        tmp_path / "requires",
        "ok",
        extra_toml='\n[requires]\nbins = ["no-such-bin-for-nexo"]\nenv = ["WEATHER_API_KEY"]\n',
    )
    code, document = nexo_check(str(root), cwd=tmp_path, env={"WEATHER_API_KEY": "k"})
    assert code == 0
    assert statuses(document)["requires"] == "warn"
    text = detail(document, "requires")
    assert "missing here: no-such-bin-for-nexo" in text
    assert "requires.env WEATHER_API_KEY passes the boot check but the host strips it" in text


def test_frames_the_host_drops_are_warnings(tmp_path: Path) -> None:
    """Notifications are ignored and string ids without `app:` dropped (stdio.rs:854-876)."""
    root = scripted_microapp(tmp_path / "drops", "drops")
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 0
    assert statuses(document)["frames.dropped"] == "warn"
    text = detail(document, "frames.dropped")
    assert "notification" in text
    assert "and 1 more" in text


OTHER_TOOL = {"name": "scripted_other", "description": "d", "input_schema": {"type": "object"}}


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        pytest.param(
            {"result": {"tools": [OTHER_TOOL]}},
            "tools/list names ['scripted_other'] but initialize advertised ['scripted_probe']",
            id="another-list",
        ),
        pytest.param(
            {"result": [OTHER_TOOL]},
            "tools/list names ['scripted_other'] but initialize advertised ['scripted_probe']",
            id="bare-list",
        ),
        pytest.param(
            {"error": {"code": -32601, "message": "method not found"}},
            "tools/list answered -32601",
            id="error",
        ),
        pytest.param(
            {"result": {"tools": ["scripted_probe"]}},
            "cannot decode the tools/list result",
            id="string-tools",
        ),
    ],
)
def test_a_tools_list_unlike_initialize_is_a_warning(
    tmp_path: Path, reply: dict[str, Any], words: str
) -> None:
    """The contract page asks tools/list to equal initialize's tools; the runtime never calls
    it (only `nexo ext doctor --runtime` does) and registers initialize's list, so any other
    answer is a warning, not a failure; --strict fails it."""
    root = scripted_microapp(tmp_path / "list", "tools_list", json.dumps(reply))
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 0, document
    found = statuses(document)
    assert found["tools.list"] == "warn", document
    assert found["tools"] == "pass"
    assert words in detail(document, "tools.list")
    assert document["microapp"]["tools"] == [
        {"name": "scripted_probe", "llm_name": "ext_scripted_scripted_probe"}
    ]
    code, document = nexo_check(str(root), "--strict", cwd=tmp_path)
    assert code == 1
    assert statuses(document)["tools.list"] == "warn"


def test_a_tools_list_equal_to_initialize_passes(tmp_path: Path) -> None:
    root = scripted_microapp(tmp_path / "same", "ok")
    code, document = nexo_check(str(root), "--strict", cwd=tmp_path)
    assert code == 0, document
    assert statuses(document)["tools.list"] == "pass"


def test_stderr_lines_without_the_contract_prefix_are_a_warning(tmp_path: Path) -> None:
    """The contract page asks for `[INFO]`-style stderr prefixes; the host logs every stderr
    line at WARN as `extension stderr` whatever it says (stdio.rs:930-944): a warning that says
    so, and --strict fails it."""
    root = scripted_microapp(
        tmp_path / "plain", "stderr_lines", "[INFO] starting|ready to serve|second plain"
    )
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 0, document
    assert statuses(document)["stderr"] == "warn", document
    text = detail(document, "stderr")
    assert text.startswith("2 stderr line(s) without an [INFO]/[WARN]/[ERROR] prefix")
    assert '"ready to serve"' in text
    assert "logs every stderr line at WARN" in text
    code, _ = nexo_check(str(root), "--strict", cwd=tmp_path)
    assert code == 1


def test_prefixed_stderr_lines_pass(tmp_path: Path) -> None:
    root = scripted_microapp(
        tmp_path / "prefixed", "stderr_lines", "[INFO] starting|[WARN] low disk"
    )
    code, document = nexo_check(str(root), "--strict", cwd=tmp_path)
    assert code == 0, document
    assert statuses(document)["stderr"] == "pass"
    assert "prefix or not" in detail(document, "stderr")


def test_the_environment_and_working_directory_are_the_hosts(tmp_path: Path) -> None:
    """build_command (stdio.rs:676-719): cwd is the microapp root, the environment is cleared
    and refilled without blocklisted names, and AGENT_VERSION, AGENT_EXTENSION_ID and an
    existing NEXO_EXTENSION_STATE_ROOT are stamped; initialize carries id 0 and
    {agent_version, extension_id}."""
    root = scripted_microapp(tmp_path / "env", "ok", "CHECK_FIXTURE_TOKEN")
    code, document = nexo_check(
        str(root),
        "--invoke",
        "scripted_probe",
        "--nexo-version",
        "0.1.5",
        cwd=tmp_path,
        env={"CHECK_FIXTURE_TOKEN": "s3cret"},
    )
    assert code == 0, document
    seen = document["invoke"]["result"]
    assert seen["cwd"] == str(root.resolve())
    assert seen["env"]["AGENT_VERSION"] == "0.1.5"
    assert seen["env"]["AGENT_EXTENSION_ID"] == "scripted"
    assert seen["env"]["NEXO_EXTENSION_STATE_ROOT"].endswith("/extensions/scripted/state")
    assert seen["state_dir_exists"] is True
    assert seen["env"]["CHECK_FIXTURE_TOKEN"] is None
    assert seen["initialize"] == {
        "id": 0,
        "params": {"agent_version": "0.1.5", "extension_id": "scripted"},
    }
    assert seen["params"] == {"name": "scripted_probe", "arguments": {}}
    assert "CHECK_FIXTURE_TOKEN" in document["microapp"]["environment"]["removed"]
    assert "s3cret" not in json.dumps(document)


def grant_config(tmp_path: Path, grants: str) -> Path:
    """A daemon config directory whose extensions.yaml grants ``scripted`` ``grants``."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "extensions.yaml").write_text(
        f"extensions:\n  entries:\n    scripted:\n      capabilities_grant: [{grants}]\n",
        encoding="utf-8",
    )
    return config


def check_granted_echo(tmp_path: Path, mode: str, extra: str) -> tuple[int, dict[str, Any]]:
    """Check a scripted microapp in ``mode`` that requires ``_echo``, granted, invoking its
    tool."""
    config = grant_config(tmp_path, "_echo")
    root = scripted_microapp(
        tmp_path / "admin", mode, extra, companion=companion("scripted", required=("_echo",))
    )
    return nexo_check(
        str(root), "--invoke", "scripted_probe", "--config", str(config), cwd=tmp_path
    )


def admin_result(document: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = document["invoke"]["result"]["admin"]
    return answer


def test_an_app_request_for_an_ungranted_capability_fails(tmp_path: Path) -> None:
    """The dispatcher answers -32004 with {capability, microapp_id, method}
    (dispatcher.rs:78-100,647-664); credentials/list needs credentials_crud
    (dispatcher.rs:539-541), which this microapp never declares."""
    root = scripted_microapp(
        tmp_path / "admin",
        "admin",
        "nexo/admin/credentials/list",
        companion=companion("scripted", required=("agents_crud",)),
    )
    code, document = nexo_check(str(root), "--invoke", "scripted_probe", cwd=tmp_path)
    assert code == 1
    assert statuses(document)["admin"] == "fail"
    assert "credentials_crud" in detail(document, "admin")
    error = admin_result(document)["error"]
    assert error["code"] == -32004
    assert error["data"] == {
        "capability": "credentials_crud",
        "microapp_id": "scripted",
        "method": "nexo/admin/credentials/list",
    }
    assert admin_result(document)["id"] == "app:0b6f3c1e-6b1a-4c47-9a51-2d1f1d7f0c11"


def test_an_optional_capability_denied_is_a_warning(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "extensions.yaml").write_text(
        "extensions:\n  entries:\n    scripted:\n      capabilities_grant: [agents_crud]\n",
        encoding="utf-8",
    )
    root = scripted_microapp(
        tmp_path / "admin",
        "admin",
        "nexo/admin/skills/list",
        companion=companion("scripted", required=("agents_crud",), optional=("skills_crud",)),
    )
    code, document = nexo_check(
        str(root), "--invoke", "scripted_probe", "--config", str(config), cwd=tmp_path
    )
    assert code == 0
    assert statuses(document)["admin"] == "warn"
    assert admin_result(document)["error"]["code"] == -32004
    assert document["microapp"]["admin"]["granted"] == ["agents_crud"]


def test_a_grant_written_as_a_placeholder_is_read_substituted(tmp_path: Path) -> None:
    """The daemon's loader substitutes `${...}` before serde reads the grants."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "extensions.yaml").write_text(
        "extensions:\n  entries:\n    scripted:\n"
        '      capabilities_grant: ["${NEXO_TEST_GRANT}"]\n',
        encoding="utf-8",
    )
    root = scripted_microapp(
        tmp_path / "admin", "ok", companion=companion("scripted", required=("agents_crud",))
    )
    env = {"NEXO_TEST_GRANT": "agents_crud"}
    code, document = nexo_check(str(root), "--config", str(config), cwd=tmp_path, env=env)
    assert code == 0, document
    assert document["microapp"]["admin"]["granted"] == ["agents_crud"]


def test_a_granted_echo_is_answered_as_the_dispatcher_does(tmp_path: Path) -> None:
    code, document = check_granted_echo(tmp_path, "admin", "nexo/admin/echo")
    assert code == 0, document
    assert statuses(document)["admin"] == "pass"
    assert admin_result(document)["result"] == {
        "echoed": {"ping": 1},
        "microapp_id": "scripted",
    }


def test_an_unknown_admin_method_is_answered_minus_32601(tmp_path: Path) -> None:
    """nexo/dispatch is not in required_capability (dispatcher.rs:532-606)."""
    root = scripted_microapp(
        tmp_path / "admin",
        "admin",
        "nexo/dispatch",
        companion=companion("scripted", required=("agents_crud",)),
    )
    code, document = nexo_check(str(root), "--invoke", "scripted_probe", cwd=tmp_path)
    assert code == 0
    assert statuses(document)["admin"] == "warn"
    assert "nexo/dispatch is on the contract page" in detail(document, "admin")
    assert admin_result(document)["error"]["code"] == -32601


def test_a_required_capability_not_granted_turns_admin_off(tmp_path: Path) -> None:
    """validate_capabilities_at_boot fails, so main.rs:1653-1656 disables admin RPC: the
    frame is dropped and the microapp waits (here: its tools/call times out)."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "extensions.yaml").write_text(
        "extensions:\n  entries:\n    scripted:\n      capabilities_grant: []\n",
        encoding="utf-8",
    )
    root = scripted_microapp(
        tmp_path / "admin",
        "admin",
        "nexo/admin/agents/list",
        companion=companion("scripted", required=("agents_crud",)),
    )
    code, document = nexo_check(
        str(root),
        "--invoke",
        "scripted_probe",
        "--config",
        str(config),
        "--timeout-ms",
        "800",
        cwd=tmp_path,
    )
    assert code == 1
    found = statuses(document)
    assert found["admin"] == "fail"
    assert "admin RPC is off for every microapp" in detail(document, "admin")
    assert found["invoke"] == "fail"


def test_an_app_request_before_the_initialize_reply_gets_no_answer(tmp_path: Path) -> None:
    """The router is wired at spawn, but its writer is bound to the microapp's stdin only once
    the handshake is done (src/main.rs:6630-6643): an answer written before that is dropped
    (admin_adapters.rs:1383-1397, "admin response sent before outbound writer was bound"),
    so a microapp asking before it answers initialize waits for its own timeout."""
    code, document = check_granted_echo(tmp_path, "admin_early", "1")
    assert code == 0, document
    found = statuses(document)
    assert found["initialize"] == "pass"
    assert found["admin"] == "warn"
    assert "before the initialize reply" in detail(document, "admin")
    assert document["invoke"]["result"]["early"] == {"answer": None}


def test_an_app_request_without_a_router_is_dropped(tmp_path: Path) -> None:
    """No admin capabilities in nexo-plugin.toml: no router, stdio.rs:864-870 drops it."""
    root = scripted_microapp(tmp_path / "admin", "admin", "nexo/admin/agents/list")
    code, document = nexo_check(
        str(root), "--invoke", "scripted_probe", "--timeout-ms", "800", cwd=tmp_path
    )
    assert code == 1
    assert statuses(document)["admin"] == "warn"
    assert "no admin router" in detail(document, "admin")


def test_a_companion_with_another_id_gets_no_router(tmp_path: Path) -> None:
    """admin_capability_collect.rs:50-53 keys grants by the companion's id; the router is
    looked up by plugin.toml's (admin_bootstrap.rs:723-734)."""
    root = scripted_microapp(
        tmp_path / "admin", "ok", companion=companion("other", required=("agents_crud",))
    )
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 0
    assert statuses(document)["manifest"] == "warn"
    assert "no admin router" in detail(document, "manifest")
    assert document["microapp"]["admin"]["router"] is False


def test_a_companion_the_daemon_cannot_parse_gets_no_router(tmp_path: Path) -> None:
    """admin_capability_collect.rs:38-65 parses nexo-plugin.toml with PluginManifest, whose
    `version` is a semver::Version: `0.1` fails the parse, the daemon warns and skips the file,
    so the admin capabilities it declares are never collected and no router is wired (lint
    says the same with NX216)."""
    text = companion("scripted", required=("agents_crud",)).replace(
        'version = "0.1.0"', 'version = "0.1"'
    )
    root = scripted_microapp(tmp_path / "admin", "ok", companion=text)
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 0
    assert statuses(document)["manifest"] == "warn"
    assert "the daemon cannot parse" in detail(document, "manifest")
    assert "no admin router" in detail(document, "manifest")
    assert document["microapp"]["admin"]["router"] is False
    assert document["microapp"]["admin"]["required"] == []


def test_long_and_colliding_tool_names_are_warnings(tmp_path: Path) -> None:
    """fit_name hashes past 64 characters (crates/llm/src/types.rs:317-341) and
    register_if_absent skips a second tool of the same name (src/main.rs:4364-4379)."""
    root = scripted_microapp(tmp_path / "long", "long")
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 0
    assert statuses(document)["tools.names"] == "warn"
    text = detail(document, "tools.names")
    assert "colliding" in text
    assert "hashed" in text
    long_name = document["microapp"]["tools"][1]["llm_name"]
    assert len(long_name) == 64
    assert long_name == fit_name("ext_", "scripted", "scripted_" + "x" * 60)


def test_an_output_envelope_is_a_warning(tmp_path: Path) -> None:
    """The result goes to the model as it is (extension_tool.rs:161-179)."""
    root = scripted_microapp(tmp_path / "envelope", "envelope")
    code, document = nexo_check(str(root), "--invoke", "scripted_probe", cwd=tmp_path)
    assert code == 0
    assert statuses(document)["invoke"] == "warn"
    assert "envelope" in detail(document, "invoke")


@pytest.mark.parametrize(
    ("transport", "expected"),
    [
        ('kind = "nats"\nsubject_prefix = "ext"', 'only kind = "stdio"'),
        # A blank stdio command is a manifest the daemon refuses: a failed check naming NX208
        # (tests/check/test_check_refused_manifest.py).
    ],
)
def test_a_microapp_with_nothing_to_spawn_is_a_target_error(
    tmp_path: Path, transport: str, expected: str
) -> None:
    root = tmp_path / "bad"
    root.mkdir()
    (root / "plugin.toml").write_text(
        f'[plugin]\nid = "bad"\nversion = "0.1.0"\n\n[capabilities]\ntools = ["t"]\n\n'
        f"[transport]\n{transport}\n",
        encoding="utf-8",
    )
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 2
    assert document["kind"] == "target_invalid"
    assert expected in document["error"]


def test_a_missing_command_fails_spawn(tmp_path: Path) -> None:
    root = tmp_path / "gone"
    root.mkdir()
    (root / "plugin.toml").write_text(
        '[plugin]\nid = "gone"\nversion = "0.1.0"\n\n[capabilities]\ntools = ["t"]\n\n'
        '[transport]\nkind = "stdio"\ncommand = "./main.py"\n',
        encoding="utf-8",
    )
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 1
    assert statuses(document)["spawn"] == "fail"
    assert "does not load" in detail(document, "spawn")


def test_a_missing_shebang_interpreter_is_named(tmp_path: Path) -> None:
    """diagnose_missing_interpreter (stdio.rs:598-651)."""
    root = tmp_path / "shebang"
    root.mkdir()
    (root / "plugin.toml").write_text(
        '[plugin]\nid = "shebang"\nversion = "0.1.0"\n\n[capabilities]\ntools = ["t"]\n\n'
        '[transport]\nkind = "stdio"\ncommand = "./main.py"\n',
        encoding="utf-8",
    )
    script = root / "main.py"
    script.write_text("#!/no/such/interpreter-for-nexo\n", encoding="utf-8")
    script.chmod(0o755)
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 1
    assert statuses(document)["spawn"] == "fail"
    assert "shebang interpreter `/no/such/interpreter-for-nexo` not found" in detail(
        document, "spawn"
    )


def test_an_error_reply_to_initialize_fails(tmp_path: Path) -> None:
    """StartError::Handshake (stdio.rs:824)."""
    root = scripted_microapp(tmp_path / "init", "init-error")
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 1
    assert statuses(document)["initialize"] == "fail"
    assert "-32603 no config" in detail(document, "initialize")


def test_a_non_utf8_line_stops_the_hosts_reader(tmp_path: Path) -> None:
    """BufReader::lines fails on invalid UTF-8 and the reader task ends (stdio.rs:920-923):
    the initialize reply after it is never read."""
    root = scripted_microapp(tmp_path / "utf8", "badutf8")
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 1
    found = statuses(document)
    assert found["frames.utf8"] == "fail"
    assert found["initialize"] == "fail"
    assert "reader stopped" in detail(document, "initialize")


def test_a_non_utf8_stderr_line_stops_the_hosts_stderr_reader(tmp_path: Path) -> None:
    """stdio.rs:930-944: the stderr task reads `lines()` and ends on an error, dropping the
    pipe; the microapp's later writes to stderr fail."""
    root = scripted_microapp(tmp_path / "m", "stderr_badutf8")
    code, document = nexo_check(str(root), "--invoke", "scripted_probe", cwd=tmp_path)
    assert code == 0, document
    assert statuses(document)["stderr"] == "warn"
    assert "stderr line is not UTF-8" in detail(document, "stderr")
    assert document["invoke"]["result"]["stderr_writable"] is False


def test_an_unreadable_extensions_yaml_is_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "extensions.yaml").write_text("extensions: [unclosed\n", encoding="utf-8")
    root = scripted_microapp(tmp_path / "ok", "ok")
    code, document = nexo_check(str(root), "--config", str(config), cwd=tmp_path)
    assert code == 2
    assert document["kind"] == "config"
    assert "extensions.yaml:2: not valid YAML: YAML syntax error" in document["error"]


@pytest.mark.parametrize(
    ("extensions", "why"),
    [
        ("enabled: false", "enabled: false"),
        ("disabled: [other, scripted]", "disabled"),
        ("allowlist: [other]", "allowlist"),
    ],
)
def test_a_microapp_the_daemons_config_does_not_load_is_a_warning(
    tmp_path: Path, extensions: str, why: str
) -> None:
    """run_extension_discovery returns nothing with `enabled: false` (src/main.rs:6531-6534);
    discovery drops `disabled` ids and, with a non-empty `allowlist`, every other id
    (discovery.rs:329-360): the daemon never spawns the microapp."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "extensions.yaml").write_text(f"extensions:\n  {extensions}\n", encoding="utf-8")
    root = scripted_microapp(tmp_path / "ok", "ok")
    code, document = nexo_check(str(root), "--config", str(config), cwd=tmp_path)
    assert code == 0, document
    assert statuses(document)["discovery"] == "warn"
    assert why in detail(document, "discovery")
    assert "never spawns" in detail(document, "discovery")
    (config / "extensions.yaml").write_text("extensions:\n  enabled: true\n", encoding="utf-8")
    code, document = nexo_check(str(root), "--config", str(config), cwd=tmp_path)
    assert "discovery" not in statuses(document)


@pytest.mark.parametrize(
    ("extensions", "why"),
    [
        ("enabled: ${NEXO_TEST_EXTENSIONS_ON:-false}", "enabled: false"),
        ('disabled: ["${NEXO_TEST_SKIPPED}"]', "disabled"),
        ('allowlist: ["${NEXO_TEST_ONLY:-other}"]', "allowlist"),
    ],
)
def test_a_microapp_the_substituted_config_does_not_load_is_a_warning(
    tmp_path: Path, extensions: str, why: str
) -> None:
    """The daemon substitutes every `${VAR}` of extensions.yaml before it reads the file
    (as `nexo plugin lint --config` does): what the substituted file keeps from loading is
    judged as when it is written out."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "extensions.yaml").write_text(f"extensions:\n  {extensions}\n", encoding="utf-8")
    root = scripted_microapp(tmp_path / "ok", "ok")
    env = {"NEXO_TEST_SKIPPED": "scripted"}
    code, document = nexo_check(str(root), "--config", str(config), cwd=tmp_path, env=env)
    assert code == 0, document
    assert statuses(document)["discovery"] == "warn"
    assert why in detail(document, "discovery")
    assert "never spawns" in detail(document, "discovery")
    loaded = {"NEXO_TEST_SKIPPED": "other", "NEXO_TEST_EXTENSIONS_ON": "true"}
    loaded["NEXO_TEST_ONLY"] = "scripted"
    code, document = nexo_check(str(root), "--config", str(config), cwd=tmp_path, env=loaded)
    assert code == 0, document
    assert "discovery" not in statuses(document)


def test_a_placeholder_that_is_no_yaml_as_written_stays_a_config_error(tmp_path: Path) -> None:
    """The daemon's schema migration step reads extensions.yaml as written, before the
    loader substitutes `${...}` (docs/microapps.md, NX222): `[other, ${X}]` stops its boot
    whatever X holds, so check refuses the file as lint does."""
    config = tmp_path / "config"
    config.mkdir()
    extensions = "extensions:\n  disabled: [other, ${NEXO_TEST_SKIPPED}]\n"
    (config / "extensions.yaml").write_text(extensions, encoding="utf-8")
    root = scripted_microapp(tmp_path / "ok", "ok")
    env = {"NEXO_TEST_SKIPPED": "scripted"}
    code, document = nexo_check(str(root), "--config", str(config), cwd=tmp_path, env=env)
    assert (code, document["kind"]) == (2, "config")
    assert "extensions.yaml:2: not valid YAML" in document["error"]


# -- the decoders, against the daemon's serde types ------------------------------------------


#: ``AdminRpcDispatcher::required_capability`` (crates/core/src/agent/admin_rpc/
#: dispatcher.rs:532-606 at eec3f33), arm by arm, as the daemon's source spells it.
DISPATCHER_CAPABILITIES = {
    "nexo/admin/echo": "_echo",
    "nexo/admin/agents/list": "agents_crud",
    "nexo/admin/agents/get": "agents_crud",
    "nexo/admin/agents/upsert": "agents_crud",
    "nexo/admin/agents/delete": "agents_crud",
    "nexo/admin/credentials/list": "credentials_crud",
    "nexo/admin/credentials/register": "credentials_crud",
    "nexo/admin/credentials/revoke": "credentials_crud",
    "nexo/admin/pairing/start": "pairing_initiate",
    "nexo/admin/pairing/status": "pairing_initiate",
    "nexo/admin/pairing/cancel": "pairing_initiate",
    "nexo/admin/llm_providers/list": "llm_keys_crud",
    "nexo/admin/llm_providers/upsert": "llm_keys_crud",
    "nexo/admin/llm_providers/delete": "llm_keys_crud",
    "nexo/admin/llm_providers/probe": "llm_keys_crud",
    "nexo/admin/channels/list": "channels_crud",
    "nexo/admin/channels/approve": "channels_crud",
    "nexo/admin/channels/revoke": "channels_crud",
    "nexo/admin/channels/doctor": "channels_crud",
    "nexo/admin/agent_events/list": "transcripts_read",
    "nexo/admin/agent_events/read": "transcripts_read",
    "nexo/admin/agent_events/search": "transcripts_read",
    "nexo/admin/processing/pause": "operator_intervention",
    "nexo/admin/processing/resume": "operator_intervention",
    "nexo/admin/processing/intervention": "operator_intervention",
    "nexo/admin/processing/state": "operator_intervention",
    "nexo/admin/escalations/list": "escalations_read",
    "nexo/admin/escalations/resolve": "escalations_resolve",
    "nexo/admin/skills/list": "skills_crud",
    "nexo/admin/skills/get": "skills_crud",
    "nexo/admin/skills/upsert": "skills_crud",
    "nexo/admin/skills/delete": "skills_crud",
    "nexo/admin/tenants/list": "tenants_crud",
    "nexo/admin/tenants/get": "tenants_crud",
    "nexo/admin/tenants/upsert": "tenants_crud",
    "nexo/admin/tenants/delete": "tenants_crud",
    "nexo/admin/secrets/write": "secrets_write",
    "nexo/admin/auth/rotate_token": "auth_rotate",
    "nexo/admin/reload": "agents_crud",
}


def test_the_mock_router_gates_every_method_as_the_dispatcher() -> None:
    """Every admin method the daemon routes needs the capability its dispatcher names, and
    no other method is routed: the contract page's `nexo/dispatch`, a verb the daemon lacks
    (`escalations/delete`) and a method without the `nexo/admin/` prefix are unknown (-32601).
    The codes are ``AdminRpcError::code`` (dispatcher.rs:78-85)."""
    assert ADMIN_METHODS == DISPATCHER_CAPABILITIES
    for unknown in ("nexo/dispatch", "nexo/admin/escalations/delete", "agents/list", "echo"):
        assert unknown not in ADMIN_METHODS
    assert (ADMIN_METHOD_NOT_FOUND, ADMIN_CAPABILITY_NOT_GRANTED, ADMIN_INTERNAL) == (
        -32601,
        -32004,
        -32603,
    )


def test_a_reload_needs_agents_crud(tmp_path: Path) -> None:
    """`nexo/admin/reload` is gated on `agents_crud` (dispatcher.rs:600-605), not a
    capability of its own: ungranted, the router answers -32004 naming it."""
    config = grant_config(tmp_path, "_echo")
    root = scripted_microapp(
        tmp_path / "admin",
        "admin",
        "nexo/admin/reload",
        companion=companion("scripted", required=("_echo",), optional=("agents_crud",)),
    )
    code, document = nexo_check(
        str(root), "--invoke", "scripted_probe", "--config", str(config), cwd=tmp_path
    )
    assert code == 0, document
    error = admin_result(document)["error"]
    assert error["code"] == -32004
    assert error["data"] == {
        "capability": "agents_crud",
        "microapp_id": "scripted",
        "method": "nexo/admin/reload",
    }
    assert statuses(document)["admin"] == "warn"


def test_decode_handshake_follows_serde() -> None:
    """HandshakeInfo / ToolDescriptor (runtime/mod.rs:159-182)."""
    decoded = decode_handshake({"tools": [{"name": "a"}], "version": "1", "hooks": []})
    assert not isinstance(decoded, str)
    assert decoded.tools[0].description == ""
    assert decoded.tools[0].input_schema == {}
    assert decoded.tools[0].defaulted == ("description", "input_schema")
    assert not isinstance(decode_handshake({}), str)
    assert decode_handshake(None) == "invalid type: null, expected struct HandshakeInfo"
    assert decode_handshake({"tools": None}) == ("tools: invalid type: null, expected a sequence")
    assert decode_handshake({"tools": [{"description": "x"}]}) == ("tools[0]: missing field `name`")
    assert decode_handshake({"hooks": [1]}) == (
        "hooks[0]: invalid type: integer `1`, expected a string"
    )
    assert decode_handshake({"server_version": 2}) == (
        "server_version: invalid type: integer `2`, expected a string"
    )


def test_hook_and_response_decoders() -> None:
    """HookResponse (runtime/mod.rs:58-85) and wire::Response (wire.rs:13-24)."""
    assert hook_response_problem(None) is None
    assert hook_response_problem({"vote": "deny"}) is None
    assert hook_response_problem({"abort": "yes"}) == (
        'abort: invalid type: string "yes", expected a boolean'
    )
    # serde reads a derived struct from a sequence too, field by field, all defaulted.
    assert hook_response_problem([]) is None
    assert hook_response_problem([True, "spam"]) is None
    assert hook_response_problem(["yes"]) == (
        'abort: invalid type: string "yes", expected a boolean'
    )
    assert hook_response_problem([False] * 7) == (
        "invalid length 7, expected fewer elements in array"
    )
    assert hook_response_problem("continue") == (
        'invalid type: string "continue", expected struct HookResponse'
    )
    assert response_problem({"id": 1, "error": {"code": 1}}) == ("`error.message` is not a string")
    assert response_problem({"id": 1, "error": {"code": 2**40, "message": "m"}}) == (
        "`error.code` is not a 32-bit integer"
    )
    assert response_problem({"jsonrpc": 2, "id": 1}) == "`jsonrpc` is not a string"
    assert response_problem({"id": 1, "result": None}) is None


def test_fit_name_cuts_and_hashes_as_the_daemon_does() -> None:
    """ToolDef::fit_name (crates/llm/src/types.rs:317-341)."""
    assert fit_name("ext_", "weather", "now") == "ext_weather_now"
    tool = "t" * 80
    name = fit_name("ext_", "weather", tool)
    digest = hashlib.sha256(b"weather\0" + tool.encode()).hexdigest()[:6]
    assert name == f"ext_weather_{'t' * (64 - len('ext_weather__') - 6)}_{digest}"
    assert len(name) == 64
    long_id = "i" * 64
    cut = fit_name("ext_", long_id, "x")
    assert len(cut) == 64
    assert cut.startswith("ext_" + "i" * (64 - 11) + "_")


def test_checking_a_microapp_imports_no_install_module(tmp_path: Path) -> None:
    """`check` stays light (tests/cli/test_conventions.py); a microapp and its grants too."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "extensions.yaml").write_text("extensions:\n  entries: {}\n", encoding="utf-8")
    root = scripted_microapp(tmp_path / "ok", "ok")
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.__stderr__.write("
        "'MODULES ' + ' '.join(sorted(sys.modules)) + '\\n'))\n"
        f"sys.argv = ['nexo', 'plugin', 'check', {str(root)!r}, '--config', {str(config)!r}]\n"
        "from nexo_pkg.cli.main import main\n"
        "main()\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120
    )
    assert "check passed for scripted" in completed.stdout, completed.stderr
    line = next(text for text in completed.stderr.splitlines() if text.startswith("MODULES "))
    modules = set(line.split()[1:])
    assert "nexo_pkg.check.microapp" in modules
    assert not {name for name in modules if name.startswith("nexo_pkg.install")}


def test_a_grant_that_is_not_a_list_is_a_config_error(tmp_path: Path) -> None:
    """ExtensionEntry.capabilities_grant is a Vec<String> (types/extensions.rs:56-74)."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "extensions.yaml").write_text(
        "extensions:\n  entries:\n    scripted:\n      capabilities_grant: agents_crud\n",
        encoding="utf-8",
    )
    root = scripted_microapp(tmp_path / "ok", "ok")
    code, document = nexo_check(str(root), "--config", str(config), cwd=tmp_path)
    assert code == 2
    assert document["kind"] == "config"
    assert "capabilities_grant must be a list" in document["error"]


def test_requires_read_as_the_daemon_reads_them(tmp_path: Path) -> None:
    """Requires::missing (crates/extensions/src/manifest.rs:220-243): an env variable set to
    the empty string is missing; a bin is any regular file of that name on PATH, executable
    or not."""
    bins = tmp_path / "bins"
    bins.mkdir()
    (bins / "nexo-plain-file").write_text("not executable\n", encoding="utf-8")
    root = scripted_microapp(
        tmp_path / "requires",
        "ok",
        extra_toml='\n[requires]\nbins = ["nexo-plain-file"]\nenv = ["NEXO_TEST_EMPTY"]\n',
    )
    path = os.pathsep.join([str(bins), os.environ.get("PATH", "")])
    code, document = nexo_check(str(root), cwd=tmp_path, env={"NEXO_TEST_EMPTY": "", "PATH": path})
    assert code == 0
    assert statuses(document)["requires"] == "warn"
    assert detail(document, "requires").startswith("missing here: NEXO_TEST_EMPTY (")


@pytest.mark.parametrize(
    ("old", "new", "rule"),
    [
        # The docs' `[capabilities.admin]` in plugin.toml: `deny_unknown_fields` refuses it.
        ('tools = ["scripted_probe"]', 'tools = ["scripted_probe"]\nadmin = ["x"]', "NX211"),
        # manifest.rs:469-475: `version` must be SemVer (no leading zero).
        ('version = "0.1.0"', 'version = "01.0.0"', "NX202"),
        # manifest.rs:524-531: NoCapabilities.
        ('tools = ["scripted_probe"]', "tools = []", "NX205"),
    ],
)
def test_a_manifest_discovery_refuses_is_never_spawned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str, rule: str
) -> None:
    """Discovery parses and validates plugin.toml and skips the microapp on an error
    (crates/extensions/src/discovery.rs:251-303): the daemon never spawns it, nor does check."""
    pid_file = tmp_path / "pids"
    monkeypatch.setenv("FIXTURE_PID_FILE", str(pid_file))
    root = scripted_microapp(tmp_path / "refused", "ok")
    manifest = root / "plugin.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 1
    assert statuses(document) == {"manifest": "fail", "spawn": "fail"}
    assert "plugin.toml:" in detail(document, "manifest")
    assert f"{rule} " in detail(document, "manifest")
    assert "the daemon refuses this manifest too" in detail(document, "manifest")
    assert not pid_file.exists(), "the microapp was started"


@pytest.mark.parametrize("padding", [0, 1_200_000])
def test_a_large_extensions_yaml_is_read_whole(tmp_path: Path, padding: int) -> None:
    """The daemon reads extensions.yaml whole (`crates/config/src/lib.rs:235-245`,
    `read_to_string`, no size limit): a grant written after a megabyte of comments still
    turns the microapp's admin RPC on; the file was read cut short to its first MiB, which
    lost the grant and failed a microapp the daemon loads with its admin RPC."""
    config = tmp_path / "config"
    config.mkdir()
    comment = "# " + "x" * 98 + "\n"
    (config / "extensions.yaml").write_text(
        comment * (padding // len(comment))
        + "extensions:\n  entries:\n    scripted:\n      capabilities_grant: [agents_crud]\n",
        encoding="utf-8",
    )
    root = scripted_microapp(
        tmp_path / "admin", "ok", companion=companion("scripted", required=("agents_crud",))
    )
    code, document = nexo_check(str(root), "--config", str(config), cwd=tmp_path)
    assert code == 0, document
    assert document["microapp"]["admin"]["granted"] == ["agents_crud"]


def test_an_extensions_yaml_over_the_cap_is_refused_not_cut_short(tmp_path: Path) -> None:
    """Past the cap lint reads a file to (4 MiB, NX004), check refuses the file as a
    configuration error (exit 2) naming it, rather than judging its first part."""
    config = tmp_path / "config"
    config.mkdir()
    extensions = config / "extensions.yaml"
    extensions.write_text("# " + "x" * (4 * 1024 * 1024) + "\nextensions: {}\n", encoding="utf-8")
    root = scripted_microapp(tmp_path / "admin", "ok")
    completed = nexo(
        "plugin", "check", str(root), "--config", str(config), "--json", cwd=tmp_path,
        in_process=True,
    )  # fmt: skip
    assert completed.code == 2, completed.stdout
    document = json.loads(completed.stdout)
    assert document == {
        "ok": False, "kind": "config", "error": f"{extensions} is larger than 4194304 bytes"
    }  # fmt: skip
