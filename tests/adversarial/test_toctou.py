"""Races and traps in the plugin root: what is extracted is what was inspected, and links
planted in ``<dest>`` are never followed."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import clean_env, nexo

from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources.archive import ArchiveLimits, inspect_archive
from nexo_pkg.sources.extract import extract_archive

from .archives import ASSET_NAME, CONTROLS, PLUGIN_ID, PLUGIN_VERSION, CorpusContext, sha256_sidecar
from .archives import CORPUS as ARCHIVES
from .harness import snapshot


def test_archive_swapped_after_inspection_is_refused(tmp_path: Path) -> None:
    tarball = tmp_path / ASSET_NAME
    tarball.write_bytes(CONTROLS["valid_baseline"](CorpusContext()))
    listing = inspect_archive(tarball, ArchiveLimits())
    # Between the scan and the extraction the file is replaced by one with an extra member
    # (here a traversal the scan never saw).
    tarball.write_bytes(ARCHIVES["dotdot_name"].build(CorpusContext()))
    staging = tmp_path / "staging"
    staging.mkdir()
    with pytest.raises(NexoError) as caught:
        extract_archive(tarball, staging, ArchiveLimits(), expect=listing)
    assert caught.value.kind == "archive_unsafe"
    assert list(staging.iterdir()) == []
    assert not (tmp_path / "escaped").exists()


def _install(tmp_path: Path, dest: Path, *extra: str) -> tuple[int, dict[str, object]]:
    incoming = tmp_path / "incoming"
    incoming.mkdir(exist_ok=True)
    data = CONTROLS["valid_baseline"](CorpusContext())
    (incoming / ASSET_NAME).write_bytes(data)
    (incoming / f"{ASSET_NAME}.sha256").write_text(sha256_sidecar(data))
    result = nexo(
        "plugin",
        "install",
        str(incoming / ASSET_NAME),
        "--dest",
        str(dest),
        "--yes",
        "--json",
        *extra,
        env=clean_env(NEXO_HOME=str(tmp_path / "home")),
        in_process=True,
    )
    return result.exit_code, result.document


def test_symlink_planted_at_the_final_name_is_not_followed(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    canary.mkdir()
    (canary / "keep.txt").write_text("keep\n")
    before = snapshot(canary)
    dest = tmp_path / "dest"
    dest.mkdir()
    final = dest / f"{PLUGIN_ID}-{PLUGIN_VERSION}"
    final.symlink_to(canary, target_is_directory=True)
    exit_code, document = _install(tmp_path, dest)
    # Refused, or installed in place of the link: never written through it.
    assert snapshot(canary) == before
    if exit_code == 0:
        assert not final.is_symlink()
        assert (final / "nexo-plugin.toml").is_file()
    else:
        assert exit_code == 1
        assert document["ok"] is False


def test_force_over_a_planted_symlink_unlinks_it_and_leaves_nothing_behind(
    tmp_path: Path,
) -> None:
    canary = tmp_path / "canary"
    canary.mkdir()
    (canary / "keep.txt").write_text("keep\n")
    before = snapshot(canary)
    dest = tmp_path / "dest"
    dest.mkdir()
    final = dest / f"{PLUGIN_ID}-{PLUGIN_VERSION}"
    final.symlink_to(canary, target_is_directory=True)
    exit_code, document = _install(tmp_path, dest, "--force")
    assert exit_code == 0, document
    assert snapshot(canary) == before
    assert not final.is_symlink()
    assert (final / "nexo-plugin.toml").is_file()
    assert sorted(child.name for child in dest.iterdir() if child.name.startswith(".")) == [
        ".nexo-install.lock"
    ]


def test_symlinked_leftover_staging_is_not_followed_when_cleaning(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    canary.mkdir()
    (canary / "keep.txt").write_text("keep\n")
    before = snapshot(canary)
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / f".staging-{PLUGIN_ID}-planted").symlink_to(canary, target_is_directory=True)
    (dest / ".removing-old-planted").symlink_to(canary, target_is_directory=True)
    exit_code, document = _install(tmp_path, dest)
    assert exit_code == 0, document
    assert snapshot(canary) == before
    assert (dest / f"{PLUGIN_ID}-{PLUGIN_VERSION}" / "nexo-plugin.toml").is_file()


def test_content_swapped_after_inspection_is_refused(tmp_path: Path) -> None:
    from .archives import LAUNCHER, _baseline_members, _targz

    tarball = tmp_path / ASSET_NAME
    tarball.write_bytes(CONTROLS["valid_baseline"](CorpusContext()))
    listing = inspect_archive(tarball, ArchiveLimits())
    evil = b"#!/bin/sh\necho swapped\n".ljust(len(LAUNCHER))
    members = [
        (info, evil if info.name == f"bin/{PLUGIN_ID}" else data)
        for info, data in _baseline_members()
    ]
    tarball.write_bytes(_targz(members))
    staging = tmp_path / "staging"
    staging.mkdir()
    with pytest.raises(NexoError) as caught:
        extract_archive(tarball, staging, ArchiveLimits(), expect=listing)
    assert caught.value.kind == "archive_unsafe"
    assert list(staging.iterdir()) == []
