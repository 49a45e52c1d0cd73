"""A registry install looks the signature files up while the layer downloads: on a registry
far away their round trips (the referrers listing, the fallback tag, each file) no longer
wait for the layer's last byte before the archive can be verified and extracted. Nothing is
verified, or extracted, before both are in (SPEC §5: nothing is extracted before it is
verified)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import CliResult, nexo
from support.registry import Registry
from support.registry_proxy import RegistryProxy

from .conftest import ACME_IDENTITY, MakeDist, push_dist


@pytest.fixture
def proxy(registry: Registry) -> Iterator[RegistryProxy]:
    running = RegistryProxy(registry.host).start()
    yield running
    running.stop()


def _install(proxy: RegistryProxy, dest: Path, policy: Path, env: dict[str, str]) -> CliResult:
    return nexo(
        "plugin", "install", proxy.ref("plugins/echo:1.2.3"), "--dest", str(dest),
        "--plain-http", "--trusted-keys", str(policy), "--require-signature", "--target",
        "noarch", "--yes", "--json", env=env, in_process=True,
    )  # fmt: skip


def test_the_signature_lookup_does_not_wait_for_the_layer(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    proxy: RegistryProxy,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    dist = make_dist()
    push_dist(dist, registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    tarball = dist / "echo-1.2.3-noarch.tar.gz"
    # The layer is answered only once a signature lookup has arrived (or after 10 s).
    proxy.hold_blob = "sha256:" + hashlib.sha256(tarball.read_bytes()).hexdigest()
    dest = tmp_path / "root"
    result = _install(proxy, dest, policy, fleet_env)
    assert result.code == 0, result.stderr
    assert result.document["signature"]["identity"] == ACME_IDENTITY
    assert proxy.released_by == "lookup"
    assert (dest / "echo-1.2.3" / ".nexo-install.json").is_file()


def test_a_refused_signature_still_extracts_nothing(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    proxy: RegistryProxy,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    """The lookup running beside the layer changes no verdict: an unsigned layer under
    --require-signature is refused after both are in, and nothing reaches the root."""
    dist = make_dist(identity=None)
    push_dist(dist, registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    tarball = dist / "echo-1.2.3-noarch.tar.gz"
    proxy.hold_blob = "sha256:" + hashlib.sha256(tarball.read_bytes()).hexdigest()
    dest = tmp_path / "root"
    result = _install(proxy, dest, policy, fleet_env)
    assert result.code == 1
    assert result.document["kind"] == "signature_missing"
    assert proxy.released_by == "lookup"
    assert not (dest / "echo-1.2.3").exists()
    assert not any(dest.glob("echo-*"))
