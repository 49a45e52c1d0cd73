"""Fixtures for install tests: an isolated NEXO_HOME, the loopback GitHub server, helpers."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.cli import ENV_TO_CLEAR
from support.github_server import GitHubServer, asset_host, github_server
from support.tarballs import tree_snapshot

from nexo_pkg.core.errors import NexoError
from nexo_pkg.install.pipeline import NO_CALLBACKS, InstallCallbacks, InstallOptions, install

__all__ = ["InstallEnv", "assert_refused", "asset_host", "github_server", "install_env"]


@dataclass
class InstallEnv:
    """Paths of one isolated install environment."""

    home: Path
    dest: Path
    cache: Path
    server: GitHubServer
    make_options: Callable[..., InstallOptions]


@pytest.fixture
def install_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github_server: GitHubServer
) -> InstallEnv:
    """NEXO_HOME under tmp, the API base pointing at the loopback server, 1 ms backoff."""
    for name in ENV_TO_CLEAR:
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "nexo-home"
    monkeypatch.setenv("NEXO_HOME", str(home))
    monkeypatch.setenv("NEXO_GITHUB_API_BASE", github_server.url)
    monkeypatch.setenv("NEXO_HTTP_RETRY_BASE_MS", "1")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    # gh, when installed, is logged in nowhere (never the developer's own login).
    monkeypatch.setenv("GH_CONFIG_DIR", str(tmp_path / "gh-config"))
    dest = home / "state" / "plugins"

    def make_options(**overrides: object) -> InstallOptions:
        values: dict[str, object] = {"dest": dest, "nexo_home": home}
        values.update(overrides)
        return InstallOptions(**values)  # type: ignore[arg-type]

    return InstallEnv(home, dest, home / "cache" / "blobs" / "tmp", github_server, make_options)


@pytest.fixture(params=[0o000, 0o002, 0o077])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """The process umask set to each of 000, 002 and 077 for the test, then restored."""
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def assert_refused(
    env: InstallEnv,
    source: str,
    kind: str,
    callbacks: InstallCallbacks = NO_CALLBACKS,
    **options: object,
) -> NexoError:
    """``install source`` fails with ``kind``, leaves ``dest`` as it was and the cache empty."""
    before = tree_snapshot(env.dest)
    with pytest.raises(NexoError) as caught:
        install(source, env.make_options(**options), callbacks)
    assert caught.value.kind == kind, caught.value.message
    assert tree_snapshot(env.dest) == before
    assert not env.cache.exists() or list(env.cache.iterdir()) == []
    return caught.value
