"""Signer continuity: an upgrade signed by another identity than the installed version, or
not signed after a signed one, is refused (``signer_changed``) even under ``warn``, unless
``--allow-signer-change``; against the loopback GitHub and a private Sigstore instance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer, asset_host, github_server
from support.private_sigstore import PrivateSigstore
from support.tarballs import asset_name, release_assets, tree_snapshot

from .helpers import cli_env

__all__ = ["asset_host", "github_server"]

OWNER, REPO, PLUGIN = "acme", "nexo-plugin-echo", "echo"
WORKFLOW = f"https://github.com/{OWNER}/{REPO}/.github/workflows/release.yml"
OTHER_WORKFLOW = f"https://github.com/{OWNER}/{REPO}/.github/workflows/sneaky.yml"

POLICY = r"""schema_version = "1.0"
default = "warn"
trusted_root = "private_trusted_root.json"

[[authors]]
owner = "acme"
identity_regexp = 'https://github\.com/acme/[^/]+/\.github/workflows/[a-z]+\.yml@refs/tags/v.*'
"""


# Another workflow of the same repository, or no signature at all after a signed version.
CHANGED_SIGNERS = pytest.mark.parametrize(
    ("workflow", "named"),
    [(OTHER_WORKFLOW, "sneaky.yml"), (None, "not signed")],
    ids=["another-identity", "signed-then-unsigned"],
)


def _publish(
    server: GitHubServer, instance: PrivateSigstore, version: str, workflow: str | None
) -> None:
    tag = f"v{version}"
    assets = release_assets(PLUGIN, version)
    name = asset_name(PLUGIN, version)
    if workflow is not None:
        bundle = instance.sign(assets[name], identity=f"{workflow}@refs/tags/{tag}")
        assets[name + ".sigstore.json"] = json.dumps(bundle).encode()
    server.publish(OWNER, REPO, tag, assets)


@pytest.fixture
def policy(tmp_path: Path, private_sigstore: PrivateSigstore) -> Path:
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    path = tmp_path / "trusted_keys.toml"
    path.write_text(POLICY, encoding="utf-8")
    return path


def _installed_root(
    tmp_path: Path, server: GitHubServer, instance: PrivateSigstore, policy: Path
) -> Path:
    _publish(server, instance, "1.0.0", WORKFLOW)
    installed = nexo("plugin", "install", f"{OWNER}/{REPO}", "--yes", "--json", "--trusted-keys",
                     str(policy), env=cli_env(tmp_path, api=server.url),
                     in_process=True)  # fmt: skip
    assert installed.code == 0, installed.stderr
    assert json.loads(installed.stdout)["signature"]["status"] == "verified"
    return tmp_path / "home" / "state" / "plugins"


def test_same_workflow_on_a_new_tag_upgrades(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore, policy: Path
) -> None:
    _installed_root(tmp_path, github_server, private_sigstore, policy)
    _publish(github_server, private_sigstore, "1.1.0", WORKFLOW)
    upgraded = nexo("plugin", "upgrade", PLUGIN, "--yes", "--json", "--trusted-keys", str(policy),
                    env=cli_env(tmp_path, api=github_server.url), in_process=True)  # fmt: skip
    assert upgraded.code == 0, upgraded.stderr
    assert json.loads(upgraded.stdout)["version"] == "1.1.0"


@CHANGED_SIGNERS
def test_changed_signer_is_refused_under_warn(  # noqa: PLR0917 (fixtures and parameters)
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy: Path,
    workflow: str | None,
    named: str,
) -> None:
    root = _installed_root(tmp_path, github_server, private_sigstore, policy)
    _publish(github_server, private_sigstore, "1.1.0", workflow)
    before = tree_snapshot(root)
    refused = nexo("plugin", "upgrade", PLUGIN, "--yes", "--json", "--trusted-keys", str(policy),
                   env=cli_env(tmp_path, api=github_server.url), in_process=True)  # fmt: skip
    assert refused.code == 1, refused.stdout
    document = json.loads(refused.stdout)
    assert document["kind"] == "signer_changed"
    assert "release.yml" in document["error"]
    assert named in document["error"]
    assert document["installed_signer"]["identity"].startswith(WORKFLOW)
    assert "Traceback" not in refused.stderr
    assert tree_snapshot(root) == before
    # `upgrade --all` refuses it too: one error line naming the plugin and the kind.
    every = nexo("plugin", "upgrade", "--all", "--yes", "--json", "--trusted-keys", str(policy),
                 env=cli_env(tmp_path, api=github_server.url), in_process=True)  # fmt: skip
    assert every.code == 1, every.stdout
    (entry,) = json.loads(every.stdout)["plugins"]
    assert (entry["id"], entry["ok"], entry["kind"]) == (PLUGIN, False, "signer_changed")
    assert entry["installed_signer"]["identity"].startswith(WORKFLOW)
    assert named in entry["error"]
    assert f"error: {PLUGIN}: " in every.stderr
    assert every.stderr.rstrip().endswith("[signer_changed]")
    assert tree_snapshot(root) == before

    allowed = nexo("plugin", "upgrade", PLUGIN, "--allow-signer-change", "--yes", "--json",
                   "--trusted-keys", str(policy), env=cli_env(tmp_path, api=github_server.url),
                   in_process=True)  # fmt: skip
    assert allowed.code == 0, allowed.stderr
    assert json.loads(allowed.stdout)["version"] == "1.1.0"


@CHANGED_SIGNERS
def test_an_install_over_a_signed_version_is_bound_as_an_upgrade(  # noqa: PLR0917
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy: Path,
    workflow: str | None,
    named: str,
) -> None:
    """``install owner/repo@tag`` replaces the installed version as ``upgrade`` would: a
    nightly ``install --yes`` of the latest release must not take what ``upgrade`` refuses.
    ``info`` of the same release still answers (it installs nothing)."""
    root = _installed_root(tmp_path, github_server, private_sigstore, policy)
    _publish(github_server, private_sigstore, "1.1.0", workflow)
    before = tree_snapshot(root)
    env = cli_env(tmp_path, api=github_server.url)
    source = f"{OWNER}/{REPO}@v1.1.0"
    refused = nexo("plugin", "install", source, "--yes", "--json", "--trusted-keys", str(policy),
                   env=env, in_process=True)  # fmt: skip
    assert refused.code == 1, refused.stdout
    document = json.loads(refused.stdout)
    assert document["kind"] == "signer_changed"
    assert named in document["error"]
    assert tree_snapshot(root) == before
    dry = nexo("plugin", "install", source, "--dry-run", "--json", "--trusted-keys", str(policy),
               env=env, in_process=True)  # fmt: skip
    assert (dry.code, json.loads(dry.stdout)["kind"]) == (1, "signer_changed")
    info = nexo("plugin", "info", source, "--json", "--trusted-keys", str(policy), env=env,
                in_process=True)  # fmt: skip
    assert info.code == 0, info.stderr
    assert tree_snapshot(root) == before

    allowed = nexo("plugin", "install", source, "--allow-signer-change", "--yes", "--json",
                   "--trusted-keys", str(policy), env=env, in_process=True)  # fmt: skip
    assert allowed.code == 0, allowed.stderr
    assert json.loads(allowed.stdout)["version"] == "1.1.0"
    assert sorted(path.name for path in root.iterdir() if not path.name.startswith(".")) == [
        f"{PLUGIN}-1.1.0"
    ]


def test_unsigned_installed_version_binds_nothing(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore, policy: Path
) -> None:
    _publish(github_server, private_sigstore, "1.0.0", None)
    assert nexo("plugin", "install", f"{OWNER}/{REPO}", "--yes", "--json", "--trusted-keys",
                str(policy), env=cli_env(tmp_path, api=github_server.url),
                in_process=True).code == 0  # fmt: skip
    _publish(github_server, private_sigstore, "1.1.0", OTHER_WORKFLOW)
    upgraded = nexo("plugin", "upgrade", PLUGIN, "--yes", "--json", "--trusted-keys", str(policy),
                    env=cli_env(tmp_path, api=github_server.url), in_process=True)  # fmt: skip
    assert upgraded.code == 0, upgraded.stderr
    assert json.loads(upgraded.stdout)["signature"]["status"] == "verified"


@CHANGED_SIGNERS
def test_sync_that_locks_a_new_signer_is_refused_unless_allowed(  # noqa: PLR0917
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy: Path,
    workflow: str | None,
    named: str,
) -> None:
    """``sync`` without a lock resolves the wanted set itself: the version it brings in was
    signed by another workflow than the installed one, or not signed at all, so it is refused
    as an upgrade would be (the plugin's outcome is ``signer_changed``, the installed tree
    stays), and ``--allow-signer-change`` accepts it."""
    root = _installed_root(tmp_path, github_server, private_sigstore, policy)
    before = tree_snapshot(root)
    _publish(github_server, private_sigstore, "1.1.0", workflow)
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    (fleet / "nexo-plugins.toml").write_text(
        f'[plugins.{PLUGIN}]\nsource = "{OWNER}/{REPO}"\nversion = "1.1.0"\n', encoding="utf-8"
    )
    env = cli_env(tmp_path, api=github_server.url)
    args = ("plugin", "sync", "--lock", str(fleet / "nexo-plugins.lock"), "--dest", str(root),
            "--trusted-keys", str(policy), "--json")  # fmt: skip
    refused = nexo(*args, env=env, in_process=True)
    assert refused.code == 1, refused.stderr
    (outcome,) = refused.document["plugins"]
    assert (outcome["id"], outcome["action"], outcome["kind"]) == (
        PLUGIN,
        "failed",
        "signer_changed",
    )
    assert "release.yml" in outcome["error"]
    assert named in outcome["error"]
    after = tree_snapshot(root)
    assert after.pop(".nexo-sync.lock")[0] == "file"  # sync's own (empty) lock file
    assert after == before
    # The lock keeps no entry the refusal is about: a second run resolves it again and
    # refuses it again, rather than installing it from a lock that now looks current.
    assert "1.1.0" not in (fleet / "nexo-plugins.lock").read_text(encoding="utf-8")
    again = nexo(*args, env=env, in_process=True)
    assert again.code == 1, again.stderr
    assert [p["kind"] for p in again.document["plugins"]] == ["signer_changed"]
    assert {k: v for k, v in tree_snapshot(root).items() if k != ".nexo-sync.lock"} == before

    accepted = nexo(*args, "--allow-signer-change", env=env, in_process=True)
    assert accepted.code == 0, accepted.stderr
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == [
        f"{PLUGIN}-1.1.0"
    ]


def test_sync_reads_a_hand_edited_receipt_version_without_failing(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore, policy: Path
) -> None:
    """An installed receipt whose version is not semver (edited by hand) sorts lowest when
    sync looks for the installed signer: the run goes on (same workflow: accepted) instead of
    failing on the receipt."""
    root = _installed_root(tmp_path, github_server, private_sigstore, policy)
    receipt_path = root / f"{PLUGIN}-1.0.0" / ".nexo-install.json"
    receipt = json.loads(receipt_path.read_text(encoding="utf-8"))
    receipt["version"] = "not-a-version"
    receipt_path.write_text(json.dumps(receipt), encoding="utf-8")
    _publish(github_server, private_sigstore, "1.1.0", WORKFLOW)
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    (fleet / "nexo-plugins.toml").write_text(
        f'[plugins.{PLUGIN}]\nsource = "{OWNER}/{REPO}"\nversion = "1.1.0"\n', encoding="utf-8"
    )
    synced = nexo("plugin", "sync", "--lock", str(fleet / "nexo-plugins.lock"), "--dest",
                  str(root), "--trusted-keys", str(policy), "--json",
                  env=cli_env(tmp_path, api=github_server.url), in_process=True)  # fmt: skip
    assert synced.code == 0, synced.stdout + synced.stderr
    (outcome,) = synced.document["plugins"]
    assert (outcome["id"], outcome["version"]) == (PLUGIN, "1.1.0")
    assert (root / f"{PLUGIN}-1.1.0").is_dir()
