"""Property: SOURCE is a GitHub source in GitHub's alphabet, a local file, or ``source_invalid``;
a sidecar or API digest is a sha256 or ``checksum_mismatch`` / absent."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nexo_pkg.sources.checksum import parse_digest, parse_sidecar
from nexo_pkg.sources.spec import GitHubSource, LocalSource, parse_source

from .strategies import attempt, install_sources

GITHUB_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")


def _check(text: str) -> None:
    source, error = attempt(lambda: parse_source(text))
    if source is None:
        assert error is not None
        assert error.kind == "source_invalid"
        return
    if isinstance(source, GitHubSource):
        for name in (source.owner, source.repo):
            assert GITHUB_NAME.match(name)
            assert ".." not in name
            assert not name.startswith("-")
        if source.tag is not None:
            assert source.tag
            assert "/" not in source.tag
            assert ".." not in source.tag
    else:
        assert isinstance(source, LocalSource)
        assert source.path.is_file()


@given(install_sources())
def test_parse_source_is_total(text: str) -> None:
    _check(text)


@pytest.mark.slow
@settings(max_examples=10_000)
@given(install_sources())
def test_parse_source_is_total_at_scale(text: str) -> None:
    _check(text)


@given(
    st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode)),
    st.sampled_from(["p-1.0.0-noarch.tar.gz", "a b.tar.gz", ""]),
)
def test_sidecar_parse_is_total(raw: bytes, asset_name: str) -> None:
    digest, error = attempt(lambda: parse_sidecar(raw, asset_name))
    if digest is None:
        assert error is not None
        assert error.kind == "checksum_mismatch"
    else:
        assert HEX64.match(digest)


@given(st.one_of(st.none(), st.text(max_size=80), st.just("sha256:" + "A" * 64)))
def test_api_digest_parse_is_total(text: str | None) -> None:
    digest = parse_digest(text)
    assert digest is None or HEX64.match(digest)


def test_tilde_of_unknown_user() -> None:
    source, error = attempt(lambda: parse_source("~no-such-user-nexo/p.tar.gz"))
    assert source is None
    assert error is not None
    assert error.kind == "source_invalid"


def test_overlong_source() -> None:
    source, error = attempt(lambda: parse_source("y" * 300))
    assert source is None
    assert error is not None
    assert error.kind == "source_invalid"
