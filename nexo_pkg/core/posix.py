"""The calls only some POSIX kernels have, reached through ``ctypes``: one place, importable
everywhere (Windows included), each call answering ``False`` where the platform lacks it.

- :func:`exchange` swaps two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``), so a
  name is never absent while the trees behind two names change places;
- :func:`become_subreaper` makes this process the one that orphaned descendants are
  re-parented to (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``), so a descendant that left its
  parent's session and process group can still be found and killed
  (:func:`kill_and_reap`).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_PR_SET_CHILD_SUBREAPER = 36
# What a kernel, a file system or a seccomp filter without the call answers.
_UNSUPPORTED = frozenset({errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EPERM})


@functools.cache
def _libc_function(name: str) -> Any:
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


def _errno() -> int:
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
    function = _libc_function("renameat2")
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
    error = _errno()
    if error in _UNSUPPORTED:
        return False
    raise OSError(error, os.strerror(error), str(first), None, str(second))


def become_subreaper(*, enable: bool = True) -> bool:
    """Make this process the subreaper of its descendants (or, with ``enable`` false, no longer
    one): a descendant whose parent dies is re-parented here, not to init. ``False`` where the
    platform has no such call (macOS, Windows) or it fails."""
    function = _libc_function("prctl")
    if function is None:
        return False
    import ctypes  # noqa: PLC0415

    function.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return bool(function(_PR_SET_CHILD_SUBREAPER, int(enable), 0, 0) == 0)


def kill_and_reap(children: Collection[int]) -> None:
    """SIGKILL each of ``children`` (processes whose parent is this one) and reap those already
    dead, without waiting. Nothing where there are no such signals (Windows)."""
    if os.name != "posix":
        return
    import signal  # noqa: PLC0415 (SIGKILL is POSIX's)

    for pid in children:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    for pid in children:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)
