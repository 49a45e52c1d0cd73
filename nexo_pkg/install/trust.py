"""Signature trust: the ``trusted_keys.toml`` policy and verification of release signatures.

Provisional implementation of the interface used by the install pipeline: it resolves the
mode and fails closed whenever signature material is present, because nothing here can
verify it yet. The full implementation keeps these names and signatures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from nexo_pkg.errors import NexoError

Mode = Literal["ignore", "warn", "require"]

# Suffixes appended to an asset name under which signature material is looked up, in order.
SIGNATURE_SUFFIXES: tuple[str, ...] = (
    ".sigstore.json",
    ".sigstore",
    ".bundle",
    ".sig",
    ".pem",
    ".cert",
)


@dataclass(frozen=True)
class TrustPolicy:
    """A parsed ``trusted_keys.toml`` (or the built-in default when the file is missing)."""

    default: Mode = "warn"
    authors: tuple[Mapping[str, Any], ...] = ()
    source: Path | None = None


@dataclass(frozen=True)
class SignatureOutcome:
    """What the signature step concluded; stored in the receipt and the ``--json`` output."""

    status: Literal["verified", "unsigned", "skipped"]
    identity: str | None = None
    issuer: str | None = None
    bundle_sha256: str | None = None
    warnings: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "identity": self.identity,
            "issuer": self.issuer,
            "bundle_sha256": self.bundle_sha256,
        }


def default_policy_path(nexo_home: Path) -> Path:
    return nexo_home / "config" / "extensions" / "trusted_keys.toml"


def load_policy(path: Path, *, explicit: bool = False) -> TrustPolicy:
    """Load the policy at ``path``. A missing default file means ``warn`` with no authors.

    An explicitly named file (``--trusted-keys``) that is missing, and any invalid file,
    raise :class:`NexoError` with kind ``policy_invalid`` (exit 2).
    """
    if not path.exists():
        if explicit:
            raise NexoError(
                f"trust policy {path} does not exist", kind="policy_invalid", exit_code=2
            )
        return TrustPolicy()
    return TrustPolicy(source=path)


def resolve_mode(
    policy: TrustPolicy, owner: str | None, *, require_signature: bool, skip_verify: bool
) -> Mode:
    """Flags win, then the matching author's ``mode``, then the policy ``default``."""
    if skip_verify:
        return "ignore"
    if require_signature:
        return "require"
    for author in policy.authors:
        if owner is not None and author.get("owner") == owner and "mode" in author:
            mode: Mode = author["mode"]
            return mode
    return policy.default


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

    Raises :class:`NexoError` with kind ``signature_missing``, ``signature_invalid`` or
    ``signer_untrusted``; returns the outcome otherwise.
    """
    del artifact, owner, repo, policy
    if mode == "ignore":
        return SignatureOutcome(status="skipped")
    if material:
        raise NexoError(
            f"signature material for {asset_name} cannot be verified",
            kind="signature_invalid",
        )
    if mode == "require":
        raise NexoError(
            f"no signature found for {asset_name} and the trust policy requires one",
            kind="signature_missing",
        )
    return SignatureOutcome(
        status="unsigned", warnings=(f"{asset_name} is not signed; installing unverified",)
    )
