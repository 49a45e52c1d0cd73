"""A hostile API answers the release lookup: with a gzip bomb, an oversized or deeply nested
document, absurd rate-limit headers, redirects to other schemes and impossible ports, or a
body or headers dripped one byte at a time. Every case ends in one line with its kind (and one
JSON document), in bounded time and memory, and ``NEXO_HOME`` is left exactly as it was."""

from __future__ import annotations

import gzip
import json
import socket
import time
import zlib

import pytest
from adversarial.harness import snapshot
from support.cli import nexo
from support.github_server import Fault
from support.tarballs import plugin_tarball, release_assets

from .hostile import GIB, gzip_bomb, nested_release
from .server import faulty_server
from .workspace import PLUGIN, Setup, setup

__all__ = ["faulty_server", "setup"]

TOKEN = "loopback-token-5678"  # noqa: S105 (a test value sent only to 127.0.0.1)
RELEASE = "/releases/latest"
MIB = 1024 * 1024


def _release_body(setup: Setup, padding: int = 0) -> bytes:
    status, body, _, _ = setup.server.route(None, "/repos/acme/hello/releases/latest", {})  # type: ignore[arg-type]
    assert status == 200
    if not padding:
        return body
    document = json.loads(body)
    document["body"] = "x" * padding
    return json.dumps(document).encode()


# -- size caps, before and after content decoding ---------------------------------------------


def test_gzip_bomb_release_json_is_refused_in_bounded_memory(setup: Setup) -> None:
    bomb = gzip_bomb(GIB)
    assert len(bomb) < 1.1 * MIB
    setup.server.override_release_body(bomb, {"Content-Encoding": "gzip"})
    # A client that inflates the whole answer needs more than a gigabyte and hits the limit.
    measured, elapsed = setup.install_measured(address_space_limit=GIB)
    setup.assert_refused(measured.result, "network")
    assert "MiB" in measured.result.document["error"]
    assert measured.peak_rss_bytes < 200 * MIB, measured.peak_rss_bytes
    assert elapsed < 30
    # Refused outright: a bomb is not worth another attempt.
    assert len(setup.server.requests_to(RELEASE)) == 1


def test_release_json_over_the_cap_on_the_wire_is_refused(setup: Setup) -> None:
    setup.server.override_release_body(_release_body(setup, padding=17 * MIB))
    result, elapsed = setup.install()
    setup.assert_refused(result, "network")
    assert elapsed < 30


def test_release_json_over_the_cap_once_decoded_is_refused(setup: Setup) -> None:
    # 17 MiB of JSON that gzip shrinks to a few kilobytes: only the decoded size is over.
    compressed = gzip.compress(_release_body(setup, padding=17 * MIB))
    assert len(compressed) < MIB
    setup.server.override_release_body(compressed, {"Content-Encoding": "gzip"})
    result, _ = setup.install()
    setup.assert_refused(result, "network")


def test_release_json_in_an_unknown_encoding_is_refused(setup: Setup) -> None:
    setup.server.override_release_body(b"\x00" * 64, {"Content-Encoding": "br"})
    result, _ = setup.install()
    setup.assert_refused(result, "network")


def test_deflate_encoded_release_json_is_decoded(setup: Setup) -> None:
    setup.server.override_release_body(
        zlib.compress(_release_body(setup)),
        {"Content-Encoding": "deflate"},
    )
    result, _ = setup.install()
    setup.assert_installed(result)


# -- malformed documents ----------------------------------------------------------------------


def test_deeply_nested_release_json_is_one_line(setup: Setup) -> None:
    setup.server.override_release_body(nested_release(100_000))
    result, elapsed = setup.install()
    setup.assert_refused(result, "network")
    assert "nested" in result.document["error"]
    assert elapsed < 30


def test_release_json_with_a_huge_number_is_one_line(setup: Setup) -> None:
    body = b'{"tag_name": "v1.0.0", "assets": [], "id": ' + b"9" * 5000 + b"}"
    setup.server.override_release_body(body)
    result, _ = setup.install()
    setup.assert_refused(result, "network")
    # In words of the answer: the number and the limit, not Python's advice to raise it.
    assert result.document["error"].endswith(
        "the answer is not JSON (a number of 5000 digits, more than the 4300 a number may have)"
    ), result.document["error"]


# -- rate-limit headers ---------------------------------------------------------------------


def _utf8_on_the_wire(text: str) -> str:
    """``text`` as the test server must be given it to send its UTF-8 bytes (it writes
    headers as Latin-1)."""
    return text.encode().decode("latin-1")


HEADER_CASES = {
    "retry-after-5000-digits": {"Retry-After": "9" * 5000},
    "reset-5000-digits": {"X-RateLimit-Reset": "9" * 5000},
    "reset-past-year-9999": {"X-RateLimit-Reset": "99999999999999999999"},
    "retry-after-past-year-9999": {"Retry-After": "99999999999999"},
    "retry-after-superscripts": {"Retry-After": "²³"},
    # Arabic-Indic and full-width digits, sent as their UTF-8 bytes.
    "retry-after-arabic-digits": {"Retry-After": _utf8_on_the_wire("\u0661\u0662\u0660")},
    "reset-fullwidth-digits": {"X-RateLimit-Reset": _utf8_on_the_wire("\uff11\uff12\uff13")},
    "reset-negative": {"X-RateLimit-Reset": "-99999999999999"},
    "reset-float": {"X-RateLimit-Reset": "1e400"},
}


@pytest.mark.parametrize("headers", HEADER_CASES.values(), ids=HEADER_CASES.keys())
def test_absurd_rate_limit_headers_are_rate_limited(setup: Setup, headers: dict[str, str]) -> None:
    extra = {"X-RateLimit-Remaining": "0", **headers}
    setup.server.add_fault(
        Fault("rate_limit", None, RELEASE, status=403, headers=extra)  # every time
    )
    result, _ = setup.install()
    setup.assert_refused(result, "rate_limited")
    # An unusable time is not shown as one.
    assert "resets later" in result.document["error"]
    assert "reset_at" not in result.document


def test_plausible_reset_time_is_still_shown(setup: Setup) -> None:
    setup.server.rate_limit(status=429, reset=1_900_000_000, times=None, path_contains=RELEASE)
    result, _ = setup.install()
    setup.assert_refused(result, "rate_limited")
    assert result.document["reset_at"] == "2030-03-17T17:46:40Z"


# -- redirects the client must not follow ---------------------------------------------------

REDIRECT_TARGETS = {
    "data-url": "data:text/plain,hello",
    "file-url": "file:///etc/passwd",
    "port-99999": "http://127.0.0.1:99999",
    "port-0": "http://127.0.0.1:0",
    "no-host": "https://",
    "bad-ipv6": "http://[::1",
    "ftp": "ftp://127.0.0.1",
    "control-characters": "http://127.0.0.1\x1b[31m",
}


@pytest.mark.parametrize("target", REDIRECT_TARGETS.values(), ids=REDIRECT_TARGETS.keys())
def test_redirect_to_an_unusable_url_with_a_token_is_network(setup: Setup, target: str) -> None:
    setup.server.redirect_releases_to(target)
    result, elapsed = setup.install(token=TOKEN)
    setup.assert_refused(result, "network")
    assert "redirect" in result.document["error"]
    assert "\x1b" not in result.stdout + result.stderr
    assert elapsed < 30
    # A redirect that can never work is not retried.
    assert len(setup.server.requests_to(RELEASE)) == 1


# -- total deadline per request -------------------------------------------------------------


def test_body_dripped_one_byte_at_a_time_is_cut_off_at_the_timeout(setup: Setup) -> None:
    # One byte every 0.2 s never trips a per-read timeout; only a total deadline ends it.
    setup.server.throttle(RELEASE, 5)
    result, elapsed = setup.install("--timeout", "2")
    setup.assert_refused(result, "network")
    assert "2 s" in result.document["error"]
    assert 1.5 < elapsed < 6


def test_asset_dripped_one_byte_at_a_time_is_cut_off_by_the_variable(setup: Setup) -> None:
    setup.server.throttle(setup.tarball_path, 5)
    # In a subprocess: a client without a deadline would outlive the test.
    measured, elapsed = setup.install_measured(env={"NEXO_HTTP_TIMEOUT": "2"}, timeout=60)
    setup.assert_refused(measured.result, "network")
    assert 1.5 < elapsed < 15


def test_headers_dripped_one_byte_at_a_time_are_cut_off_at_the_timeout(setup: Setup) -> None:
    setup.server.drip_headers(RELEASE, 0.2)
    measured, elapsed = setup.install_measured("--timeout", "2", timeout=60)
    setup.assert_refused(measured.result, "network")
    assert 1.5 < elapsed < 15


def test_slow_answers_to_every_request_cannot_add_up_past_the_timeout(setup: Setup) -> None:
    # Each answer alone comes well within the deadline; an install makes several requests
    # (release, sidecar, tarball, attestations), and together they must still end at it.
    setup.server.slow(0.9)
    result, elapsed = setup.install("--timeout", "2")
    setup.assert_refused(result, "network")
    assert "2 s deadline for the whole command" in result.document["error"]
    assert 1.5 < elapsed < 4
    assert len(setup.server.requests) >= 2


def test_slow_answers_add_up_past_the_variable_in_an_upgrade_too(setup: Setup) -> None:
    installed, _ = setup.install()
    setup.assert_installed(installed)
    before = snapshot(setup.home)
    setup.server.publish(
        "acme",
        PLUGIN,
        "v2.0.0",
        release_assets(PLUGIN, "2.0.0", data=plugin_tarball(PLUGIN, "2.0.0")),
    )
    setup.server.slow(0.9)
    _assert_upgrade_cut_off(setup, before, 4, env={"NEXO_HTTP_TIMEOUT": "2"})


def _assert_upgrade_cut_off(
    setup: Setup, before: object, limit: float, *extra: str, env: dict[str, str] | None = None
) -> None:
    """``upgrade`` ends in ``network`` between 1.5 s and ``limit`` and changes nothing."""
    started = time.monotonic()
    args = ["plugin", "upgrade", PLUGIN, "--dest", str(setup.dest), "--yes", "--json", *extra]
    result = nexo(*args, env=setup.env(**(env or {})), in_process=True)
    elapsed = time.monotonic() - started
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert result.document["kind"] == "network"
    assert 1.5 < elapsed < limit
    assert snapshot(setup.home) == before


def test_a_tls_handshake_that_never_comes_is_cut_off_at_the_timeout(setup: Setup) -> None:
    # An https API host that accepts the connection and then says nothing.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        result, elapsed = setup.install(
            "--timeout", "2", env={"NEXO_GITHUB_API_BASE": f"https://127.0.0.1:{port}"}
        )
    setup.assert_refused(result, "network")
    assert 1.5 < elapsed < 5


def test_the_flag_wins_over_the_variable(setup: Setup) -> None:
    setup.server.throttle(RELEASE, 5)
    result, elapsed = setup.install("--timeout", "1", env={"NEXO_HTTP_TIMEOUT": "600"})
    setup.assert_refused(result, "network")
    assert elapsed < 5


@pytest.mark.parametrize("value", ["0", "-1", "abc", "nan", "inf", "1e400"])
def test_bad_timeouts_are_usage_errors(setup: Setup, value: str) -> None:
    result, _ = setup.install(f"--timeout={value}")
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert setup.server.requests == []
    setup.assert_untouched()
    from_env, _ = setup.install(env={"NEXO_HTTP_TIMEOUT": value})
    assert from_env.exit_code == 2, (from_env.stdout, from_env.stderr)
    assert from_env.document["kind"] == "usage"
    assert "NEXO_HTTP_TIMEOUT" in from_env.document["error"]
    assert setup.server.requests == []
    setup.assert_untouched()


def test_a_generous_timeout_installs(setup: Setup) -> None:
    result, _ = setup.install("--timeout", "60", env={"NEXO_HTTP_TIMEOUT": "1"})
    setup.assert_installed(result)


def test_upgrade_is_cut_off_at_the_timeout_too(setup: Setup) -> None:
    installed, _ = setup.install()
    setup.assert_installed(installed)
    before = snapshot(setup.home)
    setup.server.throttle(RELEASE, 5)
    _assert_upgrade_cut_off(setup, before, 6, "--timeout", "2")


def test_trust_add_is_cut_off_at_the_timeout_too(setup: Setup) -> None:
    policy = setup.home / "trusted_keys.toml"
    policy.write_text('schema_version = "1.0"\ndefault = "warn"\n')
    before = snapshot(setup.home)
    setup.server.throttle(RELEASE, 5)
    args = ["plugin", "trust", "add", f"acme/{PLUGIN}", "--trusted-keys", str(policy)]
    started = time.monotonic()
    result = nexo(*args, "--yes", "--json", "--timeout", "2", env=setup.env(), in_process=True)
    elapsed = time.monotonic() - started
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert result.document["kind"] == "network"
    assert 1.5 < elapsed < 6
    assert snapshot(setup.home) == before


def test_an_api_host_that_does_not_resolve_is_one_quick_line(setup: Setup) -> None:
    # Longer than DNS allows: the resolver refuses it locally, as it would an unknown name.
    host = ".".join(["a" * 60] * 5)
    result, elapsed = setup.install(
        env={"NEXO_GITHUB_API_BASE": f"http://{host}:8080", "NEXO_HTTP_RETRY_BASE_MS": "2000"}
    )
    setup.assert_refused(result, "network")
    assert "resolve" in result.document["error"]
    # Not retried: three pauses of this backoff would take at least 3.5 s.
    assert elapsed < 3


@pytest.mark.parametrize("seconds", ["9223372036", "9223372037", "1e20", "1e300"])
@pytest.mark.parametrize("where", ["flag", "env"])
def test_a_deadline_past_what_the_clock_can_wait_installs_without_a_traceback(
    setup: Setup, seconds: str, where: str
) -> None:
    """A finite timeout is taken however large: beyond what a thread can wait for
    (``threading.TIMEOUT_MAX``, about 292 years) the watchdog waits in steps it can."""
    extra = ("--timeout", seconds) if where == "flag" else ()
    env = setup.env(**({"NEXO_HTTP_TIMEOUT": seconds} if where == "env" else {}))
    result = nexo(*setup.args(*extra), env=env)
    assert "Traceback" not in result.stderr, result.stderr
    assert "Exception in thread" not in result.stderr, result.stderr
    setup.assert_installed(result)
