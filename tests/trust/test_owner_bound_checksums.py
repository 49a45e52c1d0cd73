"""A signed checksums file binds its signer to the entry's owner as a bundle does.

``evil/repo`` calls ``acme``'s reusable release workflow to sign a GoReleaser-style
``checksums.txt`` that lists the tarball. Under an ``acme`` entry matching that workflow with
``allow_republish = true``, ``trust verify`` of the tarball (the checksums file's bundle as
``--bundle``) refuses it, with or without ``--owner``: ``signer_untrusted``, exit 1. The same
workflow run for acme's own repository verifies.

On the release path too: a GoReleaser-shaped release of ``acme/nexo-plugin-echo`` (no asset
digests, no sidecars) whose ``checksums.txt`` is signed from ``evil/repo`` (by a bundle beside
it, or by an attestation the API serves for its digest) is refused by ``install`` and
``upgrade`` with ``signer_untrusted``: the installed version stays byte for byte, and the
refused tarball is not left in the blob cache.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from support.cli import CliResult, nexo
from support.github_server import GitHubServer, asset_host, github_server
from support.private_sigstore import PrivateSigstore
from support.tarballs import asset_name, release_assets, tree_snapshot, write_plugin

from .helpers import ACME_IDENTITY, cli_env, write_acme_policy

__all__ = ["asset_host", "github_server"]

SHARED_WORKFLOW = "https://github.com/acme/workflows/.github/workflows/release.yml@refs/tags/v1.2.3"


@pytest.mark.parametrize("scope", [(), ("--owner", "acme")], ids=["no-owner", "owner"])
@pytest.mark.parametrize("repository", ["evil/repo", "acme/workflows"])
def test_a_checksums_file_signed_from_another_owners_repository_is_refused(
    *, tmp_path: Path, private_sigstore: PrivateSigstore, repository: str, scope: tuple[str, ...]
) -> None:
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = write_acme_policy(
        tmp_path / "trusted_keys.toml",
        r"^https://github\.com/acme/workflows/.*$",
        allow_republish=True,
    )
    tarball = write_plugin(tmp_path / "dist", "echo", "1.2.3")
    listed = f"{hashlib.sha256(tarball.read_bytes()).hexdigest()}  {tarball.name}\n".encode()
    checksums = tarball.parent / "checksums.txt"
    checksums.write_bytes(listed)
    bundle = checksums.with_name("checksums.txt.sigstore.json")
    bundle.write_text(
        json.dumps(private_sigstore.sign(listed, identity=SHARED_WORKFLOW, repository=repository))
    )
    result = nexo("plugin", "trust", "verify", str(tarball), "--bundle", str(bundle), *scope,
                  "--trusted-keys", str(policy), "--json", env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert "Traceback" not in result.stderr
    document = json.loads(result.stdout)
    if repository == "evil/repo":
        assert result.code == 1, result.stdout
        assert document["kind"] == "signer_untrusted"
        assert "evil/repo, outside owner acme" in document["error"]
    else:
        assert result.code == 0, result.stdout
        assert document["status"] == "verified"
        assert document["scheme"] == "checksums-file"


def _goreleaser_release(
    server: GitHubServer, instance: PrivateSigstore, version: str, *, repository: str, how: str
) -> str:
    """Publish ``v<version>`` with a signed ``checksums.txt``; the tarball's sha256."""
    assets = release_assets("echo", version, sidecar=False)
    name = asset_name("echo", version)
    listed = f"{hashlib.sha256(assets[name]).hexdigest()}  {name}\n".encode()
    assets["checksums.txt"] = listed
    identity = (
        ACME_IDENTITY.replace("v1.2.3", f"v{version}")
        if repository == "acme/nexo-plugin-echo"
        else SHARED_WORKFLOW.replace("v1.2.3", f"v{version}")
    )
    if how == "bundle":
        bundle = instance.sign(listed, identity=identity, repository=repository)
        assets["checksums.txt.sigstore.json"] = json.dumps(bundle).encode()
    else:
        attested = instance.attest(listed, identity=identity, repository=repository,
                                   ref=f"refs/tags/v{version}")  # fmt: skip
        server.publish_attestations(
            "acme", "nexo-plugin-echo", hashlib.sha256(listed).hexdigest(), [attested]
        )
    server.publish("acme", "nexo-plugin-echo", f"v{version}", assets)
    return hashlib.sha256(assets[name]).hexdigest()


@pytest.mark.parametrize("how", ["bundle", "attestation"])
def test_a_release_whose_checksums_file_is_signed_from_another_owner_changes_nothing(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore, how: str
) -> None:
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = write_acme_policy(
        tmp_path / "trusted_keys.toml", r"^https://github\.com/acme/.*$", allow_republish=True
    )
    kept = _goreleaser_release(github_server, private_sigstore, "1.0.0",
                               repository="acme/nexo-plugin-echo", how=how)  # fmt: skip
    refused = _goreleaser_release(github_server, private_sigstore, "1.1.0",
                                  repository="evil/repo", how=how)  # fmt: skip
    dest = tmp_path / "plugins"
    env = cli_env(tmp_path, api=github_server.url)

    def run(*args: str) -> CliResult:
        return nexo("plugin", *args, "--dest", str(dest), "--trusted-keys", str(policy),
                    "--yes", "--json", env=env, in_process=True)  # fmt: skip

    first = run("install", "acme/nexo-plugin-echo@v1.0.0")
    assert first.code == 0, first.stdout
    signature = json.loads(first.stdout)["signature"]
    assert (signature["status"], signature["scheme"]) == ("verified", "checksums-file")
    before = tree_snapshot(dest)
    blobs = tmp_path / "home" / "cache" / "blobs" / "sha256"
    assert (blobs / kept).is_file()
    for attempt in (
        run("install", "acme/nexo-plugin-echo@v1.1.0"),
        run("upgrade", "echo", "--tag", "v1.1.0"),
    ):
        assert "Traceback" not in attempt.stderr
        assert attempt.code == 1, attempt.stdout
        document = json.loads(attempt.stdout)
        assert document["kind"] == "signer_untrusted", document
        assert "evil/repo, outside owner acme" in document["error"]
        assert tree_snapshot(dest) == before
        assert not (blobs / refused).exists()
