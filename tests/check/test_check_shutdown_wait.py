"""How long ``check`` waits for the reply to ``shutdown``: as long as the daemon does.

The daemon's plugin host (``crates/core/src/agent/nexo_plugin_registry/subprocess.rs`` at
``lordmacu/nexo-rs`` eec3f33, ``shutdown``, 1291-1314) sends ``shutdown`` and waits for its
reply with ``tokio::time::timeout(Duration::from_secs(5), rx)`` — a fixed 5 s, not
``NEXO_PLUGIN_INIT_TIMEOUT_MS`` — then cancels the plugin's tasks (its stdin closes), waits 1 s
and kills it. A reply after 5 s is never seen and the plugin is killed; a reply within 5 s is
taken whatever the init timeout is.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from check.check_plugins import scripted_plugin
from check.test_check_session import assert_nothing_left, status
from nexo_pkg.check import run_check


@pytest.fixture
def pid_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "pids"
    monkeypatch.setenv("FIXTURE_PID_FILE", str(path))
    return path


def test_a_shutdown_reply_after_the_daemons_five_seconds_is_missed_and_the_plugin_killed(
    tmp_path: Path, pid_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long init timeout does not stretch the daemon's wait for the shutdown reply."""
    monkeypatch.setenv("FIXTURE_SHUTDOWN_DELAY", "7")
    monkeypatch.setenv("NEXO_PLUGIN_INIT_TIMEOUT_MS", "20000")
    root = scripted_plugin(tmp_path / "late", "late_shutdown_reply")
    result = subprocess.run(
        [sys.executable, "-m", "nexo_pkg", "plugin", "check", str(root), "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    document = json.loads(result.stdout)
    checks = {check["name"]: check for check in document["checks"]}
    assert checks["initialize"]["status"] == "pass"
    assert checks["shutdown"]["status"] == "warn"
    assert checks["shutdown"]["detail"] == (
        "no reply to shutdown: no reply within 5000 ms (the daemon waits 5 s for it, then "
        "closes stdin and kills the plugin 1 s later)"
    )
    assert checks["exit"]["status"] == "fail"
    assert "killed" in checks["exit"]["detail"]
    assert document["ok"] is False
    assert_nothing_left(pid_file)


def test_a_shutdown_reply_within_five_seconds_is_taken_past_a_short_timeout(
    tmp_path: Path, pid_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--timeout-ms`` bounds the other replies, not the daemon's wait for ``shutdown``."""
    monkeypatch.setenv("FIXTURE_SHUTDOWN_DELAY", "1.5")
    root = scripted_plugin(tmp_path / "slowish", "late_shutdown_reply")
    report = run_check(root, timeout_ms=1000, sandbox=False)
    assert report.ok, report.checks
    assert status(report, "shutdown") == "pass"
    assert status(report, "exit") == "pass"
    assert_nothing_left(pid_file)
