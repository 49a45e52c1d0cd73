"""The shared blob cache where there is no ``flock`` (Windows): the commands an author runs
there that download through it (``info``, ``cache``) work, in a real child under the Windows
shim (``tests/support/windows_shim.py``), and the cache's own calls take the Windows path
(``nexo_pkg.core.posix.POSIX`` false) in this process.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from support import windows_shim
from support.cli import CliResult, nexo
from support.github_server import GitHubServer
from support.tarballs import release_assets

from nexo_pkg.core import posix
from nexo_pkg.sources.cache import AnswerCache, BlobCache, BlobSink, StoredAnswer


def _store(cache: BlobCache, data: bytes) -> None:
    def fetch(sink: BlobSink) -> None:
        sink.write(data)

    with cache.open_blob(None, fetch):
        pass


def _on_windows(*args: str) -> CliResult:
    env = dict(os.environ)
    windows_shim.child_environment(env)
    result = nexo(*args, env=env, timeout=120)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def test_info_and_the_cache_commands_work_without_flock(home: Path, server: GitHubServer) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    # info downloads the release through the cache and, installing nothing, leaves it as it
    # found it.
    for _ in range(2):
        shown = _on_windows("plugin", "info", "acme/hello", "--json")
        assert shown.code == 0, shown.stderr
        assert json.loads(shown.stdout)["id"] == "hello"
    store = home / "cache" / "blobs" / "sha256"
    assert store.is_dir()
    assert not any(store.iterdir())
    cache = BlobCache(home)
    for index in range(3):
        _store(cache, bytes([index]) * 100)
    size = _on_windows("plugin", "cache", "size", "--json")
    assert size.code == 0, size.stderr
    assert json.loads(size.stdout)["blobs"] == 3
    cleaned = _on_windows("plugin", "cache", "clean", "--json")
    assert cleaned.code == 0, cleaned.stderr
    assert json.loads(cleaned.stdout)["removed"] == 3
    assert not any(store.iterdir())


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(posix, "POSIX", False)


@pytest.mark.usefixtures("windows")
def test_the_cache_stores_finds_and_prunes_without_flock(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path / "home")
    data = b"plugin bytes"
    digest = hashlib.sha256(data).hexdigest()
    fetched: list[int] = []

    def fetch(sink: BlobSink) -> None:
        fetched.append(1)
        sink.write(data)

    with cache.open_blob(f"sha256:{digest}", fetch) as path:
        assert path.read_bytes() == data
    with cache.open_blob(f"sha256:{digest}", fetch) as path:
        assert path.read_bytes() == data
    assert len(fetched) == 1
    assert (cache.hits, cache.misses) == (1, 1)
    # A blob not known beforehand that is in the store already is used as it is.
    with cache.open_blob(None, fetch) as path:
        assert path.name == digest
    (cache.temp / "killed-writer.part").write_bytes(b"half")
    report = cache.prune(max_age=None)
    assert (report.removed, report.kept) == (2, 0)
    assert not any(cache.store.iterdir())
    assert not any(cache.temp.iterdir())


@pytest.mark.usefixtures("windows")
def test_answers_are_kept_and_read_without_owner_ids(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path / "home")
    answers = AnswerCache(cache)
    answers.put("GET /repos/acme/hello/releases", StoredAnswer('"etag"', None, b"[]"))
    cache.keep()
    assert answers.get("GET /repos/acme/hello/releases", 1024) == StoredAnswer(
        '"etag"', None, b"[]"
    )
