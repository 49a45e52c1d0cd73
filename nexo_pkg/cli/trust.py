"""CLI for ``nexo plugin trust add|list|remove|verify``: the trust policy and its verdicts (the
work is in :mod:`nexo_pkg.trust`; who signed a release, in :mod:`nexo_pkg.sources.releases`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from nexo_pkg.cli.common import answer, confirm_or_refuse, guarded, policy_path, result_line
from nexo_pkg.cli.options import (
    ConfigOption,
    GitHubApiOption,
    JsonOption,
    TimeoutOption,
    TrustedKeysOption,
    TrustTargetArgument,
    YesOption,
    named_path,
)
from nexo_pkg.core.errors import UsageError
from nexo_pkg.core.output import emit_json, say, say_once, warn
from nexo_pkg.core.terminal import printable

if TYPE_CHECKING:
    from nexo_pkg.trust.api import SignatureOutcome, TrustPolicy

SignerWorkflowOption = Annotated[
    str | None,
    typer.Option(
        "--signer-workflow",
        help=(
            "Workflow that must have signed: OWNER/REPO/.github/workflows/FILE "
            "(gh's github.com/OWNER/REPO/… too; verify also takes gh's FILE@REF pin)."
        ),
    ),
]
IssuerOption = Annotated[
    str | None, typer.Option("--oidc-issuer", help="OIDC issuer the certificate must name.")
]


def _split_target(text: str, label: str = "OWNER[/REPO]") -> tuple[str, str | None]:
    from nexo_pkg.sources.api import parse_owner_repo  # noqa: PLC0415

    # The same character rules as install sources (GitHub's set, no `..`).
    return parse_owner_repo(text, label=label)


def _show_entry(
    entry: str, policy_path: Path, seen: dict[str, Any] | None, owner: str, repo: str | None
) -> None:
    """The signer a release was seen to have, and the entry about to be written."""
    # Everything shown came from a release, a certificate or the command line: escaped.
    if seen is not None:
        release = f"Release {seen['release']} of {owner}/{repo} ({seen['asset']}) is signed by:"
        say(printable(release))
        say(f"  identity: {printable(seen['identity'])}")
        say(f"  issuer:   {printable(seen['issuer'])}")
        for key, value in (seen["claims"] or {}).items():
            if value:
                say(f"  {printable(key)}: {printable(value)}")
    say(f"Entry for {printable(policy_path)}:")
    for line in entry.splitlines():
        say(f"  {printable(line)}")


_MODE_MEANINGS = {
    "require": "an artifact of {owner} without a signature this policy trusts is refused",
    "warn": "an artifact of {owner} without a trusted signature is installed, with a warning",
    "ignore": "no signature of {owner}'s artifacts is checked",
}


def _mode_meaning(mode: str | None, default: str, owner: str) -> str:
    """``Mode: require (the policy's default): …`` — what the entry's mode means, once
    written (``--mode`` changes it)."""
    chosen = mode or default
    where = "" if mode else " (the policy's default; --mode sets one for this owner)"
    meaning = _MODE_MEANINGS.get(chosen, "").format(owner=printable(owner))
    return f"Mode: {printable(chosen)}{where}: {meaning}."


def add_command(
    *,
    target: TrustTargetArgument,
    identity_regexp: Annotated[
        str | None, typer.Option("--identity-regexp", help="Trust this identity pattern (RE2).")
    ] = None,
    identity: Annotated[
        str | None, typer.Option("--identity", help="Trust this exact identity.")
    ] = None,
    oidc_issuer: IssuerOption = None,
    signer_workflow: SignerWorkflowOption = None,
    mode: Annotated[
        str | None,
        typer.Option(
            "--mode",
            metavar="[ignore|warn|require]",
            help="What the daemon's policy does with this owner's artifacts: require "
            "(refuse one without a signature this policy trusts), warn (install it with a "
            "warning), ignore (check no signature). Default: the policy's `default`.",
        ),
    ] = None,
    allow_republish: Annotated[
        bool,
        typer.Option(
            "--allow-republish",
            help=(
                "Trust copies of the signer's artifacts published by other repositories of "
                "the same owner (never of another owner)."
            ),
        ),
    ] = False,
    predicate_type: Annotated[
        str | None,
        typer.Option(
            "--predicate-type",
            help="In-toto predicate type an attestation must have "
            "(default: SLSA provenance v1, https://slsa.dev/provenance/v1).",
        ),
    ] = None,
    tag: Annotated[
        str | None, typer.Option("--tag", help="Read the signer of this release.")
    ] = None,
    trusted_keys: TrustedKeysOption = None,
    config: ConfigOption = None,
    github_api_url: GitHubApiOption = None,
    timeout: TimeoutOption = None,
    yes: YesOption = False,
    json_output: JsonOption = False,
) -> None:
    """Trust a signer: the one of OWNER/REPO's newest release, or the one named."""
    from nexo_pkg.trust.api import (  # noqa: PLC0415
        author_entry_toml,
        check_override_flags,
        chosen_author,
        load_policy,
        needs_release_signer,
        record_author,
        signer_workflow_flag,
        with_overrides,
    )

    def run() -> dict[str, Any]:
        path = policy_path(config, trusted_keys)
        owner, repo = _split_target(target)
        workflow = signer_workflow_flag(signer_workflow)
        # Flags refused whatever the release says are refused before it is read.
        check_override_flags(issuer=oidc_issuer, mode=mode, predicate_type=predicate_type, tag=tag)
        policy = load_policy(path, explicit=False)
        # The policy install reads, as install would warn about it (before anything is asked).
        for warning in policy.warnings:
            say_once(printable(warning), warning=True)
        seen: dict[str, Any] | None = None
        if needs_release_signer(repo, identity, identity_regexp) and repo is not None:
            from nexo_pkg.manifest.daemon_config import nexo_home_from_env  # noqa: PLC0415
            from nexo_pkg.sources.api import (  # noqa: PLC0415
                NetworkChoices,
                SourceContext,
                read_release_signer,
            )

            network = NetworkChoices(github_api_url=github_api_url, http_timeout=timeout)
            notice = None if json_output else say
            with SourceContext(nexo_home_from_env(), network, notice=notice) as context:
                seen = read_release_signer(
                    context, owner, repo, tag, trusted_root=policy.trusted_root
                )
        author = chosen_author(
            owner,
            repo,
            identity=identity,
            identity_regexp=identity_regexp,
            issuer=oidc_issuer,
            seen=seen,
            allow_republish=allow_republish,
        )
        author = with_overrides(
            author,
            issuer=oidc_issuer,
            signer_workflow=workflow,
            mode=mode,
            allow_republish=allow_republish,
            predicate_type=predicate_type,
        )
        if not json_output:
            if identity_regexp is not None and author.identity_regexp != identity_regexp:
                say(
                    printable(
                        f"note: --identity-regexp is written anchored, {author.identity_regexp}: "
                        "nexo-pkg matches the whole identity, cosign and the reference "
                        "installer search for an unanchored pattern anywhere in it"
                    )
                )
            _show_entry(author_entry_toml(author), path, seen, owner, repo)
            say(_mode_meaning(author.mode, policy.default, owner))
        confirm_or_refuse(
            yes,
            "Trust this signer?",
            no_terminal="not a terminal: pass --yes to write the entry",
        )
        return record_author(path, author, seen)

    def show(document: dict[str, Any]) -> None:
        if document["added"]:
            say(f"Added to {printable(document['policy'])}.")
        else:
            say(f"{printable(document['policy'])} already has this entry; nothing changed.")

    answer(run, json_output=json_output, show=show, mask=False)


def list_command(
    *,
    trusted_keys: TrustedKeysOption = None,
    config: ConfigOption = None,
    json_output: JsonOption = False,
) -> None:
    """Show the policy's default mode and its author entries."""
    from nexo_pkg.trust.api import (  # noqa: PLC0415
        GITHUB_ACTIONS_ISSUER,
        author_json,
        load_policy,
    )

    path = policy_path(config, trusted_keys)
    policy = guarded(
        lambda: load_policy(path, explicit=trusted_keys is not None), json_output=json_output
    )
    if json_output:
        emit_json(
            {
                "ok": True,
                "policy": str(path),
                "exists": path.exists(),
                "default": policy.default,
                "authors": [author_json(author) for author in policy.authors],
                "warnings": list(policy.warnings),
            }
        )
        return
    # Every value below comes from the policy file, whoever wrote it: escaped.
    for warning in policy.warnings:
        warn(printable(warning))
    say(printable(f"Policy: {path}{'' if path.exists() else ' (not created yet)'}"))
    say(f"Default mode: {printable(policy.default)}")
    if not policy.authors:
        say("No [[authors]] entries: no signer is trusted.")
    for author in policy.authors:
        who = author.identity or author.identity_regexp
        # Every key that narrows or widens what the entry trusts, or sets its mode: two
        # entries differing only in issuer (another OIDC provider) must not read the same.
        keys = [
            ("repos", ",".join(author.repos) if author.repos else None),
            ("signer_workflow", author.signer_workflow),
            (
                "oidc_issuer",
                None if author.oidc_issuer == GITHUB_ACTIONS_ISSUER else author.oidc_issuer,
            ),
            ("source_ref", author.source_ref),
            ("predicate_type", author.predicate_type),
            ("allow_republish", "true" if author.allow_republish else None),
            ("mode", author.mode),
        ]
        extra = "".join(f" {key}={value}" for key, value in keys if value is not None)
        result_line(printable(f"{author.owner:<20} {who}{extra} (line {author.line})"))


def remove_command(
    *,
    target: TrustTargetArgument,
    trusted_keys: TrustedKeysOption = None,
    config: ConfigOption = None,
    yes: YesOption = False,
    json_output: JsonOption = False,
) -> None:
    """Stop trusting OWNER's signers (with REPO: the entries limited to that repository)."""
    from nexo_pkg.trust.api import missing_named_policy, remove_entries  # noqa: PLC0415

    def run() -> dict[str, Any]:
        owner, repo = _split_target(target)
        confirm_or_refuse(
            yes,
            f"Remove the entries for {printable(target)}?",
            no_terminal="not a terminal: pass --yes to remove entries",
        )
        path = policy_path(config, trusted_keys)
        if trusted_keys is not None and not path.exists() and not path.is_symlink():
            # As `trust list`: a file named with --trusted-keys that is not there is a
            # configuration error (a typo), not a policy without that owner.
            raise missing_named_policy(path)
        return remove_entries(path, owner, repo, target)

    def show(document: dict[str, Any]) -> None:
        removed, narrowed = document["removed"], document["narrowed"]
        said = []
        if removed:
            said.append(f"Removed {removed} entr{'y' if removed == 1 else 'ies'}.")
        if narrowed:
            # The entry stays: it still trusts the owner's other repositories it lists.
            one = narrowed == 1
            said.append(
                f"Narrowed {narrowed} entr{'y' if one else 'ies'}: took "
                f"{printable(_split_target(target)[1] or target)} out of "
                f"{'its' if one else 'their'} repos; the other repositories listed stay trusted."
            )
        say(" ".join(said))

    answer(run, json_output=json_output, show=show, mask=False)


def verify_command(
    *,
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The file to check.")],
    bundle: Annotated[
        Path | None,
        typer.Option(
            "--bundle",
            help=(
                "Signature material for FILE: a Sigstore bundle, attestations (.jsonl), the "
                "bundle of a checksums file beside it, or a cosign .sig (its .cert beside it)."
            ),
            metavar="<path>",
            parser=named_path("--bundle", "the signature material"),
        ),
    ] = None,
    repo: Annotated[
        str | None, typer.Option("--repo", help="OWNER/REPO the file must have been built in.")
    ] = None,
    owner: Annotated[
        str | None, typer.Option("--owner", help="OWNER the file must have been built by.")
    ] = None,
    signer_workflow: SignerWorkflowOption = None,
    oidc_issuer: IssuerOption = None,
    tag: Annotated[
        str | None, typer.Option("--tag", help="The tag the file is released under.")
    ] = None,
    trusted_keys: TrustedKeysOption = None,
    config: ConfigOption = None,
    json_output: JsonOption = False,
) -> None:
    """Check FILE against its signature material exactly as install would."""
    from nexo_pkg.trust.api import (  # noqa: PLC0415
        load_policy,
        signer_workflow_pin,
        verification_policy,
        verify_file,
    )

    def run() -> tuple[SignatureOutcome, TrustPolicy, str | None, str | None]:
        if repo is not None and owner is not None:
            raise UsageError("--repo and --owner exclude each other")
        bound_owner, bound_repo = owner, None
        if repo is not None:
            bound_owner, bound_repo = _split_target(repo, "--repo")
            if bound_repo is None:
                raise UsageError("--repo takes OWNER/REPO")
        elif owner is not None:
            bound_owner, named_repo = _split_target(owner, "--owner")
            if named_repo is not None:
                raise UsageError(
                    f"--owner takes OWNER alone, not {owner!r}: for OWNER/REPO use --repo"
                )
        workflow, ref = signer_workflow_pin(signer_workflow)
        if not file.is_file():
            raise UsageError(f"{file} is not a file")
        if bundle is not None and not bundle.is_file():
            what = "is not a file" if bundle.exists() else "does not exist"
            raise UsageError(f"--bundle {bundle} {what}")
        explicit = trusted_keys is not None
        loaded = load_policy(policy_path(config, trusted_keys), explicit=explicit)
        # The policy decides unless --owner/--repo do (gh's verdict); either way its
        # trusted_root is the Sigstore instance install verifies against.
        decides = explicit or bound_owner is None
        if decides or loaded.trusted_root is not None:
            # As install says them, before the verdict: a hidden entry may be why it refuses.
            for warning in loaded.warnings:
                say_once(printable(warning), warning=True)
        policy = verification_policy(
            loaded if decides else None,
            owner=bound_owner,
            repo=bound_repo,
            signer_workflow=workflow,
            issuer=oidc_issuer,
            signer_ref=ref,
            trusted_root=loaded.trusted_root,
        )
        outcome = verify_file(
            file,
            bundle=bundle,
            policy=policy,
            owner=bound_owner,
            repo=bound_repo,
            tag=tag,
            signer_workflow=workflow,
            issuer=oidc_issuer,
        )
        return outcome, policy, bound_owner, bound_repo

    outcome, policy, bound_owner, bound_repo = guarded(run, json_output=json_output)
    if json_output:
        emit_json(
            {
                "ok": True,
                "verified": True,
                "file": str(file),
                **outcome.to_json(),
                "policy": str(policy.source) if policy.source else None,
                "owner": bound_owner,
                "repo": bound_repo,
                "warnings": list(policy.warnings),
            }
        )
        return
    # The file name, the material's name and everything the certificate says: escaped.
    # The report is the command's result: stdout, as `plugin verify`'s.
    result_line(printable(f"{file.name}: verified ({outcome.scheme}, {outcome.material})"))
    result_line(f"  identity: {printable(outcome.identity)}")
    result_line(f"  issuer:   {printable(outcome.issuer)}")
    for key, value in outcome.claims.items():
        if value:
            result_line(f"  {printable(key)}: {printable(value)}")
    scope = f"{bound_owner}/{bound_repo}" if bound_repo else bound_owner
    if scope is None:
        # No --owner/--repo: the entry that trusted it bound the certificate's source owner.
        built_in = outcome.claims.get("source_repository")
        scope = f"{built_in} (its source repository)" if built_in else "its signer"
    source = policy.source or "the flags"
    result_line(printable(f"Policy ({source}): trusted for {scope}"))


def register(app: typer.Typer) -> None:
    """Add the ``trust`` command group to the ``plugin`` app."""
    trust_app = typer.Typer(
        help=(
            "Manage the trust policy (trusted_keys.toml) and check files against it.\n\n"
            "Exit codes: 0 success (verify: verified and trusted); 1 refused or not trusted; "
            "2 usage or configuration error."
        ),
        no_args_is_help=True,
    )
    app.add_typer(trust_app, name="trust")
    trust_app.command("add")(add_command)
    trust_app.command("list")(list_command)
    trust_app.command("remove")(remove_command)
    trust_app.command("verify")(verify_command)
