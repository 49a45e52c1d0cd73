"""The daemon's own environment settings that change how its host treats a plugin, read by
``check`` as the daemon reads them (``lordmacu/nexo-rs`` at eec3f33):

* ``NEXO_PLUGIN_INIT_TIMEOUT_MS`` (``crates/core/src/agent/nexo_plugin_registry/subprocess.rs``
  516-521: ``std::env::var(..).ok().and_then(|s| s.parse().ok()).unwrap_or(5_000)``, a Rust
  ``u64``) is the reply deadline when ``--timeout-ms`` is not given;
* ``NEXO_PLUGIN_NAMESPACE_STRICT`` (``crates/core/src/agent/scoped_tool_registry.rs``
  ``NamespaceEnforcement::from_env``: ``1`` or ``true`` is strict, anything else warns) decides
  whether a tool name outside ``<id>_``/``ext_<id>_`` fails the plugin's start or is only
  logged (``nexo_plugin_registry/init_loop.rs`` ``check_namespace_after_init``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from check.check_plugins import scripted_plugin
from check.test_check_session import assert_nothing_left, failed, status
from nexo_pkg.check import CheckReport, run_check
from nexo_pkg.check.rpc import DEFAULT_TIMEOUT_MS, plugin_timeout_ms


@pytest.fixture
def pid_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "pids"
    monkeypatch.setenv("FIXTURE_PID_FILE", str(path))
    return path


def detail_of(report: CheckReport, name: str) -> str:
    check = report.get(name)
    assert check is not None, f"check {name} did not run: {report.checks}"
    return check.detail


def test_the_daemon_init_timeout_variable_is_the_default_deadline(
    tmp_path: Path, pid_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEXO_PLUGIN_INIT_TIMEOUT_MS", "300")
    report = run_check(scripted_plugin(tmp_path / "silent", "silent"), sandbox=False)
    assert failed(report) == {"initialize"}
    assert "no reply within 300 ms" in detail_of(report, "initialize")
    assert_nothing_left(pid_file)


def test_an_explicit_timeout_wins_over_the_daemon_variable(
    tmp_path: Path, pid_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEXO_PLUGIN_INIT_TIMEOUT_MS", "60000")
    report = run_check(scripted_plugin(tmp_path / "silent", "silent"), timeout_ms=300)
    assert "no reply within 300 ms" in detail_of(report, "initialize")
    assert_nothing_left(pid_file)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, DEFAULT_TIMEOUT_MS),
        ("250", 250),
        ("+250", 250),  # Rust's u64 parse takes a leading plus
        ("0", 0),  # the daemon then gives up at once
        ("", DEFAULT_TIMEOUT_MS),
        (" 250", DEFAULT_TIMEOUT_MS),  # no trimming in `str::parse`
        ("250ms", DEFAULT_TIMEOUT_MS),
        ("-250", DEFAULT_TIMEOUT_MS),
        ("2.5", DEFAULT_TIMEOUT_MS),
        ("nan", DEFAULT_TIMEOUT_MS),
        ("\u0662\u0665\u0660", DEFAULT_TIMEOUT_MS),  # not ASCII digits
        (str(2**64), DEFAULT_TIMEOUT_MS),  # past u64
    ],
)
def test_the_variable_is_read_as_the_daemon_parses_it(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: int
) -> None:
    if value is None:
        monkeypatch.delenv("NEXO_PLUGIN_INIT_TIMEOUT_MS", raising=False)
    else:
        monkeypatch.setenv("NEXO_PLUGIN_INIT_TIMEOUT_MS", value)
    assert plugin_timeout_ms() == expected


def test_a_zero_init_timeout_fails_initialize_as_the_daemon_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEXO_PLUGIN_INIT_TIMEOUT_MS", "0")
    report = run_check(scripted_plugin(tmp_path / "ok", "ok"), sandbox=False)
    assert failed(report) == {"initialize"}
    assert "no reply within 0 ms" in detail_of(report, "initialize")


@pytest.mark.parametrize(("strict", "expected"), [(None, "warn"), ("0", "warn"), ("1", "fail")])
def test_a_name_outside_the_namespace_is_judged_as_the_daemon_enforces_it(
    tmp_path: Path,
    pid_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    strict: str | None,
    expected: str,
) -> None:
    if strict is None:
        monkeypatch.delenv("NEXO_PLUGIN_NAMESPACE_STRICT", raising=False)
    else:
        monkeypatch.setenv("NEXO_PLUGIN_NAMESPACE_STRICT", strict)
    report = run_check(scripted_plugin(tmp_path / "ns", "bad_namespace"), timeout_ms=10_000)
    assert status(report, "tools.namespace") == expected
    assert "other_tool" in detail_of(report, "tools.namespace")
    # Not in [plugin.extends].tools either: the daemon refuses the plugin for that alone.
    assert status(report, "tools.declared") == "fail"
    assert report.ok is False
    assert_nothing_left(pid_file)


def test_a_plugin_that_closes_stdout_but_keeps_running_is_timed_out_not_failed(
    tmp_path: Path, pid_file: Path
) -> None:
    """The daemon's stdout reader ends at end-of-file (`Ok(None) => return`, subprocess.rs
    383); later requests time out as they do for a plugin that does not answer, which the
    daemon tolerates (no kill): `unknown_method` and `shutdown` warn as for silence."""
    report = run_check(scripted_plugin(tmp_path / "p", "close_stdout"), timeout_ms=500)
    assert failed(report) == set(), report.checks
    assert status(report, "initialize") == "pass"
    assert status(report, "unknown_method") == "warn"
    assert "closed its stdout" in detail_of(report, "unknown_method")
    assert status(report, "shutdown") == "warn"
    assert status(report, "exit") == "warn"  # it exits once its stdin is closed
    assert report.ok
    assert_nothing_left(pid_file)


def test_a_manifest_env_key_holding_an_equals_sign_reaches_the_plugin_as_under_the_daemon(
    tmp_path: Path, pid_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon accepts ``"A=B" = "x"`` in ``[plugin.entrypoint.env]`` and Rust's
    ``Command::env`` writes the entry ``A=B=x`` (``subprocess.rs:200-202``), which the plugin
    reads as ``A`` = ``B=x``; an ``A`` sorting before it (here the inherited one) wins."""
    monkeypatch.setenv("FIXTURE_ENV_NAMES", "FIXTURE_FOLDED,FIXTURE_KEPT")
    monkeypatch.setenv("FIXTURE_KEPT", "inherited")
    root = scripted_plugin(
        tmp_path / "eq",
        "ok",
        extra=(
            "\n[plugin.entrypoint.env]\n"
            '"FIXTURE_FOLDED=part" = "rest"\n'
            '"FIXTURE_KEPT=other" = "ignored"\n'
        ),
    )
    result = subprocess.run(
        [sys.executable, "-m", "nexo_pkg", "plugin", "check", str(root), "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    document = json.loads(result.stdout)
    assert document["ok"] is True
    assert "scripted: env FIXTURE_FOLDED='part=rest'" in document["stderr_tail"]
    assert "scripted: env FIXTURE_KEPT='inherited'" in document["stderr_tail"]
    assert_nothing_left(pid_file)
