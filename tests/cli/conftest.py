"""Fixtures the CLI tests share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.github_server import GitHubServer


@pytest.fixture
def server() -> Iterator[GitHubServer]:
    """A GitHub API stand-in on 127.0.0.1 with no release published yet."""
    with GitHubServer() as running:
        yield running
