"""The published JSON Schema of ``trusted_keys.toml`` agrees with the validator."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from nexo_pkg.core.errors import NexoError
from nexo_pkg.trust.policy import parse_policy

ROOT = Path(__file__).resolve().parent.parent.parent
SCHEMA = ROOT / "schemas" / "trusted-keys.schema.json"
PACKAGED = ROOT / "nexo_pkg" / "schemas" / "trusted-keys.schema.json"

VALID = [
    'schema_version = "1.0"\ndefault = "warn"\n',
    '[[authors]]\nowner = "acme"\nidentity_regexp = "https://github\\\\.com/acme/.*"\n',
    '[[authors]]\nowner = "acme"\nidentity = "x"\nrepos = ["a", "b"]\nmode = "require"\n'
    'oidc_issuer = "https://gitlab.com"\n',
    'cosign_binary = "cosign"\n',
    'schema_version = "2.0"\n',
]
INVALID = [
    "colour = 1\n",
    'default = "strict"\n',
    '[[authors]]\nowner = "acme"\n',
    '[[authors]]\nowner = "acme"\nidentity = "x"\nidentity_regexp = "x"\n',
    '[[authors]]\nidentity = "x"\n',
    '[[authors]]\nowner = "acme"\nidentity = "x"\nrepos = []\n',
    '[[authors]]\nowner = "acme"\nidentity = "x"\nextra = true\n',
    "schema_version = 2\n",
]


def _validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA.read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_packaged_copy_is_identical() -> None:
    assert PACKAGED.read_bytes() == SCHEMA.read_bytes()


@pytest.mark.parametrize("text", VALID)
def test_valid_policies_match_the_schema(text: str, tmp_path: Path) -> None:
    assert list(_validator().iter_errors(tomllib.loads(text))) == []
    parse_policy(text, path=tmp_path / "trusted_keys.toml")


@pytest.mark.parametrize("text", INVALID)
def test_invalid_policies_fail_both(text: str, tmp_path: Path) -> None:
    assert list(_validator().iter_errors(tomllib.loads(text)))
    with pytest.raises(NexoError):
        parse_policy(text, path=tmp_path / "trusted_keys.toml")


def test_the_schema_says_which_entries_of_an_owner_are_read(tmp_path: Path) -> None:
    """Editors show the schema's descriptions as the policy's documentation: it must say what
    the validator does. Of two owner-wide entries for one owner only the first is read (as
    the reference installer reads it), so "any entry that accepts" would be a false promise."""
    schema = json.loads(SCHEMA.read_text())
    described = schema["properties"]["authors"]["description"]
    assert "the first entry for an owner decides" in described
    assert "NXT012" in described
    text = (
        '[[authors]]\nowner = "acme"\nidentity = "https://github.com/acme/a/x"\n\n'
        '[[authors]]\nowner = "acme"\nidentity = "https://github.com/acme/b/x"\n'
    )
    policy = parse_policy(text, path=tmp_path / "trusted_keys.toml")
    assert [a.identity for a in policy.authors_for("acme")] == ["https://github.com/acme/a/x"]
    # An entry's mode yields to the flags and, with `repos`, sets only those repositories'.
    mode = schema["$defs"]["author"]["properties"]["mode"]["description"]
    assert "--require-signature" in mode
    assert "`repos` only" in mode


def test_the_schema_says_what_identity_may_match() -> None:
    """Editors show the descriptions as documentation: `identity`, like `identity_regexp`, is
    compared with the SAN and with the workflow that started the run (build config claim);
    tests/trust/test_claims.py::test_the_starting_workflow_may_be_the_identity holds that."""
    author = json.loads(SCHEMA.read_text())["$defs"]["author"]["properties"]
    for key in ("identity", "identity_regexp"):
        described = author[key]["description"]
        assert "the SAN" in described, key
        assert "the workflow that started the run (build config claim)" in described, key
    assert "signer_workflow" in author["identity"]["description"]
