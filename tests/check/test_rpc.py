"""The frame loop both hosts share: one request, its reply among other lines, the deadline
held across frames, lines over the cap, a reader that stops, and a child that goes away.

The child is a real Python process; the host here is the smallest reader (a JSON line with
the pending id is the reply, a line that is not UTF-8 stops it), so what is tested is the
loop, not either host's rules (those are ``test_check_session.py`` and
``test_check_microapp.py``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from nexo_pkg.check.host import PluginProcess
from nexo_pkg.check.rpc import FrameLoop, NoReply, Pending, Reply

REQUEST = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}}

#: A child reading the request and replying with its method, after ``{before}``.
REPLIER = (
    "import json, os, sys, time\n"
    "request = json.loads(sys.stdin.readline())\n"
    "{before}\n"
    "reply = {{'jsonrpc': '2.0', 'id': request['id'], 'result': request['method']}}\n"
    "sys.stdout.write(json.dumps(reply) + '\\n')\n"
    "sys.stdout.flush()\n"
    "time.sleep(30)\n"
)


class Reader(FrameLoop):
    """The smallest host: it records what the loop hands it."""

    def __init__(self, process: PluginProcess) -> None:
        super().__init__(process, timeout_seconds=10.0)
        self.lines: list[bytes] = []
        self.oversized: list[int] = []

    def read_line(self, line: bytes, pending: Pending) -> Reply | None:
        self.lines.append(line)
        try:
            message = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError:
            self.stopped = NoReply("reader", "stopped at a line that is not UTF-8")
            return None
        except ValueError:
            return None
        if isinstance(message, dict) and message.get("id") == pending.request_id:
            return pending.reply(message.get("result"), message.get("error"))
        return None

    def oversize(self, size: int) -> None:
        self.oversized.append(size)

    def gone(self, code: int | None, *, sending: bool) -> NoReply:
        return NoReply("gone", f"code={code} sending={sending}")


def child(tmp_path: Path, code: str, *, max_frame_bytes: int = 1 << 20) -> PluginProcess:
    return PluginProcess(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=dict(os.environ),
        max_frame_bytes=max_frame_bytes,
    )


def ask(
    tmp_path: Path, code: str, *, timeout: float = 10.0, max_frame_bytes: int = 1 << 20
) -> tuple[Reader, Reply | NoReply]:
    """Run ``code`` as the child and make one request of it: the reader and the answer."""
    with child(tmp_path, code, max_frame_bytes=max_frame_bytes) as process:
        reader = Reader(process)
        return reader, reader.exchange(REQUEST, timeout=timeout)


def test_the_reply_is_taken_from_among_other_lines(tmp_path: Path) -> None:
    before = (
        "print('stray text')\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': 99, 'result': 'another'}))\n"
        "sys.stdout.flush()"
    )
    reader, reply = ask(tmp_path, REPLIER.format(before=before))
    assert isinstance(reply, Reply)
    assert (reply.result, reply.error) == ("ping", None)
    assert reply.elapsed_ms >= 0
    assert reader.lines[:2] == [b"stray text", b'{"jsonrpc": "2.0", "id": 99, "result": "another"}']
    assert len(reader.lines) == 3
    assert reader.oversized == []


def test_a_line_over_the_cap_is_dropped_unread_and_the_reply_after_it_still_arrives(
    tmp_path: Path,
) -> None:
    before = "sys.stdout.write('x' * 5000 + '\\n')"
    reader, reply = ask(tmp_path, REPLIER.format(before=before), max_frame_bytes=1024)
    assert isinstance(reply, Reply)
    assert reply.result == "ping"
    assert len(reader.oversized) == 1
    assert 1024 < reader.oversized[0] <= 5000
    # The over-long line never reached the host's reader: only the reply did.
    assert len(reader.lines) == 1


def test_a_reply_over_the_cap_times_out_naming_the_line_dropped_meanwhile(
    tmp_path: Path,
) -> None:
    """The daemon reads lines of any length; the check keeps a memory cap. A reply over it is
    never judged, and the timeout says so instead of claiming the plugin never answered."""
    code = (
        "import json, sys, time\n"
        "request = json.loads(sys.stdin.readline())\n"
        "reply = {'jsonrpc': '2.0', 'id': request['id'], 'result': 'p' * 5000}\n"
        "sys.stdout.write(json.dumps(reply) + '\\n')\n"
        "sys.stdout.flush()\n"
        "time.sleep(30)\n"
    )
    reader, reply = ask(tmp_path, code, timeout=1.0, max_frame_bytes=1024)
    assert isinstance(reply, NoReply)
    assert reply.reason == "timeout"
    assert reply.detail.startswith("no reply within 1000 ms; a stdout line of at least ")
    assert reply.detail.endswith(
        "bytes, over the check's memory cap, was dropped unread meanwhile (if it was the "
        "reply, the daemon reads it)"
    )
    assert len(reader.oversized) == 1
    assert reader.lines == []


def test_a_line_split_across_writes_is_read_as_one_line(tmp_path: Path) -> None:
    code = (
        "import os, sys, time\n"
        "sys.stdin.readline()\n"
        'os.write(1, b\'{"jsonrpc": "2.0", "id"\')\n'
        "time.sleep(0.2)\n"
        'os.write(1, b\': 1, "result": "whole"}\\n\')\n'
        "time.sleep(30)\n"
    )
    reader, reply = ask(tmp_path, code)
    assert isinstance(reply, Reply)
    assert reply.result == "whole"
    assert reader.lines == [b'{"jsonrpc": "2.0", "id": 1, "result": "whole"}']


def test_a_reader_that_stops_ends_this_request_and_every_later_one_unsent(
    tmp_path: Path,
) -> None:
    code = (
        "import json, os, sys\n"
        "for line in sys.stdin:\n"
        "    sys.stderr.write('received\\n')\n"
        "    sys.stderr.flush()\n"
        "    os.write(1, b'\\xff\\xfe not utf-8\\n')\n"
        '    os.write(1, b\'{"jsonrpc": "2.0", "id": 1, "result": "late"}\\n\')\n'
    )
    with child(tmp_path, code) as process:
        reader = Reader(process)
        first = reader.exchange(REQUEST, timeout=10.0)
        second = reader.exchange({**REQUEST, "id": 2}, timeout=10.0)
        process.close_stdin()
        assert process.wait_exit(10.0)
        process.drain(0.2)
        stderr = list(process.stderr_tail)
    stopped = NoReply("reader", "stopped at a line that is not UTF-8")
    assert first == stopped
    assert second == stopped
    # The reply after the bad line was never read, and the second request never sent.
    assert reader.lines == [b"\xff\xfe not utf-8"]
    assert stderr == ["received"]


def test_a_child_that_exits_mid_frame_hands_over_the_partial_line_then_is_gone(
    tmp_path: Path,
) -> None:
    code = (
        "import os, sys\n"
        "sys.stdin.readline()\n"
        'os.write(1, b\'{"jsonrpc": "2.0", "id": 1, "res\')\n'
        "sys.exit(3)\n"
    )
    reader, answer = ask(tmp_path, code)
    assert answer == NoReply("gone", "code=3 sending=False")
    assert reader.lines == [b'{"jsonrpc": "2.0", "id": 1, "res']


def test_a_child_that_closed_its_stdin_is_gone_before_the_request_is_sent(
    tmp_path: Path,
) -> None:
    code = "import os, time\nos.close(0)\nos.write(1, b'closed\\n')\ntime.sleep(30)\n"
    with child(tmp_path, code) as process:
        ready = process.next_stdout_event(deadline=time.monotonic() + 10.0)
        assert ready is not None
        assert ready.data == b"closed"
        reader = Reader(process)
        answer = reader.exchange(REQUEST, timeout=2.0)
    assert answer == NoReply("gone", "code=None sending=True")
    assert reader.lines == []


@pytest.mark.parametrize(
    "after_request",
    [
        pytest.param("time.sleep(30)", id="hung"),
        pytest.param(
            "while True:\n    print(json.dumps({'jsonrpc': '2.0', 'method': 'noise'}), flush=True)",
            id="flooding",
        ),
    ],
)
def test_the_deadline_holds_for_a_hung_child_and_across_a_flood_of_other_frames(
    tmp_path: Path, after_request: str
) -> None:
    code = f"import json, sys, time\nsys.stdin.readline()\n{after_request}\n"
    with child(tmp_path, code) as process:
        reader = Reader(process)
        started = time.monotonic()
        answer = reader.exchange(REQUEST, timeout=0.3)
        waited = time.monotonic() - started
    assert answer == NoReply("timeout", "no reply within 300 ms")
    assert waited >= 0.3
    if after_request.startswith("while"):
        assert reader.lines
        assert set(reader.lines) == {b'{"jsonrpc": "2.0", "method": "noise"}'}
    else:
        assert reader.lines == []
