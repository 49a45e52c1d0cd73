"""Sigstore bundles that sign the file itself (``messageSignature``), verified offline.

sigstore-python checks the certificate chain to the trusted Fulcio roots at the log's time,
the SCT, the transparency-log inclusion proof and checkpoint, and the signature over the
artifact's digest; :class:`~nexo_pkg.trust.verifiers.common.TrustedAuthors` applies the
owner's author entries to the certificate.
"""

from __future__ import annotations

from pathlib import Path

from sigstore.models import Bundle

from nexo_pkg.trust.base import TrustRequest, VerifiedSignature
from nexo_pkg.trust.verifiers.common import hash_artifact, load_verifier, verify_trusted


def verify_bundle(
    artifact: Path, bundle: Bundle, *, name: str, request: TrustRequest
) -> VerifiedSignature:
    """Verify the Sigstore ``bundle`` (file ``name``) whose message signature signs ``artifact``.
    Raises :class:`SignatureInvalidError` for anything but a valid signature over it,
    :class:`SignerUntrustedError` for a signer no author entry trusts (or a signature bound to
    another release), ``policy_invalid`` for an unusable trusted root."""
    verifier = load_verifier(request.trusted_root)
    hashed = hash_artifact(artifact)
    _, signer = verify_trusted(
        lambda policy: verifier.verify_artifact(hashed, bundle, policy),
        bundle,
        request,
        name=name,
        failure="signature verification failed",
    )
    return signer.verified("sigstore-bundle", name)
