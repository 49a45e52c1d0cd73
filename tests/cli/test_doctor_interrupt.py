"""Ctrl-C (or SIGTERM) to the real ``nexo plugin doctor`` while plugins hang in their
handshakes side by side (``--jobs``): the command ends at once as interrupted, not when each
handshake's deadline passes, and nothing the plugins started is left running, a grandchild
that left its session and exec'd with an empty environment included."""

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
from check.check_plugins import assert_not_running, recorded_pids
from support.tarballs import file, manifest_text, plugin_members, targz, write_plugin

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's"
)

SCRIPTED = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "scripted.py"
HANGING = ("alpha", "bravo")


def _install(root: Path, plugin_id: str, env: dict[str, str]) -> None:
    source = SCRIPTED.read_text(encoding="utf-8").replace(
        'MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"',
        'MODE = "setsid_exec_grandchild_silent"',
    )
    members = [
        file(member.name, source) if member.name == "lib/plugin/main.py" else member
        for member in plugin_members(plugin_id, "1.0.0", manifest=manifest_text(plugin_id, "1.0.0"))
    ]
    tarball = write_plugin(root.parent / "dist", plugin_id, "1.0.0", data=targz(members))
    command = [sys.executable, "-m", "nexo_pkg", "plugin", "install", str(tarball)]
    installed = subprocess.run(
        [*command, "--dest", str(root), "--yes"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert installed.returncode == 0, installed.stderr


@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_doctor_stops_its_handshakes_at_once(tmp_path: Path, sent: int) -> None:
    root = tmp_path / "plugins"
    pid_file = tmp_path / "pids"
    env = {**os.environ, "NEXO_HOME": str(tmp_path / "home"), "FIXTURE_PID_FILE": str(pid_file)}
    for name in ("NEXO_CONFIG_DIR", "NEXO_DAEMON_VERSION"):
        env.pop(name, None)
    for plugin_id in HANGING:
        _install(root, plugin_id, env)
    command = [sys.executable, "-m", "nexo_pkg", "plugin", "doctor", "--dest", str(root)]
    process = subprocess.Popen(
        [*command, "--json", "--timeout-ms", "40000", "--jobs", "8"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    pids: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(pids) < 2 * len(HANGING) and time.monotonic() < deadline:
            time.sleep(0.05)
            pids = recorded_pids(pid_file)
        assert len(pids) == 2 * len(HANGING), pids  # each plugin and its escaped grandchild
        process.send_signal(sent)
        sent_at = time.monotonic()
        stdout, stderr = process.communicate(timeout=90)
        took = time.monotonic() - sent_at
        for pid in pids:
            assert_not_running(pid, within=1.0)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pid in pids:  # never leave one behind for the next test, whatever failed
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    # Not the handshakes' 40 s deadline: the running plugins are killed when the signal lands.
    assert took < 10, f"doctor took {took:.1f} s to stop after the signal"
    assert process.returncode == 128 + sent, stderr
    assert b"Traceback" not in stderr
    document = json.loads(stdout)
    assert (document["ok"], document["kind"]) == (False, "interrupted")
    assert stderr.decode().strip().splitlines()[-1] == (
        f"error: {document['error']} [{document['kind']}]"
    )
