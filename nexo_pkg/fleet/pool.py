"""Worker threads (:func:`run_bounded`, in :mod:`nexo_pkg.core.threads`) and processes for the
plugins of one ``lock`` or ``sync`` run.

Reading a tar stream's headers does not release it (``tarfile`` parses each 512-byte header
in Python, over a thousand per realistic plugin), so :class:`CpuPool` runs such a step in
worker processes, one per core, while the threads go on with the network.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from nexo_pkg.core.threads import DEFAULT_JOBS, MAX_JOBS, checked_jobs, run_bounded

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

__all__ = ["DEFAULT_JOBS", "MAX_JOBS", "CpuPool", "checked_jobs", "run_bounded"]

# prctl(2): the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1

_Result = TypeVar("_Result")
_Params = ParamSpec("_Params")


class CpuPool:
    """Worker processes for CPU-bound steps of a run's threads; a context manager.

    With ``jobs`` above 1 on a machine of several cores, :meth:`call` runs a function (a
    module-level one, with arguments and a result that pickle) in one of
    ``min(jobs, cores)`` processes started on entry, before the run's threads start
    (``per_core`` off: ``jobs`` processes, for steps that mostly wait); otherwise it runs it
    in the calling thread. A failure inside the function is raised here as it was raised
    there (a
    :class:`~nexo_pkg.core.errors.NexoError` keeps its kind and message). The workers ignore
    SIGINT and take SIGTERM's default action: the calling process decides what an interrupt
    means and waits for the steps under way on exit.
    """

    def __init__(self, jobs: int, *, per_core: bool = True) -> None:
        self.workers = min(jobs, os.cpu_count() or 1) if per_core else jobs
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> CpuPool:
        if self.workers > 1:
            # The process machinery is loaded here: a run with one job (or nothing to
            # install) never loads it.
            import multiprocessing  # noqa: PLC0415
            from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415

            # Forked while this is the only thread (cheap: nothing to import again); a
            # process that already runs threads (an embedding one) starts them from a fork
            # server instead, since a fork copies the locks other threads hold.
            method = "fork" if threading.active_count() == 1 else "forkserver"
            pool = ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context(method),
                initializer=_quiet_worker,
                initargs=(os.getpid() if method == "fork" else None,),
            )
            try:
                # The workers are forked now, from this thread, while no other thread runs:
                # the first submission starts them (all of them, when forked), not the call
                # itself, which is not waited for.
                pool.submit(int)
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
            self._pool = pool
        return self

    def __exit__(self, *exc_info: object) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def call(
        self,
        function: Callable[_Params, _Result],
        *args: _Params.args,
        **kwargs: _Params.kwargs,
    ) -> _Result:
        """``function(*args, **kwargs)``, in a worker process when there are any."""
        if self._pool is None:
            return function(*args, **kwargs)
        return self._pool.submit(function, *args, **kwargs).result()


def _quiet_worker(parent: int | None) -> None:
    """Set up a worker: interrupts are the parent's to handle, and on Linux a worker forked
    from the run (``parent``, its pid) is killed when the run dies, even by SIGKILL, so that
    no step of a dead run goes on writing behind the next one's back. (Workers started by a
    fork server end when they find their call queue closed.)"""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if parent is not None and sys.platform == "linux":
        import ctypes  # noqa: PLC0415 - in the worker only

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(1)
