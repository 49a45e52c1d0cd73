"""run_capped, with real programs: an answer of exactly the cap is the answer and one byte
more is none; stderr, however much of it, is never read; what a program leaves running on its
output is killed, and a program that closes its output and stays is stopped at the deadline."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nexo_pkg.core.programs import run_capped

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell programs")

CAP = 200_000  # more than one read of the pipe (64 KiB), so the cap falls inside a read


def sh(script: str) -> list[str]:
    return ["/bin/sh", "-c", script]


def test_an_answer_of_exactly_the_cap_is_the_answer_and_one_byte_more_is_none() -> None:
    exact = run_capped(sh(f"head -c {CAP} /dev/zero"), limit=CAP, timeout=20)
    assert exact == (0, bytes(CAP))
    _, over = run_capped(sh(f"head -c {CAP + 1} /dev/zero"), limit=CAP, timeout=20)
    assert over is None


def test_endless_stderr_is_not_read_and_does_not_hold_the_answer() -> None:
    # 64 MiB on stderr before the answer: a program whose stderr were a pipe nobody reads
    # would block on it until the deadline.
    started = time.monotonic()
    answer = run_capped(sh("head -c 67108864 /dev/zero >&2; printf ok"), limit=CAP, timeout=20)
    assert answer == (0, b"ok")
    assert time.monotonic() - started < 15


def _alive(pids: list[int]) -> list[int]:
    alive = []
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        alive.append(pid)
    return alive


def test_processes_left_on_the_output_are_killed_once_the_program_exits(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "pids"
    script = f"for i in 1 2 3 4 5 6 7 8 9 10; do sleep 60 & echo $! >> {pids}; done; printf ok"
    started = time.monotonic()
    assert run_capped(sh(script), limit=CAP, timeout=20) == (0, b"ok")
    assert time.monotonic() - started < 10
    left = [int(line) for line in pids.read_text(encoding="utf-8").split()]
    assert len(left) == 10
    deadline = time.monotonic() + 5
    while _alive(left) and time.monotonic() < deadline:
        time.sleep(0.05)  # killed; reaped by init once they are gone
    assert _alive(left) == []


def test_a_program_that_closes_its_output_and_stays_is_stopped_at_the_deadline() -> None:
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        run_capped(sh("printf partial; exec >&-; sleep 60"), limit=CAP, timeout=1)
    assert time.monotonic() - started < 10
