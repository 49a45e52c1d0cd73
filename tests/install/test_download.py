"""The download cache: temp files are locked while in use, leftovers of killed runs go."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from nexo_pkg.sources.download import copy_local, remove_stale_parts


def test_stale_parts_are_removed_and_live_ones_kept(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    stale = cache / ".p.tar.gz.abc.part"
    stale.write_bytes(b"half a download")
    live = cache / ".p.tar.gz.def.part"
    live.write_bytes(b"still downloading")
    other = cache / "keep.txt"
    other.write_text("not ours")
    holder = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        remove_stale_parts(cache)
    finally:
        os.close(holder)
    assert sorted(p.name for p in cache.iterdir()) == [live.name, "keep.txt"]


def test_copy_holds_its_lock_until_discarded(tmp_path: Path) -> None:
    source = tmp_path / "p-1.0.0-noarch.tar.gz"
    source.write_bytes(b"x" * 100)
    cache = tmp_path / "cache"
    copied = copy_local(source, cache, max_bytes=1000)
    remove_stale_parts(cache)  # another install cleaning up must not take it
    assert copied.path.read_bytes() == b"x" * 100
    copied.discard()
    assert list(cache.iterdir()) == []
