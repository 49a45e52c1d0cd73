"""The loopback server kit: routes, the request log, 404s, HTTPS with its throw-away CA."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request

import pytest

from .http_kit import LoopbackServer, OneAnswerServer, Reply


def _get(url: str, context: ssl.SSLContext | None = None) -> tuple[int, bytes]:
    """Status and body of ``GET url``, never through a proxy of the environment."""
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=context)
    )
    request = urllib.request.Request(url, headers={"X-Probe": "yes"})
    try:
        with opener.open(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read()


def test_a_route_answers_and_every_request_is_logged() -> None:
    with LoopbackServer() as server:
        server.add_route("GET", "/hello", lambda handler: Reply(201, b"hi", {"X-A": "1"}))
        assert server.url == f"http://127.0.0.1:{server.port}"
        assert _get(server.url + "/hello?x=1") == (201, b"hi")
        assert _get(server.url + "/other") == (404, b"not found")
    assert [(r.method, r.path) for r in server.requests] == [
        ("GET", "/hello?x=1"),
        ("GET", "/other"),
    ]
    assert server.requests[0].headers["x-probe"] == "yes"
    assert server.requests_to("/other") == [server.requests[1]]


def test_https_is_trusted_only_through_its_ca_file() -> None:
    with LoopbackServer(tls=True) as server:
        server.add_route("GET", "/", lambda handler: Reply(200, b"secure"))
        assert server.url.startswith("https://127.0.0.1:")
        ca_file = server.ca_file
        assert ca_file is not None
        assert ca_file.is_file()
        trusting = ssl.create_default_context(cafile=str(ca_file))
        assert _get(server.url + "/", trusting) == (200, b"secure")
        with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
            _get(server.url + "/", ssl.create_default_context())
    # The throw-away certificate goes with the server; stopping again is harmless.
    assert not ca_file.exists()
    server.stop()


def test_an_unstarted_server_stops_and_one_answer_is_replaced() -> None:
    LoopbackServer().stop()
    with OneAnswerServer() as server:
        assert _get(server.url + "/any") == (200, b"")
        server.reply = Reply(503, b"busy")
        assert _get(server.url + "/else") == (503, b"busy")
