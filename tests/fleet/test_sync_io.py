"""What a ``sync --frozen`` asks of the registry and of the disk for each plugin: each blob
is extracted as soon as it is checked and synced to disk once at the end of the run; the
installed trees are synced before their renames, as ever."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo
from support.registry import Registry

from nexo_pkg.sources.api import extract_archive

from .conftest import LINUX, MakeDist, push_dist

PLUGINS = ("alpha", "bravo", "charlie")

linux_only = pytest.mark.skipif(
    sys.platform != "linux", reason="reads the path of a descriptor from /proc"
)


def _locked_fleet(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> Path:
    """Three unsigned plugins pushed and locked; the lock's path."""
    home = Path(fleet_env["NEXO_HOME"])
    for number, plugin_id in enumerate(PLUGINS):
        dist = make_dist(plugin_id, f"1.{number}.0", identity=None, targets=(LINUX,))
        push_dist(dist, registry.ref(f"plugins/{plugin_id}"), home)
    project = tmp_path / "project"
    project.mkdir()
    wanted = project / "nexo-plugins.toml"
    wanted.write_text(
        "".join(
            f'[plugins.{name}]\nsource = "{registry.ref(f"plugins/{name}")}"\n\n'
            for name in PLUGINS
        ),
        encoding="utf-8",
    )
    locked = nexo("plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env)
    assert locked.code == 0, locked.stderr
    return project / "nexo-plugins.lock"


@linux_only
@pytest.mark.parametrize("jobs", ["1", "3"])
def test_blobs_are_extracted_before_they_are_synced_and_synced_before_the_run_ends(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    monkeypatch: pytest.MonkeyPatch,
    jobs: str,
) -> None:
    lock_path = _locked_fleet(tmp_path, fleet_env, registry, make_dist)
    home = tmp_path / "sync-home"
    store = home / "cache" / "blobs" / "sha256"
    events: list[tuple[str, str]] = []
    real_fsync = os.fsync

    def fsync(descriptor: int) -> None:
        events.append(("fsync", str(Path(f"/proc/self/fd/{descriptor}").readlink())))
        real_fsync(descriptor)

    def extract(tarball: Path, *args: Any, **kwargs: Any) -> Any:
        events.append(("extract", str(tarball)))
        return extract_archive(tarball, *args, **kwargs)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr("nexo_pkg.install.pipeline.extract_archive", extract)
    dest = tmp_path / "root"
    synced = nexo(
        "plugin", "sync", "--lock", str(lock_path), "--dest", str(dest), "--frozen",
        "--plain-http", "--jobs", jobs, "--json",
        env={**fleet_env, "NEXO_HOME": str(home)}, in_process=True,
    )  # fmt: skip
    assert synced.code == 0, synced.stdout
    assert [item["action"] for item in synced.document["plugins"]] == ["installed"] * 3

    extracted = [path for kind, path in events if kind == "extract"]
    assert len(extracted) == len(PLUGINS)
    assert all(Path(path).parent == store for path in extracted)
    synced_paths = [path for kind, path in events if kind == "fsync"]
    # No download is synced on its way into the store (its temp file) ...
    assert not [path for path in synced_paths if "/cache/blobs/tmp/" in path]
    # ... each tarball is synced where it is, after its extraction began ...
    for tarball in extracted:
        assert tarball in synced_paths
        assert events.index(("fsync", tarball)) > events.index(("extract", tarball))
    # ... and the store's directory after them, before the command ended.
    assert synced_paths[-1] == str(store)
    assert sorted(path.name for path in store.iterdir()) == sorted(
        Path(path).name for path in extracted
    )
