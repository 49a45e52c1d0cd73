"""The Sigstore verifiers' common ground: trust root, bundle parser, sigstore-python's verifier.

Imported only when a signature is checked (Sigstore is slow to import). A verifier returns a
signer only for a signature verified end to end by sigstore-python's public API, whose log
entry and certificate authority pass the checks ``gh attestation verify`` adds
(:func:`check_log_and_authority`), *and* whose certificate satisfies one of the owner's
author entries (:mod:`~nexo_pkg.trust.verifiers.claims`). The trust root is the policy's
private ``trusted_root.json`` or the public-good one read offline
(:func:`~nexo_pkg.trust.verifiers.rootkeys.public_good_root`); both checks read the same bytes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from cryptography.x509 import Certificate
from sigstore.models import Bundle, TrustedRoot
from sigstore.verify import Verifier
from sigstore.verify.policy import VerificationPolicy
from sigstore_models.bundle.v1 import Bundle as BundleModel
from sigstore_models.trustroot import v1 as trustroot_v1

from nexo_pkg.core.errors import ConfigError, exception_line
from nexo_pkg.trust.base import SignatureInvalidError, TrustRequest
from nexo_pkg.trust.verifiers.claims import (
    Signer,
    TrustedAuthors,
    UntrustedSignerError,
    require_log_entry,
    untrusted_signer_error,
)
from nexo_pkg.trust.verifiers.rootkeys import (
    KeyCheckError,
    RootKeys,
    RootSource,
    check_authority,
    check_log_key,
    load_root_keys,
    root_source,
)

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
            raise SignatureInvalidError(f"{name}: {failure}: {exception_line(exc)}") from exc
        if check is not None:
            check(unchecked)
        raise untrusted_signer_error(signer, request, name, predicate_type=predicate_type) from None
    except Exception as exc:  # any failure inside the verifier fails closed
        raise SignatureInvalidError(f"{name}: {failure}: {exception_line(exc)}") from exc
    if check is not None:
        check(result)
    if policy.accepted is None:  # defensive: the verifier returned without our policy
        raise SignatureInvalidError(f"{name}: the signer was never checked against the policy")
    return result, policy.accepted


def load_verifier(source: RootSource) -> Verifier:
    """sigstore-python's verifier over the trusted root ``source``; a root its models refuse
    is ``policy_invalid`` (exit 2), whatever the bundle."""
    try:
        root = TrustedRoot(trustroot_v1.TrustedRoot.from_json(source.raw))
        return Verifier(trusted_root=root)
    except Exception as exc:  # whatever the models trip on, the root is unusable
        raise ConfigError(
            f"{source.description} is not a usable Sigstore trusted root: {exception_line(exc)}",
            kind="policy_invalid",
        ) from exc


def _log_entries(raw: bytes, name: str) -> list[tuple[bytes, datetime | None]]:
    """The ``logId`` key ID and integrated time (``None`` when zero: a log that vouches for no
    time) of each transparency-log entry of the bundle ``raw``, read by the parser
    sigstore-python's verifier reads it with: protobuf JSON names a field in lowerCamelCase
    or as in the ``.proto`` (``integratedTime`` or ``integrated_time``), and both are the same
    field to sigstore-python and to gh."""
    try:
        model = BundleModel.from_json(raw)
        return [
            (
                entry.log_id.key_id,
                datetime.fromtimestamp(entry.integrated_time, tz=UTC)
                if entry.integrated_time
                else None,
            )
            for entry in model.verification_material.tlog_entries
        ]
    except (ValueError, TypeError, OverflowError, OSError) as exc:
        raise SignatureInvalidError(f"{name}: unreadable transparency-log entry") from exc


def check_log_and_authority(
    keys: RootKeys, raw: bytes, certificate: Certificate, name: str
) -> None:
    """What ``gh attestation verify`` checks beyond sigstore-python, against the same trusted
    root: every log entry's ``logId`` names a log key of the root, valid at its integrated
    time, and the certificate authority that issued the certificate was valid then (a key or
    authority the root retires with ``validFor.end`` vouches for nothing logged after it)."""
    try:
        for key_id, integrated in _log_entries(raw, name):
            check_log_key(keys, key_id, integrated)
            if integrated is not None:
                check_authority(keys, certificate, integrated)
    except KeyCheckError as exc:
        raise SignatureInvalidError(f"{name}: {exc}") from exc


def verify_with_sigstore(
    verify: Callable[[Verifier, Bundle, VerificationPolicy], _T],
    raw: bytes,
    document: dict[str, Any],
    request: TrustRequest,
    *,
    name: str,
    failure: str,
    predicate_type: str | None = None,
    check: Callable[[_T], None] | None = None,
) -> tuple[_T, Signer]:
    """Verify the bundle ``raw`` (``document`` is its JSON) with sigstore-python's
    ``verify(verifier, bundle, policy)`` under the author policy (:func:`verify_trusted`),
    after the checks gh adds (:func:`check_log_and_authority`) on the same trusted root."""
    source = root_source(request.trusted_root)
    verifier = load_verifier(source)
    bundle = load_bundle(raw, document, name)
    check_log_and_authority(load_root_keys(source), raw, bundle.signing_certificate, name)
    return verify_trusted(
        lambda policy: verify(verifier, bundle, policy),
        bundle,
        request,
        name=name,
        failure=failure,
        predicate_type=predicate_type,
        check=check,
    )


def load_bundle(raw: bytes, document: dict[str, Any], name: str) -> Bundle:
    """Parse a Sigstore bundle (``raw``, already decoded as ``document``) for verification;
    one with no transparency-log entry is refused first (:func:`claims.require_log_entry`)."""
    require_log_entry(document, name)
    try:
        return Bundle.from_json(raw)
    except Exception as exc:  # whatever the parser trips on, the bundle is unusable
        raise SignatureInvalidError(
            f"{name} is not a valid Sigstore bundle: {exception_line(exc)}"
        ) from exc
