"""Run nexo-pkg's own modules as if on Windows, on a POSIX test machine (``--windows-shim``).

CPython on Windows lacks a set of POSIX names (``os.O_NONBLOCK``, ``os.killpg``,
``signal.SIGKILL``, ``fcntl``, ``pwd``, ...), has no ``dir_fd`` support, and selects on sockets
only. A module of ``nexo_pkg`` that uses one of them at import, or on a path ``lint``, ``lsp``,
``schema``, ``new``, ``pack`` or ``check`` runs, dies there. :func:`install` makes every
``nexo_pkg`` module imported afterwards see the standard library as Windows shows it:

- ``import os`` / ``import signal`` / ``import selectors`` give a view of the real module
  without the names Windows lacks (:data:`OS_MISSING`, :data:`SIGNAL_MISSING`), ``os.name``
  ``"nt"``, ``os.supports_dir_fd`` empty and every ``dir_fd=`` refused as Windows refuses it,
  ``os.read``/``os.write`` refusing a socket and the default selector refusing anything but
  a socket (``select()`` on Windows takes sockets only);
- ``import fcntl`` (``pwd``, ``grp``, ``resource``, ``termios``, ``pty``, ``tty``) raises
  ``ModuleNotFoundError``.

Only ``nexo_pkg``'s code is affected (its modules get their own ``__builtins__`` whose
``__import__`` hands out the views): the standard library and pytest keep their POSIX
branches, since on Windows they take their own Windows branches, which this machine lacks.
``sys.platform`` is left alone, so what depends on the host (the sandbox, the target triple)
keeps its Linux answer; what is emulated is what Windows's CPython does not have.

A child interpreter started by a test gets the same view when ``NEXO_TEST_WINDOWS_SHIM=1`` and
the directory of ``shim_site/sitecustomize.py`` is on ``PYTHONPATH`` (:func:`child_environment`).
"""

from __future__ import annotations

import builtins
import errno
import importlib.abc
import importlib.machinery
import os
import selectors
import signal
import stat
import sys
import types
from collections.abc import Callable, MutableMapping, Sequence
from pathlib import Path
from typing import Any

#: Names CPython's ``os`` defines on Linux and macOS but not on Windows (3.11-3.13), among
#: those a portable program could reach for.
OS_MISSING = frozenset(
    {
        "O_NONBLOCK",
        "O_NDELAY",
        "O_CLOEXEC",
        "O_NOFOLLOW",
        "O_DIRECTORY",
        "O_NOCTTY",
        "O_SYNC",
        "O_DSYNC",
        "O_RSYNC",
        "O_ASYNC",
        "O_PATH",
        "O_TMPFILE",
        "O_NOATIME",
        "killpg",
        "getpgid",
        "getpgrp",
        "setpgid",
        "setpgrp",
        "getsid",
        "setsid",
        "fork",
        "forkpty",
        "getuid",
        "geteuid",
        "getgid",
        "getegid",
        "getgroups",
        "setuid",
        "seteuid",
        "setgid",
        "setegid",
        "chown",
        "fchown",
        "lchown",
        "fchmod",
        "lchmod",
        "chroot",
        "fdatasync",
        "sync",
        "mkfifo",
        "mknod",
        "major",
        "minor",
        "makedev",
        "pipe2",
        "openpty",
        "ttyname",
        "nice",
        "wait3",
        "wait4",
        "waitid",
        "P_PID",
        "WEXITED",
        "WNOHANG",
        "WNOWAIT",
        "CLD_EXITED",
        "WIFEXITED",
        "WEXITSTATUS",
        "WIFSIGNALED",
        "WTERMSIG",
        "statvfs",
        "fstatvfs",
        "getloadavg",
        "sched_getaffinity",
        "sched_setaffinity",
        "posix_spawn",
        "pread",
        "pwrite",
        "sendfile",
        "memfd_create",
        "eventfd",
        "pidfd_open",
        "register_at_fork",
        "setns",
        "unshare",
        "getresuid",
        "getresgid",
        "initgroups",
    }
)

#: Signals (and signal functions) Windows does not have: it knows SIGABRT, SIGFPE, SIGILL,
#: SIGINT, SIGSEGV, SIGTERM and SIGBREAK only.
SIGNAL_MISSING = frozenset(
    {
        "SIGKILL",
        "SIGHUP",
        "SIGQUIT",
        "SIGPIPE",
        "SIGCHLD",
        "SIGCLD",
        "SIGALRM",
        "SIGUSR1",
        "SIGUSR2",
        "SIGSTOP",
        "SIGCONT",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGWINCH",
        "SIGBUS",
        "SIGSYS",
        "SIGTRAP",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGPROF",
        "SIGVTALRM",
        "SIGURG",
        "SIGIO",
        "SIGPOLL",
        "SIGPWR",
        "SIGRTMIN",
        "SIGRTMAX",
        "SIG_BLOCK",
        "SIG_UNBLOCK",
        "SIG_SETMASK",
        "pthread_kill",
        "pthread_sigmask",
        "sigpending",
        "sigwait",
        "sigwaitinfo",
        "sigtimedwait",
        "siginterrupt",
        "setitimer",
        "getitimer",
        "alarm",
        "pause",
        "pidfd_send_signal",
    }
)

#: Modules that do not exist on Windows.
BLOCKED_MODULES = frozenset({"fcntl", "pwd", "grp", "resource", "termios", "pty", "tty"})

#: The environment variable that turns the shim on in a child interpreter.
ENV_FLAG = "NEXO_TEST_WINDOWS_SHIM"

_SITE_DIR = Path(__file__).resolve().parent / "shim_site"

# Functions Windows runs without ``dir_fd`` support: given one, it raises NotImplementedError.
_DIR_FD_FUNCTIONS = ("open", "mkdir", "stat", "lstat", "rename", "replace", "unlink", "rmdir")


class _View(types.ModuleType):
    """A module's names minus ``missing``, with ``overrides`` in front."""

    def __init__(self, real: types.ModuleType, missing: frozenset[str], overrides: dict[str, Any]):
        super().__init__(real.__name__, real.__doc__)
        self._real = real
        self._missing = missing
        self.__dict__.update(overrides)

    def __getattr__(self, name: str) -> Any:
        if name in self._missing:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r} on Windows")
        return getattr(self._real, name)

    def __dir__(self) -> list[str]:
        return sorted((set(dir(self._real)) | set(self.__dict__)) - self._missing)


def _refusing_dir_fd(function: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        for key in ("dir_fd", "src_dir_fd", "dst_dir_fd"):
            if kwargs.get(key) is not None:
                raise NotImplementedError(f"{key} unavailable on this platform")
        return function(*args, **kwargs)

    return call


def _refusing_sockets(function: Callable[..., Any]) -> Callable[..., Any]:
    def call(descriptor: int, *args: Any) -> Any:
        if stat.S_ISSOCK(os.fstat(descriptor).st_mode):
            # Windows sockets are not C runtime descriptors.
            raise OSError(errno.EBADF, "Bad file descriptor")
        return function(descriptor, *args)

    return call


class _SocketsOnlySelector(selectors.SelectSelector):
    """``select()`` as Windows has it: sockets only (WSAENOTSOCK for a pipe)."""

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        descriptor = fileobj if isinstance(fileobj, int) else fileobj.fileno()
        if not stat.S_ISSOCK(os.fstat(descriptor).st_mode):
            raise OSError(10038, "An operation was attempted on something that is not a socket")
        return super().register(fileobj, events, data)


def _views() -> dict[str, types.ModuleType]:
    os_overrides: dict[str, Any] = {
        name: _refusing_dir_fd(getattr(os, name)) for name in _DIR_FD_FUNCTIONS
    }
    os_overrides.update(
        path=os.path,
        name="nt",
        supports_dir_fd=set(),
        supports_fd={os.stat},
        supports_follow_symlinks={os.stat},
        read=_refusing_sockets(os.read),
        write=_refusing_sockets(os.write),
    )
    return {
        "os": _View(os, OS_MISSING, os_overrides),
        "signal": _View(signal, SIGNAL_MISSING, {}),
        "selectors": _View(selectors, frozenset(), {"DefaultSelector": _SocketsOnlySelector}),
    }


def _shimmed_builtins() -> dict[str, Any]:
    views = _views()
    real_import = builtins.__import__

    def shim_import(
        name: str,
        globals_: dict[str, Any] | None = None,
        locals_: dict[str, Any] | None = None,
        fromlist: Sequence[str] | None = (),
        level: int = 0,
    ) -> Any:
        top = name.partition(".")[0]
        if level == 0 and top in BLOCKED_MODULES:
            raise ModuleNotFoundError(f"No module named {name!r} (not on Windows)", name=name)
        module = real_import(name, globals_, locals_, fromlist, level)
        if level == 0 and top in views and (fromlist or "." not in name):
            return views[top]
        return module

    namespace = dict(builtins.__dict__)
    namespace["__import__"] = shim_import
    return namespace


class _ShimLoader(importlib.abc.Loader):
    def __init__(self, inner: importlib.abc.Loader, namespace: dict[str, Any]) -> None:
        self._inner = inner
        self._namespace = namespace

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self._inner.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__dict__["__builtins__"] = self._namespace
        self._inner.exec_module(module)

    def __getattr__(self, name: str) -> Any:
        # get_resource_reader, get_source, is_package, ... as the wrapped loader has them.
        return getattr(self._inner, name)


class _ShimFinder(importlib.abc.MetaPathFinder):
    def __init__(self) -> None:
        self._namespace = _shimmed_builtins()

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "nexo_pkg" and not fullname.startswith("nexo_pkg."):
            return None
        for finder in sys.meta_path:
            if _is_shim(finder) or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _ShimLoader(spec.loader, self._namespace)
                return spec
            if spec is not None:
                return spec
        return None


def _is_shim(finder: object) -> bool:
    """Whether ``finder`` is a shim's, this module's or another copy's: a child interpreter's
    ``sitecustomize`` (pytest-xdist's workers are such children) installs the shim from the
    copy of this module on its own path, then the conftest's ``support.windows_shim``."""
    return type(finder).__name__ == _ShimFinder.__name__


def install() -> None:
    """Make ``nexo_pkg`` modules imported from now on see Windows's standard library; raises
    ``RuntimeError`` when one was imported already (it would keep the POSIX names)."""
    if any(_is_shim(finder) for finder in sys.meta_path):
        return
    imported = sorted(name for name in sys.modules if name.partition(".")[0] == "nexo_pkg")
    if imported:
        raise RuntimeError(
            f"the Windows shim must be installed before nexo_pkg is imported ({imported[0]} is)"
        )
    sys.meta_path.insert(0, _ShimFinder())


def child_environment(environ: MutableMapping[str, str]) -> None:
    """Turn the shim on in child interpreters started with ``environ``."""
    environ[ENV_FLAG] = "1"
    existing = environ.get("PYTHONPATH")
    environ["PYTHONPATH"] = str(_SITE_DIR) + (os.pathsep + existing if existing else "")
