"""A bounded pool of worker threads for the items of one run (the plugins of a ``lock``,
``sync``, ``doctor``, ``verify`` or ``outdated``).

Downloading, hashing, inflating, writing files and waiting on a spawned plugin release the
GIL (sockets, ``hashlib``, ``zlib``, file I/O, ``select``), so a few threads keep the network,
the disk and the cores busy while one item waits. Results come back in the order of the items,
whatever the order the work ends in, and so do the notes and warnings the items' threads say
(:func:`~nexo_pkg.core.output.say`, :func:`~nexo_pkg.core.output.warn`): what a run prints and
writes does not depend on timing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

from nexo_pkg.core.errors import UsageError
from nexo_pkg.core.output import WRITERS, write_line

__all__ = ["DEFAULT_JOBS", "MAX_JOBS", "Aside", "checked_jobs", "run_bounded", "stopping"]

# Workers of one run when --jobs is not given: downloads wait on the network and extraction
# on the disk (the kernel creating files), so more workers than cores keep both busy, and a
# fleet of up to 8 plugins goes all at once instead of leaving its last plugins to run alone
# after the others (docs/benchmarks.md: 5 plugins 0.49x the pipeline with 8, 0.61x with 4).
DEFAULT_JOBS = 8
MAX_JOBS = 64

# Set while an interrupted run waits for its started items: work that would otherwise wait
# out a deadline of its own (a spawned plugin's handshake) asks :func:`stopping` and ends.
_STOPPING = threading.Event()

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")


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
    on_interrupt: Callable[[], object] | None = None,
) -> list[_Result]:
    """``work(item)`` for every item on at most ``jobs`` threads; the results in item order.

    An exception raised by ``work`` is re-raised here once the items already started have
    finished (the first one in item order wins); the items not started yet never start. An
    interrupt (SIGINT, SIGTERM turned into an exception) in the calling thread also waits for
    the started items, so nothing is left half-done behind the caller's back; those items
    finish what they began (every step of theirs is atomic) and the rest never start.
    ``on_interrupt`` is called first, then: it cuts the started items' waits short (their
    requests), so that they end soon rather than when the network answers; and until the
    started items have ended, :func:`stopping` is true for work that watches it.

    What the items say (notes, warnings) comes out as one at a time says it: the lines of
    the first item not yet ended at once, those of each item after it when its turn comes.
    """
    if jobs <= 1 or len(items) <= 1:
        return [work(item) for item in items]
    stopped = threading.Event()
    lines = _InOrder(len(items))

    def guarded(numbered: tuple[int, _Item]) -> _Result:
        if stopped.is_set():
            raise _NotStartedError
        position, item = numbered
        thread = threading.get_ident()
        WRITERS[thread] = lines.writer(position)
        try:
            return work(item)
        except BaseException:
            stopped.set()
            raise
        finally:
            del WRITERS[thread]

    pool = ThreadPoolExecutor(max_workers=min(jobs, len(items)), thread_name_prefix="nexo-worker")
    futures: list[Future[_Result]] = []
    try:
        futures = [pool.submit(guarded, numbered) for numbered in enumerate(items)]
        for position, future in enumerate(futures):
            # Waiting on each in turn: the first failure in item order is the one raised.
            future.exception()
            lines.ended(position)
    except BaseException:
        stopped.set()
        _STOPPING.set()
        if on_interrupt is not None:
            on_interrupt()
        raise
    finally:
        stopped.set()
        try:
            pool.shutdown(wait=True, cancel_futures=True)
        finally:
            _STOPPING.clear()
            # Interrupted or failed: what the items that ran said, in their order.
            lines.ended(len(items) - 1)
    # The first failure in item order is raised; an item skipped after it never is.
    return [future.result() for future in futures]


class _InOrder:
    """The notes and warnings of a run's items, written in the items' order (see
    :func:`run_bounded`). The run's own lines go where the thread that started it writes
    its own: to stderr, or to its writer when it is an item of another run itself."""

    def __init__(self, count: int) -> None:
        self._lock = threading.Lock()
        self._held: list[list[tuple[str, str | None]]] = [[] for _ in range(count)]
        self._turn = 0
        self._out = WRITERS.get(threading.get_ident(), write_line)

    def writer(self, position: int) -> Callable[[str, str | None], None]:
        """How the item at ``position`` says a line: at once in its turn, else held."""

        def write(line: str, once: str | None) -> None:
            with self._lock:
                if position == self._turn:
                    self._out(line, once)
                else:
                    self._held[position].append((line, once))

        return write

    def ended(self, position: int) -> None:
        """The items up to ``position`` have ended: the next one's turn (its held lines).
        A reader of stderr that left stops the held lines, not the run (their items' own
        writes would have met it while they ran)."""
        with self._lock:
            while self._turn <= position:
                self._turn += 1
                if self._turn < len(self._held):
                    held, self._held[self._turn] = self._held[self._turn], []
                    for line, once in held:
                        try:
                            self._out(line, once)
                        except BrokenPipeError:
                            from nexo_pkg.core.leaving import silence_left_readers  # noqa: PLC0415

                            if not silence_left_readers():
                                raise


def stopping() -> bool:
    """Whether the run this thread works for was interrupted: the caller waits for the items
    already started, which should end now instead of waiting out their own deadlines."""
    return _STOPPING.is_set()


class _NotStartedError(Exception):
    """An item skipped because an earlier one failed (never seen by callers: the failure
    before it in item order is raised first)."""


class Aside(Generic[_Result]):
    """``function()`` run in a thread of its own while the caller goes on with other work
    (a request that waits on the network beside another): :meth:`result` waits for it and
    gives its value, or raises what it raised. The thread is a daemon: a caller interrupted
    (Ctrl-C, SIGTERM) does not wait for it; one that fails otherwise calls :meth:`wait` so
    that nothing it started is still under way when the failure is handled."""

    def __init__(self, function: Callable[[], _Result], *, name: str) -> None:
        self._function = function
        self._value: _Result | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._function()
        except BaseException as exc:  # noqa: BLE001 - raised again by result()
            self._error = exc

    def wait(self) -> None:
        """Wait for the function to end, whatever its outcome (kept for :meth:`result`)."""
        self._thread.join()

    def result(self) -> _Result:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]
