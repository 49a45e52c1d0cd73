"""``nexo plugin trust add|list|remove|verify`` end to end, through the real command line."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

import pytest
from support.cli import CliResult, nexo
from support.github_server import BlobServer, GitHubServer, asset_host, github_server
from support.private_sigstore import PrivateSigstore
from support.shared_fixtures import skip_unless_present
from support.tarballs import asset_name, release_assets, tree_snapshot, write_plugin

from nexo_pkg.trust.api import load_policy
from nexo_pkg.trust.identity_pattern import full_match

from .helpers import FIXTURES, SHARED_FIXTURES, VECTOR_ARTIFACT, cli_env, write_acme_policy

__all__ = ["asset_host", "github_server"]

ATTESTATIONS = SHARED_FIXTURES / "github-attestations"
REUSABLE_SIGNER = "github/artifact-attestations-workflows/.github/workflows/attest.yml"
SIGNER_URI = "https://github.com/acme/echo/.github/workflows/release.yml@refs/tags/v1"


# --- verify ----------------------------------------------------------------------------------


def _verify(tmp_path: Path, *extra: str, artifact: Path | None = None) -> CliResult:
    return nexo("plugin", "trust", "verify",
                str(artifact or ATTESTATIONS / "reusable-workflow-artifact"), "--bundle",
                str(ATTESTATIONS / "reusable-workflow-attestation.sigstore.json"), *extra,
                env=cli_env(tmp_path), in_process=True)  # fmt: skip


@skip_unless_present("github-attestations")
def test_verify_a_reusable_workflow_attestation_offline(tmp_path: Path) -> None:
    # As gh: the reusable workflow of another repository that signed must be named.
    result = _verify(tmp_path, "--repo", "malancas/attest-demo", "--signer-workflow",
                     REUSABLE_SIGNER)  # fmt: skip
    assert result.code == 0, result.stderr
    # The report is the result: stdout.
    assert "github-attestation" in result.stdout
    # The material is named as given, not as install would look for it beside the file.
    assert "reusable-workflow-attestation.sigstore.json" in result.stdout.splitlines()[0]
    assert f"signer_workflow: {REUSABLE_SIGNER}" in result.stdout
    assert "trusted for malancas/attest-demo" in result.stdout


@skip_unless_present("github-attestations")
def test_verify_json_is_one_document(tmp_path: Path) -> None:
    result = _verify(tmp_path, "--repo", "malancas/attest-demo", "--signer-workflow",
                     REUSABLE_SIGNER, "--json")  # fmt: skip
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["verified"] is True
    assert document["claims"]["signer_workflow"] == REUSABLE_SIGNER


@pytest.mark.parametrize(
    ("source_ref", "verified"),
    [
        ("refs/heads/main", True),
        ("refs/heads/.+", True),
        ("refs/tags/v.*", False),
        # A match of the whole claim, not a prefix of it.
        ("refs/heads/mai", False),
    ],
)
@skip_unless_present("github-attestations")
def test_verify_applies_the_policys_source_ref_to_the_certificates_ref_claim(
    tmp_path: Path, source_ref: str, verified: bool
) -> None:
    """The real attestation was made on ``refs/heads/main`` of malancas/attest-demo: an author
    entry's ``source_ref`` pattern decides on that claim of the certificate."""
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        'schema_version = "1.0"\ndefault = "require"\n\n[[authors]]\nowner = "malancas"\n'
        "identity_regexp = '^https://github\\.com/malancas/attest-demo/\\.github/workflows/.+$'\n"
        f'signer_workflow = "{REUSABLE_SIGNER}"\nsource_ref = "{source_ref}"\n',
        encoding="utf-8",
    )
    result = _verify(tmp_path, "--trusted-keys", str(policy), "--json")
    document = json.loads(result.stdout)
    if verified:
        assert result.code == 0, result.stderr
        assert document["verified"] is True
        assert document["claims"]["source_ref"] == "refs/heads/main"
    else:
        assert result.code == 1, result.stderr
        assert document["kind"] == "signer_untrusted"
        assert "source ref refs/heads/main" in document["error"]


@pytest.mark.parametrize(
    ("flags", "kind"),
    [
        (("--repo", "malancas/other"), "signer_untrusted"),
        (("--owner", "someone-else"), "signer_untrusted"),
        (
            ("--repo", "malancas/attest-demo", "--signer-workflow",
             "malancas/attest-demo/.github/workflows/release.yml"),
            "signer_untrusted",
        ),
    ],
)  # fmt: skip
@skip_unless_present("github-attestations")
def test_verify_refuses_another_repository_or_workflow(
    tmp_path: Path, flags: tuple[str, ...], kind: str
) -> None:
    result = _verify(tmp_path, *flags, "--json")
    assert result.code == 1, result.stderr
    assert json.loads(result.stdout)["kind"] == kind


@skip_unless_present("github-attestations")
@pytest.mark.parametrize("workflow", [f"github.com/{REUSABLE_SIGNER}"])
def test_verify_takes_ghs_host_form_of_the_signer_workflow(tmp_path: Path, workflow: str) -> None:
    """gh's `--signer-workflow [HOST/]OWNER/REPO/PATH`: the github.com host may be written."""
    result = _verify(tmp_path, "--repo", "malancas/attest-demo", "--signer-workflow", workflow)
    assert result.code == 0, result.stderr
    assert f"signer_workflow: {REUSABLE_SIGNER}" in result.stdout


@skip_unless_present("github-attestations")
@pytest.mark.parametrize(
    "workflow",
    [
        "github/artifact-attestations-workflows",
        f"{REUSABLE_SIGNER}@not-a-ref",
        f"ghe.example.com/{REUSABLE_SIGNER}",
        # gh prepends `https://` itself and matches the host as written.
        f"https://github.com/{REUSABLE_SIGNER}",
        f"GITHUB.com/{REUSABLE_SIGNER}",
        "attest.yml",
    ],
)
def test_a_signer_workflow_no_certificate_could_name_is_a_usage_error(
    tmp_path: Path, workflow: str
) -> None:
    """Not a verdict on the file (exit 1) but a mistake on the command line (exit 2), for
    verify and for add, which writes nothing."""
    result = _verify(tmp_path, "--repo", "malancas/attest-demo", "--signer-workflow", workflow,
                     "--json")  # fmt: skip
    assert result.code == 2, result.stdout
    document = json.loads(result.stdout)
    assert document["kind"] == "usage"
    assert document["error"].startswith(f"--signer-workflow {workflow!r}")
    policy = tmp_path / "trusted_keys.toml"
    added = nexo("plugin", "trust", "add", "malancas", "--identity", SIGNER_URI,
                 "--signer-workflow", workflow, "--trusted-keys", str(policy), "--yes",
                 env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert added.code == 2
    assert added.stderr.startswith(f"error: --signer-workflow {workflow!r}")
    assert not policy.exists()


@skip_unless_present("github-attestations")
def test_a_pinned_signer_workflow_narrows_the_flags_only(tmp_path: Path) -> None:
    """gh's `--signer-workflow FILE@REF` pins the SAN for a --repo/--owner check; a policy's
    entries cannot hold a pin, so with --trusted-keys, and for `trust add`, it is a usage
    error and nothing is written."""
    pinned = f"{REUSABLE_SIGNER}@09b495c3f12c7881b3cc17209a327792065c1a1d"
    accepted = _verify(tmp_path, "--repo", "malancas/attest-demo", "--signer-workflow", pinned)
    assert accepted.code == 0, accepted.stderr
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(COMMENTED)
    with_policy = _verify(tmp_path, "--signer-workflow", pinned, "--trusted-keys", str(policy),
                          "--json")  # fmt: skip
    assert with_policy.code == 2, with_policy.stdout
    assert json.loads(with_policy.stdout)["kind"] == "usage"
    added = nexo("plugin", "trust", "add", "malancas", "--identity", SIGNER_URI,
                 "--signer-workflow", pinned, "--trusted-keys", str(policy), "--yes",
                 env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert added.code == 2
    assert added.stderr.startswith(f"error: --signer-workflow {pinned!r}: a pinned ref")
    assert policy.read_text() == COMMENTED


@skip_unless_present("github-attestations")
def test_verify_refuses_a_flipped_byte(tmp_path: Path) -> None:
    artifact = tmp_path / "reusable-workflow-artifact"
    data = bytearray((ATTESTATIONS / artifact.name).read_bytes())
    data[-1] ^= 0x01
    artifact.write_bytes(bytes(data))
    result = _verify(tmp_path, "--repo", "malancas/attest-demo", "--json", artifact=artifact)
    assert result.code == 1
    assert json.loads(result.stdout)["kind"] == "signature_invalid"


@skip_unless_present("github-attestations")
def test_verify_the_github_instance_bundle_says_why_in_one_line(tmp_path: Path) -> None:
    result = nexo("plugin", "trust", "verify",
                  str(ATTESTATIONS / "github_provenance_demo-0.0.12-py3-none-any.whl"), "--bundle",
                  str(ATTESTATIONS / "github_provenance_demo-0.0.12-py3-none-any-bundle.jsonl"),
                  "--owner", "github", env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert result.code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: ")
    assert "no transparency-log entry" in lines[0]


@skip_unless_present("github-attestations")
def test_verify_reads_the_material_beside_the_file(tmp_path: Path) -> None:
    artifact = tmp_path / "custom-issuer-artifact"
    shutil.copy(ATTESTATIONS / artifact.name, artifact)
    shutil.copy(
        ATTESTATIONS / "custom-issuer.sigstore.json", tmp_path / f"{artifact.name}.sigstore.json"
    )
    issuer = "https://token.actions.githubusercontent.com/hammer-time"
    result = nexo("plugin", "trust", "verify", str(artifact), "--repo", "too-legit/attest",
                  "--oidc-issuer", issuer, "--json", env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["issuer"] == issuer
    # Without the issuer the enterprise-style issuer is not GitHub's: refused.
    refused = nexo("plugin", "trust", "verify", str(artifact), "--repo", "too-legit/attest",
                   env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert refused.code == 1
    assert "hammer-time" in refused.stderr


# (the name holding the real bundle, the name holding a broken one, which one decides)
_LOOKUP_ORDER = [
    (".sigstore.json", ".sigstore", "verified"),
    (".sigstore.json", ".bundle", "verified"),
    (".sigstore", ".bundle", "verified"),
    (".bundle", ".sigstore", "broken"),
    (".bundle", ".sigstore.json", "broken"),
    (".sigstore", ".sigstore.json", "broken"),
]


@skip_unless_present("sigstore")
@pytest.mark.parametrize(("real", "broken", "decides"), _LOOKUP_ORDER)
def test_the_material_beside_a_file_is_looked_up_in_the_specs_order(
    tmp_path: Path, real: str, broken: str, decides: str
) -> None:
    """SPEC §6: `<asset>.sigstore.json`, then `<asset>.sigstore`, then `<asset>.bundle`; the
    first one present decides (a broken one is `signature_invalid`, never skipped for the
    next). Shown with the real public-good bundle."""
    artifact = tmp_path / VECTOR_ARTIFACT
    shutil.copy(FIXTURES / VECTOR_ARTIFACT, artifact)
    shutil.copy(FIXTURES / f"{VECTOR_ARTIFACT}.sigstore.json", tmp_path / f"{artifact.name}{real}")
    (tmp_path / f"{artifact.name}{broken}").write_text('{"mediaType": "not a bundle"}')
    result = nexo("plugin", "trust", "verify", str(artifact), "--repo", "trailofbits/rfc8785.py",
                  "--json", env=cli_env(tmp_path), in_process=True)  # fmt: skip
    document = json.loads(result.stdout)
    if decides == "verified":
        assert result.code == 0, result.stderr
        assert document["material"] == f"{artifact.name}{real}"
    else:
        assert result.code == 1
        assert document["kind"] == "signature_invalid"
        assert f"{artifact.name}{broken}" in document["error"]


def test_verify_usage_errors_are_exit_2(tmp_path: Path) -> None:
    result = nexo("plugin", "trust", "verify", str(tmp_path / "missing"), "--repo", "a/b", "--json",
                  env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert result.code == 2
    assert json.loads(result.stdout)["kind"] == "usage"


@skip_unless_present("sigstore")
@pytest.mark.parametrize("owner", ["trailofbits/rfc8785.py", "trailofbits/another-repo"])
def test_verify_owner_with_a_repository_is_a_usage_error_not_the_owner_alone(
    tmp_path: Path, owner: str
) -> None:
    """``--owner`` names an owner (gh's ``--owner``); ``OWNER/REPO`` there is a usage error
    pointing at ``--repo``, never read as the owner alone with the repository dropped (which
    would trust every repository of the owner the user meant to narrow to one)."""
    result = nexo("plugin", "trust", "verify", str(FIXTURES / VECTOR_ARTIFACT), "--owner", owner,
                  "--json", env=cli_env(tmp_path))  # fmt: skip
    assert (result.code, json.loads(result.stdout)["kind"]) == (2, "usage"), result.stdout
    assert json.loads(result.stdout)["error"] == (
        f"--owner takes OWNER alone, not {owner!r}: for OWNER/REPO use --repo"
    )


@pytest.mark.parametrize(
    ("command", "target", "why"),
    [
        (("add",), "../x", "the owner may not contain '..' or be '.'"),
        (("add",), "/acme", "the owner is empty"),
        (("add",), "acme/x/y", "it has more than one '/'"),
        (("remove",), "a b", "the owner may only use letters, digits, '.', '_' and '-'"),
        (("remove",), "acme/..", "the repo may not contain '..' or be '.'"),
    ],
)
def test_a_malformed_owner_repo_is_said_as_the_trust_commands_name_it(
    tmp_path: Path, command: tuple[str, ...], target: str, why: str
) -> None:
    """Not as an install source (no ".tar.gz" to give, no repo the command made up)."""
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(COMMENTED, encoding="utf-8")
    result = nexo("plugin", "trust", *command, target, "--trusted-keys", str(policy), "--yes",
                  "--json", env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert result.code == 2
    document = json.loads(result.stdout)
    assert document["kind"] == "source_invalid"
    assert document["error"] == (
        f"invalid OWNER[/REPO] {target!r}: {why}; expected OWNER or OWNER/REPO as GitHub "
        "names them (e.g. acme or acme/nexo-plugin-x)"
    )
    assert policy.read_text(encoding="utf-8") == COMMENTED


def test_verify_of_an_unsigned_file_does_not_name_an_install_flag(tmp_path: Path) -> None:
    """`trust verify` has no --require-signature: it always checks a signature."""
    from support.tarballs import write_plugin

    tarball = write_plugin(tmp_path / "dist", "echo", "1.0.0")
    result = nexo("plugin", "trust", "verify", str(tarball), "--json", env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert result.code == 1
    document = json.loads(result.stdout)
    assert document["kind"] == "signature_missing"
    assert "--require-signature" not in document["error"]
    assert document["error"].endswith(
        "(the trust commands check a signature, whatever the policy's mode)"
    )


# --- add, list, remove -----------------------------------------------------------------------

COMMENTED = """\
# Our fleet's policy: keep this comment.
schema_version = "1.0"
default = "require"  # refuse unsigned plugins

[[authors]]
# the first-party plugins
owner = "lordmacu"
identity_regexp = "^https://github\\\\.com/lordmacu/[^/]+/\\\\.github/workflows/release\\\\.yml@refs/tags/v.*$"
"""


def test_add_list_remove_keep_comments(tmp_path: Path) -> None:
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(COMMENTED)
    regexp = r"^https://github\.com/acme/hello/\.github/workflows/release\.yml@refs/tags/.+$"
    added = nexo("plugin", "trust", "add", "acme/hello", "--identity-regexp", regexp,
                 "--trusted-keys", str(policy), "--yes", "--json", env=cli_env(tmp_path),
                 in_process=True)  # fmt: skip
    assert added.code == 0, added.stderr
    assert json.loads(added.stdout)["added"] is True
    text = policy.read_text()
    assert text.startswith(COMMENTED)
    assert 'repos = ["hello"]' in text
    again = nexo("plugin", "trust", "add", "acme/hello", "--identity-regexp", regexp,
                 "--trusted-keys", str(policy), "--yes", "--json", env=cli_env(tmp_path),
                 in_process=True)  # fmt: skip
    assert json.loads(again.stdout)["added"] is False
    assert policy.read_text() == text

    listed = json.loads(nexo("plugin", "trust", "list", "--trusted-keys", str(policy), "--json",
                             env=cli_env(tmp_path), in_process=True).stdout)  # fmt: skip
    assert [a["owner"] for a in listed["authors"]] == ["lordmacu", "acme"]
    assert listed["authors"][1]["identity_regexp"] == regexp

    removed = nexo("plugin", "trust", "remove", "acme/hello", "--trusted-keys", str(policy),
                   "--yes", "--json", env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert removed.code == 0, removed.stderr
    assert policy.read_text().rstrip() == COMMENTED.rstrip()
    before = tree_snapshot(policy.parent)
    missing = nexo("plugin", "trust", "remove", "acme", "--trusted-keys", str(policy), "--yes",
                   "--json", env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert missing.code == 1
    assert json.loads(missing.stdout)["kind"] == "not_trusted"
    assert tree_snapshot(policy.parent) == before


@pytest.mark.parametrize("command", ["list", "remove"])
def test_a_named_policy_that_is_not_there_is_a_configuration_error(
    tmp_path: Path, command: str
) -> None:
    """``--trusted-keys`` naming no file (a typo) is ``policy_invalid``, exit 2, for ``list``
    and ``remove`` alike; ``remove`` does not answer that the owner is not trusted there."""
    policy = tmp_path / "trusted_kyes.toml"
    args = ["acme", "--yes"] if command == "remove" else []
    result = nexo("plugin", "trust", command, *args, "--trusted-keys", str(policy), "--json",
                  env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert result.code == 2, result.stdout
    document = json.loads(result.stdout)
    assert document["kind"] == "policy_invalid"
    assert document["error"] == f"{policy}: trust policy does not exist (named by --trusted-keys)"
    assert not policy.exists()


@pytest.mark.parametrize("authors", ["[]", '[{ owner = "lordmacu", identity = "x@example.com" }]'])
def test_add_and_remove_in_a_policy_with_an_inline_authors_array(
    tmp_path: Path, authors: str
) -> None:
    # `authors = [...]` is a valid policy (serde reads it as [[authors]]): trust add appends an
    # inline table rather than refusing the operator's file as invalid TOML.
    policy = tmp_path / "trusted_keys.toml"
    text = f'schema_version = "1.0"\n# kept\nauthors = {authors}  # kept too\n'
    policy.write_text(text)
    identity = "https://github.com/acme/hello/.github/workflows/release.yml@refs/tags/v1"
    added = nexo("plugin", "trust", "add", "acme/hello", "--identity", identity,
                 "--trusted-keys", str(policy), "--yes", "--json", env=cli_env(tmp_path),
                 in_process=True)  # fmt: skip
    assert added.code == 0, added.stderr
    assert json.loads(added.stdout)["added"] is True
    assert "# kept\n" in policy.read_text()
    assert "# kept too" in policy.read_text()
    listed = json.loads(nexo("plugin", "trust", "list", "--trusted-keys", str(policy), "--json",
                             env=cli_env(tmp_path), in_process=True).stdout)  # fmt: skip
    assert listed["authors"][-1]["owner"] == "acme"
    assert listed["authors"][-1]["identity"] == identity
    assert listed["authors"][-1]["repos"] == ["hello"]
    removed = nexo("plugin", "trust", "remove", "acme", "--trusted-keys", str(policy), "--yes",
                   "--json", env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert removed.code == 0, removed.stderr
    assert "acme" not in policy.read_text()


@skip_unless_present("sigstore")
@pytest.mark.parametrize(
    ("flag", "written"),
    [
        (
            r"https://github\.com/trailofbits/rfc8785\.py/.*",
            r"^https://github\.com/trailofbits/rfc8785\.py/.*$",
        ),
        (
            r"^https://github\.com/trailofbits/rfc8785\.py/.*|^https://gitlab\.com/tob/.*$",
            r"^(?:^https://github\.com/trailofbits/rfc8785\.py/.*|^https://gitlab\.com/tob/.*$)$",
        ),
    ],
    ids=["unanchored", "one-alternative-unanchored"],
)
def test_add_writes_an_unanchored_identity_regexp_anchored(
    tmp_path: Path, flag: str, written: str
) -> None:
    """SPEC §6: `trust add` writes an anchored identity pattern. cosign and the reference
    installer read the same file and search for the pattern anywhere in the identity, so the
    entry as typed would trust more signers there than here; the anchored form trusts exactly
    the identities nexo-pkg's full match trusts, and lints clean (no NXT010)."""
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(COMMENTED)
    added = nexo("plugin", "trust", "add", "trailofbits", "--identity-regexp", flag,
                 "--trusted-keys", str(policy), "--yes", env=cli_env(tmp_path),
                 in_process=True)  # fmt: skip
    assert added.code == 0, added.stderr
    assert f"written anchored, {written}" in added.stdout + added.stderr
    listed = json.loads(nexo("plugin", "trust", "list", "--trusted-keys", str(policy), "--json",
                             env=cli_env(tmp_path), in_process=True).stdout)  # fmt: skip
    assert [a["identity_regexp"] for a in listed["authors"] if a["owner"] == "trailofbits"] == [
        written
    ]
    assert policy.read_text().startswith(COMMENTED)
    linted = nexo("plugin", "lint", str(policy), "--json", env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert "NXT010" not in linted.stdout, linted.stdout
    # The same signer is trusted as before: the real public-good vector verifies.
    verified = nexo("plugin", "trust", "verify", str(FIXTURES / VECTOR_ARTIFACT),
                    "--trusted-keys", str(policy), env=cli_env(tmp_path),
                    in_process=True)  # fmt: skip
    assert verified.code == 0, verified.stderr


def test_list_rows_show_every_key_that_decides_what_an_entry_trusts(tmp_path: Path) -> None:
    """Two entries that differ only in issuer, ref, predicate type, republishing or mode trust
    different signers (or act differently): the rows must tell them apart."""
    policy = tmp_path / "trusted_keys.toml"
    base = 'owner = "acme"\nidentity_regexp = "^https://github\\\\.com/acme/.*$"\n'
    policy.write_text(
        f'[[authors]]\n{base}repos = ["x"]\n'
        f'[[authors]]\n{base}repos = ["y"]\n'
        'oidc_issuer = "https://token.actions.githubusercontent.com/acme"\n'
        'source_ref = "^refs/tags/v.*$"\npredicate_type = "https://spdx.dev/Document"\n'
        'allow_republish = true\nmode = "require"\n'
    )
    listed = nexo("plugin", "trust", "list", "--trusted-keys", str(policy), env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert listed.code == 0, listed.stderr
    first, second = listed.stdout.splitlines()
    assert first.endswith("repos=x (line 1)")
    assert "oidc_issuer" not in first  # GitHub's issuer is the default, not repeated
    for shown in (
        "repos=y",
        "oidc_issuer=https://token.actions.githubusercontent.com/acme",
        "source_ref=^refs/tags/v.*$",
        "predicate_type=https://spdx.dev/Document",
        "allow_republish=true",
        "mode=require",
    ):
        assert f" {shown} " in second, second


def test_add_refuses_a_pattern_re2_rejects_and_leaves_the_file(tmp_path: Path) -> None:
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(COMMENTED)
    result = nexo("plugin", "trust", "add", "acme", "--identity-regexp", "^(?=x).*$",
                  "--trusted-keys", str(policy), "--yes", "--json", env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert result.code == 2
    assert json.loads(result.stdout)["kind"] == "policy_invalid"
    assert policy.read_text() == COMMENTED


@pytest.mark.parametrize(
    ("pattern", "flag", "group", "effect"),
    [
        (
            "(?m)^https://github.com/acme/x/.github/workflows/r.yml@refs/tags/v1$",
            "m",
            "(?m)",
            "`^` and `$` also match at a line break, so the pattern can accept an identity "
            "holding one (cosign and the reference installer, which search, accept "
            "`x\\nevil` for `(?m)^x$`)",
        ),
        (
            "^https://github.com/acme/x(?m)$",
            "m",
            "(?m)",
            "`^` and `$` also match at a line break, so the pattern can accept an identity "
            "holding one (cosign and the reference installer, which search, accept "
            "`x\\nevil` for `(?m)^x$`)",
        ),
        (
            "^https://github.com/acme/(?is:.*)$",
            "s",
            "(?is:",
            "`.` also matches a line break, so the pattern can accept an identity holding one",
        ),
    ],
)
def test_add_refuses_an_inline_flag_that_lets_a_line_break_in(
    tmp_path: Path, pattern: str, flag: str, group: str, effect: str
) -> None:
    """Under `(?s)` the full match itself accepts `…/x\\nevil`; under `(?m)` a search (cosign,
    the reference installer) does, and a mid-pattern `$` widens the full match too. Refused as
    policy_invalid naming the pattern; the file is left as it was."""
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(COMMENTED)
    result = nexo("plugin", "trust", "add", "acme", "--identity-regexp", pattern,
                  "--trusted-keys", str(policy), "--yes", "--json", env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert result.code == 2
    document = json.loads(result.stdout)
    assert document["kind"] == "policy_invalid"
    assert document["error"] == (
        f"--identity-regexp '{pattern}' turns on the inline flag `{flag}` (`{group}`), under "
        f"which {effect}; remove the flag; nothing was written"
    )
    assert policy.read_text() == COMMENTED


def test_the_refused_flags_do_widen_what_matches() -> None:
    """Why they are refused, on the engine that decides (a full match) and on a search, as
    cosign and the reference installer run a pattern: each accepts a line break the same
    pattern without the flag refuses."""
    evil = "https://github.com/acme/x\nhttps://github.com/evil/y"
    assert full_match("^https://github.com/acme/.*$", evil) is False
    assert full_match("(?s)^https://github.com/acme/.*$", evil) is True
    searched = "(?s:.*)(?:{})(?s:.*)"  # regexp.MatchString, written as a full match
    assert full_match(searched.format("^https://github.com/acme/x$"), evil) is False
    assert full_match(searched.format("(?m)^https://github.com/acme/x$"), evil) is True


@pytest.mark.parametrize(
    "pattern",
    [
        "(?i)^https://github.com/acme/x$",
        "(?-ms)^https://github.com/acme/x$",
        "^https://github.com/acme/[(?m)]x$",
        # (`\\Q(?s)\\E` would be quoted text to RE2, but the reference installer's Rust regex
        # refuses `\\Q`: tests/trust/test_policy_reading.py)
        "^https://github.com/acme/\\(?s\\)$",
    ],
)
def test_add_takes_flags_and_text_that_let_no_line_break_in(tmp_path: Path, pattern: str) -> None:
    """`(?i)`, flags turned off, and `(?m)`/`(?s)` written as text (in a class, quoted,
    escaped) are no inline flag that widens the pattern: written."""
    policy = tmp_path / "trusted_keys.toml"
    result = nexo("plugin", "trust", "add", "acme", "--identity-regexp", pattern,
                  "--trusted-keys", str(policy), "--yes", env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert result.code == 0, result.stderr
    [author] = load_policy(policy).authors
    assert author.identity_regexp == pattern


def test_add_names_the_flag_whose_pattern_re2_rejects_before_showing_an_entry(
    tmp_path: Path,
) -> None:
    """The pattern is the command line's fault, not the policy file's: no line of the file
    is named and no entry is shown as if it were about to be written."""
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(COMMENTED)
    result = nexo("plugin", "trust", "add", "acme", "--identity-regexp", "(?=x)",
                  "--trusted-keys", str(policy), "--yes", env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert result.code == 2
    assert result.stderr.startswith("error: --identity-regexp does not compile (RE2 syntax): ")
    assert "Entry for" not in result.stdout + result.stderr
    assert f"{policy}:" not in result.stderr
    assert policy.read_text() == COMMENTED


@pytest.mark.parametrize("value", ["", "  "], ids=["empty", "blank"])
@pytest.mark.parametrize("flag", ["--identity-regexp", "--identity", "--oidc-issuer"])
def test_add_refuses_an_empty_identity_flag_before_showing_an_entry(
    tmp_path: Path, flag: str, value: str
) -> None:
    """An empty (or blank: the policy's NXT004 reads it as empty) identity or issuer names no
    signer: refused as the flag's fault, never written — anchored, an empty or blank pattern
    would read `^$` or `^  $` and pass the policy."""
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(COMMENTED)
    named = ["--identity-regexp", "^x$"] if flag == "--oidc-issuer" else []
    result = nexo("plugin", "trust", "add", "acme", *named, flag, value, "--trusted-keys",
                  str(policy), "--yes", env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert result.code == 2
    assert result.stderr.startswith(f"error: {flag} ")
    assert "empty" in result.stderr.splitlines()[0]
    assert "Entry for" not in result.stdout + result.stderr
    assert policy.read_text() == COMMENTED
    document = nexo("plugin", "trust", "add", "acme", *named, flag, value, "--trusted-keys",
                    str(policy), "--yes", "--json", env=cli_env(tmp_path),
                    in_process=True)  # fmt: skip
    assert json.loads(document.stdout)["kind"] == "usage"
    assert policy.read_text() == COMMENTED


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--predicate-type", ""), ("--predicate-type", "  "), ("--oidc-issuer", ""),
     ("--oidc-issuer", "  "), ("--mode", "sometimes"),
     # A blank tag names no release (as `acme/hello@` is no source): never the newest one.
     ("--tag", ""), ("--tag", "  ")],
)  # fmt: skip
def test_add_refuses_an_unusable_flag_before_reading_the_release(
    tmp_path: Path, github_server: GitHubServer, flag: str, value: str
) -> None:
    """``trust add OWNER/REPO`` reads the signer of the newest release over the network; a
    flag that no release could make usable is refused before that request (usage, exit 2,
    one document with --json), and nothing is written."""
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(COMMENTED)
    for json_flag in ((), ("--json",)):
        result = nexo("plugin", "trust", "add", "acme/hello", flag, value, "--trusted-keys",
                      str(policy), "--yes", *json_flag,
                      env=cli_env(tmp_path, api=github_server.url), in_process=True)  # fmt: skip
        assert result.code == 2, result.stdout + result.stderr
        if json_flag:
            assert json.loads(result.stdout)["kind"] == "usage"
        else:
            assert result.stderr.startswith(f"error: {flag} "), result.stderr
        assert github_server.requests == []
        assert policy.read_text() == COMMENTED


def test_add_without_a_terminal_needs_yes(tmp_path: Path) -> None:
    policy = tmp_path / "trusted_keys.toml"
    result = nexo("plugin", "trust", "add", "acme", "--identity", SIGNER_URI, "--trusted-keys",
                  str(policy), env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert result.code == 2
    assert not policy.exists()


@pytest.mark.parametrize("existing", [None, COMMENTED])
def test_trust_add_refuses_an_e_mail_identity_that_could_never_trust(
    tmp_path: Path, existing: str | None
) -> None:
    """SPEC §6: the owner is always bound through the certificate's source repository, which a
    certificate issued to an e-mail address lacks, so an entry naming one trusts nothing (lint:
    NXT013). `trust add` refuses to write it: a usage error, the policy untouched."""
    policy = tmp_path / "trusted_keys.toml"
    if existing is not None:
        policy.write_text(existing)
    result = nexo("plugin", "trust", "add", "acme/echo", "--identity", "release@acme.example",
                  "--oidc-issuer", "https://accounts.google.com", "--trusted-keys", str(policy),
                  "--yes", "--json", env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert result.code == 2, result.stdout
    document = json.loads(result.stdout)
    assert document["kind"] == "usage"
    assert document["error"].startswith(
        "--identity 'release@acme.example' is an e-mail address: its certificates name no "
        "source repository"
    )
    assert "--identity-regexp" in document["error"]
    assert document["error"].endswith("nothing was written")
    if existing is None:
        assert not policy.exists()
    else:
        assert policy.read_text() == existing


def test_refusal_then_trust_add_then_the_same_install_succeeds(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        '# keep me\nschema_version = "1.0"\ndefault = "require"\n'
        'trusted_root = "private_trusted_root.json"  # the private instance\n'
    )
    assets = release_assets("echo", "1.0.0")
    name = asset_name("echo", "1.0.0")
    identity = (
        "https://github.com/acme/nexo-plugin-echo/.github/workflows/release.yml@refs/tags/v1.0.0"
    )
    assets[name + ".sigstore.json"] = json.dumps(
        private_sigstore.sign(assets[name], identity=identity)
    ).encode()
    github_server.publish("acme", "nexo-plugin-echo", "v1.0.0", assets)
    install = ("install", "acme/nexo-plugin-echo@v1.0.0", "--yes", "--json",
               "--dest", str(tmp_path / "plugins"), "--trusted-keys", str(policy))  # fmt: skip

    refused = nexo("plugin", *install, env=cli_env(tmp_path, api=github_server.url),
                   in_process=True)  # fmt: skip
    assert refused.code == 1
    document = json.loads(refused.stdout)
    assert document["kind"] == "signer_untrusted"
    assert document["policy"] == str(policy)

    added = nexo("plugin", "trust", "add", "acme/nexo-plugin-echo", "--trusted-keys", str(policy),
                 "--yes", "--json", env=cli_env(tmp_path, api=github_server.url),
                 in_process=True)  # fmt: skip
    assert added.code == 0, added.stderr
    seen = json.loads(added.stdout)
    assert seen["seen"]["identity"] == identity
    assert seen["entry"] == document["entry"]
    text = policy.read_text()
    assert text.startswith("# keep me\n")
    assert "# the private instance" in text

    installed = nexo("plugin", *install, env=cli_env(tmp_path, api=github_server.url),
                     in_process=True)  # fmt: skip
    assert installed.code == 0, installed.stderr
    assert json.loads(installed.stdout)["signature"]["identity"] == identity


@pytest.mark.parametrize(
    ("signed_in", "flags", "written"),
    [
        ("evil/nexo-plugin-echo", (), None),
        ("evil/nexo-plugin-echo", ("--allow-republish",), None),
        ("acme/mirror", (), None),
        ("acme/mirror", ("--allow-republish",), ["mirror"]),
    ],
)
def test_trust_add_writes_only_an_entry_that_trusts_the_signer_it_saw(  # noqa: PLR0917
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    signed_in: str,
    flags: tuple[str, ...],
    written: list[str] | None,
) -> None:
    # The owner is always bound: a release signed in another owner's repository can be
    # trusted by no entry for this owner, and one signed in another repository of the owner
    # only with allow_republish, by an entry naming the signing repository.
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = tmp_path / "trusted_keys.toml"
    text = 'schema_version = "1.0"\ntrusted_root = "private_trusted_root.json"\n'
    policy.write_text(text)
    assets = release_assets("echo", "1.0.0")
    name = asset_name("echo", "1.0.0")
    identity = f"https://github.com/{signed_in}/.github/workflows/release.yml@refs/tags/v1.0.0"
    assets[name + ".sigstore.json"] = json.dumps(
        private_sigstore.sign(assets[name], identity=identity)
    ).encode()
    github_server.publish("acme", "nexo-plugin-echo", "v1.0.0", assets)
    env = cli_env(tmp_path, api=github_server.url)
    added = nexo("plugin", "trust", "add", "acme/nexo-plugin-echo", *flags, "--trusted-keys",
                 str(policy), "--yes", "--json", env=env, in_process=True)  # fmt: skip
    install = nexo("plugin", "install", "acme/nexo-plugin-echo@v1.0.0", "--yes", "--json",
                   "--require-signature", "--dest", str(tmp_path / "plugins"), "--trusted-keys",
                   str(policy), env=env, in_process=True)  # fmt: skip
    if written is None:
        assert added.code == 1, added.stdout
        refused = json.loads(added.stdout)
        assert refused["kind"] == "signer_untrusted"
        assert f"built in {signed_in}" in refused["error"]
        assert policy.read_text() == text
        assert (install.code, json.loads(install.stdout)["kind"]) == (1, "signer_untrusted")
    else:
        assert added.code == 0, added.stdout
        assert json.loads(added.stdout)["author"]["repos"] == written
        assert install.code == 0, install.stdout
        assert json.loads(install.stdout)["signature"]["identity"] == identity


def test_trust_add_beside_an_entry_that_decides_for_the_owner(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    # The first entry for an owner decides: appended after acme's owner-wide entry, the
    # entry a refusal proposes would be ignored and the same install refused again.
    policy, identity = _signed_echo(tmp_path, github_server, private_sigstore)
    older = (
        '[[authors]]\nowner = "acme"\n'
        'identity = "https://github.com/acme/old/.github/workflows/r.yml@refs/tags/v1"\n'
    )
    policy.write_text(policy.read_text() + older)
    env = cli_env(tmp_path, api=github_server.url)
    install = ("plugin", "install", "acme/nexo-plugin-echo@v1.0.0", "--yes", "--json",
               "--dest", str(tmp_path / "plugins"), "--trusted-keys", str(policy))  # fmt: skip
    refused = nexo(*install, env=env, in_process=True)
    assert json.loads(refused.stdout)["kind"] == "signer_untrusted"
    command = shlex.split(json.loads(refused.stdout)["trust_command"])
    added = nexo(*command[1:], "--yes", "--json", env=env, in_process=True)
    assert added.code == 0, added.stdout
    installed = nexo(*install, env=env, in_process=True)
    assert installed.code == 0, installed.stdout
    assert json.loads(installed.stdout)["signature"]["identity"] == identity
    assert older in policy.read_text()  # the owner's entry is kept, after the new one

    text = policy.read_text()
    hidden = nexo("plugin", "trust", "add", "acme", "--identity", SIGNER_URI,
                  "--trusted-keys", str(policy), "--yes", "--json", env=env,
                  in_process=True)  # fmt: skip
    assert hidden.code == 2, hidden.stdout
    assert "would be ignored" in json.loads(hidden.stdout)["error"]
    assert policy.read_text() == text


def _signed_echo(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> tuple[Path, str]:
    """echo 1.0.0 signed by acme's release workflow, and a policy that trusts no author."""
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        'schema_version = "1.0"\ndefault = "require"\ntrusted_root = "private_trusted_root.json"\n'
    )
    assets = release_assets("echo", "1.0.0")
    name = asset_name("echo", "1.0.0")
    identity = (
        "https://github.com/acme/nexo-plugin-echo/.github/workflows/release.yml@refs/tags/v1.0.0"
    )
    assets[name + ".sigstore.json"] = json.dumps(
        private_sigstore.sign(assets[name], identity=identity)
    ).encode()
    github_server.publish("acme", "nexo-plugin-echo", "v1.0.0", assets)
    return policy, identity


def test_trust_add_follows_asset_redirects_without_the_token(
    tmp_path: Path,
    github_server: GitHubServer,
    asset_host: BlobServer,
    private_sigstore: PrivateSigstore,
) -> None:
    """``trust add`` downloads through the one HTTP client: the API's 302 to another origin
    (as GitHub sends assets to its CDN) is followed, and the token stays with the API."""
    policy, identity = _signed_echo(tmp_path, github_server, private_sigstore)
    github_server.redirect_assets_to(asset_host)
    github_server.require_token("tok-1234")
    env = {**cli_env(tmp_path, api=github_server.url), "NEXO_GITHUB_TOKEN": "tok-1234"}
    added = nexo("plugin", "trust", "add", "acme/nexo-plugin-echo", "--trusted-keys", str(policy),
                 "--yes", "--json", env=env, in_process=True)  # fmt: skip
    assert added.code == 0, added.stderr
    assert json.loads(added.stdout)["seen"]["identity"] == identity
    fetched = asset_host.requests_to("/blobs/")
    assert fetched
    assert all("authorization" not in request.headers for request in fetched)
    assert all(
        request.headers.get("authorization") == "Bearer tok-1234"
        for request in github_server.requests_to("/repos/")
    )


def test_trust_add_refuses_an_asset_redirect_it_may_not_follow(
    tmp_path: Path,
    github_server: GitHubServer,
    asset_host: BlobServer,
    private_sigstore: PrivateSigstore,
) -> None:
    """A redirect to a scheme other than http(s) is refused (``network``, not retried) and
    the policy is left as it was."""
    policy, _ = _signed_echo(tmp_path, github_server, private_sigstore)
    before = policy.read_bytes()
    github_server.redirect_assets_to(asset_host)
    asset_host.redirect_all = f"ftp://127.0.0.1:{asset_host.port}/x"
    added = nexo("plugin", "trust", "add", "acme/nexo-plugin-echo", "--trusted-keys", str(policy),
                 "--yes", "--json", env=cli_env(tmp_path, api=github_server.url),
                 in_process=True)  # fmt: skip
    assert added.code == 1, added.stderr
    document = json.loads(added.stdout)
    assert document["kind"] == "network"
    assert "refusing a redirect" in document["error"]
    assert policy.read_bytes() == before
    assert len(asset_host.requests_to("/blobs/")) == 1


def test_the_written_entry_is_the_one_shown(tmp_path: Path) -> None:
    policy = tmp_path / "trusted_keys.toml"
    added = nexo("plugin", "trust", "add", "acme/hello", "--identity", SIGNER_URI,
                 "--trusted-keys", str(policy),
                 "--yes", "--json", env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert added.code == 0, added.stderr
    document = json.loads(added.stdout)
    assert document["entry"] in policy.read_text()


def test_trust_commands_use_the_policy_install_reads(tmp_path: Path) -> None:
    """Without --trusted-keys the policy is ``<config dir>/extensions/trusted_keys.toml``."""
    work = tmp_path / "work"
    (work / "config").mkdir(parents=True)
    regexp = r"^https://github\.com/acme/hello/\.github/workflows/release\.yml@refs/tags/.+$"

    added = nexo("plugin", "trust", "add", "acme/hello", "--identity-regexp", regexp, "--yes",
                 "--json", env=cli_env(tmp_path), cwd=work, in_process=True)  # fmt: skip
    assert added.code == 0, added.stderr
    in_cwd = work / "config" / "extensions" / "trusted_keys.toml"
    assert json.loads(added.stdout)["policy"] == str(in_cwd)
    assert "acme" in in_cwd.read_text()

    other = tmp_path / "daemon-config"
    other.mkdir()
    listed = nexo("plugin", "trust", "list", "--config", str(other), "--json",
                  env=cli_env(tmp_path), cwd=work, in_process=True)  # fmt: skip
    assert listed.code == 0, listed.stderr
    document = json.loads(listed.stdout)
    assert document["policy"] == str(other / "extensions" / "trusted_keys.toml")
    assert document["authors"] == []
    assert not (other / "extensions").exists()


@skip_unless_present("github-attestations")
def test_verify_by_the_policy_alone_names_the_owner_it_bound(tmp_path: Path) -> None:
    """Without --owner/--repo the entry's owner is bound to the certificate's source
    repository: the verdict says which, never that any owner would do."""
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        '[[authors]]\nowner = "malancas"\n'
        "identity_regexp = 'https://github\\.com/malancas/attest-demo/.+'\n"
        f'signer_workflow = "{REUSABLE_SIGNER}"\n',
        encoding="utf-8",
    )
    result = _verify(tmp_path, "--trusted-keys", str(policy))
    assert result.code == 0, result.stderr
    assert "any owner" not in result.stdout
    assert result.stdout.splitlines()[-1] == (
        f"Policy ({policy}): trusted for malancas/attest-demo (its source repository)"
    )


def test_verify_with_owner_or_repo_reads_the_policys_trusted_root(
    tmp_path: Path, private_sigstore: PrivateSigstore
) -> None:
    """``trust verify --repo/--owner`` judges by the flags, as gh does, but against the Sigstore
    instance install verifies against: the ``trusted_root`` of the policy install reads. The
    same tarball install verifies is verified, and a signature of another instance is not."""
    extensions = tmp_path / "home" / "config" / "extensions"
    extensions.mkdir(parents=True)
    private_sigstore.write_trusted_root(extensions / "private_trusted_root.json")
    write_acme_policy(
        extensions / "trusted_keys.toml", r"^https://github\.com/acme/nexo-plugin-echo/.+$"
    )
    tarball = write_plugin(tmp_path / "dist", "echo", "1.2.3")
    identity = (
        "https://github.com/acme/nexo-plugin-echo/.github/workflows/release.yml@refs/tags/v1.2.3"
    )
    bundle = tarball.with_name(tarball.name + ".sigstore.json")
    bundle.write_text(json.dumps(private_sigstore.sign(tarball.read_bytes(), identity=identity)))
    env = cli_env(tmp_path)

    installed = nexo("plugin", "install", str(tarball), "--yes", "--json", "--dest",
                     str(tmp_path / "plugins"), env=env, in_process=True)  # fmt: skip
    assert installed.code == 0, installed.stderr
    assert json.loads(installed.stdout)["signature"]["status"] == "verified"
    for scope in (["--repo", "acme/nexo-plugin-echo"], ["--owner", "acme"]):
        result = nexo("plugin", "trust", "verify", str(tarball), *scope, "--json",
                      env=env, in_process=True)  # fmt: skip
        assert result.code == 0, result.stderr
        document = json.loads(result.stdout)
        assert document["status"] == "verified"
        assert document["identity"] == identity
    # Another instance's signature does not verify against that root.
    stranger = PrivateSigstore.create()
    bundle.write_text(json.dumps(stranger.sign(tarball.read_bytes(), identity=identity)))
    result = nexo("plugin", "trust", "verify", str(tarball), "--repo", "acme/nexo-plugin-echo",
                  "--json", env=env, in_process=True)  # fmt: skip
    assert result.code == 1, result.stderr
    assert json.loads(result.stdout)["kind"] == "signature_invalid"


@pytest.mark.parametrize("flag", ["--oidc-issuer", "--signer-workflow"])
def test_flags_narrow_a_policy_never_widen_it(
    tmp_path: Path, private_sigstore: PrivateSigstore, flag: str
) -> None:
    """With --trusted-keys, --oidc-issuer and --signer-workflow are further requirements on
    the policy's verdict: a signer install refuses is never reported trusted by the policy
    because a flag named its issuer or its (reusable, another repository's) workflow."""
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = write_acme_policy(
        tmp_path / "trusted_keys.toml", r"^https://github\.com/acme/nexo-plugin-echo/.+$"
    )
    tarball = write_plugin(tmp_path / "dist", "echo", "1.2.3")
    release = (
        "https://github.com/acme/nexo-plugin-echo/.github/workflows/release.yml@refs/tags/v1.2.3"
    )
    reusable = "other/shared/.github/workflows/attest.yml"
    if flag == "--oidc-issuer":
        value = "https://issuer.example"
        bundle = private_sigstore.sign(tarball.read_bytes(), identity=release, issuer=value)
    else:
        value = reusable
        bundle = private_sigstore.attest(
            tarball.read_bytes(),
            identity=f"https://github.com/{reusable}@refs/heads/main",
            repository="acme/nexo-plugin-echo",
            build_config_uri=release,
        )
    tarball.with_name(tarball.name + ".sigstore.json").write_text(json.dumps(bundle))
    env = cli_env(tmp_path)
    plugins = tmp_path / "plugins"

    installed = nexo("plugin", "install", str(tarball), "--yes", "--json", "--trusted-keys",
                     str(policy), "--dest", str(plugins), env=env, in_process=True)  # fmt: skip
    assert installed.code == 1, installed.stdout
    assert json.loads(installed.stdout)["kind"] == "signer_untrusted"
    assert not plugins.exists() or not any(plugins.iterdir())
    verified = nexo("plugin", "trust", "verify", str(tarball), "--trusted-keys", str(policy),
                    flag, value, "--json", env=env, in_process=True)  # fmt: skip
    assert verified.code == 1, verified.stdout
    document = json.loads(verified.stdout)
    assert document["kind"] == "signer_untrusted"
    assert "Traceback" not in verified.stderr
    text = nexo("plugin", "trust", "verify", str(tarball), "--trusted-keys", str(policy),
                flag, value, env=env, in_process=True)  # fmt: skip
    assert text.code == 1
    assert text.stdout == ""
    assert text.stderr.startswith("error: ")


def test_flags_refuse_a_signer_the_policy_trusts_unless_they_name_it(
    tmp_path: Path, private_sigstore: PrivateSigstore
) -> None:
    """A signer the policy trusts passes --oidc-issuer/--signer-workflow only when they name
    its issuer and workflow."""
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        'trusted_root = "private_trusted_root.json"\n\n[[authors]]\nowner = "acme"\n'
        "identity_regexp = '^https://github\\.com/acme/nexo-plugin-echo/.+$'\n",
        encoding="utf-8",
    )
    tarball = write_plugin(tmp_path / "dist", "echo", "1.2.3")
    release = (
        "https://github.com/acme/nexo-plugin-echo/.github/workflows/release.yml@refs/tags/v1.2.3"
    )
    bundle = private_sigstore.sign(tarball.read_bytes(), identity=release)
    tarball.with_name(tarball.name + ".sigstore.json").write_text(json.dumps(bundle))

    def verify(*flags: str) -> CliResult:
        return nexo("plugin", "trust", "verify", str(tarball), "--trusted-keys", str(policy),
                    *flags, "--json", env=cli_env(tmp_path), in_process=True)  # fmt: skip

    for flags in (
        (),
        ("--oidc-issuer", "https://token.actions.githubusercontent.com"),
        ("--signer-workflow", "acme/nexo-plugin-echo/.github/workflows/release.yml"),
    ):
        assert verify(*flags).code == 0, flags
    for flags, said in (
        (("--oidc-issuer", "https://issuer.example"), "not https://issuer.example"),
        (("--signer-workflow", "acme/nexo-plugin-echo/.github/workflows/other.yml"), "other.yml"),
        # Compared as the certificate writes it, as gh compares it.
        (
            ("--signer-workflow", "ACME/nexo-plugin-echo/.github/workflows/release.yml"),
            "signed by acme/nexo-plugin-echo/.github/workflows/release.yml, not by "
            "ACME/nexo-plugin-echo/.github/workflows/release.yml (--signer-workflow) "
            "(compared exactly as the certificate writes it)",
        ),
    ):
        result = verify(*flags)
        assert result.code == 1, flags
        document = json.loads(result.stdout)
        assert document["kind"] == "signer_untrusted"
        assert "not as the flags require" in document["error"]
        assert said in document["error"]


def _release_signed_by_an_email_identity(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> tuple[Path, str, dict[str, str]]:
    """acme/nexo-plugin-echo v1.0.0 signed by a certificate without GitHub's source-repository
    claims (an e-mail identity): the policy file, its text and the environment."""
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = tmp_path / "trusted_keys.toml"
    text = 'schema_version = "1.0"\ntrusted_root = "private_trusted_root.json"\n'
    policy.write_text(text)
    assets = release_assets("echo", "1.0.0")
    name = asset_name("echo", "1.0.0")
    assets[name + ".sigstore.json"] = json.dumps(
        private_sigstore.sign(
            assets[name], identity="release@acme.example", issuer="https://accounts.google.com"
        )
    ).encode()
    github_server.publish("acme", "nexo-plugin-echo", "v1.0.0", assets)
    return policy, text, cli_env(tmp_path, api=github_server.url)


def test_trust_add_writes_no_entry_for_a_signer_that_names_no_source_repository(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    # Such a certificate is bound to no owner, so no entry for acme could ever trust it:
    # nothing is written, as for a signer built in another owner's repository.
    policy, text, env = _release_signed_by_an_email_identity(
        tmp_path, github_server, private_sigstore
    )
    added = nexo("plugin", "trust", "add", "acme/nexo-plugin-echo", "--trusted-keys",
                 str(policy), "--yes", "--json", env=env, in_process=True)  # fmt: skip
    assert added.code == 1, added.stdout
    refused = json.loads(added.stdout)
    assert refused["kind"] == "signer_untrusted"
    assert "release@acme.example" in refused["error"]
    assert "no source repository" in refused["error"]
    assert policy.read_text() == text


def test_an_install_refusal_proposes_no_entry_for_a_signer_that_names_no_source_repository(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    policy, text, env = _release_signed_by_an_email_identity(
        tmp_path, github_server, private_sigstore
    )
    install = nexo("plugin", "install", "acme/nexo-plugin-echo@v1.0.0", "--yes", "--json",
                   "--require-signature", "--dest", str(tmp_path / "plugins"), "--trusted-keys",
                   str(policy), env=env, in_process=True)  # fmt: skip
    assert install.code == 1, install.stdout
    document = json.loads(install.stdout)
    assert document["kind"] == "signer_untrusted"
    assert "release@acme.example" in document["error"]
    assert "trust add" not in document["error"]
    assert "entry" not in document
    assert policy.read_text() == text
    assert not (tmp_path / "plugins").exists() or not any((tmp_path / "plugins").iterdir())


def test_remove_of_one_repository_says_it_narrowed_the_entry(tmp_path: Path) -> None:
    """``trust remove acme/x`` of an entry listing ``x`` and ``y`` keeps the entry, limited to
    ``y``: nothing was removed, one entry was narrowed, and the output says which."""
    policy = tmp_path / "trusted_keys.toml"
    identity = "https://github.com/acme/x/.github/workflows/release.yml@refs/tags/v1"
    policy.write_text(
        f'schema_version = "1.0"\n\n[[authors]]\nowner = "acme"\nidentity = "{identity}"\n'
        'repos = ["x", "y"]\n',
        encoding="utf-8",
    )

    def remove(spec: str, *flags: str) -> CliResult:
        return nexo("plugin", "trust", "remove", spec, "--trusted-keys", str(policy), "--yes",
                    *flags, env=cli_env(tmp_path), in_process=True)  # fmt: skip

    narrowed = remove("acme/x", "--json")
    assert narrowed.code == 0, narrowed.stderr
    document = json.loads(narrowed.stdout)
    assert (document["removed"], document["narrowed"]) == (0, 1)
    assert [a.repos for a in load_policy(policy).authors] == [("y",)]
    # The whole entry goes with its last repository: removed, not narrowed.
    policy.write_text(policy.read_text(encoding="utf-8").replace('["y"]', '["x", "y"]'))
    text = remove("acme/x")
    assert text.code == 0, text.stderr
    assert text.stderr.strip() == (
        "Narrowed 1 entry: took x out of its repos; the other repositories listed stay trusted."
    )
    gone = remove("acme/y", "--json")
    assert (json.loads(gone.stdout)["removed"], json.loads(gone.stdout)["narrowed"]) == (1, 0)
    assert load_policy(policy).authors == ()


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("not json", "Expecting value: line 1 column 1 (char 0)"),
        ("[]", "not a JSON object"),
        ('{"mediaType": 1, "tlogs": [], "ctlogs": {}}', "`mediaType` is not a string; "
         "`ctlogs` is not an array; `certificateAuthorities` is missing"),
        (None, "is a directory"),
    ],
)  # fmt: skip
def test_a_garbage_trusted_root_is_reported_where_the_policy_is_read(
    tmp_path: Path, content: str | None, problem: str
) -> None:
    """lint and trust list name a ``trusted_root`` that is no Sigstore trusted root, not only
    a later verification of a bundle; both with --json print one document."""
    from nexo_pkg.trust.policy import lint_policy_source

    root = tmp_path / "root.json"
    if content is None:  # exists, is no regular file: NXT008 says so before reading it
        root.mkdir()
        problem = "is not a regular file"
    else:
        root.write_text(content)
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text('default = "warn"\ntrusted_root = "root.json"\n')
    before = policy.read_bytes()

    lint = nexo("plugin", "lint", str(policy), "--format", "json", cwd=tmp_path)
    assert lint.code == 1, lint.stderr
    [file] = json.loads(lint.stdout)["files"]
    [diagnostic] = file["diagnostics"]
    assert (diagnostic["code"], diagnostic["severity"]) == ("NXT008", "error")
    assert diagnostic["range"]["start"]["line"] == 2
    assert problem in diagnostic["message"]
    # The editor server's reading of the same buffer.
    editor = lint_policy_source(policy.read_text(), path=str(policy))
    assert [(d.code, problem in d.message) for d in editor.diagnostics] == [("NXT008", True)]

    listed = nexo("plugin", "trust", "list", "--trusted-keys", str(policy), "--json",
                  env=cli_env(tmp_path))  # fmt: skip
    assert listed.code == 2
    document = json.loads(listed.stdout)
    assert document["kind"] == "policy_invalid"
    assert document["error"].startswith(f"{policy}:2:1: invalid trust policy: trusted_root ")
    assert problem in document["error"]
    text = nexo("plugin", "trust", "list", "--trusted-keys", str(policy), env=cli_env(tmp_path))
    assert text.code == 2
    assert [line for line in text.stderr.splitlines() if line.startswith("error:")] == [
        f"error: {document['error']} [{document['kind']}]"
    ]
    assert "Traceback" not in text.stderr + listed.stderr + lint.stderr
    assert policy.read_bytes() == before


def test_a_real_trusted_root_passes_the_policys_reading(
    private_sigstore: PrivateSigstore, tmp_path: Path
) -> None:
    """The check at reading is no stricter than sigstore-python: a real private instance's
    root, in either JSON spelling of its fields, lints clean and lists."""
    document = private_sigstore.trusted_root()
    snake = {
        "".join(f"_{c.lower()}" if c.isupper() else c for c in key): value
        for key, value in document.items()
    }
    for shape in (document, snake):
        (tmp_path / "root.json").write_text(json.dumps(shape))
        policy = tmp_path / "trusted_keys.toml"
        policy.write_text('default = "warn"\ntrusted_root = "root.json"\n')
        lint = nexo("plugin", "lint", str(policy), "--format", "json", cwd=tmp_path)
        assert lint.code == 0, lint.stdout
        listed = nexo("plugin", "trust", "list", "--trusted-keys", str(policy), "--json",
                      env=cli_env(tmp_path))  # fmt: skip
        assert listed.code == 0, listed.stdout


def _hostile_root(root: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(root)
    elif kind == "device":
        root.symlink_to("/dev/zero")
    elif kind == "huge":
        with root.open("wb") as handle:  # sparse: past the cap without writing it
            handle.truncate(8 * 1024 * 1024 + 1)
    elif kind == "deep":
        root.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    else:
        root.write_bytes(b'{"mediaType": "\xff", "tlogs": [], "ctlogs": []}')


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and /dev/zero")
@pytest.mark.parametrize(
    ("kind", "problem"),
    [
        ("fifo", "is not a regular file"),
        ("device", "is not a regular file"),
        ("huge", "it is larger than 8388608 bytes"),
        ("deep", "maximum recursion depth exceeded"),
        ("not-utf8", "'utf-8' codec can't decode byte 0xff in position 15"),
    ],
)
def test_a_hostile_trusted_root_is_refused_in_one_line_without_reading_it_whole(
    tmp_path: Path, kind: str, problem: str
) -> None:
    """A ``trusted_root`` that is a FIFO or a device is never opened (no hang), one over the
    cap is not read past it, deep nesting and bytes that are no UTF-8 are a refusal: each is
    ``policy_invalid`` in one line and one --json document, NXT008 in lint, no traceback."""
    _hostile_root(tmp_path / "root.json", kind)
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text('default = "warn"\ntrusted_root = "root.json"\n')
    listed = nexo("plugin", "trust", "list", "--trusted-keys", str(policy), "--json",
                  env=cli_env(tmp_path), timeout=30)  # fmt: skip
    assert listed.code == 2, listed.stderr
    document = json.loads(listed.stdout)
    assert document["kind"] == "policy_invalid"
    assert document["error"].startswith(f"{policy}:2:1: invalid trust policy: trusted_root ")
    assert problem in document["error"]
    text = nexo("plugin", "trust", "list", "--trusted-keys", str(policy),
                env=cli_env(tmp_path), timeout=30)  # fmt: skip
    assert (text.code, text.stderr.splitlines()) == (
        2,
        [f"error: {document['error']} [{document['kind']}]"],
    )
    lint = nexo("plugin", "lint", str(policy), "--format", "json", cwd=tmp_path, timeout=30)
    [diagnostic] = json.loads(lint.stdout)["files"][0]["diagnostics"]
    assert (diagnostic["code"], problem in diagnostic["message"]) == ("NXT008", True)


def _with_times(root: Path) -> dict[str, tuple[tuple[str, int, str], int]]:
    """:func:`tree_snapshot` with each file's modification time (a policy rewritten with the
    same bytes is written too)."""
    return {
        path: (entry, (root / path).lstat().st_mtime_ns if entry[0] == "file" else 0)
        for path, entry in tree_snapshot(root).items()
    }


@pytest.mark.parametrize("policy_text", ['default = "maybe"\n', "[[authors]\nowner = 'acme'\n"])
@pytest.mark.parametrize("command", ["trust add", "trust remove", "install", "sync"])
def test_a_command_refused_for_an_invalid_policy_writes_nothing(
    tmp_path: Path, command: str, policy_text: str
) -> None:
    """Every command that reads the trust policy refuses an invalid one (``policy_invalid``,
    exit 2) before it writes: the policy keeps its bytes and time, and no plugin root,
    NEXO_HOME or download is made."""
    work = tmp_path / "work"
    tarball = write_plugin(work, "hello", "1.0.0")
    (work / "nexo-plugins.lock").write_text("lock_version = 1\n")
    policy = work / "trusted_keys.toml"
    policy.write_text(policy_text)
    identity = "https://github.com/acme/x/.github/workflows/r.yml@refs/tags/v1"
    root = str(tmp_path / "root")
    args = {
        "trust add": ["trust", "add", "acme", "--identity", identity],
        "trust remove": ["trust", "remove", "acme"],
        "install": ["install", str(tarball), "--dest", root],
        "sync": ["sync", "--lock", str(work / "nexo-plugins.lock"), "--dest", root],
    }[command]
    before = _with_times(tmp_path)
    for output in (["--json"], []):
        result = nexo("plugin", *args, "--trusted-keys", str(policy), "--yes", *output,
                      env=cli_env(tmp_path), cwd=work, in_process=True)  # fmt: skip
        assert result.code == 2, result.stderr
        assert result.error_line.endswith(" [policy_invalid]"), result.stderr
        assert "invalid trust policy" in result.error_line, result.error_line
        if output:
            assert (result.document["ok"], result.document["kind"]) == (False, "policy_invalid")
        assert _with_times(tmp_path) == before
