"""Legacy cosign material from the private instance: verified offline from its SET, or refused."""

from __future__ import annotations

import base64
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from support.private_sigstore import PrivateSigstore, random_bytes

from nexo_pkg.trust.api import (
    SignatureInvalidError,
    SignatureOutcome,
    SignerUntrustedError,
    TrustPolicy,
    verify_asset_signature,
)

from .conftest import WritePolicy
from .helpers import ACME_IDENTITY, ACME_REGEXP

ASSET = "echo-1.2.3-noarch.tar.gz"

POLICY = f"""\
trusted_root = "private_trusted_root.json"

[[authors]]
owner = "acme"
identity_regexp = '{ACME_REGEXP}'
"""


@pytest.fixture
def policy(private_root: Path, write_policy: WritePolicy) -> TrustPolicy:
    del private_root
    return write_policy(POLICY)


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    path = tmp_path / ASSET
    path.write_bytes(random_bytes())
    return path


def _verify(artifact: Path, policy: TrustPolicy, material: dict[str, Path]) -> SignatureOutcome:
    return verify_asset_signature(
        artifact,
        asset_name=ASSET,
        material=material,
        owner="acme",
        repo="nexo-plugin-echo",
        policy=policy,
        mode="require",
    )


def _write(artifact: Path, document: dict[str, Any]) -> dict[str, Path]:
    path = artifact.parent / (ASSET + ".bundle")
    path.write_text(json.dumps(document))
    return {path.name: path}


def _legacy(instance: PrivateSigstore, artifact: Path, **options: Any) -> dict[str, Any]:
    options.setdefault("identity", ACME_IDENTITY)
    document, _, _ = instance.sign_legacy(artifact.read_bytes(), **options)
    return document


def test_legacy_bundle_verifies(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path
) -> None:
    outcome = _verify(artifact, policy, _write(artifact, _legacy(private_sigstore, artifact)))
    assert outcome.status == "verified"
    assert outcome.identity == ACME_IDENTITY


def test_legacy_bundle_with_a_raw_pem_certificate_verifies(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path
) -> None:
    document = _legacy(private_sigstore, artifact)
    document["cert"] = base64.b64decode(document["cert"]).decode()
    assert _verify(artifact, policy, _write(artifact, document)).status == "verified"


def test_legacy_bundle_wins_over_detached_files(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path
) -> None:
    document, signature, pem = private_sigstore.sign_legacy(
        artifact.read_bytes(), identity=ACME_IDENTITY
    )
    material = _write(artifact, document)
    for suffix, content in ((".sig", signature), (".pem", pem)):
        path = artifact.parent / (ASSET + suffix)
        path.write_bytes(content)
        material[path.name] = path
    assert _verify(artifact, policy, material).status == "verified"


def test_untrusted_identity_is_untrusted(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path
) -> None:
    identity = "https://github.com/acme/nexo-plugin-echo/.github/workflows/ci.yml@refs/heads/x"
    with pytest.raises(SignerUntrustedError):
        _verify(
            artifact,
            policy,
            _write(artifact, _legacy(private_sigstore, artifact, identity=identity)),
        )


def test_tampered_artifact_is_invalid(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path
) -> None:
    material = _write(artifact, _legacy(private_sigstore, artifact))
    artifact.write_bytes(b"tampered" + artifact.read_bytes())
    with pytest.raises(SignatureInvalidError):
        _verify(artifact, policy, material)


def test_certificate_expired_at_the_integrated_time_is_invalid(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path
) -> None:
    document = _legacy(
        private_sigstore,
        artifact,
        lifetime=timedelta(minutes=5),
        integrated_time=private_sigstore.created + timedelta(minutes=6),
    )
    with pytest.raises(SignatureInvalidError):
        _verify(artifact, policy, _write(artifact, document))


@pytest.mark.parametrize(
    "damage",
    ["set", "integrated_time", "log_index", "body", "signature", "cert", "foreign", "sct"],
)
def test_damaged_legacy_bundle_is_invalid(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path, damage: str
) -> None:
    document = _legacy(private_sigstore, artifact)
    payload = document["rekorBundle"]["Payload"]
    other = _legacy(private_sigstore, artifact)
    if damage == "set":
        document["rekorBundle"]["SignedEntryTimestamp"] = other["rekorBundle"][
            "SignedEntryTimestamp"
        ]
    elif damage == "integrated_time":
        payload["integratedTime"] += 1
    elif damage == "log_index":
        payload["logIndex"] += 1
    elif damage == "body":
        # A body the log really signed (with its own SET), for another signature.
        document["rekorBundle"] = other["rekorBundle"]
    elif damage == "signature":
        document["base64Signature"] = other["base64Signature"]
    elif damage == "cert":
        document["cert"] = other["cert"]
    elif damage == "foreign":
        document = _legacy(PrivateSigstore.create(), artifact)
    else:
        document = _legacy(
            private_sigstore, artifact, sct_key=ec.generate_private_key(ec.SECP256R1())
        )
    with pytest.raises(SignatureInvalidError):
        _verify(artifact, policy, _write(artifact, document))


@pytest.mark.parametrize(
    "document",
    [
        {"base64Signature": "!!", "cert": "x", "rekorBundle": {}},
        {"base64Signature": "AAAA", "cert": "AAAA", "rekorBundle": {"Payload": {}}},
        {"base64Signature": 1},
    ],
)
def test_malformed_legacy_bundle_is_invalid(
    policy: TrustPolicy, artifact: Path, document: dict[str, Any]
) -> None:
    with pytest.raises(SignatureInvalidError):
        _verify(artifact, policy, _write(artifact, document))


def test_detached_signature_without_a_bundle_is_refused(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path
) -> None:
    _, signature, pem = private_sigstore.sign_legacy(artifact.read_bytes(), identity=ACME_IDENTITY)
    material = {}
    for suffix, content in ((".sig", signature), (".cert", pem)):
        path = artifact.parent / (ASSET + suffix)
        path.write_bytes(content)
        material[path.name] = path
    with pytest.raises(SignatureInvalidError) as caught:
        _verify(artifact, policy, material)
    assert "cannot be verified offline" in caught.value.message


@pytest.mark.parametrize("suffix", [".sig", ".pem"])
def test_half_a_detached_signature_is_refused(
    policy: TrustPolicy, artifact: Path, suffix: str
) -> None:
    path = artifact.parent / (ASSET + suffix)
    path.write_text("x")
    with pytest.raises(SignatureInvalidError):
        _verify(artifact, policy, {path.name: path})
