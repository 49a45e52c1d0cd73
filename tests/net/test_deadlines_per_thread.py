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


def _read_head(conn: socket.socket) -> bool:
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(4096)
        if not piece:
            return False
        data += piece
    return True


def test_a_proxied_connection_taken_from_the_pool_is_cut_at_its_new_request_s_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through a proxy, httpx's own pool hands a kept-alive connection to the next request
    without saying so. A request begun first takes the connection a later-begun request (of
    another thread) opened and finished with; the proxy then drips the answer's head. The
    request ends at its own deadline (it used to run as long as the drip: its socket's
    recorded owner was the other request, whose deadline had not passed)."""
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    stop = threading.Event()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{listener.getsockname()[1]}")

    def answer(conn: socket.socket) -> None:
        # The first request on a connection is answered (kept alive), the next one dripped.
        with conn:
            if not _read_head(conn):
                return
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            if not _read_head(conn):
                return
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            while not stop.wait(0.1):
                try:
                    conn.sendall(b"X-Drip: 1\r\n")
                except OSError:
                    return

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    url = "http://plugins.example.invalid/doc"
    outcome: list[tuple[float, str]] = []
    begun = threading.Event()
    pooled = threading.Event()
    try:
        with HttpClient(timeout=1.5, retries=0) as client:

            def get(what: str) -> bytes:
                with client.open("GET", url, what) as response:
                    return client.read_document(response, what, limit=1024)

            def first_begun() -> bytes:
                begun.set()
                assert pooled.wait(10)
                return get("first begun")

            def ask_first_begun() -> None:
                started = time.monotonic()
                with pytest.raises(NexoError) as caught:
                    client.with_retries(first_begun)
                outcome.append((time.monotonic() - started, caught.value.message))

            thread = threading.Thread(target=ask_first_begun)
            thread.start()
            assert begun.wait(10)
            time.sleep(0.5)  # the next request's deadline passes 0.5 s later
            assert client.with_retries(lambda: get("begun later")) == b"ok"
            pooled.set()
            thread.join(6)
            ran_on = thread.is_alive()
            stop.set()
            thread.join(10)
    finally:
        stop.set()
        listener.close()
    assert not ran_on, "the request outlived its deadline by 4.5 s"
    [(took, message)] = outcome
    assert "gave up at the 1.5 s deadline" in message, message
    assert took < 4, (took, message)
