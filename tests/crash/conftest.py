"""The GitHub stand-in every crash test publishes its releases to."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from faults.server import FaultyGitHubServer


@pytest.fixture
def server() -> Iterator[FaultyGitHubServer]:
    server = FaultyGitHubServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
