"""Legacy cosign signature material: a cosign ``.bundle`` or a detached ``.sig`` + certificate.

Before Sigstore bundles, ``cosign sign-blob --bundle`` wrote a JSON document with the
signature (``base64Signature``), the Fulcio certificate (``cert``) and the Rekor entry with its
signed entry timestamp (``rekorBundle``), but no inclusion proof. sigstore-python only accepts
bundles with inclusion proofs, so this module verifies such documents offline itself, with
every check ``cosign verify-blob --bundle`` applies, against the trusted root's keys read with
``cryptography`` (:mod:`nexo_pkg.trust.verifiers.rootkeys`), the same root sigstore-python
reads for Sigstore bundles:

1. the signed entry timestamp (SET) is a signature by a trusted Rekor key over the
   canonicalised entry (body, integrated time, log ID, log index), and that key was valid at
   the integrated time (as gh: a retired key vouches for nothing logged after it);
2. the certificate chains to the trusted Fulcio roots at the integrated time
   (``cryptography.x509.verification``), was valid then, and its authority too;
3. its embedded SCT is signed by a trusted CT log;
4. it is a code-signing certificate;
5. the signature verifies over the artifact's SHA-256 with the certificate's key;
6. the log entry body is the hashedrekord of exactly this signature, certificate and digest;
7. the identity policy of the owner's author entries holds (else ``signer_untrusted``).

A detached ``.sig`` with ``.pem``/``.cert`` carries no log entry at all: nothing binds it to a
time or a log, so it cannot be verified offline and is refused.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed
from cryptography.x509 import (
    Certificate,
    ExtendedKeyUsage,
    ExtensionNotFound,
    KeyUsage,
    UnsupportedGeneralNameType,
    load_der_x509_certificate,
    load_pem_x509_certificate,
)
from cryptography.x509.oid import ExtendedKeyUsageOID
from cryptography.x509.verification import Criticality, ExtensionPolicy, PolicyBuilder, Store
from cryptography.x509.verification import VerificationError as X509VerificationError

from nexo_pkg.core.errors import exception_line
from nexo_pkg.core.files import sha256_file
from nexo_pkg.trust.base import (
    SignatureInvalidError,
    SignatureMaterial,
    TrustRequest,
    VerifiedSignature,
)
from nexo_pkg.trust.verifiers.claims import accept_verified
from nexo_pkg.trust.verifiers.common import load_verifier
from nexo_pkg.trust.verifiers.rootkeys import (
    KeyCheckError,
    RootKeys,
    check_authority,
    check_log_key,
    load_root_keys,
    root_source,
    verify_embedded_sct,
    verify_log_signature,
)

_RESIGN = "re-sign with Sigstore bundles (cosign sign-blob --new-bundle-format, or sigstore sign)"


class _LegacyError(Exception):
    """One failed check; becomes :class:`SignatureInvalidError` with the material's name."""


def _field(mapping: Mapping[str, Any], key: str, kind: type) -> Any:
    value = mapping.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise _LegacyError(f"`{key}` is missing or not a {kind.__name__}")
    return value


def _b64decode(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _LegacyError(f"{what} is not base64") from exc


def _load_certificate(text: str) -> Certificate:
    """``cert`` is base64 of the PEM (cosign ≥ 1.x) or the PEM itself (older releases)."""
    raw = text.encode() if text.lstrip().startswith("-----BEGIN") else _b64decode(text, "cert")
    try:
        if raw.lstrip().startswith(b"-----BEGIN"):
            return load_pem_x509_certificate(raw)
        return load_der_x509_certificate(raw)
    except ValueError as exc:
        raise _LegacyError(f"cert is not an X.509 certificate: {exc}") from exc


def _verify_set(root: RootKeys, payload: Mapping[str, Any], set_signature: bytes) -> int:
    """Check the signed entry timestamp (over the canonicalised entry: RFC 8785 sorts its
    keys); return the integrated time it vouches for."""
    entry = {
        "body": _field(payload, "body", str),
        "integratedTime": _field(payload, "integratedTime", int),
        "logIndex": _field(payload, "logIndex", int),
        "logID": _field(payload, "logID", str),
    }
    try:
        key_id = bytes.fromhex(entry["logID"])
    except ValueError as exc:
        raise _LegacyError("logID is not hex") from exc
    try:
        verify_log_signature(root.rekor, key_id, set_signature, rfc8785.dumps(entry), at=None)
    except KeyCheckError as exc:
        raise _LegacyError(f"the signed entry timestamp is not from a trusted log: {exc}") from exc
    return int(entry["integratedTime"])


def _verify_chain(root: RootKeys, certificate: Certificate, at: datetime) -> list[Certificate]:
    """Chain to the trusted Fulcio roots at ``at`` (as sigstore-python's verifier does)."""
    # Fulcio certificates use the code-signing EKU, not client auth: allow any EKU here and
    # check code signing separately, keeping every other WebPKI default.
    ca_policy, ee_policy = (
        defaults.may_be_present(ExtendedKeyUsage, Criticality.NON_CRITICAL, None)
        for defaults in (ExtensionPolicy.webpki_defaults_ca(), ExtensionPolicy.webpki_defaults_ee())
    )
    verifier = (
        PolicyBuilder()
        .store(Store(list(root.fulcio)))
        .time(at)
        .extension_policies(ca_policy=ca_policy, ee_policy=ee_policy)
        .build_client_verifier()
    )
    try:
        return list(verifier.verify(certificate, []).chain[1:])
    except (X509VerificationError, UnsupportedGeneralNameType) as exc:
        raise _LegacyError(
            f"the certificate does not chain to a trusted root: {exception_line(exc)}"
        ) from exc


def _check_usage(certificate: Certificate) -> None:
    """A Sigstore signing certificate: digital signature key usage and the code-signing EKU."""
    try:
        usage = certificate.extensions.get_extension_for_class(KeyUsage).value
        extended = certificate.extensions.get_extension_for_class(ExtendedKeyUsage).value
    except ExtensionNotFound as exc:
        raise _LegacyError("the certificate is not a Sigstore signing certificate") from exc
    if not usage.digital_signature or ExtendedKeyUsageOID.CODE_SIGNING not in extended:
        raise _LegacyError("the certificate is not a code-signing certificate")


def _verify_document(artifact: Path, document: Mapping[str, Any], root: RootKeys) -> Certificate:
    signature = _b64decode(_field(document, "base64Signature", str), "base64Signature")
    certificate = _load_certificate(_field(document, "cert", str))
    rekor_bundle = _field(document, "rekorBundle", dict)
    payload = _field(rekor_bundle, "Payload", dict)
    set_signature = _b64decode(_field(rekor_bundle, "SignedEntryTimestamp", str), "SET")

    # 1. The log vouches for the entry and its time.
    integrated = datetime.fromtimestamp(_verify_set(root, payload, set_signature), tz=UTC)
    try:
        check_log_key(root, bytes.fromhex(payload["logID"]), integrated)
        # 2. Chain and validity at that time, the authority's too.
        check_authority(root, certificate, integrated)
    except KeyCheckError as exc:
        raise _LegacyError(str(exc)) from exc
    chain = _verify_chain(root, certificate, integrated)
    if not (certificate.not_valid_before_utc <= integrated <= certificate.not_valid_after_utc):
        raise _LegacyError("the certificate was not valid at the log's integrated time")
    # 3. SCT.
    if not chain:
        raise _LegacyError("the certificate chain has no issuer")
    try:
        verify_embedded_sct(certificate, chain[0], root)
    except KeyCheckError as exc:
        raise _LegacyError(f"the certificate's SCT does not verify: {exc}") from exc
    # 4. Code signing.
    _check_usage(certificate)
    # 5. The signature over the artifact.
    digest = bytes.fromhex(sha256_file(artifact))
    public_key = certificate.public_key()
    if not isinstance(public_key, ec.EllipticCurvePublicKey):
        raise _LegacyError("the certificate's key is not an ECDSA key")
    try:
        public_key.verify(signature, digest, ec.ECDSA(Prehashed(hashes.SHA256())))
    except InvalidSignature as exc:
        raise _LegacyError("the signature does not verify over the file") from exc
    # 6. The log entry is exactly this signature, certificate and digest.
    body = _b64decode(_field(payload, "body", str), "body")
    _check_log_body(body, certificate, signature, digest)
    return certificate


def _check_log_body(body: bytes, certificate: Certificate, signature: bytes, digest: bytes) -> None:
    """The hashedrekord v0.0.1 entry must record exactly this signature, certificate and
    digest (what ``cosign verify-blob`` compares)."""
    try:
        entry = json.loads(body)
        spec = entry["spec"]
        recorded_hash = spec["data"]["hash"]
        recorded_signature = base64.b64decode(spec["signature"]["content"], validate=True)
        recorded_pem = base64.b64decode(spec["signature"]["publicKey"]["content"], validate=True)
        kind = (entry["kind"], entry["apiVersion"])
    except (ValueError, KeyError, TypeError, RecursionError, binascii.Error) as exc:
        raise _LegacyError("the log entry is not a hashedrekord entry") from exc
    if kind != ("hashedrekord", "0.0.1"):
        raise _LegacyError(f"the log entry is a {kind[0]} {kind[1]} entry, not hashedrekord 0.0.1")
    try:
        recorded_certificate = load_pem_x509_certificate(recorded_pem)
    except ValueError as exc:
        raise _LegacyError("the log entry's certificate is unreadable") from exc
    if (
        recorded_hash != {"algorithm": "sha256", "value": digest.hex()}
        or recorded_signature != signature
        or recorded_certificate.public_bytes(serialization.Encoding.DER)
        != certificate.public_bytes(serialization.Encoding.DER)
    ):
        raise _LegacyError("the log entry does not match the signature, certificate and file")


def verify_legacy_bundle(
    artifact: Path, document: Mapping[str, Any], *, name: str, request: TrustRequest
) -> VerifiedSignature:
    """Verify a legacy cosign bundle over ``artifact``; return the trusted signature. Raises
    :class:`SignatureInvalidError` when any cryptographic check fails and
    ``signer_untrusted`` when they pass but no author entry trusts the certificate."""
    source = root_source(request.trusted_root)
    # The root sigstore-python's models accept, as for every bundle (else policy_invalid).
    load_verifier(source)
    root = load_root_keys(source)
    try:
        certificate = _verify_document(artifact, document, root)
    except (_LegacyError, ValueError, TypeError, OverflowError, OSError) as exc:
        raise SignatureInvalidError(f"{name}: legacy cosign bundle does not verify: {exc}") from exc
    signer = accept_verified(certificate, request, name=name, verified=None)
    return signer.verified("cosign-legacy", name)


def verify_detached(material: SignatureMaterial) -> VerifiedSignature:
    """Refuse a detached ``.sig`` + ``.pem``/``.cert``: it has no log entry to check offline."""
    if material.signature is None or material.certificate is None:
        raise SignatureInvalidError(
            f"{material.name}: incomplete cosign signature (a .sig needs its .pem or .cert, "
            f"and a Rekor bundle); {_RESIGN}"
        )
    raise SignatureInvalidError(
        f"{material.name}: a detached signature without a Rekor bundle (<asset>.bundle) cannot "
        f"be verified offline; {_RESIGN}"
    )
