"""Threads flushing one file system at once share a ``syncfs``, and only when it is safe: a
flush that started before a thread's writes were done never stands in for that thread's."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from nexo_pkg.core import durable


def _wait_until(predicate: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the threads never got there"
        time.sleep(0.001)


def test_threads_arriving_during_a_flush_share_the_next_one_not_the_running_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = durable._SharedSyncfs()
    release = threading.Event()
    calls: list[int] = []

    def blocking_syncfs(descriptor: int) -> bool:
        calls.append(shared._issued)  # the tickets taken when this flush started
        if len(calls) == 1:
            release.wait(timeout=30)
        return True

    monkeypatch.setattr(durable, "syncfs", blocking_syncfs)
    descriptor = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        results: list[bool] = []
        first = threading.Thread(target=lambda: results.append(shared.flush(descriptor)))
        first.start()
        _wait_until(lambda: len(calls) == 1)
        # Two threads finish their writes while the first flush runs: it may have started
        # before their writes, so it does not cover them; one more flush covers both.
        late = [
            threading.Thread(target=lambda: results.append(shared.flush(descriptor)))
            for _ in range(2)
        ]
        for thread in late:
            thread.start()
        _wait_until(lambda: shared._issued == 3)
        release.set()
        for thread in (first, *late):
            thread.join(timeout=30)
    finally:
        os.close(descriptor)
    assert results == [True, True, True]
    assert calls == [1, 3]


def test_without_syncfs_the_caller_is_told_so_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(durable, "syncfs", lambda descriptor: False)
    shared = durable._SharedSyncfs()
    descriptor = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert [shared.flush(descriptor) for _ in range(3)] == [False, False, False]
    finally:
        os.close(descriptor)


def test_a_failed_flush_covers_nobody(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outcomes: list[OSError | None] = [OSError(5, "Input/output error"), None]

    def flaky(descriptor: int) -> bool:
        outcome = outcomes.pop(0)
        if outcome is not None:
            raise outcome
        return True

    monkeypatch.setattr(durable, "syncfs", flaky)
    shared = durable._SharedSyncfs()
    descriptor = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(OSError, match="Input/output error"):
            shared.flush(descriptor)
        # The next caller flushes again rather than trusting the failed call.
        assert shared.flush(descriptor) is True
        assert outcomes == []
    finally:
        os.close(descriptor)
