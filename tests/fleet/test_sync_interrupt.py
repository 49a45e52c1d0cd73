"""Ctrl-C or SIGTERM while a ``sync`` waits on a registry that has stopped answering: the run
stops its requests, so the plugins under way end their step (a download fails) instead of
waiting out the network deadline, and the run ends at once with the signal's line and exit
code; nothing half-installed, no staging tree, no worker process left behind.

The registry is the real one, stopped with SIGSTOP for the whole run: it accepts connections
(the kernel does) and never answers, as a registry behind a dead backend does. The sync's
deadline (``--timeout``) is far beyond the test's patience, so a run that waited for it
would not end while the registry is stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.cli import nexo
from support.registry import Registry

from .conftest import LINUX, MakeDist, push_dist

PLUGINS = ("alpha", "bravo", "charlie")

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")


def _waiting_on(pid: int, port: int) -> bool:
    """Whether process ``pid`` has a TCP connection established to 127.0.0.1:``port``."""
    inodes = set()
    for link in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = str(link.readlink())
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    for line in Path("/proc/net/tcp").read_text(encoding="ascii").splitlines()[1:]:
        fields = line.split()
        remote, state, inode = fields[2], fields[3], fields[9]
        if state == "01" and int(remote.split(":")[1], 16) == port and inode in inodes:
            return True
    return False


def _alive(group: int) -> list[int]:
    """The processes of process group ``group`` still running (not zombies)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            alive.append(int(entry.name))
    return alive


@linux_only
@pytest.mark.parametrize(
    ("jobs", "signum"),
    [("8", signal.SIGINT), ("8", signal.SIGTERM), ("1", signal.SIGINT)],
)
def test_a_signal_stops_a_sync_waiting_on_a_registry_that_does_not_answer(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    jobs: str,
    signum: int,
) -> None:
    home = Path(fleet_env["NEXO_HOME"])
    for plugin_id in PLUGINS:
        dist = make_dist(plugin_id, "1.0.0", targets=(LINUX,), identity=None)
        push_dist(dist, registry.ref(f"plugins/{plugin_id}"), home)
    wanted = tmp_path / "project" / "nexo-plugins.toml"
    wanted.parent.mkdir()
    wanted.write_text(
        "".join(
            f'[plugins.{name}]\nsource = "{registry.ref(f"plugins/{name}")}"\n\n'
            for name in PLUGINS
        ),
        encoding="utf-8",
    )
    assert nexo("plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env).code == 0
    dest, sync_home = tmp_path / "root", tmp_path / "sync-home"
    port = int(registry.host.rsplit(":", 1)[1])
    os.kill(registry.process.pid, signal.SIGSTOP)
    try:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "nexo_pkg", "plugin", "sync", "--lock",
                str(wanted.parent / "nexo-plugins.lock"), "--dest", str(dest), "--frozen",
                "--plain-http", "--jobs", jobs, "--timeout", "600", "--json",
            ],
            env={**fleet_env, "NEXO_HOME": str(sync_home)},
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group, as a terminal's job is
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not _waiting_on(process.pid, port):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the sync never asked the registry"
            time.sleep(0.01)
        os.killpg(process.pid, signum)  # as the terminal sends Ctrl-C: to the whole group
        try:
            out, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            pytest.fail("the sync waited for a registry that never answers")
        group_left = _alive(process.pid)
    finally:
        os.kill(registry.process.pid, signal.SIGCONT)
    expected = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated")}
    code, word = expected[signal.Signals(signum)]
    assert process.returncode == code, err
    assert err.strip().splitlines()[-1] == f"error: {word} [interrupted]"
    assert "Traceback" not in err
    assert out.strip() == f'{{"ok": false, "kind": "interrupted", "error": "{word}"}}'
    assert group_left == []
    # Nothing installed, no staging tree or journal: the root holds its lock files only.
    assert {path.name for path in dest.iterdir()} <= {".nexo-install.lock", ".nexo-sync.lock"}
    downloads = sync_home / "cache" / "blobs"
    # No partial download left in the blob cache (its lock file is all there is).
    # (A signal that lands while the cache is being made may come before its lock file.)
    left = [p.name for p in downloads.rglob("*") if p.is_file()] if downloads.exists() else []
    assert set(left) <= {".lock"}, left
