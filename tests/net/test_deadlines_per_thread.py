"""Threads of one command send requests side by side through one client (a layer and its
signature lookup, the plugins of a sync): each request is judged by its own deadline, so a
request cut at its deadline says so, whatever another thread began meanwhile."""

from __future__ import annotations

import threading

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
