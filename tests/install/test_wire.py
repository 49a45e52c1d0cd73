"""The GitHub client's HTTP/1.1 transport (``http.client``): connection reuse, servers that
close or misbehave between requests, and what a plain-http install imports."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support.github_server import GitHubServer
from support.tarballs import release_assets

from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources.github import GitHubClient

DOCUMENT = json.dumps({"tag_name": "v1.0.0", "assets": []}).encode()


class _Recorder(ThreadingHTTPServer):
    daemon_threads = True
    # Per request: the client's (host, port), i.e. which TCP connection carried it.
    connections: list[tuple[str, int]]
    # How the next answers end the connection: "keep", "close" (header), "drop" (no header).
    endings: list[str]
    # Bytes sent after the next answer's body, unasked.
    trailing: bytes


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Recorder

    def do_GET(self) -> None:
        self.server.connections.append(self.client_address)
        ending = self.server.endings.pop(0) if self.server.endings else "keep"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(DOCUMENT)))
        if ending == "close":
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(DOCUMENT + self.server.trailing)
        self.server.trailing = b""
        if ending in {"close", "drop"}:
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (base signature)
        del format, args


@pytest.fixture
def recorder() -> Iterator[_Recorder]:
    server = _Recorder(("127.0.0.1", 0), _Handler)
    server.connections, server.endings, server.trailing = [], [], b""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.daemon = True
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _url(server: _Recorder) -> str:
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}"


def _fetch(client: GitHubClient, server: _Recorder, times: int) -> None:
    for _ in range(times):
        document, _following = client.get_json(_url(server) + "/doc", what="a document")
        assert document == {"tag_name": "v1.0.0", "assets": []}


def test_requests_to_one_origin_share_one_connection(recorder: _Recorder) -> None:
    with GitHubClient(_url(recorder), retries=0) as client:
        _fetch(client, recorder, 3)
    assert len(recorder.connections) == 3
    assert len(set(recorder.connections)) == 1


@pytest.mark.parametrize("ending", ["close", "drop"])
def test_a_connection_the_server_ended_is_not_reused(recorder: _Recorder, ending: str) -> None:
    # With no retries at all, a second request sent on the dead connection would fail.
    recorder.endings = [ending]
    with GitHubClient(_url(recorder), retries=0) as client:
        _fetch(client, recorder, 2)
    assert len(set(recorder.connections)) == 2


def test_unasked_bytes_after_an_answer_are_never_the_next_answer(recorder: _Recorder) -> None:
    # Whether they are read with the first answer or wait on the socket, they must not be
    # taken for the answer to the second request (a 404 here, which would fail the fetch).
    recorder.trailing = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
    with GitHubClient(_url(recorder), retries=0) as client:
        _fetch(client, recorder, 2)
    assert len(recorder.connections) == 2


def test_a_refused_connection_is_network_after_the_retries(recorder: _Recorder) -> None:
    url = _url(recorder)
    recorder.shutdown()
    recorder.server_close()
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
        "from nexo_pkg.install.pipeline import InstallOptions, install\n"
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
