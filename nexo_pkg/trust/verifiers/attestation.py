"""GitHub artifact attestations: a Sigstore bundle whose DSSE envelope holds an in-toto
statement about the file (``actions/attest-build-provenance``, ``gh attestation verify``).

sigstore-python verifies the bundle (certificate chain, SCT, transparency log, the envelope's
signature) and gh's further checks apply (:mod:`~nexo_pkg.trust.verifiers.common`); then the
statement must be an in-toto statement whose subject digest is the file's SHA-256, and the
certificate's GitHub claims must satisfy an author entry, including the entry's predicate type
(SLSA provenance v1 by default).
"""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path
from typing import Any

from nexo_pkg.core.files import sha256_file
from nexo_pkg.trust.base import (
    SignatureInvalidError,
    TrustRequest,
    VerifiedSignature,
    proto_field,
)
from nexo_pkg.trust.verifiers.common import verify_with_sigstore

IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"
_STATEMENT_TYPES = ("https://in-toto.io/Statement/v1", "https://in-toto.io/Statement/v0.1")


def _statement(document: dict[str, Any], name: str) -> dict[str, Any]:
    """The in-toto statement of the bundle document's envelope, read before verification only
    to learn its predicate type; the verdict rests on the bytes the verifier verifies."""
    envelope = proto_field(document, "dsseEnvelope")
    if not isinstance(envelope, dict):
        raise SignatureInvalidError(f"{name} holds no DSSE envelope")
    try:
        payload = base64.b64decode(envelope.get("payload") or "", validate=True)
    except (ValueError, TypeError, binascii.Error) as exc:
        raise SignatureInvalidError(f"{name}: the DSSE payload is not base64") from exc
    return _parse_statement(str(envelope.get("payloadType")), payload, name)


def _parse_statement(payload_type: str, payload: bytes, name: str) -> dict[str, Any]:
    if payload_type != IN_TOTO_PAYLOAD_TYPE:
        raise SignatureInvalidError(
            f"{name}: the attestation's payload is {payload_type!r}, not an in-toto statement"
        )
    try:
        statement = json.loads(payload, object_pairs_hook=_without_repeated_keys)
    except _RepeatedKeyError as exc:
        # Which value counts would be the reader's choice: gh (protojson) refuses the statement.
        raise SignatureInvalidError(
            f"{name}: the in-toto statement repeats the key {exc.key!r}, which gh refuses too"
        ) from None
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise SignatureInvalidError(f"{name}: the in-toto statement is not JSON") from exc
    if not isinstance(statement, dict) or statement.get("_type") not in _STATEMENT_TYPES:
        raise SignatureInvalidError(f"{name}: the attestation is not an in-toto statement")
    if not isinstance(statement.get("predicateType"), str):
        raise SignatureInvalidError(f"{name}: the in-toto statement has no predicate type")
    return statement


class _RepeatedKeyError(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _without_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise _RepeatedKeyError(key)
        document[key] = value
    return document


def _subject_digests(statement: dict[str, Any]) -> list[str]:
    subjects = statement.get("subject")
    if not isinstance(subjects, list):
        return []
    found: list[str] = []
    for subject in subjects:
        digest = subject.get("digest") if isinstance(subject, dict) else None
        value = digest.get("sha256") if isinstance(digest, dict) else None
        if isinstance(value, str):
            found.append(value.lower())
    return found


def verify_attestation(
    artifact: Path, raw: bytes, document: dict[str, Any], *, name: str, request: TrustRequest
) -> VerifiedSignature:
    """Verify the attestation bundle ``raw`` (from ``name``; ``document`` is its JSON) about
    ``artifact``. Raises :class:`SignatureInvalidError` when it does not verify, is not an
    in-toto statement, or names other files; :class:`SignerUntrustedError` when no author
    entry trusts its certificate (claims, predicate type) or it is bound to another release.
    """
    digest = sha256_file(artifact)
    predicate_type = _statement(document, name)["predicateType"]

    def about_artifact(verified: tuple[str, bytes]) -> None:
        _require_subject(artifact, digest, _parse_statement(*verified, name), name)

    _, signer = verify_with_sigstore(
        lambda verifier, bundle, policy: verifier.verify_dsse(bundle, policy),
        raw,
        document,
        request,
        name=name,
        failure="attestation does not verify",
        predicate_type=predicate_type,
        check=about_artifact,
    )
    return signer.verified("github-attestation", name)


def _require_subject(artifact: Path, digest: str, statement: dict[str, Any], name: str) -> None:
    subjects = _subject_digests(statement)
    if digest not in subjects:
        shown = ", ".join(f"sha256:{s}" for s in subjects[:3]) or "none"
        raise SignatureInvalidError(
            f"{name}: the attestation is about {shown}, not about {artifact.name} (sha256:{digest})"
        )
