"""The bytes a cached blob is used by are the bytes that were hashed: a blob swapped in the
store (renamed over, or rewritten in place) after its check is never what a holder reads."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources.cache import BlobCache, BlobSink

ORIGINAL = b"the bytes the release vouches for\n" * 1000
SWAPPED = b"other bytes planted in the cache!\n" * 1000
DIGEST = hashlib.sha256(ORIGINAL).hexdigest()


def _fetching(data: bytes) -> tuple[list[int], Callable[[BlobSink], None]]:
    calls: list[int] = []

    def fetch(sink: BlobSink) -> None:
        calls.append(1)
        sink.write(data)

    return calls, fetch


def _rename_over(store: Path) -> None:
    planted = store.parent / "planted"
    planted.write_bytes(SWAPPED)
    planted.replace(store / DIGEST)


def _rewrite_in_place(store: Path) -> None:
    blob = store / DIGEST
    blob.chmod(0o644)
    blob.write_bytes(SWAPPED)


@pytest.mark.parametrize("cached", [True, False], ids=["hit", "miss"])
def test_a_blob_renamed_over_after_its_check_is_never_what_is_used(
    tmp_path: Path, cached: bool
) -> None:
    cache = BlobCache(tmp_path / "home")
    if cached:
        with cache.open_blob(DIGEST, _fetching(ORIGINAL)[1]):
            pass
    calls, fetch = _fetching(ORIGINAL)
    with cache.open_blob(DIGEST, fetch) as blob:
        assert calls == ([] if cached else [1])
        _rename_over(cache.store)
        assert (cache.store / DIGEST).read_bytes() == SWAPPED  # the swap happened
        assert blob.name == DIGEST
        assert blob.read_bytes() == ORIGINAL
    # Nothing of the held name is left behind.
    assert list(cache.temp.iterdir()) == []


def test_a_writable_blob_rewritten_after_its_check_is_never_what_is_used(tmp_path: Path) -> None:
    """A blob others could rewrite in place (its write bits set; on a shared cache, another
    user's) is used from a copy made as it was hashed."""
    cache = BlobCache(tmp_path / "home")
    with cache.open_blob(DIGEST, _fetching(ORIGINAL)[1]):
        pass
    (cache.store / DIGEST).chmod(0o664)
    calls, fetch = _fetching(ORIGINAL)
    with cache.open_blob(DIGEST, fetch) as blob:
        assert calls == []
        (cache.store / DIGEST).write_bytes(SWAPPED)
        assert blob.read_bytes() == ORIGINAL
    assert list(cache.temp.iterdir()) == []


def test_a_blob_rewritten_before_its_check_is_fetched_again(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path / "home")
    with cache.open_blob(DIGEST, _fetching(ORIGINAL)[1]):
        pass
    _rewrite_in_place(cache.store)
    calls, fetch = _fetching(ORIGINAL)
    with cache.open_blob(DIGEST, fetch) as blob:
        assert calls == [1]
        assert blob.read_bytes() == ORIGINAL
    assert (cache.store / DIGEST).read_bytes() == ORIGINAL


def test_swapped_bytes_fetched_are_refused_and_not_stored(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path / "home")
    with pytest.raises(NexoError) as caught, cache.open_blob(DIGEST, _fetching(SWAPPED)[1]):
        pass
    assert caught.value.kind == "checksum_mismatch"
    assert list(cache.store.iterdir()) == []
    assert list(cache.temp.iterdir()) == []


@pytest.mark.parametrize("cached", [True, False], ids=["hit", "miss"])
def test_a_cache_on_a_file_system_without_hard_links_holds_a_copy(
    tmp_path: Path, cached: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the cache's file system makes no hard links (some network and FUSE file
    systems), a blob is held by a copy of the bytes hashed, not refused as an ``io`` error."""
    cache = BlobCache(tmp_path / "home")
    if cached:
        with cache.open_blob(DIGEST, _fetching(ORIGINAL)[1]):
            pass

    def no_links(*args: object, **kwargs: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr("os.link", no_links)
    calls, fetch = _fetching(ORIGINAL)
    with cache.open_blob(DIGEST, fetch) as blob:
        assert calls == ([] if cached else [1])
        assert blob.parent.parent == cache.temp
        _rename_over(cache.store)
        assert blob.read_bytes() == ORIGINAL
    assert list(cache.temp.iterdir()) == []
    assert (cache.store / DIGEST).read_bytes() == SWAPPED  # the store's own name, as left


@pytest.mark.parametrize("cached", [True, False], ids=["hit", "miss"])
def test_on_windows_a_held_blob_is_a_copy_removed_with_its_read_only_bit(
    tmp_path: Path, cached: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows refuses to unlink a read-only file. A blob is held there by a copy (a hard
    link would share the stored blob's read-only bit), and the copy is removed once the
    command is done with it, its bit cleared first: nothing is left in the cache's temp dir
    and the stored blob stays read-only."""
    import os
    import stat

    from nexo_pkg.core import posix

    real_unlink = os.unlink

    def windows_unlink(path: object, *, dir_fd: int | None = None) -> None:
        mode = os.stat(path, dir_fd=dir_fd, follow_symlinks=False).st_mode  # type: ignore[arg-type]
        if not mode & stat.S_IWUSR:
            raise PermissionError(13, "Access is denied", str(path))
        real_unlink(path, dir_fd=dir_fd)  # type: ignore[arg-type]

    cache = BlobCache(tmp_path / "home")
    if cached:
        with cache.open_blob(DIGEST, _fetching(ORIGINAL)[1]):
            pass
    monkeypatch.setattr(posix, "POSIX", False)
    monkeypatch.setattr(os, "unlink", windows_unlink)
    with cache.open_blob(DIGEST, _fetching(ORIGINAL)[1]) as blob:
        assert blob.read_bytes() == ORIGINAL
        assert blob.stat().st_ino != (cache.store / DIGEST).stat().st_ino
    assert list(cache.temp.iterdir()) == []
    assert not (cache.store / DIGEST).stat().st_mode & 0o222
