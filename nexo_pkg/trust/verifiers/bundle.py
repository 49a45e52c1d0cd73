"""Sigstore bundles that sign the file itself (``messageSignature``), verified offline.

sigstore-python checks the certificate chain to the trusted Fulcio roots at the log's time,
the SCT, the transparency-log inclusion proof and checkpoint, and the signature over the
artifact's digest; :class:`~nexo_pkg.trust.verifiers.common.TrustedAuthors` applies the
owner's author entries to the certificate.
"""

from __future__ import annotations

from pathlib import Path

from sigstore.hashes import Hashed
from sigstore.models import Bundle
from sigstore.verify import Verifier

from nexo_pkg.trust.base import SignatureInvalidError, TrustRequest, VerifiedSignature
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
    artifact: Path, bundle: Bundle, *, name: str, request: TrustRequest
) -> VerifiedSignature:
    """Verify the Sigstore ``bundle`` (file ``name``) whose message signature signs ``artifact``.

    Returns the trusted signature. Raises :class:`SignatureInvalidError` for anything that is
    not a valid signature over the artifact, :class:`SignerUntrustedError` for a valid signature
    whose signer no author entry trusts (or that is bound to another release),
    ``policy_invalid`` for an unusable trusted root.
    """
    verifier = load_verifier(request.trusted_root)
    hashed = hash_artifact(artifact)
    policy = TrustedAuthors(request)
    try:
        verifier.verify_artifact(hashed, bundle, policy)
    except UntrustedSignerError:
        signer = Signer.from_certificate(bundle.signing_certificate)
        _check_cryptography(verifier, hashed, bundle, name)
        raise untrusted_signer_error(signer, request, name) from None
    except Exception as exc:  # any failure inside the verifier fails closed
        raise SignatureInvalidError(f"{name}: signature verification failed: {exc}") from exc
    if policy.accepted is None:  # defensive: verify_artifact returned without our policy
        raise SignatureInvalidError(f"{name}: the signer was never checked against the policy")
    return policy.accepted.verified("sigstore-bundle", name)


def _check_cryptography(verifier: Verifier, hashed: Hashed, bundle: Bundle, name: str) -> None:
    """Raise :class:`SignatureInvalidError` unless the bundle is cryptographically valid."""
    try:
        verifier.verify_artifact(hashed, bundle, UnsafeIdentityCheckedSeparately())
    except Exception as exc:  # any failure inside the verifier fails closed
        raise SignatureInvalidError(f"{name}: signature verification failed: {exc}") from exc
