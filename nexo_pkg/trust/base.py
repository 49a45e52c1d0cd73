"""The shared ground of the trust package: errors, signature material and outcomes.

Every verifier and the entry the install pipeline calls build on these types only; nothing
here imports Sigstore or parses certificates, so the unsigned path stays cheap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.files import read_capped_bytes
from nexo_pkg.trust.policy import MAX_TRUSTED_ROOT_BYTES, AuthorPolicy

# The signing schemes a verifier exists for, as recorded in receipts.
Scheme = Literal["sigstore-bundle", "github-attestation", "checksums-file", "cosign-legacy"]


class SignatureError(NexoError):
    """The signature step refused the asset (exit 1)."""

    kind = "signature_invalid"


class SignatureMissingError(SignatureError):
    """No signature material, and the policy requires one."""

    kind = "signature_missing"


class SignatureInvalidError(SignatureError):
    """Material is present but is not a valid signature over this asset."""


class SignerUntrustedError(SignatureError):
    """The signature is cryptographically valid, but its signer is not trusted for the owner.

    ``identity`` and ``issuer`` are what the certificate says (also in ``details``).
    """

    kind = "signer_untrusted"

    def __init__(
        self,
        message: str,
        *,
        identity: str | None,
        issuer: str | None,
        details: dict[str, Any] | None = None,
    ) -> None:
        merged = {"identity": identity, "issuer": issuer, **(details or {})}
        super().__init__(message, details=merged)
        self.identity = identity
        self.issuer = issuer


@dataclass(frozen=True)
class SignatureOutcome:
    """What the signature step concluded; stored in the receipt and the ``--json`` output,
    except ``warnings``, which the CLI must show loudly."""

    status: Literal["verified", "unsigned", "skipped"]
    identity: str | None = None
    issuer: str | None = None
    bundle_sha256: str | None = None
    warnings: tuple[str, ...] = field(default=())
    scheme: Scheme | None = None
    material: str | None = None
    claims: Mapping[str, str | None] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The receipt's and ``--json``'s ``signature`` object: ``scheme`` is the signing
        scheme that verified the asset, ``material`` the file or attestation that carried the
        signature, ``claims`` the certificate's GitHub claims."""
        return {
            "status": self.status,
            "identity": self.identity,
            "issuer": self.issuer,
            "bundle_sha256": self.bundle_sha256,
            "scheme": self.scheme,
            "material": self.material,
            "claims": dict(self.claims),
        }


@dataclass(frozen=True)
class TrustRequest:
    """Whom the policy trusts for one asset (``authors``, the candidate entries), and what
    is being installed (``owner``/``repo``/``tag``; ``None`` for a local file): a signature
    made in another repository, or for another tag, does not vouch for it."""

    authors: tuple[AuthorPolicy, ...] = ()
    trusted_root: Path | None = None
    owner: str | None = None
    repo: str | None = None
    tag: str | None = None


@dataclass(frozen=True)
class VerifiedSignature:
    """What a verifier proved: the trusted signer, and the scheme and material that did it."""

    identity: str
    issuer: str | None
    scheme: Scheme
    material: str
    claims: Mapping[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True)
class SignatureMaterial:
    """The signature files chosen for one asset (``name`` carries the signature): a Sigstore
    or legacy cosign ``bundle``, or a detached cosign ``signature`` and ``certificate``
    (either may be missing, which is refused)."""

    name: str
    bundle: Path | None = None
    signature: Path | None = None
    certificate: Path | None = None

    @property
    def primary(self) -> Path | None:
        """The file whose hash is recorded as ``bundle_sha256``."""
        return self.bundle or self.signature or self.certificate


def read_trusted_root(path: Path) -> bytes:
    """The bytes of a ``trusted_root`` file: a regular file (a link to one followed) of at
    most :data:`MAX_TRUSTED_ROOT_BYTES`; ``OSError``/``ValueError`` otherwise."""
    return read_capped_bytes(path, MAX_TRUSTED_ROOT_BYTES)


def proto_field(document: Mapping[str, Any], name: str) -> Any:
    """A Sigstore document's field ``name`` (its lowerCamelCase JSON name: a bundle's, a
    trusted root's), also when the document names it as in the ``.proto`` (``tlog_entries``):
    protobuf JSON readers take both, and so do sigstore-python's models and gh. ``None`` when
    absent."""
    if name in document:
        return document[name]
    return document.get("".join(f"_{c.lower()}" if c.isupper() else c for c in name))
