"""The real public-good vector through the ``nexo`` console script: an author entry's
``identity`` and ``oidc_issuer`` are compared exactly and its ``identity_regexp`` matches the
whole SAN (SPEC §6), and the verdict needs no network at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import nexo, nexo_with_sitecustomize
from support.private_sigstore import PrivateSigstore
from support.shared_fixtures import skip_unless_present

from .helpers import FIXTURES, VECTOR_ARTIFACT, VECTOR_IDENTITY, VECTOR_ISSUER, cli_env

# Every test here verifies the public-good vector read from the shared fixtures.
pytestmark = skip_unless_present("sigstore", VECTOR_ARTIFACT)

# Entries one character or one letter's case away from the vector's signer. A verifier that
# lowered, trimmed or searched instead of comparing would trust each of them.
NEAR_MISSES = {
    "identity_case": f'identity = "{VECTOR_IDENTITY.replace("release.yml", "Release.yml")}"',
    "identity_trailing_slash": f'identity = "{VECTOR_IDENTITY}/"',
    "identity_trailing_space": f'identity = "{VECTOR_IDENTITY} "',
    "identity_prefix": f'identity = "{VECTOR_IDENTITY[:-1]}"',
    "regexp_prefix_only": r"identity_regexp = '^https://github\.com/trailofbits/'",
    "regexp_suffix_only": r"identity_regexp = 'release\.yml@refs/tags/v0\.1\.2$'",
    "regexp_case": (
        r"identity_regexp = 'https://github\.com/TrailOfBits/rfc8785\.py/\.github/"
        r"workflows/release\.yml@refs/tags/v.*'"
    ),
    "issuer_trailing_slash": f'identity = "{VECTOR_IDENTITY}"\noidc_issuer = "{VECTOR_ISSUER}/"',
    "issuer_case": (
        f'identity = "{VECTOR_IDENTITY}"\n'
        f'oidc_issuer = "{VECTOR_ISSUER.replace("token.", "Token.")}"'
    ),
    "issuer_scheme": (
        f'identity = "{VECTOR_IDENTITY}"\n'
        f'oidc_issuer = "{VECTOR_ISSUER.replace("https:", "http:")}"'
    ),
}


def _policy(tmp_path: Path, entry: str) -> Path:
    path = tmp_path / "trusted_keys.toml"
    path.write_text(
        f'schema_version = "1.0"\ndefault = "require"\n\n[[authors]]\nowner = "trailofbits"\n'
        f"{entry}\n",
        encoding="utf-8",
    )
    return path


def _verify(tmp_path: Path, policy: Path) -> tuple[int, dict[str, object]]:
    result = nexo("plugin", "trust", "verify", str(FIXTURES / VECTOR_ARTIFACT),
                  "--trusted-keys", str(policy), "--json", env=cli_env(tmp_path))  # fmt: skip
    return result.code, result.document


def test_the_exact_identity_and_issuer_verify(tmp_path: Path) -> None:
    entry = f'identity = "{VECTOR_IDENTITY}"\noidc_issuer = "{VECTOR_ISSUER}"'
    code, document = _verify(tmp_path, _policy(tmp_path, entry))
    assert code == 0, document
    assert (document["status"], document["identity"], document["issuer"]) == (
        "verified",
        VECTOR_IDENTITY,
        VECTOR_ISSUER,
    )


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_a_near_miss_of_the_identity_or_issuer_is_untrusted(tmp_path: Path, case: str) -> None:
    policy = _policy(tmp_path, NEAR_MISSES[case])
    before = policy.read_bytes()
    code, document = _verify(tmp_path, policy)
    assert (code, document["kind"]) == (1, "signer_untrusted"), document
    assert document["identity"] == VECTOR_IDENTITY
    assert document["issuer"] == VECTOR_ISSUER
    assert policy.read_bytes() == before


# Every way out of the process is shut: a name lookup or a connection attempt is written
# down and refused, so a verifier that reached for the network would show it either way.
NO_NETWORK = """\
import socket

def _refuse(*args, **kwargs):
    with open({log!r}, "a", encoding="utf-8") as log:
        log.write(repr(args[:2]) + "\\n")
    raise OSError("network is off in this test")

socket.getaddrinfo = _refuse
socket.create_connection = _refuse
socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
"""


def test_the_public_good_vector_verifies_with_no_network(tmp_path: Path) -> None:
    attempts = tmp_path / "attempts.log"
    policy = _policy(tmp_path, f'identity = "{VECTOR_IDENTITY}"')
    result = nexo_with_sitecustomize(
        tmp_path, NO_NETWORK.format(log=str(attempts)),
        "plugin", "trust", "verify", str(FIXTURES / VECTOR_ARTIFACT),
        "--trusted-keys", str(policy), "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    document = json.loads(result.stdout)
    assert (document["status"], document["identity"]) == ("verified", VECTOR_IDENTITY)
    assert document["scheme"] == "sigstore-bundle"
    assert not attempts.exists(), attempts.read_text()


def test_a_private_trusted_root_no_longer_trusts_the_public_good_instance(tmp_path: Path) -> None:
    """docs/trust.md: with ``trusted_root`` set only that instance is trusted. The public-good
    vector, which verifies without it (above), is refused as invalid under a policy naming the
    right signer and another instance's root."""
    PrivateSigstore.create().write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = _policy(tmp_path, f'identity = "{VECTOR_IDENTITY}"')
    policy.write_text(
        policy.read_text(encoding="utf-8").replace(
            'default = "require"\n',
            'default = "require"\ntrusted_root = "private_trusted_root.json"\n',
        ),
        encoding="utf-8",
    )
    code, document = _verify(tmp_path, policy)
    assert (code, document.get("kind")) == (1, "signature_invalid"), document
