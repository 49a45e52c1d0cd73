"""A language server shared by the tests of a module (see ``client.LoopThread``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

import pytest

from .client import LoopThread, LspSession


@dataclass
class SharedServer:
    """One running server; ``run(scenario)`` awaits ``scenario(session)`` on its loop."""

    runner: LoopThread
    session: LspSession

    def run(self, scenario: Callable[[LspSession], Awaitable[None]]) -> None:
        self.runner.run(scenario(self.session))


@pytest.fixture(scope="module")
def shared_server() -> Iterator[SharedServer]:
    runner = LoopThread()
    session = LspSession()
    try:
        runner.run(session.__aenter__())
        yield SharedServer(runner, session)
        runner.run(session.__aexit__(None, None, None))
        assert session.returncode == 0
        assert session.log_messages == []
    finally:
        runner.close()
