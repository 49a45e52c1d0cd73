"""The GitHub client against the loopback server: retries, rate limits, redirects, tokens."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.cli import nexo, stand_in_env
from support.github_server import BlobServer, GitHubServer
from support.tarballs import release_assets

from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources.cache import BlobCache
from nexo_pkg.sources.download import cached_asset
from nexo_pkg.sources.github import GitHubClient, resolve_api_base, resolve_token

from .conftest import InstallEnv

ASSETS = release_assets("hello", "1.0.0")
TARBALL = "hello-1.0.0-noarch.tar.gz"
_SHA256 = hashlib.sha256(ASSETS[TARBALL]).hexdigest()
TEST_TOKEN = "s3cret"  # noqa: S105 (a loopback-only test value)


def _client(server: GitHubServer, token: str | None = None, **kwargs: float) -> GitHubClient:
    return GitHubClient(server.url, token, retry_base_delay=0.001, **kwargs)  # type: ignore[arg-type]


def test_release_lookup_sends_github_headers(github_server: GitHubServer) -> None:
    github_server.publish("acme", "hello", "v1.0.0", ASSETS)
    with _client(github_server, "s3cret") as client:
        release = client.get_release("acme", "hello", None)
    assert release.tag == "v1.0.0"
    assert {asset.name for asset in release.assets} == set(ASSETS)
    headers = github_server.requests[-1].headers
    assert headers["accept"] == "application/vnd.github+json"
    assert headers["x-github-api-version"] == "2022-11-28"
    assert headers["authorization"] == "Bearer s3cret"
    assert headers["user-agent"].startswith("nexo-pkg/")


def test_missing_release_is_release_not_found(github_server: GitHubServer) -> None:
    github_server.publish("acme", "hello", "v1.0.0", ASSETS)
    with _client(github_server) as client, pytest.raises(NexoError) as caught:
        client.get_release("acme", "hello", "v9.9.9")
    assert caught.value.kind == "release_not_found"
    with _client(github_server) as client, pytest.raises(NexoError) as other:
        client.get_release("acme", "nope", None)
    assert other.value.kind == "release_not_found"


def test_retries_succeed_after_server_errors(github_server: GitHubServer) -> None:
    github_server.publish("acme", "hello", "v1.0.0", ASSETS)
    github_server.fail(status=502, times=3)
    with _client(github_server) as client:
        assert client.get_release("acme", "hello", None).tag == "v1.0.0"
    assert len(github_server.requests) == 4


def test_retries_are_bounded(github_server: GitHubServer) -> None:
    github_server.publish("acme", "hello", "v1.0.0", ASSETS)
    github_server.fail(status=503, times=None)
    with _client(github_server) as client, pytest.raises(NexoError) as caught:
        client.get_release("acme", "hello", None)
    assert caught.value.kind == "network"
    assert "503" in caught.value.message
    assert len(github_server.requests) == 4


def _delays(server: GitHubServer) -> list[float]:
    delays: list[float] = []
    client = GitHubClient(server.url, retry_base_delay=0.5, sleep=delays.append)
    with client, pytest.raises(NexoError):
        client.get_release("acme", "hello", None)
    return delays


def test_backoff_grows_exponentially_with_jitter(github_server: GitHubServer) -> None:
    github_server.fail(status=500, times=None)
    first, second = _delays(github_server), _delays(github_server)
    for delays in (first, second):
        assert len(delays) == 3
        # Each pause is drawn from the upper half of 0.5 s, 1 s, 2 s.
        for delay, nominal in zip(delays, (0.5, 1.0, 2.0), strict=True):
            assert nominal / 2 <= delay <= nominal
    # Clients that failed together do not come back in step.
    assert first != second


# A name longer than DNS allows (253 characters): the resolver refuses it locally, without
# sending a query anywhere, as it refuses any name that does not exist.
UNRESOLVABLE = ".".join(["a" * 60] * 5)


def test_dns_failure_is_not_retried() -> None:
    delays: list[float] = []
    client = GitHubClient(f"http://{UNRESOLVABLE}:8080", sleep=delays.append)
    with client, pytest.raises(NexoError) as caught:
        client.get_release("acme", "hello", None)
    assert caught.value.kind == "network"
    assert "resolve" in caught.value.message
    assert "attempts" not in caught.value.message
    assert delays == []


@pytest.mark.parametrize("status", [403, 429])
def test_rate_limit_names_reset_time_and_token_variables(
    github_server: GitHubServer, status: int
) -> None:
    github_server.rate_limit(status=status, reset=1_900_000_000)
    with _client(github_server) as client, pytest.raises(NexoError) as caught:
        client.get_release("acme", "hello", None)
    error = caught.value
    assert error.kind == "rate_limited"
    assert "2030-03-17T17:46:40Z" in error.message
    # The loopback API is not github.com: the variables named are the enterprise ones.
    for variable in ("NEXO_GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"):
        assert variable in error.message
    assert error.details["reset_at"] == "2030-03-17T17:46:40Z"
    assert len(github_server.requests) == 1  # a rate limit is not retried


def test_retry_after_wins(github_server: GitHubServer) -> None:
    github_server.rate_limit(status=429, retry_after=120)
    with _client(github_server) as client, pytest.raises(NexoError) as caught:
        client.get_release("acme", "hello", None)
    assert caught.value.details["retry_after"] == 120


def test_plain_forbidden_is_network(github_server: GitHubServer) -> None:
    github_server.fail(status=403)
    with _client(github_server) as client, pytest.raises(NexoError) as caught:
        client.get_release("acme", "hello", None)
    assert caught.value.kind == "network"


def test_connection_refused_is_network_after_retries() -> None:
    client = GitHubClient("http://127.0.0.1:9", retry_base_delay=0.001)
    with client, pytest.raises(NexoError) as caught:
        client.get_release("acme", "hello", None)
    assert caught.value.kind == "network"


def test_slow_server_times_out(github_server: GitHubServer) -> None:
    github_server.publish("acme", "hello", "v1.0.0", ASSETS)
    github_server.slow(1.0, times=None)
    client = GitHubClient(github_server.url, retries=1, retry_base_delay=0.001, read_timeout=0.2)
    with client, pytest.raises(NexoError) as caught:
        client.get_release("acme", "hello", None)
    assert caught.value.kind == "network"
    # In words, naming the host: not httpx's ReadTimeout.
    assert "stopped sending the answer (timed out)" in caught.value.message
    assert github_server.url.removeprefix("http://") in caught.value.message
    assert "Timeout" not in caught.value.message
    assert len(github_server.requests) == 2


def test_deadline_covers_every_attempt(github_server: GitHubServer) -> None:
    github_server.publish("acme", "hello", "v1.0.0", ASSETS)
    github_server.slow(1.0, times=None)
    client = GitHubClient(github_server.url, retries=5, retry_base_delay=0.001, timeout=0.5)
    started = time.monotonic()
    with client, pytest.raises(NexoError) as caught:
        client.get_release("acme", "hello", None)
    assert time.monotonic() - started < 1.0
    assert caught.value.kind == "network"
    assert "0.5 s" in caught.value.message
    assert len(github_server.requests) == 1


def _download(server: GitHubServer, tmp_path: Path, token: str | None = None) -> bytes:
    release = server.releases[("acme", "hello")][-1]
    with _client(server, token) as client:
        asset = client.get_release("acme", "hello", release.tag).asset(TARBALL)
        assert asset is not None
        with BlobCache(tmp_path).open_blob(
            None, lambda sink: client.download(asset, sink, max_bytes=10**8)
        ) as blob:
            return blob.read_bytes()


@pytest.mark.parametrize("fault", ["drop", "wrong_length_long", "status"])
def test_download_retries_broken_transfers(
    github_server: GitHubServer, tmp_path: Path, fault: str
) -> None:
    github_server.publish("acme", "hello", "v1.0.0", ASSETS)
    if fault == "drop":
        github_server.drop_connection(times=2, path_contains="/assets/")
    elif fault == "wrong_length_long":
        github_server.wrong_content_length(+100, times=2, path_contains="/assets/")
    else:
        github_server.fail(status=500, times=2, path_contains="/assets/")
    assert _download(github_server, tmp_path) == ASSETS[TARBALL]
    assert len(github_server.requests_to("/assets/")) == 3


def test_download_failure_leaves_no_temp_file(github_server: GitHubServer, tmp_path: Path) -> None:
    github_server.publish("acme", "hello", "v1.0.0", ASSETS)
    github_server.drop_connection(times=None, path_contains="/assets/")
    with pytest.raises(NexoError) as caught:
        _download(github_server, tmp_path)
    assert caught.value.kind == "network"
    assert [path.name for path in (tmp_path / "cache").rglob("*") if path.is_file()] == [".lock"]


def test_download_size_cap(github_server: GitHubServer, tmp_path: Path) -> None:
    github_server.publish("acme", "hello", "v1.0.0", ASSETS)
    with _client(github_server) as client:
        asset = client.get_release("acme", "hello", None).asset(TARBALL)
        assert asset is not None
        blobs = BlobCache(tmp_path)
        with (
            pytest.raises(NexoError) as caught,
            cached_asset(client, asset, blobs, digest=_SHA256, max_bytes=100),
        ):
            pass
    assert caught.value.kind == "archive_unsafe"
    assert not any((tmp_path / "cache").glob("*"))


def test_download_uses_api_url_with_octet_stream(
    github_server: GitHubServer, tmp_path: Path
) -> None:
    github_server.publish("acme", "hello", "v1.0.0", ASSETS)
    _download(github_server, tmp_path, token=TEST_TOKEN)
    (request,) = github_server.requests_to("/assets/")
    assert request.headers["accept"] == "application/octet-stream"
    assert request.headers["authorization"] == "Bearer s3cret"


def test_token_is_stripped_on_cross_host_redirect(
    github_server: GitHubServer, asset_host: BlobServer, tmp_path: Path
) -> None:
    github_server.publish("acme", "hello", "v1.0.0", ASSETS)
    github_server.redirect_assets_to(asset_host)
    assert _download(github_server, tmp_path, token=TEST_TOKEN) == ASSETS[TARBALL]
    (api_request,) = github_server.requests_to("/assets/")
    assert api_request.headers["authorization"] == "Bearer s3cret"
    (blob_request,) = asset_host.requests
    assert "authorization" not in blob_request.headers
    assert blob_request.headers["accept"] == "application/octet-stream"


def test_api_base_and_token_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("NEXO_GITHUB_API_BASE", "GITHUB_API_URL", "NEXO_GITHUB_TOKEN", "GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    for name in ("GH_TOKEN", "GH_HOST", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GH_CONFIG_DIR", str(tmp_path / "no-gh-login"))
    assert resolve_api_base(None) == "https://api.github.com"
    monkeypatch.setenv("GITHUB_API_URL", "https://ghe.example/api/v3/")
    assert resolve_api_base(None) == "https://ghe.example/api/v3"
    monkeypatch.setenv("NEXO_GITHUB_API_BASE", "http://127.0.0.1:1")
    assert resolve_api_base(None) == "http://127.0.0.1:1"
    assert resolve_api_base("http://127.0.0.1:2") == "http://127.0.0.1:2"
    with pytest.raises(NexoError) as caught:
        resolve_api_base("ftp://x")
    assert caught.value.exit_code == 2
    assert resolve_token("https://api.github.com") is None
    monkeypatch.setenv("GH_TOKEN", "c")
    monkeypatch.setenv("GITHUB_TOKEN", "b")
    assert resolve_token("https://api.github.com") == "b"
    monkeypatch.setenv("NEXO_GITHUB_TOKEN", "a")
    assert resolve_token("https://api.github.com") == "a"


@pytest.mark.parametrize(
    "suffix", ["?per_page=1", "#top", "/api/v3?x=1"], ids=["query", "fragment", "path-query"]
)
@pytest.mark.parametrize("where", ["flag", "env"])
def test_an_api_base_with_a_query_or_fragment_is_a_configuration_error(
    tmp_path: Path, github_server: GitHubServer, suffix: str, where: str
) -> None:
    """An API base with a query or fragment would be glued in front of every request path
    (``/?x=1/repos/…``): a configuration error (exit 2, SPEC §1), before any request."""
    github_server.publish("acme", "hello", "v1.0.0", ASSETS)
    base = github_server.url + suffix
    flags = ["--github-api-url", base] if where == "flag" else []
    env = stand_in_env(tmp_path / "home", base if where == "env" else github_server.url)
    dest = tmp_path / "dest"
    result = nexo("plugin", "install", "acme/hello", "--dest", dest, "--yes", "--json", *flags,
                  env=env)  # fmt: skip
    assert (result.code, result.document["kind"]) == (2, "usage"), result.stderr
    assert "is not an http(s) URL" in result.document["error"]
    assert github_server.requests == []
    assert not dest.exists()


@pytest.mark.parametrize("base", [" {url}", "{url}\t", "{url}/api\n/v3"])
def test_an_api_base_with_blanks_or_control_characters_is_a_usage_error(
    github_server: GitHubServer, base: str
) -> None:
    """urlsplit drops blanks and C0 characters from the ends of a URL (and tabs and line
    feeds from anywhere), so an API base read from a carelessly written variable looked valid,
    then failed every request as a network error (exit 1): it is a usage error (exit 2)."""
    with pytest.raises(NexoError) as caught:
        resolve_api_base(base.format(url=github_server.url))
    assert (caught.value.kind, caught.value.exit_code) == ("usage", 2)
    assert "is not an http(s) URL" in str(caught.value)


def test_private_repository_needs_the_token(
    install_env: InstallEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = install_env.server
    server.publish("acme", "hello", "v1.0.0", ASSETS)
    server.require_token("s3cret")
    with _client(server) as client, pytest.raises(NexoError) as caught:
        client.get_release("acme", "hello", None)
    assert caught.value.kind == "release_not_found"
    monkeypatch.setenv("GH_ENTERPRISE_TOKEN", "s3cret")
    with _client(server, resolve_token(server.url)) as client:
        assert client.get_release("acme", "hello", None).tag == "v1.0.0"


def test_a_download_is_shown_through_the_progress_callable(
    github_server: GitHubServer, tmp_path: Path
) -> None:
    """The progress callable is opened with the asset's name, told the bytes as they arrive,
    and closed before the blob is handed over; a cached blob is shown too, with no bytes."""
    github_server.publish("acme", "hello", "v1.0.0", ASSETS)
    opened: list[str] = []
    closed: list[str] = []
    told: list[tuple[int, int | None]] = []

    @contextlib.contextmanager
    def progress(name: str) -> Iterator[Callable[[int, int | None], None]]:
        opened.append(name)
        yield lambda done, total: told.append((done, total))
        closed.append(name)

    size = len(ASSETS[TARBALL])
    with _client(github_server) as client:
        asset = client.get_release("acme", "hello", None).asset(TARBALL)
        assert asset is not None
        blobs = BlobCache(tmp_path)
        fetch = functools.partial(
            cached_asset, client, asset, blobs, digest=_SHA256, max_bytes=10**8, progress=progress
        )
        with fetch() as blob:
            assert closed == [TARBALL]  # gone before the blob is used
            assert blob.read_bytes() == ASSETS[TARBALL]
        assert told[-1] == (size, size)
        assert [done for done, _ in told] == sorted(done for done, _ in told)
        told.clear()
        with fetch() as blob:
            assert blob.read_bytes() == ASSETS[TARBALL]
    assert opened == closed == [TARBALL, TARBALL]
    assert told == []  # the second time the blob came from the cache
