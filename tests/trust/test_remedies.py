"""Every remedy a signer refusal prints works when followed literally: the ``trust add``
command it names (run as printed), the ``[[authors]]`` entry (pasted where it says), or the
flags of ``trust verify --owner/--repo`` — the same install or check then passes. Against the
loopback GitHub server, the private Sigstore instance and the shared attestation fixtures."""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
from pathlib import Path

from support.cli import CliResult, nexo
from support.github_server import GitHubServer, github_server
from support.private_sigstore import PrivateSigstore
from support.shared_fixtures import skip_unless_present
from support.tarballs import asset_name, release_assets

from .helpers import FIXTURES, SHARED_FIXTURES, VECTOR_ARTIFACT, VECTOR_IDENTITY, cli_env

__all__ = ["github_server"]

REPO = "nexo-plugin-echo"
RELEASE = f"https://github.com/acme/{REPO}/.github/workflows/release.yml@refs/tags/v1.0.0"
SPDX = "https://spdx.dev/Document/v2.3"
HEAD = 'schema_version = "1.0"\ndefault = "require"\ntrusted_root = "private_trusted_root.json"\n'
# acme's release workflow, for any repository of the owner (SLSA provenance, the default).
OWNER_WIDE = (
    '\n[[authors]]\nowner = "acme"\n'
    "identity_regexp = '^https://github\\.com/acme/[^/]+/\\.github/workflows/release\\.yml"
    "@refs/tags/.+$'\n"
)


def _policy(tmp_path: Path, instance: PrivateSigstore, authors: str) -> Path:
    instance.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(HEAD + authors, encoding="utf-8")
    return policy


def _attested_spdx(server: GitHubServer, instance: PrivateSigstore) -> None:
    """echo 1.0.0 whose only attestation, by acme's release workflow, is an SPDX document."""
    assets = release_assets("echo", "1.0.0")
    name = asset_name("echo", "1.0.0")
    server.publish("acme", REPO, "v1.0.0", assets)
    bundle = instance.attest(assets[name], identity=RELEASE, repository=f"acme/{REPO}",
                             ref="refs/tags/v1.0.0", predicate_type=SPDX)  # fmt: skip
    server.publish_attestations("acme", REPO, hashlib.sha256(assets[name]).hexdigest(), [bundle])


def _install(tmp_path: Path, server: GitHubServer, policy: Path, *flags: str) -> CliResult:
    return nexo("plugin", "install", f"acme/{REPO}@v1.0.0", "--yes", "--dest",
                str(tmp_path / "plugins"), "--trusted-keys", str(policy), *flags,
                env=cli_env(tmp_path, api=server.url), in_process=True)  # fmt: skip


def _run_printed(command: str, tmp_path: Path, server: GitHubServer) -> CliResult:
    """The printed ``nexo …`` command, run as a user pastes it (``--yes``: no terminal)."""
    words = shlex.split(command)
    assert words[:2] == ["nexo", "plugin"], command
    return nexo(*words[1:], "--yes", env=cli_env(tmp_path, api=server.url), in_process=True)


def _paste_as_told(refused: CliResult, policy: Path) -> None:
    """Paste the entry a text refusal printed where it says: at the end of the policy, or
    before the entry at the line it names."""
    lines = refused.stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("To trust this signer, add"))
    entry = [line.removeprefix("  ") for line in lines[start + 1 :] if line.startswith("  ")]
    text = policy.read_text(encoding="utf-8").splitlines()
    where = lines[start].partition(", before the [[authors]] entry at line ")[2]
    at = int(where.rstrip(":")) - 1 if where else len(text)
    policy.write_text("\n".join([*text[:at], *entry, "", *text[at:]]) + "\n", encoding="utf-8")


def test_a_predicate_type_refusal_prints_a_command_that_trusts_the_attestation(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    """Refused only for its predicate type: the command names it (``--predicate-type``), so
    the entry it writes is not a copy of the owner's entry that already trusts the identity."""
    _attested_spdx(github_server, private_sigstore)
    policy = _policy(tmp_path, private_sigstore, OWNER_WIDE)
    refused = _install(tmp_path, github_server, policy, "--json")
    assert refused.code == 1, refused.stdout
    document = json.loads(refused.stdout)
    assert document["kind"] == "signer_untrusted"
    assert f"predicate type {SPDX}" in document["error"]
    assert f'predicate_type = "{SPDX}"' in document["entry"]
    assert not (tmp_path / "plugins").exists()

    added = _run_printed(document["trust_command"], tmp_path, github_server)
    assert added.code == 0, added.stderr
    assert "Added to" in added.stdout + added.stderr
    installed = _install(tmp_path, github_server, policy, "--json")
    assert installed.code == 0, installed.stdout
    assert json.loads(installed.stdout)["signature"]["identity"] == RELEASE


def test_a_pasted_entry_goes_where_the_refusal_says_and_trusts_the_signer(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    """The owner's first entry decides: the text refusal says to paste the entry before it
    (appended after it, the entry would be ignored and the install refused again)."""
    _attested_spdx(github_server, private_sigstore)
    policy = _policy(tmp_path, private_sigstore, OWNER_WIDE)
    refused = _install(tmp_path, github_server, policy)
    assert refused.code == 1, refused.stderr
    assert ", before the [[authors]] entry at line 5:" in refused.stderr
    _paste_as_told(refused, policy)
    installed = _install(tmp_path, github_server, policy, "--json")
    assert installed.code == 0, installed.stdout


def test_an_entry_that_decides_for_the_same_repository_is_named_not_duplicated(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    """When the refusing entry covers the same repositories, no entry written beside it would
    be read (``trust add`` refuses one; a pasted one is ignored): the refusal names that entry
    and offers no command or entry."""
    _attested_spdx(github_server, private_sigstore)
    own = OWNER_WIDE + f'repos = ["{REPO}"]\n'
    policy = _policy(tmp_path, private_sigstore, own)
    refused = _install(tmp_path, github_server, policy, "--json")
    assert refused.code == 1, refused.stdout
    document = json.loads(refused.stdout)
    assert document["kind"] == "signer_untrusted"
    assert "trust_command" not in document
    assert "entry" not in document
    assert document["entry_line"] == 5
    assert "at line 5 decides for acme/nexo-plugin-echo" in document["error"]
    assert "change that entry" in document["error"]
    assert policy.read_text(encoding="utf-8") == HEAD + own


@skip_unless_present("sigstore")
def test_a_check_under_another_config_prints_a_command_writing_its_policy(
    tmp_path: Path,
) -> None:
    """``--config DIR`` reads DIR/extensions/trusted_keys.toml: when that file does not exist
    yet, the ``trust add`` a refusal prints still names it, so run from anywhere it writes the
    policy the same check reads (without it, ./config's or $NEXO_HOME's would get the entry)."""
    config = tmp_path / "daemon" / "config"
    config.mkdir(parents=True)
    check = ("plugin", "trust", "verify", str(FIXTURES / VECTOR_ARTIFACT), "--config", str(config))
    env = cli_env(tmp_path)
    refused = nexo(*check, "--json", env=env, in_process=True)
    assert refused.code == 1, refused.stdout
    document = json.loads(refused.stdout)
    assert document["kind"] == "signer_untrusted"
    policy = config / "extensions" / "trusted_keys.toml"
    assert document["policy"] == f"{policy} (not created yet)"
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "config").mkdir(parents=True)
    words = shlex.split(document["trust_command"])
    added = nexo(*words[1:], "--yes", env=env, cwd=elsewhere, in_process=True)
    assert added.code == 0, added.stderr
    assert policy.is_file()
    assert not (elsewhere / "config" / "extensions").exists()
    verified = nexo(*check, "--json", env=env, in_process=True)
    assert verified.code == 0, verified.stdout
    assert json.loads(verified.stdout)["identity"] == VECTOR_IDENTITY


@skip_unless_present("github-attestations")
def test_verify_with_repo_names_the_flag_that_trusts_the_signer(tmp_path: Path) -> None:
    """``trust verify --repo`` decides by its flags, not a policy file: the refusal names no
    ``trusted_keys.toml (not created yet)`` nor a ``trust add`` (which would not change the
    verdict) but the flag, and with it the same check passes."""
    fixtures = SHARED_FIXTURES / "github-attestations"
    artifact = tmp_path / "custom-issuer-artifact"
    shutil.copy(fixtures / artifact.name, artifact)
    shutil.copy(fixtures / "custom-issuer.sigstore.json", f"{artifact}.sigstore.json")
    check = ("plugin", "trust", "verify", str(artifact), "--repo", "too-legit/attest")
    refused = nexo(*check, env=cli_env(tmp_path), cwd=tmp_path, in_process=True)
    assert refused.code == 1, refused.stderr
    assert "not created yet" not in refused.stderr
    assert "trust add" not in refused.stderr
    said = refused.stderr.partition("To trust this signer, pass `")[2].strip()
    # The flags in backquotes, so that the kind after them is never pasted with them.
    assert said.endswith("` [signer_untrusted]"), said
    flags = said.removesuffix("` [signer_untrusted]")
    assert flags == "--oidc-issuer https://token.actions.githubusercontent.com/hammer-time"
    verified = nexo(*check, *shlex.split(flags), "--json", env=cli_env(tmp_path), cwd=tmp_path,
                    in_process=True)  # fmt: skip
    assert verified.code == 0, verified.stderr
    assert json.loads(verified.stdout)["verified"] is True
    assert not (tmp_path / "config").exists()
    assert not (tmp_path / "home").exists() or not any((tmp_path / "home").rglob("*.toml"))
