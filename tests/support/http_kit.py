"""A loopback HTTP server for the tests: 127.0.0.1, an ephemeral port, one thread a request.

:class:`LoopbackServer` answers the routes registered with :meth:`LoopbackServer.add_route` (a
method and an exact path, the query ignored; anything else is a 404) and records every request
(method, request target as sent, lower-case headers) in :attr:`LoopbackServer.requests` before
answering it. A server that needs more than routes (faults, a proxy) overrides
:meth:`LoopbackServer.handle`, or passes a ``fallback``, and writes the answer itself, with
:func:`send` or by hand.

With ``tls=True`` it speaks HTTPS with a throw-away self-signed certificate made for this server
(``127.0.0.1`` and ``localhost``); point a client at :attr:`LoopbackServer.ca_file` through
``SSL_CERT_FILE`` to trust it. ``tls=`` a :class:`Certificate` from :func:`make_certificate`
shares one certificate between servers. Used as a context manager the server is started on the
way in and always stopped (threads joined, socket closed, the throw-away certificate deleted)
on the way out::

    with LoopbackServer(tls=True) as server:
        server.add_route("GET", "/hello", lambda request: Reply(200, b"hi"))
        env["SSL_CERT_FILE"] = str(server.ca_file)
        ...
        assert server.requests[0].headers["user-agent"].startswith("nexo-pkg/")
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import shutil
import socket
import ssl
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

# Every method a test server may be asked; each reaches :meth:`LoopbackServer.handle`.
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it: ``path`` is the request target as sent (with its
    query; the absolute URL when the server is asked as a proxy); header names are lower-case.
    """

    method: str
    path: str
    headers: dict[str, str]


@dataclass(frozen=True)
class Reply:
    """What a route answers: a status, a body and headers (``Content-Length`` is added)."""

    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)


Route = Callable[[BaseHTTPRequestHandler], Reply]


@dataclass(frozen=True)
class Certificate:
    """A self-signed CA certificate (PEM) and its private key (PEM, PKCS#8)."""

    cert_file: Path
    key_file: Path


def make_certificate(
    directory: Path, name: str = "loopback", *, other_host: bool = False, expired: bool = False
) -> Certificate:
    """A self-signed CA certificate valid for IP 127.0.0.1 and ``localhost``, for a day,
    written to ``directory`` as ``NAME.pem`` and ``NAME.key``. ``other_host``: valid for
    ``elsewhere.invalid`` only; ``expired``: its day ended yesterday."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"nexo test {name}")])
    now = dt.datetime.now(dt.UTC) - dt.timedelta(days=2 if expired else 0)
    names: list[x509.GeneralName] = (
        [x509.DNSName("elsewhere.invalid")]
        if other_host
        else [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    )
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file = directory / f"{name}.pem"
    key_file = directory / f"{name}.key"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return Certificate(cert_file, key_file)


def send(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: bytes = b"",
    headers: Mapping[str, str] | Iterable[tuple[str, str]] = (),
    *,
    head: bool = False,
) -> None:
    """Answer ``status`` with ``headers`` (a mapping, or pairs when a name repeats), a
    ``Content-Length`` and ``body`` (neither for ``HEAD`` when ``head``). A client that hung
    up first ends the connection, not the test."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    try:
        handler.send_response(status)
        for key, value in pairs:
            handler.send_header(key, value)
        if not head:
            handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if not head and body:
            handler.wfile.write(body)
        handler.wfile.flush()
    except OSError:
        handler.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver's listen backlog of 5 drops the SYNs of a client opening more connections
    # at once (eight worker threads, each its own): the kernel resends them a second later,
    # a stall no real server makes.
    request_queue_size = 128

    def get_request(self) -> tuple[socket.socket, Any]:
        # Headers and body leave as they are written (as servers in front of real APIs
        # send them): with Nagle's algorithm the body of a 200 waited for the client's
        # delayed ACK of the headers, 40 ms a request behind a latency proxy.
        connection, address = super().get_request()
        with contextlib.suppress(OSError):
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection, address

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up early, as a client refusing an answer does, is not a server
        # failure: printing it would land in the stderr of an in-process command under test.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 (ephemeral port); see the module docstring.

    ``host`` is the address to listen on: 127.0.0.1 unless a test needs a server off loopback
    (this machine's outward address). ``protocol`` is the HTTP version answered (``HTTP/1.1``
    keeps connections alive; a server that must close after each answer passes ``HTTP/1.0``).
    Only ``methods`` are answered; another method gets the standard library's 501, unrecorded.
    ``fallback`` answers (by writing to the handler) every request no route matches, instead
    of a 404.
    """

    def __init__(
        self,
        *,
        tls: bool | Certificate = False,
        host: str = "127.0.0.1",
        protocol: str = "HTTP/1.1",
        methods: Sequence[str] = METHODS,
        fallback: Callable[[BaseHTTPRequestHandler], None] | None = None,
    ) -> None:
        self.requests: list[RecordedRequest] = []
        self._routes: dict[tuple[str, str], Route] = {}
        self._fallback = fallback
        self._lock = threading.Lock()
        self._scratch: Path | None = None
        self.certificate: Certificate | None = None
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = protocol
            # Headers and body go out in two writes; with Nagle on, a kept-alive connection
            # waits for the client's delayed ACK (~40 ms) before the body, which no real
            # HTTP server does.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (base signature)
                del format, args

        def receive(handler: BaseHTTPRequestHandler) -> None:
            owner._receive(handler)

        for method in methods:
            setattr(Handler, f"do_{method}", receive)
        self._httpd = _Server((host, 0), Handler)
        self.port: int = self._httpd.server_address[1]
        self.address = f"{host}:{self.port}"
        self.url = f"http://{self.address}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        if isinstance(tls, Certificate):
            self.use_tls(tls)
        elif tls:
            self._scratch = Path(tempfile.mkdtemp(prefix="nexo-test-tls-"))
            self.use_tls(make_certificate(self._scratch))

    @property
    def ca_file(self) -> Path | None:
        """The certificate to trust (``SSL_CERT_FILE``) when the server speaks HTTPS."""
        return self.certificate.cert_file if self.certificate is not None else None

    def use_tls(self, certificate: Certificate) -> None:
        """Speak HTTPS with ``certificate`` (call before :meth:`start`); :attr:`url` becomes
        ``https://127.0.0.1:PORT``."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate.cert_file, certificate.key_file)
        self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        self.certificate = certificate
        self.url = f"https://{self.address}"

    def add_route(self, method: str, path: str, answer: Route) -> None:
        """Answer ``method path`` (exact path, any query) with what ``answer`` returns."""
        with self._lock:
            self._routes[(method.upper(), path)] = answer

    def requests_to(self, path_contains: str) -> list[RecordedRequest]:
        """The recorded requests whose path (with its query) contains ``path_contains``."""
        return [request for request in self.requests if path_contains in request.path]

    def _receive(self, handler: BaseHTTPRequestHandler) -> None:
        headers = {key.lower(): value for key, value in handler.headers.items()}
        with self._lock:
            self.requests.append(RecordedRequest(handler.command, handler.path, headers))
        self.handle(handler)

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        """Answer one request (already recorded): its route, else the fallback, else 404."""
        with self._lock:
            answer = self._routes.get((handler.command, urlsplit(handler.path).path))
        if answer is None and self._fallback is not None:
            self._fallback(handler)
            return
        if answer is None:
            send(handler, 404, b"not found", {"Content-Type": "text/plain"})
            return
        reply = answer(handler)
        send(handler, reply.status, reply.body, reply.headers, head=handler.command == "HEAD")

    # -- life cycle ---------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop serving, close the socket, delete a throw-away certificate (idempotent)."""
        if self._thread.is_alive():
            self._httpd.shutdown()
            self._thread.join(timeout=5)
        self._httpd.server_close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class OneAnswerServer(LoopbackServer):
    """A :class:`LoopbackServer` answering every GET with :attr:`reply` (a fuzzer sets it
    before each request)."""

    def __init__(self, *, protocol: str = "HTTP/1.1") -> None:
        super().__init__(protocol=protocol, methods=("GET",))
        self.reply = Reply()

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        reply = self.reply
        send(handler, reply.status, reply.body, reply.headers)
