"""``net.bounded.after``: the moments a request's deadline watchdog and slow-answer notice
wait for, all kept by one thread of the process instead of a thread per request."""

from __future__ import annotations

import os
import threading
import time

import pytest

from nexo_pkg.net.bounded import after


def test_an_action_runs_when_its_block_is_still_running() -> None:
    fired = threading.Event()
    started = time.monotonic()
    with after(0.05, fired.set):
        assert fired.wait(5)
    assert time.monotonic() - started >= 0.05


def test_an_action_whose_block_ended_never_runs() -> None:
    fired = threading.Event()
    with after(0.05, fired.set):
        pass
    assert not fired.wait(0.2)


def test_overlapping_blocks_fire_in_the_order_of_their_moments() -> None:
    """A later block with an earlier moment wakes the waiting thread; a block that ends
    takes only its own alarm away."""
    order: list[str] = []
    done = threading.Event()

    def note(name: str) -> None:
        order.append(name)
        if len(order) == 3:
            done.set()

    with after(0.3, lambda: note("slow")), after(5, lambda: note("never")):
        with after(0.2, lambda: note("middle")):
            with after(0.05, lambda: note("first")):
                time.sleep(0.1)
            time.sleep(0.15)
        with after(0.01, lambda: note("late")):
            assert done.wait(5)
        time.sleep(0.25)
    assert order[:2] == ["first", "middle"]
    assert sorted(order[2:]) == ["late", "slow"]
    assert "never" not in order


def test_a_failing_action_is_reported_and_the_others_still_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reported: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: reported.append(args.exc_value))
    fired = threading.Event()

    def boom() -> None:
        raise RuntimeError("boom")

    with after(0.01, boom), after(0.05, fired.set):
        assert fired.wait(5)
    assert [str(error) for error in reported] == ["boom"]


def test_many_requests_use_one_thread() -> None:
    before = threading.active_count()
    for _ in range(200):
        with after(30, lambda: None):
            pass
    assert threading.active_count() <= before + 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
def test_a_forked_child_keeps_its_own_alarms() -> None:
    """A worker forked while alarms are pending (``sync`` forks its extraction workers) has
    no waiting thread of its parent's: its own blocks still get their actions."""
    with after(30, lambda: None):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through its exit status
            fired = threading.Event()
            with after(0.01, fired.set):
                os._exit(0 if fired.wait(5) else 1)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
