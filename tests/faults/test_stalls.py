"""A server that goes silent mid-transfer: the client's read timeout fires, the download is
retried from the start, and a server that always hangs ends in ``network`` in bounded time.

These tests drive the real client with a 0.3 s read timeout (the silence after which one
attempt is abandoned; 30 s by default); the CLI-level stall tests in ``test_network_faults.py``
wait out the real one and are marked slow.
"""

from __future__ import annotations

import os
import time
from urllib.parse import urlsplit

import pytest
from support.tarballs import plugin_tarball, release_assets

from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources.github import GitHubClient

from .server import FaultyGitHubServer, faulty_server

__all__ = ["faulty_server"]

TARBALL = "hello-1.0.0-noarch.tar.gz"
DATA = plugin_tarball("hello", "1.0.0", payload=os.urandom(128 * 1024))


def _client(server: FaultyGitHubServer) -> GitHubClient:
    return GitHubClient(server.url, retries=2, retry_base_delay=0.001, read_timeout=0.3)


@pytest.mark.parametrize("fraction", [0.0, 0.5, 0.95])
def test_stall_mid_body_once_then_retry_gets_every_byte(
    faulty_server: FaultyGitHubServer, fraction: float
) -> None:
    faulty_server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0", data=DATA))
    faulty_server.stall_at(fraction, 1.5, path_contains="/assets/", times=1)
    with _client(faulty_server) as client:
        release = client.get_release("acme", "hello", None)
        asset = release.asset(TARBALL)
        assert asset is not None
        assert client.fetch_bytes(asset, max_bytes=10 * 1024 * 1024) == DATA
    # The first attempt hung and timed out; the second one delivered.
    assert len(faulty_server.requests_to(urlsplit(asset.url).path)) == 2


def test_stall_mid_body_every_time_is_network_in_bounded_time(
    faulty_server: FaultyGitHubServer,
) -> None:
    faulty_server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0", data=DATA))
    faulty_server.stall_at(0.5, 1.5, path_contains="/assets/", times=None)
    with _client(faulty_server) as client:
        release = client.get_release("acme", "hello", None)
        asset = release.asset(TARBALL)
        assert asset is not None
        started = time.monotonic()
        with pytest.raises(NexoError) as caught:
            client.fetch_bytes(asset, max_bytes=10 * 1024 * 1024)
        elapsed = time.monotonic() - started
    assert caught.value.kind == "network"
    # Three attempts of one 0.3 s read timeout each, plus backoff: far below the stall total.
    assert elapsed < 3.0
