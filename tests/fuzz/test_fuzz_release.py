"""Property: any answer to the release API becomes a Release and an asset choice, or a typed
failure; served over real HTTP on loopback to the real client."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from support.http_kit import OneAnswerServer, Reply

from nexo_pkg.install.manifest_check import manifest_asset_problem
from nexo_pkg.sources.github import GitHubClient
from nexo_pkg.sources.select import choose_asset, parse_tarball_name, release_identity

from .strategies import attempt, release_documents

JSON = {"Content-Type": "application/json"}
TRIPLES = ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-musl")


@pytest.fixture(scope="module")
def release_server() -> Iterator[OneAnswerServer]:
    with OneAnswerServer(protocol="HTTP/1.0") as server:
        yield server


def _check(server: OneAnswerServer, document: Any) -> None:
    server.reply = Reply(200, json.dumps(document).encode(), JSON)
    api = server.url
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
def test_release_answers_are_handled(release_server: OneAnswerServer, document: Any) -> None:
    _check(release_server, document)


@pytest.mark.slow
@settings(max_examples=10_000)
@given(document=release_documents())
def test_release_answers_are_handled_at_scale(
    release_server: OneAnswerServer, document: Any
) -> None:
    _check(release_server, document)


def test_assets_not_a_list(release_server: OneAnswerServer) -> None:
    _check(release_server, {"tag_name": "v1.0.0", "assets": True})
