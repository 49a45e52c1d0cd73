"""Every name a signed checksums file goes by (GoReleaser's ``checksums.txt`` and
``<project>_<version>_checksums.txt``, ``SHA256SUMS``), signed by a Sigstore bundle or by an
attestation beside it: a release that ships one installs verified through the file, and a
file by another name vouches for nothing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo
from support.github_server import GitHubServer, github_server
from support.private_sigstore import PrivateSigstore
from support.tarballs import asset_name, release_assets, tree_snapshot

from .helpers import cli_env

__all__ = ["github_server"]

OWNER, REPO, PLUGIN = "acme", "nexo-plugin-echo", "echo"
IDENTITY = f"https://github.com/{OWNER}/{REPO}/.github/workflows/release.yml@refs/tags/v1.0.0"
POLICY = """\
schema_version = "1.0"
default = "require"
trusted_root = "private_trusted_root.json"

[[authors]]
owner = "acme"
identity_regexp = '^https://github\\.com/acme/[^/]+/\\.github/workflows/release\\.yml@refs/tags/.+$'
"""


def _release(
    server: GitHubServer,
    instance: PrivateSigstore,
    checksums_name: str,
    material: str,
    *,
    digests: bool = False,
) -> None:
    """``PLUGIN`` 1.0.0 with no sidecar of its own: one checksums file listing it, signed by
    ``material`` beside it (a ``.sigstore.json`` bundle or ``.intoto.jsonl`` attestation);
    without asset ``digests`` the checksums file is all that vouches for the download."""
    assets = release_assets(PLUGIN, "1.0.0", sidecar=False)
    name = asset_name(PLUGIN, "1.0.0")
    listing = f"{hashlib.sha256(assets[name]).hexdigest()}  {name}\n".encode()
    assets[checksums_name] = listing
    if material == "bundle":
        signed = instance.sign(listing, identity=IDENTITY)
        assets[checksums_name + ".sigstore.json"] = json.dumps(signed).encode()
    else:
        attested = instance.attest(listing, identity=IDENTITY, repository=f"{OWNER}/{REPO}",
                                   ref="refs/tags/v1.0.0")  # fmt: skip
        assets[checksums_name + ".intoto.jsonl"] = json.dumps(attested).encode() + b"\n"
    server.publish(OWNER, REPO, "v1.0.0", assets, digests=digests)


def _install(
    tmp_path: Path, server: GitHubServer, instance: PrivateSigstore
) -> tuple[int, dict[str, Any]]:
    instance.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(POLICY, encoding="utf-8")
    result = nexo("plugin", "install", f"{OWNER}/{REPO}@v1.0.0", "--yes", "--json",
                  "--dest", str(tmp_path / "plugins"), "--trusted-keys", str(policy),
                  env=cli_env(tmp_path, api=server.url), in_process=True)  # fmt: skip
    return result.code, json.loads(result.stdout)


@pytest.mark.parametrize("material", ["bundle", "attestation"])
@pytest.mark.parametrize(
    "checksums_name", ["checksums.txt", "SHA256SUMS", f"{PLUGIN}_1.0.0_checksums.txt"]
)
def test_a_signed_checksums_file_by_each_name_installs_verified(
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    checksums_name: str,
    material: str,
) -> None:
    _release(github_server, private_sigstore, checksums_name, material)
    code, document = _install(tmp_path, github_server, private_sigstore)
    assert code == 0, document
    signature = document["signature"]
    assert (signature["status"], signature["scheme"]) == ("verified", "checksums-file")
    assert signature["material"].startswith(checksums_name)
    assert signature["identity"] == IDENTITY
    receipt = json.loads(next((tmp_path / "plugins").glob("*/.nexo-install.json")).read_text())
    assert receipt["signature"]["scheme"] == "checksums-file"


@pytest.mark.parametrize("checksums_name", ["notes.txt", "checksums.txt.bak", "SHA512SUMS"])
def test_a_signed_file_of_another_name_vouches_for_nothing(
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    checksums_name: str,
) -> None:
    """A signed file that is not a checksums file by its name is not read as one: under
    ``require`` the tarball (its download checked by the asset digest) is unsigned, and
    nothing is installed."""
    _release(github_server, private_sigstore, checksums_name, "bundle", digests=True)
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    before = tree_snapshot(plugins)
    code, document = _install(tmp_path, github_server, private_sigstore)
    assert code == 1
    assert document["kind"] == "signature_missing", document
    assert tree_snapshot(plugins) == before
