"""Finding a program on PATH the way Go's ``exec.LookPath`` does since Go 1.19 (docker's
credential helpers, gh): only PATH's absolute directories are searched. An empty entry
(``PATH=":/usr/bin"``), ``.`` or any relative one would run a program from the working
directory, which may be a cloned repository nobody has read."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from nexo_pkg.core import posix

__all__ = ["find_program", "run_capped"]

# How long the output of a program that has exited is read for before what holds it open is
# stopped: what it wrote is already in the pipe, so this is only ever waited in full when a
# process it left behind keeps the pipe open.
_DRAIN_SECONDS = 0.5


def find_program(name: str) -> str | None:
    """The absolute path of the program ``name`` in PATH's absolute directories (the
    platform's default search path without PATH), or ``None``."""
    search = os.environ.get("PATH", os.defpath)
    for directory in search.split(os.pathsep):
        if not directory or not Path(directory).is_absolute():
            continue
        found = shutil.which(name, path=directory)
        # Windows' which() looks in the working directory first, whatever the path says.
        if found is not None and Path(found).is_absolute():
            return found
    return None


def run_capped(
    argv: Sequence[str],
    *,
    limit: int,
    timeout: float,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[int, bytes | None]:
    """Run ``argv`` (``stdin`` on its input, else none) and return its exit status and what
    it wrote to stdout, or ``None`` for that past ``limit`` bytes: the program is then killed,
    as it is when it has not ended ``timeout`` seconds after it started, its stdout closed or
    not (``subprocess.TimeoutExpired``). Its stderr is not read. An answer that should be a
    few bytes (a credential, a token) is never read whole whatever the program prints.

    The answer is what the program wrote by the time it exits: a process it started that
    still holds its stdout open (``sleep 60 &``) does not hold the caller. On POSIX the
    program leads its own process group, and what is left of that group while the output is
    still held, or at the deadline, is killed with it."""
    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=None if env is None else dict(env),
        process_group=0 if posix.POSIX else None,
    )
    deadline = time.monotonic() + timeout
    if process.stdout is None:
        raise AssertionError("stdout was asked for")
    # The reader owns its own descriptor and closes it when the stream ends, so a stream that a
    # leftover process holds open never blocks a close here (nor is it read once closed).
    descriptor = os.dup(process.stdout.fileno())
    process.stdout.close()
    received = bytearray()
    guard = threading.Lock()
    over = threading.Event()
    taken = threading.Event()

    def stop() -> None:
        posix.kill_process_group(process.pid)
        with contextlib.suppress(OSError):
            process.kill()

    def read() -> None:
        try:
            while chunk := os.read(descriptor, 64 * 1024):
                with guard:
                    if taken.is_set():
                        return
                    received.extend(chunk)
                    if len(received) > limit:
                        over.set()
                        stop()
                        return
        except OSError:
            return
        finally:
            os.close(descriptor)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if stdin is not None and process.stdin is not None:
            try:
                process.stdin.write(stdin)
                process.stdin.close()
            except OSError:
                pass  # a program that exits without reading its input: judged by its answer
        try:
            process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            stop()
            process.wait()
            if over.is_set():
                return process.returncode, None
            raise subprocess.TimeoutExpired(list(argv), timeout) from None
        # What it wrote before exiting is in the pipe: the reader has it at once, unless the
        # stream is still held open by something the program started.
        reader.join(min(_DRAIN_SECONDS, max(0.0, deadline - time.monotonic())))
        with guard:
            taken.set()
            answer = None if over.is_set() else bytes(received)
        if reader.is_alive():
            posix.kill_process_group(process.pid)
        return process.returncode, answer
    finally:
        if process.returncode is None:
            stop()
            process.wait()
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
