"""Worker threads (:func:`run_bounded`, in :mod:`nexo_pkg.core.threads`) and processes for the
plugins of one ``lock`` or ``sync`` run.

Reading a tar stream's headers does not release it (``tarfile`` parses each 512-byte header
in Python, over a thousand per realistic plugin), so :class:`CpuPool` runs such a step in
worker processes, one per core, while the threads go on with the network.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.threads import DEFAULT_JOBS, MAX_JOBS, checked_jobs, run_bounded

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

__all__ = ["DEFAULT_JOBS", "MAX_JOBS", "CpuPool", "checked_jobs", "run_bounded"]

# prctl(2): the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1

_Result = TypeVar("_Result")
_Params = ParamSpec("_Params")


class _Worker:
    """One worker process and this end of its pipe: a call is sent, its answer read back, by
    the calling thread itself (no thread in between either way)."""

    def __init__(self, process: BaseProcess, connection: Connection) -> None:
        self.process = process
        self.connection = connection


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

    The calling thread takes an idle worker (the threads waiting take them in the order they
    came), writes the call to its pipe and reads the answer from it: a step costs its two
    messages and no hand-off between threads. A worker that dies fails the step it had
    (``io``) and no other; once none is left, steps run in the calling thread.
    """

    def __init__(self, jobs: int, *, per_core: bool = True) -> None:
        self.workers = min(jobs, os.cpu_count() or 1) if per_core else jobs
        self._started: list[_Worker] = []
        self._idle: list[_Worker] = []
        self._ready = threading.Condition()
        # Workers whose caller stopped waiting (an interrupt): waited for on exit.
        self._abandoned: list[_Worker] = []

    def __enter__(self) -> CpuPool:
        if self.workers > 1:
            # The process machinery is loaded here: a run with one job (or nothing to
            # install) never loads it.
            import multiprocessing  # noqa: PLC0415

            # Forked while this is the only thread (cheap: nothing to import again); a
            # process that already runs threads (an embedding one) starts them from a fork
            # server instead, since a fork copies the locks other threads hold. Started now,
            # from this thread, before the run's threads: each sets itself up while the run
            # goes on.
            forked = threading.active_count() == 1
            context = (
                multiprocessing.get_context("fork")
                if forked
                else multiprocessing.get_context("forkserver")
            )
            parent = os.getpid() if forked else None
            try:
                for _ in range(self.workers):
                    here, there = context.Pipe()
                    # A forked worker closes the run's ends of the pipes it inherits (its own
                    # and those of the workers before it), so that each sees its pipe end.
                    ends = [item.connection for item in self._started] + [here] if forked else []
                    process = context.Process(
                        target=_serve,
                        args=(there, parent, [end.fileno() for end in ends]),
                        name="nexo-cpu",
                        daemon=True,
                    )
                    try:
                        process.start()
                    except BaseException:
                        here.close()
                        raise
                    finally:
                        there.close()
                    self._started.append(_Worker(process, here))
            except BaseException:
                self.__exit__()
                raise
            self._idle = list(self._started)
        return self

    def __exit__(self, *exc_info: object) -> None:
        with self._ready:
            workers = self._started + self._abandoned
            self._started, self._abandoned, self._idle = [], [], []
        for worker in workers:
            # A worker ends at the end of its pipe, once the step it runs (if any) is done.
            worker.connection.close()
        for worker in workers:
            worker.process.join()

    def call(
        self,
        function: Callable[_Params, _Result],
        *args: _Params.args,
        **kwargs: _Params.kwargs,
    ) -> _Result:
        """``function(*args, **kwargs)``, in a worker process when there are any."""
        if not self._started:
            return function(*args, **kwargs)
        from multiprocessing.reduction import ForkingPickler  # noqa: PLC0415 - loaded by now

        message = ForkingPickler.dumps((function, args, kwargs))
        worker = self._take()
        if worker is None:
            return function(*args, **kwargs)
        connection = worker.connection
        try:
            connection.send_bytes(message)
            done, value = connection.recv()
        except (EOFError, OSError) as exc:
            self._lose(worker)
            raise NexoError(
                f"a worker process ended during {getattr(function, '__name__', 'a step')} "
                f"(exit code {worker.process.exitcode})",
                kind="io",
            ) from exc
        except BaseException:
            # Interrupted while the worker runs the step: it is not given another, and is
            # waited for on exit.
            with self._ready:
                self._started.remove(worker)
                self._abandoned.append(worker)
                self._ready.notify_all()
            raise
        self._give_back(worker)
        if done:
            result: _Result = value
            return result
        raise value

    def _take(self) -> _Worker | None:
        """An idle worker, waiting for one; ``None`` when there are none at all."""
        with self._ready:
            while not self._idle:
                if not self._started:
                    return None
                self._ready.wait()
            return self._idle.pop(0)

    def _give_back(self, worker: _Worker) -> None:
        with self._ready:
            self._idle.append(worker)
            self._ready.notify()

    def _lose(self, worker: _Worker) -> None:
        with self._ready:
            if worker in self._started:
                self._started.remove(worker)
            # Threads waiting for a worker see whether any is left.
            self._ready.notify_all()
        worker.connection.close()
        worker.process.join()


def _serve(connection: Connection, parent: int | None, inherited: list[int]) -> None:
    """A worker: calls read from ``connection`` and answered on it, until the run closes it
    (then an answer nobody reads any more is dropped). ``inherited``: descriptors of the
    run's ends of the pipes, closed here."""
    for descriptor in inherited:
        with contextlib.suppress(OSError):
            os.close(descriptor)
    _quiet_worker(parent)
    while True:
        try:
            function, args, kwargs = connection.recv()
        except (EOFError, OSError):
            return
        answer: tuple[bool, Any]
        try:
            answer = (True, function(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - raised again in the calling thread
            answer = (False, exc)
        try:
            try:
                connection.send(answer)
            except (pickle.PicklingError, TypeError, AttributeError) as exc:
                failure = NexoError(f"a step's answer cannot be sent back: {exc}", kind="io")
                connection.send((False, failure))
        except OSError:
            return


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
