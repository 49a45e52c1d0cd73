"""What a release offers as signature material for one asset, and how it is picked."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from nexo_pkg.trust.base import SignatureMaterial

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
