"""The one client reaches a host through the proxy the environment names (``HTTP_PROXY``),
and directly for the hosts ``NO_PROXY`` lists. The proxy is a loopback server that records
the absolute URLs it is asked for; the host behind it is never resolved."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from nexo_pkg.net.client import HttpClient


class _Proxy:
    def __init__(self) -> None:
        self.asked: list[str] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                recorder.asked.append(self.path)
                body = b"through the proxy"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                del format, args

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def proxy() -> Iterator[_Proxy]:
    running = _Proxy()
    yield running
    running.stop()


def _get(url: str) -> bytes:
    with HttpClient(timeout=10, retries=0) as client, client.open("GET", url, "a doc") as answer:
        return client.read_document(answer, "a doc", limit=1024)


def test_the_environment_s_proxy_is_used(proxy: _Proxy, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "localhost")
    assert _get("http://plugins.example.invalid/doc") == b"through the proxy"
    assert proxy.asked == ["http://plugins.example.invalid/doc"]


def test_no_proxy_hosts_are_reached_directly(
    proxy: _Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert _get(proxy.url + "/direct") == b"through the proxy"
    assert proxy.asked == ["/direct"]


@pytest.mark.parametrize(
    ("settings", "mounts"),
    [
        ({}, {}),
        ({"https": "proxy:3128"}, {"https://": "http://proxy:3128"}),
        ({"http": "socks5://p:1080"}, {"http://": "socks5://p:1080"}),
        (
            {"all": "http://p:1", "no": "localhost, 10.0.0.1,::1,.corp.example,https://x"},
            {
                "all://": "http://p:1",
                "all://localhost": None,
                "all://10.0.0.1": None,
                "all://[::1]": None,
                "all://*.corp.example": None,
                "https://x": None,
            },
        ),
        ({"https": "p:1", "no": "*"}, {}),
    ],
    ids=["none", "scheme-added", "socks", "no-proxy-shapes", "no-proxy-star"],
)
def test_proxy_settings_become_httpx_mounts(
    settings: dict[str, str], mounts: dict[str, str | None]
) -> None:
    from nexo_pkg.net.client import proxy_mounts

    assert proxy_mounts(settings) == mounts
