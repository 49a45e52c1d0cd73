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
import logging
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

from nexo_pkg.core.errors import ConfigError, exception_line
from nexo_pkg.core.files import read_capped_bytes
from nexo_pkg.trust.base import proto_field, read_trusted_root

_logger = logging.getLogger(__name__)

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
        return moment is None or _valid_at(self.start, self.end, moment)


def _valid_at(start: datetime | None, end: datetime | None, moment: datetime) -> bool:
    return (start is None or start <= moment) and (end is None or moment <= end)


@dataclass(frozen=True)
class Authority:
    """One Fulcio certificate authority: its chain and the time range it issued in."""

    certificates: tuple[Certificate, ...]
    start: datetime | None
    end: datetime | None

    def issued(self, certificate: Certificate) -> bool:
        """Whether one of this authority's certificates signed ``certificate``."""
        for candidate in self.certificates:
            if candidate.subject != certificate.issuer:
                continue
            try:
                certificate.verify_directly_issued_by(candidate)
            except (ValueError, TypeError, InvalidSignature):
                continue
            return True
        return False


@dataclass(frozen=True)
class RootKeys:
    """The Rekor keys, CT log keys and Fulcio certificates of one trusted root."""

    rekor: tuple[LogKey, ...]
    ct: tuple[LogKey, ...]
    fulcio: tuple[Certificate, ...]
    authorities: tuple[Authority, ...] = ()


def _shown(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def check_log_key(root: RootKeys, key_id: bytes, integrated: datetime | None) -> None:
    """As ``gh attestation verify``: a log entry's ``logId`` must name a log key of the
    trusted root, valid (not yet retired) at the entry's integrated time. Raises
    :class:`KeyCheckError`."""
    if not key_id:
        # An empty keyId, or one with no base64 in it (the bundle parser skips what is not).
        raise KeyCheckError("its log entry names no log (its logId.keyId is empty or not base64)")
    keys = [key for key in root.rekor if key.key_id == key_id]
    if not keys:
        raise KeyCheckError(
            f"its log entry names log {key_id.hex()}, which is no log of the trusted root"
        )
    if integrated is not None and not any(key.valid_at(integrated) for key in keys):
        raise KeyCheckError(
            f"log key {key_id.hex()} was not valid at the entry's integrated time "
            f"{_shown(integrated)} (retired or not yet in use in the trusted root)"
        )


def check_authority(root: RootKeys, certificate: Certificate, integrated: datetime) -> None:
    """As ``gh attestation verify``: the certificate authority that issued ``certificate``
    must have been valid (not yet retired) at the integrated time. Raises
    :class:`KeyCheckError`."""
    try:
        issuing = [authority for authority in root.authorities if authority.issued(certificate)]
    except ValueError as exc:
        # cryptography parses a name when it is first read: a malformed one fails here.
        raise KeyCheckError(f"the certificate's issuer cannot be read: {exc}") from exc
    if not issuing:
        raise KeyCheckError("no certificate authority of the trusted root issued the certificate")
    if not any(_valid_at(a.start, a.end, integrated) for a in issuing):
        raise KeyCheckError(
            "the certificate authority that issued the certificate was not valid at the "
            f"integrated time {_shown(integrated)} (retired or not yet in use in the trusted root)"
        )


def root_time(value: Any) -> datetime | None:
    """A trusted root's RFC 3339 time (``None`` when absent)."""
    if not isinstance(value, str):
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)


def _log_keys(entries: Iterable[Any]) -> tuple[LogKey, ...]:
    keys: list[LogKey] = []
    for entry in entries:
        public = proto_field(entry, "publicKey")
        key = serialization.load_der_public_key(base64.b64decode(proto_field(public, "rawBytes")))
        if not isinstance(key, PublicKey):
            continue  # a key type no log uses: it can verify nothing
        valid = proto_field(public, "validFor") or {}
        keys.append(
            LogKey(
                key_id=base64.b64decode(proto_field(proto_field(entry, "logId"), "keyId")),
                key=key,
                start=root_time(valid.get("start")),
                end=root_time(valid.get("end")),
            )
        )
    return tuple(keys)


def parse_root_keys(document: Mapping[str, Any]) -> RootKeys:
    """The keys of a ``trusted_root.json`` document, its fields named in lowerCamelCase or as
    in the ``.proto`` (:func:`~nexo_pkg.trust.base.proto_field`: both are the same field to
    sigstore-python and gh). Raises ``ValueError`` when malformed."""
    try:
        authorities = tuple(
            Authority(
                certificates=tuple(
                    load_der_x509_certificate(
                        base64.b64decode(proto_field(certificate, "rawBytes"))
                    )
                    for certificate in proto_field(
                        proto_field(authority, "certChain"), "certificates"
                    )
                ),
                start=root_time((proto_field(authority, "validFor") or {}).get("start")),
                end=root_time((proto_field(authority, "validFor") or {}).get("end")),
            )
            for authority in proto_field(document, "certificateAuthorities") or []
        )
        return RootKeys(
            rekor=_log_keys(proto_field(document, "tlogs") or []),
            ct=_log_keys(proto_field(document, "ctlogs") or []),
            fulcio=tuple(c for authority in authorities for c in authority.certificates),
            authorities=authorities,
        )
    except (KeyError, TypeError, AttributeError, binascii.Error) as exc:
        raise ValueError(f"malformed trusted root: {exc!r}") from exc


def public_good_root_file() -> Path:
    """The public-good instance's ``trusted_root.json`` embedded in sigstore-python (found,
    not imported: importing sigstore-python costs most of a second)."""
    return _embedded_dir() / "trusted_root.json"


def _embedded_dir() -> Path:
    spec = find_spec("sigstore")
    if spec is None or not spec.submodule_search_locations:
        raise OSError("sigstore-python is not installed")
    package = Path(next(iter(spec.submodule_search_locations)))
    return package / "_store" / quote(PUBLIC_GOOD_TUF_URL, safe="")


@dataclass(frozen=True)
class RootSource:
    """The bytes of the trusted root a verification reads, and which root it is (what
    ``--verbose`` names)."""

    raw: bytes
    description: str


def _tuf_dirs() -> tuple[Path, Path]:
    """sigstore-python's local TUF metadata and targets-cache directories of the public-good
    repository (as its TUF updater places them)."""
    from platformdirs import user_cache_dir, user_data_dir  # noqa: PLC0415

    repository = quote(PUBLIC_GOOD_TUF_URL, safe="")
    return (
        Path(user_data_dir("sigstore-python", "sigstore")) / "tuf" / repository,
        Path(user_cache_dir("sigstore-python", "sigstore")) / "tuf" / repository,
    )


# The most bytes each TUF metadata file is read to (python-tuf's ``UpdaterConfig`` defaults,
# which bound what sigstore-python's updater ever stores), and the most root rotations
# followed (its ``max_root_rotations``). A file over its cap, or not a regular file (a FIFO,
# a device), makes the cache not verify: it is never read whole, never waited on.
_MAX_ROOT_BYTES = 512_000
_MAX_TIMESTAMP_BYTES = 16_384
_MAX_SNAPSHOT_BYTES = 2_000_000
_MAX_TARGETS_BYTES = 5_000_000
_MAX_ROOT_ROTATIONS = 256


def _metadata_bytes(path: Path, limit: int) -> bytes:
    """The bytes of the TUF metadata file ``path``: a regular file (a link to one followed) of
    at most ``limit`` bytes; ``OSError``/``ValueError`` otherwise."""
    return read_capped_bytes(path, limit)


def _cached_root_verified(metadata_dir: Path, cached: bytes) -> str | None:
    """Why the cached ``trusted_root.json`` does not verify against the local TUF metadata
    (``None`` when it does): the newest root reached from the shipped one through the local
    root history signs timestamp, snapshot and targets, each names the next one's version,
    and targets lists exactly these bytes. Expiry is not checked: this is an offline read of
    what an online update verified."""
    from tuf.api.exceptions import RepositoryError  # noqa: PLC0415
    from tuf.api.metadata import Metadata  # noqa: PLC0415

    try:
        # The chain of roots from the one sigstore-python ships, each signed by its
        # predecessor's keys and its own (the TUF updater keeps every version it accepted).
        root = Metadata.from_bytes(_metadata_bytes(_embedded_dir() / "root.json", _MAX_ROOT_BYTES))
        history = metadata_dir / "root_history"
        for _ in range(_MAX_ROOT_ROTATIONS):
            try:
                following_raw = _metadata_bytes(
                    history / f"{root.signed.version + 1}.root.json", _MAX_ROOT_BYTES
                )
            except FileNotFoundError:
                break
            following = Metadata.from_bytes(following_raw)
            root.verify_delegate("root", following)
            following.verify_delegate("root", following)
            if following.signed.version != root.signed.version + 1:
                return "the local TUF root history skips a version"
            root = following
        timestamp: Any = Metadata.from_bytes(
            _metadata_bytes(metadata_dir / "timestamp.json", _MAX_TIMESTAMP_BYTES)
        )
        root.verify_delegate("timestamp", timestamp)
        snapshot_raw = _metadata_bytes(metadata_dir / "snapshot.json", _MAX_SNAPSHOT_BYTES)
        timestamp.signed.snapshot_meta.verify_length_and_hashes(snapshot_raw)
        snapshot: Any = Metadata.from_bytes(snapshot_raw)
        root.verify_delegate("snapshot", snapshot)
        if snapshot.signed.version != timestamp.signed.snapshot_meta.version:
            return "the local snapshot is not the one the timestamp names"
        targets_raw = _metadata_bytes(metadata_dir / "targets.json", _MAX_TARGETS_BYTES)
        targets_meta = snapshot.signed.meta["targets.json"]
        targets_meta.verify_length_and_hashes(targets_raw)
        targets: Any = Metadata.from_bytes(targets_raw)
        root.verify_delegate("targets", targets)
        if targets.signed.version != targets_meta.version:
            return "the local targets metadata is not the one the snapshot names"
        target = targets.signed.targets.get("trusted_root.json")
        if target is None:
            return "the local targets metadata lists no trusted_root.json"
        target.verify_length_and_hashes(cached)
    except (OSError, ValueError, KeyError, AttributeError, RepositoryError) as exc:
        return str(exc) or type(exc).__name__
    return None


def public_good_root() -> RootSource:
    """The public-good trusted root, offline: the one shipped inside sigstore-python, or the
    one sigstore-python's TUF updater cached (newer) only when it verifies against the local
    TUF metadata. A cache that does not verify is ignored, never trusted."""
    embedded_path = public_good_root_file()
    embedded = embedded_path.read_bytes()
    shipped = RootSource(
        embedded, f"the public-good root shipped in sigstore-python ({embedded_path})"
    )
    metadata_dir, targets_dir = _tuf_dirs()
    cached_path = targets_dir / "trusted_root.json"
    try:
        cached = read_trusted_root(cached_path)
    except (OSError, ValueError):
        return shipped
    if cached == embedded:
        return shipped
    reason = _cached_root_verified(metadata_dir, cached)
    if reason is not None:
        # A `warning:` line, once a run (every signed plugin of a sync asks for the root).
        from nexo_pkg.core.output import say_once  # noqa: PLC0415
        from nexo_pkg.core.terminal import printable  # noqa: PLC0415

        say_once(
            f"ignoring the cached public-good root {printable(str(cached_path))}: "
            f"{printable(reason)}",
            warning=True,
        )
        return shipped
    return RootSource(
        cached,
        f"the public-good root cached at {cached_path}, verified against the TUF metadata in "
        f"{metadata_dir}",
    )


def root_source(trusted_root: Path | None) -> RootSource:
    """The trusted root a verification reads: the private instance's ``trusted_root`` or the
    public-good one (:func:`public_good_root`). An unreadable file is ``policy_invalid``."""
    try:
        if trusted_root is None:
            source = public_good_root()
        else:
            source = RootSource(read_trusted_root(trusted_root), f"trusted_root {trusted_root}")
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"trusted_root {trusted_root or 'of the public-good instance'} is not a usable "
            f"Sigstore trusted root: {exception_line(exc)}",
            kind="policy_invalid",
        ) from exc
    _logger.info("trusted root: %s", source.description)
    return source


def load_root_keys(source: RootSource) -> RootKeys:
    """The keys of ``source``. An unusable document is ``policy_invalid``."""
    try:
        return parse_root_keys(json.loads(source.raw))
    except (ValueError, RecursionError) as exc:
        raise ConfigError(
            f"{source.description} is not a usable Sigstore trusted root: {exception_line(exc)}",
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
