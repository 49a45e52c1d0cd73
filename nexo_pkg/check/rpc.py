"""The JSON-RPC frame loop both of ``check``'s hosts hold with their child.

One request at a time: send its frame, then read stdout line by line until the reply, the
deadline (held across frames: a child flooding stdout with other frames never keeps the host
waiting longer) or the end of the stream. What a line means is the host's business: the plugin
host (:mod:`~nexo_pkg.check.checks`) and the microapp host (:mod:`~nexo_pkg.check.microapp`)
read frames by different rules, as the daemon's two hosts do, and each says why a child that
went away gave no reply.
"""

from __future__ import annotations

import itertools
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from nexo_pkg.check.host import PluginProcess
from nexo_pkg.check.report import ProblemTally
from nexo_pkg.check.text import encode_frame

#: Per-step reply deadline, like the daemon's ``NEXO_PLUGIN_INIT_TIMEOUT_MS`` default.
DEFAULT_TIMEOUT_MS = 5000

#: The daemon's setting of how long its plugin host waits for ``initialize``.
INIT_TIMEOUT_ENV = "NEXO_PLUGIN_INIT_TIMEOUT_MS"

# What Rust's `u64::from_str` takes: an optional `+`, then ASCII digits (no spaces, no sign).
_RUST_U64 = re.compile(r"\+?[0-9]+")


def plugin_timeout_ms() -> int:
    """A plugin's reply deadline when ``--timeout-ms`` is not given: the daemon's
    ``NEXO_PLUGIN_INIT_TIMEOUT_MS`` when it parses as the daemon parses it (a Rust ``u64``;
    ``subprocess.rs`` 516-521 at eec3f33), else :data:`DEFAULT_TIMEOUT_MS`, as there."""
    raw = os.environ.get(INIT_TIMEOUT_ENV, "")
    if _RUST_U64.fullmatch(raw) is None or int(raw) >= 2**64:
        return DEFAULT_TIMEOUT_MS
    return int(raw)


@dataclass(frozen=True)
class NoReply:
    """Why a request got no answer: a ``reason`` (``timeout``, ``exited``, ...) and the
    ``detail`` a report shows."""

    reason: str
    detail: str


@dataclass(frozen=True)
class Reply:
    """The frame a host took as the answer to its pending request, read by its rules."""

    result: Any
    error: dict[str, Any] | None
    elapsed_ms: float


@dataclass(frozen=True)
class Pending:
    """The request waiting for its reply."""

    request_id: int
    method: str
    started: float
    deadline: float

    def reply(self, result: Any, error: dict[str, Any] | None) -> Reply:
        return Reply(result, error, (time.monotonic() - self.started) * 1000)


class FrameLoop:
    """A conversation with one child over stdio; each host subclasses it with its rules.

    :attr:`stopped` is the :class:`NoReply` of every request once the host's reader reads
    nothing more (the daemon's stops at a line that is not UTF-8); ``_frames`` tallies the
    frame problems the host reports at the end; ``_ids`` numbers the requests from 1.
    """

    def __init__(self, process: PluginProcess, timeout_seconds: float) -> None:
        self.process = process
        self.timeout_seconds = timeout_seconds
        self.stopped: NoReply | None = None
        self._frames = ProblemTally()
        self._ids: Iterator[int] = itertools.count(1)

    def exchange(self, frame: dict[str, Any], *, timeout: float) -> Reply | NoReply:
        """Send the request ``frame`` and judge every stdout line (:meth:`read_line`,
        :meth:`oversize`) until its reply, ``timeout`` seconds, or the end of the stream."""
        started = time.monotonic()
        pending = Pending(frame["id"], frame["method"], started, started + timeout)
        if self.stopped is not None:
            return self.stopped
        data = self.encode(frame)
        if not self.process.send(data, deadline=pending.deadline):
            if self.process.unsent:
                # The child stopped reading its stdin and the pipe is full: the daemon's
                # writer waits on it, and the call times out as any unanswered one.
                return NoReply(
                    "timeout",
                    f"no reply within {round(timeout * 1000)} ms: the child stopped reading "
                    f"its stdin ({self.process.unsent} of the request's {len(data)} bytes could "
                    "not be written)",
                )
            return self.gone(self.process.exit_code_by(pending.deadline), sending=True)
        dropped = 0  # the size of a line over the cap dropped unread while this request waited
        while True:
            event = self.process.await_stdout(pending.deadline)
            if event is None:
                waited = f"no reply within {round(timeout * 1000)} ms"
                if dropped:
                    # It may have been the reply: the daemon reads lines of any length.
                    waited += (
                        f"; a stdout line of at least {dropped} bytes, over the check's memory "
                        "cap, was dropped unread meanwhile (if it was the reply, the daemon "
                        "reads it)"
                    )
                return NoReply("timeout", waited)
            if event.kind == "eof":
                return self.gone(self.process.exit_code_by(pending.deadline), sending=False)
            if event.kind == "oversize":
                self.oversize(event.size)
                dropped = max(dropped, event.size)
                continue
            reply = self.read_line(event.data, pending)
            if self.stopped is not None:
                return self.stopped
            if reply is not None:
                return reply

    def encode(self, frame: dict[str, Any]) -> bytes:
        """``frame`` as the host writes it on the child's stdin."""
        return encode_frame(frame)

    def read_line(self, line: bytes, pending: Pending) -> Reply | None:
        """Judge one stdout line (without its newline): the reply to ``pending`` or None."""
        raise NotImplementedError

    def oversize(self, size: int) -> None:
        """Note a stdout line of at least ``size`` bytes, over the cap and dropped unread."""
        raise NotImplementedError

    def gone(self, code: int | None, *, sending: bool) -> NoReply:
        """Why the child closed a pipe (stdin when ``sending``): it exited with ``code``, or
        is still running (None)."""
        raise NotImplementedError
