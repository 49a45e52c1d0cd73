"""The one retry policy of :mod:`nexo_pkg.net.client`: ``Retry-After`` (seconds or an
HTTP-date) honoured and capped, jittered exponential backoff, and no retry on a name that does
not resolve or on a refusal of policy. The CLI tests run against the real ``docker-registry``
behind a loopback proxy that answers 503 with a ``Retry-After``."""

from __future__ import annotations

import datetime as dt
import email.utils
import socket
import time
from pathlib import Path

import httpx
import pytest
from support.cli import nexo
from support.github_server import Fault, GitHubServer, github_server
from support.registry import Registry
from support.registry_proxy import RegistryProxy
from support.tarballs import release_assets

from nexo_pkg.core.errors import NexoError, UsageError
from nexo_pkg.net.client import (
    MAX_RETRY_AFTER_SECONDS,
    MAX_RETRY_DELAY_SECONDS,
    HttpClient,
    Retryable,
    backoff_delay,
    is_retryable,
    parse_retry_after,
    retry_base_delay_from_env,
)
from nexo_pkg.sources.github import GitHubClient

from .conftest import installed, publish, unsigned_dist

__all__ = ["github_server"]

NOW = dt.datetime(2026, 11, 26, 3, 0, 0, tzinfo=dt.UTC)


def _dns_failure() -> httpx.ConnectError:
    """What the transport raises when ``getaddrinfo`` fails: the resolver's error as cause."""
    error = httpx.ConnectError("[Errno -2] Name or service not known")
    error.__cause__ = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return error


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("7", 7.0),
        (" 120 ", 120.0),
        ("Thu, 26 Nov 2026 03:00:30 GMT", 30.0),
        ("Wed, 25 Nov 2026 03:00:00 GMT", 0.0),  # a moment already past: no wait
        (None, None),
        ("soon", None),
        ("-5", None),
        ("1" * 11, None),
    ],
)
def test_retry_after_is_read_as_seconds_or_an_http_date(
    header: str | None, seconds: float | None
) -> None:
    assert parse_retry_after(header, NOW) == seconds


def test_retry_after_is_honoured_and_capped() -> None:
    for attempt in range(6):
        assert 2.0 <= backoff_delay(attempt, 0.001, retry_after=2.0) <= MAX_RETRY_DELAY_SECONDS
        assert backoff_delay(attempt, 0.001, retry_after=86400.0) == MAX_RETRY_AFTER_SECONDS
        plain = backoff_delay(attempt, 0.5)
        nominal = min(0.5 * 2**attempt, MAX_RETRY_DELAY_SECONDS)
        assert nominal / 2 <= plain <= nominal


def test_a_name_that_does_not_resolve_is_not_retried() -> None:
    assert not is_retryable(_dns_failure())
    assert is_retryable(httpx.ConnectError("[Errno 111] Connection refused"))
    assert not is_retryable(httpx.UnsupportedProtocol("ftp"))
    assert not is_retryable(NexoError("refused redirect", kind="network"))
    slept: list[float] = []
    with HttpClient(retries=3, retry_base_delay=0.001, sleep=slept.append) as client:
        attempts: list[int] = []

        def resolve() -> None:
            attempts.append(1)
            raise client.failure(_dns_failure(), "a document")

        with pytest.raises(NexoError) as caught:
            client.with_retries(resolve)
        assert caught.value.kind == "network"
        assert "cannot resolve the host name" in caught.value.message
        assert attempts == [1]
        assert slept == []

        def refused() -> None:
            attempts.append(1)
            raise client.failure(httpx.ConnectError("[Errno 111] Connection refused"), "a doc")

        attempts.clear()
        with pytest.raises(NexoError, match="gave up after 4 attempts"):
            client.with_retries(refused)
        assert len(attempts) == 4
        assert len(slept) == 3


def test_the_retry_loop_waits_what_the_server_asks() -> None:
    slept: list[float] = []
    with HttpClient(retries=2, retry_base_delay=0.001, sleep=slept.append) as client:
        answers = iter([Retryable("busy", retry_after=3.0), Retryable("busy", 900.0)])

        def operation() -> str:
            failure = next(answers, None)
            if failure is not None:
                raise failure
            return "done"

        assert client.with_retries(operation) == "done"
    assert slept[0] >= 3.0
    assert slept[1] == MAX_RETRY_AFTER_SECONDS


def test_a_registry_s_retry_after_is_honoured(
    tmp_path: Path, net_env: dict[str, str], registry: Registry
) -> None:
    """A 503 with ``Retry-After: 2`` is asked again two seconds later, not at the backoff's
    millisecond (``NEXO_HTTP_RETRY_BASE_MS=1``)."""
    publish(unsigned_dist(tmp_path / "dist"), registry.ref("plugins/echo:1.2.3"), tmp_path / "h")
    proxy = RegistryProxy(registry.host, retry_after="2").start()
    proxy.fail("GET", "/manifests/1.2.3", 503, times=1)
    dest = tmp_path / "plugins"
    try:
        result = nexo(
            "plugin",
            "install",
            proxy.ref("plugins/echo:1.2.3"),
            "--dest",
            str(dest),
            "--plain-http",
            "--yes",
            "--json",
            env=net_env,
            in_process=True,
        )
    finally:
        proxy.stop()
    assert result.code == 0, result.stdout + result.stderr
    asked = [moment for method, path, moment in proxy.arrivals if path.endswith("/1.2.3")]
    assert len(asked) >= 2
    assert asked[1] - asked[0] >= 1.9
    assert installed(dest) == ["echo-1.2.3"]


def test_a_retry_after_past_the_deadline_is_not_waited_for(
    tmp_path: Path, net_env: dict[str, str], registry: Registry
) -> None:
    """A day's ``Retry-After`` is capped, and a pause the deadline cannot hold is not taken:
    the install ends at once, ``network``, nothing installed."""
    publish(unsigned_dist(tmp_path / "dist"), registry.ref("plugins/echo:1.2.3"), tmp_path / "h")
    proxy = RegistryProxy(registry.host, retry_after="86400").start()
    proxy.fail("GET", "/manifests/1.2.3", 503, times=None)
    dest = tmp_path / "plugins"
    started = time.monotonic()
    try:
        result = nexo(
            "plugin",
            "install",
            proxy.ref("plugins/echo:1.2.3"),
            "--dest",
            str(dest),
            "--plain-http",
            "--yes",
            "--json",
            "--timeout",
            "20",
            env=net_env,
            in_process=True,
        )
    finally:
        proxy.stop()
    elapsed = time.monotonic() - started
    assert result.code == 1, result.stdout + result.stderr
    assert result.document["kind"] == "network"
    assert "503" in result.document["error"]
    assert proxy.count("GET", "/manifests/1.2.3", 503) == 1
    assert elapsed < 15
    assert installed(dest) == []


def test_github_s_retry_after_date_is_honoured(github_server: GitHubServer) -> None:
    """A 503 whose ``Retry-After`` is an HTTP-date three seconds ahead: the pause before the
    next attempt lasts until then, not the backoff's millisecond."""
    github_server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    when = email.utils.format_datetime(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=3), True)
    github_server.add_fault(
        Fault("status", 1, "/releases/", status=503, headers={"Retry-After": when})
    )
    slept: list[float] = []
    with GitHubClient(github_server.url, retry_base_delay=0.001, sleep=slept.append) as client:
        release = client.get_release("acme", "hello", "v1.0.0")
    assert release.tag == "v1.0.0"
    assert len(slept) == 1
    assert 1.0 <= slept[0] <= 4.0
    assert len(github_server.requests_to("/releases/")) == 2


@pytest.mark.parametrize("raw", ["nan", "NaN", "-5", "-0.5", "inf", "1e400", "five", ""])
def test_a_retry_base_that_is_no_pause_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv("NEXO_HTTP_RETRY_BASE_MS", raw)
    with pytest.raises(UsageError) as caught:
        retry_base_delay_from_env()
    assert caught.value.message == (
        f"NEXO_HTTP_RETRY_BASE_MS={raw!r} is not a number of milliseconds (0 or more)"
    )


@pytest.mark.parametrize(("raw", "seconds"), [("0", 0.0), ("1", 0.001), ("2.5", 0.0025)])
def test_a_retry_base_in_milliseconds_is_read(
    monkeypatch: pytest.MonkeyPatch, raw: str, seconds: float
) -> None:
    monkeypatch.setenv("NEXO_HTTP_RETRY_BASE_MS", raw)
    assert retry_base_delay_from_env() == seconds
