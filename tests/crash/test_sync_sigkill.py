"""SIGKILL ``sync`` while it moves a whole fleet from one lock to the next, several plugins at
a time: every plugin is either fully old or fully new, never missing, doubled or partial, and
the next ``sync`` finishes the job and leaves nothing behind.

The root starts with four plugins at 1.0.0 (a first sync); the killed sync moves all four to
2.0.0 with the default jobs (all four at once), so the kill lands while downloads,
extractions and renames of several plugins overlap. Kill moments are drawn uniformly over
the time an uninterrupted run takes (measured once), with a fixed seed so a failure names a
reproducible moment. After each kill the root is walked the way the daemon walks it
(``tests/support/daemon_walk.py``) before any command touches it, then ``list`` and
``verify`` check every receipt against its files. The sync's extraction workers (processes,
with several jobs) must not outlive it.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest
from support.cli import nexo
from support.daemon_walk import assert_one_per_id, discovered_versions
from support.registry import Registry, registry
from support.registry_env import (
    LINUX,
    MakeDist,
    fleet_env,
    make_dist,
    private_sigstore,
    push_dist,
)

from .scenario import kill_after

__all__ = ["fleet_env", "make_dist", "private_sigstore", "registry"]

PLUGINS = ("alpha", "bravo", "charlie", "delta")
OLD, NEW = "1.0.0", "2.0.0"
FAST_POINTS = 3
SLOW_POINTS = 30


def _lock(env: dict[str, str], directory: Path, registry: Registry, version: str) -> Path:
    directory.mkdir()
    (directory / "nexo-plugins.toml").write_text(
        "".join(
            f'[plugins.{p}]\nsource = "{registry.ref(f"plugins/{p}")}"\nversion = "={version}"\n\n'
            for p in PLUGINS
        ),
        encoding="utf-8",
    )
    locked = plugin("lock", "-f", str(directory / "nexo-plugins.toml"), "--plain-http", env=env)
    assert locked.code == 0, locked.stderr
    return directory / "nexo-plugins.lock"


# The CLI runs here around each killed sync (a subprocess of its own); those runs need none.
plugin = partial(nexo, "plugin", in_process=True)


def _sync_argv(lock: Path, dest: Path) -> list[str]:
    return [
        sys.executable, "-m", "nexo_pkg", "plugin", "sync", "--lock", str(lock),
        "--dest", str(dest), "--frozen", "--plain-http", "--json",
    ]  # fmt: skip


def _state(env: dict[str, str], dest: Path) -> dict[str, str]:
    """What the root holds, checked the daemon's way first, then by ``list`` and ``verify``."""
    # Before any command runs: what a daemon starting now would load. Each plugin at most
    # once, and whatever it meets is a complete old or new tree with its receipt.
    assert_one_per_id(dest)
    for plugin_id, version in discovered_versions(dest).items():
        assert version in (OLD, NEW), (plugin_id, version)
        receipt = dest / f"{plugin_id}-{version}" / ".nexo-install.json"
        assert json.loads(receipt.read_text())["version"] == version
    # `list` finishes an interrupted replacement; then every plugin is there exactly once.
    listing = plugin("list", "--dest", str(dest), "--include-orphan", "--json", env=env)
    assert listing.code == 0, listing.stderr
    document = json.loads(listing.stdout)
    assert document["orphans"] == [], document["orphans"]
    versions: dict[str, list[str]] = {}
    for item in document["plugins"]:
        if not item["kept"]:  # versions kept for rollback are out of the daemon's sight
            versions.setdefault(item["id"], []).append(item["version"])
    assert sorted(versions) == sorted(PLUGINS), versions
    assert all(len(found) == 1 for found in versions.values()), versions
    state = {plugin_id: found[0] for plugin_id, found in versions.items()}
    assert discovered_versions(dest) == state
    verified = plugin("verify", "--dest", str(dest), "--json", env=env)
    assert verified.code == 0, verified.stdout
    assert all(item["ok"] for item in json.loads(verified.stdout)["plugins"])
    return state


def _leftovers(dest: Path) -> list[str]:
    """What interrupted runs left under ``.nexo`` (the versions kept for rollback are not)."""
    bookkeeping = dest / ".nexo"
    if not bookkeeping.exists():
        return []
    return sorted(
        str(path.relative_to(dest))
        for path in bookkeeping.rglob("*")
        if path.relative_to(bookkeeping).parts[0] != "kept"
    )


def _kept(env: dict[str, str], dest: Path) -> dict[str, list[str]]:
    """The versions kept for rollback, by plugin id."""
    listing = plugin("list", "--dest", str(dest), "--json", env=env)
    kept: dict[str, list[str]] = {}
    for item in json.loads(listing.stdout)["plugins"]:
        if item["kept"]:
            kept.setdefault(item["id"], []).append(item["version"])
    return kept


def _survivors(dest: Path) -> list[int]:
    """Processes still running the killed sync's command line (its dest is unique to it): its
    extraction workers must die with it rather than write on behind the next run's back."""
    deadline = time.monotonic() + 5
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                command = (entry / "cmdline").read_bytes().split(b"\0")
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if str(dest).encode() in command and state != "Z":
                found.append(int(entry.name))
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def _crash_sync(
    tmp_path: Path, env: dict[str, str], registry: Registry, make_dist: MakeDist, points: int
) -> None:
    home = Path(env["NEXO_HOME"])
    rng = random.Random(26)  # noqa: S311 (reproducible kill moments, not cryptography)
    for plugin_id in PLUGINS:
        for version in (OLD, NEW):
            # Incompressible payload, so each tarball takes a while to fetch and write.
            payload = rng.randbytes(3 * 1024 * 1024)
            dist = make_dist(plugin_id, version, identity=None, targets=(LINUX,), payload=payload)
            push_dist(dist, registry.ref(f"plugins/{plugin_id}"), home)
    old_lock = _lock(env, tmp_path / "old", registry, OLD)
    new_lock = _lock(env, tmp_path / "new", registry, NEW)

    def fresh_root(name: str) -> tuple[dict[str, str], Path]:
        # Each root has its own NEXO_HOME, so the killed sync downloads as a new host would.
        root_env = {**env, "NEXO_HOME": str(tmp_path / f"home-{name}")}
        dest = tmp_path / f"root-{name}"
        first = plugin(*_sync_argv(old_lock, dest)[4:], env=root_env)
        assert first.code == 0, first.stdout
        return root_env, dest

    calibrate_env, calibrate_dest = fresh_root("calibrate")
    started = time.monotonic()
    timed = subprocess.run(
        _sync_argv(new_lock, calibrate_dest), env=calibrate_env, capture_output=True, check=False
    )
    span = time.monotonic() - started
    assert timed.returncode == 0, timed.stdout
    # One generator for all the moments (a fresh one per moment drew the same moment each
    # time), and the middle of the run, when extraction workers are busy, always among them.
    draw = random.Random(1)  # noqa: S311
    moments = sorted([span / 2, *(draw.uniform(0.05, span * 1.1) for _ in range(points - 1))])
    for index, delay in enumerate(moments):
        root_env, dest = fresh_root(f"point-{index}")
        process = subprocess.Popen(
            _sync_argv(new_lock, dest), env=root_env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        killed = kill_after(process, delay)
        assert _survivors(dest) == [], delay
        state = _state(root_env, dest)
        if not killed:
            assert set(state.values()) == {NEW}, (delay, state)
        again = plugin(*_sync_argv(new_lock, dest)[4:], env=root_env)
        assert again.code == 0, (delay, again.stdout)
        assert _state(root_env, dest) == dict.fromkeys(PLUGINS, NEW)
        assert _leftovers(dest) == [], (delay, _leftovers(dest))
        # Each plugin's replaced version is kept for rollback, once, whatever the moment.
        assert _kept(root_env, dest) == {plugin_id: [OLD] for plugin_id in PLUGINS}, delay


def test_sigkill_sync_leaves_each_plugin_old_or_new(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    _crash_sync(tmp_path, fleet_env, registry, make_dist, FAST_POINTS)


@pytest.mark.slow
def test_sigkill_sync_30_points(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    _crash_sync(tmp_path, fleet_env, registry, make_dist, SLOW_POINTS)
