"""SIGKILL ``rollback`` at moments spread over its run: the daemon then finds the old or the
new version, complete, never neither and never both, and the other one is still kept."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from faults.server import FaultyGitHubServer

from .scenario import PLUGIN, Root, assert_complete, kill_after, leftovers, publish

POINTS = 6


@pytest.fixture
def server() -> Iterator[FaultyGitHubServer]:
    server = FaultyGitHubServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _upgraded_root(server: FaultyGitHubServer, tmp_path: Path, name: str) -> Root:
    home = tmp_path / name
    home.mkdir()
    root = Root(server, home)
    assert root.run("install", f"acme/{PLUGIN}@v1.0.0", "--yes").exit_code == 0
    # Installed from an explicit tag, the plugin is pinned: the upgrade names the release.
    upgraded = root.run("upgrade", PLUGIN, "--tag", "v2.0.0", "--yes", "--keep-old")
    assert upgraded.exit_code == 0, upgraded.stdout
    return root


def _kept_versions(root: Root) -> list[str]:
    listing = root.run("list")
    assert listing.exit_code == 0
    return sorted(p["version"] for p in listing.document["plugins"] if p["kept"])


def test_sigkill_rollback(server: FaultyGitHubServer, tmp_path: Path) -> None:
    publish(server, PLUGIN, "1.0.0", latest=False, files=1500)
    publish(server, PLUGIN, "2.0.0", latest=True, files=1500)
    span = _upgraded_root(server, tmp_path, "calibrate").timed_run("rollback", PLUGIN)
    rng = random.Random(5)  # noqa: S311 (reproducible kill moments, not cryptography)
    delays = sorted([0.0, *(rng.uniform(0.05, span * 1.1) for _ in range(POINTS - 1))])
    for index, delay in enumerate(delays):
        root = _upgraded_root(server, tmp_path, f"point-{index}")
        killed = kill_after(root.spawn("rollback", PLUGIN), delay)
        state = assert_complete(root, [["1.0.0"], ["2.0.0"]])
        if not killed:
            assert state == ["1.0.0"]
        # The version not installed is kept, whole: a rollback brings it back, once the hold
        # of a rollback that got that far is released (a rollback never goes forward on its
        # own; `unhold` of a plugin not held is a no-op).
        assert _kept_versions(root) == (["2.0.0"] if state == ["1.0.0"] else ["1.0.0"])
        assert root.run("unhold", PLUGIN).exit_code == 0
        again = root.run("rollback", PLUGIN)
        assert again.exit_code == 0, (delay, again.stdout)
        other = ["2.0.0"] if state == ["1.0.0"] else ["1.0.0"]
        assert assert_complete(root, [other]) == other
        assert leftovers(root) == [], (delay, leftovers(root))
