"""A command interrupted while its threads run stops every thread's requests, those of a
client a thread makes only after the interrupt included: a step that began before the signal
and asks for its first client after it fails at once (``interrupted``) instead of waiting for
a registry that does not answer until the command's request timeout."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources.context import NetworkChoices, SourceContext
from nexo_pkg.sources.oci_reference import parse_reference


@pytest.fixture
def silent_registry() -> Iterator[str]:
    """``127.0.0.1:PORT`` of a server that takes connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    taken: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not done.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            taken.append(connection)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        done.set()
        thread.join(5)
        for connection in taken:
            connection.close()
        listener.close()


def test_a_client_made_after_the_interrupt_is_stopped_as_it_is_made(
    tmp_path: Path, silent_registry: str
) -> None:
    reference = parse_reference(f"oci://{silent_registry}/plugins/echo:1.0.0")
    network = NetworkChoices(plain_http=True, http_timeout=60.0)
    with SourceContext(tmp_path / "home", network) as context:
        context.stop_requests()  # the interrupt, before this thread asked for its client
        started = time.monotonic()
        with pytest.raises(NexoError) as caught:
            context.registry(reference).get_manifest(reference.repository, "1.0.0")
        elapsed = time.monotonic() - started
    assert caught.value.kind == "interrupted", caught.value.message
    assert elapsed < 5, f"the request waited {elapsed:.1f} s for a registry that never answers"
