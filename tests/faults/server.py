"""The loopback GitHub server with the faults the shared one does not have.

:class:`FaultyGitHubServer` extends :class:`support.github_server.GitHubServer` with:

- ``reset_at(fraction)``: send the headers and the first ``fraction`` of the body, then reset
  the TCP connection (``SO_LINGER`` 0, so the client sees RST rather than a clean FIN);
- ``redirect_loop()``: every API request answers 302 to itself, forever;
- ``redirect_releases_to(url)``: release lookups answer 302 to another origin;
- ``override_release_body(body, headers)``: serve these bytes (malformed JSON, a 50 MB
  document, a gzip-encoded one) instead of the real release JSON;
- ``stall_at(fraction, seconds)``: send ``fraction`` of the body, go silent for ``seconds``,
  then send the rest (a server that hangs mid-transfer);
- ``throttle(path_contains, bytes_per_second)``: stream matching bodies slowly, so a test can
  interrupt a download (or whatever follows it) at a chosen moment;
- ``drip_headers(path_contains, seconds_per_byte)``: answer matching requests with a status line
  and then an endless header, one byte at a time (a server that never finishes its headers).
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler

import pytest
from support.github_server import BlobServer, Fault, GitHubServer


@dataclass
class ResetFault:
    """Reset the connection after ``fraction`` of the body, ``times`` times (None: always)."""

    fraction: float
    path_contains: str
    times: int | None


class FaultyGitHubServer(GitHubServer):
    """See the module docstring."""

    def __init__(self) -> None:
        super().__init__()
        self._resets: list[ResetFault] = []
        self._reset_lock = threading.Lock()
        self.loop_redirects = False
        self.release_redirect: str | None = None
        self.release_body: tuple[bytes, dict[str, str]] | None = None
        self.throttles: list[tuple[str, int]] = []
        self._stalls: list[tuple[ResetFault, float]] = []
        self.header_drips: list[tuple[str, float]] = []

    def reset_at(
        self, fraction: float, *, path_contains: str = "/assets/", times: int | None = None
    ) -> None:
        with self._reset_lock:
            self._resets.append(ResetFault(fraction, path_contains, times))

    def redirect_loop(self) -> None:
        self.loop_redirects = True

    def redirect_releases_to(self, url_base: str) -> None:
        self.release_redirect = url_base

    def override_release_body(self, body: bytes, headers: Mapping[str, str] | None = None) -> None:
        self.release_body = (body, dict(headers or {}))

    def stall_at(
        self,
        fraction: float,
        seconds: float,
        *,
        path_contains: str = "/assets/",
        times: int | None = None,
    ) -> None:
        with self._reset_lock:
            self._stalls.append((ResetFault(fraction, path_contains, times), seconds))

    def _take_stall(self, path: str) -> tuple[float, float] | None:
        with self._reset_lock:
            for fault, seconds in self._stalls:
                if fault.path_contains not in path:
                    continue
                if fault.times is not None:
                    if fault.times <= 0:
                        continue
                    fault.times -= 1
                return fault.fraction, seconds
        return None

    def throttle(self, path_contains: str, bytes_per_second: int) -> None:
        self.throttles.append((path_contains, bytes_per_second))

    def drip_headers(self, path_contains: str, seconds_per_byte: float) -> None:
        self.header_drips.append((path_contains, seconds_per_byte))

    def _take_reset(self, path: str) -> ResetFault | None:
        with self._reset_lock:
            for fault in self._resets:
                if fault.path_contains not in path:
                    continue
                if fault.times is not None:
                    if fault.times <= 0:
                        continue
                    fault.times -= 1
                return fault
        return None

    def route(
        self, handler: BaseHTTPRequestHandler, path: str, headers: dict[str, str]
    ) -> tuple[int, bytes, str, dict[str, str]]:
        is_release = "/releases/latest" in path or "/releases/tags/" in path
        if self.loop_redirects and path.startswith("/repos/"):
            return 302, b"", "text/plain", {"Location": path}
        if is_release and self.release_redirect is not None:
            return 302, b"", "text/plain", {"Location": self.release_redirect + path}
        if is_release and self.release_body is not None:
            status, _, content_type, _ = super().route(handler, path, headers)
            body, extra = self.release_body
            return status, body, content_type, extra
        return super().route(handler, path, headers)

    def _send_slowly(
        self, handler: BaseHTTPRequestHandler, body: bytes, content_type: str, rate: int
    ) -> None:
        _send_slowly_impl(handler, body, content_type, rate)

    def _send(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        body: bytes,
        faults: list[Fault],
        *,
        content_type: str = "application/json",
        extra: Mapping[str, str] | None = None,
    ) -> None:
        drip = next((pause for part, pause in self.header_drips if part in handler.path), None)
        if drip is not None:
            _drip_headers(handler, drip)
            return
        stall = self._take_stall(handler.path) if status == 200 else None
        if stall is not None:
            _send_with_stall(handler, body, content_type, *stall)
            return
        reset = self._take_reset(handler.path) if status == 200 else None
        rate = next((bps for part, bps in self.throttles if part in handler.path), None)
        if reset is None and rate is not None and status == 200 and not faults:
            self._send_slowly(handler, body, content_type, rate)
            return
        if reset is None:
            super()._send(handler, status, body, faults, content_type=content_type, extra=extra)
            return
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", content_type)
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body[: int(len(body) * reset.fraction)])
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        handler.close_connection = True
        # Linger 0 turns close() into a TCP RST: the client sees "connection reset by peer".
        handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        handler.connection.close()


def _chunks(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)] or [b""]


def _pause(seconds: float) -> None:
    time.sleep(seconds)


def _send_slowly_impl(
    handler: BaseHTTPRequestHandler, body: bytes, content_type: str, rate: int
) -> None:
    chunk = max(1, rate // 20)
    try:
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        for piece in _chunks(body, chunk):
            handler.wfile.write(piece)
            handler.wfile.flush()
            _pause(len(piece) / rate)
    except (BrokenPipeError, ConnectionResetError):
        handler.close_connection = True


# Enough bytes to outlast any deadline a test sets, few enough to end on its own.
MAX_DRIPPED_BYTES = 600


def _drip_headers(handler: BaseHTTPRequestHandler, pause: float) -> None:
    try:
        handler.wfile.write(b"HTTP/1.1 200 OK\r\nX-Drip: ")
        handler.wfile.flush()
        for _ in range(MAX_DRIPPED_BYTES):
            _pause(pause)
            handler.wfile.write(b"a")
            handler.wfile.flush()
    except (BrokenPipeError, ConnectionResetError):
        pass
    handler.close_connection = True


def _send_with_stall(
    handler: BaseHTTPRequestHandler,
    body: bytes,
    content_type: str,
    fraction: float,
    seconds: float,
) -> None:
    cut = int(len(body) * fraction)
    try:
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body[:cut])
        handler.wfile.flush()
        _pause(seconds)
        handler.wfile.write(body[cut:])
        handler.wfile.flush()
    except (BrokenPipeError, ConnectionResetError):
        handler.close_connection = True


@pytest.fixture
def faulty_server() -> Iterator[FaultyGitHubServer]:
    with FaultyGitHubServer() as server:
        yield server


@pytest.fixture
def other_host() -> Iterator[BlobServer]:
    """A second server, addressed as ``localhost`` (another host name and port)."""
    server = BlobServer()
    # Same machine, different origin: another host name and another port.
    server.url = f"http://localhost:{server.port}"
    with server:
        yield server
