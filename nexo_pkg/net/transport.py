"""HTTP/1.1 for the one HTTP client (:mod:`nexo_pkg.net.client`) over the standard library's
``http.client``.

An httpx transport for direct connections (proxies named by ``HTTPS_PROXY`` and friends are
reached through httpx's own transport, mounted by the client), there for start-up time
(docs/network.md, "Why DirectTransport"). Behaviour kept from httpx's own transport:

- one kept-alive connection per origin, reused only after a response was read to its end and
  only while the server has not closed it (or sent anything unasked); a server may still close
  it as the next request goes out (RFC 9112 §9.3.1: the close is on its way when the idle
  check looks), so an idempotent request (RFC 9110 §9.2.2) whose reused connection ends before
  the first byte of an answer goes once more on a new connection, as httpx's own pool and
  urllib3 do (never a request whose answer had begun, nor one whose deadline cut the
  connection: the deadline's watchdog cuts the new one as it connects);
- the connect timeout bounds the TCP connection and the TLS handshake, the read timeout every
  read afterwards; the request's ``trace`` hook hears of each connected socket (so a deadline
  watchdog can cut it, during the handshake too);
- https verifies certificates with :func:`nexo_pkg.net.tls.tls_context` (the OS trust store,
  or ``SSL_CERT_FILE``/``SSL_CERT_DIR`` when set); the TLS context is built on the first https
  request only, and CA settings that name no usable certificates are a ``config`` error;
- a body shorter than its ``Content-Length``, a malformed answer or a dropped connection is an
  httpx error of the same family httpx raises (``RemoteProtocolError``, ``ReadError``,
  ``ConnectError``, the timeouts), with the ``OSError`` as its cause.
"""

from __future__ import annotations

import http.client
import select
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

import httpx

from nexo_pkg.core.terminal import shown
from nexo_pkg.net.bounded import REUSE_REPORTED

if TYPE_CHECKING:
    import ssl

Origin = tuple[str, str, int]
CHUNK_SIZE = 1024 * 1024
DEFAULT_PORTS = {"http": 80, "https": 443}
# The methods a server may see twice (RFC 9110 §9.2.2), and what a kept-alive connection the
# server closed meanwhile raises once a request is sent on it (no answer came back).
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})
_ENDED = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


class _AnswerCutError(http.client.HTTPException):
    """The connection ended after the first bytes of an answer: the request reached the
    server, so it is never sent again by the transport."""


class _Response(http.client.HTTPResponse):
    """``http.client``'s response, telling a connection that ends before the first byte of
    the answer (``RemoteDisconnected``, ``ConnectionResetError``: the request may never have
    reached the server) from one that ends after it (:class:`_AnswerCutError`)."""

    def begin(self) -> None:
        # One read on the socket, as the status line's own first read would do; it waits as
        # long (the read timeout) and raises what it would raise.
        if not self.fp.peek(1):
            raise http.client.RemoteDisconnected("Remote end closed connection without response")
        # ``http.client`` ends the head at the end of the connection as at its blank line: a
        # head cut anywhere would be a complete answer (``200`` and an empty body). The head
        # is read through :class:`_HeadLines`, which sees where it ended.
        raw = self.fp
        lines = _HeadLines(raw)
        self.fp = cast("Any", lines)
        try:
            super().begin()
        except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected) as exc:
            raise _AnswerCutError(f"the connection ended during the answer's head: {exc}") from exc
        except http.client.BadStatusLine as exc:
            # A status line cut short (``HTTP/1.1 2``) is refused as malformed before the
            # head's end is looked at: it was cut, unless its first bytes are no HTTP's.
            if lines.cut and b"HTTP/".startswith(lines.last[:5]):
                raise _AnswerCutError("the connection ended during the answer's head") from exc
            raise
        finally:
            if cast("object", self.fp) is lines:  # else closed (None) on the way out
                self.fp = raw
        if lines.cut:
            raise _AnswerCutError("the connection ended during the answer's head")


class _HeadLines:
    """The socket's reader while an answer's head is read (``http.client`` reads it line by
    line): ``cut`` once a line ended with the connection instead of a line feed."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self.cut = False
        self.last = b""  # the line read last

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)  # ``close`` when the status line is refused

    def readline(self, limit: int = -1) -> bytes:
        line: bytes = self._raw.readline(limit)
        if not line.endswith(b"\n") and (limit < 0 or len(line) < limit):
            self.cut = True
        self.last = line
        return line


class _Stream:
    """What a ``trace`` hook is given for a connected socket (httpcore's network stream)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def get_extra_info(self, name: str) -> Any:
        return self._sock if name == "socket" else None


def _traced(sock: socket.socket) -> dict[str, Any]:
    """A trace event's ``info`` for ``sock``: this transport reports each reuse too."""
    return {"return_value": _Stream(sock), REUSE_REPORTED: True}


@contextmanager
def _mapped(
    timeout: type[httpx.TransportError], other: type[httpx.TransportError]
) -> Iterator[None]:
    """Turn what the socket and ``http.client`` raise into httpx's transport errors."""
    try:
        yield
    except TimeoutError as exc:
        raise timeout(str(exc) or "timed out") from exc
    except (http.client.HTTPException, http.client.RemoteDisconnected) as exc:
        raise httpx.RemoteProtocolError(_http_words(exc)) from exc
    except OSError as exc:
        raise other(exc.strerror or str(exc) or "the connection failed") from exc


def _http_words(exc: http.client.HTTPException) -> str:
    """What ``http.client`` refused in an answer, in words (its messages are the offending
    bytes, ``IncompleteRead(0 bytes read)`` or nothing at all)."""
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    if isinstance(exc, _AnswerCutError):
        return "the connection ended during the answer's head"
    if isinstance(exc, http.client.BadStatusLine):
        line = str(exc.args[0]) if exc.args else ""
        return (
            "the answer does not start with an HTTP status line (it starts "
            f"{shown(line.strip(), 60)})"
        )
    if isinstance(exc, http.client.LineTooLong):
        return f"the answer's head has a line too long ({exc})"
    if isinstance(exc, http.client.IncompleteRead):
        return "the answer's chunked body broke off or is malformed"
    if isinstance(exc, http.client.ImproperConnectionState):
        return "the connection was in no state to carry the answer"
    return f"the answer is not valid HTTP ({shown(str(exc), 100)})"


def _is_readable(sock: socket.socket) -> bool:
    """Whether an idle connection has something to read: the server closed it or sent bytes
    nobody asked for; either way it cannot carry another request."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


class _Body(httpx.SyncByteStream):
    """A response body read as it arrives; gives the connection back when read to its end."""

    def __init__(
        self,
        response: http.client.HTTPResponse,
        release: Callable[[bool], None],
    ) -> None:
        self._response = response
        self._release = release
        self._complete = False
        self._closed = False

    def __iter__(self) -> Iterator[bytes]:
        response = self._response
        received = 0
        with _mapped(httpx.ReadTimeout, httpx.ReadError):
            while chunk := response.read1(CHUNK_SIZE):
                received += len(chunk)
                yield chunk
        if response.length:  # bytes the Content-Length promised and the server did not send
            raise httpx.RemoteProtocolError(
                f"the connection closed after {received} of {received + response.length} "
                "bytes of the answer"
            )
        self._complete = True

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        reusable = self._complete and not self._response.will_close
        self._response.close()
        self._release(reusable)


class DirectTransport(httpx.BaseTransport):
    """An httpx transport over ``http.client``: see the module docstring."""

    def __init__(self) -> None:
        self._idle: dict[Origin, http.client.HTTPConnection] = {}
        self._tls: ssl.SSLContext | None = None

    def _tls_context(self) -> ssl.SSLContext:
        """Raises ``ConfigError`` when the CA settings name no usable certificates."""
        if self._tls is None:
            from nexo_pkg.net.tls import tls_context  # noqa: PLC0415 (plain http never needs it)

            self._tls = tls_context()
        return self._tls

    def _connect(self, origin: Origin, timeouts: dict[str, Any], trace: Any) -> socket.socket:
        scheme, host, port = origin
        connect = timeouts.get("connect")
        with _mapped(httpx.ConnectTimeout, httpx.ConnectError):
            # An ASCII name (what an IP literal or an IDNA-encoded host is) goes as bytes: a
            # text one makes the resolver load the ``idna`` codec first. getaddrinfo takes
            # bytes; typeshed's create_connection says str only.
            address = host.encode("ascii") if host.isascii() else host
            sock = socket.create_connection((address, port), connect)  # type: ignore[arg-type]
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if trace is not None:
                    trace("connection.connect_tcp.complete", _traced(sock))
                if scheme == "https":
                    sock = self._tls_context().wrap_socket(sock, server_hostname=host)
                    if trace is not None:
                        trace("connection.start_tls.complete", _traced(sock))
            except BaseException:
                sock.close()
                raise
        sock.settimeout(timeouts.get("read"))
        return sock

    def _idle_connection(
        self, origin: Origin, timeouts: dict[str, Any], trace: Any
    ) -> http.client.HTTPConnection | None:
        """The origin's kept-alive connection, when it is still open and quiet."""
        connection = self._idle.pop(origin, None)
        if connection is not None:
            sock = connection.sock
            if isinstance(sock, socket.socket) and not _is_readable(sock):
                sock.settimeout(timeouts.get("read"))
                if trace is not None:  # the request it carries now, for its deadline
                    trace("connection.reuse", _traced(sock))
                return connection
            connection.close()
        return None

    def _new_connection(
        self, origin: Origin, timeouts: dict[str, Any], trace: Any
    ) -> http.client.HTTPConnection:
        connection = http.client.HTTPConnection(origin[1], origin[2])
        connection.response_class = _Response
        connection.sock = self._connect(origin, timeouts, trace)
        return connection

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        scheme = url.scheme
        if scheme not in DEFAULT_PORTS:
            raise httpx.UnsupportedProtocol(f"the URL scheme {scheme!r} is not supported")
        origin: Origin = (scheme, url.host, url.port or DEFAULT_PORTS[scheme])
        timeouts: dict[str, Any] = request.extensions.get("timeout", {})
        trace = request.extensions.get("trace")
        if scheme == "https":
            self._tls_context()  # CA settings are checked before any connection is tried
        connection = self._idle_connection(origin, timeouts, trace)
        if connection is None:
            connection = self._new_connection(origin, timeouts, trace)
        elif request.method in IDEMPOTENT:
            try:
                return self._exchange(connection, request, origin)
            except (httpx.RemoteProtocolError, httpx.WriteError, httpx.ReadError) as exc:
                connection.close()
                if not isinstance(exc.__cause__, _ENDED):
                    raise
            # The server closed the kept-alive connection as the request went out: nothing
            # came back, so the request goes once more, on a new connection.
            connection = self._new_connection(origin, timeouts, trace)
        return self._exchange(connection, request, origin)

    def _exchange(
        self, connection: http.client.HTTPConnection, request: httpx.Request, origin: Origin
    ) -> httpx.Response:
        """Send ``request`` on ``connection`` and read the answer's head; the connection is
        closed when that fails, and kept for the origin once the body is read to its end."""
        try:
            with _mapped(httpx.WriteTimeout, httpx.WriteError):
                connection.putrequest(
                    request.method,
                    request.url.raw_path.decode("ascii"),
                    skip_host=True,
                    skip_accept_encoding=True,
                )
                for name, value in request.headers.raw:
                    connection.putheader(name, value)
                connection.endheaders(request.read() or None)
            with _mapped(httpx.ReadTimeout, httpx.ReadError):
                response = connection.getresponse()
        except BaseException:
            connection.close()
            raise

        def release(reusable: bool) -> None:
            if reusable and origin not in self._idle:
                self._idle[origin] = connection
            else:
                connection.close()

        return httpx.Response(
            response.status,
            headers=[
                (name.encode("latin-1"), value.encode("latin-1"))
                for name, value in response.getheaders()
            ],
            stream=_Body(response, release),
            extensions={
                "http_version": b"HTTP/1.1" if response.version == 11 else b"HTTP/1.0",
                "reason_phrase": response.reason.encode("latin-1", errors="replace"),
            },
        )

    def close(self) -> None:
        idle, self._idle = self._idle, {}
        for connection in idle.values():
            connection.close()
