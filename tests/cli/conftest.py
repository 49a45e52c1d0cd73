"""Fixtures the CLI tests share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import clean_env
from support.github_server import GitHubServer


@pytest.fixture
def server() -> Iterator[GitHubServer]:
    """A GitHub API stand-in on 127.0.0.1 with no release published yet."""
    with GitHubServer() as running:
        yield running


@pytest.fixture
def github_env(tmp_path: Path, server: GitHubServer) -> dict[str, str]:
    """The environment of a command run against the stand-in: NEXO_HOME and gh's config
    under tmp_path, GitHub's API on the stand-in, no token."""
    return clean_env(
        NEXO_HOME=str(tmp_path / "home"),
        NEXO_GITHUB_API_BASE=server.url,
        NEXO_HTTP_RETRY_BASE_MS="1",
        NO_PROXY="127.0.0.1",
        GH_CONFIG_DIR=str(tmp_path / "gh"),
    )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer) -> Path:
    """NEXO_HOME in tmp_path, the GitHub API on the stand-in, no token: the working directory
    is tmp_path (some modules define their own)."""
    for name in ("NEXO_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "NEXO_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NEXO_GITHUB_API_BASE", server.url)
    monkeypatch.setenv("NEXO_HTTP_RETRY_BASE_MS", "1")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"
