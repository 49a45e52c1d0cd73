"""What a command holds until it ends (:meth:`SourceContext.hold`): blobs fetched into the real
blob cache by several threads at once, each entered outside the context's guard."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest

from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources.cache import BlobSink
from nexo_pkg.sources.context import SourceContext

# Long enough for two threads to meet on any machine; the barrier breaks (and the test
# fails) only when one download waits for the other to end first.
MEETING = 60.0


def test_threads_download_their_blobs_side_by_side(tmp_path: Path) -> None:
    """Two threads' downloads are under way at the same time: each fetch waits for the other
    to start before it writes a byte, which deadlocks (a broken barrier) when holding one
    blob's download keeps the other thread out."""
    meeting = threading.Barrier(2, timeout=MEETING)
    payloads = {name: name.encode() * 1000 for name in ("alpha", "bravo")}
    held: dict[str, Path] = {}
    failures: list[BaseException] = []

    with SourceContext(tmp_path / "home") as context:

        def download(name: str) -> None:
            data = payloads[name]

            def fetch(sink: BlobSink) -> None:
                meeting.wait()
                sink.write(data)

            digest = hashlib.sha256(data).hexdigest()
            try:
                held[name] = context.hold(context.cache.open_blob(digest, fetch))
            except BaseException as exc:  # noqa: BLE001 (reported by the main thread)
                failures.append(exc)

        threads = [threading.Thread(target=download, args=(name,)) for name in payloads]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        assert {name: path.read_bytes() for name, path in held.items()} == payloads
        assert context.cache.misses == 2
    # Let go when the command ends: the blobs stay in the store (and the names they were
    # held by are gone).
    store = tmp_path / "home" / "cache" / "blobs" / "sha256"
    assert all((store / path.name).is_file() for path in held.values())
    assert not any(path.exists() for path in held.values())


def test_a_manager_that_fails_on_entry_is_not_held(tmp_path: Path) -> None:
    """A download refused on entry (bytes that do not hash to the digest) raises its error
    and leaves nothing held or stored; a later hold of the right bytes works."""
    good = b"the right bytes"
    digest = hashlib.sha256(good).hexdigest()
    with SourceContext(tmp_path / "home") as context:
        with pytest.raises(NexoError) as caught:
            context.hold(context.cache.open_blob(digest, lambda sink: sink.write(b"other")))
        assert caught.value.kind == "checksum_mismatch"
        assert not context.cache.path(digest).exists()
        path = context.hold(context.cache.open_blob(digest, lambda sink: sink.write(good)))
        assert path.read_bytes() == good
