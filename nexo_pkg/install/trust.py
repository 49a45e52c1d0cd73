"""Signature trust: the ``trusted_keys.toml`` policy and verification of release signatures.

Step 5 of the install pipeline (SPEC §5, §6). The pipeline calls, in order:

1. :func:`load_policy` (``--trusted-keys`` or :func:`default_policy_path`);
2. :func:`resolve_mode` for the release's owner and the command-line flags;
3. :func:`verify_asset_signature` with the downloaded, checksummed asset and the signature
   material found beside it (release assets named ``<asset><suffix>`` for each suffix of
   :data:`SIGNATURE_SUFFIXES``).

Verification fails closed: anything that is not a valid signature by a trusted signer raises
a :class:`SignatureError` (``signature_missing``, ``signature_invalid`` or
``signer_untrusted``). Sigstore is imported only when signature material is present, so
unsigned installs and ``lint`` never pay for it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from nexo_pkg.errors import NexoError
from nexo_pkg.install.policy import (
    GITHUB_ACTIONS_ISSUER,
    AuthorPolicy,
    Mode,
    TrustPolicy,
    read_policy_file,
)

__all__ = [
    "GITHUB_ACTIONS_ISSUER",
    "SIGNATURE_SUFFIXES",
    "AuthorPolicy",
    "Mode",
    "SignatureError",
    "SignatureInvalidError",
    "SignatureMaterial",
    "SignatureMissingError",
    "SignatureOutcome",
    "SignerUntrustedError",
    "TrustPolicy",
    "default_policy_path",
    "find_signature_material",
    "load_policy",
    "resolve_mode",
    "verify_asset_signature",
]

# Suffixes appended to an asset name under which signature material is looked up, in order:
# Sigstore bundles first, then a (Sigstore or legacy cosign) `.bundle`, then a detached
# cosign signature with its certificate.
SIGNATURE_SUFFIXES: tuple[str, ...] = (
    ".sigstore.json",
    ".sigstore",
    ".bundle",
    ".sig",
    ".pem",
    ".cert",
)

_BUNDLE_SUFFIXES = (".sigstore.json", ".sigstore", ".bundle")
_CERTIFICATE_SUFFIXES = (".pem", ".cert")


class SignatureError(NexoError):
    """The signature step refused the asset (exit 1)."""

    kind = "signature_invalid"


class SignatureMissingError(SignatureError):
    """No signature material, and the policy requires one."""

    kind = "signature_missing"


class SignatureInvalidError(SignatureError):
    """Material is present but is not a valid signature over this asset."""

    kind = "signature_invalid"


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
    """What the signature step concluded; stored in the receipt and the ``--json`` output.

    ``warnings`` are messages the CLI must show loudly (they are not part of the receipt).
    """

    status: Literal["verified", "unsigned", "skipped"]
    identity: str | None = None
    issuer: str | None = None
    bundle_sha256: str | None = None
    warnings: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        """The receipt's and ``--json``'s ``signature`` object."""
        return {
            "status": self.status,
            "identity": self.identity,
            "issuer": self.issuer,
            "bundle_sha256": self.bundle_sha256,
        }


@dataclass(frozen=True)
class SignatureMaterial:
    """The signature files chosen for one asset.

    ``bundle`` is a Sigstore bundle or a legacy cosign bundle; otherwise ``signature`` and
    ``certificate`` are a detached cosign signature (either may be missing, which is refused).
    ``name`` is the file name that carries the signature, used in messages.
    """

    name: str
    bundle: Path | None = None
    signature: Path | None = None
    certificate: Path | None = None

    @property
    def primary(self) -> Path | None:
        """The file whose hash is recorded as ``bundle_sha256``."""
        return self.bundle or self.signature or self.certificate


def default_policy_path(nexo_home: Path) -> Path:
    """``$NEXO_HOME/config/extensions/trusted_keys.toml``."""
    return nexo_home / "config" / "extensions" / "trusted_keys.toml"


def load_policy(path: Path, *, explicit: bool = False) -> TrustPolicy:
    """Load the policy at ``path``. A missing default file means ``warn`` with no authors.

    An explicitly named file (``--trusted-keys``) that is missing, and any invalid file,
    raise :class:`NexoError` with kind ``policy_invalid`` (exit 2) and ``path:line`` in the
    message.
    """
    return read_policy_file(path, explicit=explicit)


def resolve_mode(
    policy: TrustPolicy, owner: str | None, *, require_signature: bool, skip_verify: bool
) -> Mode:
    """Flags win, then the owner's author entry's ``mode``, then the policy ``default``.

    When an owner has several entries, the first one that sets ``mode`` decides.
    """
    if skip_verify:
        return "ignore"
    if require_signature:
        return "require"
    for author in policy.authors_for(owner):
        if author.mode is not None:
            return author.mode
    return policy.default


def find_signature_material(
    asset_name: str, material: Mapping[str, Path]
) -> SignatureMaterial | None:
    """Pick the signature material for ``asset_name`` out of ``material`` (name -> path).

    Bundles win in :data:`SIGNATURE_SUFFIXES` order; otherwise a ``.sig`` with its ``.pem`` or
    ``.cert``. Files named for other assets are ignored. ``None`` when there is nothing.
    """
    for suffix in _BUNDLE_SUFFIXES:
        name = asset_name + suffix
        if name in material:
            return SignatureMaterial(name=name, bundle=material[name])
    signature_name = asset_name + ".sig"
    signature = material.get(signature_name)
    certificate_name = next(
        (asset_name + s for s in _CERTIFICATE_SUFFIXES if asset_name + s in material), None
    )
    certificate = material[certificate_name] if certificate_name else None
    if signature is None and certificate is None:
        return None
    return SignatureMaterial(
        name=signature_name if signature is not None else str(certificate_name),
        signature=signature,
        certificate=certificate,
    )


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify_asset_signature(
    artifact: Path,
    *,
    asset_name: str,
    material: Mapping[str, Path],
    owner: str | None,
    repo: str | None,
    policy: TrustPolicy,
    mode: Mode,
) -> SignatureOutcome:
    """Verify ``artifact`` against the signature ``material`` (file name -> local path).

    * ``ignore``: nothing is read; ``skipped``.
    * no material: ``require`` raises :class:`SignatureMissingError`; ``warn`` returns ``unsigned``
      with a warning.
    * material present (any mode but ``ignore``): it must be a valid signature over the
      artifact (:class:`SignatureInvalidError` otherwise) by a signer the owner's author entries
      trust (:class:`SignerUntrustedError` otherwise). The one exception: under ``warn`` an owner
      with *no* author entry gets a valid signature recorded as ``unsigned`` with a warning,
      because nothing says whom to trust and stripping the signature would give the same.

    ``repo`` is the repository installed from; it only appears in messages (the ``repos``
    limit is checked against the repository named by the signing certificate). ``owner`` is
    ``None`` for a local tarball: then every author entry of the policy is a candidate.
    """
    if mode == "ignore":
        return SignatureOutcome(
            status="skipped",
            warnings=(f"signature verification is off (mode ignore): {asset_name} not verified",),
        )
    found = find_signature_material(asset_name, material)
    # A local tarball has no GitHub owner: any author entry may vouch for its signer (the
    # identity itself names the repository).
    authors = policy.authors_for(owner) if owner is not None else policy.authors
    source = f"{owner}/{repo}" if owner and repo else (owner or asset_name)
    if found is None:
        if mode == "require":
            raise SignatureMissingError(
                f"{asset_name} has no signature (looked for "
                f"{', '.join(asset_name + s for s in SIGNATURE_SUFFIXES[:4])}) and the trust "
                f"policy requires one for {source}",
                details={"asset": asset_name},
            )
        return SignatureOutcome(
            status="unsigned",
            warnings=(
                f"WARNING: {asset_name} is NOT SIGNED; installing it unverified "
                '(set `default = "require"` in trusted_keys.toml or pass '
                "--require-signature to refuse unsigned plugins)",
            ),
        )

    # Imported here, not at the top: Sigstore costs most of a second to import and only
    # signed assets need it.
    from nexo_pkg.install.sigstore_verify import verify_material  # noqa: PLC0415

    bundle_sha256 = _sha256_file(found.primary) if found.primary is not None else None
    try:
        signer = verify_material(
            artifact,
            found,
            authors=authors,
            trusted_root=policy.trusted_root,
            owner=owner,
        )
    except SignerUntrustedError as untrusted:
        if authors or mode != "warn":
            raise
        return SignatureOutcome(
            status="unsigned",
            bundle_sha256=bundle_sha256,
            warnings=(
                f"WARNING: {asset_name} carries a valid signature by {untrusted.identity} "
                f"(issuer {untrusted.issuer}), but trusted_keys.toml has no [[authors]] entry "
                f"for {owner!r}; installing it as UNVERIFIED. Add an author entry to trust "
                "this signer.",
            ),
        )
    return SignatureOutcome(
        status="verified",
        identity=signer.identity,
        issuer=signer.issuer,
        bundle_sha256=bundle_sha256,
    )
