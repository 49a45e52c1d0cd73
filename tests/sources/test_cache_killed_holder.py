"""A command killed while it uses a blob leaves the name it held the blob by (a directory in
the cache's temp dir); the next download on that cache removes it, never one in use."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from support.cli import TRACEBACK, nexo, stand_in_env
from support.github_server import GitHubServer
from support.tarballs import release_assets, sha256_hex

from nexo_pkg.core import posix
from nexo_pkg.sources.cache import BlobCache, BlobSink

pytestmark = pytest.mark.skipif(not posix.POSIX, reason="the lock that tells them apart: POSIX")

# Loaded first by the `nexo` process: SIGKILL it as it starts extracting, while it holds the
# downloaded tarball by a name of its own.
KILL_AT_EXTRACTION = """\
import os
import signal

import nexo_pkg.sources.extract as extract


def _killed(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)


extract.extract_archive = _killed
"""


def test_the_next_install_removes_what_a_killed_one_held(tmp_path: Path) -> None:
    home = tmp_path / "home"
    dest = tmp_path / "plugins"
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(KILL_AT_EXTRACTION, encoding="utf-8")
    with GitHubServer() as server:
        server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
        env = stand_in_env(home, server.url)
        args = ["plugin", "install", "acme/hello", "--yes", "--dest", str(dest)]
        killed = subprocess.run(
            [sys.executable, "-m", "nexo_pkg", *args],
            env={**env, "PYTHONPATH": os.pathsep.join([str(hook), *sys.path])},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert killed.returncode == -9, killed.stderr
        temp = home / "cache" / "blobs" / "tmp"
        assert [p.name.endswith(".held") for p in temp.iterdir()] == [True]

        again = nexo(*args, env=env)
        assert again.code == 0, again.stderr
        assert TRACEBACK not in again.stderr
    assert (dest / "hello-1.0.0").is_dir()
    assert list(temp.iterdir()) == []


def _blob(cache: BlobCache, data: bytes) -> AbstractContextManager[Path]:
    def fetch(sink: BlobSink) -> None:
        sink.write(data)

    return cache.open_blob("sha256:" + sha256_hex(data), fetch)


def test_a_blob_held_by_a_live_command_is_never_swept(tmp_path: Path) -> None:
    """Two commands on one cache: the second one's download sweeps the temp dir while the
    first still uses its blob, whose name stays."""
    first, second = BlobCache(tmp_path), BlobCache(tmp_path)
    with _blob(first, b"in use by the first command\n") as held:
        with _blob(second, b"another blob\n") as other:
            assert other.read_bytes() == b"another blob\n"
        with _blob(second, b"in use by the first command\n") as same:
            assert same != held
        assert held.read_bytes() == b"in use by the first command\n"
    assert list(first.temp.iterdir()) == []
