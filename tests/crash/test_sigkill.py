"""SIGKILL ``install``, ``upgrade`` and ``remove`` at random moments: the next command sees the
old or the new complete state, never a partial one, and a following install cleans up.

The kill moments are drawn uniformly over the time an uninterrupted run takes (measured once
per test), with a fixed seed per point so a failure names a reproducible moment. The fast
profile kills eight times in all (two installs, two ``--force`` reinstalls, two upgrades, one
``upgrade --keep-old``, one removal); ``-m slow`` fifty times per command. After every kill
the root is also walked the way the daemon walks it: no plugin id is ever discoverable twice.
"""

from __future__ import annotations

import json
import random
import tarfile
from pathlib import Path

import pytest
from faults.server import FaultyGitHubServer
from support.daemon_walk import assert_one_per_id, discovered_versions
from support.tarballs import plugin_members

from .scenario import (
    PLUGIN,
    THROTTLE_BYTES_PER_SECOND,
    Root,
    assert_complete,
    cache_leftovers,
    installed_versions,
    kill_after,
    leftovers,
    publish,
    wait_for,
)

FAST_POINTS = 2  # install, upgrade and --force 2 each, --keep-old and remove 1: eight kills
SLOW_POINTS = 50


def _root(server: FaultyGitHubServer, tmp_path: Path, name: str) -> Root:
    home = tmp_path / name
    home.mkdir()
    return Root(server, home)


def _published(server: FaultyGitHubServer) -> None:
    first = publish(server, PLUGIN, "1.0.0", latest=False)
    second = publish(server, PLUGIN, "2.0.0", latest=True)
    server.throttle(first, THROTTLE_BYTES_PER_SECOND)
    server.throttle(second, THROTTLE_BYTES_PER_SECOND)


def _delays(seed: int, span: float, points: int) -> list[float]:
    rng = random.Random(seed)  # noqa: S311 (reproducible kill moments, not cryptography)
    return sorted(rng.uniform(0.05, span) for _ in range(points))


def _crash_install(server: FaultyGitHubServer, tmp_path: Path, points: int) -> None:
    _published(server)
    span = _root(server, tmp_path, "calibrate").timed_run(
        "install", f"acme/{PLUGIN}@v2.0.0", "--yes"
    )
    for index, delay in enumerate(_delays(1, span * 1.1, points)):
        root = _root(server, tmp_path, f"point-{index}")
        killed = kill_after(root.spawn("install", f"acme/{PLUGIN}@v2.0.0", "--yes"), delay)
        state = assert_complete(root, [[], ["2.0.0"]])
        if not killed:
            assert state == ["2.0.0"]
        again = root.run("install", f"acme/{PLUGIN}@v2.0.0", "--yes")
        assert again.exit_code == 0, (delay, again.stdout)
        assert again.document["was_already_present"] is (state == ["2.0.0"])
        assert assert_complete(root, [["2.0.0"]]) == ["2.0.0"]
        assert leftovers(root) == [], (delay, leftovers(root))
        assert cache_leftovers(root) == [], (delay, cache_leftovers(root))


def _crash_upgrade(server: FaultyGitHubServer, tmp_path: Path, points: int, *flags: str) -> None:
    _published(server)
    calibrate = _root(server, tmp_path, "calibrate")
    assert calibrate.run("install", f"acme/{PLUGIN}@v1.0.0", "--yes").exit_code == 0
    # Installed from an explicit tag, the plugin is pinned: the upgrade names the new tag.
    span = calibrate.timed_run("upgrade", PLUGIN, "--tag", "v2.0.0", "--yes", *flags)
    for index, delay in enumerate(_delays(2, span * 1.1, points)):
        root = _root(server, tmp_path, f"point-{index}")
        assert root.run("install", f"acme/{PLUGIN}@v1.0.0", "--yes").exit_code == 0
        upgrade = root.spawn("upgrade", PLUGIN, "--tag", "v2.0.0", "--yes", *flags)
        killed = kill_after(upgrade, delay)
        # Never both: the old version leaves the daemon's sight as the new one arrives.
        state = assert_complete(root, [["1.0.0"], ["2.0.0"]])
        if not killed:
            assert state == ["2.0.0"]
        again = root.run("upgrade", PLUGIN, "--tag", "v2.0.0", "--yes")
        assert again.exit_code == 0, (delay, again.stdout)
        assert assert_complete(root, [["2.0.0"]]) == ["2.0.0"]
        # An upgrade that finds 2.0.0 already there is a no-op and need not take the lock;
        # the next install (here: already present) is what sweeps the leftovers.
        present = root.run("install", f"acme/{PLUGIN}@v2.0.0", "--yes")
        assert present.exit_code == 0, present.stdout
        assert leftovers(root) == [], (delay, leftovers(root))
        assert cache_leftovers(root) == [], (delay, cache_leftovers(root))


def _crash_remove(server: FaultyGitHubServer, tmp_path: Path, points: int) -> None:
    _published(server)
    calibrate = _root(server, tmp_path, "calibrate")
    assert calibrate.run("install", f"acme/{PLUGIN}@v1.0.0", "--yes").exit_code == 0
    span = calibrate.timed_run("remove", PLUGIN, "--yes")
    for index, delay in enumerate(_delays(3, span * 1.1, points)):
        root = _root(server, tmp_path, f"point-{index}")
        assert root.run("install", f"acme/{PLUGIN}@v1.0.0", "--yes").exit_code == 0
        killed = kill_after(root.spawn("remove", PLUGIN, "--yes"), delay)
        state = assert_complete(root, [[], ["1.0.0"]])
        if not killed:
            assert state == []
        # The next command under the lock (an install) sweeps a half-deleted .removing-*.
        again = root.run("install", f"acme/{PLUGIN}@v1.0.0", "--yes")
        assert again.exit_code == 0, (delay, again.stdout)
        assert assert_complete(root, [["1.0.0"]]) == ["1.0.0"]
        assert leftovers(root) == [], (delay, leftovers(root))
        assert cache_leftovers(root) == [], (delay, cache_leftovers(root))


def _crash_force(server: FaultyGitHubServer, tmp_path: Path, points: int) -> None:
    _published(server)
    calibrate = _root(server, tmp_path, "calibrate")
    assert calibrate.run("install", f"acme/{PLUGIN}@v2.0.0", "--yes").exit_code == 0
    span = calibrate.timed_run("install", f"acme/{PLUGIN}@v2.0.0", "--yes", "--force")
    for index, delay in enumerate(_delays(4, span * 1.1, points)):
        root = _root(server, tmp_path, f"point-{index}")
        assert root.run("install", f"acme/{PLUGIN}@v2.0.0", "--yes").exit_code == 0
        kill_after(root.spawn("install", f"acme/{PLUGIN}@v2.0.0", "--yes", "--force"), delay)
        # Old or new, 2.0.0 is there and complete: never neither, never both.
        assert assert_complete(root, [["2.0.0"]]) == ["2.0.0"]
        again = root.run("install", f"acme/{PLUGIN}@v2.0.0", "--yes", "--force")
        assert again.exit_code == 0, (delay, again.stdout)
        assert assert_complete(root, [["2.0.0"]]) == ["2.0.0"]
        assert leftovers(root) == [], (delay, leftovers(root))
        assert cache_leftovers(root) == [], (delay, cache_leftovers(root))


def _reference_install(root: Root, version: str) -> Path:
    """``PLUGIN`` ``version`` as the reference installer leaves it: its tree, and a receipt of
    its ten string fields following ``latest`` (no file hashes)."""
    directory = root.dest / f"{PLUGIN}-{version}"
    for member in plugin_members(PLUGIN, version):
        path = directory / member.name
        if member.kind == tarfile.DIRTYPE:
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(member.data)
            path.chmod(member.mode)
    receipt = {
        "schema_version": "1.0", "id": PLUGIN, "version": version, "owner": "acme",
        "repo": PLUGIN, "tag": "latest", "target": "noarch", "sha256": "ab" * 32,
        "installed_at": "2026-05-07T18:20:42.123456789+00:00", "source": "github-releases",
    }  # fmt: skip
    (directory / ".nexo-install.json").write_text(json.dumps(receipt, indent=2))
    return directory


def _crash_upgrade_of_a_reference_install(
    server: FaultyGitHubServer, tmp_path: Path, points: int
) -> None:
    """A SIGKILL while upgrading what the reference installer installed: the daemon meets the
    old or the new version, never both and never neither; the next upgrade finishes."""
    _published(server)
    calibrate = _root(server, tmp_path, "calibrate")
    _reference_install(calibrate, "1.0.0")
    span = calibrate.timed_run("upgrade", PLUGIN, "--yes")
    for index, delay in enumerate(_delays(5, span * 1.1, points)):
        root = _root(server, tmp_path, f"point-{index}")
        _reference_install(root, "1.0.0")
        killed = kill_after(root.spawn("upgrade", PLUGIN, "--yes"), delay)
        # `verify` has no hashes to check the reference's tree by: the walk and `list` judge.
        assert_one_per_id(root.dest)
        versions = installed_versions(root)
        assert versions in (["1.0.0"], ["2.0.0"]), (delay, versions)
        assert discovered_versions(root.dest) == {PLUGIN: versions[-1]}
        if not killed:
            assert versions == ["2.0.0"]
        again = root.run("upgrade", PLUGIN, "--yes")
        assert again.exit_code == 0, (delay, again.stdout)
        assert discovered_versions(root.dest) == {PLUGIN: "2.0.0"}
        present = root.run("install", f"acme/{PLUGIN}", "--yes")
        assert present.exit_code == 0, present.stdout
        assert installed_versions(root) == ["2.0.0"]
        assert leftovers(root) == [], (delay, leftovers(root))
        assert cache_leftovers(root) == [], (delay, cache_leftovers(root))


def test_sigkill_install(server: FaultyGitHubServer, tmp_path: Path) -> None:
    _crash_install(server, tmp_path, FAST_POINTS)


def test_sigkill_upgrade(server: FaultyGitHubServer, tmp_path: Path) -> None:
    _crash_upgrade(server, tmp_path, FAST_POINTS)


def test_sigkill_upgrade_keep_old(server: FaultyGitHubServer, tmp_path: Path) -> None:
    _crash_upgrade(server, tmp_path, FAST_POINTS - 1, "--keep-old")


def test_sigkill_remove(server: FaultyGitHubServer, tmp_path: Path) -> None:
    _crash_remove(server, tmp_path, FAST_POINTS - 1)


def test_sigkill_force(server: FaultyGitHubServer, tmp_path: Path) -> None:
    _crash_force(server, tmp_path, FAST_POINTS)


def test_sigkill_upgrade_of_a_reference_install(server: FaultyGitHubServer, tmp_path: Path) -> None:
    _crash_upgrade_of_a_reference_install(server, tmp_path, FAST_POINTS)


@pytest.mark.slow
def test_sigkill_upgrade_of_a_reference_install_50_points(
    server: FaultyGitHubServer, tmp_path: Path
) -> None:
    _crash_upgrade_of_a_reference_install(server, tmp_path, SLOW_POINTS)


@pytest.mark.slow
def test_sigkill_force_50_points(server: FaultyGitHubServer, tmp_path: Path) -> None:
    _crash_force(server, tmp_path, SLOW_POINTS)


@pytest.mark.slow
def test_sigkill_install_50_points(server: FaultyGitHubServer, tmp_path: Path) -> None:
    _crash_install(server, tmp_path, SLOW_POINTS)


@pytest.mark.slow
def test_sigkill_upgrade_50_points(server: FaultyGitHubServer, tmp_path: Path) -> None:
    _crash_upgrade(server, tmp_path, SLOW_POINTS)


@pytest.mark.slow
def test_sigkill_remove_50_points(server: FaultyGitHubServer, tmp_path: Path) -> None:
    _crash_remove(server, tmp_path, SLOW_POINTS)


def test_killed_download_leaves_no_cache_file_after_next_install(
    server: FaultyGitHubServer, tmp_path: Path
) -> None:
    _published(server)
    server.throttles.clear()
    server.throttle("/releases/assets/", 256 * 1024)
    root = _root(server, tmp_path, "home")
    process = root.spawn("install", f"acme/{PLUGIN}@v2.0.0", "--yes")
    try:
        # Kill once the download's temp file exists: the moment is the download, by design.
        assert wait_for(lambda: bool(cache_leftovers(root)), timeout=60)
    finally:
        process.kill()
        process.wait(timeout=30)
    assert assert_complete(root, [[]]) == []
    server.throttles.clear()
    assert root.run("install", f"acme/{PLUGIN}@v2.0.0", "--yes").exit_code == 0
    assert leftovers(root) == []
    assert cache_leftovers(root) == []
