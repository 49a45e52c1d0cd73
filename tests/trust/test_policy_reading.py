"""The trust policy read as the reference installer reads it, through the real CLI.

The reference is ``crates/ext-installer/src/trusted_keys.rs`` of lordmacu/nexo-rs (3eb2c511;
line numbers at eec3f33): ``TrustedKeysConfig.schema_version`` is a ``String`` it never
compares (:79), and ``resolve`` walks ``[[authors]]`` in order and returns the first entry
whose owner equals the one installed from (:124-131), ignoring every later entry.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import CliResult, nexo
from support.shared_fixtures import require_shared_fixture

from .helpers import SHARED_FIXTURES, cli_env

ATTESTATIONS = SHARED_FIXTURES / "github-attestations"
SIGNER = "^https://github\\\\.com/malancas/attest-demo/.*$"
NOBODY = "^https://github\\\\.com/nobody/.*$"


def _policy(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "trusted_keys.toml"
    path.write_text(body, encoding="utf-8")
    return path


REUSABLE_SIGNER = "github/artifact-attestations-workflows/.github/workflows/attest.yml"


def _author(owner: str, pattern: str) -> str:
    """An `[[authors]]` entry; the fixture was signed through a reusable workflow, which an
    entry must name to accept it."""
    return (
        f'\n[[authors]]\nowner = "{owner}"\nidentity_regexp = "{pattern}"\n'
        f'signer_workflow = "{REUSABLE_SIGNER}"\n'
    )


def _verify(tmp_path: Path, policy: Path) -> CliResult:
    """``trust verify`` of the shared attestation fixture against ``policy``, as install
    would judge the signer of malancas/attest-demo (skips the test without the fixture)."""
    require_shared_fixture("github-attestations")
    return nexo("plugin", "trust", "verify", str(ATTESTATIONS / "reusable-workflow-artifact"),
                "--bundle", str(ATTESTATIONS / "reusable-workflow-attestation.sigstore.json"),
                "--repo", "malancas/attest-demo", "--trusted-keys", str(policy), "--json",
                env=cli_env(tmp_path), in_process=True)  # fmt: skip


def _lint(tmp_path: Path, policy: Path) -> list[dict[str, object]]:
    completed = nexo("plugin", "lint", "--format", "json", str(policy), env=cli_env(tmp_path),
                     in_process=True)  # fmt: skip
    assert "Traceback" not in completed.stderr
    diagnostics: list[dict[str, object]] = json.loads(completed.stdout)["files"][0]["diagnostics"]
    return diagnostics


def test_the_first_entry_for_an_owner_decides(tmp_path: Path) -> None:
    """trusted_keys.rs:124-131: `resolve` returns the first entry whose owner matches; a later
    entry that would accept the signer is never consulted, so the signer is untrusted."""
    policy = _policy(tmp_path, _author("malancas", NOBODY) + _author("malancas", SIGNER))
    result = _verify(tmp_path, policy)
    assert result.code == 1, result.stderr
    assert json.loads(result.stdout)["kind"] == "signer_untrusted"
    assert policy.read_text(encoding="utf-8").count("[[authors]]") == 2  # nothing rewritten


def test_a_matching_first_entry_is_not_spoilt_by_a_later_one(tmp_path: Path) -> None:
    """The mirror image: the first entry accepts the signer, the later one is ignored."""
    policy = _policy(tmp_path, _author("malancas", SIGNER) + _author("malancas", NOBODY))
    result = _verify(tmp_path, policy)
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["verified"] is True


def test_later_duplicates_draw_a_warning(tmp_path: Path) -> None:
    """Lint (NXT012) and every reader of the policy (`trust list`) say which entry is
    ignored; the policy still loads."""
    policy = _policy(tmp_path, _author("malancas", SIGNER) + _author("Malancas", NOBODY))
    found = _lint(tmp_path, policy)
    assert [(d["code"], d["severity"], d["key_path"]) for d in found] == [
        ("NXT012", "warning", "authors[1]")
    ]
    listed = nexo("plugin", "trust", "list", "--trusted-keys", str(policy), "--json",
                  env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert listed.code == 0, listed.stderr
    [warning] = json.loads(listed.stdout)["warnings"]
    assert "authors[1]" in warning
    assert "is ignored" in warning


def test_entries_for_other_repositories_are_not_duplicates(tmp_path: Path) -> None:
    """`repos` (read by nexo-pkg only) limits an entry to some repositories: a second entry
    for other repositories of the owner still applies to those."""
    body = (
        _author("malancas", NOBODY) + 'repos = ["other"]\n' + _author("malancas", SIGNER)
        + 'repos = ["attest-demo"]\n'
    )  # fmt: skip
    policy = _policy(tmp_path, body)
    assert _lint(tmp_path, policy) == []
    assert _verify(tmp_path, policy).code == 0


def test_an_unknown_schema_version_is_a_warning(tmp_path: Path) -> None:
    """trusted_keys.rs:79: `schema_version: String`, never compared, so "2.0" loads; lint
    warns (NXT011) and the install-side reader goes on and verifies."""
    policy = _policy(tmp_path, 'schema_version = "2.0"\n' + _author("malancas", SIGNER))
    found = _lint(tmp_path, policy)
    assert [(d["code"], d["severity"]) for d in found] == [("NXT011", "warning")]
    result = _verify(tmp_path, policy)
    assert result.code == 0, result.stderr


def test_a_schema_version_that_is_not_a_string_is_policy_invalid(tmp_path: Path) -> None:
    """The reference deserialises a `String`: an integer fails its load, and ours."""
    policy = _policy(tmp_path, "schema_version = 2\n" + _author("malancas", SIGNER))
    result = _verify(tmp_path, policy)
    assert result.code == 2
    assert json.loads(result.stdout)["kind"] == "policy_invalid"


@pytest.mark.parametrize(
    ("key", "entry"),
    [
        ("owner", 'owner = " "\nidentity_regexp = "^x$"\n'),
        ("identity_regexp", 'owner = "acme"\nidentity_regexp = ""\n'),
        ("oidc_issuer", 'owner = "acme"\nidentity_regexp = "^x$"\noidc_issuer = ""\n'),
        ("cosign_binary", None),
    ],
)
def test_empty_strings_the_reference_takes_are_listed_as_stricter(
    tmp_path: Path, key: str, entry: str | None
) -> None:
    """trusted_keys.rs:54-89 at eec3f33 declares these keys plain `String`s (`PathBuf` for
    `cosign_binary`) with no check for emptiness, so the reference loads `""`; nexo-pkg refuses
    it (NXT004, `policy_invalid`), a deliberate difference docs/rules.md must list."""
    if entry is None:
        body = f'{key} = ""\n[[authors]]\nowner = "acme"\nidentity_regexp = "^x$"\n'
    else:
        body = "[[authors]]\n" + entry
    policy = _policy(tmp_path, body)
    listed = nexo("plugin", "trust", "list", "--trusted-keys", str(policy), "--json",
                  env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert listed.code == 2
    document = json.loads(listed.stdout)
    assert document["kind"] == "policy_invalid"
    key_path = key if entry is None else f"authors[0].{key}"
    assert document["error"].endswith(f"`{key_path}` must not be empty")
    assert [(d["code"], d["key_path"]) for d in document["diagnostics"]] == [("NXT004", key_path)]
    assert ("NXT004", key_path) in [(d["code"], d["key_path"]) for d in _lint(tmp_path, policy)]
    rules = (Path(__file__).parents[2] / "docs" / "rules.md").read_text("utf-8")
    stricter = rules.split("## Where nexo-pkg is stricter than the daemon", 1)[1].split("\n## ")[0]
    [bullet] = [line for line in stricter.splitlines() if "**Trust policy owners**" in line]
    assert f"`{key}`" in bullet.split("NXT011", 1)[1]


def test_owners_match_case_insensitively(tmp_path: Path) -> None:
    """trusted_keys.rs:126 compares owners exactly (`author.owner == owner`); nexo-pkg matches
    them case-insensitively, as GitHub names are (listed in docs/rules.md as a deliberate
    difference): an entry written `MALANCAS` judges malancas/attest-demo, and a later
    `malancas` entry is the ignored duplicate."""
    policy = _policy(tmp_path, _author("MALANCAS", SIGNER) + _author("malancas", NOBODY))
    result = _verify(tmp_path, policy)
    assert result.code == 0, result.stderr
    assert [d["code"] for d in _lint(tmp_path, policy)] == ["NXT012"]


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        ("^https://github\\\\.com/\\\\Qmalancas\\\\E/.*$", "no `\\Q` escape"),
        ("^https://github\\\\.com/malancas/\\\\056*$", "octal or back-reference escape `\\0`"),
        ("^https://github\\\\.com/malancas/.{,500}$", "starts no counted repetition"),
        ("^https://github\\\\.com/malancas/{attest-demo}.*$", "starts no counted repetition"),
    ],
    ids=["quoted-literal", "octal", "empty-minimum", "literal-brace"],
)
def test_a_pattern_the_reference_s_rust_regex_refuses_is_policy_invalid(
    tmp_path: Path, pattern: str, words: str
) -> None:
    """trusted_keys.rs:107-114 at eec3f33: `load` compiles every `identity_regexp` with
    `regex::Regex::new` (regex 1.12.3, regex-syntax 0.8.10 in Cargo.lock) and fails the whole
    load on an error. RE2 compiles these (a `\\Q…\\E` literal, an octal escape, a `{`
    it reads as a literal brace); regex-syntax refuses them (`EscapeUnrecognized`,
    `UnsupportedBackreference`, `RepetitionCountDecimalEmpty`/`RepetitionCountUnclosed`).
    `trust verify` refuses the policy (policy_invalid, exit 2), lint names the pattern
    (NXT007), and `trust add` writes nothing."""
    policy = _policy(tmp_path, _author("malancas", pattern))
    result = _verify(tmp_path, policy)
    assert result.code == 2, result.stdout
    document = json.loads(result.stdout)
    assert document["kind"] == "policy_invalid"
    assert words in document["error"]
    [finding] = _lint(tmp_path, policy)
    assert (finding["code"], finding["severity"]) == ("NXT007", "error")
    assert words in str(finding["message"])
    target = tmp_path / "added.toml"
    added = nexo("plugin", "trust", "add", "malancas", "--identity-regexp",
                 json.loads(f'"{pattern}"'), "--trusted-keys", str(target), "--yes", "--json",
                 env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert added.code == 2, added.stdout
    assert json.loads(added.stdout)["kind"] == "policy_invalid"
    assert not target.exists()


@pytest.mark.parametrize(
    "pattern",
    [
        "^https://github\\\\.com/malancas/attest-demo/.{0,500}$",
        "^https://github\\\\.com/malancas/attest-demo/.{1,}$",
        "^https://github\\\\.com/\\\\p{L}+/attest-demo/.*$",
        "^https://github\\\\.com/malancas/attest-demo/[{]?.*$",
        "^https://github\\\\.com/malancas/attest-demo/\\\\{?.*$",
    ],
    ids=["bounded", "at-least", "unicode-class", "brace-in-class", "escaped-brace"],
)
def test_braces_both_regex_engines_read_alike_stay_valid(tmp_path: Path, pattern: str) -> None:
    """The other side of the check above: counted repetitions, `\\p{…}` classes and braces
    in a class or escaped compile in RE2 and in the Rust crate alike, so the policy verifies
    the fixture's signer."""
    policy = _policy(tmp_path, _author("malancas", pattern))
    assert _lint(tmp_path, policy) == []
    result = _verify(tmp_path, policy)
    assert result.code == 0, result.stderr
