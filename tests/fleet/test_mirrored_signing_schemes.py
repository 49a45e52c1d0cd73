"""Every way a GitHub release is signed survives ``mirror``: an air-gapped host that locks the
registry copies and syncs them several at a time, with GitHub out of reach and a signature
required, verifies each one with its own scheme and records the release workflow that signed
it, as an install from GitHub would."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from support.cli import nexo
from support.github_server import GitHubServer, github_server
from support.private_sigstore import PrivateSigstore
from support.registry import Registry
from support.registry_env import LINUX, write_wanted
from support.tarballs import plugin_tarball, release_assets

__all__ = ["github_server"]

VERSION = "1.0.0"
Assets = dict[str, bytes]


def _identity(plugin_id: str) -> str:
    return (
        f"https://github.com/acme/nexo-plugin-{plugin_id}/.github/workflows/release.yml"
        f"@refs/tags/v{VERSION}"
    )


def _tarball(plugin_id: str) -> str:
    return f"{plugin_id}-{VERSION}-{LINUX}.tar.gz"


def _bundle(instance: PrivateSigstore, plugin_id: str, assets: Assets, suffix: str) -> None:
    """A Sigstore bundle of the tarball beside it, named ``<asset><suffix>``."""
    signed = instance.sign(assets[_tarball(plugin_id)], identity=_identity(plugin_id))
    assets[_tarball(plugin_id) + suffix] = json.dumps(signed).encode()


def _legacy(instance: PrivateSigstore, plugin_id: str, assets: Assets) -> None:
    """``cosign sign-blob --bundle`` before Sigstore bundles: a legacy ``.bundle``."""
    document, _, _ = instance.sign_legacy(
        assets[_tarball(plugin_id)], identity=_identity(plugin_id)
    )
    assets[_tarball(plugin_id) + ".bundle"] = json.dumps(document).encode()


def _checksums(instance: PrivateSigstore, plugin_id: str, assets: Assets) -> None:
    """GoReleaser's shape: no sidecar, a signed checksums file that lists the tarball."""
    del assets[_tarball(plugin_id) + ".sha256"]
    data = assets[_tarball(plugin_id)]
    listed = f"{hashlib.sha256(data).hexdigest()}  {_tarball(plugin_id)}\n".encode()
    name = f"{plugin_id}_{VERSION}_checksums.txt"
    assets[name] = listed
    assets[name + ".sigstore.json"] = json.dumps(
        instance.sign(listed, identity=_identity(plugin_id))
    ).encode()


def _attestation(instance: PrivateSigstore, plugin_id: str, assets: Assets) -> dict[str, object]:
    return instance.attest(
        assets[_tarball(plugin_id)],
        identity=_identity(plugin_id),
        repository=f"acme/nexo-plugin-{plugin_id}",
        ref=f"refs/tags/v{VERSION}",
    )


def _attestation_file(instance: PrivateSigstore, plugin_id: str, assets: Assets) -> None:
    line = json.dumps(_attestation(instance, plugin_id, assets)) + "\n"
    assets[_tarball(plugin_id) + ".intoto.jsonl"] = line.encode()


# plugin id -> (how its release is signed, the scheme its receipt records)
SCHEMES: dict[str, tuple[Callable[[PrivateSigstore, str, Assets], None] | None, str]] = {
    "bundled": (lambda i, p, a: _bundle(i, p, a, ".sigstore.json"), "sigstore-bundle"),
    "dotsigstore": (lambda i, p, a: _bundle(i, p, a, ".sigstore"), "sigstore-bundle"),
    "newbundle": (lambda i, p, a: _bundle(i, p, a, ".bundle"), "sigstore-bundle"),
    "legacy": (_legacy, "cosign-legacy"),
    "goreleaser": (_checksums, "checksums-file"),
    "intoto": (_attestation_file, "github-attestation"),
    # Signed only through GitHub's attestations API: mirror writes what it answers as a file.
    "attested": (None, "github-attestation"),
}


def test_every_signing_scheme_mirrors_and_verifies_in_a_parallel_frozen_sync(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy: Path,
) -> None:
    env = {**fleet_env, "NEXO_GITHUB_API_BASE": github_server.url}
    for plugin_id, (sign, _) in SCHEMES.items():
        data = plugin_tarball(plugin_id, VERSION, payload=plugin_id.encode())
        assets = release_assets(plugin_id, VERSION, target=LINUX, data=data)
        repo = f"nexo-plugin-{plugin_id}"
        if sign is None:
            github_server.publish_attestations(
                "acme", repo, hashlib.sha256(data).hexdigest(),
                [_attestation(private_sigstore, plugin_id, assets)],
            )  # fmt: skip
        else:
            sign(private_sigstore, plugin_id, assets)
        github_server.publish("acme", repo, f"v{VERSION}", assets, digests=sign is _checksums)
        mirrored = nexo(
            "plugin", "mirror", f"acme/{repo}@v{VERSION}", registry.ref(f"mirror/{plugin_id}"),
            "--plain-http", "--json", env=env, in_process=True,
        )  # fmt: skip
        assert mirrored.code == 0, (plugin_id, mirrored.stdout)
        assert mirrored.document["signed"] == [LINUX], plugin_id
    github_server.stop()

    # The air-gapped host: its own home (an empty cache), GitHub out of reach.
    offline = {**env, "NEXO_HOME": str(tmp_path / "offline-home")}
    (tmp_path / "fleet").mkdir()
    wanted = write_wanted(
        tmp_path / "fleet" / "nexo-plugins.toml",
        {plugin_id: registry.ref(f"mirror/{plugin_id}") for plugin_id in SCHEMES},
    )
    common = ("--plain-http", "--trusted-keys", str(policy), "--require-signature", "--json")
    locked = nexo("plugin", "lock", "-f", str(wanted), *common, env=offline, in_process=True)
    assert locked.code == 0, locked.stdout
    lock = wanted.parent / "nexo-plugins.lock"
    text = lock.read_text(encoding="utf-8")
    for plugin_id in SCHEMES:
        assert f'identity = "{_identity(plugin_id)}"' in text, plugin_id
        assert f'github = "acme/nexo-plugin-{plugin_id}@v{VERSION}"' in text, plugin_id

    dest = tmp_path / "root"
    synced = nexo(
        "plugin", "sync", "--lock", str(lock), "--dest", str(dest), "--frozen", *common,
        env={**offline, "NEXO_HOME": str(tmp_path / "host-home")}, in_process=True,
    )  # fmt: skip
    assert synced.code == 0, synced.stdout
    outcomes = {item["id"]: item for item in synced.document["plugins"]}
    assert sorted(outcomes) == sorted(SCHEMES)
    assert synced.document["requests"]["github_client_used"] is False
    for plugin_id, (_, scheme) in SCHEMES.items():
        assert outcomes[plugin_id]["action"] == "installed", outcomes[plugin_id]
        assert outcomes[plugin_id]["identity"] == _identity(plugin_id)
        receipt = json.loads((dest / f"{plugin_id}-{VERSION}" / ".nexo-install.json").read_text())
        signature = receipt["signature"]
        assert (signature["status"], signature["scheme"]) == ("verified", scheme), plugin_id
        assert signature["identity"] == _identity(plugin_id)
        assert (receipt["owner"], receipt["repo"]) == ("acme", f"nexo-plugin-{plugin_id}")
