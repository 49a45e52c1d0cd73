"""The real public-good Sigstore vector, verified offline with nothing mocked."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from nexo_pkg.trust.api import (
    SignatureInvalidError,
    SignerUntrustedError,
    TrustPolicy,
    verify_asset_signature,
)

from .helpers import VECTOR_ARTIFACT, VECTOR_IDENTITY, VECTOR_ISSUER, author


def _verify(artifact: Path, bundle: Path, policy: TrustPolicy, *, mode: str = "require") -> object:
    return verify_asset_signature(
        artifact,
        asset_name=VECTOR_ARTIFACT,
        material={bundle.name: bundle},
        owner="trailofbits",
        repo="rfc8785.py",
        policy=policy,
        mode=mode,  # type: ignore[arg-type]
    )


def _policy(**fields: object) -> TrustPolicy:
    values: dict[str, object] = {"owner": "trailofbits"}
    if "identity_regexp" not in fields:
        values["identity"] = VECTOR_IDENTITY
    values.update(fields)
    return TrustPolicy(default="require", authors=(author(**values),))


def test_verifies_offline_with_exact_identity(vector: tuple[Path, Path]) -> None:
    artifact, bundle = vector
    outcome = _verify(artifact, bundle, _policy())
    assert outcome.to_json() == {  # type: ignore[attr-defined]
        "status": "verified",
        "identity": VECTOR_IDENTITY,
        "issuer": VECTOR_ISSUER,
        "bundle_sha256": hashlib.sha256(bundle.read_bytes()).hexdigest(),
        "scheme": "sigstore-bundle",
        "material": bundle.name,
        "claims": {
            "source_repository": "trailofbits/rfc8785.py",
            "source_ref": "refs/tags/v0.1.2",
            "signer_workflow": "trailofbits/rfc8785.py/.github/workflows/release.yml",
            "build_config_uri": VECTOR_IDENTITY,
            "runner_environment": "github-hosted",
        },
    }


@pytest.mark.parametrize(
    "regexp",
    [
        r"https://github\.com/trailofbits/rfc8785\.py/\.github/workflows/release\.yml@refs/tags/v.*",
        r"^https://github\.com/trailofbits/.*$",
    ],
)
def test_verifies_with_a_regexp_matching_the_whole_identity(
    vector: tuple[Path, Path], regexp: str
) -> None:
    artifact, bundle = vector
    outcome = _verify(artifact, bundle, _policy(identity_regexp=regexp))
    assert outcome.identity == VECTOR_IDENTITY  # type: ignore[attr-defined]


def test_one_flipped_artifact_byte_is_invalid(vector: tuple[Path, Path]) -> None:
    artifact, bundle = vector
    data = bytearray(artifact.read_bytes())
    data[len(data) // 2] ^= 0x01
    artifact.write_bytes(bytes(data))
    with pytest.raises(SignatureInvalidError) as caught:
        _verify(artifact, bundle, _policy())
    assert caught.value.kind == "signature_invalid"
    assert caught.value.exit_code == 1


def test_one_flipped_bundle_signature_byte_is_invalid(vector: tuple[Path, Path]) -> None:
    artifact, bundle = vector
    text = bundle.read_text()
    marker = '"signature": "'
    start = text.index(marker) + len(marker)
    flipped = "A" if text[start + 5] != "A" else "B"
    bundle.write_text(text[: start + 5] + flipped + text[start + 6 :])
    with pytest.raises(SignatureInvalidError):
        _verify(artifact, bundle, _policy())


def test_another_identity_is_untrusted(vector: tuple[Path, Path]) -> None:
    artifact, bundle = vector
    other = VECTOR_IDENTITY.replace("v0.1.2", "v0.1.3")
    with pytest.raises(SignerUntrustedError) as caught:
        _verify(artifact, bundle, _policy(identity=other))
    assert caught.value.kind == "signer_untrusted"
    assert caught.value.identity == VECTOR_IDENTITY
    assert VECTOR_IDENTITY in caught.value.message


def test_another_issuer_is_untrusted(vector: tuple[Path, Path]) -> None:
    artifact, bundle = vector
    with pytest.raises(SignerUntrustedError) as caught:
        _verify(artifact, bundle, _policy(oidc_issuer="https://accounts.google.com"))
    assert "issuer" in caught.value.message


@pytest.mark.parametrize(
    "regexp",
    [
        r"^https://github\.com/trailofbits/rfc8785\.py",  # a prefix, anchored at the start only
        r"https://github\.com/trailofbits/rfc8785\.py/",
        r"release\.yml@refs/tags/v0\.1\.2$",  # a suffix, anchored at the end only
    ],
)
def test_a_regexp_matching_only_part_of_the_identity_is_untrusted(
    vector: tuple[Path, Path], regexp: str
) -> None:
    artifact, bundle = vector
    with pytest.raises(SignerUntrustedError):
        _verify(artifact, bundle, _policy(identity_regexp=regexp))


def test_repos_limit_uses_the_certificate_repository(vector: tuple[Path, Path]) -> None:
    artifact, bundle = vector
    assert _verify(artifact, bundle, _policy(repos=("rfc8785.py",))).status == "verified"  # type: ignore[attr-defined]
    with pytest.raises(SignerUntrustedError) as caught:
        _verify(artifact, bundle, _policy(repos=("other-repo",)))
    assert "trailofbits/rfc8785.py" in caught.value.message


def test_no_author_for_the_owner_under_require_is_untrusted(vector: tuple[Path, Path]) -> None:
    artifact, bundle = vector
    with pytest.raises(SignerUntrustedError) as caught:
        _verify(artifact, bundle, TrustPolicy(default="require"))
    assert "no [[authors]] entry" in caught.value.message


def test_no_author_under_warn_installs_unverified_with_a_warning(
    vector: tuple[Path, Path],
) -> None:
    artifact, bundle = vector
    outcome = _verify(artifact, bundle, TrustPolicy(), mode="warn")
    assert outcome.status == "unsigned"  # type: ignore[attr-defined]
    assert outcome.identity is None  # type: ignore[attr-defined]
    assert any(VECTOR_IDENTITY in w for w in outcome.warnings)  # type: ignore[attr-defined]


def test_no_author_under_warn_still_refuses_a_broken_signature(
    vector: tuple[Path, Path],
) -> None:
    artifact, bundle = vector
    artifact.write_bytes(artifact.read_bytes() + b"\0")
    with pytest.raises(SignatureInvalidError):
        _verify(artifact, bundle, TrustPolicy(), mode="warn")


def test_wrong_identity_fails_under_warn_too(vector: tuple[Path, Path]) -> None:
    artifact, bundle = vector
    with pytest.raises(SignerUntrustedError):
        _verify(artifact, bundle, _policy(identity="https://example.com/x"), mode="warn")


def test_ignore_reads_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "absent.sigstore.json"
    outcome = verify_asset_signature(
        tmp_path / "absent",
        asset_name="absent",
        material={"absent.sigstore.json": missing},
        owner="acme",
        repo="x",
        policy=TrustPolicy(default="require"),
        mode="ignore",
    )
    assert outcome.status == "skipped"
    assert outcome.to_json()["identity"] is None


def test_the_real_bundle_relabelled_v01_without_its_inclusion_proof_is_invalid(
    vector: tuple[Path, Path],
) -> None:
    """The public-good entry keeps its genuine signed entry timestamp; relabelled as a v0.1
    bundle with its inclusion proof removed, sigstore-python (the one verifier) refuses it, so
    nexo-pkg does too instead of trusting the timestamp alone."""
    from sigstore.errors import Error as SigstoreError
    from sigstore.models import Bundle

    artifact, bundle = vector
    document = json.loads(bundle.read_text())
    document["mediaType"] = "application/vnd.dev.sigstore.bundle+json;version=0.1"
    entry = document["verificationMaterial"]["tlogEntries"][0]
    assert entry["inclusionPromise"]["signedEntryTimestamp"]
    del entry["inclusionProof"]
    bundle.write_text(json.dumps(document))
    with pytest.raises(SigstoreError):
        Bundle.from_json(bundle.read_text())
    with pytest.raises(SignatureInvalidError, match="inclusionProof"):
        _verify(artifact, bundle, _policy())
