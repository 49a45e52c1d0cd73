"""Install against a misbehaving GitHub: every fault ends in the documented kind (or a
successful retry), in bounded time, with ``<dest>`` and the download cache as they were."""

from __future__ import annotations

import gzip
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from adversarial.harness import CliResult, Entry, clean_env, diff, run_cli_in_process, snapshot
from support.github_server import BlobServer
from support.tarballs import plugin_tarball, release_assets

from .server import FaultyGitHubServer, faulty_server, other_host

__all__ = ["faulty_server", "other_host"]

PLUGIN = "hello"
VERSION = "1.0.0"
TARBALL = f"{PLUGIN}-{VERSION}-noarch.tar.gz"
TOKEN = "loopback-token-1234"  # noqa: S105 (a test value sent only to 127.0.0.1)
# Random (incompressible) payload so every tenth of the asset is real bytes on the wire.
PAYLOAD = os.urandom(256 * 1024)


@dataclass
class Setup:
    server: FaultyGitHubServer
    home: Path
    dest: Path
    cache: Path
    before: Mapping[str, Entry]
    tarball_path: str  # the API path of the tarball asset, to aim faults at it alone

    def install(self, *extra: str, token: str | None = None) -> tuple[CliResult, float]:
        env = clean_env(
            NEXO_HOME=str(self.home),
            NEXO_GITHUB_API_BASE=self.server.url,
            NEXO_HTTP_RETRY_BASE_MS="1",
            NO_PROXY="127.0.0.1,localhost",
        )
        if token is not None:
            env["NEXO_GITHUB_TOKEN"] = token
        started = time.monotonic()
        result = run_cli_in_process(
            [
                "plugin",
                "install",
                f"acme/{PLUGIN}",
                "--dest",
                str(self.dest),
                "--yes",
                "--json",
                *extra,
            ],
            env=env,
        )
        return result, time.monotonic() - started

    def assert_untouched(self) -> None:
        after = snapshot(self.home)
        changes = diff(self.before, after)
        assert not any(changes.values()), changes

    def assert_refused(self, result: CliResult, *kinds: str) -> None:
        assert result.exit_code == 1, (result.stdout, result.stderr)
        assert result.document["kind"] in kinds, result.document
        self.assert_untouched()

    def assert_installed(self, result: CliResult) -> None:
        assert result.exit_code == 0, (result.stdout, result.stderr)
        installed = self.dest / f"{PLUGIN}-{VERSION}"
        assert (installed / "lib" / "plugin" / "data.bin").read_bytes() == PAYLOAD
        assert [p.name for p in self.cache.iterdir()] == []
        assert not [p for p in self.dest.iterdir() if p.name.startswith(".staging-")]


@pytest.fixture
def setup(faulty_server: FaultyGitHubServer, tmp_path: Path) -> Setup:
    data = plugin_tarball(PLUGIN, VERSION, payload=PAYLOAD)
    release = faulty_server.publish(
        "acme", PLUGIN, f"v{VERSION}", release_assets(PLUGIN, VERSION, data=data)
    )
    tarball_path = faulty_server.asset_api_url(release, TARBALL).removeprefix(faulty_server.url)
    home = tmp_path / "home"
    dest = home / "state" / "plugins"
    cache = home / "state" / "plugin-install-cache"
    dest.mkdir(parents=True)
    cache.mkdir(parents=True)
    return Setup(faulty_server, home, dest, cache, snapshot(home), tarball_path)


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
    # The other host knows no release: whatever the kind, the token never reached it.
    assert result.exit_code == 1
    assert result.document["kind"] in {"release_not_found", "network"}
    assert other_host.requests
    for request in other_host.requests:
        assert "authorization" not in request.headers
    setup.assert_untouched()


def test_content_length_larger_than_body_is_network(setup: Setup) -> None:
    setup.server.wrong_content_length(+4096, times=None, path_contains=setup.tarball_path)
    result, elapsed = setup.install()
    setup.assert_refused(result, "network")
    assert elapsed < 30


def test_content_length_larger_than_body_once_then_retry_succeeds(setup: Setup) -> None:
    setup.server.wrong_content_length(+4096, times=1, path_contains=setup.tarball_path)
    result, _ = setup.install()
    setup.assert_installed(result)
    assert len(setup.server.requests_to(setup.tarball_path)) == 2


def test_content_length_smaller_than_body_is_refused(setup: Setup) -> None:
    # The client reads the declared length: a short file that fails its checksum.
    setup.server.wrong_content_length(-4096, times=None, path_contains=setup.tarball_path)
    result, elapsed = setup.install()
    setup.assert_refused(result, "checksum_mismatch", "network")
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
    # Either handled or refused cleanly; in bounded time and without a partial install.
    if result.exit_code == 0:
        setup.assert_installed(result)
    else:
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
