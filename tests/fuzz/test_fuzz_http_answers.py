"""Property: whatever bytes, content encoding and rate-limit headers a release lookup is
answered with, over real HTTP on 127.0.0.1, the real client returns a release or fails with
one typed error (``network``, ``rate_limited``, ``release_not_found``), never anything else."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.http_kit import OneAnswerServer, Reply

from nexo_pkg.sources.github import GitHubClient

from .strategies import attempt

JSON = {"Content-Type": "application/json"}
ENCODINGS = ("", "identity", "gzip", "x-gzip", "deflate", "br", "zstd", "gzip, gzip", "GZIP")


@pytest.fixture(scope="module")
def answer_server() -> Iterator[OneAnswerServer]:
    with OneAnswerServer() as server:
        yield server


def _encode(payload: bytes, encoding: str, mangle: bool) -> bytes:
    name = encoding.lower()
    if name in {"gzip", "x-gzip"}:
        payload = gzip.compress(payload)
    elif name == "deflate":
        payload = zlib.compress(payload)
    if mangle and payload:
        # Flip the last byte: a broken trailer, a cut stream or a wrong character.
        payload = payload[:-1] + bytes([payload[-1] ^ 0xFF])
    return payload


def _lookup(server: OneAnswerServer) -> tuple[Any, Any]:
    with GitHubClient(server.url, retries=0, retry_base_delay=0.0, timeout=5.0) as client:
        return attempt(lambda: client.get_release("owner", "repo", None))


payloads = st.one_of(
    st.binary(max_size=300),
    st.just(b'{"tag_name": "v1.0.0", "assets": []}'),
    st.integers(1, 3000).map(lambda depth: b"[" * depth + b"]" * depth),
    st.integers(1, 3000).map(lambda depth: b'{"tag_name": "v1", "assets": ' + b"[" * depth),
)


@given(payload=payloads, encoding=st.sampled_from(ENCODINGS), mangle=st.booleans())
def test_any_body_in_any_encoding_is_handled(
    answer_server: OneAnswerServer, payload: bytes, encoding: str, mangle: bool
) -> None:
    headers = {**JSON, "Content-Encoding": encoding} if encoding else JSON
    answer_server.reply = Reply(200, _encode(payload, encoding, mangle), headers)
    release, error = _lookup(answer_server)
    if release is None:
        assert error is not None
        assert error.kind == "network", error.message
        assert "\n" not in error.message


# Header values as the test server sends them: Latin-1 text, so any byte but CR and LF.
header_values = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
    max_size=60,
) | st.integers(-(10**30), 10**30).map(str)


@given(
    status=st.sampled_from([403, 429]),
    retry_after=st.none() | header_values,
    reset=st.none() | header_values,
)
def test_any_rate_limit_headers_are_rate_limited(
    answer_server: OneAnswerServer, status: int, retry_after: str | None, reset: str | None
) -> None:
    headers = {**JSON, "X-RateLimit-Remaining": "0"}
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    if reset is not None:
        headers["X-RateLimit-Reset"] = reset
    answer_server.reply = Reply(status, b'{"message": "API rate limit exceeded"}', headers)
    release, error = _lookup(answer_server)
    assert release is None
    assert error is not None
    assert error.kind == "rate_limited", error.message
    reset_at = error.details.get("reset_at")
    assert reset_at is None or reset_at.endswith("Z")
