"""A GitHub install that is refused after its download, or is only a dry run, leaves the
shared blob cache as it found it: the blobs it added (tarball, sidecar, manifest asset) are
taken out again, blobs that were there before stay. A successful install keeps them, so the
next install of the same release downloads nothing."""

from __future__ import annotations

import pytest
from adversarial.harness import snapshot
from support.tarballs import file, plugin_members, plugin_tarball, release_assets, targz

from nexo_pkg.core.errors import NexoError
from nexo_pkg.install.pipeline import install, remove, upgrade

from .conftest import InstallEnv


def _blobs(env: InstallEnv) -> set[str]:
    store = env.home / "cache" / "blobs" / "sha256"
    return {path.name for path in store.iterdir()} if store.is_dir() else set()


REFUSED = {
    "archive_unsafe": targz([*plugin_members("hello", "1.0.0"), file("../evil", b"x")]),
    "archive_invalid": b"not a tarball at all",
    "manifest_mismatch": plugin_tarball("hello", "1.0.1"),
}


@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_a_refused_install_adds_no_blob(install_env: InstallEnv, kind: str) -> None:
    data = REFUSED[kind]
    install_env.server.publish(
        "acme", "hello", "v1.0.0", release_assets("hello", "1.0.0", data=data), digests=True
    )
    before = snapshot(install_env.home)
    with pytest.raises(NexoError) as caught:
        install("acme/hello", install_env.make_options())
    assert caught.value.kind == kind
    after = snapshot(install_env.home)
    # The cache's directories and lock file may now exist; no blob, temp file or plugin does.
    added = after.keys() - before.keys()
    assert [n for n in added if after[n].kind != "dir" and n != "cache/blobs/.lock"] == []
    assert _blobs(install_env) == set()


def test_a_dry_run_adds_no_blob_and_a_real_install_keeps_them(install_env: InstallEnv) -> None:
    install_env.server.publish(
        "acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"), digests=True
    )
    install("acme/hello", install_env.make_options(dry_run=True))
    assert _blobs(install_env) == set()
    install("acme/hello", install_env.make_options())
    kept = _blobs(install_env)
    assert len(kept) == 3  # tarball, sidecar, manifest asset
    remove("hello", install_env.dest)
    # Blobs that were there before a dry run stay.
    install("acme/hello", install_env.make_options(dry_run=True))
    assert _blobs(install_env) == kept
    requests = len(install_env.server.requests)
    install("acme/hello", install_env.make_options())
    paths = [request.path for request in install_env.server.requests[requests:]]
    assert paths[0] == "/repos/acme/hello/releases/latest"
    assert [path for path in paths if "/releases/assets/" in path] == []


def test_a_refused_upgrade_takes_out_only_what_it_added(install_env: InstallEnv) -> None:
    install_env.server.publish(
        "acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"), digests=True
    )
    install("acme/hello", install_env.make_options())
    kept = _blobs(install_env)
    unsafe = targz([*plugin_members("hello", "1.1.0"), file("lib/../../x", b"x")])
    install_env.server.publish(
        "acme", "hello", "v1.1.0", release_assets("hello", "1.1.0", data=unsafe), digests=True
    )
    before = snapshot(install_env.home)
    with pytest.raises(NexoError) as caught:
        upgrade("hello", install_env.make_options())
    assert caught.value.kind == "archive_unsafe"
    assert snapshot(install_env.home) == before
    assert _blobs(install_env) == kept
