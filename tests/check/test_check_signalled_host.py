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
    assert process.stderr.decode().strip().splitlines()[-1] == document["error"]
