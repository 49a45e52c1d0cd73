"""A blob cache entry that is not a regular file nexo-pkg wrote (a FIFO, a link to a file
outside holding the very bytes, a dangling link, a directory planted under the digest's name)
is never waited on, followed or taken for the blob: the next install through the CLI fetches
the tarball again, installs it and leaves a regular blob in its place; what a link pointed to
is untouched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.cli import nexo
from support.tarballs import asset_name, release_assets, sha256_hex

from .conftest import InstallEnv

TARBALL = asset_name("hello", "1.0.0")
# A FIFO opened for reading would block forever: the runs are processes with a timeout.
TIMEOUT = 60


@pytest.mark.parametrize("planted", ["fifo", "link-to-the-right-bytes", "dangling-link", "dir"])
def test_a_planted_blob_is_fetched_again_never_used(
    install_env: InstallEnv, tmp_path: Path, planted: str
) -> None:
    assets = release_assets("hello", "1.0.0")
    release = install_env.server.publish("acme", "hello", "v1.0.0", assets)
    tarball_path = install_env.server.asset_api_url(release, TARBALL).removeprefix(
        install_env.server.url
    )
    env = dict(os.environ)  # the fixture's NEXO_HOME and API base
    first = nexo("plugin", "install", "acme/hello", "--yes", "--json", "--dest",
                 str(install_env.dest), env=env, cwd=tmp_path, timeout=TIMEOUT)  # fmt: skip
    assert first.code == 0, first.stderr
    blob = install_env.home / "cache" / "blobs" / "sha256" / sha256_hex(assets[TARBALL])
    assert blob.is_file()
    blob.chmod(0o644)
    blob.unlink()
    outside = tmp_path / "outside.tar.gz"
    outside.write_bytes(assets[TARBALL])
    if planted == "fifo":
        os.mkfifo(blob)
    elif planted == "link-to-the-right-bytes":
        blob.symlink_to(outside)
    elif planted == "dangling-link":
        blob.symlink_to(tmp_path / "nowhere")
    else:
        blob.mkdir()
        (blob / "x").write_text("x\n")
    before = len(install_env.server.requests)
    for n, extra in enumerate(((), ("--json",))):
        other = tmp_path / f"other-root-{n}"
        result = nexo("plugin", "install", "acme/hello", "--yes", "--dest", str(other), *extra,
                      env=env, cwd=tmp_path, timeout=TIMEOUT)  # fmt: skip
        assert result.code == 0, result.stderr[-2000:]
        assert "Traceback" not in result.stderr
        assert (other / "hello-1.0.0" / ".nexo-install.json").is_file()
    # Fetched again once, by the first of the two runs; the second found it cached.
    asked = [request.path for request in install_env.server.requests[before:]]
    assert asked.count(tarball_path) == 1, asked
    assert not blob.is_symlink()
    assert blob.is_file()
    assert sha256_hex(blob.read_bytes()) == blob.name
    assert outside.read_bytes() == assets[TARBALL]
    assert not (tmp_path / "nowhere").exists()
