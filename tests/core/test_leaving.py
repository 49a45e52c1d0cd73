"""Ending a command's process without the interpreter's teardown
(:func:`nexo_pkg.core.leaving.exit_now`): what a normal exit does that anyone can see still
happens (the exit code, the buffered output, the exit functions); only the teardown, which
frees every object one by one, is skipped, and only when nothing else needs the process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

_SCRIPT = """
import atexit, sys, threading, time
from pathlib import Path
from nexo_pkg.core.leaving import exit_now

out = Path(sys.argv[1])

class Torn:
    def __del__(self):  # runs in the interpreter's teardown only
        with (out / "teardown").open("w") as handle:
            handle.write("ran")

torn = Torn()
atexit.register(lambda: (out / "atexit").write_text("ran"))
sys.stdout.write("buffered, no newline")
sys.stderr.write("said on stderr")
case = sys.argv[2]
if case == "thread":
    threading.Thread(target=time.sleep, args=(0.3,)).start()
if case == "taken":
    import io
    sys.stdout = io.StringIO()
exit_now(3)
sys.stdout = sys.__stdout__
print(" / returned")
raise SystemExit(4)
"""


def _run(tmp_path: Path, case: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(tmp_path), case],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_process_ends_with_its_code_output_and_exit_functions(tmp_path: Path) -> None:
    done = _run(tmp_path, "plain")
    assert (done.returncode, done.stdout, done.stderr) == (
        3,
        "buffered, no newline",
        "said on stderr",
    )
    assert (tmp_path / "atexit").read_text() == "ran"
    assert not (tmp_path / "teardown").exists()


@pytest.mark.parametrize("case", ["thread", "taken"])
def test_it_leaves_the_exit_to_the_caller_when_the_process_is_not_done(
    tmp_path: Path, case: str
) -> None:
    """A thread that is not a daemon still runs, or the output is not the process's own (a
    caller running commands in its own process): the normal exit follows, teardown and all."""
    done = _run(tmp_path, case)
    assert done.returncode == 4
    assert done.stdout.endswith(" / returned\n")
    assert (tmp_path / "atexit").read_text() == "ran"
    assert (tmp_path / "teardown").read_text() == "ran"


@pytest.mark.parametrize("kind", ["pipe", "socket"])
def test_output_whose_reader_left_goes_nowhere_and_the_code_stays(
    tmp_path: Path, kind: str
) -> None:
    """The reader of stdout (a pipe, ``| head -1``, or a socket) left before the buffered
    output was flushed: the exit functions still run, the code is the command's, and the
    interpreter says nothing about it (no ``Exception ignored``, no exit code 120)."""
    if kind == "pipe":
        reader, writer = os.pipe()
        os.close(reader)
    else:
        ours, theirs = socket.socketpair()
        theirs.close()
        writer = ours.detach()
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _SCRIPT, str(tmp_path), "plain"],
            stdout=writer,
            stderr=subprocess.PIPE,
            env=environment,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(writer)
    assert (done.returncode, done.stderr) == (3, "said on stderr")
    assert (tmp_path / "atexit").read_text() == "ran"
    assert not (tmp_path / "teardown").exists()
