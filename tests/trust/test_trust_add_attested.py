"""Refusal, then ``trust add``, then the same install succeeds, for the commonest way GitHub
projects sign: an artifact attestation from the API, made by a reusable workflow of another
repository (as ``actions/attest-build-provenance`` through a shared workflow does)."""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path

from support.cli import nexo
from support.github_server import GitHubServer, github_server
from support.private_sigstore import PrivateSigstore
from support.tarballs import asset_name, release_assets

from .helpers import cli_env

__all__ = ["github_server"]

OWNER, REPO, PLUGIN = "acme", "nexo-plugin-echo", "echo"
SIGNER = "https://github.com/actions/reusable/.github/workflows/attest.yml@refs/tags/v1"
CALLER = f"https://github.com/{OWNER}/{REPO}/.github/workflows/release.yml@refs/tags/v1.0.0"


def test_trust_add_after_an_attestation_refusal_makes_the_install_succeed(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        '# fleet policy: keep this line\nschema_version = "1.0"\ndefault = "require"\n'
        'trusted_root = "private_trusted_root.json"  # the private instance\n',
        encoding="utf-8",
    )
    assets = release_assets(PLUGIN, "1.0.0")
    data = assets[asset_name(PLUGIN, "1.0.0")]
    github_server.publish(OWNER, REPO, "v1.0.0", assets)
    attested = private_sigstore.attest(data, identity=SIGNER, repository=f"{OWNER}/{REPO}",
                                       ref="refs/tags/v1.0.0", build_config_uri=CALLER)  # fmt: skip
    github_server.publish_attestations(OWNER, REPO, hashlib.sha256(data).hexdigest(), [attested])
    env = cli_env(tmp_path, api=github_server.url)
    install = ("plugin", "install", f"{OWNER}/{REPO}@v1.0.0", "--yes", "--json",
               "--dest", str(tmp_path / "plugins"), "--trusted-keys", str(policy))  # fmt: skip

    refused = nexo(*install, env=env, in_process=True)
    assert refused.code == 1
    document = json.loads(refused.stdout)
    assert document["kind"] == "signer_untrusted", document
    assert document["policy"] == str(policy)
    assert not (tmp_path / "plugins").exists() or not any((tmp_path / "plugins").iterdir())
    # The printed command, run as printed, trusts the signer it saw.
    command = shlex.split(document["trust_command"])
    assert command[:4] == ["nexo", "plugin", "trust", "add"], command
    added = nexo(*command[1:], "--yes", "--json", env=env, in_process=True)
    assert added.code == 0, added.stderr
    assert json.loads(added.stdout)["entry"] == document["entry"]
    text = policy.read_text(encoding="utf-8")
    assert text.startswith("# fleet policy: keep this line\n")
    assert "# the private instance" in text
    assert 'signer_workflow = "actions/reusable/.github/workflows/attest.yml"' in text

    installed = nexo(*install, env=env, in_process=True)
    assert installed.code == 0, installed.stderr
    signature = json.loads(installed.stdout)["signature"]
    assert (signature["status"], signature["scheme"]) == ("verified", "github-attestation")
    assert signature["identity"] == SIGNER
    receipt = json.loads(
        (tmp_path / "plugins" / f"{PLUGIN}-1.0.0" / ".nexo-install.json").read_text()
    )
    assert receipt["signature"]["identity"] == SIGNER
