"""The keys of a Sigstore trusted root, read from its JSON with ``cryptography`` alone.

Legacy cosign material is verified here rather than by sigstore-python (which only takes
bundles with inclusion proofs), so the checks it needs — a transparency-log signature, an
SCT — are written against the trusted root's published keys directly, with no private
sigstore-python API in between.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib.util import find_spec
from pathlib import Path
from typing import Any
from urllib.parse import quote

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.x509 import (
    Certificate,
    ExtensionNotFound,
    PrecertificateSignedCertificateTimestamps,
    load_der_x509_certificate,
)
from cryptography.x509.certificate_transparency import LogEntryType

from nexo_pkg.core.errors import ConfigError
from nexo_pkg.trust.base import read_trusted_root

PUBLIC_GOOD_TUF_URL = "https://tuf-repo-cdn.sigstore.dev"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

PublicKey = ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey | rsa.RSAPublicKey


class KeyCheckError(Exception):
    """A log or CT signature that no trusted key verifies."""


@dataclass(frozen=True)
class LogKey:
    """One transparency or CT log key, with the time range it was valid for."""

    key_id: bytes
    key: PublicKey
    start: datetime | None
    end: datetime | None

    def valid_at(self, moment: datetime | None) -> bool:
        if moment is None:
            return True
        return (self.start is None or self.start <= moment) and (
            self.end is None or moment <= self.end
        )


@dataclass(frozen=True)
class RootKeys:
    """The Rekor keys, CT log keys and Fulcio certificates of one trusted root."""

    rekor: tuple[LogKey, ...]
    ct: tuple[LogKey, ...]
    fulcio: tuple[Certificate, ...]


def root_time(value: Any) -> datetime | None:
    """A trusted root's RFC 3339 time (``None`` when absent)."""
    if not isinstance(value, str):
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)


def _log_keys(entries: Iterable[Any]) -> tuple[LogKey, ...]:
    keys: list[LogKey] = []
    for entry in entries:
        public = entry["publicKey"]
        key = serialization.load_der_public_key(base64.b64decode(public["rawBytes"]))
        if not isinstance(key, PublicKey):
            continue  # a key type no log uses: it can verify nothing
        valid = public.get("validFor") or {}
        keys.append(
            LogKey(
                key_id=base64.b64decode(entry["logId"]["keyId"]),
                key=key,
                start=root_time(valid.get("start")),
                end=root_time(valid.get("end")),
            )
        )
    return tuple(keys)


def parse_root_keys(document: Mapping[str, Any]) -> RootKeys:
    """The keys of a ``trusted_root.json`` document. Raises ``ValueError`` when malformed."""
    try:
        fulcio = tuple(
            load_der_x509_certificate(base64.b64decode(certificate["rawBytes"]))
            for authority in document.get("certificateAuthorities", [])
            for certificate in authority["certChain"]["certificates"]
        )
        return RootKeys(
            rekor=_log_keys(document.get("tlogs", [])),
            ct=_log_keys(document.get("ctlogs", [])),
            fulcio=fulcio,
        )
    except (KeyError, TypeError, AttributeError, binascii.Error) as exc:
        raise ValueError(f"malformed trusted root: {exc!r}") from exc


def public_good_root_file() -> Path:
    """The public-good instance's ``trusted_root.json`` embedded in sigstore-python (found,
    not imported: importing sigstore-python costs most of a second)."""
    spec = find_spec("sigstore")
    if spec is None or not spec.submodule_search_locations:
        raise OSError("sigstore-python is not installed")
    package = Path(next(iter(spec.submodule_search_locations)))
    return package / "_store" / quote(PUBLIC_GOOD_TUF_URL, safe="") / "trusted_root.json"


# Real trusted roots are tens of kilobytes; a planted multi-gigabyte file is not read whole.
def load_root_keys(trusted_root: Path | None) -> RootKeys:
    """The keys of the private instance's ``trusted_root`` or of the public-good instance
    shipped with sigstore-python. An unusable file is ``policy_invalid``."""
    try:
        if trusted_root is None:
            return parse_root_keys(json.loads(public_good_root_file().read_bytes()))
        return parse_root_keys(json.loads(read_trusted_root(trusted_root)))
    except (OSError, ValueError, RecursionError) as exc:
        raise ConfigError(
            f"trusted_root {trusted_root or 'of the public-good instance'} is not a usable "
            f"Sigstore trusted root: {exc}",
            kind="policy_invalid",
        ) from exc


def verify_with(key: PublicKey, signature: bytes, data: bytes) -> bool:
    """Check ``signature`` over ``data`` (SHA-256 for ECDSA and RSA) with ``key``."""
    try:
        if isinstance(key, ec.EllipticCurvePublicKey):
            key.verify(signature, data, ec.ECDSA(hashes.SHA256()))
        elif isinstance(key, ed25519.Ed25519PublicKey):
            key.verify(signature, data)
        else:
            key.verify(signature, data, padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        return False
    return True


def verify_log_signature(
    keys: Sequence[LogKey], key_id: bytes, signature: bytes, data: bytes, *, at: datetime | None
) -> None:
    """Raise :class:`KeyCheckError` unless the key ``key_id`` signed ``data``."""
    candidates = [key for key in keys if key.key_id == key_id and key.valid_at(at)]
    if not candidates:
        raise KeyCheckError(f"no trusted log key has ID {key_id.hex()}")
    if not any(verify_with(key.key, signature, data) for key in candidates):
        raise KeyCheckError("the signature does not verify with the trusted log key")


def _spki_sha256(certificate: Certificate) -> bytes:
    spki = certificate.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return hashlib.sha256(spki).digest()


def embedded_scts(certificate: Certificate) -> PrecertificateSignedCertificateTimestamps:
    """The certificate's embedded SCTs. Raises :class:`KeyCheckError` when it has none."""
    try:
        return certificate.extensions.get_extension_for_class(
            PrecertificateSignedCertificateTimestamps
        ).value
    except ExtensionNotFound as exc:
        raise KeyCheckError("the certificate has no embedded SCT") from exc


def verify_embedded_sct(certificate: Certificate, issuer: Certificate, keys: RootKeys) -> None:
    """Verify the certificate's embedded SCT (RFC 6962 §3.2, precertificate entry) with a
    trusted CT log key. Raises :class:`KeyCheckError`."""
    failures: list[str] = []
    for sct in embedded_scts(certificate):
        if sct.entry_type != LogEntryType.PRE_CERTIFICATE:
            failures.append("not a precertificate SCT")
            continue
        if not isinstance(sct.signature_hash_algorithm, hashes.SHA256):
            failures.append("SCT hash is not SHA-256")
            continue
        moment = sct.timestamp.replace(tzinfo=UTC)
        milliseconds = (moment - _EPOCH) // timedelta(milliseconds=1)
        tbs = certificate.tbs_precertificate_bytes
        signed = (
            struct.pack("!BBQH", 0, 0, milliseconds, 1)
            + _spki_sha256(issuer)
            + len(tbs).to_bytes(3, "big")
            + tbs
            + struct.pack("!H", len(sct.extension_bytes))
            + sct.extension_bytes
        )
        try:
            verify_log_signature(keys.ct, sct.log_id, sct.signature, signed, at=moment)
            return
        except KeyCheckError as exc:
            failures.append(str(exc))
    raise KeyCheckError("; ".join(failures) or "no SCT")
