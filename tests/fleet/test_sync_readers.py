"""A ``sync`` whose reader leaves before the output is written (``nexo plugin sync | head
-1``, a pipe closed at the other end): the run is not an error of its reader's. Its exit
code still says what it did to the root (0 in line or planned, 1 a plugin failed or the lock
is stale), and nothing about the pipe is printed: no ``Exception ignored``, no
``BrokenPipeError``, no exit code 120 from the interpreter's last flush."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.cli import nexo_reader_left

from .conftest import LINUX

_NOISE = ("Traceback", "Exception ignored", "BrokenPipe", "Broken pipe")


def _lock(path: Path, *targets: str, plugins: tuple[str, ...] = ("alpha", "bravo")) -> Path:
    """A lock of ``plugins``, each with the given targets only (no request is made: a dry
    run reads the lock alone, and a plugin without this host's target fails before any)."""
    text = "lock_version = 1\n"
    for plugin_id in plugins:
        text += (
            f'\n[plugins.{plugin_id}]\nsource = "oci://127.0.0.1:9/plugins/{plugin_id}"\n'
            f'requirement = "*"\nversion = "1.0.0"\n'
            f'resolved = "oci://127.0.0.1:9/plugins/{plugin_id}@sha256:{"a" * 64}"\n'
        )
        for target in targets:
            text += (
                f"\n[plugins.{plugin_id}.targets.{target}]\n"
                f'asset = "{plugin_id}-1.0.0-{target}.tar.gz"\nsize = 10\n'
                f'sha256 = "{"b" * 64}"\nmanifest = "sha256:{"c" * 64}"\n'
            )
    path.write_text(text, encoding="utf-8")
    return path


def _run(env: dict[str, str], tmp_path: Path, *args: str, closed: str) -> tuple[int, str, str]:
    """``nexo plugin sync ARGS`` with ``closed`` ("stdout" or "stderr") a pipe whose reader
    has already left; the exit code, then what the other stream got."""
    done = nexo_reader_left("plugin", "sync", *args, closed=closed, env=env, cwd=tmp_path)
    return done.code, done.stdout, done.stderr


def test_a_dry_run_whose_reader_left_exits_as_planned_and_quietly(
    tmp_path: Path, fleet_env: dict[str, str]
) -> None:
    lock = _lock(tmp_path / "nexo-plugins.lock", LINUX)
    dest = tmp_path / "root"
    args = ("--lock", str(lock), "--dest", str(dest), "--dry-run")
    code, _, err = _run(fleet_env, tmp_path, *args, closed="stdout")
    assert code == 0, err
    assert "Dry run: 2 change(s) planned" in err
    assert not any(word in err for word in _NOISE), err
    assert not dest.exists()


@pytest.mark.parametrize("json_flag", [(), ("--json",)])
def test_a_failed_sync_whose_reader_left_still_exits_1(
    tmp_path: Path, fleet_env: dict[str, str], json_flag: tuple[str, ...]
) -> None:
    """The plugins fail (the lock has no tarball for this host); the report goes to stdout
    with --json, else to stderr: whichever the reader left, the exit code is the run's."""
    lock = _lock(tmp_path / "nexo-plugins.lock", "aarch64-apple-darwin")
    dest = tmp_path / "root"
    args = ("--lock", str(lock), "--dest", str(dest), "--frozen", *json_flag)
    closed = "stdout" if json_flag else "stderr"
    code, out, err = _run(fleet_env, tmp_path, *args, closed=closed)
    assert code == 1, (out, err)
    assert not any(word in out + err for word in _NOISE), (out, err)
    assert sorted(path.name for path in dest.iterdir()) == [
        ".nexo-install.lock",
        ".nexo-sync.lock",
    ]


def test_a_stale_lock_whose_reader_left_still_exits_1(
    tmp_path: Path, fleet_env: dict[str, str]
) -> None:
    missing = tmp_path / "nexo-plugins.lock"
    args = ("--lock", str(missing), "--dest", str(tmp_path / "root"), "--frozen", "--json")
    code, _, err = _run(fleet_env, tmp_path, *args, closed="stdout")
    assert code == 1, err
    assert not any(word in err for word in _NOISE), err


_HELD_EXIT = """
import atexit, os, sys
ready, go = int(sys.argv[1]), int(sys.argv[2])

def held():
    os.write(ready, b"r")
    os.read(go, 1)

atexit.register(held)
sys.argv = ["nexo", "plugin", "sync", *sys.argv[3:]]
from nexo_pkg.cli.main import main
main()
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_a_finished_sync_exits_ends_it_without_a_traceback(
    tmp_path: Path, fleet_env: dict[str, str], signum: int
) -> None:
    """The sync is done and its process is running its exit functions (held here by one
    that waits for the test) when Ctrl-C or SIGTERM comes: the process ends at once with the
    signal's line and exit code, as anywhere else in the run, not with a traceback from
    inside an exit function."""
    lock = _lock(tmp_path / "nexo-plugins.lock", LINUX)
    args = ("--lock", str(lock), "--dest", str(tmp_path / "root"), "--dry-run")
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", _HELD_EXIT, str(ready_w), str(go_r), *args],
            env=fleet_env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            pass_fds=(ready_w, go_r),
        )
        assert os.read(ready_r, 1) == b"r"
        process.send_signal(signum)
        os.write(go_w, b"g")
        out, err = process.communicate(timeout=60)
    finally:
        for descriptor in (ready_r, ready_w, go_r, go_w):
            os.close(descriptor)
    assert process.returncode == (130 if signum == signal.SIGINT else 143), err
    assert err.strip().splitlines()[-1] == (
        "error: interrupted [interrupted]"
        if signum == signal.SIGINT
        else "error: terminated [interrupted]"
    )
    assert not any(word in err for word in _NOISE), err
    assert out.count("alpha") == 1  # the plan was printed whole before


@pytest.mark.parametrize("closed", ["1", "2"])
def test_a_sync_started_with_stdout_or_stderr_closed_runs_without_a_traceback(
    tmp_path: Path, fleet_env: dict[str, str], closed: str
) -> None:
    """``nexo plugin sync … >&-`` (or ``2>&-``), as a cron job or a service manager may start
    it: what would go to the closed stream goes nowhere, the rest is written, and the exit
    code is the run's."""
    lock = _lock(tmp_path / "nexo-plugins.lock", LINUX)
    args = ("--lock", str(lock), "--dest", str(tmp_path / "root"), "--dry-run")
    command = [sys.executable, "-m", "nexo_pkg", "plugin", "sync", *args]
    done = subprocess.run(
        ["sh", "-c", f'exec "$@" {closed}>&-', "sh", *command],
        env=fleet_env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert not any(word in done.stdout + done.stderr for word in (*_NOISE, "Error")), done
    if closed == "1":
        assert "Dry run: 2 change(s) planned" in done.stderr
    else:
        assert [line.split()[0] for line in done.stdout.splitlines()] == ["alpha", "bravo"]


def test_a_signal_while_the_result_is_written_leaves_one_whole_document(
    tmp_path: Path, fleet_env: dict[str, str]
) -> None:
    """The run is done and its ``--json`` document is being written to a pipe nobody reads
    yet (larger than the pipe holds) when Ctrl-C comes: the document is written whole, and
    it is the only one; the exit code and line are the signal's."""
    plugins = tuple(f"plugin{number:04d}" for number in range(600))
    lock = _lock(tmp_path / "nexo-plugins.lock", LINUX, plugins=plugins)
    args = ("--lock", str(lock), "--dest", str(tmp_path / "root"), "--dry-run", "--json")
    # Buffered as a user's process is: unbuffered (PYTHONUNBUFFERED), the interpreter itself
    # drops the rest of a write a signal cut short.
    environment = {key: value for key, value in fleet_env.items() if key != "PYTHONUNBUFFERED"}
    process = subprocess.Popen(
        [sys.executable, "-m", "nexo_pkg", "plugin", "sync", *args],
        env=environment,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    # Blocked on the full pipe: the first bytes are there and the process waits to write.
    first = os.read(process.stdout.fileno(), 1)
    deadline = time.monotonic() + 60
    while not Path(f"/proc/{process.pid}/wchan").read_text().endswith("pipe_write"):
        assert time.monotonic() < deadline, "the sync never waited on its stdout"
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    document = json.loads(first + out)  # one document, whole
    assert document["dry_run"] is True
    assert len(document["plan"]) == len(plugins)
    assert process.returncode == 130, err
    assert err.decode().strip().splitlines()[-1] == "error: interrupted [interrupted]"
