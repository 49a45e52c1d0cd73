"""``.sha256`` sidecars read as ``sha256sum -c`` reads them: every line for the asset must
hold, so two lines that disagree fail whatever their order, from a release or beside a local
tarball, and the refused download leaves nothing in the cache or the install root."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from support.tarballs import asset_name, release_assets, sha256_hex, tree_snapshot, write_plugin

from nexo_pkg.core.errors import NexoError
from nexo_pkg.install.pipeline import install
from nexo_pkg.sources.checksum import parse_sidecar

from .conftest import InstallEnv

NAME = asset_name("hello", "1.0.0")
OTHER = "b" * 64


def _contradicting(real: str, order: str) -> str:
    lines = [f"{real}  {NAME}", f"{OTHER}  {NAME}"]
    if order == "wrong-first":
        lines.reverse()
    return "\n".join(lines) + "\n"


def _refused(env: InstallEnv, source: str) -> NexoError:
    before = tree_snapshot(env.home)
    with pytest.raises(NexoError) as caught:
        install(source, env.make_options())
    assert caught.value.kind == "checksum_mismatch", caught.value.message
    # Nothing new anywhere under NEXO_HOME: no plugin, no staging, no cache file.
    after = tree_snapshot(env.home)
    assert {path: entry for path, entry in after.items() if entry[0] != "dir"} == {
        path: entry for path, entry in before.items() if entry[0] != "dir"
    }
    assert not env.dest.exists() or list(env.dest.iterdir()) == []
    assert not env.cache.exists() or list(env.cache.iterdir()) == []
    return caught.value


@pytest.mark.parametrize("order", ["right-first", "wrong-first"])
def test_contradicting_lines_in_a_release_sidecar(install_env: InstallEnv, order: str) -> None:
    assets = release_assets("hello", "1.0.0")
    real = sha256_hex(assets[NAME])
    assets[NAME + ".sha256"] = _contradicting(real, order).encode()
    install_env.server.publish("acme", "hello", "v1.0.0", assets)
    error = _refused(install_env, "acme/hello")
    assert "disagree" in error.message or OTHER in error.message


@pytest.mark.parametrize("order", ["right-first", "wrong-first"])
def test_contradicting_lines_beside_a_local_tarball(
    install_env: InstallEnv, tmp_path: Path, order: str
) -> None:
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    real = sha256_hex(tarball.read_bytes())
    tarball.with_name(NAME + ".sha256").write_text(_contradicting(real, order))
    _refused(install_env, str(tarball))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The same digest twice, and lines for other files, are fine.
        (f"{'a' * 64}  {NAME}\n{'a' * 64} *{NAME}\n", "a" * 64),
        (f"{OTHER}  other.tar.gz\n{'a' * 64}  {NAME}\n", "a" * 64),
        (f"{'A' * 64}  {NAME}\n{'a' * 64}  dist/{NAME}\n", "a" * 64),
    ],
)
def test_agreeing_lines_are_one_checksum(text: str, expected: str) -> None:
    assert parse_sidecar(text, NAME) == expected


@pytest.mark.parametrize(
    "text",
    [
        f"{'a' * 64}\n{OTHER}\n",  # two bare digests
        f"{'a' * 64}\n{OTHER}  {NAME}\n",  # a bare digest and a named line
        f"{'a' * 64}  dist/{NAME}\n{OTHER}  {NAME}\n",
    ],
)
def test_disagreeing_lines_are_a_mismatch(text: str) -> None:
    with pytest.raises(NexoError) as caught:
        parse_sidecar(text, NAME)
    assert caught.value.kind == "checksum_mismatch"


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="needs coreutils sha256sum")
@pytest.mark.parametrize("order", ["right-first", "wrong-first"])
def test_sha256sum_fails_the_same_sidecar(tmp_path: Path, order: str) -> None:
    """The behaviour copied: ``sha256sum -c`` fails such a file too."""
    tarball = write_plugin(tmp_path, "hello", "1.0.0")
    sidecar = tarball.with_name(NAME + ".sha256")
    sidecar.write_text(_contradicting(sha256_hex(tarball.read_bytes()), order))
    checked = subprocess.run(
        ["sha256sum", "-c", sidecar.name], cwd=tmp_path, capture_output=True, check=False
    )
    assert checked.returncode == 1
