"""Bounds for reading an HTTP answer: one total deadline per request, enforced by a watchdog
that cuts the connection, and JSON documents capped on the wire and after content decoding.

Shared by every client that reads network answers (GitHub releases, OCI registries), so a
hostile server meets the same limits whichever source it stands in for.
"""

from __future__ import annotations

import heapq
import json
import math
import os
import re
import socket
import sys
import threading
import time
import weakref
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any, Protocol

from nexo_pkg.core.errors import NexoError, UsageError, exception_line
from nexo_pkg.core.terminal import shown

if TYPE_CHECKING:
    import httpx

TIMEOUT_ENV = "NEXO_HTTP_TIMEOUT"
# Total time one request may take, every attempt and pause included (--timeout).
DEFAULT_TIMEOUT_SECONDS = 300.0
# An attempt without an answer this long is noted on stderr (host, attempt, time left).
SLOW_NOTICE_SECONDS = 3.0
# A release document is a few kilobytes; a hundred of them with long notes a few megabytes.
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
# Only encodings that can be inflated under a cap are asked for (httpx would add br and zstd
# whenever their packages happen to be installed).
DOCUMENT_ACCEPT_ENCODING = "gzip, deflate"


def checked_timeout(value: float, source: str = "--timeout") -> float:
    """``value`` if it is a usable number of seconds; raises :class:`UsageError` naming
    ``source`` (the flag or variable it came from)."""
    if not math.isfinite(value) or value <= 0:
        raise UsageError(f"{source} {value:g} is not a positive number of seconds")
    return value


def timeout_from_env() -> float:
    """``NEXO_HTTP_TIMEOUT`` in seconds, else the default (300 s)."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_SECONDS
    try:
        value = float(raw)
    except ValueError as exc:
        raise UsageError(f"{TIMEOUT_ENV}={shown(raw)} is not a number of seconds") from exc
    return checked_timeout(value, TIMEOUT_ENV)


class Deadline:
    """The moment by which one request (or, with another ``scope``, a whole command's network
    work), every attempt and pause included, must be done."""

    def __init__(self, seconds: float, scope: str = "one request") -> None:
        self.seconds = seconds
        self.scope = scope
        self.expires = time.monotonic() + seconds

    def within(self, outer: Deadline | None) -> Deadline:
        """This deadline, or ``outer`` when that one passes first."""
        return outer if outer is not None and outer.expires < self.expires else self

    def remaining(self) -> float:
        return self.expires - time.monotonic()

    def expired(self) -> bool:
        return self.remaining() <= 0

    def error(self, what: str, state: str) -> NexoError:
        return self.error_after(f"{what}: {state}")

    def error_after(self, message: str) -> NexoError:
        return NexoError(
            f"{message}; gave up at the {self.seconds:g} s deadline for {self.scope} (raise "
            f"it with --timeout or {TIMEOUT_ENV})",
            kind="network",
            details={"timeout_seconds": self.seconds},
        )


# Set in a trace event's ``info`` by a transport that reports every reuse of a pooled
# connection (``connection.reuse``), so the socket's owner deadline stays true.
REUSE_REPORTED = "nexo.reuse_reported"


class SocketWatch:
    """Remembers every socket a client opens (an httpcore ``trace`` hook), so a watchdog can
    cut whichever one a read is blocked on when the request's deadline passes."""

    def __init__(self) -> None:
        self._sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        # The deadline of the request each socket carries now (threads of one command send
        # requests side by side): one request's deadline cuts only its own connections.
        self._owners: weakref.WeakKeyDictionary[socket.socket, Deadline] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()
        # The deadlines of the watchdog blocks under way.
        self._watched: list[Deadline] = []
        # Set by :meth:`stop`: every socket is cut, those connected later too.
        self._stopped = False

    def note(self, event: str, info: dict[str, Any], deadline: Deadline | None = None) -> None:
        """httpcore trace hook: remember each socket as soon as it is connected (or taken
        again from the pool), with the ``deadline`` of the request it carries. One connected
        once that deadline has passed (the transport sending a request once more after the
        cut ended its connection) is cut at once: nothing goes out on it. The deadline is
        kept as the socket's owner only when ``info`` says the transport reports reuse."""
        if not event.endswith((".connect_tcp.complete", ".start_tls.complete", ".reuse")):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            with self._lock:
                self._sockets.add(sock)
                # Only a transport that reports each reuse (``REUSE_REPORTED``, ours) keeps an
                # owner true: httpx's own pool (through a proxy) hands a connection to the next
                # request unannounced, so its sockets are cut by any deadline that passes.
                if deadline is not None and info.get(REUSE_REPORTED):
                    self._owners[sock] = deadline
                    late = self._stopped or deadline.expired()
                else:
                    late = self._stopped or any(watched.expired() for watched in self._watched)
            if late:
                _shut(sock)

    def cut(self) -> None:
        """Shut down every socket whose request's deadline has passed (every socket of a
        request sent without one), which wakes a read blocked on it; the requests other
        threads have under way keep their connections."""
        with self._lock:
            sockets = [
                sock
                for sock in self._sockets
                if sock not in self._owners or self._owners[sock].expired()
            ]
        for sock in sockets:
            _shut(sock)

    def stop(self) -> None:
        """Cut every socket, now and whenever one is connected from now on."""
        with self._lock:
            self._stopped = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    @contextmanager
    def watchdog(self, deadline: Deadline) -> Iterator[None]:
        """Cut the connections when ``deadline`` passes inside this block, so neither a server
        that drips its headers or body nor a stalled read outlives it."""
        with self._lock:
            self._watched.append(deadline)
        try:
            with after(max(0.0, deadline.remaining()), self.cut):
                yield
        finally:
            with self._lock:
                self._watched.remove(deadline)


def _shut(sock: socket.socket) -> None:
    # socket.socket's own shutdown: for TLS it leaves the SSL object alone, so the reading
    # thread sees an ordinary end of stream.
    with suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


@contextmanager
def after(seconds: float, action: Callable[[], object]) -> Iterator[None]:
    """Run ``action`` on a daemon thread if the block is still running ``seconds`` from now.

    One thread of the process waits for every such moment (:class:`_Alarms`): a thread
    started and stopped for each request's deadline and slow-answer notice cost more than
    the request itself on a loopback connection (two per lookup of ``outdated``)."""
    alarm = _ALARMS.add(seconds, action)
    try:
        yield
    finally:
        _ALARMS.cancel(alarm)


class _Alarm:
    __slots__ = ("action", "done", "due")

    def __init__(self, due: float, action: Callable[[], object]) -> None:
        self.due = due
        self.action = action
        self.done = False  # cancelled, or its action started


class _Alarms:
    """The moments of the :func:`after` blocks under way, in one heap, and the daemon thread
    that runs each action when its moment comes (unless its block ended first). A block that
    ends only marks its alarm done; the thread drops done alarms as they come to the top."""

    def __init__(self) -> None:
        self._ready = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, _Alarm]] = []
        self._order = 0
        self._thread: threading.Thread | None = None

    def add(self, seconds: float, action: Callable[[], object]) -> _Alarm:
        alarm = _Alarm(time.monotonic() + max(0.0, seconds), action)
        with self._ready:
            self._order += 1
            earliest = not self._heap or alarm.due < self._heap[0][0]
            heapq.heappush(self._heap, (alarm.due, self._order, alarm))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="nexo-alarms", daemon=True)
                self._thread.start()
            elif earliest:
                self._ready.notify()
        return alarm

    def cancel(self, alarm: _Alarm) -> None:
        with self._ready:
            alarm.done = True

    def _run(self) -> None:
        with self._ready:
            while True:
                heap = self._heap
                while heap and heap[0][2].done:
                    heapq.heappop(heap)
                if not heap:
                    self._ready.wait()
                    continue
                wait = heap[0][0] - time.monotonic()
                if wait > 0:
                    # (A finite --timeout may be longer than a lock can wait: wake and look.)
                    self._ready.wait(min(wait, threading.TIMEOUT_MAX))
                    continue
                alarm = heapq.heappop(heap)[2]
                alarm.done = True
                self._ready.release()
                try:
                    alarm.action()
                except Exception:  # noqa: BLE001 - as threading.Timer: reported, not fatal
                    threading.excepthook(
                        threading.ExceptHookArgs((*sys.exc_info(), threading.current_thread()))
                    )
                finally:
                    self._ready.acquire()

    def reset_after_fork(self) -> None:
        """In a forked child: no thread waits there, and the lock may have been held."""
        self._ready = threading.Condition(threading.Lock())
        self._heap = []
        self._thread = None


_ALARMS = _Alarms()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_ALARMS.reset_after_fork)


class _Decoder(Protocol):
    """What :func:`decoded_document` needs of a zlib decompressor."""

    @property
    def unconsumed_tail(self) -> bytes: ...

    @property
    def eof(self) -> bool: ...

    def decompress(self, data: bytes, max_length: int, /) -> bytes: ...

    def flush(self) -> bytes: ...


_LENGTH = re.compile(r"^\s*([0-9]{1,20})\s*$")


def declared_length(response: httpx.Response) -> int | None:
    match = _LENGTH.match(response.headers.get("content-length", ""))
    return int(match.group(1)) if match else None


def decoded_document(
    chunks: Iterator[bytes],
    encoding: str,
    what: str,
    *,
    declared: int | None,
    kind: str = "network",
    limit: int = MAX_DOCUMENT_BYTES,
) -> bytes:
    """Join ``chunks``, inflating gzip or deflate, never holding more than ``limit`` bytes of
    either form; raises ``kind`` past that, for another encoding, or for a stream that does
    not decode."""
    too_large = NexoError(
        f"{what}: the answer is larger than {_size(limit)}; refusing it",
        kind=kind,
        details={"limit_bytes": limit},
    )
    if declared is not None and declared > limit:
        raise too_large
    name = encoding.strip().lower()
    decoder: _Decoder | None
    if name in {"", "identity"}:
        decoder = None
    elif name in {"gzip", "x-gzip"}:
        decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif name == "deflate":
        decoder = _DeflateDecoder()
    else:
        raise NexoError(
            f"{what}: the answer is in an unsupported content encoding {shown(encoding)}",
            kind=kind,
        )
    received = 0
    body = bytearray()
    try:
        for chunk in chunks:
            received += len(chunk)
            if received > limit:
                raise too_large
            if decoder is None:
                body += chunk
                continue
            pending = chunk
            while pending:
                # Never more than one byte past the cap, however much the input inflates.
                body += decoder.decompress(pending, limit + 1 - len(body))
                if len(body) > limit:
                    raise too_large
                pending = decoder.unconsumed_tail
        if decoder is not None:
            body += decoder.flush()
            if not decoder.eof:
                raise zlib.error("the stream is cut short")
    except zlib.error as exc:
        raise NexoError(f"{what}: the {name} answer does not decode ({exc})", kind=kind) from exc
    if len(body) > limit:
        raise too_large
    return bytes(body)


def _size(limit: int) -> str:
    mib = 1024 * 1024
    return f"{limit // mib} MiB" if limit % mib == 0 else f"{limit} bytes"


def parse_json(body: bytes, what: str, *, kind: str = "network") -> Any:
    """``body`` as JSON; raises ``kind`` when it is not JSON or nested past the parser's
    recursion limit (never a ``RecursionError``)."""
    try:
        return json.loads(body)
    except RecursionError as exc:
        raise NexoError(f"{what}: the answer is nested too deeply", kind=kind) from exc
    except ValueError as exc:
        reason = exception_line(exc)[:200] if str(exc) else type(exc).__name__
        raise NexoError(f"{what}: the answer is not JSON ({reason})", kind=kind) from exc


class _DeflateDecoder:
    """HTTP "deflate": zlib-wrapped as the RFC says, or raw deflate as some servers send."""

    def __init__(self) -> None:
        self._inner = zlib.decompressobj()
        self._started = False

    def decompress(self, data: bytes, max_length: int) -> bytes:
        if not self._started:
            self._started = True
            try:
                return self._inner.decompress(data, max_length)
            except zlib.error:
                self._inner = zlib.decompressobj(-zlib.MAX_WBITS)
        return self._inner.decompress(data, max_length)

    @property
    def unconsumed_tail(self) -> bytes:
        return self._inner.unconsumed_tail

    @property
    def eof(self) -> bool:
        return self._inner.eof

    def flush(self) -> bytes:
        return self._inner.flush()
