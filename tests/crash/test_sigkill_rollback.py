"""SIGKILL ``rollback`` at moments spread over its run: the daemon then finds the old or the
new version, complete, never neither and never both, and the other one is still kept."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from faults.server import FaultyGitHubServer
from support.daemon_walk import discoverable

from .scenario import PLUGIN, Root, assert_complete, kill_after, leftovers, publish

POINTS = 6


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


# A rollback killed just before its n-th move (a rename, or the exchange of two names), with
# the kernel's exchange or without it (the renames' order alone). Nothing is run between the
# kill and the walk: the daemon starting at that instant must find a version.
_KILLER = textwrap.dedent(
    """
    import os, signal, sys

    from nexo_pkg.install import root as store

    target = int(sys.argv[1])
    without_exchange = sys.argv[2] == "rename"
    moves = 0

    def step():
        global moves
        moves += 1
        if moves == target:
            os.kill(os.getpid(), signal.SIGKILL)

    real_rename, real_exchange = os.rename, getattr(store, "exchange", None)

    def rename(*args, **kwargs):
        step()
        return real_rename(*args, **kwargs)

    def exchange(*args, **kwargs):
        step()
        return False if without_exchange else real_exchange(*args, **kwargs)

    os.rename = rename
    store.exchange = exchange
    sys.argv = ["nexo", *sys.argv[3:]]
    from nexo_pkg.cli.main import main
    main()
    """
)
STEPS = 5


@pytest.mark.parametrize("mode", ["exchange", "rename"])
def test_sigkill_rollback_before_every_step(
    server: FaultyGitHubServer, tmp_path: Path, mode: str
) -> None:
    publish(server, PLUGIN, "1.0.0", latest=False)
    publish(server, PLUGIN, "2.0.0", latest=True)
    finished = False
    for step in range(1, STEPS + 1):
        root = _upgraded_root(server, tmp_path, f"{mode}-{step}")
        run = subprocess.run(
            [sys.executable, "-c", _KILLER, str(step), mode, *root.args("rollback", PLUGIN)],
            env=root.env(),
            capture_output=True,
            check=False,
            timeout=120,
        )
        assert run.returncode in (0, -signal.SIGKILL), run.stderr
        finished = finished or run.returncode == 0
        # What the daemon would find at this instant, before any command finishes the swap.
        found = discoverable(root.dest).get(PLUGIN, [])
        assert found, (mode, step, "no version discoverable")
        if mode == "exchange":
            assert len(found) == 1, (step, found)
        else:  # both for a moment at most; the next command (even `list`) finishes the swap
            assert root.run("list").exit_code == 0
        state = assert_complete(root, [["1.0.0"], ["2.0.0"]])
        if run.returncode == 0:
            assert state == ["1.0.0"]
        assert _kept_versions(root) == (["2.0.0"] if state == ["1.0.0"] else ["1.0.0"])
        # A finished rollback holds the plugin; released, a rollback brings the other back.
        assert root.run("unhold", PLUGIN).exit_code == 0
        again = root.run("rollback", PLUGIN)
        assert again.exit_code == 0, (step, again.stdout)
        other = ["2.0.0"] if state == ["1.0.0"] else ["1.0.0"]
        assert assert_complete(root, [other]) == other
        assert leftovers(root) == [], (step, leftovers(root))
    # The last step let the rollback finish: every move of the swap was a kill point.
    assert finished
