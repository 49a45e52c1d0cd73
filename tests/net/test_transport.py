"""The GitHub client's HTTP/1.1 transport (``http.client``): connection reuse, servers that
close or misbehave between requests, and what a plain-http install imports."""

from __future__ import annotations

import hashlib
import json
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import httpx
import pytest
from support.github_server import GitHubServer
from support.http_kit import LoopbackServer
from support.tarballs import release_assets

from nexo_pkg.core.errors import NexoError
from nexo_pkg.net.transport import DirectTransport, _Body
from nexo_pkg.sources.github import GitHubClient
from nexo_pkg.sources.registry import RegistryClient

DOCUMENT = json.dumps({"tag_name": "v1.0.0", "assets": []}).encode()


class _Recorder(LoopbackServer):
    """Answers every GET with :data:`DOCUMENT` and records which connection carried it."""

    def __init__(self, methods: tuple[str, ...] = ("GET",)) -> None:
        super().__init__(methods=methods)
        # Per request: the client's (host, port), i.e. which TCP connection carried it.
        self.connections: list[tuple[str, int]] = []
        # How the next answers end the connection: "keep", "close" (header), "drop" (no
        # header), "vanish" (no answer at all: the connection closes as the request arrives, as
        # a server closing an idle kept-alive connection does when a request crosses it).
        self.endings: list[str] = []
        # Bytes sent after the next answer's body, unasked.
        self.trailing = b""
        # Set at the end of a test: a "stall" answer (none, the connection held open) ends.
        self.released = threading.Event()

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        self.connections.append(handler.client_address)
        ending = self.endings.pop(0) if self.endings else "keep"
        if ending == "vanish":
            handler.close_connection = True
            return
        if ending == "stall":
            self.released.wait(timeout=60)
            handler.close_connection = True
            return
        if ending == "reset-midway":
            # The first bytes of an answer, then a TCP reset (SO_LINGER 0), as a proxy or a
            # server that crashes while answering leaves a connection.
            handler.wfile.write(b"HTTP/1.1 2")
            handler.wfile.flush()
            handler.connection.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
            )
            handler.connection.close()
            handler.close_connection = True
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(DOCUMENT)))
        if ending == "close":
            handler.send_header("Connection", "close")
        handler.end_headers()
        handler.wfile.write(DOCUMENT + self.trailing)
        self.trailing = b""
        if ending in {"close", "drop"}:
            handler.close_connection = True


@pytest.fixture
def recorder() -> Iterator[_Recorder]:
    with _Recorder() as server:
        try:
            yield server
        finally:
            server.released.set()


def _fetch(client: GitHubClient, server: _Recorder, times: int) -> None:
    for _ in range(times):
        document, _following = client.get_json(server.url + "/doc", what="a document")
        assert document == {"tag_name": "v1.0.0", "assets": []}


def test_requests_to_one_origin_share_one_connection(recorder: _Recorder) -> None:
    with GitHubClient(recorder.url, retries=0) as client:
        _fetch(client, recorder, 3)
    assert len(recorder.connections) == 3
    assert len(set(recorder.connections)) == 1


@pytest.mark.parametrize("ending", ["close", "drop"])
def test_a_connection_the_server_ended_is_not_reused(recorder: _Recorder, ending: str) -> None:
    # With no retries at all, a second request sent on the dead connection would fail.
    recorder.endings = [ending]
    with GitHubClient(recorder.url, retries=0) as client:
        _fetch(client, recorder, 2)
    assert len(set(recorder.connections)) == 2


def test_a_request_the_server_closed_a_kept_alive_connection_on_goes_once_more(
    recorder: _Recorder,
) -> None:
    # RFC 9112 §9.3.1: a server may close an idle connection as the next request is sent on
    # it; the idle check cannot see a close still on its way. Nothing came back, and a GET
    # may be sent twice (RFC 9110 §9.2.2): it goes again on a new connection, which is not one
    # of the client's retries (there are none here).
    recorder.endings = ["keep", "vanish"]
    with GitHubClient(recorder.url, retries=0) as client:
        _fetch(client, recorder, 2)
    first, ended, fresh = recorder.connections
    assert ended == first
    assert fresh != first


def test_a_new_connection_that_ends_before_any_answer_is_not_tried_again(
    recorder: _Recorder,
) -> None:
    # Only a kept-alive connection gets the second try: a new one that ends is the server's
    # answer, and the client's retries (none here) decide.
    recorder.endings = ["vanish"]
    with (
        GitHubClient(recorder.url, retries=0) as client,
        pytest.raises(NexoError) as caught,
    ):
        _fetch(client, recorder, 1)
    assert caught.value.kind == "network"
    assert "gave up after 1 attempts" in caught.value.message
    assert len(recorder.connections) == 1


def test_a_post_on_a_kept_alive_connection_the_server_closed_is_not_sent_twice() -> None:
    # A POST may have been acted on (RFC 9110 §9.2.2): its failure is the caller's to handle.
    with (
        _Recorder(methods=("GET", "POST")) as recorder,
        httpx.Client(transport=DirectTransport()) as client,
    ):
        recorder.endings = ["keep", "vanish"]
        assert client.get(recorder.url + "/doc").status_code == 200
        with pytest.raises(httpx.RemoteProtocolError):
            client.post(recorder.url + "/doc", content=b"{}")
    assert len(recorder.connections) == 2
    assert len(set(recorder.connections)) == 1


def test_a_request_whose_answer_began_before_the_connection_ended_is_not_sent_again(
    recorder: _Recorder,
) -> None:
    # The server began to answer on the kept-alive connection, then reset it: the request
    # reached it, so the connection's end is the server's answer, not a close that crossed
    # the request; the client's retries (none here) decide.
    recorder.endings = ["keep", "reset-midway"]
    with (
        GitHubClient(recorder.url, retries=0) as client,
        pytest.raises(NexoError) as caught,
    ):
        _fetch(client, recorder, 2)
    assert caught.value.kind == "network"
    assert "gave up after 1 attempts" in caught.value.message
    assert len(recorder.connections) == 2
    assert len(set(recorder.connections)) == 1


def test_a_kept_alive_connection_cut_at_the_deadline_is_not_tried_again(
    recorder: _Recorder,
) -> None:
    # The request's deadline passes while the server holds the answer back: the watchdog
    # cuts the connection, which the transport sees end before any answer, as when a close
    # crosses a request. That end is the deadline's, not the server's: nothing goes again.
    recorder.endings = ["keep", "stall"]
    with (
        GitHubClient(recorder.url, retries=0, timeout=0.5) as client,
        pytest.raises(NexoError) as caught,
    ):
        _fetch(client, recorder, 2)
    assert caught.value.kind == "network"
    assert "deadline" in caught.value.message
    assert len(recorder.connections) == 2
    assert len(set(recorder.connections)) == 1


def test_unasked_bytes_after_an_answer_are_never_the_next_answer(recorder: _Recorder) -> None:
    # Whether they are read with the first answer or wait on the socket, they must not be
    # taken for the answer to the second request (a 404 here, which would fail the fetch).
    recorder.trailing = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
    with GitHubClient(recorder.url, retries=0) as client:
        _fetch(client, recorder, 2)
    assert len(recorder.connections) == 2


def test_a_refused_connection_is_network_after_the_retries(recorder: _Recorder) -> None:
    url = recorder.url
    recorder.stop()
    with (
        GitHubClient(url, retries=1, retry_base_delay=0.001) as client,
        pytest.raises(NexoError) as caught,
    ):
        client.get_json(url + "/doc", what="a document")
    assert caught.value.kind == "network"
    assert "gave up after 2 attempts" in caught.value.message


def test_a_plain_http_install_imports_neither_httpcore_nor_h11(
    github_server: GitHubServer, tmp_path: Path
) -> None:
    github_server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from nexo_pkg.install.options import InstallOptions\n"
        "from nexo_pkg.install.pipeline import install\n"
        f"home = Path({str(tmp_path / 'home')!r})\n"
        "options = InstallOptions(dest=home / 'plugins', nexo_home=home, "
        f"github_api_url={github_server.url!r})\n"
        "install('acme/hello@v1.0.0', options)\n"
        "print(sorted(m for m in ('httpcore', 'h11', 'certifi') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
    assert (tmp_path / "home" / "plugins" / "hello-1.0.0").is_dir()


class _Trickle(LoopbackServer):
    """Answers every GET with :data:`BLOB` in pieces of 48 KiB, each flushed on its own."""

    def __init__(self, methods: tuple[str, ...] = ("GET",)) -> None:
        super().__init__(methods=methods)

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/octet-stream")
        handler.send_header("Content-Length", str(len(BLOB)))
        handler.end_headers()
        for start in range(0, len(BLOB), 48 * 1024):
            handler.wfile.write(BLOB[start : start + 48 * 1024])
            handler.wfile.flush()


BLOB = bytes(range(256)) * (12 * 1024)  # 3 MiB


def test_a_blob_reaches_its_writer_in_the_pieces_the_transport_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the transport read is handed on as it is: not joined into larger pieces and cut
    again (a copy of every byte, twice, on the way to the file)."""
    read: list[bytes] = []
    real_iter = _Body.__iter__

    def recording(body: _Body) -> Iterator[bytes]:
        for chunk in real_iter(body):
            read.append(chunk)
            yield chunk

    monkeypatch.setattr(_Body, "__iter__", recording)
    written: list[bytes] = []
    digest = "sha256:" + hashlib.sha256(BLOB).hexdigest()
    with (
        _Trickle() as server,
        RegistryClient(server.address, plain_http=True, loopback=True) as client,
    ):
        size = client.get_blob("acme/echo", digest, written.append, max_bytes=len(BLOB))
    assert size == len(BLOB)
    assert b"".join(written) == BLOB
    assert len(written) == len(read) > 1
    assert all(given is seen for given, seen in zip(written, read, strict=True))
