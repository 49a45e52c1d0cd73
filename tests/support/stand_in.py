"""Point the CLI of a test at the loopback GitHub stand-in, with a fresh ``NEXO_HOME``."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from support.github_server import GitHubServer

CLEARED = ("NEXO_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "NEXO_DAEMON_VERSION")


def use_stand_in(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    server: GitHubServer,
    *,
    cleared: Iterable[str] = CLEARED,
) -> Path:
    """Clear ``cleared`` (tokens, the daemon version), set ``NEXO_HOME`` under ``tmp_path``,
    send GitHub API calls to ``server`` with fast retries, ``chdir`` to ``tmp_path``; returns
    the ``NEXO_HOME`` directory."""
    for name in cleared:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NEXO_GITHUB_API_BASE", server.url)
    monkeypatch.setenv("NEXO_HTTP_RETRY_BASE_MS", "1")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"
