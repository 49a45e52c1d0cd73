"""A bounded pool of worker threads for the plugins of one ``lock`` or ``sync`` run.

Downloading, hashing, inflating and writing files release the GIL (sockets, ``hashlib``,
``zlib``/ISA-L, file I/O), so a few threads keep the network and the cores busy while one
plugin waits. Results come back in the order of the items, whatever the order the work ends
in, so what a run prints and writes does not depend on timing.

Reading a tar stream's headers does not release it (``tarfile`` parses each 512-byte header
in Python, over a thousand per realistic plugin), so :class:`CpuPool` runs such a step in
worker processes, one per core, while the threads go on with the network.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from nexo_pkg.core.errors import UsageError

# Workers of one run when --jobs is not given: downloads wait on the network and extraction
# on the disk (the kernel creating files), so more workers than cores keep both busy, and a
# fleet of up to 8 plugins goes all at once instead of leaving its last plugins to run alone
# after the others (docs/benchmarks.md: 5 plugins 0.49x the pipeline with 8, 0.61x with 4).
DEFAULT_JOBS = 8
MAX_JOBS = 64
# prctl(2): the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")
_Params = ParamSpec("_Params")


def checked_jobs(jobs: int | None) -> int:
    """``jobs`` (``--jobs``), else :data:`DEFAULT_JOBS`; a usage error outside 1 to
    :data:`MAX_JOBS`."""
    if jobs is None:
        return DEFAULT_JOBS
    if not 1 <= jobs <= MAX_JOBS:
        raise UsageError(f"--jobs takes 1 to {MAX_JOBS}, not {jobs}")
    return jobs


def run_bounded(
    work: Callable[[_Item], _Result],
    items: Sequence[_Item],
    *,
    jobs: int,
) -> list[_Result]:
    """``work(item)`` for every item on at most ``jobs`` threads; the results in item order.

    An exception raised by ``work`` is re-raised here once the items already started have
    finished (the first one in item order wins); the items not started yet never start. An
    interrupt (SIGINT, SIGTERM turned into an exception) in the calling thread also waits for
    the started items, so nothing is left half-done behind the caller's back; those items
    finish what they began (every step of theirs is atomic) and the rest never start.
    """
    if jobs <= 1 or len(items) <= 1:
        return [work(item) for item in items]
    stopped = threading.Event()

    def guarded(item: _Item) -> _Result:
        if stopped.is_set():
            raise _NotStartedError
        try:
            return work(item)
        except BaseException:
            stopped.set()
            raise

    pool = ThreadPoolExecutor(max_workers=min(jobs, len(items)), thread_name_prefix="nexo-fleet")
    futures: list[Future[_Result]] = []
    try:
        futures = [pool.submit(guarded, item) for item in items]
        for future in futures:
            # Waiting on each in turn: the first failure in item order is the one raised.
            future.exception()
    finally:
        stopped.set()
        pool.shutdown(wait=True, cancel_futures=True)
    # The first failure in item order is raised; an item skipped after it never is.
    return [future.result() for future in futures]


class _NotStartedError(Exception):
    """An item skipped because an earlier one failed (never seen by callers: the failure
    before it in item order is raised first)."""


class CpuPool:
    """Worker processes for CPU-bound steps of a run's threads; a context manager.

    With ``jobs`` above 1 on a machine of several cores, :meth:`call` runs a function (a
    module-level one, with arguments and a result that pickle) in one of
    ``min(jobs, cores)`` processes started on entry, before the run's threads start
    (``per_core`` off: ``jobs`` processes, for steps that also wait on the disk, as
    extraction does); otherwise it runs it in the calling thread. A failure inside the
    function is raised here as it was raised there (a
    :class:`~nexo_pkg.core.errors.NexoError` keeps its kind and message). The workers ignore
    SIGINT and take SIGTERM's default action: the calling process decides what an interrupt
    means and waits for the steps under way on exit.
    """

    def __init__(self, jobs: int, *, per_core: bool = True) -> None:
        self.workers = min(jobs, os.cpu_count() or 1) if per_core else jobs
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> CpuPool:
        if self.workers > 1:
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
                # The workers are forked now, from this thread, while no other thread runs.
                pool.submit(int).result()
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
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(1)
