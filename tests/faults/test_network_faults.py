"""Install against a misbehaving GitHub: every fault ends in the documented kind (or a
successful retry), in bounded time, with ``<dest>`` and the download cache as they were."""

from __future__ import annotations

import gzip
import json

import pytest
from support.github_server import BlobServer

from .server import faulty_server, other_host
from .workspace import TARBALL, Setup, setup

__all__ = ["faulty_server", "other_host", "setup"]

TOKEN = "loopback-token-1234"  # noqa: S105 (a test value sent only to 127.0.0.1)


FRACTIONS = [n / 10 for n in range(10)]


@pytest.mark.parametrize("fraction", FRACTIONS)
def test_reset_mid_asset_every_time_is_network(setup: Setup, fraction: float) -> None:
    setup.server.reset_at(fraction, path_contains=setup.tarball_path, times=None)
    result, elapsed = setup.install()
    setup.assert_refused(result, "network")
    assert elapsed < 30


@pytest.mark.parametrize("fraction", FRACTIONS)
def test_reset_mid_asset_once_then_retry_succeeds(setup: Setup, fraction: float) -> None:
    setup.server.reset_at(fraction, path_contains=setup.tarball_path, times=1)
    result, elapsed = setup.install()
    setup.assert_installed(result)
    assert len(setup.server.requests_to(setup.tarball_path)) == 2
    assert elapsed < 30


@pytest.mark.parametrize("fraction", [0.0, 0.5, 0.9])
def test_reset_mid_release_json(setup: Setup, fraction: float) -> None:
    setup.server.reset_at(fraction, path_contains="/releases/latest", times=None)
    result, _ = setup.install()
    setup.assert_refused(result, "network")


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_error_burst_then_success(setup: Setup, status: int) -> None:
    # Three failures, then the answer: within the client's three retries.
    setup.server.fail(status=status, times=3, path_contains="/releases/latest")
    setup.server.fail(status=status, times=3, path_contains=setup.tarball_path)
    result, elapsed = setup.install()
    setup.assert_installed(result)
    assert elapsed < 30


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_beyond_the_retries_are_network(setup: Setup, status: int) -> None:
    setup.server.fail(status=status, times=None, path_contains=setup.tarball_path)
    result, elapsed = setup.install()
    setup.assert_refused(result, "network")
    assert elapsed < 30


def test_endless_redirects_are_network(setup: Setup) -> None:
    setup.server.redirect_loop()
    result, elapsed = setup.install()
    setup.assert_refused(result, "network")
    assert elapsed < 30
    assert 1 < len(setup.server.requests) <= 4 * 10  # bounded: redirects x attempts


def test_token_does_not_follow_asset_redirect_to_another_host(
    setup: Setup, other_host: BlobServer
) -> None:
    setup.server.redirect_assets_to(other_host)
    result, _ = setup.install(token=TOKEN)
    setup.assert_installed(result)
    api_requests = setup.server.requests_to("/releases/")
    assert api_requests
    assert all(r.headers.get("authorization") == f"Bearer {TOKEN}" for r in api_requests)
    assert other_host.requests, "the download did not go to the other host"
    for request in other_host.requests:
        assert "authorization" not in request.headers
        assert TOKEN not in json.dumps(request.headers)


def test_token_does_not_follow_release_redirect_to_another_host(
    setup: Setup, other_host: BlobServer
) -> None:
    setup.server.redirect_releases_to(other_host.url)
    result, _ = setup.install(token=TOKEN)
    # The other host knows no release (404), and the token never reached it.
    assert result.exit_code == 1
    assert result.document["kind"] == "release_not_found"
    assert other_host.requests
    for request in other_host.requests:
        assert "authorization" not in request.headers
    setup.assert_untouched()


def test_content_length_larger_than_body_is_network(setup: Setup) -> None:
    setup.server.wrong_content_length(+4096, times=None, path_contains=setup.tarball_path)
    result, elapsed = setup.install()
    setup.assert_refused(result, "network")
    # Said in words, not as the HTTP library's exception class.
    sent = next(len(a.data) for _, a in setup.server.assets.values() if a.name == TARBALL)
    message = result.document["error"]
    assert f"the connection closed after {sent} of {sent + 4096} bytes" in message, message
    assert "Error" not in message, message
    assert elapsed < 30


def test_content_length_larger_than_body_once_then_retry_succeeds(setup: Setup) -> None:
    setup.server.wrong_content_length(+4096, times=1, path_contains=setup.tarball_path)
    result, _ = setup.install()
    setup.assert_installed(result)
    assert len(setup.server.requests_to(setup.tarball_path)) == 2


def test_content_length_smaller_than_body_is_refused(setup: Setup) -> None:
    # The client reads the declared length: fewer bytes than the release lists the asset
    # with, refused as a failed download (before any checksum is compared).
    setup.server.wrong_content_length(-4096, times=None, path_contains=setup.tarball_path)
    result, elapsed = setup.install()
    setup.assert_refused(result, "network")
    listed = next(len(a.data) for _, a in setup.server.assets.values() if a.name == TARBALL)
    said = f"got {listed - 4096} bytes, but the release lists it as {listed} bytes"
    assert said in result.document["error"], result.document
    assert elapsed < 30


def test_gzip_encoded_release_json_is_decoded(setup: Setup) -> None:
    status, body, _, _ = setup.server.route(None, "/repos/acme/hello/releases/latest", {})  # type: ignore[arg-type]
    assert status == 200
    setup.server.override_release_body(gzip.compress(body), {"Content-Encoding": "gzip"})
    result, _ = setup.install()
    setup.assert_installed(result)


@pytest.mark.parametrize(
    "body",
    [b"{", b"not json", b'{"tag_name": ', b"\xff\xfe\x00", b"[]", b'"v1.0.0"', b""],
    ids=["open-brace", "text", "cut", "binary", "array", "string", "empty"],
)
def test_malformed_release_json_is_network(setup: Setup, body: bytes) -> None:
    setup.server.override_release_body(body)
    result, elapsed = setup.install()
    setup.assert_refused(result, "network")
    assert elapsed < 30


def _big_release_body(setup: Setup, size: int) -> bytes:
    status, body, _, _ = setup.server.route(None, "/repos/acme/hello/releases/latest", {})  # type: ignore[arg-type]
    assert status == 200
    document = json.loads(body)
    document["body"] = "x" * size
    return json.dumps(document).encode()


def test_large_release_json(setup: Setup) -> None:
    setup.server.override_release_body(_big_release_body(setup, 5 * 1024 * 1024))
    result, elapsed = setup.install()
    setup.assert_installed(result)
    assert elapsed < 30


@pytest.mark.slow
def test_50mb_release_json(setup: Setup) -> None:
    setup.server.override_release_body(_big_release_body(setup, 50 * 1024 * 1024))
    result, elapsed = setup.install()
    # Over the 16 MiB cap for documents: refused cleanly, in bounded time, nothing written.
    setup.assert_refused(result, "network")
    assert elapsed < 60


@pytest.mark.slow
def test_stall_longer_than_the_timeout_then_success(setup: Setup) -> None:
    # The client's read timeout is 30 s and cannot be lowered from outside, so this waits it
    # out once: the stalled attempt times out, the retry succeeds.
    setup.server.slow(35.0, times=1, path_contains="/releases/latest")
    result, elapsed = setup.install()
    setup.assert_installed(result)
    assert 30 <= elapsed < 60


@pytest.mark.slow
def test_stall_every_time_is_network(setup: Setup) -> None:
    setup.server.slow(40.0, times=None, path_contains=setup.tarball_path)
    result, elapsed = setup.install()
    setup.assert_refused(result, "network")
    assert elapsed < 4 * 40 + 10
