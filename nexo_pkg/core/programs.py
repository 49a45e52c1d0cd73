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

__all__ = ["find_program", "run_capped"]


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
    few bytes (a credential, a token) is never read whole whatever the program prints."""
    with subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=None if env is None else dict(env),
    ) as process:
        stdout = process.stdout
        if stdout is None:
            raise AssertionError("stdout was asked for")
        deadline = time.monotonic() + timeout
        received = bytearray()
        over = threading.Event()

        def read() -> None:
            while chunk := stdout.read(64 * 1024):
                received.extend(chunk)
                if len(received) > limit:
                    over.set()
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        if stdin is not None and process.stdin is not None:
            try:
                process.stdin.write(stdin)
                process.stdin.close()
            except OSError:
                pass  # a program that exits without reading its input: judged by its answer
        reader.join(max(0.0, deadline - time.monotonic()))
        if not over.is_set() and not reader.is_alive():
            # Its stdout is closed, but the program may still run: the same deadline holds.
            with contextlib.suppress(subprocess.TimeoutExpired):
                return process.wait(max(0.0, deadline - time.monotonic())), bytes(received)
        process.kill()
        process.wait()
        if over.is_set():
            return process.returncode, None
        raise subprocess.TimeoutExpired(list(argv), timeout)
