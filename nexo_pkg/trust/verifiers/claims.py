"""What a Sigstore signing certificate says and whether an author entry trusts it.

No Sigstore library is imported here: the claims are read from the certificate with
``cryptography``, so the legacy cosign verifier
(:mod:`~nexo_pkg.trust.verifiers.cosign_legacy`) applies the same author policy as the
sigstore-python path (:mod:`~nexo_pkg.trust.verifiers.common`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar
from urllib.parse import urlsplit

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

from nexo_pkg.trust.base import (
    Scheme,
    SignatureInvalidError,
    SignerUntrustedError,
    TrustRequest,
    VerifiedSignature,
    proto_field,
)
from nexo_pkg.trust.policy import AuthorPolicy

_T = TypeVar("_T")

OIDC_ISSUER_V1 = ObjectIdentifier("1.3.6.1.4.1.57264.1.1")
OIDC_ISSUER_V2 = ObjectIdentifier("1.3.6.1.4.1.57264.1.8")
GITHUB_WORKFLOW_REPOSITORY = ObjectIdentifier("1.3.6.1.4.1.57264.1.5")
SOURCE_REPOSITORY_URI = ObjectIdentifier("1.3.6.1.4.1.57264.1.12")
SIGSTORE_OTHERNAME = ObjectIdentifier("1.3.6.1.4.1.57264.1.7")
GITHUB_WORKFLOW_REF = ObjectIdentifier("1.3.6.1.4.1.57264.1.6")
BUILD_SIGNER_URI = ObjectIdentifier("1.3.6.1.4.1.57264.1.9")
RUNNER_ENVIRONMENT = ObjectIdentifier("1.3.6.1.4.1.57264.1.11")
SOURCE_REPOSITORY_REF = ObjectIdentifier("1.3.6.1.4.1.57264.1.14")
SOURCE_REPOSITORY_OWNER_URI = ObjectIdentifier("1.3.6.1.4.1.57264.1.16")
BUILD_CONFIG_URI = ObjectIdentifier("1.3.6.1.4.1.57264.1.18")


@dataclass(frozen=True)
class Signer:
    """Who a certificate says signed: SAN identities, OIDC issuer and the GitHub claims.

    ``identity`` is the identity that satisfied the policy (the first SAN before that is
    known); ``repository`` is the source repository's ``owner/name``; ``source_ref`` the ref
    the workflow ran for; ``build_signer_uri`` the workflow that signed (for a reusable
    workflow, the reusable one), ``build_config_uri`` the one that started the run.
    """

    identities: tuple[str, ...]
    issuer: str | None
    repository: str | None
    identity: str
    source_ref: str | None = None
    build_signer_uri: str | None = None
    build_config_uri: str | None = None
    runner_environment: str | None = None
    owner_uri: str | None = None

    @classmethod
    def from_certificate(cls, certificate: Certificate) -> Signer:
        """Read the signer out of a Fulcio-style certificate (never raises)."""
        identities = _san_identities(certificate)
        return cls(
            identities=identities,
            issuer=_oidc_issuer(certificate),
            repository=_source_repository(certificate, identities),
            identity=identities[0] if identities else "<no identity>",
            source_ref=_source_ref(certificate, identities),
            build_signer_uri=_utf8_extension(certificate, BUILD_SIGNER_URI),
            build_config_uri=_utf8_extension(certificate, BUILD_CONFIG_URI),
            runner_environment=_utf8_extension(certificate, RUNNER_ENVIRONMENT),
            owner_uri=_utf8_extension(certificate, SOURCE_REPOSITORY_OWNER_URI),
        )

    def verified(self, scheme: Scheme, material: str) -> VerifiedSignature:
        """What a verifier returns once this signer passed every check."""
        return VerifiedSignature(
            identity=self.identity,
            issuer=self.issuer,
            scheme=scheme,
            material=material,
            claims=self.claims(),
        )

    @property
    def owner(self) -> str | None:
        """The source repository's owner: the owner-URI claim (…1.16, what gh compares),
        else the source repository's first part."""
        if self.owner_uri:
            return urlsplit(self.owner_uri).path.strip("/") or None
        return self.repository.partition("/")[0] if self.repository else None

    @property
    def signer_workflow(self) -> str | None:
        """``owner/repo/.github/workflows/x.yml`` of the workflow that signed."""
        return _workflow_path(self.build_signer_uri)

    @property
    def tag(self) -> str | None:
        """The tag the signing run was for, when its ref is a tag (``refs/tags/<tag>``)."""
        if self.source_ref is not None and self.source_ref.startswith("refs/tags/"):
            return self.source_ref.removeprefix("refs/tags/")
        return None

    def reusable_workflow_elsewhere(self) -> str | None:
        """The signer workflow when it lives in another repository than the source one (a
        reusable workflow called across repositories), else ``None``."""
        workflow = self.signer_workflow
        if workflow is None or self.repository is None:
            return None
        home = "/".join(workflow.split("/")[:2])
        return None if _casefold_equal(home, self.repository) else workflow

    @property
    def san(self) -> str:
        """The certificate's signer as cosign and gh name it: its first SAN."""
        return self.identities[0] if self.identities else self.identity

    def identity_candidates(self) -> tuple[str, ...]:
        """What an author's identity may match: the SANs, then the starting workflow (a
        reusable workflow's certificate names the calling repository's workflow in the
        build-config claim; Fulcio vouches for both)."""
        extra = (self.build_config_uri,) if self.build_config_uri else ()
        return self.identities + tuple(e for e in extra if e not in self.identities)

    def claims(self) -> dict[str, str | None]:
        """The GitHub claims shown to the user and recorded in the receipt."""
        return {
            "source_repository": self.repository,
            "source_ref": self.source_ref,
            "signer_workflow": self.signer_workflow,
            "build_config_uri": self.build_config_uri,
            "runner_environment": self.runner_environment,
        }


def _workflow_path(uri: str | None) -> str | None:
    if not uri:
        return None
    path = urlsplit(uri.partition("@")[0]).path.strip("/")
    return path or None


def _der_utf8_string(raw: bytes) -> str | None:
    """Decode a DER UTF8String (tag 0x0C), the encoding of Fulcio's v2 extensions."""
    if len(raw) < 2 or raw[0] != 0x0C:
        return None
    length = raw[1]
    offset = 2
    if length & 0x80:
        count = length & 0x7F
        if count == 0 or count > 4:
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


def _raw_text(certificate: Certificate, oid: ObjectIdentifier) -> str | None:
    """A v1 extension's raw bytes as UTF-8 (``None`` when absent or not UTF-8)."""
    raw = _extension_bytes(certificate, oid)
    try:
        return raw.decode("utf-8") if raw is not None else None
    except UnicodeDecodeError:
        return None


def _oidc_issuer(certificate: Certificate) -> str | None:
    """The OIDC issuer: the DER-encoded v2 extension (…1.8), else the raw v1 one (…1.1)."""
    decoded = _utf8_extension(certificate, OIDC_ISSUER_V2)
    return decoded if decoded is not None else _raw_text(certificate, OIDC_ISSUER_V1)


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
    decoded = _utf8_extension(certificate, SOURCE_REPOSITORY_URI)
    if decoded:
        return _repository_from_url(decoded)
    legacy = _raw_text(certificate, GITHUB_WORKFLOW_REPOSITORY)
    if legacy is not None and legacy.count("/") == 1:
        return legacy
    for identity in identities:
        if identity.startswith("https://"):
            return _repository_from_url(identity)
    return None


def _utf8_extension(certificate: Certificate, oid: ObjectIdentifier) -> str | None:
    raw = _extension_bytes(certificate, oid)
    return _der_utf8_string(raw) if raw is not None else None


def _source_ref(certificate: Certificate, identities: Sequence[str]) -> str | None:
    """The ref the run was for: the source-ref claim (…1.14), else the legacy workflow-ref
    one (…1.6), else the ``@refs/…`` suffix of an ``https://`` SAN."""
    found = _utf8_extension(certificate, SOURCE_REPOSITORY_REF)
    if found:
        return found
    if _extension_bytes(certificate, GITHUB_WORKFLOW_REF) is not None:
        return _raw_text(certificate, GITHUB_WORKFLOW_REF) or None
    for identity in identities:
        if identity.startswith("https://") and "@refs/" in identity:
            # The first "@": a ref may hold one (git allows it), the workflow's path does not.
            return identity.partition("@")[2]
    return None


def _casefold_equal(left: str | None, right: str | None) -> bool:
    return left is not None and right is not None and left.casefold() == right.casefold()


def same_workflow(signed: str | None, named: str) -> bool:
    """``owner/repo/path`` exactly as the certificate's build-signer claim spells it, as gh
    compares ``--signer-workflow`` (a case-sensitive pattern over the SAN): the owner or
    repository in another case is not the workflow that signed."""
    return signed is not None and signed == named


def spelling_hint(signed: str | None, named: str) -> str:
    """A note for a ``named`` workflow that is not ``signed`` (:func:`same_workflow`) only by
    its case: it is compared exactly as the certificate writes it, so the operator can copy
    that spelling."""
    if signed is not None and signed.casefold() == named.casefold():
        return " (compared exactly as the certificate writes it)"
    return ""


def binding_reason(signer: Signer, request: TrustRequest) -> str | None:
    """Why the signature is not bound to the tag being installed (``None`` when it is): a
    signature made for a tag (``refs/tags/X`` in the source-ref claim or the SAN) vouches for
    that tag only, so a genuine signature of an old release cannot stand for a newer tag. (The
    source repository is each author entry's business: :func:`rejection_reason`.)"""
    signed_tag = signer.tag
    if request.tag is not None and signed_tag is not None and signed_tag != request.tag:
        return (
            f"it was signed for tag {signed_tag}, not for {request.tag} being installed "
            "(a signature of another release cannot vouch for this one)"
        )
    return None


def _owner_reason(author: AuthorPolicy, signer: Signer) -> str | None:
    """Why the signer is not of the entry's owner (``None`` when it is): the source
    repository's owner must be the entry's, on every path and whatever ``allow_republish``
    says; a reusable workflow of the owner called from another owner's repository does not
    make that repository's artifacts the owner's."""
    owner = signer.owner
    if signer.repository is None or owner is None:
        return (
            f"the certificate names no source repository, so nothing binds it to owner "
            f"{author.owner}"
        )
    if not _casefold_equal(owner, author.owner) or not _casefold_equal(
        signer.repository.partition("/")[0], author.owner
    ):
        return f"it was built in {signer.repository}, outside owner {author.owner}"
    return None


def _repository_reason(author: AuthorPolicy, signer: Signer, request: TrustRequest) -> str | None:
    if author.allow_republish or request.owner is None or signer.repository is None:
        return None
    if request.repo is not None:
        installed = f"{request.owner}/{request.repo}"
        if not _casefold_equal(signer.repository, installed):
            return (
                f"it was built in {signer.repository}, not in {installed} being installed "
                "from (set `allow_republish = true` on the author entry to trust "
                "republished artifacts)"
            )
        return None
    if not _casefold_equal(signer.repository.partition("/")[0], request.owner):
        return f"it was built in {signer.repository}, outside owner {request.owner}"
    return None


def rejection_reason(
    author: AuthorPolicy,
    signer: Signer,
    request: TrustRequest,
    *,
    predicate_type: str | None = None,
) -> str | None:
    """Why ``author`` does not trust ``signer`` for ``request`` (``None`` when it does),
    checked in order: issuer; identity (SAN or starting workflow, full match); the source
    repository's owner (always the entry's); ``repos``; ``signer_workflow``; ``source_ref``;
    the attestation's ``predicate_type``; the repository installed from."""
    if signer.issuer != author.oidc_issuer:
        return f"issuer {signer.issuer!r} is not {author.oidc_issuer!r}"
    candidates = signer.identity_candidates()
    matched = [identity for identity in candidates if author.identity_matches(identity)]
    if not matched:
        shown = ", ".join(candidates) or "none"
        return f"identity {shown} does not match {author.describe_identity()}"
    elsewhere = signer.reusable_workflow_elsewhere()
    if (
        elsewhere is not None
        and author.signer_workflow is None
        and not any(identity in signer.identities for identity in matched)
    ):
        # As gh attestation verify: naming the calling repository's workflow is not enough
        # when a reusable workflow of another repository signed; that one must be named.
        return (
            f"it was signed by {elsewhere}, a reusable workflow of another repository than "
            f"{signer.repository}; name it (signer_workflow = {elsewhere!r}) to trust it"
        )
    owner = _owner_reason(author, signer)
    if owner is not None:
        return owner
    if author.repos is not None:
        repository = str(signer.repository)
        if repository.partition("/")[2].casefold() not in {n.casefold() for n in author.repos}:
            named = ", ".join(f"{author.owner}/{name}" for name in author.repos)
            return f"repository {repository} is not one of {named}"
    if author.signer_workflow is not None and not same_workflow(
        signer.signer_workflow, author.signer_workflow
    ):
        hint = spelling_hint(signer.signer_workflow, author.signer_workflow)
        return (
            f"signer workflow {signer.signer_workflow or 'none'} is not "
            f"{author.signer_workflow}{hint}"
        )
    if author.source_ref is not None and not author.source_ref_matches(signer.source_ref or ""):
        return f"source ref {signer.source_ref or 'none'} does not match {author.source_ref!r}"
    if predicate_type is not None and predicate_type != author.attestation_predicate_type:
        return (
            f"the attestation's predicate type {predicate_type} is not "
            f"{author.attestation_predicate_type}"
        )
    return _repository_reason(author, signer, request)


class UntrustedSignerError(Exception):
    """Raised by :class:`TrustedAuthors` so the caller can tell identity from crypto failures."""


class TrustedAuthors:
    """A sigstore-python verification policy: some author entry must trust the certificate,
    and the signature must be bound to what ``request`` installs.

    With no author entries it refuses every certificate (like sigstore's ``AllOf([])``).
    """

    def __init__(self, request: TrustRequest, *, predicate_type: str | None = None) -> None:
        self._request = request
        self._predicate_type = predicate_type
        self.accepted: Signer | None = None

    def verify(self, cert: Certificate) -> None:
        """Accept ``cert`` when an author trusts it; raise ``VerificationError`` otherwise."""
        self.accept(cert)

    def accept(self, cert: Certificate) -> Signer:
        """The signer of ``cert`` an author trusts (also kept as :attr:`accepted`); raises
        :class:`UntrustedSignerError` when none does."""
        signer = Signer.from_certificate(cert)
        if binding_reason(signer, self._request) is not None:
            raise UntrustedSignerError("the signature is bound to another release")
        for author in self._request.authors:
            reason = rejection_reason(
                author, signer, self._request, predicate_type=self._predicate_type
            )
            if reason is None:
                # The identity recorded is the SAN (what cosign and gh show), the source
                # repository and the calling workflow stay beside it in the claims.
                matched = next((i for i in signer.identities if author.identity_matches(i)), None)
                self.accepted = replace(signer, identity=matched or signer.san)
                return self.accepted
        raise UntrustedSignerError("no trusted author accepts the signing certificate")


def untrusted_signer_error(
    signer: Signer, request: TrustRequest, name: str, *, predicate_type: str | None = None
) -> SignerUntrustedError:
    """The refusal of a valid signature: every author entry's reason, and what was seen."""
    owner = request.owner
    bound = binding_reason(signer, request)
    if bound is not None:
        reason = bound
    elif not request.authors and owner is None:
        reason = "the trust policy has no [[authors]] entry"
    elif not request.authors:
        reason = f"the trust policy has no [[authors]] entry for owner {owner!r}"
    else:
        reasons = [
            rejection_reason(author, signer, request, predicate_type=predicate_type) or ""
            for author in request.authors
        ]
        reason = "; ".join(reason for reason in reasons if reason)
    return SignerUntrustedError(
        f"{name} is signed by {signer.identity} (issuer {signer.issuer}), "
        f"which is not trusted: {reason}",
        identity=signer.identity,
        issuer=signer.issuer,
        details={
            "repository": signer.repository,
            "claims": signer.claims(),
            "bound": bound,
            # An attestation's: an entry that trusts the signer must accept it too.
            **({"predicate_type": predicate_type} if predicate_type is not None else {}),
        },
    )


def require_log_entry(document: dict[str, Any], name: str) -> None:
    """Refuse a bundle with no transparency-log entry (GitHub's Sigstore instance for private
    repositories signs with RFC 3161 timestamps only), with that reason rather than a
    parser's complaint."""
    material = proto_field(document, "verificationMaterial")
    if isinstance(material, dict) and not proto_field(material, "tlogEntries"):
        timestamps = proto_field(material, "timestampVerificationData")
        timestamped = isinstance(timestamps, dict) and bool(
            proto_field(timestamps, "rfc3161Timestamps")
        )
        raise SignatureInvalidError(
            f"{name} has no transparency-log entry"
            + (
                " (it comes from GitHub's Sigstore instance for private repositories, which "
                "signs with RFC 3161 timestamps only)"
                if timestamped
                else ""
            )
            + "; nexo-pkg verifies only bundles logged in a Sigstore transparency log"
        )


def accept_verified(
    certificate: Certificate,
    request: TrustRequest,
    *,
    name: str,
    verified: _T,
    predicate_type: str | None = None,
    check: Callable[[_T], None] | None = None,
) -> Signer:
    """The author entry's view of a certificate whose signature passed every cryptographic
    check: ``check(verified)`` first (a signature about another file is invalid whoever made
    it), then :class:`TrustedAuthors`; :class:`SignerUntrustedError` when no entry trusts it."""
    if check is not None:
        check(verified)
    try:
        return TrustedAuthors(request, predicate_type=predicate_type).accept(certificate)
    except UntrustedSignerError:
        signer = Signer.from_certificate(certificate)
        raise untrusted_signer_error(signer, request, name, predicate_type=predicate_type) from None
