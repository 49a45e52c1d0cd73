"""What ``nexo plugin trust add|list|remove|verify`` decide, apart from the terminal.

The command line parses the flags, asks, and renders; this module turns what it parsed into
policy entries and verdicts: which author entry ``trust add`` writes (named by flags, or derived
from the signer a release was seen to have), which entries ``trust remove`` drops, the policy
``trust verify`` checks a file against and the signature material it offers, and the JSON shape
of an entry. Every refusal is a :class:`~nexo_pkg.core.errors.NexoError` with its kind.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from nexo_pkg.core.errors import EXIT_USAGE, NexoError, UsageError
from nexo_pkg.trust import entry as trust
from nexo_pkg.trust.base import SignatureMissingError, SignatureOutcome, SignerUntrustedError
from nexo_pkg.trust.identity_pattern import compile_identity_pattern, rust_regex_problem
from nexo_pkg.trust.material import (
    ATTESTATION_SUFFIX,
    BUNDLE_SUFFIXES,
    Material,
    is_checksums_file,
    local_material,
)
from nexo_pkg.trust.policy import (
    GITHUB_ACTIONS_ISSUER,
    MODES,
    AuthorPolicy,
    TrustPolicy,
    anchored_form,
    is_email_identity,
    is_workflow_path,
    widening_flag,
)
from nexo_pkg.trust.policy_edit import add_author, remove_authors
from nexo_pkg.trust.suggest import author_entry_toml, escape_pattern, suggest_author


def author_json(author: AuthorPolicy) -> dict[str, Any]:
    """``author`` as ``trust list --json`` and ``trust add --json`` show it."""
    return {
        "owner": author.owner,
        "identity": author.identity,
        "identity_regexp": author.identity_regexp,
        "oidc_issuer": author.oidc_issuer,
        "repos": list(author.repos) if author.repos is not None else None,
        "signer_workflow": author.signer_workflow,
        "source_ref": author.source_ref,
        "predicate_type": author.predicate_type,
        "allow_republish": author.allow_republish,
        "mode": author.mode,
        "line": author.line,
    }


def needs_release_signer(
    repo: str | None, identity: str | None, identity_regexp: str | None
) -> bool:
    """Whether ``trust add`` must read the signer of a release (no signer was named).

    Raises :class:`UsageError` for both ``--identity`` and ``--identity-regexp``, and for
    neither without a repository whose release could be read."""
    if identity is not None and identity_regexp is not None:
        raise UsageError("--identity and --identity-regexp exclude each other")
    for flag, value in (("--identity", identity), ("--identity-regexp", identity_regexp)):
        if value is not None and not value.strip():
            # Said of the flag, as the policy would refuse the entry (NXT004, blank is empty);
            # anchored, a blank pattern would read as `^$` or `^ $` and slip past that check.
            raise UsageError(f"{flag} is empty: name the signer's identity; nothing was written")
    if identity is not None and is_email_identity(identity):
        # The entry could never trust anything (NXT013): the owner is bound through the
        # certificate's source repository, which a personal account's certificate lacks.
        raise UsageError(
            f"--identity {identity!r} is an e-mail address: its certificates name no source "
            "repository, so nothing binds them to the owner and the entry would trust no "
            "signature; name the owner's release workflow with --identity-regexp, or give "
            "OWNER/REPO alone to read the signer of its newest release; nothing was written"
        )
    if identity_regexp is not None:
        try:
            compile_identity_pattern(identity_regexp)
        except ValueError as exc:
            # Said of the flag, before any entry is shown: the policy file is not at fault.
            raise NexoError(
                f"--identity-regexp does not compile (RE2 syntax): {exc}; nothing was written",
                kind="policy_invalid",
                exit_code=EXIT_USAGE,
            ) from None
        refused = rust_regex_problem(identity_regexp)
        if refused is not None:
            raise NexoError(
                f"--identity-regexp does not compile: {refused}; nothing was written",
                kind="policy_invalid",
                exit_code=EXIT_USAGE,
            )
        widening = widening_flag(identity_regexp)
        if widening is not None:
            raise NexoError(
                f"--identity-regexp {widening}; nothing was written",
                kind="policy_invalid",
                exit_code=EXIT_USAGE,
            )
    if identity is None and identity_regexp is None:
        if repo is None:
            raise UsageError(
                "give OWNER/REPO to read the signer of its newest release, or name the "
                "signer with --identity-regexp / --identity"
            )
        return True
    return False


def _require_signature(
    path: Path,
    asset_name: str,
    material: Material,
    policy: TrustPolicy,
    *,
    owner: str | None,
    repo: str | None,
    tag: str | None,
) -> SignatureOutcome:
    """``path`` verified as install verifies an asset whose policy requires a signature."""
    return trust.verify_asset_signature(
        path,
        asset_name=asset_name,
        material=material,
        owner=owner,
        repo=repo,
        tag=tag,
        policy=policy,
        mode="require",
        required_by="the trust commands check a signature, whatever the policy's mode",
    )


def release_signer(
    tarball: Path,
    *,
    asset_name: str,
    material: dict[str, Path | bytes],
    owner: str,
    repo: str,
    tag: str,
    trusted_root: Path | None,
) -> dict[str, Any]:
    """Who signed the release asset ``tarball``: its signature verified with no author trusted,
    so the refusal names the signer. Returns identity, issuer, claims, release and asset;
    ``signature_missing`` when the release is not signed, ``signature_invalid`` when the
    signature does not verify."""
    nobody = TrustPolicy(default="require", trusted_root=trusted_root)
    try:
        _require_signature(tarball, asset_name, material, nobody, owner=owner, repo=repo, tag=tag)
    except SignatureMissingError as unsigned:
        # No policy asked for a signature here: there is simply no signer to read.
        raise SignatureMissingError(
            f"release {tag} of {owner}/{repo} is not signed ({asset_name} has "
            "no Sigstore bundle, attestation or signed checksums file), so there is no "
            "signer to trust; name one with --identity-regexp, or ask the publisher to "
            "sign releases",
            details={"asset": asset_name, "release": tag},
        ) from unsigned
    except SignerUntrustedError as seen:
        return {
            "identity": seen.identity,
            "issuer": seen.issuer,
            "claims": seen.details.get("claims") or {},
            "release": tag,
            "asset": asset_name,
        }
    raise NexoError(  # unreachable with no author entry: kept to fail closed
        f"{asset_name}: the signer could not be determined", kind="signature_invalid"
    )


def chosen_author(
    owner: str,
    repo: str | None,
    *,
    identity: str | None,
    identity_regexp: str | None,
    issuer: str | None,
    seen: dict[str, Any] | None,
    allow_republish: bool = False,
) -> AuthorPolicy:
    """The entry ``trust add`` proposes: derived from the signer ``seen`` on a release, else
    the one the flags name. ``signer_untrusted`` when no entry can be derived, or the one
    derived could never trust that signer for ``owner/repo`` (a certificate naming no source
    repository; built in another owner's repository; in another repository of the owner
    without ``allow_republish``)."""
    if seen is not None:
        # `repos` names where the signer built: for a republished file, the signing repository.
        signed_in = _check_built_in(owner, repo, seen, allow_republish=allow_republish)
        suggestion = suggest_author(
            identity=seen["identity"],
            issuer=seen["issuer"],
            claims=seen["claims"],
            owner=owner,
            repo=signed_in or repo,
        )
        if suggestion is None:
            raise NexoError(f"cannot derive an author entry for {owner}", kind="signer_untrusted")
        return suggestion
    if identity_regexp:
        # Written anchored: nexo-pkg matches the whole identity, but cosign and the reference
        # installer, which read the same file, search for the pattern anywhere in it.
        identity_regexp = anchored_form(identity_regexp) or identity_regexp
    return AuthorPolicy(
        owner=owner,
        identity=identity,
        identity_regexp=identity_regexp,
        oidc_issuer=issuer or GITHUB_ACTIONS_ISSUER,
        repos=(repo,) if repo else None,
    )


def _check_built_in(
    owner: str, repo: str | None, seen: dict[str, Any], *, allow_republish: bool
) -> str | None:
    """``signer_untrusted`` when the release's signer was built where no entry written for
    ``owner/repo`` would trust it: the owner is always bound. Returns the name of the owner's
    other repository that signed a file ``allow_republish`` lets ``repo`` publish."""
    built_in = (seen.get("claims") or {}).get("source_repository")
    release = f"release {seen.get('release')} of {owner}/{repo}"
    details = {"identity": seen.get("identity"), "source_repository": built_in}
    if not isinstance(built_in, str):
        raise NexoError(
            f"{release} is signed by {seen.get('identity')}, whose certificate names no source "
            f"repository: an entry for {owner} vouches only for what its own repositories "
            "build, so none can trust this signer; nothing was written",
            kind="signer_untrusted",
            details=details,
        )
    signed = f"{release} is signed by {seen.get('identity')}, built in {built_in}"
    if built_in.partition("/")[0].casefold() != owner.casefold():
        raise NexoError(
            f"{signed}, outside {owner}: an entry for {owner} vouches only for what its "
            "own repositories build, so none can trust this signer; nothing was written",
            kind="signer_untrusted",
            details=details,
        )
    if repo is not None and built_in.casefold() != f"{owner}/{repo}".casefold():
        if not allow_republish:
            raise NexoError(
                f"{signed}, not in {owner}/{repo}: pass --allow-republish to trust files "
                f"signed in {built_in} and published by {owner}/{repo}; nothing was written",
                kind="signer_untrusted",
                details=details,
            )
        return built_in.partition("/")[2]
    return None


def check_override_flags(
    *, issuer: str | None, mode: str | None, predicate_type: str | None, tag: str | None = None
) -> None:
    """:class:`UsageError` for a mode not in :data:`~nexo_pkg.trust.policy.MODES`, or an
    empty (or blank) predicate type, issuer or release tag: ``trust add`` asks before it
    reads anything."""
    if tag is not None and not tag.strip():
        # As `OWNER/REPO@` is refused as a source: never read as "the newest release".
        raise UsageError(
            "--tag is empty: name the release's tag, or leave --tag out for the newest "
            "release; nothing was written"
        )
    if mode is not None and mode not in MODES:
        raise UsageError(f"--mode must be one of {', '.join(MODES)}")
    if predicate_type is not None and not predicate_type.strip():
        raise UsageError("--predicate-type takes a predicate type URI, not an empty string")
    if issuer is not None and not issuer.strip():
        raise UsageError("--oidc-issuer takes the issuer's URL, not an empty string")


def with_overrides(
    author: AuthorPolicy,
    *,
    issuer: str | None,
    signer_workflow: str | None,
    mode: str | None,
    allow_republish: bool,
    predicate_type: str | None = None,
) -> AuthorPolicy:
    """``author`` with what the flags set; :class:`UsageError` as
    :func:`check_override_flags` says."""
    check_override_flags(issuer=issuer, mode=mode, predicate_type=predicate_type)
    changes: dict[str, Any] = {
        "oidc_issuer": issuer,
        "signer_workflow": signer_workflow,
        "mode": mode,
        "allow_republish": allow_republish or None,
        "predicate_type": predicate_type,
    }
    return replace(author, **{key: value for key, value in changes.items() if value is not None})


def record_author(
    policy_path: Path, author: AuthorPolicy, seen: dict[str, Any] | None
) -> dict[str, Any]:
    """Write ``author`` into the policy (nothing when an equal entry is there) and return the
    ``trust add`` document. Raises as :func:`~nexo_pkg.trust.policy_edit.add_author`."""
    result = add_author(policy_path, author)
    return {
        "ok": True,
        "policy": str(policy_path),
        "added": result.changed > 0,
        "entry": author_entry_toml(author),
        "author": author_json(author),
        "seen": seen,
    }


def remove_entries(policy_path: Path, owner: str, repo: str | None, target: str) -> dict[str, Any]:
    """Drop ``owner``'s entries (with ``repo``, those limited to it) and return the
    ``trust remove`` document: ``removed`` counts the entries taken out of the policy,
    ``narrowed`` those that only lost ``repo`` from their ``repos`` (they still trust the
    owner's other repositories); ``not_trusted`` when there was none."""
    result = remove_authors(policy_path, owner, repo)
    if not result.changed:
        # No policy file yet: say so, as every refusal names where it would go.
        where = result.path if result.path.exists() else f"{result.path} (not created yet)"
        raise NexoError(f"{where} has no [[authors]] entry for {target}", kind="not_trusted")
    return {
        "ok": True,
        "policy": str(result.path),
        "removed": result.changed - result.narrowed,
        "narrowed": result.narrowed,
    }


def signer_workflow_flag(value: str | None) -> str | None:
    """``--signer-workflow`` as a policy's ``signer_workflow``: ``OWNER/REPO/.github/
    workflows/FILE``, or gh's form of it with a leading ``github.com/`` host. A usage error
    for any other shape, which no certificate could match (a ref pin included: an entry of
    the policy cannot hold one)."""
    path, ref = signer_workflow_pin(value)
    if ref is not None:
        raise UsageError(
            f"--signer-workflow {value!r}: a pinned ref (@{ref}) cannot be written into the "
            "policy; name the workflow file alone"
        )
    return path


# gh's `--signer-workflow FILE@REF`: a ref is a `refs/…` path or a bare object id, and the
# workflow file before it ends in .yml or .yaml (gh's signerWorkflowRefPattern, cli/cli).
_PINNED_WORKFLOW = re.compile(r"(?P<path>.+?\.ya?ml)@(?P<ref>refs/.+|[0-9a-fA-F]+)")


def signer_workflow_pin(value: str | None) -> tuple[str | None, str | None]:
    """``--signer-workflow`` of ``trust verify``, read as gh reads it: ``[github.com/]OWNER/
    REPO/.github/workflows/FILE``, optionally pinned to the ref the signer ran at
    (``FILE@refs/…`` or ``FILE@<sha>``); the workflow path and the ref. The text is taken as
    written (gh matches it case-sensitively): no ``https://`` scheme, the host ``github.com``
    in lower case. A usage error for any other shape, which no certificate could match."""
    if value is None:
        return None, None
    if "://" in value:
        # gh prepends `https://` to the text itself: a URL with its scheme matches nothing.
        raise UsageError(
            f"--signer-workflow {value!r}: name the workflow without a scheme, as gh reads "
            "it: OWNER/REPO/.github/workflows/FILE or github.com/OWNER/REPO/…"
        )
    path = value
    host, _, rest = path.partition("/")
    if "." in host:  # gh's `[HOST/]OWNER/REPO/…`: an owner never has a dot, a host has
        if host != "github.com":
            # gh matches `^https://HOST/…` case-sensitively: no certificate names another.
            raise UsageError(
                f"--signer-workflow {value!r}: only workflows on github.com can be named "
                "(the host as the certificate writes it: github.com/OWNER/REPO/…)"
            )
        path = rest
    ref = None
    pinned = _PINNED_WORKFLOW.fullmatch(path)
    if pinned is not None:
        path, ref = pinned["path"], pinned["ref"]
    if not is_workflow_path(path):
        raise UsageError(
            f"--signer-workflow {value!r} is not OWNER/REPO/.github/workflows/FILE "
            "(optionally @refs/… or @<commit>)"
        )
    return path, ref


def verification_policy(
    policy: TrustPolicy | None,
    *,
    owner: str | None,
    repo: str | None,
    signer_workflow: str | None,
    issuer: str | None,
    signer_ref: str | None = None,
    trusted_root: Path | None = None,
) -> TrustPolicy:
    """The policy ``trust verify`` checks against: the loaded ``policy`` as install reads it
    (the flags narrow its verdict afterwards, :func:`verify_file`; written into its entries
    they could widen them), or, without one, an entry trusting any workflow of ``owner``
    (``repo``), as ``gh attestation verify --owner/--repo`` does, against ``trusted_root``
    (the private instance of the policy install reads; ``None``: public-good). ``signer_ref``
    (gh's ``--signer-workflow FILE@REF``) pins the signer's identity, its SAN, to that
    workflow at that ref; it narrows the flags' entry only (a policy's entries keep their
    identity)."""
    if signer_ref is not None and (policy is not None or signer_workflow is None):
        raise UsageError(
            "--signer-workflow with @REF pins the signer of a --owner/--repo check; "
            "it cannot narrow a trust policy's entries (pass no --trusted-keys)"
        )
    if policy is not None:
        return policy
    if owner is None:
        raise UsageError("--owner or --repo, or a trust policy, is needed to verify")
    # Any workflow of the repository (or of the owner) may have signed, in its own name or
    # through a reusable workflow. GitHub's names are case-insensitive, and so is gh's match.
    scope = escape_pattern(repo) if repo else "[^/]+"
    pinned = f"https://github.com/{signer_workflow}@{signer_ref}" if signer_ref else None
    author = AuthorPolicy(
        owner=owner,
        identity=pinned,
        identity_regexp=None
        if pinned
        else (f"(?i)^https://github\\.com/{escape_pattern(owner)}/{scope}/\\.github/workflows/.+$"),
        oidc_issuer=issuer or GITHUB_ACTIONS_ISSUER,
        repos=(repo,) if repo else None,
        signer_workflow=signer_workflow,
    )
    return TrustPolicy(default="require", authors=(author,), trusted_root=trusted_root)


def _signed_checksums_file(bundle: Path, file: Path) -> Path | None:
    """The checksums file beside ``bundle`` that it signs (``checksums.txt`` for
    ``checksums.txt.sigstore.json``), or ``None`` when it is not a checksums file's bundle.
    ``None`` too when ``file`` is the checksums file itself: its bundle is checked over it.
    A usage error when it is one and the file it signs is not beside it: verified over FILE
    instead, it could only fail with a digest mismatch that says nothing of the cause."""
    for suffix in (*BUNDLE_SUFFIXES, ATTESTATION_SUFFIX):
        stem = bundle.name.removesuffix(suffix)
        if stem != bundle.name and is_checksums_file(stem):
            signed = bundle.with_name(stem)
            if file.name == stem and (not signed.is_file() or signed.samefile(file)):
                return None
            if not signed.is_file():
                raise UsageError(
                    f"--bundle {bundle} signs {stem}, which is not beside it: put {stem} "
                    "next to its bundle"
                )
            return signed
    return None


def verify_file(
    file: Path,
    *,
    bundle: Path | None,
    policy: TrustPolicy,
    owner: str | None,
    repo: str | None,
    tag: str | None,
    signer_workflow: str | None = None,
    issuer: str | None = None,
) -> SignatureOutcome:
    """Check ``file`` against its signature material exactly as install would: ``bundle``
    (a Sigstore bundle, attestations, or the bundle of a signed checksums file beside it), else
    the material found beside ``file``; then the signer must also be ``signer_workflow``
    (``OWNER/REPO/.github/workflows/FILE``) and name ``issuer``, when given (the flags narrow
    the policy's verdict, never widen it). Raises the verifier's error (its message naming
    ``bundle`` by its own name), or :class:`SignerUntrustedError` for a signer the flags
    refuse."""
    offered_as: str | None = None
    checksums = _signed_checksums_file(bundle, file) if bundle is not None else None
    material: dict[str, Path | bytes]
    if checksums is not None and bundle is not None:
        # The bundle of a checksums file (checksums.txt.sigstore.json) with the file beside
        # it: verified as install would, the file's signature then the line for FILE.
        material = {checksums.name: checksums, bundle.name: bundle}
    elif bundle is not None and bundle.name.endswith(".sig"):
        # A detached cosign signature: with the certificate beside it, as install reads it.
        offered_as = file.name + ".sig"
        material = {offered_as: bundle}
        for suffix in (".cert", ".pem"):
            certificate = bundle.with_name(bundle.name.removesuffix(".sig") + suffix)
            if certificate.is_file():
                material[file.name + suffix] = certificate
    elif bundle is not None:
        suffix = ".intoto.jsonl" if bundle.name.endswith(".jsonl") else ".sigstore.json"
        offered_as = file.name + suffix
        material = {offered_as: bundle}
    else:
        material = local_material(file)
    try:
        outcome = _require_signature(
            file, file.name, material, policy, owner=owner, repo=repo, tag=tag
        )
    except NexoError as error:
        if offered_as is not None and bundle is not None:
            # The bundle is offered under the name install would look for; say its own.
            error.message = error.message.replace(offered_as, str(bundle))
            error.args = (error.message,)
        raise
    if offered_as is not None and bundle is not None and outcome.material is not None:
        outcome = replace(outcome, material=outcome.material.replace(offered_as, str(bundle)))
    _require_flags(outcome, signer_workflow=signer_workflow, issuer=issuer)
    return outcome


def _require_flags(
    outcome: SignatureOutcome, *, signer_workflow: str | None, issuer: str | None
) -> None:
    """:class:`SignerUntrustedError` when the verified and trusted signer of ``outcome`` is
    not the ``signer_workflow`` or does not name the ``issuer`` the flags require."""
    reasons: list[str] = []
    if issuer is not None and outcome.issuer != issuer:
        reasons.append(f"its issuer is {outcome.issuer}, not {issuer} (--oidc-issuer)")
    signed_by = outcome.claims.get("signer_workflow")
    if signer_workflow is not None:
        from nexo_pkg.trust.verifiers.claims import same_workflow, spelling_hint  # noqa: PLC0415

        if not same_workflow(signed_by, signer_workflow):
            reasons.append(
                f"it was signed by {signed_by or 'no workflow'}, not by {signer_workflow} "
                f"(--signer-workflow){spelling_hint(signed_by, signer_workflow)}"
            )
    if reasons:
        raise SignerUntrustedError(
            f"{outcome.material} is signed by {outcome.identity} (issuer {outcome.issuer}), "
            f"which the policy trusts, but not as the flags require: {'; '.join(reasons)}",
            identity=outcome.identity,
            issuer=outcome.issuer,
            details={"claims": dict(outcome.claims)},
        )
