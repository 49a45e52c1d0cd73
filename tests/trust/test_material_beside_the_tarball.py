"""An install from a GitHub release fetches the signature material while the tarball
downloads: the bundle's request does not wait for the tarball's last byte. Nothing is
verified, or extracted, before both are in (SPEC §5), and the verdicts are the same."""

from __future__ import annotations

import json
from pathlib import Path

from support.github_server import GitHubServer, asset_host, github_server
from support.private_sigstore import PrivateSigstore
from support.tarballs import asset_name, release_assets

from .test_install_schemes import OWNER, PLUGIN, WORKFLOW, refused, run_install, scheme_policy

__all__ = ["asset_host", "github_server"]

REPO = "nexo-plugin-echo"


def _publish(server: GitHubServer, instance: PrivateSigstore, identity: str) -> tuple[str, str]:
    """Publish a release whose tarball is signed by ``identity``; the paths of the tarball's
    and the bundle's assets."""
    assets = release_assets(PLUGIN, "2.0.0")
    name = asset_name(PLUGIN, "2.0.0")
    signed = instance.sign(assets[name], identity=identity)
    assets[name + ".sigstore.json"] = json.dumps(signed).encode()
    release = server.publish(OWNER, REPO, "v2.0.0", assets)
    tarball = server.asset_api_url(release, name).removeprefix(server.url)
    bundle = server.asset_api_url(release, name + ".sigstore.json").removeprefix(server.url)
    return tarball, bundle


def test_the_bundle_is_fetched_while_the_tarball_downloads(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    tarball, bundle = _publish(
        github_server, private_sigstore, WORKFLOW.format(repo=REPO, tag="v2.0.0")
    )
    # The tarball is answered only once the bundle has been asked for (or after 10 s).
    github_server.hold_until(tarball, bundle)
    policy = scheme_policy(tmp_path, private_sigstore)
    result = run_install(
        tmp_path, github_server, f"{OWNER}/{REPO}@v2.0.0", "--trusted-keys", str(policy)
    )
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["signature"]["status"] == "verified"
    assert github_server.released_by == {tarball: "request"}


def test_a_refused_signer_still_installs_nothing(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    tarball, bundle = _publish(
        github_server,
        private_sigstore,
        "https://github.com/mallory/x/.github/workflows/release.yml@refs/tags/v2.0.0",
    )
    github_server.hold_until(tarball, bundle)
    policy = scheme_policy(tmp_path, private_sigstore)
    result = run_install(
        tmp_path, github_server, f"{OWNER}/{REPO}@v2.0.0", "--trusted-keys", str(policy)
    )
    refused(result, "signer_untrusted", tmp_path / "plugins")
    assert github_server.released_by == {tarball: "request"}
