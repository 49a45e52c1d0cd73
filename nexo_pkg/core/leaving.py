"""Ending a command's process once it is done, without the interpreter's teardown.

At a normal exit the interpreter frees every module, class and object it loaded one by one
(about 25 ms of CPU for a ``sync``'s process, which has loaded the installer, the network
and the registry client) before the process can end, though the kernel reclaims all of it at
once. :func:`exit_now` does what a normal exit does that anyone can see, then ends the
process directly.

A reader that leaves before the output is written (``nexo plugin sync --dry-run | head -1``)
is not an error of the command's: :func:`guard_left_readers` gives stdout and stderr a writer
that, when the reader of either has left, points that stream at ``/dev/null`` and goes on, so
the rest of the output goes nowhere and the exit code still says what the command did.
:func:`silence_left_readers` does the same for a caller that met the error itself.
"""

from __future__ import annotations

import io
import os
import stat
import sys

# Not `typing.TYPE_CHECKING`: every command but `--version` loads this module first, and
# `typing` costs more than the rest of a `list`'s start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

    from _typeshed import ReadableBuffer


def exit_now(code: int) -> None:
    """End the process with ``code`` as a normal exit would, minus the teardown: the output
    streams are flushed and the exit functions (``atexit``: the logging, multiprocessing and
    temporary-file clean-ups) run first. A stream whose reader left (EPIPE) is flushed to
    ``/dev/null``, and ``code`` stays. Returns, for the caller to exit normally, when a
    thread that is not a daemon still runs (a normal exit waits for it), when the output
    cannot be flushed otherwise (a normal exit reports that), or when the output streams
    are not the process's own (a caller that runs the command inside its own process keeps
    it)."""
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
    if not _flushed(out, err):
        return
    atexit._run_exitfuncs()  # what the interpreter runs first at exit, before its teardown
    if not _flushed(out, err):
        os._exit(120)  # what the interpreter exits with when it cannot flush them
    os._exit(code & 0xFF)


def _flushed(out: TextIO, err: TextIO) -> bool:
    """Flush both streams; one whose reader left goes to ``/dev/null`` first. ``False`` when
    they cannot be flushed."""
    for _ in range(2):
        try:
            out.flush()
            err.flush()
        except BrokenPipeError:
            if not silence_left_readers():
                return False
        except (OSError, ValueError):
            return False
        else:
            return True
    return False


def silence_left_readers() -> bool:
    """Point the process's stdout and stderr, each whose reader left (a pipe or socket closed
    at the other end), at ``/dev/null``; whether one was. What is still buffered for it is then
    flushed there, and nothing written to it later fails."""
    import select  # noqa: PLC0415

    silenced = False
    for stream in (sys.__stdout__, sys.__stderr__):
        if stream is None or not hasattr(select, "poll"):
            continue
        try:
            descriptor = stream.fileno()
        except (OSError, ValueError):
            continue
        poller = select.poll()
        poller.register(descriptor, select.POLLOUT)
        # POLLERR: a pipe without a reader; POLLHUP: a socket whose peer closed it.
        if not any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0)):
            continue  # this one is fine: it keeps its output
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, descriptor)
        finally:
            os.close(devnull)
        silenced = True
    return silenced


class _ReaderSafeWriter(io.RawIOBase):
    """The bytes under a standard stream whose reader may leave: once a write finds no reader
    (EPIPE), the descriptor is pointed at ``/dev/null`` and what is left is written there."""

    def __init__(self, descriptor: int) -> None:
        super().__init__()
        self._descriptor = descriptor

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._descriptor

    def isatty(self) -> bool:
        return os.isatty(self._descriptor)

    def write(self, data: ReadableBuffer, /) -> int:
        try:
            return os.write(self._descriptor, data)
        except BrokenPipeError:
            _point_at_devnull(self._descriptor)
            return memoryview(data).nbytes  # gone with the reader, as if read


def _point_at_devnull(descriptor: int) -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, descriptor)
    finally:
        os.close(devnull)


def guard_left_readers() -> None:
    """Give stdout and stderr, each a pipe or a socket (``| head -1``), a writer that outlives
    its reader: the command runs to its end and exits with its own code, whatever point its
    output had reached when the reader left. Streams that are terminals or files, or that were
    replaced (a caller running commands in its own process), are left as they are; so is
    Windows, whose pipes report a gone reader otherwise."""
    if os.name != "posix":
        return
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None or stream is not getattr(sys, f"__{name}__"):
            continue
        if not isinstance(stream, io.TextIOWrapper):
            continue
        try:
            descriptor = stream.fileno()
            mode = os.fstat(descriptor).st_mode
        except (OSError, ValueError):
            continue
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            continue
        try:
            stream.flush()
        except BrokenPipeError:
            _point_at_devnull(descriptor)
        except (OSError, ValueError):
            continue
        raw = _ReaderSafeWriter(descriptor)
        # Unbuffered as it was (`python -u`, PYTHONUNBUFFERED: the text layer over the raw
        # file, as CPython makes it), else buffered as it was: a note such as "waiting for …"
        # reaches its reader when it is said, not when the command ends.
        unbuffered = not isinstance(stream.buffer, io.BufferedIOBase)
        guarded = io.TextIOWrapper(
            # typeshed wants a buffered file under a text layer; CPython takes a raw one too.
            raw if unbuffered else io.BufferedWriter(raw),  # type: ignore[type-var]
            encoding=stream.encoding,
            errors=stream.errors,
            newline="\n",
            line_buffering=stream.line_buffering,
            write_through=stream.write_through,
        )
        setattr(sys, name, guarded)
        setattr(sys, f"__{name}__", guarded)
