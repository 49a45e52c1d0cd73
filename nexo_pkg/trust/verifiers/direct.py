"""Sigstore bundles verified directly with ``cryptography``, before sigstore-python is imported.

Importing sigstore-python's verifier costs most of a second, several times what the checks
themselves cost. The bundles users meet are of one shape: Sigstore's public-good releases and
GitHub's artifact attestations carry one Rekor v1 entry (``hashedrekord`` or ``dsse`` 0.0.1)
with an inclusion proof, its signed checkpoint and an inclusion promise, a Fulcio certificate
with one embedded SCT, and no RFC 3161 timestamp. For that shape this module applies every
check of sigstore-python's ``Verifier.verify_artifact`` / ``verify_dsse`` (docs/trust.md lists
them), against the very trust root sigstore-python would load, and is stricter wherever the
two could differ (unknown bundle fields, non-canonical base64, a log key named by another ID).

It answers only "verified" or "not vouched for". Anything outside that shape, any failed
check and any doubt returns ``None``, and sigstore-python verifies the bundle as before: the
verdict and the reason of every refusal stay sigstore-python's. So this module can make
verification faster but never more permissive; tests/trust/test_direct_verifier.py checks
that every bundle it accepts (the fixtures and many mutations of them) sigstore-python accepts
with the same certificate.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import rfc8785
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed
from cryptography.x509 import (
    BasicConstraints,
    Certificate,
    ExtendedKeyUsage,
    ExtensionNotFound,
    KeyUsage,
    UnsupportedGeneralNameType,
    Version,
    load_der_x509_certificate,
)
from cryptography.x509.oid import ExtendedKeyUsageOID
from cryptography.x509.verification import Criticality, ExtensionPolicy, PolicyBuilder, Store
from cryptography.x509.verification import VerificationError as X509VerificationError

from nexo_pkg.trust.base import read_trusted_root
from nexo_pkg.trust.verifiers.rootkeys import (
    PUBLIC_GOOD_TUF_URL,
    RootKeys,
    embedded_scts,
    parse_root_keys,
    public_good_root_file,
    root_time,
    verify_embedded_sct,
    verify_log_signature,
)

_logger = logging.getLogger(__name__)

BUNDLE_TYPES = {
    "application/vnd.dev.sigstore.bundle+json;version=0.1": False,
    "application/vnd.dev.sigstore.bundle+json;version=0.2": False,
    "application/vnd.dev.sigstore.bundle+json;version=0.3": True,
    "application/vnd.dev.sigstore.bundle.v0.3+json": True,
}  # media type -> whether the signing certificate stands alone (v0.3) or heads a chain
TRUSTED_ROOT_TYPE = "application/vnd.dev.sigstore.trustedroot+json;version=0.1"
_CHECKPOINT_SIGNATURE = re.compile("\u2014 (\\S+) (\\S+)\n")


class CheckError(Exception):
    """One check that failed (or a shape this module does not vouch for)."""


@dataclass(frozen=True)
class Verified:
    """A bundle that passed every check: its signing certificate and, for a DSSE envelope,
    the payload type and payload the signature covers."""

    certificate: Certificate
    payload: tuple[str, bytes] | None


def verify_directly(raw: bytes, trusted_root: Path | None, digest: bytes) -> Verified | None:
    """Verify the bundle ``raw`` over the file whose SHA-256 is ``digest`` (for a DSSE
    envelope the statement's subject is the caller's to check); ``None`` when it is not
    vouched for here, for sigstore-python to decide."""
    try:
        root = _load_root(trusted_root)
        return None if root is None else _verify(_strict_json(raw), root, digest)
    except Exception as exc:  # noqa: BLE001 - any failure or doubt: sigstore-python decides
        _logger.debug("left to sigstore-python: %s", exc)
        return None


@dataclass(frozen=True)
class _Root:
    keys: RootKeys
    has_timestamp_authorities: bool


def _sigstore_cached_root() -> Path | None:
    """The cached trusted root sigstore-python's offline public-good path reads, where the
    platform's cache directory is known (``None`` elsewhere)."""
    if not sys.platform.startswith("linux"):
        return None
    base = os.environ.get("XDG_CACHE_HOME", "")
    cache = Path(base) if base.strip() else Path("~/.cache").expanduser()
    repository = quote(PUBLIC_GOOD_TUF_URL, safe="")
    return cache / "sigstore-python" / "tuf" / repository / "trusted_root.json"


def _load_root(trusted_root: Path | None) -> _Root | None:
    """The trust root sigstore-python would verify with: the private ``trusted_root``, or the
    embedded public-good one, which sigstore-python's offline path copies into its cache and
    reads from there. A cached root that differs (refreshed, or edited) is left to it."""
    if trusted_root is not None:
        raw = read_trusted_root(trusted_root)
    else:
        raw = public_good_root_file().read_bytes()
        cached = _sigstore_cached_root()
        if cached is None or (cached.exists() and cached.read_bytes() != raw):
            return None
    document = json.loads(raw)
    if not isinstance(document, dict) or document.get("mediaType") != TRUSTED_ROOT_TYPE:
        return None
    now = datetime.now(UTC)
    # Like sigstore-python's keyrings and Fulcio pool: nothing whose validity starts later.
    authorities = [
        authority
        for authority in document.get("certificateAuthorities", [])
        if _started(authority.get("validFor"), now)
    ]
    # Log keys only of the two kinds whose hash these checks assume (a key declared for
    # another hash is sigstore-python's to use).
    logs = {
        name: [
            log
            for log in document.get(name, [])
            if _plain_key(log["publicKey"]) and _started(log["publicKey"].get("validFor"), now)
        ]
        for name in ("tlogs", "ctlogs")
    }
    keys = parse_root_keys({**document, **logs, "certificateAuthorities": authorities})
    return _Root(keys, has_timestamp_authorities=bool(document.get("timestampAuthorities")))


def _plain_key(public_key: Mapping[str, Any]) -> bool:
    """An ECDSA P-256 key for SHA-256 or an Ed25519 key, declared and in fact."""
    details = public_key.get("keyDetails")
    key = serialization.load_der_public_key(base64.b64decode(public_key["rawBytes"]))
    if details == "PKIX_ECDSA_P256_SHA_256":
        return isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, ec.SECP256R1)
    return details == "PKIX_ED25519" and isinstance(key, ed25519.Ed25519PublicKey)


def _started(valid_for: Any, now: datetime) -> bool:
    """Whether a validity period (``None``: always valid) has started; one without a start
    is malformed (sigstore-python's parser refuses it)."""
    if not valid_for:
        return True
    start = root_time(valid_for.get("start"))
    if start is None:
        raise CheckError("a validity period without a start")
    return start <= now


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise CheckError("a key given twice")
    return found


def _no_constant(name: str) -> Any:
    raise CheckError(f"{name} is not JSON")


def _strict_json(raw: bytes | str) -> Any:
    """JSON read one way only: a key given twice (which parsers resolve differently) or a
    NaN is not vouched for."""
    return json.loads(raw, object_pairs_hook=_unique, parse_constant=_no_constant)


def _fields(value: Any, allowed: set[str], required: set[str] | None = None) -> dict[str, Any]:
    """``value`` as an object with only ``allowed`` keys and every ``required`` one."""
    if not isinstance(value, dict) or not set(value) <= allowed:
        raise CheckError(f"not an object of the expected fields: {value!r:.80}")
    if not (required if required is not None else allowed) <= set(value):
        raise CheckError("missing fields")
    return value


def _b64(value: Any) -> bytes:
    if not isinstance(value, str):
        raise CheckError("not base64 text")
    return base64.b64decode(value, validate=True)


def _uint(value: Any) -> int:
    """A protobuf JSON 64-bit unsigned integer, which the bundle schema writes as a string."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    raise CheckError(f"not an unsigned integer string: {value!r:.40}")


def _verify(document: Mapping[str, Any], root: _Root, digest: bytes) -> Verified:
    top = _fields(
        document,
        {"mediaType", "verificationMaterial", "messageSignature", "dsseEnvelope"},
        {"mediaType", "verificationMaterial"},
    )
    standalone = BUNDLE_TYPES.get(top["mediaType"])
    if standalone is None or ("messageSignature" in top) == ("dsseEnvelope" in top):
        raise CheckError("not a bundle of a known type with one kind of content")
    material = _fields(
        top["verificationMaterial"],
        {"certificate", "x509CertificateChain", "tlogEntries", "timestampVerificationData"},
        {"tlogEntries", "certificate" if standalone else "x509CertificateChain"},
    )
    if standalone:
        if "x509CertificateChain" in material:
            raise CheckError("a certificate chain in a v0.3 bundle")
        raw_certificate = _fields(material["certificate"], {"rawBytes"})["rawBytes"]
    else:
        if "certificate" in material:
            raise CheckError("a lone certificate in a pre-v0.3 bundle")
        # Certificates after the leaf are parsed and classified by sigstore-python (never
        # trusted: the trust root is); a chain of more than the leaf is left to it.
        chain = _fields(material["x509CertificateChain"], {"certificates"})["certificates"]
        if not isinstance(chain, list) or len(chain) != 1:
            raise CheckError("not a chain of the signing certificate alone")
        raw_certificate = _fields(chain[0], {"rawBytes"})["rawBytes"]
    if "timestampVerificationData" in material:
        timestamps = _fields(material["timestampVerificationData"], {"rfc3161Timestamps"}, set())
        if timestamps.get("rfc3161Timestamps", []) != [] or not root.has_timestamp_authorities:
            raise CheckError("signed timestamps are sigstore-python's to verify")
    entries = material["tlogEntries"]
    if not isinstance(entries, list) or len(entries) != 1:
        raise CheckError("not exactly one log entry")
    entry = _Entry.read(entries[0])
    certificate = load_der_x509_certificate(_b64(raw_certificate))
    _check_leaf(certificate)

    # The time the log vouches for (its inclusion promise is verified below).
    at = datetime.fromtimestamp(entry.integrated_time, tz=UTC)
    chain = verify_chain(root.keys, certificate, at)
    _check_sct(certificate, chain, root.keys)
    check_usage(certificate)
    entry.verify(root.keys)
    if not (certificate.not_valid_before_utc <= at <= certificate.not_valid_after_utc):
        raise CheckError("the certificate was not valid at the log's integrated time")

    key = certificate.public_key()
    if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve, ec.SECP256R1):
        raise CheckError("not an ECDSA P-256 signing key")
    pem = base64.b64encode(certificate.public_bytes(serialization.Encoding.PEM)).decode()
    body = _strict_json(entry.body)
    if "messageSignature" in top:
        if entry.kind != "hashedrekord":
            raise CheckError("a message signature logged as another kind")
        message = _fields(top["messageSignature"], {"messageDigest", "signature"}, {"signature"})
        signature = _b64(message["signature"])
        if "messageDigest" in message:
            recorded = _fields(message["messageDigest"], {"algorithm", "digest"})
            if recorded["algorithm"] != "SHA2_256" or _b64(recorded["digest"]) != digest:
                raise CheckError("the bundle's message digest is not the file's")
        key.verify(signature, digest, ec.ECDSA(Prehashed(hashes.SHA256())))
        expected = {
            "apiVersion": "0.0.1",
            "kind": "hashedrekord",
            "spec": {
                "data": {"hash": {"algorithm": "sha256", "value": digest.hex()}},
                "signature": {
                    "content": base64.b64encode(signature).decode(),
                    "publicKey": {"content": pem},
                },
            },
        }
        if body != expected:
            raise CheckError("the log entry is not this signature, certificate and digest")
        return Verified(certificate, None)
    if entry.kind != "dsse":
        raise CheckError("an envelope logged as another kind")
    envelope = _fields(top["dsseEnvelope"], {"payload", "payloadType", "signatures"})
    payload_type, payload = envelope["payloadType"], _b64(envelope["payload"])
    signatures = envelope["signatures"]
    if not (
        isinstance(payload_type, str)
        and payload_type.isascii()  # sigstore-python counts its length in characters
        and isinstance(signatures, list)
        and len(signatures) == 1
    ):
        raise CheckError("not an envelope with one signature and an ASCII payload type")
    signed_by = _fields(signatures[0], {"sig", "keyid"}, {"sig"})
    if not isinstance(signed_by.get("keyid", ""), str):
        raise CheckError("a key ID that is not text")
    signature = _b64(signed_by["sig"])
    if not signature:
        raise CheckError("an empty envelope signature")
    type_bytes = payload_type.encode()
    pae = b"DSSEv1 %d %b %d %b" % (len(type_bytes), type_bytes, len(payload), payload)
    key.verify(signature, pae, ec.ECDSA(hashes.SHA256()))
    spec = _fields(body, {"apiVersion", "kind", "spec"})["spec"]
    # Rekor's dsse 0.0.1 schema (the second form, which Rekor logs) requires the envelope's
    # hash; it cannot be recomputed (the envelope JSON is not canonical), only its form read.
    logged = _fields(spec, {"payloadHash", "signatures", "envelopeHash"})
    envelope_hash = _fields(logged["envelopeHash"], {"algorithm", "value"})
    payload_hash = {"algorithm": "sha256", "value": hashlib.sha256(payload).hexdigest()}
    signed = [{"signature": base64.b64encode(signature).decode(), "verifier": pem}]
    if (
        body["apiVersion"] != "0.0.1"
        or body["kind"] != "dsse"
        or envelope_hash["algorithm"] != "sha256"
        or not isinstance(envelope_hash["value"], str)
        or logged["payloadHash"] != payload_hash
        or logged["signatures"] != signed
    ):
        raise CheckError("the log entry is not this envelope's payload and signature")
    return Verified(certificate, (payload_type, payload))


@dataclass(frozen=True)
class _Entry:
    """One Rekor v1 transparency-log entry of a bundle, with its proof and promise."""

    kind: str
    key_id: bytes
    log_index: int
    integrated_time: int
    promise: bytes
    body: bytes
    proof_index: int
    tree_size: int
    root_hash: bytes
    hashes: tuple[bytes, ...]
    checkpoint: str

    @classmethod
    def read(cls, value: Any) -> _Entry:
        entry = _fields(
            value,
            {"logIndex", "logId", "kindVersion", "integratedTime", "inclusionPromise",
             "inclusionProof", "canonicalizedBody"},
        )  # fmt: skip
        kind = _fields(entry["kindVersion"], {"kind", "version"})
        if kind["version"] != "0.0.1" or kind["kind"] not in ("hashedrekord", "dsse"):
            raise CheckError("not a hashedrekord or dsse 0.0.1 entry")
        proof = _fields(
            entry["inclusionProof"], {"logIndex", "rootHash", "treeSize", "hashes", "checkpoint"}
        )
        hashes = proof["hashes"]
        if not isinstance(hashes, list):
            raise CheckError("proof hashes are not a list")
        checkpoint = _fields(proof["checkpoint"], {"envelope"})["envelope"]
        if not isinstance(checkpoint, str):
            raise CheckError("the checkpoint is not text")
        body = _b64(entry["canonicalizedBody"])
        return cls(
            kind=kind["kind"],
            key_id=_b64(_fields(entry["logId"], {"keyId"})["keyId"]),
            log_index=_uint(entry["logIndex"]),
            integrated_time=_uint(entry["integratedTime"]),
            promise=_b64(
                _fields(entry["inclusionPromise"], {"signedEntryTimestamp"})["signedEntryTimestamp"]
            ),
            body=body,
            proof_index=_uint(proof["logIndex"]),
            tree_size=_uint(proof["treeSize"]),
            root_hash=_b64(proof["rootHash"]),
            hashes=tuple(_b64(item) for item in hashes),
            checkpoint=checkpoint,
        )

    def verify(self, root: RootKeys) -> None:
        """The Merkle inclusion proof, its signed checkpoint and the inclusion promise."""
        if not self.integrated_time:  # sigstore-python takes no time from a zero
            raise CheckError("no integrated time")
        if not 0 <= self.proof_index < self.tree_size:
            raise CheckError("the proof's index is outside its tree")
        inner = (self.proof_index ^ (self.tree_size - 1)).bit_length()
        border = bin(self.proof_index >> inner).count("1")
        if len(self.hashes) != inner + border:
            raise CheckError("the inclusion proof has the wrong number of hashes")
        node = hashlib.sha256(b"\x00" + self.body).digest()
        for level, sibling in enumerate(self.hashes[:inner]):
            pair = (node, sibling) if (self.proof_index >> level) & 1 == 0 else (sibling, node)
            node = hashlib.sha256(b"\x01" + pair[0] + pair[1]).digest()
        for sibling in self.hashes[inner:]:
            node = hashlib.sha256(b"\x01" + sibling + node).digest()
        if node != self.root_hash:
            raise CheckError("the inclusion proof does not lead to its root hash")
        self._verify_checkpoint(root)
        promised: dict[str, str | int] = {
            "body": base64.b64encode(self.body).decode(),
            "integratedTime": self.integrated_time,
            "logID": self.key_id.hex(),
            "logIndex": self.log_index,
        }
        canonical = rfc8785.dumps(promised)
        verify_log_signature(root.rekor, self.key_id, self.promise, canonical, at=None)

    def _verify_checkpoint(self, root: RootKeys) -> None:
        """The checkpoint is a signed note by this entry's log whose root hash is the proof's."""
        text = self.checkpoint
        if text.count("\n\n") != 1:
            raise CheckError("the checkpoint is not one note and one signature block")
        split = text.index("\n\n")
        note, block = text[: split + 1], text[split + 2 :]
        if not block.endswith("\n"):
            raise CheckError("the checkpoint's signature block does not end with a newline")
        lines = note.strip().split("\n")
        if len(lines) < 3 or not lines[0] or lines[1] != str(self.tree_size):
            raise CheckError("the checkpoint note is malformed or of another tree size")
        if base64.b64decode(lines[2], validate=True) != self.root_hash:
            raise CheckError("the checkpoint's root hash is not the proof's")
        for _name, encoded in _CHECKPOINT_SIGNATURE.findall(block):
            signed = base64.b64decode(encoded, validate=True)
            if len(signed) >= 5 and signed[:4] == self.key_id[:4]:
                verify_log_signature(root.rekor, self.key_id, signed[4:], note.encode(), at=None)
                return
        raise CheckError("the checkpoint carries no signature of this entry's log")


def _check_leaf(certificate: Certificate) -> None:
    """A Sigstore signing certificate: X.509 v3 and not a CA (the usages are checked later)."""
    if certificate.version != Version.v3:
        raise CheckError("not an X.509 v3 certificate")
    try:
        constraints = certificate.extensions.get_extension_for_class(BasicConstraints)
    except ExtensionNotFound:
        return
    if not constraints.critical or constraints.value.ca:
        raise CheckError("the signing certificate may be a CA")


def _check_sct(certificate: Certificate, chain: list[Certificate], keys: RootKeys) -> None:
    """Exactly one embedded precertificate SCT, signed by a trusted CT log over the
    certificate as issued by its (CA) issuer."""
    if len(embedded_scts(certificate)) != 1 or not chain:
        raise CheckError("not exactly one SCT, or no issuer")
    issuer = chain[0]
    try:
        usage = issuer.extensions.get_extension_for_class(ExtendedKeyUsage).value
        if ExtendedKeyUsageOID.CERTIFICATE_TRANSPARENCY in usage:
            raise CheckError("a precertificate-signing issuer")
    except ExtensionNotFound:
        pass
    constraints = issuer.extensions.get_extension_for_class(BasicConstraints)
    key_usage = issuer.extensions.get_extension_for_class(KeyUsage).value
    if not (constraints.critical and constraints.value.ca and key_usage.key_cert_sign):
        raise CheckError("the SCT's issuer is not a CA")
    if not isinstance(issuer.public_key(), ec.EllipticCurvePublicKey | rsa.RSAPublicKey):
        raise CheckError("the issuer's key is neither ECDSA nor RSA")
    verify_embedded_sct(certificate, issuer, keys)


def verify_chain(root: RootKeys, certificate: Certificate, at: datetime) -> list[Certificate]:
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
        raise CheckError(f"the certificate does not chain to a trusted root: {exc}") from exc


def check_usage(certificate: Certificate) -> None:
    """A Sigstore signing certificate: digital signature key usage and the code-signing EKU."""
    try:
        usage = certificate.extensions.get_extension_for_class(KeyUsage).value
        extended = certificate.extensions.get_extension_for_class(ExtendedKeyUsage).value
    except ExtensionNotFound as exc:
        raise CheckError("the certificate is not a Sigstore signing certificate") from exc
    if not usage.digital_signature or ExtendedKeyUsageOID.CODE_SIGNING not in extended:
        raise CheckError("the certificate is not a code-signing certificate")
