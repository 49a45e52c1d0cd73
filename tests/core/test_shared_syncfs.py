"""Threads flushing one file system at once share a ``syncfs``, and only when it is safe: a
flush that started before a thread's writes were done never stands in for that thread's."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from nexo_pkg.core import durable

linux_only = pytest.mark.skipif(
    sys.platform != "linux", reason="reads the path of a descriptor from /proc"
)


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


def test_a_write_back_error_sends_the_file_system_to_fsyncs_file_by_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """syncfs reports a write-back error of the file system once, to whichever descriptor
    asks first, whatever tree lost the data: neither the caller it reached nor the threads
    whose trees it may have been trust syncfs on that file system again (the next one would
    say nothing); each flushes its own tree file by file, whose fsyncs report each file's
    own error to the tree that wrote it."""
    calls: list[int] = []

    def failing(descriptor: int) -> bool:
        calls.append(descriptor)
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(durable, "syncfs", failing)
    shared = durable._SharedSyncfs()
    descriptor = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert shared.flush(descriptor) is False
        # Later callers (a thread that finished its writes meanwhile, the next plugin) are
        # told to fsync file by file too, without a syncfs that would hide the error.
        monkeypatch.setattr(durable, "syncfs", lambda descriptor: True)
        assert [shared.flush(descriptor) for _ in range(2)] == [False, False]
        assert len(calls) == 1
    finally:
        os.close(descriptor)


@linux_only
def test_a_tree_whose_syncfs_failed_is_fsynced_file_by_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = tmp_path / "tree"
    (tree / "lib").mkdir(parents=True)
    for index in range(5):
        (tree / "lib" / f"f{index}.py").write_text(f"X = {index}\n")
    synced: list[str] = []
    real_fsync = os.fsync

    def counting(descriptor: int) -> None:
        synced.append(str(Path(f"/proc/self/fd/{descriptor}").readlink()))
        real_fsync(descriptor)

    def failing(descriptor: int) -> bool:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(durable, "_SHARED", durable._SharedSyncfs())
    monkeypatch.setattr(durable, "syncfs", failing)
    monkeypatch.setattr(os, "fsync", counting)
    durable.sync_tree(tree)
    expected = {str(path) for path in tree.rglob("*")} | {str(tree)}
    assert set(synced) == expected


@linux_only
def test_a_file_whose_write_back_failed_fails_its_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file-by-file flush reports the error of the file that lost its data."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "lost.py").write_text("X = 1\n")
    real_fsync = os.fsync

    def failing_for_lost(descriptor: int) -> None:
        if str(Path(f"/proc/self/fd/{descriptor}").readlink()).endswith("lost.py"):
            raise OSError(5, "Input/output error")
        real_fsync(descriptor)

    monkeypatch.setattr(durable, "_SHARED", durable._SharedSyncfs())
    monkeypatch.setattr(durable, "syncfs", lambda descriptor: False)
    monkeypatch.setattr(os, "fsync", failing_for_lost)
    with pytest.raises(OSError, match="Input/output error"):
        durable.sync_tree(tree)
