"""Worker threads (:func:`run_bounded`, in :mod:`nexo_pkg.core.threads`) and processes for the
plugins of one ``lock`` or ``sync`` run.

Reading a tar stream's headers does not release it (``tarfile`` parses each 512-byte header
in Python, over a thousand per realistic plugin), so :class:`CpuPool` runs such a step in
worker processes, one per core, while the threads go on with the network.
"""

from __future__ import annotations

import contextlib
import io
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

_Result = TypeVar("_Result")
_Params = ParamSpec("_Params")


# Calls a worker holds at once: the one it runs and the next, already in its pipe, so that it
# starts the next one as soon as it has written an answer, whoever reads that answer and when.
QUEUED_PER_WORKER = 2


class _Worker:
    """One worker process and this end of its pipe. The calls written to the pipe are
    numbered in order (:attr:`sent`); their answers come back in that order, each read by the
    thread that made the call once the answers before it are read (:attr:`read`)."""

    def __init__(self, process: BaseProcess, connection: Connection) -> None:
        self.process = process
        self.connection = connection
        self.sent = 0
        self.read = 0
        # Set when the worker is gone: "died" (its pipe ended: the calls after the one it
        # died under never started) or "dropped" (its caller was interrupted).
        self.gone: str | None = None
        self.turn = threading.Condition()


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

    The calling thread writes its call to the pipe of the worker with the fewest calls (at
    most :data:`QUEUED_PER_WORKER`: one running, the next waiting in the pipe, so a worker
    never waits for a thread to be scheduled between two steps) and reads its answer from it
    itself: no thread in between either way. A worker that dies fails the step it ran
    (``io``); the calls queued behind it go to the others, and once none is left, steps run
    in the calling thread.
    """

    def __init__(self, jobs: int, *, per_core: bool = True) -> None:
        self.workers = min(jobs, os.cpu_count() or 1) if per_core else jobs
        self._started: list[_Worker] = []
        # Guards the choice of a worker and the writing of calls; told when one has room.
        self._room = threading.Condition()
        # Every worker ever started, to be ended and waited for on exit.
        self._all: list[_Worker] = []
        # With expect(): the calls still to be answered before the workers are let go.
        self._expected: int | None = None

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
            if not forked:
                # The fork server's children are born ignoring SIGINT (see pool_server);
                # it preloads the main module too, as by default.
                context.set_forkserver_preload(["__main__", "nexo_pkg.fleet.pool_server"])
            parent = os.getpid() if forked else None
            # A worker is born with the run's signal handlers (a fork server's child, with
            # Python's): SIGINT and SIGTERM stay blocked from before its fork until it has
            # its own (`_quiet_worker`), so that a Ctrl-C to the process group then does not
            # kill it under the run's handler. Here they wait until every worker is started.
            try:
                self._start(context, parent)
            except BaseException:
                self.__exit__()
                raise
            self._started = list(self._all)
        return self

    def _start(self, context: Any, parent: int | None) -> None:
        """Start the workers with SIGINT and SIGTERM blocked (see :func:`_quiet_worker`); one
        that came meanwhile is handled once they all are."""
        masked = _block_interrupts()
        try:
            forked = parent is not None
            for _ in range(self.workers):
                here, there = context.Pipe()
                # A forked worker closes the run's ends of the pipes it inherits (its own and
                # those of the workers before it), so that each sees its pipe end.
                ends = [item.connection for item in self._all] + [here] if forked else []
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
                self._all.append(_Worker(process, here))
        finally:
            _restore_interrupts(masked)

    def __exit__(self, *exc_info: object) -> None:
        with self._room:
            workers, self._all, self._started = self._all, [], []
            self._expected = None  # a pool entered again expects nothing yet
        for worker in workers:
            # A worker ends at the end of its pipe, once the step it runs (if any) is done.
            worker.connection.close()
        for worker in workers:
            worker.process.join()

    def expect(self, calls: int) -> None:
        """Say that ``calls`` more calls are all the pool will be given: once they are all
        answered (and nothing else is under way), the workers are let go at once and end
        while the caller finishes its work (exit still waits for them); a call after that
        runs in the calling thread. A call that fails with its worker leaves them as they
        are, until exit."""
        with self._room:
            self._expected = calls
            self._let_go_when_done()

    def _let_go_when_done(self) -> None:
        """With the guard held: end the workers once the expected calls are answered."""
        if self._expected is None or self._expected > 0:
            return
        if any(worker.sent != worker.read for worker in self._started):
            return
        self._expected = None
        workers, self._started = self._started, []
        for worker in workers:
            worker.connection.close()  # the worker ends at the end of its pipe

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

        # Pickled to bytes, not to ForkingPickler.dumps's view of a BytesIO: a step that
        # raises leaves this frame in a cycle with its exception, and Python 3.12 crashes
        # (3.13 complains on stderr) collecting a BytesIO whose buffer a view still exports.
        pickled = io.BytesIO()
        try:
            ForkingPickler(pickled).dump((function, args, kwargs))
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            # As an answer that cannot be sent back: the step fails, not the run.
            name = getattr(function, "__name__", "a step")
            raise NexoError(f"{name} cannot be sent to a worker process: {exc}", kind="io") from exc
        message = pickled.getvalue()
        while True:
            sent = self._send(message)
            if sent is None:
                return function(*args, **kwargs)
            worker, number = sent
            answer = self._answer(worker, number, getattr(function, "__name__", "a step"))
            if answer is not None:
                break
            # The worker died under an earlier call: this one never started; again elsewhere.
        done, value = ForkingPickler.loads(answer)
        if done:
            result: _Result = value
            return result
        raise value

    def _send(self, message: bytes) -> tuple[_Worker, int] | None:
        """Write ``message`` to the worker with the fewest calls, waiting for one with room;
        the worker and the call's number, or ``None`` when no worker is left."""
        with self._room:
            while True:
                if not self._started:
                    return None
                worker = min(self._started, key=lambda item: item.sent - item.read)
                if worker.sent - worker.read < QUEUED_PER_WORKER:
                    break
                self._room.wait()
            number = worker.sent
            try:
                worker.connection.send_bytes(message)
            except OSError:
                self._lose(worker, "died")
                return self._send(message)
            worker.sent += 1
            return worker, number

    def _answer(self, worker: _Worker, number: int, name: str) -> bytes | None:
        """The answer to call ``number`` of ``worker``, once the answers before it are read;
        ``None`` when the worker died before the call started."""
        try:
            with worker.turn:
                while worker.read != number and worker.gone is None:
                    worker.turn.wait()
                gone, running = worker.gone, worker.read == number
        except BaseException:
            # Interrupted while waiting for its turn: the answer would never be read, so the
            # worker gets no other call (those queued behind this one fail).
            self._lose(worker, "dropped")
            raise
        if gone == "died" and not running:
            return None
        if gone == "died":
            raise _ended(worker, name)
        if gone is not None:
            raise NexoError(f"{name} was stopped: the run was interrupted", kind="io")
        try:
            answer = worker.connection.recv_bytes()
        except (EOFError, OSError) as exc:
            self._lose(worker, "died")
            raise _ended(worker, name) from exc
        except BaseException:
            # Interrupted while the worker runs the step: it gets no other, and is waited for
            # on exit (the calls queued behind this one fail).
            self._lose(worker, "dropped")
            raise
        with self._room:
            worker.read += 1
            if self._expected is not None:
                self._expected -= 1
                self._let_go_when_done()
            self._room.notify()
        with worker.turn:
            worker.turn.notify_all()
        return answer

    def _lose(self, worker: _Worker, why: str) -> None:
        with self._room:
            if worker in self._started:
                self._started.remove(worker)
            # Threads waiting for room see whether any worker is left.
            self._room.notify_all()
        with worker.turn:
            if worker.gone is None:
                worker.gone = why
            worker.turn.notify_all()
        worker.connection.close()
        if why == "died":
            worker.process.join()


def _ended(worker: _Worker, name: str) -> NexoError:
    """The failure of the step a worker died under: its exit code, or the signal that
    killed it (SIGKILL: the out-of-memory killer, or someone's ``kill -9``)."""
    code = worker.process.exitcode
    if code is not None and code < 0:
        try:
            how = f"killed by {signal.Signals(-code).name}"
        except ValueError:
            how = f"killed by signal {-code}"
    else:
        how = f"exit code {code}"
    return NexoError(f"a worker process ended during {name} ({how})", kind="io")


def _serve(connection: Connection, parent: int | None, inherited: list[int]) -> None:
    """A worker: calls read from ``connection`` and answered on it, until the run closes it
    (then an answer nobody reads any more is dropped). ``inherited``: descriptors of the
    run's ends of the pipes, closed here."""
    for descriptor in inherited:
        with contextlib.suppress(OSError):
            os.close(descriptor)
    _quiet_worker(parent)
    if parent is None:
        _end_with_the_run(connection)
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


def _end_with_the_run(connection: Connection) -> None:
    """A worker a fork server started has no death signal tied to the run (its parent is the
    fork server, which waits for it): a thread of its own waits for the run's end of the pipe
    to close and ends the worker then, in the middle of a step too. The run closes it only
    once every step it asked for is answered, or when it dies."""
    import select  # noqa: PLC0415

    hang_up = getattr(select, "POLLRDHUP", None)
    if hang_up is None or not hasattr(select, "poll"):
        return  # not Linux: the worker ends at the end of its step, when it reads the close
    poller = select.poll()
    poller.register(connection.fileno(), hang_up)  # not POLLIN: the next call is no end

    def watch() -> None:
        while not poller.poll():
            pass
        os._exit(0)

    threading.Thread(target=watch, name="nexo-cpu-watch", daemon=True).start()


def _quiet_worker(parent: int | None) -> None:
    """Set up a worker: interrupts are the parent's to handle, and on Linux a worker forked
    from the run (``parent``, its pid) is killed when the run dies, even by SIGKILL, so that
    no step of a dead run goes on writing behind the next one's back. (Workers started by a
    fork server end when they find their call queue closed.) SIGINT and SIGTERM, blocked
    since the fork, are let in once their handling is the worker's: a Ctrl-C that came
    meanwhile is dropped, a SIGTERM ends it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for number in signal.valid_signals():
        # The run's unwinding handlers (SIGHUP, SIGQUIT, SIGUSR1, ...), inherited by a fork,
        # give way to the default action; one ignored (nohup) stays ignored.
        if number not in _INTERRUPTS and callable(signal.getsignal(number)):
            signal.signal(number, signal.SIG_DFL)
    if parent is not None and sys.platform == "linux":
        from nexo_pkg.core import posix  # noqa: PLC0415 - in the worker only

        posix.die_with_parent()
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(1)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _INTERRUPTS)


# The signals that interrupt a run (cli.SIGNAL_EXIT's): blocked while workers are started.
_INTERRUPTS = frozenset({signal.SIGINT, signal.SIGTERM})


def _block_interrupts() -> set[int | signal.Signals] | None:
    """Block :data:`_INTERRUPTS` in this thread; the mask to restore (``None``: no masks)."""
    if not hasattr(signal, "pthread_sigmask"):
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, _INTERRUPTS)


def _restore_interrupts(masked: set[int | signal.Signals] | None) -> None:
    """Put back the mask :func:`_block_interrupts` returned; a signal that came meanwhile is
    handled now."""
    if masked is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, masked)
