"""A test-only private Sigstore instance built with ``cryptography``.

It plays every part of Sigstore's public-good instance with keys generated per test run:

* a Fulcio-style certificate authority (root CA + intermediate) issuing short-lived leaf
  certificates with SAN URI identities and the GitHub Actions OIDC extensions
  (issuer ``1.3.6.1.4.1.57264.1.1``/``.8``, workflow and source repository, ...);
* a certificate-transparency log whose key signs a real embedded SCT over the precertificate
  (RFC 6962 §3.2: the TBS certificate without the SCT extension, plus the issuer key hash);
* a Rekor-style transparency log holding hashedrekord entries in an RFC 6962 Merkle tree,
  whose key signs the signed entry timestamp (SET) and the checkpoint that an inclusion
  proof is checked against;
* a ``trusted_root.json`` naming all of the above, as sigstore-python reads it.

:meth:`PrivateSigstore.sign` produces a Sigstore bundle (v0.3 by default, v0.2 on request)
that sigstore-python verifies with nothing mocked; knobs make realistic bad bundles (an
expired certificate at the log's time, another issuer, ...). :meth:`sign_legacy` produces a
cosign ``--bundle`` document (``base64Signature``/``cert``/``rekorBundle``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import struct
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import rfc8785
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
SLSA_PROVENANCE_V1 = "https://slsa.dev/provenance/v1"
IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"
BUNDLE_V03 = "application/vnd.dev.sigstore.bundle.v0.3+json"
BUNDLE_V02 = "application/vnd.dev.sigstore.bundle+json;version=0.2"
BUNDLE_V01 = "application/vnd.dev.sigstore.bundle+json;version=0.1"

_OID_ISSUER_V1 = x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.1")
_OID_WORKFLOW_TRIGGER = x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.2")
_OID_WORKFLOW_SHA = x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.3")
_OID_WORKFLOW_REPOSITORY = x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.5")
_OID_WORKFLOW_REF = x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.6")
_OID_ISSUER_V2 = x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.8")
_OID_BUILD_SIGNER_URI = x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.9")
_OID_SOURCE_REPOSITORY_URI = x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.12")
_OID_SOURCE_REPOSITORY_REF = x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.14")
_OID_SOURCE_REPOSITORY_OWNER_URI = x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.16")
_OID_BUILD_CONFIG_URI = x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.18")
_OID_SCT_LIST = x509.ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")

_REKOR_ORIGIN_NAME = "rekor.nexo.test"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _spki(key: ec.EllipticCurvePublicKey) -> bytes:
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _key_id(key: ec.EllipticCurvePublicKey) -> bytes:
    """RFC 6962 key ID: SHA-256 of the DER SubjectPublicKeyInfo (as Sigstore computes it)."""
    return hashlib.sha256(_spki(key)).digest()


def _der_length(length: int) -> bytes:
    if length < 0x80:
        return bytes([length])
    encoded = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(encoded)]) + encoded


def der_utf8_string(value: str) -> bytes:
    """DER UTF8String, the encoding of Fulcio's v2 (``…1.8`` onwards) extensions."""
    raw = value.encode("utf-8")
    return b"\x0c" + _der_length(len(raw)) + raw


def _der_octet_string(raw: bytes) -> bytes:
    return b"\x04" + _der_length(len(raw)) + raw


def _u24(length: int) -> bytes:
    return struct.pack("!I", length)[1:]


def _leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + leaf).digest()


def _node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(size: int) -> int:
    """Largest power of two strictly below ``size`` (RFC 6962 §2.1)."""
    k = 1
    while k * 2 < size:
        k *= 2
    return k


def merkle_root(leaf_hashes: list[bytes]) -> bytes:
    """RFC 6962 Merkle tree hash over already-hashed leaves."""
    if not leaf_hashes:
        return hashlib.sha256(b"").digest()
    if len(leaf_hashes) == 1:
        return leaf_hashes[0]
    k = _split(len(leaf_hashes))
    return _node_hash(merkle_root(leaf_hashes[:k]), merkle_root(leaf_hashes[k:]))


def inclusion_path(index: int, leaf_hashes: list[bytes]) -> list[bytes]:
    """RFC 6962 audit path for leaf ``index``, lowest level first."""
    if len(leaf_hashes) <= 1:
        return []
    k = _split(len(leaf_hashes))
    if index < k:
        return [*inclusion_path(index, leaf_hashes[:k]), merkle_root(leaf_hashes[k:])]
    return [*inclusion_path(index - k, leaf_hashes[k:]), merkle_root(leaf_hashes[:k])]


def _whole_seconds(moment: datetime) -> datetime:
    return moment.replace(microsecond=0)


@dataclass
class IssuedCertificate:
    """A leaf certificate and the ephemeral key it certifies."""

    certificate: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    @property
    def pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)


@dataclass
class PrivateSigstore:
    """One private Sigstore instance: CA, CT log and transparency log keys, and the log."""

    root_key: ec.EllipticCurvePrivateKey
    root_certificate: x509.Certificate
    intermediate_key: ec.EllipticCurvePrivateKey
    intermediate_certificate: x509.Certificate
    ct_key: ec.EllipticCurvePrivateKey
    rekor_key: ec.EllipticCurvePrivateKey
    created: datetime
    log_leaves: list[bytes] = field(default_factory=list)

    @classmethod
    def create(cls, *, now: datetime | None = None) -> PrivateSigstore:
        """A fresh instance whose CA is valid from a year before ``now`` for ten years."""
        created = _whole_seconds(now or datetime.now(UTC))
        root_key = ec.generate_private_key(ec.SECP256R1())
        intermediate_key = ec.generate_private_key(ec.SECP256R1())
        root_name = x509.Name(
            [
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "nexo-test"),
                x509.NameAttribute(NameOID.COMMON_NAME, "nexo-test-root"),
            ]
        )
        intermediate_name = x509.Name(
            [
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "nexo-test"),
                x509.NameAttribute(NameOID.COMMON_NAME, "nexo-test-intermediate"),
            ]
        )
        not_before = created - timedelta(days=365)
        not_after = created + timedelta(days=3650)
        ca_usage = x509.KeyUsage(
            digital_signature=False,
            content_commitment=False,
            key_encipherment=False,
            data_encipherment=False,
            key_agreement=False,
            key_cert_sign=True,
            crl_sign=True,
            encipher_only=False,
            decipher_only=False,
        )
        root_certificate = (
            x509.CertificateBuilder()
            .subject_name(root_name)
            .issuer_name(root_name)
            .public_key(root_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(not_before)
            .not_valid_after(not_after)
            .add_extension(x509.BasicConstraints(ca=True, path_length=1), critical=True)
            .add_extension(ca_usage, critical=True)
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(root_key.public_key()), critical=False
            )
            .sign(root_key, hashes.SHA256())
        )
        intermediate_certificate = (
            x509.CertificateBuilder()
            .subject_name(intermediate_name)
            .issuer_name(root_name)
            .public_key(intermediate_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(not_before)
            .not_valid_after(not_after)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(ca_usage, critical=True)
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(intermediate_key.public_key()),
                critical=False,
            )
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(root_key.public_key()),
                critical=False,
            )
            .sign(root_key, hashes.SHA256())
        )
        instance = cls(
            root_key=root_key,
            root_certificate=root_certificate,
            intermediate_key=intermediate_key,
            intermediate_certificate=intermediate_certificate,
            ct_key=ec.generate_private_key(ec.SECP256R1()),
            rekor_key=ec.generate_private_key(ec.SECP256R1()),
            created=created,
        )
        # A few unrelated entries so inclusion proofs have real sibling hashes.
        for number in range(5):
            instance.log_leaves.append(f"unrelated entry {number}".encode())
        return instance

    # --- trusted root ------------------------------------------------------------------------

    def trusted_root(self) -> dict[str, Any]:
        """The instance's ``trusted_root.json`` document (Sigstore TrustedRoot v0.1)."""
        start = (self.created - timedelta(days=365)).strftime("%Y-%m-%dT%H:%M:%SZ")

        def log(key: ec.EllipticCurvePrivateKey, url: str) -> dict[str, Any]:
            public = key.public_key()
            return {
                "baseUrl": url,
                "hashAlgorithm": "SHA2_256",
                "publicKey": {
                    "rawBytes": _b64(_spki(public)),
                    "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                    "validFor": {"start": start},
                },
                "logId": {"keyId": _b64(_key_id(public))},
            }

        return {
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [log(self.rekor_key, "https://rekor.nexo.test")],
            "certificateAuthorities": [
                {
                    "subject": {"organization": "nexo-test", "commonName": "nexo-test"},
                    "uri": "https://fulcio.nexo.test",
                    "certChain": {
                        "certificates": [
                            {"rawBytes": _b64(certificate.public_bytes(serialization.Encoding.DER))}
                            for certificate in (
                                self.intermediate_certificate,
                                self.root_certificate,
                            )
                        ]
                    },
                    "validFor": {"start": start},
                }
            ],
            "ctlogs": [log(self.ct_key, "https://ctfe.nexo.test")],
            "timestampAuthorities": [],
        }

    def write_trusted_root(self, path: Path) -> Path:
        """Write :meth:`trusted_root` to ``path`` and return it."""
        path.write_text(json.dumps(self.trusted_root(), indent=2), encoding="utf-8")
        return path

    # --- Fulcio ------------------------------------------------------------------------------

    def issue_certificate(
        self,
        identity: str,
        *,
        issuer: str = GITHUB_ISSUER,
        repository: str | None = None,
        not_before: datetime | None = None,
        lifetime: timedelta = timedelta(minutes=10),
        sct_key: ec.EllipticCurvePrivateKey | None = None,
        ref: str | None = None,
        build_config_uri: str | None = None,
    ) -> IssuedCertificate:
        """Issue a Fulcio-style leaf for SAN URI ``identity`` with an embedded SCT.

        ``repository`` (``owner/name``) fills the GitHub workflow and source-repository
        extensions; by default it is read from an ``https://github.com/owner/name/…`` SAN.
        ``ref`` is the source ref claim (default: the SAN's ``@…`` suffix, else
        ``refs/heads/main``); ``build_config_uri`` the starting workflow (a reusable workflow's
        caller). ``sct_key`` signs the SCT instead of the instance's CT log (an untrusted log).
        """
        key = ec.generate_private_key(ec.SECP256R1())
        start = _whole_seconds(not_before or self.created)
        if repository is None and identity.startswith("https://github.com/"):
            parts = identity.removeprefix("https://github.com/").split("/")
            if len(parts) >= 2:
                repository = f"{parts[0]}/{parts[1]}"
        serial = x509.random_serial_number()

        def build(sct_list: bytes) -> x509.Certificate:
            builder = (
                x509.CertificateBuilder()
                .subject_name(x509.Name([]))
                .issuer_name(self.intermediate_certificate.subject)
                .public_key(key.public_key())
                .serial_number(serial)
                .not_valid_before(start)
                .not_valid_after(start + lifetime)
                .add_extension(
                    x509.KeyUsage(
                        digital_signature=True,
                        content_commitment=False,
                        key_encipherment=False,
                        data_encipherment=False,
                        key_agreement=False,
                        key_cert_sign=False,
                        crl_sign=False,
                        encipher_only=False,
                        decipher_only=False,
                    ),
                    critical=True,
                )
                .add_extension(
                    x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False
                )
                .add_extension(
                    x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
                )
                .add_extension(
                    x509.AuthorityKeyIdentifier.from_issuer_public_key(
                        self.intermediate_key.public_key()
                    ),
                    critical=False,
                )
                .add_extension(
                    x509.SubjectAlternativeName([x509.UniformResourceIdentifier(identity)]),
                    critical=True,
                )
                .add_extension(
                    x509.UnrecognizedExtension(_OID_ISSUER_V1, issuer.encode()), critical=False
                )
                .add_extension(
                    x509.UnrecognizedExtension(_OID_ISSUER_V2, der_utf8_string(issuer)),
                    critical=False,
                )
                .add_extension(
                    x509.UnrecognizedExtension(_OID_BUILD_SIGNER_URI, der_utf8_string(identity)),
                    critical=False,
                )
            )
            if build_config_uri is not None:
                builder = builder.add_extension(
                    x509.UnrecognizedExtension(
                        _OID_BUILD_CONFIG_URI, der_utf8_string(build_config_uri)
                    ),
                    critical=False,
                )
            if repository is not None:
                claimed_ref = ref or (
                    identity.rpartition("@")[2] if "@" in identity else "refs/heads/main"
                )
                builder = (
                    builder.add_extension(
                        x509.UnrecognizedExtension(_OID_WORKFLOW_TRIGGER, b"push"), critical=False
                    )
                    .add_extension(
                        x509.UnrecognizedExtension(_OID_WORKFLOW_SHA, b"0" * 40), critical=False
                    )
                    .add_extension(
                        x509.UnrecognizedExtension(_OID_WORKFLOW_REPOSITORY, repository.encode()),
                        critical=False,
                    )
                    .add_extension(
                        x509.UnrecognizedExtension(_OID_WORKFLOW_REF, claimed_ref.encode()),
                        critical=False,
                    )
                    .add_extension(
                        x509.UnrecognizedExtension(
                            _OID_SOURCE_REPOSITORY_URI,
                            der_utf8_string(f"https://github.com/{repository}"),
                        ),
                        critical=False,
                    )
                    .add_extension(
                        x509.UnrecognizedExtension(
                            _OID_SOURCE_REPOSITORY_REF, der_utf8_string(claimed_ref)
                        ),
                        critical=False,
                    )
                    .add_extension(
                        x509.UnrecognizedExtension(
                            _OID_SOURCE_REPOSITORY_OWNER_URI,
                            der_utf8_string(f"https://github.com/{repository.split('/')[0]}"),
                        ),
                        critical=False,
                    )
                )
            builder = builder.add_extension(
                x509.UnrecognizedExtension(_OID_SCT_LIST, _der_octet_string(sct_list)),
                critical=False,
            )
            return builder.sign(self.intermediate_key, hashes.SHA256())

        # Precertificate flow: the SCT signs the TBS certificate *without* the SCT extension,
        # so build once with a placeholder, take that TBS, then build the final certificate
        # with the real SCT. Only the SCT extension differs between the two.
        draft = build(b"\x00\x00")
        sct = self._sign_sct(draft.tbs_precertificate_bytes, timestamp=start, key=sct_key)
        final = build(struct.pack("!H", len(sct) + 2) + struct.pack("!H", len(sct)) + sct)
        assert final.tbs_precertificate_bytes == draft.tbs_precertificate_bytes
        return IssuedCertificate(final, key)

    def _sign_sct(
        self,
        tbs_precertificate: bytes,
        *,
        timestamp: datetime,
        key: ec.EllipticCurvePrivateKey | None = None,
    ) -> bytes:
        """A v1 SCT (RFC 6962 §3.2) for a precertificate entry, TLS-encoded."""
        log_key = key or self.ct_key
        # Whole seconds: the verifier rebuilds the millisecond timestamp through a float.
        milliseconds = int(timestamp.timestamp()) * 1000
        issuer_key_hash = _key_id(self.intermediate_key.public_key())
        signed = (
            struct.pack("!BBQH", 0, 0, milliseconds, 1)
            + issuer_key_hash
            + _u24(len(tbs_precertificate))
            + tbs_precertificate
            + struct.pack("!H", 0)
        )
        signature = log_key.sign(signed, ec.ECDSA(hashes.SHA256()))
        return (
            struct.pack("!B", 0)
            + _key_id(log_key.public_key())
            + struct.pack("!Q", milliseconds)
            + struct.pack("!H", 0)
            + struct.pack("!BBH", 4, 3, len(signature))  # sha256, ecdsa
            + signature
        )

    # --- Rekor -------------------------------------------------------------------------------

    @staticmethod
    def hashedrekord_body(certificate: x509.Certificate, signature: bytes, digest: bytes) -> bytes:
        """The canonical hashedrekord v0.0.1 entry body for a signature over ``digest``."""
        pem = certificate.public_bytes(serialization.Encoding.PEM)
        return rfc8785.dumps(
            {
                "apiVersion": "0.0.1",
                "kind": "hashedrekord",
                "spec": {
                    "data": {"hash": {"algorithm": "sha256", "value": digest.hex()}},
                    "signature": {
                        "content": _b64(signature),
                        "publicKey": {"content": _b64(pem)},
                    },
                },
            }
        )

    def log_entry(
        self, body: bytes, *, integrated_time: int, kind: str = "hashedrekord"
    ) -> dict[str, Any]:
        """Append ``body`` to the log; its entry with SET, inclusion proof and checkpoint."""
        index = len(self.log_leaves)
        self.log_leaves.append(body)
        # Later entries too, so the proof is checked against a tree that kept growing.
        self.log_leaves.append(f"entry after {index}".encode())
        hashed = [_leaf_hash(leaf) for leaf in self.log_leaves]
        root = merkle_root(hashed)
        path = inclusion_path(index, hashed)
        log_id = _key_id(self.rekor_key.public_key())
        set_payload = rfc8785.dumps(
            {
                "body": _b64(body),
                "integratedTime": integrated_time,
                "logID": log_id.hex(),
                "logIndex": index,
            }
        )
        signed_entry_timestamp = self.rekor_key.sign(set_payload, ec.ECDSA(hashes.SHA256()))
        return {
            "logIndex": str(index),
            "logId": {"keyId": _b64(log_id)},
            "kindVersion": {"kind": kind, "version": "0.0.1"},
            "integratedTime": str(integrated_time),
            "inclusionPromise": {"signedEntryTimestamp": _b64(signed_entry_timestamp)},
            "inclusionProof": {
                "logIndex": str(index),
                "rootHash": _b64(root),
                "treeSize": str(len(hashed)),
                "hashes": [_b64(node) for node in path],
                "checkpoint": {"envelope": self.checkpoint(len(hashed), root)},
            },
            "canonicalizedBody": _b64(body),
        }

    def checkpoint(self, tree_size: int, root: bytes) -> str:
        """A signed note over the tree head, as Rekor publishes it."""
        note = f"{_REKOR_ORIGIN_NAME} - 1\n{tree_size}\n{_b64(root)}\n"
        signature = self.rekor_key.sign(note.encode(), ec.ECDSA(hashes.SHA256()))
        hint = _key_id(self.rekor_key.public_key())[:4]
        return f"{note}\n\u2014 {_REKOR_ORIGIN_NAME} {_b64(hint + signature)}\n"

    # --- signing -----------------------------------------------------------------------------

    def sign(
        self,
        artifact: bytes,
        *,
        identity: str,
        issuer: str = GITHUB_ISSUER,
        repository: str | None = None,
        media_type: str = BUNDLE_V03,
        integrated_time: datetime | None = None,
        not_before: datetime | None = None,
        lifetime: timedelta = timedelta(minutes=10),
        sct_key: ec.EllipticCurvePrivateKey | None = None,
        ref: str | None = None,
    ) -> dict[str, Any]:
        """Sign ``artifact`` as ``identity`` and log it; the Sigstore bundle document.

        ``integrated_time`` defaults to one minute into the certificate's validity; set it
        past ``not_before + lifetime`` to log with an already expired certificate.
        """
        issued = self.issue_certificate(
            identity,
            issuer=issuer,
            repository=repository,
            not_before=not_before,
            lifetime=lifetime,
            sct_key=sct_key,
            ref=ref,
        )
        start = issued.certificate.not_valid_before_utc
        logged_at = _whole_seconds(integrated_time or start + timedelta(minutes=1))
        digest = hashlib.sha256(artifact).digest()
        signature = issued.key.sign(digest, ec.ECDSA(Prehashed(hashes.SHA256())))
        body = self.hashedrekord_body(issued.certificate, signature, digest)
        entry = self.log_entry(body, integrated_time=int(logged_at.timestamp()))
        der = issued.certificate.public_bytes(serialization.Encoding.DER)
        material: dict[str, Any] = {"tlogEntries": [entry]}
        if media_type == BUNDLE_V03:
            material["certificate"] = {"rawBytes": _b64(der)}
        else:
            material["x509CertificateChain"] = {"certificates": [{"rawBytes": _b64(der)}]}
        return {
            "mediaType": media_type,
            "verificationMaterial": material,
            "messageSignature": {
                "messageDigest": {"algorithm": "SHA2_256", "digest": _b64(digest)},
                "signature": _b64(signature),
            },
        }

    def attest(
        self,
        artifact: bytes,
        *,
        identity: str,
        repository: str | None = None,
        ref: str | None = None,
        build_config_uri: str | None = None,
        issuer: str = GITHUB_ISSUER,
        predicate_type: str = SLSA_PROVENANCE_V1,
        subject_digest: str | None = None,
        payload_type: str = IN_TOTO_PAYLOAD_TYPE,
    ) -> dict[str, Any]:
        """An artifact attestation as ``actions/attest-build-provenance`` makes it: a v0.3
        bundle whose DSSE envelope holds an in-toto statement about ``artifact`` (or about
        ``subject_digest``), logged as a dsse 0.0.1 entry."""
        statement = {
            "_type": "https://in-toto.io/Statement/v1",
            "subject": [
                {
                    "name": "artifact",
                    "digest": {"sha256": subject_digest or hashlib.sha256(artifact).hexdigest()},
                }
            ],
            "predicateType": predicate_type,
            "predicate": {"buildDefinition": {"buildType": "https://nexo.test/build"}},
        }
        return self.attest_payload(
            json.dumps(statement).encode(),
            identity=identity,
            repository=repository,
            ref=ref,
            build_config_uri=build_config_uri,
            issuer=issuer,
            payload_type=payload_type,
        )

    def attest_payload(
        self,
        payload: bytes,
        *,
        identity: str,
        repository: str | None = None,
        ref: str | None = None,
        build_config_uri: str | None = None,
        issuer: str = GITHUB_ISSUER,
        payload_type: str = IN_TOTO_PAYLOAD_TYPE,
    ) -> dict[str, Any]:
        """A v0.3 bundle of a DSSE envelope over ``payload`` (any bytes, as written: a
        statement of any shape), logged as a dsse 0.0.1 entry."""
        issued = self.issue_certificate(
            identity,
            issuer=issuer,
            repository=repository,
            ref=ref,
            build_config_uri=build_config_uri,
        )
        pae = b"DSSEv1 %d %b %d %b" % (
            len(payload_type),
            payload_type.encode(),
            len(payload),
            payload,
        )
        signature = issued.key.sign(pae, ec.ECDSA(hashes.SHA256()))
        envelope = {
            "payload": _b64(payload),
            "payloadType": payload_type,
            "signatures": [{"sig": _b64(signature)}],
        }
        pem = issued.certificate.public_bytes(serialization.Encoding.PEM)
        body = rfc8785.dumps(
            {
                "apiVersion": "0.0.1",
                "kind": "dsse",
                "spec": {
                    "envelopeHash": {
                        "algorithm": "sha256",
                        "value": hashlib.sha256(json.dumps(envelope).encode()).hexdigest(),
                    },
                    "payloadHash": {
                        "algorithm": "sha256",
                        "value": hashlib.sha256(payload).hexdigest(),
                    },
                    "signatures": [{"signature": _b64(signature), "verifier": _b64(pem)}],
                },
            }
        )
        start = issued.certificate.not_valid_before_utc
        logged_at = _whole_seconds(start + timedelta(minutes=1))
        entry = self.log_entry(body, integrated_time=int(logged_at.timestamp()), kind="dsse")
        der = issued.certificate.public_bytes(serialization.Encoding.DER)
        return {
            "mediaType": BUNDLE_V03,
            "verificationMaterial": {
                "tlogEntries": [entry],
                "certificate": {"rawBytes": _b64(der)},
            },
            "dsseEnvelope": envelope,
        }

    def sign_legacy(
        self,
        artifact: bytes,
        *,
        identity: str,
        issuer: str = GITHUB_ISSUER,
        repository: str | None = None,
        integrated_time: datetime | None = None,
        lifetime: timedelta = timedelta(minutes=10),
        sct_key: ec.EllipticCurvePrivateKey | None = None,
    ) -> tuple[dict[str, Any], bytes, bytes]:
        """Sign as ``cosign sign-blob --bundle`` did before Sigstore bundles.

        Returns the legacy bundle document, the detached signature file content (base64) and
        the certificate PEM.
        """
        issued = self.issue_certificate(
            identity, issuer=issuer, repository=repository, lifetime=lifetime, sct_key=sct_key
        )
        start = issued.certificate.not_valid_before_utc
        logged_at = _whole_seconds(integrated_time or start + timedelta(minutes=1))
        digest = hashlib.sha256(artifact).digest()
        signature = issued.key.sign(digest, ec.ECDSA(Prehashed(hashes.SHA256())))
        body = self.hashedrekord_body(issued.certificate, signature, digest)
        entry = self.log_entry(body, integrated_time=int(logged_at.timestamp()))
        document = {
            "base64Signature": _b64(signature),
            "cert": _b64(issued.pem),
            "rekorBundle": {
                "SignedEntryTimestamp": entry["inclusionPromise"]["signedEntryTimestamp"],
                "Payload": {
                    "body": entry["canonicalizedBody"],
                    "integratedTime": int(entry["integratedTime"]),
                    "logIndex": int(entry["logIndex"]),
                    "logID": _key_id(self.rekor_key.public_key()).hex(),
                },
            },
        }
        return document, _b64(signature).encode(), issued.pem


def write_bundle(path: Path, bundle: dict[str, Any]) -> Path:
    """Write a bundle document as JSON and return ``path``."""
    path.write_text(json.dumps(bundle), encoding="utf-8")
    return path


def random_bytes(size: int = 4096) -> bytes:
    """Artifact content for tests."""
    return secrets.token_bytes(size)
