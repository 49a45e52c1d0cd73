"""Sigstore bundles that sign the file itself (``messageSignature``), verified offline.

sigstore-python checks the certificate chain to the trusted Fulcio roots at the log's time,
the SCT, the transparency-log inclusion proof and checkpoint, and the signature over the
artifact's digest; :class:`~nexo_pkg.trust.verifiers.common.TrustedAuthors` applies the
owner's author entries to the certificate.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sigstore.errors import VerificationError
from sigstore.hashes import Hashed
from sigstore.models import Bundle
from sigstore.verify import Verifier

from nexo_pkg.trust.base import SignatureInvalidError
from nexo_pkg.trust.policy import AuthorPolicy
from nexo_pkg.trust.verifiers.common import (
    Signer,
    TrustedAuthors,
    UnsafeIdentityCheckedSeparately,
    UntrustedSignerError,
    hash_artifact,
    load_verifier,
    untrusted_signer_error,
)


def verify_bundle(
    artifact: Path,
    bundle_bytes: bytes,
    *,
    name: str,
    authors: Sequence[AuthorPolicy],
    trusted_root: Path | None,
    owner: str | None,
) -> Signer:
    """Verify the Sigstore bundle ``bundle_bytes`` (file ``name``) over ``artifact``.

    Returns the trusted signer. Raises :class:`SignatureInvalidError` for anything that is not a
    valid signature over the artifact, :class:`SignerUntrustedError` for a valid signature whose
    signer no author entry trusts, ``policy_invalid`` for an unusable trusted root.
    """
    try:
        bundle = Bundle.from_json(bundle_bytes)
    except Exception as exc:  # whatever the parser trips on, the bundle is unusable
        raise SignatureInvalidError(f"{name} is not a valid Sigstore bundle: {exc}") from exc
    if bundle._inner.message_signature is None:
        raise SignatureInvalidError(
            f"{name} holds a DSSE attestation, not a signature over the file; sign the "
            "release asset itself (cosign sign-blob / sigstore sign)"
        )
    verifier = load_verifier(trusted_root)
    hashed = hash_artifact(artifact)
    policy = TrustedAuthors(authors)
    try:
        verifier.verify_artifact(hashed, bundle, policy)
    except UntrustedSignerError:
        signer = Signer.from_certificate(bundle.signing_certificate)
        _check_cryptography(verifier, hashed, bundle, name)
        raise untrusted_signer_error(signer, authors, owner, name) from None
    except VerificationError as exc:
        raise SignatureInvalidError(f"{name}: signature verification failed: {exc}") from exc
    except Exception as exc:  # any failure inside the verifier fails closed
        raise SignatureInvalidError(f"{name}: signature verification failed: {exc}") from exc
    if policy.accepted is None:  # defensive: verify_artifact returned without our policy
        raise SignatureInvalidError(f"{name}: the signer was never checked against the policy")
    return policy.accepted


def _check_cryptography(verifier: Verifier, hashed: Hashed, bundle: Bundle, name: str) -> None:
    """Raise :class:`SignatureInvalidError` unless the bundle is cryptographically valid."""
    try:
        verifier.verify_artifact(hashed, bundle, UnsafeIdentityCheckedSeparately())
    except Exception as exc:  # any failure inside the verifier fails closed
        raise SignatureInvalidError(f"{name}: signature verification failed: {exc}") from exc
