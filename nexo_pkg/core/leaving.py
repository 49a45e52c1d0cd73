"""Ending a command's process once it is done, without the interpreter's teardown.

At a normal exit the interpreter frees every module, class and object it loaded one by one
(about 25 ms of CPU for a ``sync``'s process, which has loaded the installer, the network
and the registry client) before the process can end, though the kernel reclaims all of it at
once. :func:`exit_now` does what a normal exit does that anyone can see, then ends the
process directly.
"""

from __future__ import annotations

import os
import sys


def exit_now(code: int) -> None:
    """End the process with ``code`` as a normal exit would, minus the teardown: the output
    streams are flushed and the exit functions (``atexit``: the logging, multiprocessing and
    temporary-file clean-ups) run first. Returns, for the caller to exit normally, when a
    thread that is not a daemon still runs (a normal exit waits for it), when the output
    cannot be flushed (a normal exit reports that), or when the output streams are not the
    process's own (a caller that runs the command inside its own process keeps it)."""
    import atexit  # noqa: PLC0415
    import threading  # noqa: PLC0415

    out, err = sys.stdout, sys.stderr
    if out is not sys.__stdout__ or err is not sys.__stderr__ or out is None or err is None:
        return  # the output was taken over (a caller running commands in its own process)
    current = threading.current_thread()
    if current is not threading.main_thread() or any(
        not thread.daemon for thread in threading.enumerate() if thread is not current
    ):
        return
    try:
        out.flush()
        err.flush()
    except (OSError, ValueError):
        return
    atexit._run_exitfuncs()  # what the interpreter runs first at exit, before its teardown
    try:
        out.flush()
        err.flush()
    except (OSError, ValueError):
        os._exit(120)  # what the interpreter exits with when it cannot flush them
    os._exit(code & 0xFF)
