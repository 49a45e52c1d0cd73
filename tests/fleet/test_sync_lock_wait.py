"""A sync that finds the root's sync lock or install lock held by another process says so once
it has waited about a second (naming the lock file and ``NEXO_INSTALL_LOCK_TIMEOUT``), waits at
most that limit, then refuses with ``io`` having written nothing. The lock is held by a real
process with ``flock`` on the real lock file, as another ``nexo`` run would hold it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.cli import CliResult, nexo
from support.registry import Registry

from .conftest import LINUX, MakeDist, push_dist

HOLDER = textwrap.dedent(
    """
    import fcntl, os, sys, time
    descriptor = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
    """
)
NOTE = "note: waiting for "
Hold = Callable[[Path, float], "subprocess.Popen[str]"]


@pytest.fixture
def locked(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> tuple[Path, Path]:
    """(the lock file, the root to sync into, not yet made): one unsigned plugin locked."""
    home = Path(fleet_env["NEXO_HOME"])
    dist = make_dist("alpha", "1.0.0", identity=None, targets=(LINUX,))
    push_dist(dist, registry.ref("plugins/alpha"), home)
    project = tmp_path / "project"
    project.mkdir()
    wanted = project / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.alpha]\nsource = "{registry.ref("plugins/alpha")}"\n')
    done = nexo("plugin", "lock", "-f", wanted, "--plain-http", env=fleet_env, in_process=True)
    assert done.code == 0, done.stderr
    return project / "nexo-plugins.lock", tmp_path / "root"


@pytest.fixture
def hold() -> Iterator[Hold]:
    """``hold(path, seconds)``: a process holding ``path``'s ``flock`` for ``seconds``."""
    started: list[subprocess.Popen[str]] = []

    def start(path: Path, seconds: float) -> subprocess.Popen[str]:
        path.parent.mkdir(parents=True, exist_ok=True)
        process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(path), str(seconds)],
            stdout=subprocess.PIPE,
            text=True,
        )
        started.append(process)
        assert process.stdout is not None
        assert process.stdout.readline() == "held\n"
        return process

    yield start
    for process in started:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


def _sync(lock: Path, root: Path, env: dict[str, str], *extra: str, limit: str) -> CliResult:
    env = {**env, "NEXO_INSTALL_LOCK_TIMEOUT": limit}
    arguments: tuple[str | Path, ...] = ("--lock", lock, "--dest", root, "--plain-http", *extra)
    return nexo("plugin", "sync", *arguments, env=env, timeout=60)


def _notes(result: CliResult) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith(NOTE)]


@pytest.mark.parametrize("held", [".nexo-sync.lock", ".nexo-install.lock"])
def test_a_sync_waiting_for_a_lock_says_so_once_then_syncs(
    locked: tuple[Path, Path], fleet_env: dict[str, str], hold: Hold, held: str
) -> None:
    lock, root = locked
    hold(root / held, 3)
    synced = _sync(lock, root, fleet_env, "--json", limit="60")

    assert synced.code == 0, synced.stderr
    # One note, naming the lock file, its holder and the limit; the document stays one.
    what = "sync" if held == ".nexo-sync.lock" else "install"
    assert _notes(synced) == [
        f"{NOTE}{root / held}: another nexo {what} holds it (waiting at most 60 s; "
        "NEXO_INSTALL_LOCK_TIMEOUT sets the limit)"
    ], synced.stderr
    document = json.loads(synced.stdout)
    assert document["ok"] is True
    assert NOTE not in synced.stdout
    assert (root / "alpha-1.0.0").is_dir()

    # A lock that is free at once is taken in silence.
    again = _sync(lock, root, fleet_env, limit="60")
    assert again.code == 0, again.stderr
    assert _notes(again) == [], again.stderr

    # `--quiet` drops the note as every other note, and the wait is the same.
    hold(root / held, 2.5)
    started = time.monotonic()
    quiet = _sync(lock, root, fleet_env, "-q", limit="60")
    assert quiet.code == 0, quiet.stderr
    assert time.monotonic() - started >= 2, "the quiet run took a lock nobody held"
    assert _notes(quiet) == [], quiet.stderr


def test_a_sync_lock_held_past_the_limit_refuses_with_io_and_writes_nothing(
    locked: tuple[Path, Path], fleet_env: dict[str, str], hold: Hold
) -> None:
    lock, root = locked
    holder = hold(root / ".nexo-sync.lock", 30)
    started = time.monotonic()
    refused = _sync(lock, root, fleet_env, "--json", limit="1")
    took = time.monotonic() - started

    assert holder.poll() is None, "the holder ended first: the sync never waited"
    assert took < 20, took
    assert (refused.code, refused.document["kind"]) == (1, "io"), refused.stdout
    assert refused.error_line == (
        f"error: another nexo sync holds {root / '.nexo-sync.lock'}; try again when it is done [io]"
    )
    # The sync lock is taken first: nothing else was made in the root.
    assert sorted(path.name for path in root.iterdir()) == [".nexo-sync.lock"]


def test_an_install_lock_held_past_the_limit_is_said_then_refused(
    locked: tuple[Path, Path], fleet_env: dict[str, str], hold: Hold
) -> None:
    lock, root = locked
    hold(root / ".nexo-install.lock", 30)
    refused = _sync(lock, root, fleet_env, "--json", limit="2.5")

    assert (refused.code, refused.document["kind"]) == (1, "io"), refused.stdout
    lock_path = root / ".nexo-install.lock"
    assert refused.error_line == (
        f"error: another nexo install holds {lock_path}; try again when it is done [io]"
    )
    assert _notes(refused) == [
        f"{NOTE}{lock_path}: another nexo install holds it (waiting at most 2.5 s; "
        "NEXO_INSTALL_LOCK_TIMEOUT sets the limit)"
    ], refused.stderr
    assert sorted(path.name for path in root.iterdir()) == [".nexo-install.lock", ".nexo-sync.lock"]
