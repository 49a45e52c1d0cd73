"""What the items of :func:`nexo_pkg.core.threads.run_bounded` say (notes, warnings, a line
said once a run) comes out as one item at a time says it, whichever item ends first."""

from __future__ import annotations

import threading
import time

import pytest

from nexo_pkg.core.output import OUTPUT, say, say_once, warn
from nexo_pkg.core.threads import run_bounded

COUNT = 6


def _said_by(jobs: int, capsys: pytest.CaptureFixture[str]) -> str:
    """Each item says two lines, a warning and a line said once a run, the first items
    taking longest (with several jobs, the last ones end first)."""
    OUTPUT.said.clear()

    def work(position: int) -> int:
        say(f"note: {position} begins")
        time.sleep(0.05 * (COUNT - position))
        if position in {2, 4}:
            say_once("note: said once")
        warn(f"{position} ends")
        return position

    assert run_bounded(work, range(COUNT), jobs=jobs) == list(range(COUNT))
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err


@pytest.mark.parametrize("jobs", [2, 3, COUNT])
def test_the_lines_come_in_the_items_order(jobs: int, capsys: pytest.CaptureFixture[str]) -> None:
    one = _said_by(1, capsys)
    assert one.splitlines()[:4] == [
        "note: 0 begins",
        "warning: 0 ends",
        "note: 1 begins",
        "warning: 1 ends",
    ]
    assert one.count("note: said once") == 1
    assert _said_by(jobs, capsys) == one


def test_the_first_item_not_ended_speaks_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    """The lines of the item whose turn it is are not held: a note about a slow answer is
    seen while it waits."""
    seen = threading.Event()
    heard: list[str] = []

    def work(position: int) -> None:
        if position == 0:
            say("note: 0 waits")
            heard.append(capsys.readouterr().err)
            seen.set()
        else:
            seen.wait(5)

    run_bounded(work, range(3), jobs=3)
    assert heard == ["note: 0 waits\n"]


def test_a_run_inside_an_item_keeps_that_items_place(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def inner(position: int) -> None:
        time.sleep(0.03 * (3 - position))
        say(f"  inner {position}")

    def outer(position: int) -> None:
        time.sleep(0.05 * (3 - position))
        say(f"outer {position}")
        run_bounded(inner, range(3), jobs=3)

    for jobs in (1, 3):
        run_bounded(outer, range(3), jobs=jobs)
        assert capsys.readouterr().err.splitlines() == [
            line
            for position in range(3)
            for line in (f"outer {position}", "  inner 0", "  inner 1", "  inner 2")
        ]


def test_a_failed_item_leaves_the_lines_of_the_items_that_ran(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def work(position: int) -> None:
        time.sleep(0.05 * (3 - position))
        say(f"note: {position}")
        if position == 1:
            raise ValueError(position)

    with pytest.raises(ValueError, match="1"):
        run_bounded(work, range(3), jobs=3)
    assert capsys.readouterr().err == "note: 0\nnote: 1\nnote: 2\n"
