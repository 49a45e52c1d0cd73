"""The one entry of signature trust the install pipeline calls (SPEC §5 step 5, §6): with the
policy loaded (:func:`~nexo_pkg.trust.policy.load_policy`) and the mode resolved for the
release's owner and the flags (:func:`~nexo_pkg.trust.policy.resolve_mode`, beside the policy,
so that a fetch decides its mode before this module and its material readers load), it
verifies the downloaded, checksummed asset against the signature material found beside it
(:func:`verify_asset_signature`).

Verification fails closed: anything that is not a valid signature by a trusted signer raises
a :class:`SignatureError` (``signature_missing``, ``signature_invalid`` or
``signer_untrusted``). Sigstore is imported only when signature material is present, so
unsigned installs and ``lint`` never pay for it.
"""

from __future__ import annotations

import contextlib
import hashlib
import shlex
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from nexo_pkg.core.files import sha256_file
from nexo_pkg.trust.base import (
    SignatureError,
    SignatureInvalidError,
    SignatureMaterial,
    SignatureMissingError,
    SignatureOutcome,
    SignerUntrustedError,
    TrustRequest,
    VerifiedSignature,
    proto_field,
)
from nexo_pkg.trust.material import (
    ATTESTATION_SUFFIX,
    BUNDLE_SUFFIXES,
    MAX_ATTESTATION_BYTES,
    MAX_BUNDLE_BYTES,
    MAX_CHECKSUMS_BYTES,
    SIGNATURE_SUFFIXES,
    Material,
    attestations_name,
    checksums_attestations_name,
    find_signature_material,
    is_checksums_file,
    parse_json_document,
    read_material,
    split_bundles,
)
from nexo_pkg.trust.policy import AuthorPolicy, Mode, TrustPolicy


@dataclass(frozen=True)
class _Offer:
    """The signature material of one scheme, in the order schemes are tried."""

    kind: Literal["bundle", "attestations", "checksums", "detached"]
    name: str
    value: Path | bytes
    found: SignatureMaterial | None = None
    checksums_name: str | None = None
    checksums_value: Path | bytes | None = None


def _offers(asset_name: str, material: Material) -> list[_Offer]:
    """What ``material`` offers for ``asset_name``: its own bundle, attestations (local and
    from the API), signed checksums files, and last a detached cosign signature."""
    offers: list[_Offer] = []
    own = find_signature_material(asset_name, material)
    if own is not None and own.bundle is not None:
        offers.append(_Offer("bundle", own.name, own.bundle, found=own))
    # Attestations fetched from the API are offered under the digest they were asked for.
    api = sorted(name for name in material if name.startswith(attestations_name("")))
    for name in (asset_name + ATTESTATION_SUFFIX, *api):
        value = material.get(name)
        if value is not None:
            offers.append(_Offer("attestations", name, value))
    for checksums_name in _checksums_files(asset_name, material):
        # Its own bundle or attestations beside it, else its attestations from the API.
        api_prefix = checksums_attestations_name(checksums_name, "").removesuffix("sha256:)")
        names = [checksums_name + suffix for suffix in (*BUNDLE_SUFFIXES, ATTESTATION_SUFFIX)]
        names += sorted(name for name in material if name.startswith(api_prefix))
        signature_name = next((name for name in names if name in material), None)
        if signature_name is not None:
            offers.append(
                _Offer(
                    "checksums",
                    signature_name,
                    material[signature_name],
                    checksums_name=checksums_name,
                    checksums_value=material[checksums_name],
                )
            )
    if own is not None and own.bundle is None:
        offers.append(_Offer("detached", own.name, own.primary or Path(), found=own))
    return offers


def _checksums_files(asset_name: str, material: Material) -> list[str]:
    """The checksums files of ``material`` in the order they are offered: those that list
    ``asset_name`` first (a release may sign one for its other files too, which says nothing
    about this one), each group by name. One that cannot be read stays in the first group, so
    that its refusal is not skipped."""
    names = sorted(name for name in material if is_checksums_file(name))
    if len(names) < 2:
        return names
    from nexo_pkg.trust.verifiers.checksums import listed_digests  # noqa: PLC0415

    def says_nothing(name: str) -> bool:
        try:
            raw = read_material(material[name], name, limit=MAX_CHECKSUMS_BYTES)
        except SignatureInvalidError:
            return False
        return not listed_digests(raw.decode("utf-8", errors="replace"), asset_name)

    return sorted(names, key=says_nothing)


def verify_asset_signature(
    artifact: Path,
    *,
    asset_name: str,
    material: Material,
    owner: str | None,
    repo: str | None,
    policy: TrustPolicy,
    mode: Mode,
    tag: str | None = None,
    required_by: str | None = None,
    doing: str = "installing",
    looked_for: str | None = None,
) -> SignatureOutcome:
    """Verify ``artifact`` against the signature ``material`` (name -> local path or bytes).
    ``required_by`` says why a signature is required when ``mode`` is ``require`` (default:
    the install flag or the trust policy); ``doing`` is what the caller does with an unsigned
    artifact under ``warn`` (``installing``, ``locking``), for its warning; ``looked_for``
    says where a missing signature was looked for, when not beside the asset (a registry).

    * ``ignore``: nothing is read; ``skipped``.
    * no material: ``require`` raises :class:`SignatureMissingError`; ``warn`` returns
      ``unsigned`` with a warning.
    * material present (any mode but ``ignore``): the first scheme that offers material
      decides, in this order — the asset's own Sigstore bundle, attestations (any one of them
      verified and trusted suffices), a signed checksums file, a detached cosign signature. It
      must be a valid signature over the artifact (:class:`SignatureInvalidError` otherwise) by
      a signer the owner's author entries trust and bound to ``owner/repo`` and ``tag``
      (:class:`SignerUntrustedError` otherwise). The one exception: under ``warn`` an owner
      with *no* author entry gets a valid signature recorded as ``unsigned`` with a warning,
      because nothing says whom to trust and stripping the signature would give the same.

    ``owner``/``repo``/``tag`` say what is installed (``None`` for a local tarball: then every
    author entry of the policy is a candidate, and nothing is known to bind to).
    """
    warnings = policy.warnings
    if mode == "ignore":
        return SignatureOutcome(
            status="skipped",
            warnings=(
                *warnings,
                f"signature verification is off (mode ignore): {asset_name} not verified",
            ),
        )
    offers = _offers(asset_name, material)
    # A local tarball has no GitHub owner: any entry deciding for its owner may vouch for its
    # signer (the certificate names the repository, and the owner is always bound).
    authors = policy.authors_for(owner) if owner is not None else policy.deciding_authors()
    source = f"{owner}/{repo}" if owner and repo else (owner or asset_name)
    if not offers:
        if mode == "require":
            why = required_by or f"--require-signature or the trust policy, {_policy_name(policy)}"
            looked_for = looked_for or (
                f"{', '.join(asset_name + s for s in SIGNATURE_SUFFIXES[:4])}, attestations and "
                "a signed checksums file"
            )
            raise SignatureMissingError(
                f"{asset_name} has no signature (looked for {looked_for}) and a signature is "
                f"required for {source} "
                f"({why})",
                details={"asset": asset_name, "policy": _policy_name(policy)},
            )
        remedy = 'set `default = "require"` in trusted_keys.toml or pass'
        if policy.default != "warn" and any(a.mode == "warn" for a in authors):
            # No flag says warn: the owner's author entry did, and the default would refuse.
            remedy = (
                f'the author entry for {owner!r} says `mode = "warn"`; set it to "require" or pass'
            )
        return SignatureOutcome(
            status="unsigned",
            warnings=(
                *warnings,
                f"WARNING: {asset_name} is NOT SIGNED; {doing} it unverified "
                f"({remedy} --require-signature to refuse unsigned plugins)",
            ),
        )
    request = TrustRequest(
        authors=authors, trusted_root=policy.trusted_root, owner=owner, repo=repo, tag=tag
    )
    offer = offers[0]
    try:
        verified = _verify_offer(artifact, asset_name, offer, request)
    except SignerUntrustedError as untrusted:
        remedied = _with_remedy(untrusted, policy, owner, repo)
        if authors or mode != "warn" or untrusted.details.get("bound"):
            if warnings:
                # Said with the refusal: an entry an earlier one hides may be why it refuses.
                remedied.details["policy_warnings"] = list(warnings)
            raise remedied from None
        command = remedied.details.get("trust_command")
        how = f"run: {command}" if command else "add an author entry for it"
        # A local file has no owner: no entry at all could vouch for its signer.
        whose = f" for {owner!r}" if owner is not None else ""
        return SignatureOutcome(
            status="unsigned",
            bundle_sha256=_material_sha256(offer),
            warnings=(
                *warnings,
                f"WARNING: {asset_name} carries a valid signature by {untrusted.identity} "
                f"(issuer {untrusted.issuer}), but {_policy_name(policy)} has no [[authors]] "
                f"entry{whose}; installing it as UNVERIFIED. To trust this signer, {how}",
            ),
        )
    return SignatureOutcome(
        status="verified",
        identity=verified.identity,
        issuer=verified.issuer,
        bundle_sha256=_material_sha256(offer),
        warnings=warnings,
        scheme=verified.scheme,
        material=verified.material,
        claims=verified.claims,
    )


def _material_sha256(offer: _Offer) -> str | None:
    """The hash recorded as ``bundle_sha256``: of the material that verified (read only once
    it did, so an oversized file is never hashed whole)."""
    if offer.found is not None and offer.found.primary is not None:
        return sha256_file(offer.found.primary)
    if isinstance(offer.value, bytes):
        return hashlib.sha256(offer.value).hexdigest()
    return sha256_file(offer.value)


def _policy_name(policy: TrustPolicy) -> str:
    """The policy file, or where it would go (and that it does not exist yet)."""
    if policy.source is not None:
        return str(policy.source)
    if policy.location is not None:
        return f"{policy.location} (not created yet)"
    return "trusted_keys.toml (not created yet)"


def _with_remedy(
    error: SignerUntrustedError, policy: TrustPolicy, owner: str | None, repo: str | None
) -> SignerUntrustedError:
    """``error`` naming the policy file and the command and entry that would trust the signer
    it saw (nothing is suggested for a signature bound to another release). Every remedy
    printed works when followed: the entry accepts the attestation's predicate type, a
    pasted entry is said to go before an earlier one of the owner that would hide it, and
    where no entry added beside an earlier one would be read, that entry is named instead.
    A verdict of ``trust verify --owner/--repo`` (no policy file decides) names the flags."""
    if error.details.get("bound"):
        return error
    claims = error.details.get("claims") or {}
    built_in = claims.get("source_repository")
    if (
        owner is not None
        and repo is not None
        and isinstance(built_in, str)
        and built_in.casefold() != f"{owner}/{repo}".casefold()
    ):
        return error  # no entry for this repository can trust a signature made elsewhere
    # Loaded for an untrusted signer only: reading the mode of an artifact never needs it.
    from nexo_pkg.trust.suggest import (  # noqa: PLC0415
        author_entry_toml,
        suggest_author,
        trust_add_command,
    )

    predicate_type = error.details.get("predicate_type")
    suggestion = suggest_author(
        identity=error.identity,
        issuer=error.issuer,
        claims=claims,
        owner=owner,
        repo=repo,
        predicate_type=predicate_type if isinstance(predicate_type, str) else None,
    )
    if suggestion is None:
        return error
    path = policy.source or policy.location
    if path is None:
        return _with_flags_remedy(error, policy, suggestion)
    hiding = next((a for a in policy.authors if a.covers(suggestion)), None)
    if hiding is not None and suggestion.covers(hiding):
        # Hidden wherever it goes (or already there): `trust add` would refuse or change
        # nothing, and a pasted copy would be ignored. Only that entry can be changed.
        scope = f"{suggestion.owner}/{', '.join(suggestion.repos or ())}".rstrip("/")
        return SignerUntrustedError(
            f"{error.message}. Policy: {_policy_name(policy)}. The [[authors]] entry for "
            f"{hiding.owner} at line {hiding.line} decides for {scope}, so an entry added "
            "beside it would be ignored: to trust this signer, change that entry",
            identity=error.identity,
            issuer=error.issuer,
            details={**error.details, "policy": _policy_name(policy), "entry_line": hiding.line},
        )
    command = trust_add_command(suggestion, repo=repo, policy_path=path)
    message = (
        f"{error.message}. Policy: {_policy_name(policy)}. To trust this signer, run `{command}`"
    )
    details = {
        **error.details,
        "policy": _policy_name(policy),
        "trust_command": command,
        "entry": author_entry_toml(suggestion),
    }
    if hiding is not None:
        # The first entry for an owner decides: appended after this one, it would be ignored.
        details["entry_before_line"] = hiding.line
    return SignerUntrustedError(
        message, identity=error.identity, issuer=error.issuer, details=details
    )


def _with_flags_remedy(
    error: SignerUntrustedError, policy: TrustPolicy, suggestion: AuthorPolicy
) -> SignerUntrustedError:
    """``error`` of a check the flags decide (``trust verify --owner/--repo``, no policy file):
    the flags that would trust the signer, when naming its issuer or the reusable workflow
    that signed is all it takes (a policy entry would not change that verdict)."""
    flags = policy.authors[0] if len(policy.authors) == 1 else None
    if flags is None or flags.identity is not None or suggestion.identity_regexp is None:
        return error  # no flags at all, a pinned signer, or no workflow signed
    if suggestion.predicate_type is not None:
        return error  # no flag of `trust verify` accepts another predicate type
    words: list[str] = []
    if suggestion.oidc_issuer != flags.oidc_issuer:
        words += ["--oidc-issuer", suggestion.oidc_issuer]
    if suggestion.signer_workflow is not None and flags.signer_workflow is None:
        words += ["--signer-workflow", suggestion.signer_workflow]
    if not words:
        return error
    flag_text = shlex.join(words)
    return SignerUntrustedError(
        f"{error.message}. To trust this signer, pass `{flag_text}`",
        identity=error.identity,
        issuer=error.issuer,
        details={**error.details, "trust_flags": flag_text},
    )


def _verify_offer(
    artifact: Path, asset_name: str, offer: _Offer, request: TrustRequest
) -> VerifiedSignature:
    # The verifiers are imported here, not at the top, and each only by the scheme that uses
    # it: they import Sigstore, which costs most of a second, and only signed assets need it.
    if offer.kind == "detached" and offer.found is not None:
        from nexo_pkg.trust.verifiers import cosign_legacy  # noqa: PLC0415

        return cosign_legacy.verify_detached(offer.found)
    if offer.kind in {"bundle", "attestations"}:
        try:
            if offer.kind == "bundle":
                return _verify_signature_file(artifact, offer.name, offer.value, request)
            return _verify_any_bundle(artifact, offer.name, offer.value, request)
        except SignatureInvalidError as error:
            # The verifiers name the file they read: a download is a blob named by its hash.
            error.message = error.message.replace(
                f" not about {artifact.name} (", f" not about {asset_name} ("
            )
            error.args = (error.message,)
            raise
    checksums_name = offer.checksums_name or ""
    raw = read_material(offer.checksums_value or b"", checksums_name, limit=MAX_CHECKSUMS_BYTES)
    with _scratch_copy(raw, checksums_name) as checksums_file:
        signed = _verify_signature_file(checksums_file, offer.name, offer.value, request)
    from nexo_pkg.trust.verifiers import checksums  # noqa: PLC0415

    checksums.check_listed(
        raw.decode("utf-8", errors="replace"),
        checksums_name=checksums_name,
        asset_name=asset_name,
        digest=sha256_file(artifact),
    )
    return replace(signed, scheme="checksums-file", material=f"{checksums_name} ({offer.name})")


@contextlib.contextmanager
def _scratch_copy(raw: bytes, name: str) -> Iterator[Path]:
    """``raw`` in a private temp file, so what is verified is exactly what was read."""
    with tempfile.TemporaryDirectory(prefix="nexo-trust-") as directory:
        path = Path(directory) / (Path(name).name or "material")
        path.write_bytes(raw)
        yield path


def _verify_signature_file(
    artifact: Path, name: str, value: Path | bytes, request: TrustRequest
) -> VerifiedSignature:
    """A bundle file: attestations (JSON lines, or the API's, held in memory) or one bundle
    of any kind (a bundle file that holds JSON lines, as ``gh attestation download`` writes
    them, is read as attestations too)."""
    if name.endswith(ATTESTATION_SUFFIX) or isinstance(value, bytes):
        return _verify_any_bundle(artifact, name, value, request)
    return _verify_any_bundle(artifact, name, value, request, limit=MAX_BUNDLE_BYTES)


def _verify_any_bundle(
    artifact: Path,
    name: str,
    value: Path | bytes,
    request: TrustRequest,
    *,
    limit: int = MAX_ATTESTATION_BYTES,
) -> VerifiedSignature:
    """Attestations: the first bundle that verifies and is trusted wins; otherwise the most
    telling refusal (an untrusted but valid signer before an invalid bundle)."""
    raw = read_material(value, name, limit=limit)
    bundles = split_bundles(raw, name)
    if len(bundles) > 1:
        # As gh reads attestations: a line that is no JSON document spoils the whole file,
        # even beside one that would verify.
        for bundle_name, bundle_raw in bundles:
            try:
                parse_json_document(bundle_raw, bundle_name)
            except SignatureInvalidError as error:
                error.message = (
                    f"{error.message}; a file of attestations with a line that is not JSON "
                    "is refused as a whole, as gh refuses it"
                )
                error.args = (error.message,)
                raise
    failures: list[SignatureError] = []
    for bundle_name, bundle_raw in bundles:
        try:
            return _verify_document(artifact, bundle_name, bundle_raw, request)
        except SignatureError as error:
            failures.append(error)
    if not failures:
        raise SignatureInvalidError(f"{name} holds no attestation")
    untrusted = [f for f in failures if isinstance(f, SignerUntrustedError)]
    chosen = untrusted[0] if untrusted else failures[0]
    if len(failures) > 1:
        chosen.message = f"{chosen.message} (and {len(failures) - 1} other attestation(s) failed)"
        chosen.args = (chosen.message,)
    raise chosen


def _verify_document(
    artifact: Path, name: str, raw: bytes, request: TrustRequest
) -> VerifiedSignature:
    """One bundle of any kind, told apart by its content."""
    # Imported here for the same reason as in _verify_offer: the claims, then only the
    # verifier of the kind of bundle at hand (an attestation never loads the legacy cosign
    # verifier, a message signature never the DSSE one), each importing Sigstore itself.
    from nexo_pkg.trust.verifiers import claims  # noqa: PLC0415

    document = parse_json_document(raw, name)
    if isinstance(document, dict) and proto_field(document, "mediaType") is not None:
        claims.require_log_entry(document, name)
        if proto_field(document, "dsseEnvelope") is not None:
            from nexo_pkg.trust.verifiers import attestation  # noqa: PLC0415

            return attestation.verify_attestation(
                artifact, raw, document, name=name, request=request
            )
        from nexo_pkg.trust.verifiers import bundle  # noqa: PLC0415

        return bundle.verify_bundle(artifact, raw, document, name=name, request=request)
    if isinstance(document, dict) and "base64Signature" in document:
        from nexo_pkg.trust.verifiers import cosign_legacy  # noqa: PLC0415

        return cosign_legacy.verify_legacy_bundle(artifact, document, name=name, request=request)
    raise SignatureInvalidError(
        f"{name} is neither a Sigstore bundle (mediaType) nor a cosign bundle (base64Signature)"
    )
