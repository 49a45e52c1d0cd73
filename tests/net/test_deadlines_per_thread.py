"""Threads of one command send requests side by side through one client (a layer and its
signature lookup, the plugins of a sync): each request is judged by its own deadline, so a
request cut at its deadline says so, whatever another thread began meanwhile."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from nexo_pkg.core.errors import NexoError
from nexo_pkg.net.client import HttpClient


def test_each_thread_sees_the_deadline_of_its_own_request() -> None:
    with HttpClient(timeout=30) as client:
        first = client.begin()
        begun = threading.Event()
        seen: list[object] = []

        def other() -> None:
            seen.append(client.begin())
            begun.set()

        thread = threading.Thread(target=other)
        thread.start()
        assert begun.wait(10)
        thread.join()
        assert seen[0] is not first
        # This thread's request is still judged by its own deadline.
        assert client.deadline is first


def test_one_requests_deadline_leaves_another_threads_request_running() -> None:
    """A sync's worker and its signature lookup both wait on a silent registry: the first
    deadline to pass cuts only its own connection, so the later request runs to its own
    deadline and says so (it used to be cut with the first, as "the server closed the
    connection without answering")."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)  # accepted by the kernel, never answered
        url = f"http://127.0.0.1:{server.getsockname()[1]}/v2/"
        with HttpClient(timeout=1.0, retries=0, plain_only_to=lambda _host: True) as client:
            outcomes: dict[str, tuple[float, str]] = {}

            def ask(name: str) -> None:
                started = time.monotonic()
                with pytest.raises(NexoError) as caught:
                    client.with_retries(lambda: client.send("GET", url, name))
                outcomes[name] = (time.monotonic() - started, caught.value.message)

            first = threading.Thread(target=ask, args=("first",))
            first.start()
            time.sleep(0.5)
            second = threading.Thread(target=ask, args=("second",))
            second.start()
            first.join(10)
            second.join(10)
    for name in ("first", "second"):
        took, message = outcomes[name]
        assert "gave up at the 1 s deadline" in message, (name, message)
        assert took >= 0.95, (name, took, message)
