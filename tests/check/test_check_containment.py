"""How the host's containment (the child subreaper, freezing, reaping) behaves at its edges:
a signal landing while descendants are frozen, and the moment a plugin's pid is given back.

These drive :class:`~nexo_pkg.check.host.PluginProcess` in this process (the subreaper is this
process) with real children; a seam places the interruption or the look at the exact moment.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from check.check_plugins import process_state
from nexo_pkg.check import host
from nexo_pkg.check.host import PluginProcess
from nexo_pkg.core import posix

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's"
)

# The plugin leaves an orphan: a grandchild in a session of its own whose parent exits, so it
# is re-parented to this process (the subreaper) and found as an orphan, not in the group.
ORPHAN = (
    "import os, sys, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid()))\n"
    "        os.rename(sys.argv[1] + '.tmp', sys.argv[1])\n"
    "        time.sleep(60)\n"
    "    os._exit(0)\n"
    "time.sleep(60)\n"
)


def _parent(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def _orphan_pid(path: Path) -> int:
    """The orphan's pid, once it is re-parented here (its parent has exited)."""
    deadline = time.monotonic() + 10
    while not path.exists():
        assert time.monotonic() < deadline, "the plugin never started its orphan"
        time.sleep(0.01)
    pid = int(path.read_text(encoding="utf-8"))
    while _parent(pid) != os.getpid():
        assert time.monotonic() < deadline, "the orphan was never re-parented here"
        time.sleep(0.01)
    return pid


def test_a_signal_while_descendants_are_frozen_leaves_none_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C (or SIGTERM turned into an exception) lands right after the freezing stopped a
    descendant: what was stopped is killed on the way out, never left stopped for ever (the
    signal may land in the last containment of a run, after which nothing looks again)."""
    marker = tmp_path / "orphan"
    real_stop = posix.stop
    stopped: list[int] = []

    def stop_then_interrupted(pid: int) -> None:
        real_stop(pid)
        stopped.append(pid)
        if len(stopped) == 1:
            raise KeyboardInterrupt

    orphan = None
    try:
        with PluginProcess(
            [sys.executable, "-c", ORPHAN, str(marker)], cwd=tmp_path, env=dict(os.environ)
        ) as process:
            orphan = _orphan_pid(marker)
            monkeypatch.setattr(posix, "stop", stop_then_interrupted)
            with pytest.raises(KeyboardInterrupt), host._REAPING.lock:
                host._REAPING.contain(process._born, None)
            monkeypatch.setattr(posix, "stop", real_stop)
            assert stopped == [orphan]
            # Killed (a zombie child of this process until reaped), not stopped.
            deadline = time.monotonic() + 5
            while (state := process_state(orphan)) not in {None, "Z"}:
                assert time.monotonic() < deadline, f"the frozen orphan is left in state {state}"
                time.sleep(0.01)
    finally:
        if orphan is not None and process_state(orphan) not in {None, "Z"}:
            os.kill(orphan, signal.SIGKILL)


def test_a_reaped_plugin_pid_never_counts_as_a_running_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the moment the plugin is reaped, its pid is free: a new process (a descendant of a
    plugin, another plugin of `doctor --jobs`) may get it. While it still counted as a running
    plugin, such an orphan would be skipped by the containment, and a plugin spawned with
    that pid would be dropped from the running ones when the first one's close ended it (then
    frozen and killed as an orphan, or reaped behind its `Popen`). The close looks at what
    another thread would see once the plugin is reaped, under the same lock."""
    seen: list[tuple[bool, bool]] = []
    real_drain = PluginProcess.drain

    def drain_and_look(self: PluginProcess, seconds: float) -> None:
        if self._popen.returncode is not None:
            with host._REAPING.lock:
                seen.append((self.pid in host._REAPING.live, Path(f"/proc/{self.pid}").exists()))
        real_drain(self, seconds)

    monkeypatch.setattr(PluginProcess, "drain", drain_and_look)
    for _ in range(5):
        with PluginProcess(
            [sys.executable, "-c", "import sys, time; sys.stderr.write('x'); time.sleep(60)"],
            cwd=tmp_path,
            env=dict(os.environ),
        ) as process:
            assert process.pid in host._REAPING.live
        assert process.exit_code == -signal.SIGKILL
    assert seen
    assert all(not counted for counted, _exists in seen), seen
