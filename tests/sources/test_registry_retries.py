"""A busy registry (5xx, 429, a load balancer in front of it): reads are tried again with
backoff within the request's deadline, a registry that stays down is one ``network`` line per
plugin, and writes are never repeated blindly."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo
from support.registry import Registry
from support.registry_proxy import RegistryProxy

from .conftest import MakeDist, fleet_run, push_dist


@pytest.fixture
def proxy(registry: Registry) -> Iterator[RegistryProxy]:
    running = RegistryProxy(registry.host).start()
    yield running
    running.stop()


def _lock(tmp_path: Path, env: dict[str, str], proxy: RegistryProxy, make_dist: MakeDist) -> Path:
    home = Path(env["NEXO_HOME"])
    for plugin_id in ("echo", "weather"):
        push_dist(make_dist(plugin_id, identity=None), proxy.ref(f"plugins/{plugin_id}"), home)
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(
        "".join(
            f'[plugins.{name}]\nsource = "{proxy.ref(f"plugins/{name}")}"\n'
            for name in ("echo", "weather")
        ),
        encoding="utf-8",
    )
    locked = nexo("plugin", "lock", "-f", str(wanted), "--plain-http", env=env, in_process=True)
    assert locked.code == 0, locked.stderr
    return tmp_path / "nexo-plugins.lock"


def _sync(env: dict[str, str], lock: Path, dest: Path) -> dict[str, Any]:
    result = fleet_run(
        "sync", "--lock", lock, "--dest", str(dest), "--frozen", "--plain-http", env=env
    )
    assert "Traceback" not in result.stderr, result.stderr
    document = result.document
    assert result.code == (0 if document["ok"] else 1), result.stderr
    return document


def test_reads_that_meet_a_busy_registry_are_tried_again(
    tmp_path: Path, fleet_env: dict[str, str], proxy: RegistryProxy, make_dist: MakeDist
) -> None:
    lock = _lock(tmp_path, fleet_env, proxy, make_dist)
    host = {**fleet_env, "NEXO_HOME": str(tmp_path / "host-home")}
    proxy.fail("GET", "/blobs/sha256:", 503, times=2)
    # A frozen sync reads no manifest the lock pins: the manifest read is a tag-schema index.
    proxy.fail("GET", "/manifests/sha256-", 502, times=1)
    proxy.fail("GET", "/referrers/", 429, times=1)
    dest = tmp_path / "root"
    document = _sync(host, lock, dest)
    assert document["ok"] is True, document
    assert [p["action"] for p in document["plugins"]] == ["installed", "installed"]
    assert proxy.count("GET", "/blobs/sha256:", 503) == 2
    assert proxy.count("GET", "/manifests/sha256-", 502) == 1
    assert proxy.count("GET", "/referrers/", 429) == 1
    assert sorted(p.name for p in dest.iterdir() if not p.name.startswith(".")) == [
        "echo-1.2.3",
        "weather-1.2.3",
    ]


def test_a_blob_cut_off_halfway_is_fetched_again_from_the_start(
    tmp_path: Path, fleet_env: dict[str, str], proxy: RegistryProxy, make_dist: MakeDist
) -> None:
    lock = _lock(tmp_path, fleet_env, proxy, make_dist)
    home = tmp_path / "host-home"
    proxy.fail("GET", "/blobs/sha256:", 0, times=2)
    dest = tmp_path / "root"
    document = _sync({**fleet_env, "NEXO_HOME": str(home)}, lock, dest)
    assert document["ok"] is True, document
    assert proxy.count("GET", "/blobs/sha256:", 0) == 2
    assert sorted(p.name for p in dest.iterdir() if not p.name.startswith(".")) == [
        "echo-1.2.3",
        "weather-1.2.3",
    ]
    # What the cache kept is whole: every blob hashes to its name.
    for blob in (home / "cache" / "blobs" / "sha256").iterdir():
        assert hashlib.sha256(blob.read_bytes()).hexdigest() == blob.name


def test_a_blob_cut_off_every_time_is_told_in_words(
    tmp_path: Path, fleet_env: dict[str, str], proxy: RegistryProxy, make_dist: MakeDist
) -> None:
    """A blob whose body always stops halfway: each plugin fails as ``network`` with a line
    that says how many of how many bytes came, not the HTTP library's exception class."""
    lock = _lock(tmp_path, fleet_env, proxy, make_dist)
    host = {**fleet_env, "NEXO_HOME": str(tmp_path / "host-home")}
    proxy.fail("GET", "/blobs/sha256:", 0, times=None)
    dest = tmp_path / "root"
    document = _sync(host, lock, dest)
    assert document["kind"] == "sync_failed", document
    for failed in document["plugins"]:
        assert (failed["action"], failed["kind"]) == ("failed", "network"), failed
        assert re.search(r"the connection closed after \d+ of \d+ bytes", failed["error"]), failed
        assert "ProtocolError" not in failed["error"], failed
    assert not [p for p in dest.iterdir() if not p.name.startswith(".")]


def test_a_registry_that_stays_down_fails_each_plugin_on_one_line(
    tmp_path: Path, fleet_env: dict[str, str], proxy: RegistryProxy, make_dist: MakeDist
) -> None:
    lock = _lock(tmp_path, fleet_env, proxy, make_dist)
    host = {**fleet_env, "NEXO_HOME": str(tmp_path / "host-home")}
    proxy.fail("GET", "/blobs/sha256:", 503, times=None)
    dest = tmp_path / "root"
    document = _sync(host, lock, dest)
    assert document["kind"] == "sync_failed", document
    failed = document["plugins"]
    assert [(p["action"], p["kind"]) for p in failed] == [
        ("failed", "network"),
        ("failed", "network"),
    ]
    assert all("503" in p["error"] for p in failed)
    # Four attempts for each plugin's tarball (one try and three retries), no more.
    assert proxy.count("GET", "/blobs/sha256:", 503) == 8
    assert not [p for p in dest.iterdir() if not p.name.startswith(".")]
    blobs = tmp_path / "host-home" / "cache" / "blobs" / "sha256"
    assert not blobs.exists() or not list(blobs.iterdir())


def test_a_write_is_not_repeated(
    tmp_path: Path, fleet_env: dict[str, str], proxy: RegistryProxy, make_dist: MakeDist
) -> None:
    proxy.fail("PUT", "/manifests/", 503, times=1)
    pushed = nexo(
        "plugin",
        "push",
        str(make_dist(identity=None)),
        proxy.ref("plugins/echo"),
        "--plain-http",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert pushed.code == 1, pushed.stderr
    assert pushed.document["kind"] == "network"
    assert proxy.count("PUT", "/manifests/") == 1
