"""Legacy cosign signature material: a cosign ``.bundle`` or a detached ``.sig`` + certificate.

Not verified yet: every piece of legacy material is refused as ``signature_invalid`` with a
message saying how to re-sign, so that nothing is ever accepted unchecked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from nexo_pkg.install.policy import AuthorPolicy
from nexo_pkg.install.trust import SignatureInvalidError, SignatureMaterial

_RESIGN = (
    "legacy cosign material is not supported; re-sign with Sigstore bundles "
    "(cosign sign-blob --new-bundle-format --bundle <asset>.sigstore.json, or sigstore sign)"
)


def verify_legacy_bundle(
    artifact: Path,
    document: Mapping[str, Any],
    *,
    name: str,
    authors: Sequence[AuthorPolicy],
    trusted_root: Path | None,
    owner: str | None,
) -> NoReturn:
    """Refuse a legacy cosign bundle (``base64Signature``/``cert``/``rekorBundle``)."""
    del artifact, document, authors, trusted_root, owner
    raise SignatureInvalidError(f"{name}: {_RESIGN}")


def verify_detached(
    artifact: Path,
    material: SignatureMaterial,
    *,
    authors: Sequence[AuthorPolicy],
    trusted_root: Path | None,
    owner: str | None,
) -> NoReturn:
    """Refuse a detached ``.sig`` + ``.pem``/``.cert``: it has no log entry to check offline."""
    del artifact, authors, trusted_root, owner
    raise SignatureInvalidError(
        f"{material.name}: a detached signature without a Rekor bundle cannot be verified "
        f"offline; {_RESIGN}"
    )
