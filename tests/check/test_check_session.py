"""The conformance checks against real plugin processes: the real SDK passes, and every
hand-written misbehaviour fails exactly the check that names it, leaving no process behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo
from typer.testing import CliRunner

from check.check_plugins import (
    SCRIPTED,
    TIMEOUT_MS,
    assert_not_running,
    assert_reaped,
    cli_check,
    process_state,
    python_first_on_path,
    recorded_pids,
    scripted_plugin,
    sdk_packed,
    sdk_project,
)
from nexo_pkg.check import CheckReport, run_check
from nexo_pkg.check.host import PluginProcess
from nexo_pkg.cli.app import build_app

app = build_app()[0]


@pytest.fixture
def pid_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "pids"
    monkeypatch.setenv("FIXTURE_PID_FILE", str(path))
    return path


def failed(report: CheckReport) -> set[str]:
    return {check.name for check in report.checks if check.status == "fail"}


def status(report: CheckReport, name: str) -> str:
    check = report.get(name)
    assert check is not None, f"check {name} did not run: {report.checks}"
    return check.status


def checks_with(document: dict[str, Any], status: str) -> dict[str, str]:
    """``{name: detail}`` of the checks of ``document`` that ended in ``status``."""
    return {
        check["name"]: check["detail"] for check in document["checks"] if check["status"] == status
    }


def assert_nothing_left(pid_file: Path) -> None:
    pids = recorded_pids(pid_file)
    assert pids, "the fixture plugin did not record its pid"
    assert_reaped(pids[0])
    for child in pids[1:]:
        assert_not_running(child)


def test_sdk_project_passes_every_check(tmp_path: Path, pid_file: Path) -> None:
    report = run_check(sdk_project(tmp_path / "sdkdemo"), timeout_ms=TIMEOUT_MS)
    assert report.ok, report.checks
    assert failed(report) == set()
    assert [check.status for check in report.checks] == ["pass"] * len(report.checks)
    names = [check.name for check in report.checks]
    assert names[:3] == ["sandbox", "spawn", "initialize"]
    for name in ("identity", "server_version", "tools.present", "tools.declared"):
        assert name in names
    for name in ("tools.namespace", "tools.schema", "unknown_method", "shutdown", "exit"):
        assert name in names
    assert "sdkdemo: starting" in report.stderr_tail
    assert_nothing_left(pid_file)


def test_sdk_packed_layout_runs_bin_launcher(
    tmp_path: Path, pid_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", python_first_on_path())
    root = sdk_packed(tmp_path / "packed")
    report = run_check(root, timeout_ms=TIMEOUT_MS)
    assert report.ok, report.checks
    assert report.argv == [str(root / "bin" / "sdkdemo")]
    assert_nothing_left(pid_file)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hello", {"result": {"content": [{"type": "text", "text": "hello"}], "is_error": False}}),
        ("busy", {"error": {"code": -33404, "data": {"retry_after_ms": 250}}}),
    ],
)
def test_sdk_invoke_shows_result_or_typed_error(
    tmp_path: Path, text: str, expected: dict[str, object]
) -> None:
    report = run_check(
        sdk_project(tmp_path / "sdkdemo"),
        timeout_ms=TIMEOUT_MS,
        invoke=("sdkdemo_echo", {"text": text}),
    )
    assert report.ok, report.checks
    assert status(report, "invoke") == "pass"
    assert status(report, "invoke.args") == "pass"
    assert report.invoke is not None
    assert report.invoke["tool"] == "sdkdemo_echo"
    if "result" in expected:
        assert report.invoke["result"] == expected["result"]
    else:
        error = report.invoke["error"]
        assert {key: error[key] for key in ("code", "data")} == expected["error"]
        detail = report.get("invoke")
        assert detail is not None
        assert "ToolUnavailable" in detail.detail


def test_invoke_args_not_matching_schema_warn_but_typed_error_passes(tmp_path: Path) -> None:
    report = run_check(
        sdk_project(tmp_path / "sdkdemo"), timeout_ms=TIMEOUT_MS, invoke=("sdkdemo_echo", {})
    )
    assert report.ok
    assert status(report, "invoke.args") == "warn"
    assert status(report, "invoke") == "pass"
    assert report.invoke is not None
    assert report.invoke["error"]["code"] == -33402
    assert report.invoke["error"]["data"] == {"details": {"field": "text"}}


def test_invoke_of_unadvertised_tool_reports_tool_not_found(tmp_path: Path) -> None:
    report = run_check(
        sdk_project(tmp_path / "sdkdemo"), timeout_ms=TIMEOUT_MS, invoke=("sdkdemo_nope", {})
    )
    assert report.ok
    assert status(report, "invoke.args") == "warn"
    assert report.invoke is not None
    assert report.invoke["error"]["code"] == -33401


@pytest.mark.parametrize(
    ("answer", "expected_status", "detail"),
    [
        ("bad_retry", "fail", "retry_after_ms"),
        ("method_not_found", "warn", "not implemented"),
        ("odd_code", "warn", "not a tool.invoke error code"),
        # subprocess.rs:476: any `error` member, null included, is the answer; the result
        # is dropped and the agent gets an error from every call.
        ("result_and_null_error", "fail", "drops the result"),
    ],
)
def test_invoke_answers_are_judged(
    tmp_path: Path, answer: str, expected_status: str, detail: str
) -> None:
    root = scripted_plugin(tmp_path / "p", "ok", tools=("scripted_echo",))
    report = run_check(root, timeout_ms=TIMEOUT_MS, invoke=("scripted_echo", {"answer": answer}))
    check = report.get("invoke")
    assert check is not None
    assert check.status == expected_status
    assert detail in check.detail
    assert report.ok is (expected_status != "fail")
    # The session goes on after any answer.
    assert status(report, "shutdown") == "pass"


@pytest.mark.parametrize(
    ("answer", "line", "sent"),
    [
        (
            "execution_failed",
            'typed error ToolExecutionFailed: -33403 canned data={"details": "disk full"}',
            {"code": -33403, "message": "canned", "data": {"details": "disk full"}},
        ),
        ("denied", "typed error ToolDenied: -33405 canned", {"code": -33405, "message": "canned"}),
    ],
)
def test_the_console_script_shows_each_typed_invoke_error_with_its_data(
    tmp_path: Path, answer: str, line: str, sent: dict[str, object]
) -> None:
    """Issue 6 item 3: the typed error (-33401..-33405) is shown with its ``data``, in the
    text report and in ``--json``'s ``invoke``; a typed error is an answer, not a failure."""
    root = scripted_plugin(tmp_path / "p", "ok", tools=("scripted_echo",))
    options = ("--invoke", "scripted_echo", "--args", json.dumps({"answer": answer}))
    text = nexo("plugin", "check", root, *options, cwd=tmp_path)
    assert text.code == 0, text.stdout + text.stderr
    shown = [row.split(None, 2) for row in text.stdout.splitlines()]
    assert ["PASS", "invoke", line] in shown, text.stdout
    document = nexo("plugin", "check", root, *options, "--json", cwd=tmp_path)
    assert document.code == 0, document.stderr
    report = json.loads(document.stdout)
    assert report["ok"] is True
    assert report["invoke"] == {"tool": "scripted_echo", "args": {"answer": answer}, "error": sent}


def test_an_invoke_reply_with_a_result_and_a_null_error_fails_the_check(
    tmp_path: Path, pid_file: Path
) -> None:
    root = scripted_plugin(tmp_path / "p", "ok", tools=("scripted_echo",))
    code, document = cli_check(
        root, "--invoke", "scripted_echo", "--args", '{"answer": "result_and_null_error"}'
    )
    assert code == 1
    assert document["ok"] is False
    assert set(checks_with(document, "fail")) == {"invoke"}
    assert "frames.jsonrpc" in checks_with(document, "warn")
    assert document["invoke"]["error"]["message"].startswith("`error` is null")
    assert_nothing_left(pid_file)


def test_a_non_utf8_line_after_the_handshake_loses_every_later_reply(
    tmp_path: Path, pid_file: Path
) -> None:
    """tokio ``lines()`` (subprocess.rs:377-390) ends the reader at the line: the daemon's
    tool calls to the plugin go unanswered from then on, so the check fails, not warns."""
    root = scripted_plugin(tmp_path / "p", "bad_utf8_after_init", tools=("scripted_echo",))
    code, document = cli_check(root, "--invoke", "scripted_echo", "--args", '{"text": "hi"}')
    assert code == 1
    assert document["ok"] is False
    failures = checks_with(document, "fail")
    assert set(failures) == {"frames.utf8", "invoke"}, document["checks"]
    assert "reader stopped" in failures["invoke"]
    assert "initialize" in checks_with(document, "pass")
    assert "result" not in document["invoke"]
    assert_nothing_left(pid_file)


def test_hand_written_conforming_plugin_passes(tmp_path: Path, pid_file: Path) -> None:
    root = scripted_plugin(tmp_path / "p", "ok", tools=("scripted_echo",))
    report = run_check(
        root,
        timeout_ms=TIMEOUT_MS,
        nexo_version="0.2.0",
        invoke=("scripted_echo", {"text": "hi"}),
    )
    assert report.ok, report.checks
    assert "scripted: nexo_version=0.2.0" in report.stderr_tail
    assert_nothing_left(pid_file)


@pytest.mark.parametrize(
    ("mode", "tools", "expected_failures", "detail"),
    [
        ("wrong_id", (), {"frames.id"}, "carried id 101"),
        ("impersonate", (), {"identity"}, '"slack"'),
        ("undeclared_tool", ("scripted_echo",), {"tools.declared"}, "scripted_secret"),
        # Undeclared, so refused; the namespace itself only warns unless the daemon's strict
        # mode is on (tests/check/test_check_daemon_env.py).
        ("bad_namespace", (), {"tools.declared"}, "other_tool"),
        ("no_description", ("scripted_echo",), {"tools.present"}, "`description`"),
        ("no_name", ("scripted_echo",), {"tools.present"}, "string `name`"),
        ("no_input_schema", ("scripted_echo",), {"tools.present"}, "`input_schema`"),
        ("tools_not_array", ("scripted_echo",), {"tools.present"}, "must be an array"),
        ("exit3", (), {"initialize"}, "exited with code 3"),
        ("crash_after_init", (), {"unknown_method"}, "exited with code 1"),
        # The daemon's stdout reader is tokio `lines()`, which errors on a line that is not
        # UTF-8 and ends the reader (subprocess.rs:377-390): the initialize reply is lost.
        ("bad_utf8", (), {"frames.utf8", "initialize"}, "reader stop"),
        # subprocess.rs:476: `parsed.get("error")` is Some for `"error": null` -> an error.
        ("error_null", (), {"initialize"}, "any `error` member is an error"),
    ],
)
def test_what_the_daemon_refuses_fails_the_named_check(  # noqa: PLR0917  # parametrized
    tmp_path: Path,
    pid_file: Path,
    mode: str,
    tools: tuple[str, ...],
    expected_failures: set[str],
    detail: str,
) -> None:
    code, document = cli_check(scripted_plugin(tmp_path / mode, mode, tools=tools))
    assert code == 1
    assert document["ok"] is False
    failures = checks_with(document, "fail")
    assert set(failures) == expected_failures, document["checks"]
    assert detail in " ".join(failures.values())
    assert_nothing_left(pid_file)


@pytest.mark.parametrize(
    ("mode", "tools", "expected_warnings", "detail"),
    [
        ("banner", (), {"frames.json"}, "Starting scripted plugin"),
        ("bad_schema", ("scripted_echo",), {"tools.schema"}, "scripted_echo"),
        ("no_server_version", (), {"server_version"}, "server_version"),
        ("no_tools", ("scripted_echo",), {"tools.present"}, "no `tools`"),
        ("no_jsonrpc", (), {"frames.jsonrpc"}, "jsonrpc"),
        # subprocess.rs: a reply to no pending id is logged ("response with unknown id").
        ("duplicate_reply", (), {"frames.jsonrpc"}, "a late reply with id 1"),
        ("huge_line", (), {"frames.size", "frames.json"}, "1048576-byte"),
        ("big_reply", (), {"frames.size"}, "the daemon reads it"),
        ("deep_frame", (), {"frames.json"}, "nested too deeply"),
        ("unknown_result", (), {"unknown_method"}, "instead of -32601"),
        ("schema_not_object", ("scripted_echo",), {"tools.schema"}, "JSON Schema object"),
        ("shutdown_not_ok", (), {"shutdown"}, '"ok": false'),
        ("exit_on_stdin_close", (), {"exit"}, "only once stdin was closed"),
        # Past the daemon's second (subprocess.rs:1304-1315: stdin closed at the reply, SIGKILL
        # 1 s later) but within the check's: whether the daemon kills it depends on whether it
        # waits for end-of-input, which the check cannot tell, so it warns and says so.
        ("slow_exit", (), {"exit"}, "unless it exits on end-of-input it would be killed"),
    ],
)
def test_what_the_daemon_tolerates_warns_and_passes(  # noqa: PLR0917  # parametrized
    tmp_path: Path,
    pid_file: Path,
    mode: str,
    tools: tuple[str, ...],
    expected_warnings: set[str],
    detail: str,
) -> None:
    code, document = cli_check(scripted_plugin(tmp_path / mode, mode, tools=tools))
    assert code == 0
    assert document["ok"] is True
    warnings = checks_with(document, "warn")
    assert not checks_with(document, "fail")
    assert set(warnings) == expected_warnings, document["checks"]
    assert detail in " ".join(warnings.values())
    assert_nothing_left(pid_file)


def test_a_non_utf8_stderr_line_stops_the_stderr_reader(tmp_path: Path, pid_file: Path) -> None:
    """subprocess.rs:294-310: the daemon's stderr task reads `lines()` and returns on a line
    that is not UTF-8, dropping the pipe: the plugin's next log line fails (EPIPE), and this
    Python plugin dies of the BrokenPipeError before it answers initialize."""
    code, document = cli_check(scripted_plugin(tmp_path / "p", "stderr_bad_utf8"))
    assert code == 1
    warnings = checks_with(document, "warn")
    assert set(warnings) == {"stderr"}, document["checks"]
    assert "stderr line is not UTF-8" in warnings["stderr"]
    assert "exited with code 1" in checks_with(document, "fail")["initialize"]
    assert document["stderr_tail"] == ["\ufffd\ufffd not utf-8"]
    assert_nothing_left(pid_file)


def test_strict_turns_a_banner_line_into_a_failure(tmp_path: Path, pid_file: Path) -> None:
    root = scripted_plugin(tmp_path / "banner", "banner")
    plain = CliRunner().invoke(app, ["plugin", "check", str(root)])
    assert plain.exit_code == 0, plain.stderr
    assert "frames.json" in plain.stdout
    strict = CliRunner().invoke(app, ["plugin", "check", str(root), "--strict", "--json"])
    assert strict.exit_code == 1, strict.stdout
    document = json.loads(strict.stdout)
    assert (document["ok"], document["strict"]) == (False, True)
    human = CliRunner().invoke(app, ["plugin", "check", str(root), "--strict"])
    assert human.exit_code == 1
    assert "--strict: warnings fail" in human.stdout
    assert_nothing_left(pid_file)


@pytest.mark.parametrize(
    ("mode", "tools", "reason"),
    [
        # serde_json reads an integer past u64 as an f64 and refuses one beyond its range
        # (de.rs f64_from_parts: NumberOutOfRange): the daemon skips the whole line.
        ("big_integer", (), "number out of range"),
        # serde_json stops at 128 levels of nesting (de.rs remaining_depth): the reply whose
        # schema nests deeper is skipped the same way.
        ("deep_schema", ("scripted_echo",), "nested too deeply"),
    ],
)
def test_a_reply_serde_json_refuses_is_never_read(
    tmp_path: Path, pid_file: Path, mode: str, tools: tuple[str, ...], reason: str
) -> None:
    root = scripted_plugin(tmp_path / mode, mode, tools=tools)
    report = run_check(root, timeout_ms=1500)
    assert failed(report) == {"initialize"}, report.checks
    assert status(report, "frames.json") == "warn"
    frames = report.get("frames.json")
    assert frames is not None
    assert reason in frames.detail
    assert_nothing_left(pid_file)


def test_a_grandchild_that_calls_setsid_does_not_outlive_the_check(
    tmp_path: Path, pid_file: Path
) -> None:
    root = scripted_plugin(tmp_path / "escape", "setsid_grandchild")
    report = run_check(root, timeout_ms=TIMEOUT_MS)
    assert report.ok, report.checks
    pids = recorded_pids(pid_file)
    assert len(pids) == 2  # the plugin and its escaped grandchild
    assert_nothing_left(pid_file)


def test_declared_but_not_advertised_tool_is_a_warning(tmp_path: Path) -> None:
    root = scripted_plugin(
        tmp_path / "p", "first_tool_only", tools=("scripted_echo", "scripted_later")
    )
    report = run_check(root, timeout_ms=TIMEOUT_MS)
    assert report.ok, report.checks
    assert status(report, "tools.advertised") == "warn"
    check = report.get("tools.advertised")
    assert check is not None
    assert "scripted_later" in check.detail


def test_nonzero_exit_after_shutdown_is_a_warning(tmp_path: Path, pid_file: Path) -> None:
    report = run_check(scripted_plugin(tmp_path / "p", "shutdown_exit2"), timeout_ms=TIMEOUT_MS)
    assert report.ok, report.checks
    assert status(report, "exit") == "warn"
    check = report.get("exit")
    assert check is not None
    assert "with code 2" in check.detail
    assert_nothing_left(pid_file)


def test_program_that_cannot_start_fails_the_spawn_check(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    run = root / "run.sh"
    run.write_text("#!/nonexistent/interpreter\n", encoding="utf-8")
    run.chmod(0o755)
    (root / "nexo-plugin.toml").write_text(
        '[plugin]\nid = "broken"\nversion = "0.1.0"\nname = "b"\ndescription = "b"\n'
        'min_nexo_version = ">=0.1.0"\n[plugin.entrypoint]\ncommand = "./run.sh"\n',
        encoding="utf-8",
    )
    report = run_check(root, timeout_ms=TIMEOUT_MS)
    assert [(check.name, check.status) for check in report.checks] == [
        ("sandbox", "pass"),
        ("spawn", "fail"),
    ]
    assert "No such file or directory" in report.checks[1].detail


def test_plugin_that_never_answers_times_out_and_its_group_is_killed(
    tmp_path: Path, pid_file: Path
) -> None:
    root = scripted_plugin(tmp_path / "silent", "silent")
    report = run_check(root, timeout_ms=300)
    assert failed(report) == {"initialize"}
    check = report.get("initialize")
    assert check is not None
    assert "no reply within 300 ms" in check.detail
    pids = recorded_pids(pid_file)
    assert len(pids) == 2, "the silent plugin starts one child process"
    assert_nothing_left(pid_file)


def test_plugin_flooding_other_frames_still_times_out(tmp_path: Path, pid_file: Path) -> None:
    root = scripted_plugin(tmp_path / "flood", "flood")
    report = run_check(root, timeout_ms=500)
    assert failed(report) == {"initialize"}
    check = report.get("initialize")
    assert check is not None
    assert "no reply within 500 ms" in check.detail
    assert_nothing_left(pid_file)


@pytest.mark.parametrize("mode", ["host_request", "host_request_unknown"])
def test_plugin_requests_to_the_host_get_an_error_reply(tmp_path: Path, mode: str) -> None:
    """Before the initialize reply the daemon answers any request -32603 "host services not
    yet wired" (subprocess.rs, the reader task: no bridge yet), whatever its method."""
    root = scripted_plugin(tmp_path / "asks", mode)
    report = run_check(root, timeout_ms=TIMEOUT_MS)
    assert report.ok, report.checks
    answers = [line for line in report.stderr_tail if "host answered" in line]
    assert len(answers) == 1
    answer = json.loads(answers[0].split("host answered ", 1)[1])
    assert answer["id"] == 42
    assert answer["error"] == {"code": -32603, "message": "host services not yet wired"}


def test_plugin_ignoring_shutdown_is_killed_after_one_second(
    tmp_path: Path, pid_file: Path
) -> None:
    root = scripted_plugin(tmp_path / "stubborn", "ignore_shutdown")
    report = run_check(root, timeout_ms=TIMEOUT_MS)
    assert failed(report) == {"exit"}
    assert status(report, "shutdown") == "pass"
    check = report.get("exit")
    assert check is not None
    assert "killed" in check.detail
    assert_nothing_left(pid_file)


def test_children_of_a_conforming_plugin_do_not_outlive_the_check(
    tmp_path: Path, pid_file: Path
) -> None:
    root = scripted_plugin(tmp_path / "parent", "with_child")
    report = run_check(root, timeout_ms=TIMEOUT_MS)
    assert report.ok, report.checks
    assert len(recorded_pids(pid_file)) == 2
    assert_nothing_left(pid_file)


def test_crash_is_noticed_even_when_a_child_keeps_stdout_open(
    tmp_path: Path, pid_file: Path
) -> None:
    root = scripted_plugin(tmp_path / "crash", "crash_with_child")
    report = run_check(root, timeout_ms=60_000)
    assert failed(report) == {"unknown_method"}
    check = report.get("unknown_method")
    assert check is not None
    # Not a 60 s timeout: the exit itself is seen.
    assert "exited with code 1" in check.detail
    assert_nothing_left(pid_file)


def test_crash_shows_the_stderr_tail(tmp_path: Path) -> None:
    root = scripted_plugin(tmp_path / "crash", "crash_after_init")
    report = run_check(root, timeout_ms=TIMEOUT_MS)
    assert report.stderr_tail[-2:] == ["Traceback (most recent call last):", "RuntimeError: boom"]


def test_the_stderr_tail_is_trimmed_and_skips_blank_lines_as_the_daemons(tmp_path: Path) -> None:
    """The daemon's plugin stderr reader trims each line (Rust `trim`) and skips the blank ones
    before its tail keeps it (subprocess.rs:314-317 at eec3f33): blank lines written after
    the reason do not push the reason out of the tail."""
    root = scripted_plugin(tmp_path / "padded", "exit_padded_stderr")
    code, document = cli_check(root)
    assert code == 1
    assert document["stderr_tail"] == ["scripted: the real reason"]


def test_keyboard_interrupt_mid_check_still_kills_the_plugin(
    tmp_path: Path, pid_file: Path
) -> None:
    root = scripted_plugin(tmp_path / "silent", "silent")

    def interrupt(signum: int, frame: types.FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        # Interrupt once the plugin is up and the host is waiting for its reply.
        signal.setitimer(signal.ITIMER_REAL, 2.0)
        with pytest.raises(KeyboardInterrupt):
            run_check(root, timeout_ms=60_000)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert_nothing_left(pid_file)


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP on this platform")
@pytest.mark.parametrize("nohup", [False, True])
def test_a_hang_up_mid_check_kills_the_plugin_and_its_children(
    tmp_path: Path, pid_file: Path, nohup: bool
) -> None:
    """The terminal or SSH session closing (SIGHUP) is an exit path too: the command unwinds
    as for SIGTERM (exit 129, one --json document) and leaves nothing running; started under
    ``nohup`` (SIGHUP ignored) it runs on to its own end."""
    root = scripted_plugin(tmp_path / "silent", "silent")
    ignore = signal.SIG_IGN if nohup else signal.SIG_DFL
    command = [sys.executable, "-m", "nexo_pkg", "plugin", "check", str(root), "--json"]
    timeout = "1500" if nohup else "60000"
    process = subprocess.Popen(
        [*command, "--timeout-ms", timeout],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, ignore),  # noqa: PLW1509
    )
    try:
        deadline = time.monotonic() + 30
        while len(recorded_pids(pid_file)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(recorded_pids(pid_file)) == 2, "the plugin and its child did not start"
        process.send_signal(signal.SIGHUP)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    document = json.loads(out)
    if nohup:
        assert process.returncode == 1, err
        assert document["ok"] is False
        assert "initialize" in {c["name"] for c in document["checks"] if c["status"] == "fail"}
    else:
        assert process.returncode == 129, err
        assert document == {"ok": False, "kind": "interrupted", "error": "hung up"}
        assert err.decode().strip().splitlines()[-1] == "error: hung up [interrupted]"
    assert_nothing_left(pid_file)


@pytest.mark.parametrize(
    ("mode", "timeout_ms", "expected_failures"),
    [("with_child", TIMEOUT_MS, set()), ("silent", 500, {"initialize"})],
)
def test_without_waitid_as_on_older_macos_pythons(  # noqa: PLR0917  # parametrized
    tmp_path: Path,
    pid_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
    timeout_ms: int,
    expected_failures: set[str],
) -> None:
    monkeypatch.delattr(os, "waitid")
    report = run_check(scripted_plugin(tmp_path / mode, mode), timeout_ms=timeout_ms)
    assert failed(report) == expected_failures, report.checks
    assert_nothing_left(pid_file)


def test_no_reply_to_an_unknown_method_warns_and_the_session_goes_on(
    tmp_path: Path, pid_file: Path
) -> None:
    # The daemon times such a call out and keeps the plugin; only the contract is broken.
    root = scripted_plugin(tmp_path / "unknown_silent", "unknown_silent")
    result = CliRunner().invoke(
        app, ["plugin", "check", str(root), "--json", "--timeout-ms", "1500"]
    )
    assert result.exit_code == 0, result.stdout
    document = json.loads(result.stdout)
    assert checks_with(document, "fail") == {}
    warnings = checks_with(document, "warn")
    assert set(warnings) == {"unknown_method"}
    assert "no reply to an unknown method" in warnings["unknown_method"]
    assert checks_with(document, "pass")["shutdown"] == 'replied {"ok": true}'
    strict = CliRunner().invoke(
        app, ["plugin", "check", str(root), "--json", "--strict", "--timeout-ms", "1500"]
    )
    assert strict.exit_code == 1
    assert_nothing_left(pid_file)


# A grandchild that calls setsid(), is double-forked away and execs `sleep` with an empty
# environment: outside the group, the tree and the token's reach. It comes back to this
# process (the child subreaper) when its parent dies, and is killed and reaped on every path.
needs_subreaper = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's"
)


def _escaped(pid_file: Path) -> int:
    pids = recorded_pids(pid_file)
    assert len(pids) == 2, pids  # the plugin and its escaped grandchild
    return pids[1]


@needs_subreaper
def test_a_bare_exec_grandchild_is_killed_and_reaped_after_a_passing_check(
    tmp_path: Path, pid_file: Path
) -> None:
    root = scripted_plugin(tmp_path / "escape", "setsid_exec_grandchild")
    report = run_check(root, timeout_ms=TIMEOUT_MS)
    assert report.ok, report.checks
    # Gone at once: not running, not a zombie, reaped.
    assert process_state(_escaped(pid_file)) is None
    assert_reaped(recorded_pids(pid_file)[0])


@needs_subreaper
def test_a_bare_exec_grandchild_is_killed_and_reaped_after_a_timeout(
    tmp_path: Path, pid_file: Path
) -> None:
    root = scripted_plugin(tmp_path / "escape", "setsid_exec_grandchild_silent")
    report = run_check(root, timeout_ms=1500)
    assert "initialize" in failed(report)
    assert process_state(_escaped(pid_file)) is None


@needs_subreaper
@pytest.mark.parametrize("raised", [KeyboardInterrupt, RuntimeError])
def test_a_bare_exec_grandchild_is_killed_and_reaped_on_ctrl_c_and_errors(
    tmp_path: Path, pid_file: Path, raised: type[BaseException]
) -> None:
    root = scripted_plugin(tmp_path / "escape", "setsid_exec_grandchild_silent")
    argv = [sys.executable, str(SCRIPTED), "setsid_exec_grandchild_silent"]
    # The interrupt comes mid-session, once the grandchild has escaped.
    with pytest.raises(raised), PluginProcess(argv, cwd=root, env=dict(os.environ)):  # noqa: PT012
        deadline = time.monotonic() + 10
        while len(recorded_pids(pid_file)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        raise raised
    assert process_state(_escaped(pid_file)) is None
    assert_reaped(recorded_pids(pid_file)[0])
