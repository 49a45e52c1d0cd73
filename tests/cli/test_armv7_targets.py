"""32-bit ARM's triples between ``pack`` and ``install``: what ``pack --target`` writes for an
armv7 host is what ``install`` asks for there. A glibc armv7 host takes the
``armv7-unknown-linux-gnueabihf`` tarball, else the ``musleabihf`` one (as an x86_64 or
aarch64 ``-gnu`` host falls back to ``-musl``), whether it detects itself or is named by
``--target``; a musl host never takes a glibc build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer
from support.tarballs import tree_snapshot

GLIBC = "armv7-unknown-linux-gnueabihf"
MUSL = "armv7-unknown-linux-musleabihf"


def _packed_release(tmp_path: Path, server: GitHubServer, target: str) -> None:
    """``nexo plugin new`` + ``nexo plugin pack --target TARGET --binary …``, every file pack
    wrote published as the release v0.1.0 of acme/demo."""
    project = tmp_path / "demo"
    made = nexo("plugin", "new", "demo", "--dest", str(project), in_process=True)
    assert made.code == 0, made.stderr
    binary = tmp_path / "demo-bin"
    binary.write_text("#!/bin/sh\nexit 0\n")
    binary.chmod(0o755)
    out = tmp_path / "dist"
    packed = nexo(
        "plugin", "pack", str(project), "--target", target, "--binary", str(binary),
        "--out", str(out), "--json", in_process=True,
    )  # fmt: skip
    assert packed.code == 0, packed.stderr
    assert json.loads(packed.stdout)["target"] == target
    server.publish(
        "acme", "demo", "v0.1.0", {path.name: path.read_bytes() for path in out.iterdir()}
    )


def test_a_glibc_armv7_target_installs_the_musleabihf_tarball_pack_wrote(
    tmp_path: Path, home: Path, server: GitHubServer
) -> None:
    _packed_release(tmp_path, server, MUSL)
    done = nexo(
        "plugin", "install", "acme/demo", "--target", GLIBC, "--yes", "--json", in_process=True
    )  # fmt: skip
    assert done.code == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["target"] == MUSL
    installed = Path(document["path"])
    assert (installed / "bin" / "demo").read_text() == "#!/bin/sh\nexit 0\n"


@pytest.mark.parametrize("asked", [MUSL, "arm-unknown-linux-musleabihf"])
def test_a_musl_armv7_target_never_takes_the_glibc_tarball(
    tmp_path: Path, home: Path, server: GitHubServer, asked: str
) -> None:
    _packed_release(tmp_path, server, GLIBC)
    dest = home / "state" / "plugins"
    before = tree_snapshot(dest)
    refused = nexo(
        "plugin", "install", "acme/demo", "--target", asked, "--yes", "--json", in_process=True
    )  # fmt: skip
    assert refused.code == 1, refused.stderr
    document = json.loads(refused.stdout)
    assert document["kind"] == "asset_not_found"
    assert f"demo-0.1.0-{GLIBC}.tar.gz" in document["error"]
    assert tree_snapshot(dest) == before
