"""Property: any answer to the release API becomes a Release and an asset choice, or a typed
failure; served over real HTTP on loopback to the real client."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from hypothesis import given, settings

from nexo_pkg.install.manifest_check import manifest_asset_problem
from nexo_pkg.sources.github import GitHubClient
from nexo_pkg.sources.select import choose_asset, parse_tarball_name, release_identity

from .strategies import attempt, release_documents

TRIPLES = ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-musl")


class _ReleaseServer(ThreadingHTTPServer):
    body: bytes = b"{}"


class _Handler(BaseHTTPRequestHandler):
    server: _ReleaseServer

    def do_GET(self) -> None:
        body = self.server.body
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib signature)
        del format, args


@pytest.fixture(scope="module")
def release_server() -> Iterator[_ReleaseServer]:
    server = _ReleaseServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _check(server: _ReleaseServer, document: Any) -> None:
    server.body = json.dumps(document).encode()
    api = f"http://127.0.0.1:{server.server_address[1]}"
    with GitHubClient(api, retries=0, retry_base_delay=0.0, timeout=5.0) as client:
        release, error = attempt(lambda: client.get_release("owner", "repo", None))
    if release is None:
        assert error is not None
        assert error.kind == "network"
        return
    assert isinstance(release.tag, str)
    for asset in release.assets:
        assert isinstance(asset.name, str)
        assert isinstance(asset.size, int)
        parse_tarball_name(asset.name)
    choice, error = attempt(
        lambda: choose_asset(
            release,
            TRIPLES,
            release_identity(release, None, manifest_problem=manifest_asset_problem),
        )
    )
    if choice is None:
        assert error is not None
        assert error.kind == "asset_not_found"
        return
    assert release.asset(choice.asset.name) is choice.asset
    assert re.fullmatch(r"[a-z][a-z0-9_]*-.+-.+\.tar\.gz", choice.asset.name)
    assert choice.asset.name == f"{choice.plugin_id}-{choice.version}-{choice.target}.tar.gz"


@given(document=release_documents())
def test_release_answers_are_handled(release_server: _ReleaseServer, document: Any) -> None:
    _check(release_server, document)


@pytest.mark.slow
@settings(max_examples=10_000)
@given(document=release_documents())
def test_release_answers_are_handled_at_scale(
    release_server: _ReleaseServer, document: Any
) -> None:
    _check(release_server, document)


def test_assets_not_a_list(release_server: _ReleaseServer) -> None:
    _check(release_server, {"tag_name": "v1.0.0", "assets": True})
