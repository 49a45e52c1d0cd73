"""``nexo plugin cache dir|size|clean|prune`` and the blob cache under ``install``, from the
outside: entries planted in the store (a directory, links, a loop) are neither followed nor
fatal, a corrupt blob is fetched again and never installed, and bad flags are usage errors."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from support.cli import TRACEBACK, nexo
from support.github_server import GitHubServer
from support.tarballs import asset_name, plugin_tarball, release_assets, tree_snapshot

plugin = partial(nexo, "plugin", in_process=True)
TARBALL = asset_name("hello", "1.0.0")


def _store(home: Path) -> Path:
    return home / "cache" / "blobs" / "sha256"


def _publish(server: GitHubServer) -> str:
    """Publish acme/hello 1.0.0; the tarball's sha256."""
    assets = release_assets("hello", "1.0.0")
    server.publish("acme", "hello", "v1.0.0", assets)
    return hashlib.sha256(assets[TARBALL]).hexdigest()


def _tarball_gets(server: GitHubServer) -> int:
    return sum(1 for request in server.requests if request.path.endswith("/assets/1001"))


@pytest.mark.parametrize("kind", ["directory", "dangling-link", "link-to-the-bytes", "fifo"])
def test_an_entry_planted_at_a_blobs_name_is_replaced_by_the_blob(
    home: Path, server: GitHubServer, tmp_path: Path, kind: str
) -> None:
    digest = _publish(server)
    planted = _store(home) / digest
    planted.parent.mkdir(parents=True)
    if kind == "directory":
        planted.mkdir()
        (planted / "inside").write_bytes(b"x")
    elif kind == "dangling-link":
        planted.symlink_to(tmp_path / "nothing")
    elif kind == "link-to-the-bytes":
        # Even the right bytes are no blob behind a link: whatever it points to may change.
        outside = tmp_path / "outside.tar.gz"
        outside.write_bytes(release_assets("hello", "1.0.0")[TARBALL])
        planted.symlink_to(outside)
    else:
        os.mkfifo(planted)
    done = plugin("install", "acme/hello", "--yes", "--dest", str(tmp_path / "root"), "--json")
    assert done.code == 0, done.stderr
    assert not planted.is_symlink()
    assert planted.is_file()
    assert hashlib.sha256(planted.read_bytes()).hexdigest() == digest
    assert _tarball_gets(server) == 1
    assert (tmp_path / "root" / "hello-1.0.0" / "bin" / "hello").is_file()


def test_a_corrupt_blob_is_fetched_again_and_never_installed(
    home: Path, server: GitHubServer, tmp_path: Path
) -> None:
    digest = _publish(server)
    assert plugin("install", "acme/hello", "--yes", "--dest", str(tmp_path / "a")).code == 0
    blob = _store(home) / digest
    assert _tarball_gets(server) == 1
    # Another valid plugin tarball under the blob's name: installing it would be a substitution.
    blob.chmod(0o644)
    blob.write_bytes(plugin_tarball("hello", "1.0.0", payload=b"substituted"))
    done = plugin("install", "acme/hello", "--yes", "--dest", str(tmp_path / "b"), "--json")
    assert done.code == 0, done.stderr
    assert done.document["sha256"] == digest
    assert not (tmp_path / "b" / "hello-1.0.0" / "lib" / "plugin" / "data.bin").exists()
    assert _tarball_gets(server) == 2
    assert hashlib.sha256(blob.read_bytes()).hexdigest() == digest


def test_size_counts_links_in_the_store_without_following_them(
    home: Path, server: GitHubServer, tmp_path: Path
) -> None:
    digest = _publish(server)
    assert plugin("install", "acme/hello", "--yes", "--dest", str(tmp_path / "root")).code == 0
    store = _store(home)
    blob_size = (store / digest).stat().st_size
    big = tmp_path / "big"
    big.write_bytes(b"x" * 1_000_000)
    (store / "loop").symlink_to("loop")
    (store / "to-big").symlink_to(big)
    (store / "dangling").symlink_to(tmp_path / "nothing")
    done = plugin("cache", "size", "--json")
    assert done.code == 0, done.stderr
    assert TRACEBACK not in done.stderr
    links = sum((store / name).lstat().st_size for name in ("loop", "to-big", "dangling"))
    assert done.document["bytes"] == blob_size + links
    assert done.document["blobs"] == 4
    pruned = plugin("cache", "prune", "--json")
    assert pruned.code == 0, pruned.stderr
    assert pruned.document["removed"] == 3
    assert big.read_bytes() == b"x" * 1_000_000
    assert sorted(path.name for path in store.iterdir()) == [digest]


@pytest.mark.parametrize("days", ["nan", "-1", "-inf"])
def test_prune_refuses_an_age_that_is_no_number_of_days(
    home: Path, server: GitHubServer, tmp_path: Path, days: str
) -> None:
    digest = _publish(server)
    assert plugin("install", "acme/hello", "--yes", "--dest", str(tmp_path / "root")).code == 0
    before = tree_snapshot(home)
    done = plugin("cache", "prune", "--older-than-days", days, "--json")
    assert done.code == 2
    assert json.loads(done.stdout)["kind"] == "usage"
    assert "--older-than-days" in done.error_line
    assert (_store(home) / digest).is_file()
    assert tree_snapshot(home) == before


def test_dir_size_and_clean_on_a_home_with_no_cache(home: Path) -> None:
    assert plugin("cache", "dir").stdout == f"{home / 'cache' / 'blobs'}\n"
    assert plugin("cache", "size").stdout == "0\n"
    assert plugin("cache", "size", "--human").stdout == "0B\n"
    done = plugin("cache", "clean", "--json")
    assert done.code == 0, done.stderr
    assert done.document == {"ok": True, "removed": 0, "freed_bytes": 0, "kept": 0}


def _read_only(home: Path, *args: str | Path) -> list[str]:
    """``args`` run with ``home`` mounted read-only (bwrap: a real read-only file system,
    which even root cannot write)."""
    return ["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(home), str(home), *map(str, args)]


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bwrap for a read-only mount")
def test_a_read_only_home_is_one_line_that_says_what_to_do(
    home: Path, server: GitHubServer, tmp_path: Path
) -> None:
    _publish(server)
    home.mkdir()
    root = tmp_path / "root"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "nexo_pkg", "plugin"]
    probe = subprocess.run(_read_only(home, "true"), capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"bwrap cannot mount here: {probe.stderr.decode(errors='replace')}")
    for args in (
        ["install", "acme/hello", "--yes", "--dest", str(root), "--json"],
        ["info", "acme/hello", "--json"],
        ["cache", "prune", "--json"],
        ["cache", "clean", "--json"],
    ):
        done = subprocess.run(
            _read_only(home, *command, *args), capture_output=True, text=True, env=env,
            cwd=Path(__file__).resolve().parents[2], check=False, timeout=120,
        )  # fmt: skip
        assert done.returncode == 1, (args, done.stderr)
        assert TRACEBACK not in done.stderr
        document = json.loads(done.stdout)
        assert document["kind"] == "io"
        assert "Read-only file system" in document["error"]
        assert "set NEXO_HOME to a writable directory" in document["error"]
        assert done.stderr.count("\n") == 1
    assert not root.exists()
    assert list(home.iterdir()) == []
    # Reading the cache needs no write.
    for args in (["cache", "size", "--json"], ["cache", "dir", "--json"]):
        done = subprocess.run(
            _read_only(home, *command, *args), capture_output=True, text=True, env=env,
            cwd=Path(__file__).resolve().parents[2], check=False, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["ok"] is True


@pytest.mark.skipif(os.name != "posix", reason="the cache lock is flock")
@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "PYTHONUNBUFFERED"])
def test_prune_under_a_running_install_says_it_waits_then_prunes(
    home: Path, unbuffered: bool
) -> None:
    """A command using the cache (an install downloading, a sync) holds its lock shared; a
    prune waits for it, and says so at once rather than seeming to hang: into a pipe, with
    Python's standard streams buffered or not (PYTHONUNBUFFERED, as container images set
    it), the note reaches its reader when it is said."""
    import fcntl
    import threading

    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"

    root = home / "cache" / "blobs"
    (root / "sha256").mkdir(parents=True)
    (root / "tmp").mkdir()
    holder = os.open(root / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(holder, fcntl.LOCK_SH)
    try:
        clean = subprocess.Popen(
            [sys.executable, "-m", "nexo_pkg", "plugin", "cache", "clean", "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
            cwd=Path(__file__).resolve().parents[2],
        )  # fmt: skip
        assert clean.stderr is not None
        said: list[str] = []
        reader = threading.Thread(target=lambda: said.append(clean.stderr.readline()))  # type: ignore[union-attr]
        reader.start()
        reader.join(timeout=30)
        assert said, "no line on stderr while waiting"
        assert said[0].startswith("waiting for the other nexo commands using"), said
        assert clean.poll() is None  # still waiting for the lock
    finally:
        fcntl.flock(holder, fcntl.LOCK_UN)
        os.close(holder)
    out, _ = clean.communicate(timeout=60)
    assert clean.returncode == 0
    assert json.loads(out)["ok"] is True
