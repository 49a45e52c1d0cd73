"""A plugin that stops reading its stdin while still running: a request too large for the
pipe cannot be written whole. The daemon's writer waits on the pipe and the call times out;
``check`` says so, and never that the plugin closed its stdin."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from check.check_plugins import assert_not_running, recorded_pids, scripted_plugin
from nexo_pkg.cli.app import build_app

app = build_app()[0]


def test_a_request_the_plugin_never_reads_times_out_and_is_not_called_a_closed_stdin(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pids"
    root = scripted_plugin(tmp_path / "p", "stop_reading", tools=("scripted_echo",))
    args = json.dumps({"text": "a" * 300_000})  # far above a pipe's buffer
    result = CliRunner().invoke(
        app,
        [
            "plugin",
            "check",
            str(root),
            "--json",
            "--timeout-ms",
            "1500",
            "--invoke",
            "scripted_echo",
            "--args",
            args,
        ],
        env={"FIXTURE_PID_FILE": str(pid_file)},
    )
    assert result.exit_code == 1, result.stdout
    document = json.loads(result.stdout)
    failed = {c["name"]: c["detail"] for c in document["checks"] if c["status"] == "fail"}
    assert set(failed) == {"invoke"}, document["checks"]
    detail = failed["invoke"]
    assert detail.startswith("no reply to tool.invoke: no reply within 1500 ms"), detail
    assert "stopped reading its stdin" in detail
    assert "closed its stdin" not in detail
    for pid in recorded_pids(pid_file):
        assert_not_running(pid)
