"""What a plugin author meets from the command line: a slow `initialize` fails only past
`--timeout-ms` (and nothing is left running), and a plugin that logs far more on stderr than a
pipe holds still passes, with the last 50 lines of its log in the report."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import clean_env, nexo

from check.check_plugins import assert_not_running, assert_reaped, recorded_pids, scripted_plugin

pytestmark = pytest.mark.posix


def _check(root: Path, pid_file: Path, *options: str, **env: str) -> tuple[int, dict[str, Any]]:
    """``nexo plugin check ROOT --json OPTIONS`` through the real console script."""
    result = nexo(
        "plugin", "check", root, "--json", *options,
        env=clean_env(FIXTURE_PID_FILE=str(pid_file), **env),
    )  # fmt: skip
    return result.code, result.document


def _by_status(document: dict[str, Any], status: str) -> dict[str, str]:
    return {c["name"]: c["detail"] for c in document["checks"] if c["status"] == status}


def _nothing_left(pid_file: Path) -> None:
    pids = recorded_pids(pid_file)
    assert len(pids) == 2, "the plugin records itself and the child it starts"
    assert_reaped(pids[0])
    assert_not_running(pids[1])


def test_an_initialize_slower_than_timeout_ms_fails_initialize_at_the_deadline(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pids"
    root = scripted_plugin(tmp_path / "slow", "slow_init")
    started = time.monotonic()
    code, document = _check(root, pid_file, "--timeout-ms", "700", FIXTURE_INIT_DELAY="30")
    elapsed = time.monotonic() - started
    assert code == 1
    assert document["ok"] is False
    assert {"ok", "checks", "stderr_tail"} <= set(document)
    assert _by_status(document, "fail") == {
        "initialize": "no reply to initialize: no reply within 700 ms"
    }
    names = [check["name"] for check in document["checks"]]
    # Nothing past the handshake was judged on a plugin that never answered it.
    assert "identity" not in names
    assert "shutdown" not in names
    assert "scripted: nexo_version=" in " ".join(document["stderr_tail"])
    # Stopped at the deadline, not when the plugin would have answered.
    assert elapsed < 20, elapsed
    _nothing_left(pid_file)


def test_an_initialize_slower_than_usual_but_within_timeout_ms_passes(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    root = scripted_plugin(tmp_path / "slow", "slow_init")
    code, document = _check(root, pid_file, "--timeout-ms", "20000", FIXTURE_INIT_DELAY="1.2")
    assert code == 0, document["checks"]
    assert document["ok"] is True
    assert not _by_status(document, "fail")
    assert not _by_status(document, "warn")
    initialize = _by_status(document, "pass")["initialize"]
    assert initialize.startswith("replied in ")
    assert int(initialize.split()[2]) >= 1200
    _nothing_left(pid_file)


def test_a_plugin_logging_more_than_a_pipe_holds_passes_with_the_last_50_lines(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pids"
    root = scripted_plugin(tmp_path / "noisy", "stderr_noise")
    code, document = _check(root, pid_file, "--timeout-ms", "20000")
    assert code == 0, document["checks"]
    assert document["ok"] is True
    assert not _by_status(document, "fail")
    assert not _by_status(document, "warn")
    tail = document["stderr_tail"]
    assert len(tail) == 50
    assert tail[-1] == "scripted: noise done before shutdown"
    assert tail[-2] == f"scripted: noise 29999 {'n' * 80}"
    pids = recorded_pids(pid_file)
    assert len(pids) == 1
    assert_reaped(pids[0])


def test_a_plugin_dying_inside_tool_invoke_fails_invoke_with_its_stderr(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    root = scripted_plugin(tmp_path / "dies", "with_child", tools=("scripted_echo",))
    code, document = _check(
        root, pid_file, "--timeout-ms", "20000",
        "--invoke", "scripted_echo", "--args", '{"answer": "crash"}',
    )  # fmt: skip
    assert code == 1
    assert document["ok"] is False
    assert _by_status(document, "fail") == {
        "invoke": "no reply to tool.invoke: the plugin exited with code 9 before replying"
    }
    assert document["stderr_tail"][-1] == "scripted: died inside tool.invoke"
    names = [check["name"] for check in document["checks"]]
    # The handshake passed before it; nothing is asked of a plugin that is gone.
    assert "initialize" in _by_status(document, "pass")
    assert "unknown_method" not in names
    assert "shutdown" not in names
    _nothing_left(pid_file)


def test_a_tool_invoke_never_answered_fails_at_the_deadline_and_nothing_is_left(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pids"
    root = scripted_plugin(tmp_path / "mute", "with_child", tools=("scripted_echo",))
    code, document = _check(
        root, pid_file, "--timeout-ms", "1500",
        "--invoke", "scripted_echo", "--args", '{"answer": "silent"}',
    )  # fmt: skip
    assert code == 1
    assert _by_status(document, "fail") == {
        "invoke": "no reply to tool.invoke: no reply within 1500 ms"
    }
    assert "initialize" in _by_status(document, "pass")
    # The plugin, still busy with the call, is killed with its child.
    _nothing_left(pid_file)
