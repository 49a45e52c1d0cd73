"""Signatures from a private Sigstore instance (real certificates, SCTs, log proofs)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from support.private_sigstore import (
    BUNDLE_V01,
    BUNDLE_V02,
    BUNDLE_V03,
    PrivateSigstore,
    random_bytes,
    write_bundle,
)

from nexo_pkg.trust.api import (
    SignatureInvalidError,
    SignatureMissingError,
    SignatureOutcome,
    SignerUntrustedError,
    TrustPolicy,
    verify_asset_signature,
)

from .conftest import WritePolicy
from .helpers import ACME_IDENTITY, ACME_REGEXP

ASSET = "echo-1.2.3-noarch.tar.gz"

POLICY = f"""\
schema_version = "1.0"
default = "warn"
trusted_root = "private_trusted_root.json"

[[authors]]
owner = "acme"
identity_regexp = '{ACME_REGEXP}'
mode = "require"
"""


@pytest.fixture
def policy(private_root: Path, write_policy: WritePolicy) -> TrustPolicy:
    del private_root  # written next to the policy, which names it relatively
    return write_policy(POLICY)


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    path = tmp_path / ASSET
    path.write_bytes(random_bytes())
    return path


def _verify(
    artifact: Path,
    policy: TrustPolicy,
    material: dict[str, Path],
    *,
    owner: str = "acme",
    mode: str = "require",
) -> SignatureOutcome:
    return verify_asset_signature(
        artifact,
        asset_name=ASSET,
        material=material,
        owner=owner,
        repo="nexo-plugin-echo",
        policy=policy,
        mode=mode,  # type: ignore[arg-type]
    )


def _signed(
    private_sigstore: PrivateSigstore,
    artifact: Path,
    *,
    suffix: str = ".sigstore.json",
    content: bytes | None = None,
    **options: object,
) -> dict[str, Path]:
    options.setdefault("identity", ACME_IDENTITY)
    bundle = private_sigstore.sign(
        artifact.read_bytes() if content is None else content,
        **options,  # type: ignore[arg-type]
    )
    name = ASSET + suffix
    return {name: write_bundle(artifact.parent / name, bundle)}


@pytest.mark.parametrize("media_type", [BUNDLE_V03, BUNDLE_V02])
@pytest.mark.parametrize("suffix", [".sigstore.json", ".sigstore", ".bundle"])
def test_trusted_signer_verifies(
    private_sigstore: PrivateSigstore,
    policy: TrustPolicy,
    artifact: Path,
    media_type: str,
    suffix: str,
) -> None:
    material = _signed(private_sigstore, artifact, suffix=suffix, media_type=media_type)
    outcome = _verify(artifact, policy, material)
    assert outcome.status == "verified"
    assert outcome.identity == ACME_IDENTITY
    assert outcome.issuer == "https://token.actions.githubusercontent.com"


def test_v01_bundle_with_inclusion_proof_verifies(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path
) -> None:
    material = _signed(private_sigstore, artifact, media_type=BUNDLE_V02)
    path = next(iter(material.values()))
    document = json.loads(path.read_text())
    document["mediaType"] = BUNDLE_V01
    path.write_text(json.dumps(document))
    assert _verify(artifact, policy, material).status == "verified"


def test_public_good_root_does_not_trust_the_private_instance(
    private_sigstore: PrivateSigstore, artifact: Path
) -> None:
    material = _signed(private_sigstore, artifact)
    from .helpers import author

    public_policy = TrustPolicy(default="require", authors=(author(),))
    with pytest.raises(SignatureInvalidError):
        _verify(artifact, public_policy, material)


def test_untrusted_owner_under_require_is_refused(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path
) -> None:
    identity = "https://github.com/mallory/evil/.github/workflows/release.yml@refs/tags/v1.0.0"
    material = _signed(private_sigstore, artifact, identity=identity)
    with pytest.raises(SignerUntrustedError) as caught:
        _verify(artifact, policy, material, owner="mallory")
    assert caught.value.identity == identity
    assert caught.value.exit_code == 1


def test_trusted_owner_signed_by_another_identity_is_refused(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path
) -> None:
    identity = "https://github.com/acme/nexo-plugin-echo/.github/workflows/ci.yml@refs/heads/main"
    material = _signed(private_sigstore, artifact, identity=identity)
    with pytest.raises(SignerUntrustedError):
        _verify(artifact, policy, material)


def test_trusted_identity_from_another_issuer_is_refused(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path
) -> None:
    material = _signed(private_sigstore, artifact, issuer="https://gitlab.com")
    with pytest.raises(SignerUntrustedError) as caught:
        _verify(artifact, policy, material)
    assert "https://gitlab.com" in caught.value.message


def test_repos_limit(
    private_sigstore: PrivateSigstore,
    private_root: Path,
    write_policy: WritePolicy,
    artifact: Path,
) -> None:
    del private_root
    limited = write_policy(POLICY + 'repos = ["nexo-plugin-echo"]\n')
    assert _verify(artifact, limited, _signed(private_sigstore, artifact)).status == "verified"
    # Same workflow path, other repository of the owner: refused by `repos`.
    other = ACME_IDENTITY.replace("nexo-plugin-echo", "nexo-plugin-other")
    with pytest.raises(SignerUntrustedError) as caught:
        _verify(artifact, limited, _signed(private_sigstore, artifact, identity=other))
    assert "acme/nexo-plugin-other" in caught.value.message


def test_repos_limit_follows_the_calling_repository_of_a_reusable_workflow(
    private_sigstore: PrivateSigstore,
    private_root: Path,
    write_policy: WritePolicy,
    artifact: Path,
) -> None:
    del private_root
    shared = "https://github.com/acme/workflows/.github/workflows/release.yml@refs/tags/v2"
    text = POLICY.replace(ACME_REGEXP, r"https://github\.com/acme/workflows/.+@refs/tags/v.*")
    limited = write_policy(text + 'repos = ["nexo-plugin-echo"]\n')
    material = _signed(
        private_sigstore, artifact, identity=shared, repository="acme/nexo-plugin-echo"
    )
    assert _verify(artifact, limited, material).identity == shared
    material = _signed(private_sigstore, artifact, identity=shared, repository="acme/workflows")
    with pytest.raises(SignerUntrustedError):
        _verify(artifact, limited, material)


def test_unsigned_under_require_is_missing(policy: TrustPolicy, artifact: Path) -> None:
    with pytest.raises(SignatureMissingError) as caught:
        _verify(artifact, policy, {})
    assert caught.value.kind == "signature_missing"
    assert caught.value.exit_code == 1


def test_unsigned_under_warn_installs_unsigned_loudly(policy: TrustPolicy, artifact: Path) -> None:
    outcome = _verify(artifact, policy, {}, mode="warn")
    assert outcome.to_json() == {
        "status": "unsigned",
        "identity": None,
        "issuer": None,
        "bundle_sha256": None,
        "scheme": None,
        "material": None,
        "claims": {},
    }
    assert outcome.warnings
    assert "NOT SIGNED" in outcome.warnings[0]


def test_material_of_other_assets_is_not_used(policy: TrustPolicy, artifact: Path) -> None:
    stray = artifact.parent / "other-1.0.0-noarch.tar.gz.sigstore.json"
    stray.write_text("{}")
    with pytest.raises(SignatureMissingError):
        _verify(artifact, policy, {stray.name: stray})


def test_tampered_artifact_is_invalid(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path
) -> None:
    material = _signed(private_sigstore, artifact)
    artifact.write_bytes(artifact.read_bytes()[:-1] + b"!")
    with pytest.raises(SignatureInvalidError):
        _verify(artifact, policy, material)


@pytest.mark.parametrize("mode", ["warn", "require"])
def test_bundle_of_another_asset_is_invalid(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path, mode: str
) -> None:
    material = _signed(private_sigstore, artifact, content=b"another release asset")
    with pytest.raises(SignatureInvalidError):
        _verify(artifact, policy, material, mode=mode)


def test_untrusted_and_tampered_reports_invalid(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path
) -> None:
    identity = "https://github.com/mallory/evil/.github/workflows/release.yml@refs/tags/v1.0.0"
    material = _signed(private_sigstore, artifact, identity=identity, content=b"other bytes")
    with pytest.raises(SignatureInvalidError):
        _verify(artifact, policy, material)


def test_certificate_expired_at_the_integrated_time_is_invalid(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path
) -> None:
    start = private_sigstore.created
    material = _signed(
        private_sigstore,
        artifact,
        not_before=start,
        lifetime=timedelta(minutes=10),
        integrated_time=start + timedelta(minutes=11),
    )
    with pytest.raises(SignatureInvalidError) as caught:
        _verify(artifact, policy, material)
    assert "expired" in caught.value.message or "certificate" in caught.value.message


def test_logged_before_the_certificate_was_valid_is_invalid(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path
) -> None:
    start = private_sigstore.created
    material = _signed(
        private_sigstore, artifact, not_before=start, integrated_time=start - timedelta(minutes=1)
    )
    with pytest.raises(SignatureInvalidError):
        _verify(artifact, policy, material)


@pytest.mark.parametrize(
    "damage",
    [
        "signed_entry_timestamp",
        "checkpoint",
        "inclusion_hash",
        "integrated_time",
        "body",
        "certificate",
    ],
)
def test_damaged_log_material_is_invalid(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path, damage: str
) -> None:
    material = _signed(private_sigstore, artifact)
    path = next(iter(material.values()))
    document = json.loads(path.read_text())
    entry = document["verificationMaterial"]["tlogEntries"][0]
    if damage == "signed_entry_timestamp":
        other = private_sigstore.sign(b"x", identity=ACME_IDENTITY)
        entry["inclusionPromise"] = other["verificationMaterial"]["tlogEntries"][0][
            "inclusionPromise"
        ]
    elif damage == "checkpoint":
        entry["inclusionProof"]["checkpoint"]["envelope"] = entry["inclusionProof"]["checkpoint"][
            "envelope"
        ].replace(" - 1\n", " - 2\n", 1)
    elif damage == "inclusion_hash":
        entry["inclusionProof"]["hashes"][0] = entry["inclusionProof"]["rootHash"]
    elif damage == "integrated_time":
        entry["integratedTime"] = str(int(entry["integratedTime"]) + 1)
    elif damage == "body":
        other = private_sigstore.sign(artifact.read_bytes(), identity=ACME_IDENTITY)
        entry["canonicalizedBody"] = other["verificationMaterial"]["tlogEntries"][0][
            "canonicalizedBody"
        ]
    else:
        other = private_sigstore.sign(artifact.read_bytes(), identity=ACME_IDENTITY)
        document["verificationMaterial"]["certificate"] = other["verificationMaterial"][
            "certificate"
        ]
    path.write_text(json.dumps(document))
    with pytest.raises(SignatureInvalidError):
        _verify(artifact, policy, material)


def test_certificate_from_a_foreign_ca_is_invalid(policy: TrustPolicy, artifact: Path) -> None:
    foreign = PrivateSigstore.create()
    material = _signed(foreign, artifact)
    with pytest.raises(SignatureInvalidError):
        _verify(artifact, policy, material)


@pytest.mark.parametrize(
    "content",
    [b"", b"not json", b"[]", b"{}", b'{"mediaType": "application/x-nope"}'],
)
def test_garbage_material_is_invalid(policy: TrustPolicy, artifact: Path, content: bytes) -> None:
    path = artifact.parent / (ASSET + ".sigstore.json")
    path.write_bytes(content)
    with pytest.raises(SignatureInvalidError):
        _verify(artifact, policy, {path.name: path}, mode="warn")


def test_missing_trusted_root_file_is_policy_invalid(
    private_sigstore: PrivateSigstore, tmp_path: Path, write_policy: WritePolicy
) -> None:
    from nexo_pkg.core.errors import NexoError

    with pytest.raises(NexoError) as caught:
        write_policy(POLICY)
    assert caught.value.kind == "policy_invalid"
    assert caught.value.exit_code == 2
    assert ":3:" in caught.value.message
    del private_sigstore, tmp_path


def test_broken_trusted_root_file_is_policy_invalid(
    private_sigstore: PrivateSigstore,
    tmp_path: Path,
    write_policy: WritePolicy,
    artifact: Path,
) -> None:
    from nexo_pkg.core.errors import NexoError

    # Shaped like a trusted root, so the policy reads it; sigstore-python's models refuse
    # its media type when a bundle is verified.
    (tmp_path / "private_trusted_root.json").write_text(
        '{"mediaType": "nope", "tlogs": [], "ctlogs": [], "certificateAuthorities": []}'
    )
    policy = write_policy(POLICY)
    material = _signed(private_sigstore, artifact)
    with pytest.raises(NexoError) as caught:
        _verify(artifact, policy, material)
    assert caught.value.kind == "policy_invalid"
    assert caught.value.exit_code == 2


def test_sct_from_an_untrusted_ct_log_is_invalid(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path
) -> None:
    rogue_log = ec.generate_private_key(ec.SECP256R1())
    material = _signed(private_sigstore, artifact, sct_key=rogue_log)
    with pytest.raises(SignatureInvalidError) as caught:
        _verify(artifact, policy, material)
    assert "SCT" in caught.value.message


def test_local_tarball_without_owner_is_checked_against_every_author(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path
) -> None:
    material = _signed(private_sigstore, artifact)
    outcome = verify_asset_signature(
        artifact,
        asset_name=ASSET,
        material=material,
        owner=None,
        repo=None,
        policy=policy,
        mode="require",
    )
    assert outcome.identity == ACME_IDENTITY
    stranger = "https://github.com/mallory/evil/.github/workflows/release.yml@refs/tags/v1.0.0"
    material = _signed(private_sigstore, artifact, identity=stranger)
    with pytest.raises(SignerUntrustedError):
        verify_asset_signature(
            artifact,
            asset_name=ASSET,
            material=material,
            owner=None,
            repo=None,
            policy=policy,
            mode="require",
        )


def _promise_only_v01(material: dict[str, Path]) -> dict[str, object]:
    path = next(iter(material.values()))
    document = json.loads(path.read_text())
    document["mediaType"] = BUNDLE_V01
    del document["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]
    path.write_text(json.dumps(document))
    return dict(document)


@pytest.mark.parametrize("damage", ["none", "artifact", "set", "identity", "digest"])
def test_v01_bundle_with_only_an_inclusion_promise_is_refused_as_sigstore_python_refuses_it(
    private_sigstore: PrivateSigstore, policy: TrustPolicy, artifact: Path, damage: str
) -> None:
    """SPEC §6, one verifier: sigstore-python's public API decides every Sigstore bundle, and
    sigstore-python 4.x requires a checkpointed inclusion proof of every log entry, v0.1
    included (``TransparencyLogEntry._validate`` in ``sigstore/models.py``: "entry must
    contain inclusion proof, with checkpoint"). A v0.1 bundle holding only an inclusion promise
    is not verified by a second implementation: it is ``signature_invalid``, intact or not."""
    from sigstore.errors import Error as SigstoreError
    from sigstore.models import Bundle

    identity = ACME_IDENTITY
    if damage == "identity":
        identity = "https://github.com/acme/x/.github/workflows/ci.yml@refs/heads/main"
    material = _signed(private_sigstore, artifact, media_type=BUNDLE_V02, identity=identity)
    _promise_only_v01(material)
    path = next(iter(material.values()))
    document = json.loads(path.read_text())
    if damage == "artifact":
        artifact.write_bytes(artifact.read_bytes() + b"x")
    elif damage == "set":
        entry = document["verificationMaterial"]["tlogEntries"][0]
        entry["integratedTime"] = str(int(entry["integratedTime"]) + 1)
    elif damage == "digest":
        document["messageSignature"]["messageDigest"]["digest"] = "AAAA"
    path.write_text(json.dumps(document))
    # The reference verdict: sigstore-python refuses the document itself.
    with pytest.raises(SigstoreError):
        Bundle.from_json(path.read_text())
    with pytest.raises(SignatureInvalidError) as caught:
        _verify(artifact, policy, material)
    assert "inclusionProof" in caught.value.message
    assert caught.value.exit_code == 1
