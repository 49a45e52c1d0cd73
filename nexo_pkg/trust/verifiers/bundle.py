"""Sigstore bundles that sign the file itself (``messageSignature``), verified offline.

sigstore-python checks the certificate chain to the trusted Fulcio roots at the log's time,
the SCT, the transparency-log inclusion proof and checkpoint, and the signature over the
artifact's digest; the checks gh adds and the owner's author entries are then applied
(:mod:`~nexo_pkg.trust.verifiers.common`, :mod:`~nexo_pkg.trust.verifiers.claims`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sigstore.hashes import Hashed
from sigstore_models.common.v1 import HashAlgorithm

from nexo_pkg.core.files import sha256_file
from nexo_pkg.trust.base import TrustRequest, VerifiedSignature
from nexo_pkg.trust.verifiers.common import verify_with_sigstore


def verify_bundle(
    artifact: Path, raw: bytes, document: dict[str, Any], *, name: str, request: TrustRequest
) -> VerifiedSignature:
    """Verify the Sigstore bundle ``raw`` (file ``name``; ``document`` is its JSON) whose
    message signature signs ``artifact``. Raises :class:`SignatureInvalidError` for anything
    but a valid signature over it, :class:`SignerUntrustedError` for a signer no author entry
    trusts (or a signature bound to another release), ``policy_invalid`` for an unusable
    trusted root."""
    hashed = Hashed(algorithm=HashAlgorithm.SHA2_256, digest=bytes.fromhex(sha256_file(artifact)))
    _, signer = verify_with_sigstore(
        lambda verifier, bundle, policy: verifier.verify_artifact(hashed, bundle, policy),
        raw,
        document,
        request,
        name=name,
        failure="signature verification failed",
    )
    return signer.verified("sigstore-bundle", name)
