"""Real GitHub artifact attestations (public-good Sigstore), verified offline."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.shared_fixtures import skip_unless_present

from nexo_pkg.trust.api import (
    SignatureInvalidError,
    SignerUntrustedError,
    TrustPolicy,
    verify_asset_signature,
)
from nexo_pkg.trust.policy import AuthorPolicy

from .helpers import SHARED_FIXTURES

ATTESTATIONS = SHARED_FIXTURES / "github-attestations"
REUSABLE_ARTIFACT = "reusable-workflow-artifact"
REUSABLE_BUNDLE = "reusable-workflow-attestation.sigstore.json"
CUSTOM_ARTIFACT = "custom-issuer-artifact"
CUSTOM_BUNDLE = "custom-issuer.sigstore.json"
GHES_ARTIFACT = "github_provenance_demo-0.0.12-py3-none-any.whl"
GHES_BUNDLE = "github_provenance_demo-0.0.12-py3-none-any-bundle.jsonl"
REUSABLE_SIGNER = "github/artifact-attestations-workflows/.github/workflows/attest.yml"
CUSTOM_ISSUER = "https://token.actions.githubusercontent.com/hammer-time"


def _copy(tmp_path: Path, artifact: str, bundle: str, *, as_name: str | None = None) -> Path:
    """The artifact and its attestation side by side, as a release would offer them."""
    target = tmp_path / artifact
    shutil.copy(ATTESTATIONS / artifact, target)
    shutil.copy(ATTESTATIONS / bundle, tmp_path / (as_name or f"{artifact}.sigstore.json"))
    return target


def _verify(
    artifact: Path,
    author: AuthorPolicy,
    *,
    owner: str,
    repo: str,
    material_name: str | None = None,
) -> object:
    name = material_name or f"{artifact.name}.sigstore.json"
    return verify_asset_signature(
        artifact,
        asset_name=artifact.name,
        material={name: artifact.with_name(name)},
        owner=owner,
        repo=repo,
        policy=TrustPolicy(default="require", authors=(author,)),
        mode="require",
    )


def _malancas(**fields: object) -> AuthorPolicy:
    values: dict[str, object] = {
        "owner": "malancas",
        "identity_regexp": r"^https://github\.com/malancas/attest-demo/\.github/workflows/.+$",
        # A reusable workflow of another repository signed: gh and nexo want it named.
        "signer_workflow": REUSABLE_SIGNER,
    }
    values.update(fields)
    return AuthorPolicy(**values)  # type: ignore[arg-type]


@skip_unless_present("github-attestations")
def test_reusable_workflow_attestation_verifies_on_the_calling_repository(
    tmp_path: Path,
) -> None:
    artifact = _copy(tmp_path, REUSABLE_ARTIFACT, REUSABLE_BUNDLE)
    outcome = _verify(
        artifact, _malancas(signer_workflow=REUSABLE_SIGNER), owner="malancas", repo="attest-demo"
    )
    document = outcome.to_json()  # type: ignore[attr-defined]
    assert document["status"] == "verified"
    assert document["scheme"] == "github-attestation"
    # The identity is the certificate's signer (the SAN), as cosign and gh show it; the
    # source repository and the calling workflow are beside it.
    assert document["identity"].startswith(f"https://github.com/{REUSABLE_SIGNER}@")
    assert document["claims"]["signer_workflow"] == REUSABLE_SIGNER
    assert document["claims"]["source_repository"] == "malancas/attest-demo"
    assert document["claims"]["build_config_uri"] == (
        "https://github.com/malancas/attest-demo/.github/workflows/shared.yml@refs/heads/main"
    )


@skip_unless_present("github-attestations")
def test_naming_only_the_calling_repository_refuses_a_reusable_workflow_elsewhere(
    tmp_path: Path,
) -> None:
    """As gh: an entry matching the calling workflow must name the reusable signer."""
    artifact = _copy(tmp_path, REUSABLE_ARTIFACT, REUSABLE_BUNDLE)
    with pytest.raises(SignerUntrustedError) as caught:
        _verify(artifact, _malancas(signer_workflow=None), owner="malancas", repo="attest-demo")
    assert f"signer_workflow = '{REUSABLE_SIGNER}'" in caught.value.message
    # An entry that names the signer by its SAN needs no more.
    by_san = AuthorPolicy(
        owner="malancas",
        identity_regexp=r"^https://github\.com/github/artifact-attestations-workflows/.+$",
    )
    outcome = _verify(artifact, by_san, owner="malancas", repo="attest-demo")
    assert outcome.status == "verified"  # type: ignore[attr-defined]


@skip_unless_present("github-attestations")
def test_another_repository_is_refused(tmp_path: Path) -> None:
    artifact = _copy(tmp_path, REUSABLE_ARTIFACT, REUSABLE_BUNDLE)
    other = AuthorPolicy(
        owner="malancas", identity_regexp=r"^https://github\.com/malancas/other/.+$"
    )
    with pytest.raises(SignerUntrustedError) as caught:
        _verify(artifact, other, owner="malancas", repo="other")
    assert "malancas/attest-demo" in caught.value.message


@skip_unless_present("github-attestations")
def test_the_repository_installed_from_must_be_the_signing_one(tmp_path: Path) -> None:
    """An entry trusting the owner's workflows does not vouch for a copy in another repo."""
    artifact = _copy(tmp_path, REUSABLE_ARTIFACT, REUSABLE_BUNDLE)
    author = _malancas(signer_workflow=REUSABLE_SIGNER)
    with pytest.raises(SignerUntrustedError) as caught:
        _verify(artifact, author, owner="malancas", repo="other")
    assert "not in malancas/other" in caught.value.message
    # Said explicitly, a republished copy is trusted.
    republished = _malancas(signer_workflow=REUSABLE_SIGNER, allow_republish=True)
    outcome = _verify(artifact, republished, owner="malancas", repo="other")
    assert outcome.status == "verified"  # type: ignore[attr-defined]


@skip_unless_present("github-attestations")
def test_another_signer_workflow_is_refused(tmp_path: Path) -> None:
    artifact = _copy(tmp_path, REUSABLE_ARTIFACT, REUSABLE_BUNDLE)
    author = _malancas(signer_workflow="malancas/attest-demo/.github/workflows/release.yml")
    with pytest.raises(SignerUntrustedError) as caught:
        _verify(artifact, author, owner="malancas", repo="attest-demo")
    assert REUSABLE_SIGNER in caught.value.message


@skip_unless_present("github-attestations")
def test_another_predicate_type_is_refused(tmp_path: Path) -> None:
    artifact = _copy(tmp_path, REUSABLE_ARTIFACT, REUSABLE_BUNDLE)
    author = _malancas(
        signer_workflow=REUSABLE_SIGNER, predicate_type="https://spdx.dev/Document/v2.3"
    )
    with pytest.raises(SignerUntrustedError, match="predicate type"):
        _verify(artifact, author, owner="malancas", repo="attest-demo")


@skip_unless_present("github-attestations")
def test_a_flipped_byte_of_the_artifact_is_refused(tmp_path: Path) -> None:
    artifact = _copy(tmp_path, REUSABLE_ARTIFACT, REUSABLE_BUNDLE)
    data = bytearray(artifact.read_bytes())
    data[100] ^= 0x01
    artifact.write_bytes(bytes(data))
    with pytest.raises(SignatureInvalidError, match="not about"):
        _verify(artifact, _malancas(), owner="malancas", repo="attest-demo")


@skip_unless_present("github-attestations")
def test_an_attestation_about_another_file_names_the_asset(tmp_path: Path) -> None:
    # An install verifies the download, a cache blob named by its hash: the refusal names the
    # asset being installed, not the blob.
    artifact = _copy(tmp_path, REUSABLE_ARTIFACT, REUSABLE_BUNDLE)
    blob = tmp_path / "blob"
    blob.mkdir()
    stored = blob / ("ab" * 32)
    stored.write_bytes(artifact.read_bytes() + b"another file")
    bundle = artifact.with_name(f"{artifact.name}.sigstore.json")
    with pytest.raises(SignatureInvalidError) as caught:
        verify_asset_signature(
            stored,
            asset_name=artifact.name,
            material={bundle.name: bundle},
            owner="malancas",
            repo="attest-demo",
            policy=TrustPolicy(default="require", authors=(_malancas(),)),
            mode="require",
        )
    assert f", not about {artifact.name} (sha256:" in caught.value.message
    assert stored.name not in caught.value.message


@skip_unless_present("github-attestations")
def test_a_flipped_byte_of_the_envelope_is_refused(tmp_path: Path) -> None:
    artifact = _copy(tmp_path, REUSABLE_ARTIFACT, REUSABLE_BUNDLE)
    bundle = artifact.with_name(f"{artifact.name}.sigstore.json")
    text = bundle.read_text()
    marker = '"payload": "'
    start = text.index(marker) + len(marker) + 40
    flipped = "A" if text[start] != "A" else "B"
    bundle.write_text(text[:start] + flipped + text[start + 1 :])
    with pytest.raises(SignatureInvalidError):
        _verify(artifact, _malancas(), owner="malancas", repo="attest-demo")


@skip_unless_present("github-attestations")
def test_custom_issuer_is_read_from_the_certificate(tmp_path: Path) -> None:
    artifact = _copy(tmp_path, CUSTOM_ARTIFACT, CUSTOM_BUNDLE)
    author = AuthorPolicy(
        owner="too-legit",
        identity_regexp=r"^https://github\.com/too-legit/attest/\.github/workflows/integration\.yml@refs/heads/main$",
        oidc_issuer=CUSTOM_ISSUER,
    )
    outcome = _verify(artifact, author, owner="too-legit", repo="attest")
    assert outcome.issuer == CUSTOM_ISSUER  # type: ignore[attr-defined]
    with pytest.raises(SignerUntrustedError, match="hammer-time"):
        _verify(
            artifact,
            AuthorPolicy(owner="too-legit", identity_regexp=author.identity_regexp),
            owner="too-legit",
            repo="attest",
        )


@skip_unless_present("github-attestations")
def test_attestations_as_json_lines_verify(tmp_path: Path) -> None:
    """``<asset>.intoto.jsonl`` (what ``gh attestation download`` writes) beside the file."""
    artifact = _copy(
        tmp_path, REUSABLE_ARTIFACT, REUSABLE_BUNDLE, as_name=f"{REUSABLE_ARTIFACT}.intoto.jsonl"
    )
    jsonl = artifact.with_name(f"{REUSABLE_ARTIFACT}.intoto.jsonl")
    # Two lines: an attestation about another file first, then the real one.
    other = (ATTESTATIONS / CUSTOM_BUNDLE).read_text().replace("\n", "")
    jsonl.write_text(other + "\n" + jsonl.read_text().replace("\n", "") + "\n")
    outcome = _verify(
        artifact,
        _malancas(),
        owner="malancas",
        repo="attest-demo",
        material_name=jsonl.name,
    )
    assert outcome.status == "verified"  # type: ignore[attr-defined]
    assert outcome.material == f"{jsonl.name}#2"  # type: ignore[attr-defined]


@skip_unless_present("github-attestations")
def test_github_instance_bundle_is_refused_with_its_reason(tmp_path: Path) -> None:
    artifact = _copy(tmp_path, GHES_ARTIFACT, GHES_BUNDLE, as_name=f"{GHES_ARTIFACT}.intoto.jsonl")
    author = AuthorPolicy(owner="github", identity_regexp=r"^https://github\.com/.+$")
    with pytest.raises(SignatureInvalidError) as caught:
        _verify(
            artifact,
            author,
            owner="github",
            repo="provenance-demo",
            material_name=f"{GHES_ARTIFACT}.intoto.jsonl",
        )
    message = caught.value.message
    assert "\n" not in message
    assert "no transparency-log entry" in message
    assert "RFC 3161" in message


@skip_unless_present("github-attestations")
def test_json_lines_in_a_bundle_file_are_read_as_attestations(tmp_path: Path) -> None:
    """``gh attestation download`` output saved as ``<asset>.sigstore.json``."""
    artifact = _copy(tmp_path, REUSABLE_ARTIFACT, REUSABLE_BUNDLE)
    bundle = artifact.with_name(f"{artifact.name}.sigstore.json")
    other = (ATTESTATIONS / CUSTOM_BUNDLE).read_text().replace("\n", "")
    bundle.write_text(other + "\n" + bundle.read_text().replace("\n", "") + "\n")
    outcome = _verify(artifact, _malancas(), owner="malancas", repo="attest-demo")
    assert outcome.status == "verified"  # type: ignore[attr-defined]
    assert outcome.material == f"{bundle.name}#2"  # type: ignore[attr-defined]
