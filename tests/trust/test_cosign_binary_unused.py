"""``cosign_binary`` in ``trusted_keys.toml`` is accepted for compatibility and never used
(SPEC §6, issue 5 item 1): verification is native. The program it names would say yes to
everything; it is never run, and it cannot make a tampered release pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer, github_server
from support.private_sigstore import PrivateSigstore
from support.tarballs import asset_name, plugin_tarball, release_assets, sidecar_line, tree_snapshot

from .helpers import ACME_IDENTITY, ACME_REGEXP, cli_env

__all__ = ["github_server"]

ASSET = asset_name("echo", "1.2.3")


def _yes_man(tmp_path: Path) -> tuple[Path, Path]:
    """An executable that records that it ran and exits 0, as `cosign verify-blob` on success."""
    marker = tmp_path / "cosign-ran"
    program = tmp_path / "cosign"
    program.write_text(f'#!/bin/sh\necho "$@" >> "{marker}"\nexit 0\n', encoding="utf-8")
    program.chmod(0o755)
    return program, marker


@pytest.mark.parametrize(("release", "code", "outcome"), [
    ("signed", 0, "verified"),
    ("tampered", 1, "signature_invalid"),
])  # fmt: skip
def test_cosign_binary_is_never_run(  # noqa: PLR0917 - pytest fixtures
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    release: str,
    code: int,
    outcome: str,
) -> None:
    program, marker = _yes_man(tmp_path)
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        'schema_version = "1.0"\ndefault = "require"\ntrusted_root = "private_trusted_root.json"\n'
        f'cosign_binary = "{program}"\n\n'
        f"[[authors]]\nowner = \"acme\"\nidentity_regexp = '{ACME_REGEXP}'\n",
        encoding="utf-8",
    )
    assets = release_assets("echo", "1.2.3")
    bundle = private_sigstore.sign(assets[ASSET], identity=ACME_IDENTITY)
    assets[ASSET + ".sigstore.json"] = json.dumps(bundle).encode()
    if release == "tampered":
        # The checksum sidecar agrees with the swapped bytes: only the signature can tell.
        tampered = plugin_tarball("echo", "1.2.3", payload=b"tampered")
        assets[ASSET] = tampered
        assets[ASSET + ".sha256"] = sidecar_line(tampered, ASSET).encode()
    github_server.publish("acme", "nexo-plugin-echo", "v1.2.3", assets)
    plugins = tmp_path / "home" / "state" / "plugins"
    plugins.mkdir(parents=True)
    before = tree_snapshot(plugins)

    result = nexo("plugin", "install", "acme/nexo-plugin-echo@v1.2.3", "--yes", "--json",
                  "--trusted-keys", str(policy),
                  env=cli_env(tmp_path, api=github_server.url))  # fmt: skip

    assert result.code == code, result.stdout
    if code == 0:
        assert result.document["signature"]["status"] == outcome
        assert result.document["signature"]["identity"] == ACME_IDENTITY
    else:
        assert result.document["kind"] == outcome
        assert tree_snapshot(plugins) == before
    assert not marker.exists(), marker.read_text()
