"""The plugin host's transport: line framing with a size cap, the stderr ring buffer,
deadlines, and killing + reaping the whole process group on every path."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from check.check_plugins import assert_not_running, assert_reaped, process_state
from nexo_pkg.check.host import (
    _QUEUE_LIMIT_BYTES,
    MAX_LINE_BYTES,
    MAX_STDERR_LINE_BYTES,
    STDERR_TAIL_LINES,
    PluginProcess,
    StdoutEvent,
)


def spawn(
    code: str, tmp_path: Path, *, max_frame_bytes: int = MAX_LINE_BYTES, trim_stderr: bool = False
) -> PluginProcess:
    return PluginProcess(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=dict(os.environ),
        max_frame_bytes=max_frame_bytes,
        trim_stderr=trim_stderr,
    )


def events(process: PluginProcess, *, seconds: float = 10.0) -> list[StdoutEvent]:
    """Every stdout event up to and including end of stream."""
    deadline = time.monotonic() + seconds
    collected: list[StdoutEvent] = []
    while True:
        event = process.next_stdout_event(deadline=deadline)
        assert event is not None, "timed out waiting for stdout"
        collected.append(event)
        if event.kind == "eof":
            return collected


def test_lines_are_split_across_writes_and_crlf_and_unterminated_tail_handled(
    tmp_path: Path,
) -> None:
    code = (
        "import os, time\n"
        "os.write(1, b'one\\ntw')\n"
        "time.sleep(0.05)\n"
        "os.write(1, b'o\\r\\n\\nthree')\n"
    )
    with spawn(code, tmp_path) as process:
        got = events(process)
    assert [(event.kind, event.data) for event in got] == [
        ("line", b"one"),
        ("line", b"two"),
        ("line", b""),
        ("line", b"three"),
        ("eof", b""),
    ]


def test_over_long_line_is_dropped_without_buffering_and_reading_goes_on(
    tmp_path: Path,
) -> None:
    code = "import sys\nsys.stdout.buffer.write(b'y' * 5000 + b'\\n' + b'after\\n' + b'z' * 3000)\n"
    with spawn(code, tmp_path, max_frame_bytes=1024) as process:
        got = events(process)
    assert [event.kind for event in got] == ["oversize", "line", "oversize", "eof"]
    assert got[0].size >= 5000
    assert got[1].data == b"after"
    assert len(process._stdout_buffer) == 0


def test_unread_stdout_is_bounded_and_nothing_is_lost(tmp_path: Path) -> None:
    code = (
        "import sys, time\n"
        "for _ in range(12_000): sys.stdout.buffer.write(b'z' * 999 + b'\\n')\n"
        "sys.stdout.flush()\n"
    )
    with spawn(code, tmp_path) as process:
        # The plugin never reads stdin, so this write waits out its deadline while the
        # host keeps reading stdout: what it queues must stay under the cap.
        assert process.send(b"x" * (4 << 20), deadline=time.monotonic() + 1.0) is False
        assert process._queued_bytes <= _QUEUE_LIMIT_BYTES + 64 * 1024
        got = events(process)
    assert [event.kind for event in got] == ["line"] * 12_000 + ["eof"]
    assert all(len(event.data) == 999 for event in got[:-1])


def test_stderr_keeps_the_last_lines_and_cuts_endless_ones(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "for i in range(120): sys.stderr.write(f'line {i}\\n')\n"
        f"sys.stderr.write('e' * {MAX_STDERR_LINE_BYTES * 3} + '\\n')\n"
        "sys.stderr.write('no newline at the end')\n"
    )
    with spawn(code, tmp_path) as process:
        events(process)
        process.wait_exit(10)
    tail = list(process.stderr_tail)
    assert len(tail) == STDERR_TAIL_LINES == 50
    assert tail[0] == "line 72"
    assert tail[-3] == "line 119"
    assert tail[-2] == "e" * MAX_STDERR_LINE_BYTES + " [...]"
    assert tail[-1] == "no newline at the end"


@pytest.mark.parametrize(
    ("trim", "tail"), [(False, ["  a\u3000", " \t ", "b"]), (True, ["a", "b"])]
)
def test_stderr_lines_are_trimmed_only_for_the_plugin_host(
    tmp_path: Path, trim: bool, tail: list[str]
) -> None:
    """The plugin host trims each stderr line and skips the blank ones (subprocess.rs:314-317);
    the microapp host logs each as written (stdio.rs:930-944)."""
    code = "import sys; sys.stderr.write('  a\\u3000\\n \\t \\n\\nb\\n')"
    with spawn(code, tmp_path, trim_stderr=trim) as process:
        events(process)
        process.drain(0.5)
        assert list(process.stderr_tail) == tail


def test_stderr_is_judged_utf8_line_by_line_however_long(tmp_path: Path) -> None:
    """A character split across reads or past the tail's cut is still UTF-8; a line that is
    not ends the reading, as the daemon's `lines()` reader ends (subprocess.rs:294-310)."""
    code = (
        "import sys, time\n"
        "sys.stderr.buffer.write(b'a' + '\u00e9'.encode() * 5000 + b'\\n' + b'\\xc3')\n"
        "sys.stderr.flush(); time.sleep(0.3)\n"
        "sys.stderr.buffer.write(b'\\xa9 fine\\n' + b'x' * 5000 + b'\\xff\\nlost\\n')\n"
    )
    with spawn(code, tmp_path) as process:
        events(process)
        process.wait_exit(10)
    assert process.stderr_stopped == b"x" * 80
    tail = list(process.stderr_tail)
    assert tail[0].startswith("a\u00e9")
    assert tail[0].endswith(" [...]")
    assert tail[1:] == ["\u00e9 fine", "x" * MAX_STDERR_LINE_BYTES + " [...]"]


@pytest.mark.posix
def test_deadline_returns_none_while_the_plugin_is_silent(tmp_path: Path) -> None:
    with spawn("import time; time.sleep(60)", tmp_path) as process:
        started = time.monotonic()
        assert process.next_stdout_event(deadline=started + 0.2) is None
        assert time.monotonic() - started >= 0.2
        pid = process.pid
    assert_reaped(pid)
    assert process.killed
    assert process.exit_code == -9


@pytest.mark.posix
def test_exit_is_seen_without_reaping_and_close_reaps(tmp_path: Path) -> None:
    with spawn("raise SystemExit(7)", tmp_path) as process:
        assert process.wait_exit(10)
        assert process.peek_exit_code() == 7
        # Exited but not reaped yet: the pid (and so the process group id) stays reserved.
        assert process_state(process.pid) == "Z"
    assert_reaped(process.pid)
    assert process.exit_code == 7
    assert not process.killed


@pytest.mark.posix
def test_writing_to_an_exited_plugin_reports_failure(tmp_path: Path) -> None:
    with spawn("pass", tmp_path) as process:
        assert process.wait_exit(10)
        assert process.send(b"x" * 200_000, deadline=time.monotonic() + 5) is False


def test_write_that_cannot_complete_gives_up_at_the_deadline(tmp_path: Path) -> None:
    # The plugin never reads stdin: a write bigger than the pipe buffer cannot finish.
    with spawn("import time; time.sleep(60)", tmp_path) as process:
        started = time.monotonic()
        assert process.send(b"x" * (4 << 20), deadline=started + 0.3) is False
        assert time.monotonic() - started < 5


@pytest.mark.posix
def test_close_kills_the_whole_process_group(tmp_path: Path) -> None:
    code = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen(['sleep', '60'])\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    with spawn(code, tmp_path) as process:
        event = process.next_stdout_event(deadline=time.monotonic() + 10)
        assert event is not None
        assert event.kind == "line"
        grandchild = int(event.data)
        pid = process.pid
    assert_reaped(pid)
    assert_not_running(grandchild)


def test_exception_inside_the_block_still_kills_and_reaps(tmp_path: Path) -> None:
    pids: list[int] = []

    def interrupted_session() -> None:
        with spawn("import time; time.sleep(60)", tmp_path) as process:
            pids.append(process.pid)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted_session()
    assert_reaped(pids[0])


@pytest.mark.posix
def test_close_is_idempotent(tmp_path: Path) -> None:
    process = spawn("import time; time.sleep(60)", tmp_path)
    process.close()
    process.close()
    assert process.exit_code == -9
    assert_reaped(process.pid)


@pytest.mark.posix
def test_unrunnable_program_raises_oserror(tmp_path: Path) -> None:
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(0o644)
    with pytest.raises(PermissionError):
        PluginProcess([str(script)], cwd=tmp_path, env=dict(os.environ))
