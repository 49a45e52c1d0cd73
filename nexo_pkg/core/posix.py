"""The one place that knows which operating system calls exist here.

Plugin authors run ``lint``, ``lsp``, ``schema``, ``new``, ``pack`` and ``check`` on Linux,
macOS and Windows; the daemon, hence ``install`` and the commands that manage a plugin root,
runs on Linux and macOS. A POSIX-only name (``fcntl``, ``os.O_NONBLOCK``, ``os.killpg``,
``signal.SIGKILL``, ``dir_fd``) is used here and nowhere else, so that no module on an
author's path dies at import on Windows: the rest of the package asks this module, and gets
the POSIX call where it exists and the nearest portable behaviour (or a refusal in one
sentence) where it does not.

The calls only some POSIX kernels have are reached through ``ctypes``, each answering
``False`` where the platform lacks it:

- :func:`exchange` swaps two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``), so a
  name is never absent while the trees behind two names change places;
- :func:`become_subreaper` makes this process the one that orphaned descendants are
  re-parented to (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``), so a descendant that left its
  parent's session and process group can still be found and killed
  (:func:`kill_and_reap`);
- :func:`die_with_parent` has the kernel SIGKILL this process when the thread that forked
  it ends (Linux ``prctl(PR_SET_PDEATHSIG)``), even by SIGKILL.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import signal
import sys
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from nexo_pkg.core.errors import UsageError

if TYPE_CHECKING:
    import socket
    import subprocess

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1
# What a kernel, a file system or a seccomp filter without the call answers.
_UNSUPPORTED = frozenset({errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EPERM})


@functools.cache
def libc_function(name: str) -> Any:
    """``name`` from the C library already loaded in this process, or ``None`` off Linux or
    where it has no such symbol."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # noqa: PLC0415 (only the callers pay for it)

    try:
        function: Any = getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_int
    return function


def last_errno() -> int:
    """The ``errno`` the last call through :func:`libc_function` left on this thread."""
    import ctypes  # noqa: PLC0415

    return ctypes.get_errno()


def exchange(
    first: Path | str,
    second: Path | str,
    *,
    first_dir: int = _AT_FDCWD,
    second_dir: int = _AT_FDCWD,
) -> bool:
    """Swap what ``first`` and ``second`` name (relative to the directory descriptors
    ``first_dir`` and ``second_dir`` when given), atomically; both must exist. ``False``
    (nothing changed) where the kernel or file system cannot exchange; ``OSError`` for any
    other failure."""
    function = libc_function("renameat2")
    if function is None:
        return False
    import ctypes  # noqa: PLC0415

    function.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    result = function(
        first_dir, os.fsencode(first), second_dir, os.fsencode(second), _RENAME_EXCHANGE
    )
    if result == 0:
        return True
    error = last_errno()
    if error in _UNSUPPORTED:
        return False
    raise OSError(error, os.strerror(error), str(first), None, str(second))


def become_subreaper(*, enable: bool = True) -> bool:
    """Make this process the subreaper of its descendants (or, with ``enable`` false, no longer
    one): a descendant whose parent dies is re-parented here, not to init. ``False`` where the
    platform has no such call (macOS, Windows) or it fails."""
    function = libc_function("prctl")
    if function is None:
        return False
    import ctypes  # noqa: PLC0415

    function.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return bool(function(_PR_SET_CHILD_SUBREAPER, int(enable), 0, 0) == 0)


def die_with_parent() -> bool:
    """Have the kernel SIGKILL this process when the thread that forked it ends, however it
    ends. ``False`` where the platform has no such call (macOS, Windows) or it fails."""
    function = libc_function("prctl")
    if function is None:
        return False
    import ctypes  # noqa: PLC0415

    function.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return bool(function(_PR_SET_PDEATHSIG, KILL_SIGNAL, 0, 0) == 0)


def kill_and_reap(children: Collection[int]) -> None:
    """SIGKILL each of ``children`` (processes whose parent is this one) and reap those already
    dead, without waiting. Nothing where there are no such signals (Windows)."""
    if not POSIX:
        return
    for pid in children:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, KILL_SIGNAL)
    for pid in children:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)


def stop(pid: int) -> None:
    """SIGSTOP ``pid`` (a stopped process runs no code, so it cannot fork or signal, until it
    is continued or killed). Nothing where there is no such signal (Windows); never raises
    for a process that is gone."""
    if STOP_SIGNAL is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, STOP_SIGNAL)


def reap(pid: int) -> None:
    """Reap ``pid``, a child of this process that has exited, without waiting; nothing if it
    still runs, is not a child, or there is no ``waitpid`` (Windows)."""
    if not POSIX:
        return
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


#: Whether this is a POSIX system (Linux, macOS, the BSDs); false on Windows.
POSIX = os.name == "posix"

# Open flags: where a flag does not exist, 0 (the open then does without it). On Windows a
# FIFO cannot be planted under a name, descriptors are not inherited by default (``O_NOINHERIT``
# is what ``os.open`` already does) and links are rare and checked by the callers beforehand.
O_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
O_DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)
#: Windows opens descriptors in text mode (CRLF translated) unless told otherwise.
O_BINARY: int = getattr(os, "O_BINARY", 0)

#: The signal that cannot be caught; ``os.kill`` with SIGTERM is TerminateProcess on Windows.
KILL_SIGNAL: int = getattr(signal, "SIGKILL", signal.SIGTERM)

#: The signal that stops a process and cannot be caught; ``None`` on Windows.
STOP_SIGNAL: int | None = getattr(signal, "SIGSTOP", None)

#: Whether ``os.open``, ``os.mkdir``, ``os.stat`` and ``os.rename`` take ``dir_fd`` here.
DIR_FD = {os.open, os.mkdir, os.stat, os.rename} <= os.supports_dir_fd


def effective_uid() -> int | None:
    """The process's effective uid; ``None`` on Windows, where files have no owner uid."""
    geteuid = getattr(os, "geteuid", None)
    return None if geteuid is None else int(geteuid())


def refuse_without_posix(command: str, usable: Sequence[str]) -> None:
    """Raise a ``usage`` error (one sentence) when ``command`` needs what only Linux and macOS
    have: the daemon's plugin root (locks, ``openat``-style writes, process groups). The
    sentence names the commands that do run here, ``usable`` (a group stands for every one
    of its subcommands)."""
    if not POSIX:
        named = list(usable)
        listed = ", ".join(named[:-1]) + f" and {named[-1]}" if len(named) > 1 else "".join(named)
        raise UsageError(
            f"`nexo plugin {command}` manages a daemon's plugin root and runs on Linux and macOS "
            f"only, where the daemon runs; on Windows use {listed}"
        )


def lock_shared(descriptor: int) -> None:
    """``flock(LOCK_SH)``, waiting; ``OSError`` where there is no ``flock``."""
    _flock(descriptor, "shared", wait=True)


def lock_exclusive(descriptor: int, *, wait: bool = True) -> None:
    """``flock(LOCK_EX)``; without ``wait`` a held lock raises ``BlockingIOError`` at once.
    ``OSError`` where there is no ``flock``."""
    _flock(descriptor, "exclusive", wait=wait)


def _flock(descriptor: int, operation: str, *, wait: bool) -> None:
    if not POSIX:
        raise OSError(f"file locks need Linux or macOS (descriptor {descriptor})")
    import fcntl  # noqa: PLC0415 (POSIX only)

    flag = {"shared": fcntl.LOCK_SH, "exclusive": fcntl.LOCK_EX}
    fcntl.flock(descriptor, flag[operation] | (0 if wait else fcntl.LOCK_NB))


def set_mode(descriptor: int, path: str | os.PathLike[str], mode: int) -> None:
    """Give the open file ``descriptor`` (at ``path``) ``mode``: ``fchmod`` where it exists,
    else ``chmod`` of the path (Windows keeps only the read-only bit)."""
    fchmod = getattr(os, "fchmod", None)
    if fchmod is not None:
        fchmod(descriptor, mode)
    else:
        Path(path).chmod(mode)


def fsync_directory(path: str | os.PathLike[str]) -> None:
    """fsync a directory so the names it holds are durable; nothing to do on Windows, where a
    directory cannot be opened as a file and NTFS journals its names."""
    if not POSIX:
        return
    descriptor = os.open(path, os.O_RDONLY | O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def kill_process_group(pid: int) -> None:
    """Kill the process group ``pid`` leads (a child started with ``start_new_session``); on
    Windows, where there are no process groups to signal, nothing (the caller kills the child
    itself). Never raises for a group that is gone."""
    killpg = getattr(os, "killpg", None)
    if killpg is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            killpg(pid, KILL_SIGNAL)


def selectable_pipes(
    process: subprocess.Popen[bytes],
) -> tuple[IO[bytes] | None, IO[bytes] | None, IO[bytes] | None]:
    """The child's stdin, stdout and stderr as non-blocking streams a selector can wait on.

    On POSIX these are its pipes, set non-blocking. On Windows ``select`` takes sockets only:
    each pipe is joined to one end of a socket pair by a thread copying between them (until
    the end of the stream on either side), and the other end is returned. Reading an empty
    stream gives ``None``, as a non-blocking pipe does; so does a write that would block.
    """
    streams = (process.stdin, process.stdout, process.stderr)
    if POSIX:
        for stream in streams:
            if stream is not None:
                os.set_blocking(stream.fileno(), False)
        return streams
    stdin, stdout, stderr = streams
    return (
        None if stdin is None else _socket_to_pipe(stdin),
        None if stdout is None else _pipe_to_socket(stdout),
        None if stderr is None else _pipe_to_socket(stderr),
    )


def _pipe_to_socket(pipe: IO[bytes]) -> IO[bytes]:
    import socket  # noqa: PLC0415 (Windows only)

    ours, theirs = socket.socketpair()

    def copy() -> None:
        with contextlib.suppress(OSError, ValueError), theirs, pipe:
            for chunk in iter(lambda: pipe.read(1 << 16), b""):
                theirs.sendall(chunk)

    return _start(copy, ours, "rb")


def _socket_to_pipe(pipe: IO[bytes]) -> IO[bytes]:
    import socket  # noqa: PLC0415 (Windows only)

    ours, theirs = socket.socketpair()

    def copy() -> None:
        with contextlib.suppress(OSError, ValueError), theirs, pipe:
            for chunk in iter(lambda: theirs.recv(1 << 16), b""):
                pipe.write(chunk)
                pipe.flush()

    return _start(copy, ours, "wb")


def _start(copy: object, ours: socket.socket, mode: str) -> IO[bytes]:
    import threading  # noqa: PLC0415 (Windows only)

    threading.Thread(target=copy, daemon=True, name="pipe-copy").start()  # type: ignore[arg-type]
    ours.setblocking(False)
    stream: IO[bytes] = ours.makefile(mode, buffering=0)  # type: ignore[call-overload]
    # The socket closes with the stream (makefile holds the last reference).
    ours.close()
    return stream
