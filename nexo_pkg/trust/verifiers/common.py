"""The shared base of the Sigstore verifiers: certificate claims, identity policy, trust root.

Imported only when signature material is present (it imports Sigstore, which is slow to
import). A verifier returns a :class:`Signer` only for a signature that sigstore-python (or,
for legacy cosign material, the same checks done here) verified end to end *and* whose
certificate satisfies one of the owner's author entries.

The trust root is Sigstore's public-good instance, embedded in sigstore-python and used
offline, or a private instance's ``trusted_root.json`` named by the policy.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from cryptography.x509 import (
    Certificate,
    ExtensionNotFound,
    ObjectIdentifier,
    OtherName,
    RFC822Name,
    SubjectAlternativeName,
    UniformResourceIdentifier,
    UnrecognizedExtension,
)
from sigstore.errors import Error as SigstoreError
from sigstore.errors import VerificationError
from sigstore.hashes import Hashed
from sigstore.models import ClientTrustConfig, TrustedRoot
from sigstore.verify import Verifier
from sigstore_models.common.v1 import HashAlgorithm

from nexo_pkg.errors import ConfigError
from nexo_pkg.trust.base import SignatureInvalidError, SignerUntrustedError
from nexo_pkg.trust.policy import AuthorPolicy

_logger = logging.getLogger(__name__)

# sigstore-python reports through `logging`; without a handler Python's last-resort handler
# would print its warnings (such as "TUF repository is loaded in offline mode") on stderr.
logging.getLogger("sigstore").addHandler(logging.NullHandler())

OIDC_ISSUER_V1 = ObjectIdentifier("1.3.6.1.4.1.57264.1.1")
OIDC_ISSUER_V2 = ObjectIdentifier("1.3.6.1.4.1.57264.1.8")
GITHUB_WORKFLOW_REPOSITORY = ObjectIdentifier("1.3.6.1.4.1.57264.1.5")
SOURCE_REPOSITORY_URI = ObjectIdentifier("1.3.6.1.4.1.57264.1.12")
SIGSTORE_OTHERNAME = ObjectIdentifier("1.3.6.1.4.1.57264.1.7")

_PUBLIC_GOOD_TUF_URL = "https://tuf-repo-cdn.sigstore.dev"


@dataclass(frozen=True)
class Signer:
    """Who a certificate says signed: its SAN identities, OIDC issuer and source repository.

    ``identity`` is the SAN that satisfied the policy (the first SAN before that is known).
    ``repository`` is ``owner/name`` from the source-repository extension, else the SAN path.
    """

    identities: tuple[str, ...]
    issuer: str | None
    repository: str | None
    identity: str

    @classmethod
    def from_certificate(cls, certificate: Certificate) -> Signer:
        """Read the signer out of a Fulcio-style certificate (never raises)."""
        identities = _san_identities(certificate)
        return cls(
            identities=identities,
            issuer=_oidc_issuer(certificate),
            repository=_source_repository(certificate, identities),
            identity=identities[0] if identities else "<no identity>",
        )

    def with_identity(self, identity: str) -> Signer:
        return Signer(self.identities, self.issuer, self.repository, identity)


def _der_utf8_string(raw: bytes) -> str | None:
    """Decode a DER UTF8String (tag 0x0C), the encoding of Fulcio's v2 extensions."""
    if len(raw) < 2 or raw[0] != 0x0C:
        return None
    length = raw[1]
    offset = 2
    if length & 0x80:
        count = length & 0x7F
        if count == 0 or count > 4 or len(raw) < 2 + count:
            return None
        length = int.from_bytes(raw[2 : 2 + count], "big")
        offset = 2 + count
    if offset + length != len(raw):
        return None
    try:
        return raw[offset:].decode("utf-8")
    except UnicodeDecodeError:
        return None


def _extension_bytes(certificate: Certificate, oid: ObjectIdentifier) -> bytes | None:
    try:
        value = certificate.extensions.get_extension_for_oid(oid).value
    except ExtensionNotFound:
        return None
    if isinstance(value, UnrecognizedExtension):
        return value.value
    return None


def _oidc_issuer(certificate: Certificate) -> str | None:
    """The OIDC issuer: the DER-encoded v2 extension (…1.8), else the raw v1 one (…1.1)."""
    raw = _extension_bytes(certificate, OIDC_ISSUER_V2)
    if raw is not None:
        decoded = _der_utf8_string(raw)
        if decoded is not None:
            return decoded
    raw = _extension_bytes(certificate, OIDC_ISSUER_V1)
    if raw is not None:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return None


def _san_identities(certificate: Certificate) -> tuple[str, ...]:
    """URI, e-mail and Sigstore other-name SANs, in certificate order."""
    try:
        san = certificate.extensions.get_extension_for_class(SubjectAlternativeName).value
    except ExtensionNotFound:
        return ()
    found: list[str] = []
    for name in san:
        if isinstance(name, UniformResourceIdentifier | RFC822Name):
            found.append(name.value)
        elif isinstance(name, OtherName) and name.type_id == SIGSTORE_OTHERNAME:
            decoded = _der_utf8_string(name.value)
            if decoded is not None:
                found.append(decoded)
    return tuple(found)


def _repository_from_url(url: str) -> str | None:
    parts = [part for part in urlsplit(url).path.split("/") if part]
    if len(parts) < 2:
        return None
    return f"{parts[0]}/{parts[1]}"


def _source_repository(certificate: Certificate, identities: Sequence[str]) -> str | None:
    """``owner/name`` of the repository whose workflow signed.

    From the source-repository URI extension (…1.12) when present: for a reusable workflow
    the SAN names the *called* workflow's repository, the extension the calling one. Else
    the legacy workflow-repository extension (…1.5), else the path of a ``https://`` SAN.
    """
    raw = _extension_bytes(certificate, SOURCE_REPOSITORY_URI)
    if raw is not None:
        decoded = _der_utf8_string(raw)
        if decoded:
            return _repository_from_url(decoded)
    raw = _extension_bytes(certificate, GITHUB_WORKFLOW_REPOSITORY)
    if raw is not None:
        try:
            value = raw.decode("utf-8")
        except UnicodeDecodeError:
            value = ""
        if value.count("/") == 1:
            return value
    for identity in identities:
        if identity.startswith("https://"):
            return _repository_from_url(identity)
    return None


def rejection_reason(author: AuthorPolicy, signer: Signer) -> str | None:
    """Why ``author`` does not trust ``signer`` (``None`` when it does).

    Issuer equality, then a SAN matching the identity (full match), then, when ``repos`` is
    set, the signing repository belongs to the owner and is one of ``repos``.
    """
    if signer.issuer != author.oidc_issuer:
        return f"issuer {signer.issuer!r} is not {author.oidc_issuer!r}"
    if not any(author.identity_matches(identity) for identity in signer.identities):
        shown = ", ".join(signer.identities) or "none"
        return f"identity {shown} does not match {author.describe_identity()}"
    if author.repos is not None:
        repository = signer.repository
        if repository is None:
            return "the certificate names no source repository, and `repos` is set"
        repo_owner, _, repo_name = repository.partition("/")
        if repo_owner.casefold() != author.owner.casefold() or repo_name.casefold() not in {
            name.casefold() for name in author.repos
        }:
            return f"repository {repository} is not one of {author.owner}/{list(author.repos)}"
    return None


class UntrustedSignerError(VerificationError):
    """Raised by :class:`TrustedAuthors` so the caller can tell identity from crypto failures."""


class TrustedAuthors:
    """A sigstore-python verification policy: some author entry must trust the certificate.

    With no author entries it refuses every certificate (like sigstore's ``AllOf([])``).
    """

    def __init__(self, authors: Sequence[AuthorPolicy]) -> None:
        self._authors = tuple(authors)
        self.accepted: Signer | None = None

    def verify(self, cert: Certificate) -> None:
        """Accept ``cert`` when an author trusts it; raise ``VerificationError`` otherwise."""
        signer = Signer.from_certificate(cert)
        for author in self._authors:
            if rejection_reason(author, signer) is None:
                matched = next(i for i in signer.identities if author.identity_matches(i))
                self.accepted = signer.with_identity(matched)
                return
        raise UntrustedSignerError("no trusted author accepts the signing certificate")


class UnsafeIdentityCheckedSeparately:
    """A policy that accepts any certificate identity.

    Used only to classify a failure after :class:`TrustedAuthors` refused the signer: it
    re-runs every cryptographic check so that a forged signature is reported as invalid
    rather than as an untrusted signer. Its success never lets anything be installed.
    """

    def verify(self, cert: Certificate) -> None:
        del cert
        _logger.debug("re-verifying without an identity policy to classify a refusal")


def load_trusted_root(trusted_root: Path | None) -> TrustedRoot:
    """The public-good trusted root (offline) or the private instance's ``trusted_root``.

    A trusted root file that cannot be read or parsed is a configuration error
    (``policy_invalid``, exit 2).
    """
    if trusted_root is not None:
        try:
            return TrustedRoot.from_file(str(trusted_root))
        except (OSError, ValueError, SigstoreError) as exc:
            raise ConfigError(
                f"trusted_root {trusted_root} is not a usable Sigstore trusted root: {exc}",
                kind="policy_invalid",
            ) from exc
    try:
        return ClientTrustConfig.production(offline=True).trusted_root
    except (OSError, SigstoreError) as exc:
        # The offline TUF path copies the embedded root into the user's cache directory; if
        # that is not writable, read the same embedded root straight from the package.
        _logger.debug("falling back to the embedded trusted root: %s", exc)
        embedded = resources.files("sigstore._store").joinpath(
            quote(_PUBLIC_GOOD_TUF_URL, safe=""), "trusted_root.json"
        )
        with resources.as_file(embedded) as path:
            return TrustedRoot.from_file(str(path))


def load_verifier(trusted_root: Path | None) -> Verifier:
    """A verifier over :func:`load_trusted_root` (what ``Verifier.production(offline=True)``
    builds when ``trusted_root`` is ``None``)."""
    root = load_trusted_root(trusted_root)
    try:
        return Verifier(trusted_root=root)
    except SigstoreError as exc:
        raise ConfigError(
            f"the Sigstore trusted root is unusable: {exc}", kind="policy_invalid"
        ) from exc


def hash_artifact(artifact: Path) -> Hashed:
    """SHA-256 of ``artifact``, streamed so memory stays flat in the asset size."""
    digest = hashlib.sha256()
    with artifact.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return Hashed(algorithm=HashAlgorithm.SHA2_256, digest=digest.digest())


def untrusted_signer_error(
    signer: Signer, authors: Sequence[AuthorPolicy], owner: str | None, name: str
) -> SignerUntrustedError:
    if not authors and owner is None:
        reason = "the trust policy has no [[authors]] entry"
    elif not authors:
        reason = f"the trust policy has no [[authors]] entry for owner {owner!r}"
    else:
        reasons = [rejection_reason(author, signer) or "" for author in authors]
        reason = "; ".join(reason for reason in reasons if reason)
    return SignerUntrustedError(
        f"{name} is signed by {signer.identity} (issuer {signer.issuer}), "
        f"which is not trusted: {reason}",
        identity=signer.identity,
        issuer=signer.issuer,
        details={"repository": signer.repository},
    )


def check_recorded_digest(artifact: Path, document: dict[str, Any], name: str) -> None:
    """The digest a bundle records (``messageSignature.messageDigest``) must be the file's."""
    recorded = (document.get("messageSignature") or {}).get("messageDigest")
    if not recorded:
        return
    try:
        digest = base64.b64decode(recorded["digest"], validate=True)
    except (KeyError, TypeError, ValueError, binascii.Error) as exc:
        raise SignatureInvalidError(f"{name}: unreadable message digest") from exc
    if recorded.get("algorithm") != "SHA2_256" or digest != hash_artifact(artifact).digest:
        raise SignatureInvalidError(f"{name}: the bundle's message digest is not this file's")
