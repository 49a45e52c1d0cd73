"""GitHub installs go through the shared blob cache ``$NEXO_HOME/cache/blobs/sha256/``: an
asset whose sha256 the release vouches for (its ``.sha256`` sidecar or the API digest) is
downloaded once, a damaged cached blob is fetched again and never installed, and bytes that
do not match are neither installed nor cached."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.tarballs import asset_name, plugin_tarball, release_assets, sha256_hex, sidecar_line

from nexo_pkg.install.pipeline import install

from .conftest import InstallEnv, assert_refused

TARBALL = asset_name("hello", "1.0.0")


def _store(env: InstallEnv) -> Path:
    return env.home / "cache" / "blobs" / "sha256"


def _gets(env: InstallEnv) -> list[str]:
    """Paths of the asset downloads the server answered (API and browser URLs)."""
    return [
        request.path
        for request in env.server.requests
        if "/releases/assets/" in request.path or "/releases/download/" in request.path
    ]


def _installed_payload(dest: Path) -> str:
    return (dest / "hello-1.0.0" / "lib" / "plugin" / "main.py").read_text()


@pytest.mark.parametrize("digests", [False, True], ids=["sidecar", "api-digest"])
def test_a_second_install_downloads_no_tarball(install_env: InstallEnv, digests: bool) -> None:
    assets = release_assets("hello", "1.0.0")
    release = install_env.server.publish("acme", "hello", "v1.0.0", assets, digests=digests)
    tarball_path = install_env.server.asset_api_url(release, TARBALL).removeprefix(
        install_env.server.url
    )
    install("acme/hello", install_env.make_options())
    first = _gets(install_env)
    assert first.count(tarball_path) == 1
    assert (_store(install_env) / sha256_hex(assets[TARBALL])).is_file()

    other = install_env.home / "elsewhere"
    install("acme/hello", install_env.make_options(dest=other))
    second = _gets(install_env)[len(first) :]
    assert tarball_path not in second
    if digests:
        # The sidecar is vouched for by its own API digest: nothing at all is downloaded.
        assert second == []
    else:
        # Only the sidecar, which names the tarball's sha256.
        assert second == [p for p in first if p != tarball_path]
    assert _installed_payload(other) == _installed_payload(install_env.dest)
    # The private copies are gone; the cache keeps the blobs.
    assert not install_env.cache.exists() or list(install_env.cache.iterdir()) == []


def test_a_damaged_cached_blob_is_fetched_again_never_installed(install_env: InstallEnv) -> None:
    assets = release_assets("hello", "1.0.0")
    release = install_env.server.publish("acme", "hello", "v1.0.0", assets)
    tarball_path = install_env.server.asset_api_url(release, TARBALL).removeprefix(
        install_env.server.url
    )
    install("acme/hello", install_env.make_options())
    blob = _store(install_env) / sha256_hex(assets[TARBALL])
    before = len(_gets(install_env))
    # Another valid plugin tarball under this name: installing it would be a substitution.
    blob.chmod(0o644)
    blob.write_bytes(plugin_tarball("hello", "1.0.0", payload=b"substituted"))

    other = install_env.home / "elsewhere"
    result = install("acme/hello", install_env.make_options(dest=other))
    assert result.plan.sha256 == sha256_hex(assets[TARBALL])
    assert _installed_payload(other) == _installed_payload(install_env.dest)
    assert not (other / "hello-1.0.0" / "lib" / "plugin" / "data.bin").exists()
    # The tarball was downloaded again, and the blob is whole again.
    assert _gets(install_env)[before:].count(tarball_path) == 1
    assert sha256_hex(blob.read_bytes()) == blob.name


def test_bytes_that_do_not_match_are_neither_installed_nor_cached(
    install_env: InstallEnv,
) -> None:
    assets = release_assets("hello", "1.0.0")
    assets[TARBALL + ".sha256"] = sidecar_line(b"something else", TARBALL).encode()
    install_env.server.publish("acme", "hello", "v1.0.0", assets)
    error = assert_refused(install_env, "acme/hello", "checksum_mismatch")
    assert error.details["actual"] == sha256_hex(assets[TARBALL])
    assert error.details["checked_against"] == "sidecar"
    assert list(_store(install_env).iterdir()) == []
    assert list((_store(install_env).parent / "tmp").iterdir()) == []


def test_a_wrong_api_digest_on_a_signature_file_is_refused(install_env: InstallEnv) -> None:
    assets = release_assets("hello", "1.0.0")
    bundle = TARBALL + ".sigstore.json"
    assets[bundle] = b"{}"
    install_env.server.publish(
        "acme", "hello", "v1.0.0", assets, digests={bundle: "sha256:" + "0" * 64}
    )
    assert_refused(install_env, "acme/hello", "checksum_mismatch")
    assert not [p for p in _store(install_env).iterdir() if p.name == "0" * 64]


_CONCURRENT = """
import sys
from pathlib import Path
from nexo_pkg.install.options import InstallOptions
from nexo_pkg.install.pipeline import install
install("acme/hello", InstallOptions(dest=Path(sys.argv[1]), nexo_home=Path(sys.argv[2])))
"""


def test_concurrent_installs_share_one_blob(install_env: InstallEnv) -> None:
    payload = os.urandom(2 * 1024 * 1024)
    assets = release_assets(
        "hello", "1.0.0", data=plugin_tarball("hello", "1.0.0", payload=payload)
    )
    install_env.server.publish("acme", "hello", "v1.0.0", assets)
    # Slow enough that both processes are downloading at the same time.
    install_env.server.slow(0.3, path_contains="/releases/assets/")
    env = dict(os.environ)
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _CONCURRENT,
                str(install_env.home / f"root{i}"),
                str(install_env.home),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for i in range(2)
    ]
    for child in children:
        _, stderr = child.communicate(timeout=120)
        assert child.returncode == 0, stderr.decode()
    for i in range(2):
        assert _installed_payload(install_env.home / f"root{i}") == "print('hello')\n"
    blobs = sorted(p.name for p in _store(install_env).iterdir())
    assert sha256_hex(assets[TARBALL]) in blobs
    for name in blobs:
        assert sha256_hex((_store(install_env) / name).read_bytes()) == name
    assert list((_store(install_env).parent / "tmp").iterdir()) == []
