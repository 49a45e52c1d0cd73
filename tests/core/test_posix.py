"""The platform module's Linux-only calls do what their docstrings say, on a real kernel."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# A parent that forks a child which asks to die with it, says the child's pid and waits.
_PARENT = """\
import os, sys, time
from nexo_pkg.core import posix
read, write = os.pipe()
child = os.fork()
if child == 0:
    os.close(read)
    asked = posix.die_with_parent()
    os.write(write, f"{os.getpid()} {int(asked)}\\n".encode())
    os.close(write)
    time.sleep(60)
    os._exit(0)
os.close(write)
sys.stdout.write(os.read(read, 100).decode())
sys.stdout.flush()
time.sleep(60)
"""


def _running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text("utf-8")
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_a_process_that_asked_to_die_with_its_parent_is_killed_with_it() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    child = 0
    try:
        assert parent.stdout is not None
        pid, asked = parent.stdout.readline().decode().split()
        child = int(pid)
        assert asked == "1"
        assert _running(child)
        parent.kill()  # SIGKILL: nothing of the parent's runs
        parent.wait(timeout=10)
        deadline = time.monotonic() + 5
        while _running(child) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _running(child)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(timeout=10)
        if parent.stdout is not None:
            parent.stdout.close()
        if child:
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)
