"""What a ``sync --frozen`` asks of the registry and of the disk for each plugin: each blob
is extracted as soon as it is checked and synced to disk once at the end of the run; the
installed trees are synced before their renames, as ever."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo
from support.registry import Registry
from support.registry_proxy import RegistryProxy

from nexo_pkg.fleet import lockfile
from nexo_pkg.sources.api import extract_archive
from nexo_pkg.sources.context import SourceContext
from nexo_pkg.sources.registry import RegistryClient

from .conftest import ACME_IDENTITY, LINUX, MakeDist, push_dist

PLUGINS = ("alpha", "bravo", "charlie")

linux_only = pytest.mark.skipif(
    sys.platform != "linux", reason="reads the path of a descriptor from /proc"
)


def _locked_fleet(
    tmp_path: Path,
    env: dict[str, str],
    base: str,
    make_dist: MakeDist,
    *,
    signed: tuple[str, ...] = (),
    policy: Path | None = None,
) -> Path:
    """Three plugins pushed under ``base`` (those in ``signed`` signed by acme) and locked
    (under ``policy``); the lock's path."""
    home = Path(env["NEXO_HOME"])
    for number, plugin_id in enumerate(PLUGINS):
        identity = {} if plugin_id in signed else {"identity": None}
        dist = make_dist(plugin_id, f"1.{number}.0", targets=(LINUX,), **identity)
        push_dist(dist, f"{base}/{plugin_id}", home)
    project = tmp_path / "project"
    project.mkdir()
    wanted = project / "nexo-plugins.toml"
    wanted.write_text(
        "".join(f'[plugins.{name}]\nsource = "{base}/{name}"\n\n' for name in PLUGINS),
        encoding="utf-8",
    )
    trusted = ("--trusted-keys", str(policy)) if policy is not None else ()
    locked = nexo("plugin", "lock", "-f", str(wanted), "--plain-http", *trusted, env=env)
    assert locked.code == 0, locked.stderr
    return project / "nexo-plugins.lock"


def _sync(
    lock_path: Path, dest: Path, env: dict[str, str], home: Path, *args: str
) -> dict[str, Any]:
    synced = nexo(
        "plugin", "sync", "--lock", str(lock_path), "--dest", str(dest), "--frozen",
        "--plain-http", "--json", *args, env={**env, "NEXO_HOME": str(home)}, in_process=True,
    )  # fmt: skip
    assert synced.code == 0, synced.stdout
    document: dict[str, Any] = synced.document
    return document


@linux_only
@pytest.mark.parametrize("jobs", ["1", "3"])
def test_blobs_are_synced_beside_their_extraction_and_before_the_run_ends(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    monkeypatch: pytest.MonkeyPatch,
    jobs: str,
) -> None:
    """No download waits for its blob to reach the disk before its extraction: another
    thread syncs each blob once it is in the store, and the run waits for those syncs (then
    syncs the store's directory) before it ends."""
    lock_path = _locked_fleet(tmp_path, fleet_env, registry.ref("plugins"), make_dist)
    home = tmp_path / "sync-home"
    store = home / "cache" / "blobs" / "sha256"
    events: list[tuple[str, str, str]] = []
    real_fsync, real_fdatasync = os.fsync, os.fdatasync

    def record(kind: str, descriptor: int) -> None:
        path = str(Path(f"/proc/self/fd/{descriptor}").readlink())
        events.append((kind, path, threading.current_thread().name))

    def fsync(descriptor: int) -> None:
        record("fsync", descriptor)
        real_fsync(descriptor)

    def fdatasync(descriptor: int) -> None:
        record("fsync", descriptor)
        real_fdatasync(descriptor)

    def extract(tarball: Path, *args: Any, **kwargs: Any) -> Any:
        events.append(("extract", str(tarball), threading.current_thread().name))
        return extract_archive(tarball, *args, **kwargs)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr("nexo_pkg.sources.cache._sync_data", fdatasync)
    monkeypatch.setattr("nexo_pkg.install.pipeline.extract_archive", extract)
    document = _sync(lock_path, tmp_path / "root", fleet_env, home, "--jobs", jobs)
    assert [item["action"] for item in document["plugins"]] == ["installed"] * 3

    extracted = {path: thread for kind, path, thread in events if kind == "extract"}
    assert len(extracted) == len(PLUGINS)
    # Each tarball is extracted from a name the command holds it by (the bytes it hashed),
    # in a private directory of the cache's temp dir, named by its sha256 as in the store.
    held = home / "cache" / "blobs" / "tmp"
    assert all(Path(path).parent.parent == held for path in extracted)
    synced = [(path, thread) for kind, path, thread in events if kind == "fsync"]
    # No download is synced on its way into the store (its temp file) ...
    assert not [path for path, _ in synced if "/cache/blobs/tmp/" in path]
    # ... each tarball is synced where it is, once, by a thread that is not its plugin's ...
    for tarball, plugin_thread in extracted.items():
        threads = [thread for path, thread in synced if path == str(store / Path(tarball).name)]
        assert len(threads) == 1
        assert threads[0] != plugin_thread
    # ... and the store's directory after them all, before the command ended.
    assert synced[-1][0] == str(store)
    assert sorted(path.name for path in store.iterdir()) == sorted(
        Path(path).name for path in extracted
    )


@pytest.mark.parametrize("jobs", ["1", "3"])
def test_a_frozen_sync_reads_no_manifest_the_lock_pins_and_asks_for_the_api_once(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
    monkeypatch: pytest.MonkeyPatch,
    jobs: str,
) -> None:
    """The lock pins each target's manifest digest and tarball sha256: a frozen sync fetches
    the tarball and looks for its signatures, and does not read the manifest again. A
    registry without the referrers API (distribution 2.8) is asked for it once, then only
    for the ``sha256-…`` tags: every signed plugin is still verified, whatever the jobs."""
    lock_path = _locked_fleet(
        tmp_path,
        fleet_env,
        registry.ref("plugins"),
        make_dist,
        signed=("alpha", "charlie"),
        policy=policy,
    )
    manifests_before = registry.requests("GET", r"/manifests/sha256:")
    api_before = registry.requests("GET", r"/referrers/")
    # A directory for signature files only where there are some (each costs its removal).
    directories: list[Path] = []
    real_temp_dir = SourceContext.temp_dir

    def temp_dir(context: SourceContext) -> Path:
        directories.append(real_temp_dir(context))
        return directories[-1]

    monkeypatch.setattr(SourceContext, "temp_dir", temp_dir)
    document = _sync(
        lock_path, tmp_path / "root", fleet_env, tmp_path / "sync-home", "--jobs", jobs,
        "--trusted-keys", str(policy),
    )  # fmt: skip
    identities = {item["id"]: item.get("identity") for item in document["plugins"]}
    assert identities == {"alpha": ACME_IDENTITY, "bravo": None, "charlie": ACME_IDENTITY}
    assert len(directories) == 2
    # Per plugin: its tarball and its tag-schema index; per signed plugin, its signature
    # referrer's manifest and the bundle; the referrers API once.
    assert document["requests"]["registries"] == {
        registry.host: {"blob_get": 3 + 2, "manifest_get": 3 + 2, "referrers": 1}
    }
    assert registry.requests("GET", r"/referrers/") - api_before == 1
    # No target manifest (a digest the lock names) was read: only referrer manifests.
    assert registry.requests("GET", r"/manifests/sha256:") - manifests_before == 2


@pytest.mark.parametrize("jobs", ["1", "3"])
def test_a_registry_with_the_referrers_api_is_asked_for_each_plugin(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
    jobs: str,
) -> None:
    proxy = RegistryProxy(registry.host, referrers_api=True).start()
    try:
        lock_path = _locked_fleet(
            tmp_path, fleet_env, proxy.ref("plugins"), make_dist, signed=PLUGINS, policy=policy
        )
        api_before = proxy.count("GET", "/referrers/", 200)
        document = _sync(
            lock_path, tmp_path / "root", fleet_env, tmp_path / "sync-home", "--jobs", jobs,
            "--trusted-keys", str(policy), "--require-signature",
        )  # fmt: skip
        assert [item["identity"] for item in document["plugins"]] == [ACME_IDENTITY] * 3
        assert document["requests"]["registries"] == {
            proxy.host: {"blob_get": 3 + 3, "manifest_get": 3, "referrers": 3}
        }
        assert proxy.count("GET", "/referrers/", 200) - api_before == 3
        assert proxy.count("GET", "/manifests/sha256-") == 0
    finally:
        proxy.stop()


def test_tarballs_download_at_most_one_per_extraction_worker_at_a_time(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Three plugins on three jobs, on two cores (two extraction workers): two tarballs at a
    time, each download held long enough that all three would overlap otherwise."""
    lock_path = _locked_fleet(tmp_path, fleet_env, registry.ref("plugins"), make_dist)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    guard = threading.Lock()
    under_way: list[int] = [0]
    most: list[int] = [0]
    real_get_blob = RegistryClient.get_blob

    def get_blob(client: RegistryClient, *args: Any, **kwargs: Any) -> int:
        with guard:
            under_way[0] += 1
            most[0] = max(most[0], under_way[0])
        try:
            time.sleep(0.2)
            return real_get_blob(client, *args, **kwargs)
        finally:
            with guard:
                under_way[0] -= 1

    monkeypatch.setattr(RegistryClient, "get_blob", get_blob)
    document = _sync(lock_path, tmp_path / "root", fleet_env, tmp_path / "sync-home", "--jobs", "3")
    assert [item["action"] for item in document["plugins"]] == ["installed"] * 3
    assert document["requests"]["registries"][registry.host]["blob_get"] == 3
    assert most[0] == 2


def test_a_frozen_sync_reads_its_lock_once(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The lock is checked against the wanted set beside it and then synced: one read."""
    lock_path = _locked_fleet(tmp_path, fleet_env, registry.ref("plugins"), make_dist)
    assert (lock_path.parent / "nexo-plugins.toml").is_file()
    reads: list[Path] = []

    def read_lock(path: Path) -> Any:
        reads.append(path)
        return lockfile.read_lock(path)

    monkeypatch.setattr("nexo_pkg.fleet.sync.read_lock", read_lock)
    document = _sync(lock_path, tmp_path / "root", fleet_env, tmp_path / "sync-home")
    assert [item["action"] for item in document["plugins"]] == ["installed"] * 3
    assert reads == [lock_path]


@linux_only
@pytest.mark.parametrize("jobs", ["1", "3"])
def test_a_write_back_error_fails_the_plugin_that_lost_data_and_publishes_nothing_of_it(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    monkeypatch: pytest.MonkeyPatch,
    jobs: str,
) -> None:
    """The disk fails to write back some of bravo's files. The file system's syncfs reports
    that once, to the first plugin that asks (alpha, one job at a time), so it proves
    nothing about whose data was lost: every tree of the file system is then fsynced file by
    file, and only bravo, whose files fail their fsync, fails (``io``, the kernel's words);
    nothing of it is published, and the others are installed."""
    from nexo_pkg.core import durable

    lock_path = _locked_fleet(tmp_path, fleet_env, registry.ref("plugins"), make_dist)
    dest = tmp_path / "root"
    reported: list[int] = []
    real_fsync = os.fsync

    def syncfs(descriptor: int) -> bool:
        if not reported:
            reported.append(descriptor)
            raise OSError(5, "Input/output error")
        return True

    def fsync(descriptor: int) -> None:
        path = str(Path(f"/proc/self/fd/{descriptor}").readlink())
        if "/.nexo/staging/bravo" in path and path.endswith("/bin/bravo"):
            raise OSError(5, "Input/output error")
        real_fsync(descriptor)

    monkeypatch.setattr(durable, "_SHARED", durable._SharedSyncfs())
    monkeypatch.setattr(durable, "syncfs", syncfs)
    monkeypatch.setattr(os, "fsync", fsync)
    synced = nexo(
        "plugin", "sync", "--lock", str(lock_path), "--dest", str(dest), "--frozen",
        "--plain-http", "--json", "--jobs", jobs,
        env={**fleet_env, "NEXO_HOME": str(tmp_path / "sync-home")}, in_process=True,
    )  # fmt: skip
    assert synced.code == 1, synced.stdout
    outcomes = {item["id"]: item for item in synced.document["plugins"]}
    assert outcomes["bravo"]["action"] == "failed"
    assert outcomes["bravo"]["kind"] == "io"
    assert "Input/output error" in outcomes["bravo"]["error"]
    assert (outcomes["alpha"]["action"], outcomes["charlie"]["action"]) == (
        "installed",
        "installed",
    )
    assert len(reported) == 1
    assert sorted(path.name for path in dest.iterdir()) == [
        ".nexo-install.lock",
        ".nexo-sync.lock",
        "alpha-1.0.0",
        "charlie-1.2.0",
    ]
