"""Sigstore bundles that sign the file itself (``messageSignature``), verified offline.

The direct verifier (:mod:`~nexo_pkg.trust.verifiers.direct`), or else sigstore-python, checks
the certificate chain to the trusted Fulcio roots at the log's time, the SCT, the
transparency-log inclusion proof and checkpoint, and the signature over the artifact's digest;
the owner's author entries are then applied to the certificate
(:mod:`~nexo_pkg.trust.verifiers.claims`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nexo_pkg.core.files import sha256_file
from nexo_pkg.trust.base import TrustRequest, VerifiedSignature
from nexo_pkg.trust.verifiers.claims import accept_verified
from nexo_pkg.trust.verifiers.direct import verify_directly


def verify_bundle(
    artifact: Path, raw: bytes, document: dict[str, Any], *, name: str, request: TrustRequest
) -> VerifiedSignature:
    """Verify the Sigstore bundle ``raw`` (file ``name``; ``document`` is its JSON) whose
    message signature signs ``artifact``. Raises :class:`SignatureInvalidError` for anything
    but a valid signature over it, :class:`SignerUntrustedError` for a signer no author entry
    trusts (or a signature bound to another release), ``policy_invalid`` for an unusable
    trusted root."""
    digest = bytes.fromhex(sha256_file(artifact))
    direct = verify_directly(raw, request.trusted_root, digest)
    if direct is not None and direct.payload is None:
        signer = accept_verified(direct.certificate, request, name=name, verified=None)
        return signer.verified("sigstore-bundle", name)
    from sigstore.hashes import Hashed  # noqa: PLC0415
    from sigstore_models.common.v1 import HashAlgorithm  # noqa: PLC0415

    from nexo_pkg.trust.verifiers.common import (  # noqa: PLC0415
        load_bundle,
        load_verifier,
        verify_trusted,
    )

    bundle = load_bundle(raw, document, name)
    verifier = load_verifier(request.trusted_root)
    hashed = Hashed(algorithm=HashAlgorithm.SHA2_256, digest=digest)
    _, signer = verify_trusted(
        lambda policy: verifier.verify_artifact(hashed, bundle, policy),
        bundle,
        request,
        name=name,
        failure="signature verification failed",
    )
    return signer.verified("sigstore-bundle", name)
