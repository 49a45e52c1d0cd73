"""The lock keeps the digest of the SBOM each locked tarball carries (``sbom = "sha256:…"``),
so two locks of a fleet diff what changed inside plugins."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from support.tarballs import file, plugin_members, targz

from nexo_pkg.core.errors import NexoError
from nexo_pkg.fleet.lockfile import Lock, LockedPlugin, LockedTarget, read_lock, render_lock
from nexo_pkg.fleet.treehash import hash_tarball, tarball_hashes
from nexo_pkg.sources.archive import ArchiveLimits

SBOM = b'{"bomFormat": "CycloneDX"}\n'


def test_the_sbom_digest_comes_from_the_same_read_as_the_tree_hash(tmp_path: Path) -> None:
    carrying = tmp_path / "with.tar.gz"
    carrying.write_bytes(targz([*plugin_members("echo", "1.2.3"), file("sbom.cdx.json", SBOM)]))
    bare = tmp_path / "without.tar.gz"
    bare.write_bytes(targz(plugin_members("echo", "1.2.3")))
    limits = ArchiveLimits()
    tree, sbom = tarball_hashes(carrying, "echo", limits)
    assert tree == hash_tarball(carrying, "echo", limits)
    assert sbom == f"sha256:{hashlib.sha256(SBOM).hexdigest()}"
    assert tarball_hashes(bare, "echo", limits) == (hash_tarball(bare, "echo", limits), None)


def _lock(sbom: str | None) -> Lock:
    target = LockedTarget(
        "noarch", "echo-1.2.3-noarch.tar.gz", 10, "a" * 64, tree="n1:" + "b" * 64, sbom=sbom
    )
    plugin = LockedPlugin(
        "echo", "acme/echo", "*", None, "1.2.3", "acme/echo@v1.2.3", {"noarch": target}
    )
    return Lock({"echo": plugin})


def test_the_sbom_digest_round_trips_and_two_locks_differ_by_it(tmp_path: Path) -> None:
    before, after = _lock("sha256:" + "c" * 64), _lock("sha256:" + "d" * 64)
    text = render_lock(before)
    assert f'sbom = "sha256:{"c" * 64}"' in text
    path = tmp_path / "nexo-plugins.lock"
    path.write_text(text)
    assert read_lock(path).plugins == before.plugins
    changed = [line for line in render_lock(after).splitlines() if line not in text.splitlines()]
    assert changed == [f'sbom = "sha256:{"d" * 64}"']
    assert "sbom" not in render_lock(_lock(None))


@pytest.mark.parametrize("value", ["c" * 64, "sha256:short", "sha512:" + "c" * 64])
def test_a_malformed_sbom_digest_is_lock_invalid(tmp_path: Path, value: str) -> None:
    path = tmp_path / "nexo-plugins.lock"
    path.write_text(render_lock(_lock("sha256:" + "c" * 64)).replace("sha256:" + "c" * 64, value))
    with pytest.raises(NexoError) as caught:
        read_lock(path)
    assert (caught.value.kind, caught.value.exit_code) == ("lock_invalid", 2)
    assert "sbom" in caught.value.message
