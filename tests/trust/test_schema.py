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
