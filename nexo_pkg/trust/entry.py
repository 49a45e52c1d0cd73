"""The one entry of signature trust the install pipeline calls (SPEC §5 step 5, §6).

The pipeline calls, in order:

1. :func:`load_policy` (``--trusted-keys`` or :func:`default_policy_path`);
2. :func:`resolve_mode` for the release's owner and the command-line flags;
3. :func:`verify_asset_signature` with the downloaded, checksummed asset and the signature
   material found beside it (release assets named ``<asset><suffix>`` for each suffix of
   :data:`SIGNATURE_SUFFIXES`).

Verification fails closed: anything that is not a valid signature by a trusted signer raises
a :class:`SignatureError` (``signature_missing``, ``signature_invalid`` or
``signer_untrusted``). Sigstore is imported only when signature material is present, so
unsigned installs and ``lint`` never pay for it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from nexo_pkg.trust.base import (
    SignatureError,
    SignatureInvalidError,
    SignatureMaterial,
    SignatureMissingError,
    SignatureOutcome,
    SignerUntrustedError,
)
from nexo_pkg.trust.material import SIGNATURE_SUFFIXES, find_signature_material
from nexo_pkg.trust.policy import (
    GITHUB_ACTIONS_ISSUER,
    AuthorPolicy,
    Mode,
    TrustPolicy,
    read_policy_file,
)

if TYPE_CHECKING:
    from nexo_pkg.trust.verifiers.common import Signer

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
    bundle_sha256 = _sha256_file(found.primary) if found.primary is not None else None
    try:
        signer = _verify_material(
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


def _verify_material(
    artifact: Path,
    material: SignatureMaterial,
    *,
    authors: Sequence[AuthorPolicy],
    trusted_root: Path | None,
    owner: str | None,
) -> Signer:
    """Verify whichever kind of signature ``material`` is, with the verifier of its scheme.

    The verifiers are imported here, not at the top: they import Sigstore, which costs most
    of a second, and only signed assets need it.
    """

    from nexo_pkg.trust.verifiers import bundle as bundle_verifier  # noqa: PLC0415
    from nexo_pkg.trust.verifiers import cosign_legacy  # noqa: PLC0415
    from nexo_pkg.trust.verifiers.common import check_recorded_digest  # noqa: PLC0415

    if material.bundle is None:
        return cosign_legacy.verify_detached(
            artifact,
            material,
            authors=authors,
            trusted_root=trusted_root,
            owner=owner,
        )
    try:
        raw = material.bundle.read_bytes()
    except OSError as exc:
        raise SignatureInvalidError(f"{material.name} cannot be read: {exc}") from exc
    try:
        document = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SignatureInvalidError(f"{material.name} is not JSON: {exc}") from exc
    if isinstance(document, dict) and "mediaType" in document:
        promise_only = cosign_legacy.promise_only_v01_bundle(document)
        if promise_only is not None:
            check_recorded_digest(artifact, document, material.name)
            return cosign_legacy.verify_legacy_bundle(
                artifact,
                promise_only,
                name=material.name,
                authors=authors,
                trusted_root=trusted_root,
                owner=owner,
            )
        return bundle_verifier.verify_bundle(
            artifact,
            raw,
            name=material.name,
            authors=authors,
            trusted_root=trusted_root,
            owner=owner,
        )
    if isinstance(document, dict) and "base64Signature" in document:
        return cosign_legacy.verify_legacy_bundle(
            artifact,
            document,
            name=material.name,
            authors=authors,
            trusted_root=trusted_root,
            owner=owner,
        )
    raise SignatureInvalidError(
        f"{material.name} is neither a Sigstore bundle (mediaType) nor a cosign bundle "
        "(base64Signature)"
    )
