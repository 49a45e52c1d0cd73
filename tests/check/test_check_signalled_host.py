"""A plugin that signals the nexo running it (its parent) with a signal whose default action
ends a process where it stands: the command unwinds as for SIGTERM, so the plugin and a
descendant that left its session are still killed, and ``--json`` still prints its document."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from check.check_plugins import assert_not_running, recorded_pids, scripted_plugin

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's"
)

SENT = [
    pytest.param(getattr(signal, name), id=name)
    for name in ("SIGUSR1", "SIGUSR2", "SIGALRM", "SIGQUIT", "SIGABRT", "SIGPROF")
] + [pytest.param(signal.SIGRTMIN + 2, id="SIGRTMIN+2")]


@pytest.mark.parametrize("sent", SENT)
def test_a_plugin_signalling_its_host_still_leaves_nothing_running(
    tmp_path: Path, sent: int
) -> None:
    root = scripted_plugin(tmp_path / "signal", "signal_host")
    pid_file = tmp_path / "pids"
    env = {**os.environ, "FIXTURE_PID_FILE": str(pid_file), "FIXTURE_HOST_SIGNAL": str(sent)}
    command = [sys.executable, "-m", "nexo_pkg", "plugin", "check", str(root), "--json"]
    process = subprocess.run(
        [*command, "--timeout-ms", "60000"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    pids = recorded_pids(pid_file)
    try:
        assert len(pids) == 2, pids  # the plugin and its escaped grandchild
        for pid in pids:
            assert_not_running(pid)
    finally:
        for pid in pids:  # never leave one behind for the next test, whatever failed
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert process.returncode == 128 + sent, process.stderr
    document = json.loads(process.stdout)
    assert document["ok"] is False
    assert document["kind"] == "interrupted"
    assert process.stderr.decode().strip().splitlines()[-1] == (
        f"error: {document['error']} [{document['kind']}]"
    )


@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_ctrl_c_at_the_command_line_leaves_no_escaped_grandchild(tmp_path: Path, sent: int) -> None:
    """Ctrl-C (or SIGTERM) to the real command while a plugin hangs, after its grandchild
    called setsid(), was double-forked away and exec'd with an empty environment: the command
    ends as interrupted, and nothing it started is left running."""
    root = scripted_plugin(tmp_path / "escape", "setsid_exec_grandchild_silent")
    pid_file = tmp_path / "pids"
    env = {**os.environ, "FIXTURE_PID_FILE": str(pid_file)}
    command = [sys.executable, "-m", "nexo_pkg", "plugin", "check", str(root), "--json"]
    process = subprocess.Popen(
        [*command, "--timeout-ms", "60000"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while len(pids) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
            pids = recorded_pids(pid_file) if pid_file.exists() else []
        assert len(pids) == 2, pids  # the plugin and its escaped grandchild
        process.send_signal(sent)
        stdout, stderr = process.communicate(timeout=30)
        for pid in pids:
            assert_not_running(pid)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pid in pids:  # never leave one behind for the next test, whatever failed
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert process.returncode == 128 + sent, stderr
    assert b"Traceback" not in stderr
    document = json.loads(stdout)
    assert (document["ok"], document["kind"]) == (False, "interrupted")


# The signals whose default action ends (or stops) a process that nexo leaves at that default.
LEFT_AT_DEFAULT = {
    "SIGSEGV": "SIGSEGV",
    "SIGBUS": "SIGBUS",
    "SIGILL": "SIGILL",
    "SIGFPE": "SIGFPE",
    "SIGTRAP": "SIGTRAP",
    "SIGSYS": "SIGSYS",
    "SIGTSTP": "SIGTSTP",
    "SIGTTIN": "SIGTTIN",
    "SIGTTOU": "SIGTTOU",
    "32": "signals 32 and 33",
    "33": "signals 32 and 33",
}


def test_the_signals_left_at_their_default_are_named_in_the_docs() -> None:
    """Every signal whose default action ends or stops nexo and that nexo does not unwind on
    (seen in a process that installed its handlers) is named in docs/security.md beside
    SIGKILL and SIGSTOP: a plugin sending it cuts containment short, and the docs say so."""
    probe = (
        "import signal, json\n"
        "from nexo_pkg.cli.main import install_signal_handlers\n"
        "install_signal_handlers()\n"
        "names = ['SIGSEGV', 'SIGBUS', 'SIGILL', 'SIGFPE', 'SIGTRAP', 'SIGSYS', 'SIGTSTP',\n"
        "         'SIGTTIN', 'SIGTTOU']\n"
        "left = [n for n in names if signal.getsignal(getattr(signal, n)) == signal.SIG_DFL]\n"
        "left += [str(n) for n in (32, 33) if n < signal.SIGRTMIN]\n"
        "print(json.dumps(left))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    left = json.loads(completed.stdout)
    assert set(left) == set(LEFT_AT_DEFAULT)
    docs = (Path(__file__).parents[2] / "docs" / "security.md").read_text(encoding="utf-8")
    paragraph = docs[docs.index("Nothing can be done when nexo itself is killed") :][:1500]
    assert [name for name in left if LEFT_AT_DEFAULT[name] not in paragraph] == []
