"""The sigstore-python path of the Sigstore verifiers: trust root, bundle parser, verifier.

Imported only for a bundle the direct verifier (:mod:`~nexo_pkg.trust.verifiers.direct`) does
not vouch for by itself (Sigstore is slow to import). A verifier returns a signer only for a
signature verified end to end by sigstore-python *and* whose certificate satisfies one of the
owner's author entries (:mod:`~nexo_pkg.trust.verifiers.claims`). The trust root is Sigstore's
public-good instance, embedded in sigstore-python and used offline, or the policy's private
``trusted_root.json``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from cryptography.x509 import Certificate
from sigstore.errors import Error as SigstoreError
from sigstore.models import Bundle, ClientTrustConfig, TrustedRoot
from sigstore.verify import Verifier
from sigstore.verify.policy import VerificationPolicy
from sigstore_models.trustroot import v1 as trustroot_v1

from nexo_pkg.core.errors import ConfigError
from nexo_pkg.trust.base import SignatureInvalidError, TrustRequest, read_trusted_root
from nexo_pkg.trust.verifiers.claims import (
    Signer,
    TrustedAuthors,
    UntrustedSignerError,
    require_log_entry,
    untrusted_signer_error,
)
from nexo_pkg.trust.verifiers.rootkeys import public_good_root_file

_logger = logging.getLogger(__name__)
_T = TypeVar("_T")

# sigstore-python reports through `logging`; without a handler Python's last-resort handler
# would print its warnings (such as "TUF repository is loaded in offline mode") on stderr.
logging.getLogger("sigstore").addHandler(logging.NullHandler())


class UnsafeIdentityCheckedSeparately:
    """A policy that accepts any certificate identity.

    Used only to classify a failure after :class:`TrustedAuthors` refused the signer: it
    re-runs every cryptographic check so that a forged signature is reported as invalid
    rather than as an untrusted signer. Its success never lets anything be installed.
    """

    def verify(self, cert: Certificate) -> None:
        del cert
        _logger.debug("re-verifying without an identity policy to classify a refusal")


def verify_trusted(
    verify: Callable[[VerificationPolicy], _T],
    bundle: Bundle,
    request: TrustRequest,
    *,
    name: str,
    failure: str,
    predicate_type: str | None = None,
    check: Callable[[_T], None] | None = None,
) -> tuple[_T, Signer]:
    """Run sigstore-python's ``verify`` under :class:`TrustedAuthors`: its result and the
    accepted signer. Any failure inside the verifier fails closed
    (:class:`SignatureInvalidError`, ``name: failure: …``). A signer no author trusts is
    verified again without an identity policy, and checked by ``check``, so that a forged
    signature is reported as invalid rather than as an untrusted signer; then
    :class:`SignerUntrustedError`."""
    policy = TrustedAuthors(request, predicate_type=predicate_type)
    try:
        result = verify(policy)
    except UntrustedSignerError:
        signer = Signer.from_certificate(bundle.signing_certificate)
        try:
            unchecked = verify(UnsafeIdentityCheckedSeparately())
        except Exception as exc:  # any failure inside the verifier fails closed
            raise SignatureInvalidError(f"{name}: {failure}: {exc}") from exc
        if check is not None:
            check(unchecked)
        raise untrusted_signer_error(signer, request, name, predicate_type=predicate_type) from None
    except Exception as exc:  # any failure inside the verifier fails closed
        raise SignatureInvalidError(f"{name}: {failure}: {exc}") from exc
    if check is not None:
        check(result)
    if policy.accepted is None:  # defensive: the verifier returned without our policy
        raise SignatureInvalidError(f"{name}: the signer was never checked against the policy")
    return result, policy.accepted


def load_trusted_root(trusted_root: Path | None) -> TrustedRoot:
    """The public-good trusted root (offline) or the private instance's ``trusted_root``; a
    file that cannot be read or parsed is ``policy_invalid`` (exit 2)."""
    if trusted_root is not None:
        try:
            return TrustedRoot(trustroot_v1.TrustedRoot.from_json(read_trusted_root(trusted_root)))
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
        return TrustedRoot.from_file(str(public_good_root_file()))


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


def load_bundle(raw: bytes, document: dict[str, Any], name: str) -> Bundle:
    """Parse a Sigstore bundle (``raw``, already decoded as ``document``) for verification;
    one with no transparency-log entry is refused first (:func:`claims.require_log_entry`)."""
    require_log_entry(document, name)
    try:
        return Bundle.from_json(raw)
    except Exception as exc:  # whatever the parser trips on, the bundle is unusable
        raise SignatureInvalidError(f"{name} is not a valid Sigstore bundle: {exc}") from exc
