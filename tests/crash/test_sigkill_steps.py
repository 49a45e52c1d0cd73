"""SIGKILL ``install``, ``upgrade`` and ``remove`` just before each of their moves on disk.

The random moments of ``test_sigkill.py`` rarely land between two renames a few microseconds
apart; here a hook kills the real command (``python -m nexo_pkg``) just before its n-th call
of ``os.rename``/``os.replace``/``os.rmdir``/``os.unlink``/``os.mkdir`` or the kernel's
exchange of two names, for n = 1, 2, ... until a run finishes, so every step is a kill point.
After each kill the root is walked the way the daemon walks it (no id twice, whatever it
meets complete), then ``list`` (which finishes an interrupted replacement) shows the old or the
new state whole, ``verify`` passes, the version replaced is still
installed or kept, the next run of the same
command succeeds and one more install leaves no staging, removal or journal behind.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from faults.server import FaultyGitHubServer
from support.daemon_walk import assert_one_per_id, discovered_versions

from .scenario import PLUGIN, Root, assert_complete, leftovers, publish

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the kernel's exchange is Linux's renameat2"
)

# Kills the command just before its n-th move (argv[1]); the command's argv follows.
KILLER = textwrap.dedent(
    """
    import os, signal, sys

    from nexo_pkg.core import posix
    from nexo_pkg.install import root as store

    target = int(sys.argv[1])
    moves = 0

    def counted(real):
        def move(*args, **kwargs):
            global moves
            moves += 1
            if moves == target:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)
        return move

    for name in ("rename", "replace", "rmdir", "unlink", "mkdir"):
        setattr(os, name, counted(getattr(os, name)))
    posix.exchange = store.exchange = counted(posix.exchange)
    sys.argv = ["nexo", *sys.argv[2:]]
    from nexo_pkg.cli.main import main
    main()
    """
)
MAX_STEPS = 80


def _kill_before(root: Root, step: int, command: str, *rest: str) -> bool:
    """Run ``command`` killed before its ``step``-th move; ``True`` if it was killed."""
    run = subprocess.run(
        [sys.executable, "-c", KILLER, str(step), *root.args(command, *rest)],
        env=root.env(),
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert run.returncode in (0, -signal.SIGKILL), (step, run.returncode, run.stdout, run.stderr)
    return run.returncode == -signal.SIGKILL


def _kept(root: Root) -> list[str]:
    listing = root.run("list")
    assert listing.exit_code == 0, listing.stderr
    return sorted(p["version"] for p in listing.document["plugins"] if p["kept"])


def _walk(root: Root, allowed: list[list[str]]) -> None:
    """What a daemon starting now meets: each id once, complete, an allowed version."""
    assert_one_per_id(root.dest)
    found = discovered_versions(root.dest).get(PLUGIN)
    if found is not None:
        assert any(found in versions for versions in allowed), found
        assert (root.dest / f"{PLUGIN}-{found}" / ".nexo-install.json").is_file()


def _every_step(
    server: FaultyGitHubServer,
    tmp_path: Path,
    name: str,
    *,
    prepare: list[tuple[str, ...]],
    command: tuple[str, ...],
    before: list[str],
    after: list[str],
    kept_after: list[str],
) -> None:
    finished = False
    for step in range(1, MAX_STEPS + 1):
        home = tmp_path / f"{name}-{step}"
        home.mkdir()
        root = Root(server, home)
        for argv in prepare:
            prepared = root.run(*argv)
            assert prepared.exit_code == 0, prepared.stdout
        kept_before = _kept(root)
        killed = _kill_before(root, step, *command)
        _walk(root, [before, after])
        state = assert_complete(root, [before, after])
        if not killed:
            assert state == after, (step, state)
        # The version replaced is kept whole, or still installed: never lost.
        kept = _kept(root)
        assert kept in ([kept_before] if state == before else [kept_before, kept_after]), (
            step,
            kept,
        )
        again = root.run(*command)
        if command[0] == "remove" and state == after:
            # A removal that got that far is done: the next one finds nothing to remove,
            # and deletes what the killed one had not deleted yet (the leftovers below).
            assert again.exit_code == 1, again.stdout
            assert again.document["kind"] == "not_installed"
        else:
            assert again.exit_code == 0, (step, again.stdout, again.stderr)
        assert assert_complete(root, [after]) == after
        assert _kept(root) == kept_after, (step, _kept(root))
        if after:
            present = root.run("install", f"acme/{PLUGIN}@v{after[-1]}", "--yes")
            assert present.exit_code == 0, present.stdout
        assert leftovers(root) == [], (step, leftovers(root))
        if not killed:
            finished = True
            break
    # Some run was let finish: every move of the command was a kill point.
    assert finished


def _published(server: FaultyGitHubServer) -> None:
    publish(server, PLUGIN, "1.0.0", latest=False, files=3)
    publish(server, PLUGIN, "2.0.0", latest=True, files=3)


V1 = ("install", f"acme/{PLUGIN}@v1.0.0", "--yes")


def test_sigkill_before_every_step_of_a_first_install(
    server: FaultyGitHubServer, tmp_path: Path
) -> None:
    _published(server)
    _every_step(
        server, tmp_path, "first", prepare=[], command=V1, before=[], after=["1.0.0"], kept_after=[]
    )


def test_sigkill_before_every_step_of_an_install_over_another_version(
    server: FaultyGitHubServer, tmp_path: Path
) -> None:
    _published(server)
    command = ("install", f"acme/{PLUGIN}@v2.0.0", "--yes")
    _every_step(
        server, tmp_path, "over", prepare=[V1], command=command,
        before=["1.0.0"], after=["2.0.0"], kept_after=["1.0.0"],
    )  # fmt: skip


def test_sigkill_before_every_step_of_an_upgrade(
    server: FaultyGitHubServer, tmp_path: Path
) -> None:
    _published(server)
    command = ("upgrade", PLUGIN, "--tag", "v2.0.0", "--yes")
    _every_step(
        server, tmp_path, "upgrade", prepare=[V1], command=command,
        before=["1.0.0"], after=["2.0.0"], kept_after=["1.0.0"],
    )  # fmt: skip


def test_sigkill_before_every_step_of_a_forced_reinstall(
    server: FaultyGitHubServer, tmp_path: Path
) -> None:
    _published(server)
    command = (*V1, "--force")
    _every_step(
        server, tmp_path, "force", prepare=[V1], command=command,
        before=["1.0.0"], after=["1.0.0"], kept_after=[],
    )  # fmt: skip


def test_sigkill_before_every_step_of_a_remove(server: FaultyGitHubServer, tmp_path: Path) -> None:
    _published(server)
    command = ("remove", PLUGIN, "--yes")
    _every_step(
        server, tmp_path, "remove", prepare=[V1], command=command,
        before=["1.0.0"], after=[], kept_after=[],
    )  # fmt: skip
