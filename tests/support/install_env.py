"""An isolated install environment for tests that install through the pipeline (install's
and sources' tests): NEXO_HOME under tmp, the loopback GitHub server, the umask fixture and
:func:`assert_refused`. A test package's ``conftest.py`` re-exports the fixtures it uses."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from nexo_pkg.core.errors import NexoError
from nexo_pkg.install.options import NO_CALLBACKS, InstallCallbacks, InstallOptions
from nexo_pkg.install.pipeline import install
from support.cli import ENV_TO_CLEAR
from support.github_server import GitHubServer
from support.tarballs import tree_snapshot


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
