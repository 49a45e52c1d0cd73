"""The owner is always bound on the release paths too (SPEC §6, revision 4).

``evil/repo`` calls ``acme``'s public reusable release workflow: the certificate's SAN is acme's
workflow, which an ``acme`` entry's ``identity_regexp`` matches, but its source repository (the
GitHub claims) belongs to ``evil``. An install from acme's GitHub release carrying such a
bundle, an ``upgrade`` to such a release, and ``trust verify --owner acme --repo …`` are
refused with ``signer_untrusted`` even with ``allow_republish``; nothing changes on disk.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import CliResult, nexo
from support.github_server import GitHubServer, asset_host, github_server
from support.private_sigstore import PrivateSigstore, write_bundle
from support.tarballs import asset_name, release_assets

from .helpers import ACME_IDENTITY, ACME_REGEXP, cli_env, write_acme_policy

__all__ = ["asset_host", "github_server"]

OWNER, REPO, PLUGIN = "acme", "nexo-plugin-echo", "echo"


def _shared(version: str) -> str:
    """acme's reusable release workflow, as the SAN of a call from a tag ``v<version>``."""
    return f"https://github.com/acme/workflows/.github/workflows/release.yml@refs/tags/v{version}"


@pytest.fixture
def policy(tmp_path: Path, private_sigstore: PrivateSigstore) -> Path:
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    return write_acme_policy(tmp_path / "trusted_keys.toml", ACME_REGEXP, allow_republish=True)


def _publish(
    server: GitHubServer, instance: PrivateSigstore, version: str, *, repository: str
) -> None:
    assets = release_assets(PLUGIN, version)
    name = asset_name(PLUGIN, version)
    identity = ACME_IDENTITY if repository == f"{OWNER}/{REPO}" else _shared(version)
    bundle = instance.sign(assets[name], identity=identity, repository=repository)
    assets[name + ".sigstore.json"] = json.dumps(bundle).encode()
    server.publish(OWNER, REPO, f"v{version}", assets)


def _run(tmp_path: Path, server: GitHubServer, *args: str) -> CliResult:
    return nexo("plugin", *args, "--yes", "--json", env=cli_env(tmp_path, api=server.url),
                in_process=True)  # fmt: skip


def _plugins(tmp_path: Path) -> Path:
    return tmp_path / "home" / "state" / "plugins"


def _refused(result: CliResult) -> None:
    assert result.code == 1, result.stdout
    document = json.loads(result.stdout)
    assert document["kind"] == "signer_untrusted", document
    assert "evil/repo" in document["error"]
    assert "outside owner acme" in document["error"]
    assert "Traceback" not in result.stderr


def test_a_release_of_the_owner_signed_from_another_owners_repository_is_not_installed(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore, policy: Path
) -> None:
    _publish(github_server, private_sigstore, "1.2.3", repository="evil/repo")
    result = _run(tmp_path, github_server, "install", f"{OWNER}/{REPO}@v1.2.3",
                  "--trusted-keys", str(policy))  # fmt: skip
    _refused(result)
    plugins = _plugins(tmp_path)
    assert not plugins.exists() or not [p for p in plugins.iterdir() if not p.name.startswith(".")]


def test_an_upgrade_to_a_release_signed_from_another_owners_repository_is_refused(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore, policy: Path
) -> None:
    _publish(github_server, private_sigstore, "1.2.3", repository=f"{OWNER}/{REPO}")
    first = _run(tmp_path, github_server, "install", f"{OWNER}/{REPO}",
                 "--trusted-keys", str(policy))  # fmt: skip
    assert first.code == 0, first.stderr
    assert json.loads(first.stdout)["signature"]["status"] == "verified"
    _publish(github_server, private_sigstore, "1.2.4", repository="evil/repo")
    result = _run(tmp_path, github_server, "upgrade", PLUGIN, "--trusted-keys", str(policy))
    assert result.code == 1, result.stdout
    assert "signer_untrusted" in result.stdout, result.stdout
    assert "outside owner acme" in result.stdout
    assert sorted(p.name for p in _plugins(tmp_path).iterdir() if not p.name.startswith(".")) == [
        f"{PLUGIN}-1.2.3"
    ]


@pytest.mark.parametrize("scope", [("--owner", "acme"), ("--repo", f"{OWNER}/{REPO}")])
def test_trust_verify_naming_the_owner_still_binds_it(
    tmp_path: Path, private_sigstore: PrivateSigstore, policy: Path, scope: tuple[str, str]
) -> None:
    artifact = tmp_path / asset_name(PLUGIN, "1.2.3")
    artifact.write_bytes(release_assets(PLUGIN, "1.2.3")[artifact.name])
    bundle = write_bundle(
        tmp_path / (artifact.name + ".sigstore.json"),
        private_sigstore.sign(
            artifact.read_bytes(), identity=_shared("1.2.3"), repository="evil/repo"
        ),
    )
    result = nexo("plugin", "trust", "verify", str(artifact), "--bundle", str(bundle),
                  "--trusted-keys", str(policy), *scope, "--json", env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    _refused(result)
