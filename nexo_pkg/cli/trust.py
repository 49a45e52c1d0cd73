"""CLI for ``nexo plugin trust add|list|remove|verify``: the trust policy and its verdicts.

Only parsing, rendering and exit codes live here; the work is in :mod:`nexo_pkg.trust` (and,
for finding who signed a release, the install layer's GitHub client).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from nexo_pkg.cli.common import confirm, exit_with, guarded, interactive, result_line
from nexo_pkg.cli.options import (
    ConfigOption,
    GitHubApiOption,
    JsonOption,
    TimeoutOption,
    TrustedKeysOption,
    YesOption,
)
from nexo_pkg.core.errors import NexoError, UsageError
from nexo_pkg.core.output import emit_json, say
from nexo_pkg.core.terminal import printable

if TYPE_CHECKING:
    from nexo_pkg.trust.base import SignatureOutcome
    from nexo_pkg.trust.policy import AuthorPolicy, TrustPolicy

SignerWorkflowOption = Annotated[
    str | None,
    typer.Option(
        "--signer-workflow",
        help="Workflow that must have signed: OWNER/REPO/.github/workflows/FILE.",
    ),
]
IssuerOption = Annotated[
    str | None,
    typer.Option("--oidc-issuer", help="OIDC issuer the certificate must name."),
]


def _policy_path(explicit: Path | None, config: Path | None = None) -> Path:
    """``--trusted-keys``, else the policy install reads: ``<config dir>/extensions/…``."""
    from nexo_pkg.install.config import POLICY_FILE, config_dir  # noqa: PLC0415

    if explicit is not None:
        return explicit.expanduser().absolute()
    return (config_dir(config) / POLICY_FILE).absolute()


def _split_target(text: str) -> tuple[str, str | None]:
    owner, _, repo = text.partition("/")
    from nexo_pkg.sources.spec import parse_source  # noqa: PLC0415

    # The same character rules as install sources (GitHub's set, no `..`).
    parse_source(f"{owner}/{repo or 'x'}")
    return owner, repo or None


def _author_json(author: AuthorPolicy) -> dict[str, Any]:
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


def _release_signer(
    owner: str,
    repo: str,
    tag: str | None,
    policy: TrustPolicy,
    api_url: str | None,
    *,
    timeout: float | None = None,
    notice: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Verify the signature of the newest (or ``tag``) release of ``owner/repo`` with no
    author trusted, to learn who signed it. Returns identity, issuer and claims; ``notice``
    hears of slow answers."""
    from nexo_pkg.manifest.daemon_config import nexo_home_from_env  # noqa: PLC0415
    from nexo_pkg.sources.download import cache_dir, download_asset  # noqa: PLC0415
    from nexo_pkg.sources.github import (  # noqa: PLC0415
        GitHubClient,
        resolve_api_base,
        resolve_token,
    )
    from nexo_pkg.trust import entry as trust  # noqa: PLC0415
    from nexo_pkg.trust.base import (  # noqa: PLC0415
        SignatureMissingError,
        SignerUntrustedError,
    )
    from nexo_pkg.trust.policy import TrustPolicy  # noqa: PLC0415

    cache = cache_dir(nexo_home_from_env())
    temps: list[Any] = []
    try:
        api_base = resolve_api_base(api_url)
        with GitHubClient(
            api_base, resolve_token(api_base), timeout=timeout, notice=notice
        ) as client:
            release = client.get_release(owner, repo, tag)
            names = [asset.name for asset in release.assets]
            tarballs = [asset for asset in release.assets if asset.name.endswith(".tar.gz")]
            if not tarballs:
                raise NexoError(
                    f"release {release.tag} of {owner}/{repo} has no tarball to read a "
                    "signature from",
                    kind="asset_not_found",
                )
            tarball = next(
                (a for a in tarballs if trust.material_names(a.name, names)), tarballs[0]
            )
            downloaded = download_asset(client, tarball, cache, max_bytes=100 * 1024 * 1024)
            temps.append(downloaded)
            material: dict[str, Path | bytes] = {}
            for name in trust.material_names(tarball.name, names):
                found = release.asset(name)
                if found is None:
                    continue
                file = download_asset(client, found, cache, max_bytes=4 * 1024 * 1024)
                temps.append(file)
                material[name] = file.path
            attested = trust.release_attestations(
                client,
                owner,
                repo,
                asset_name=tarball.name,
                digest=downloaded.sha256,
                material=material,
            )
            if attested is not None:
                material[attested.name] = attested.data
        nobody = TrustPolicy(default="require", trusted_root=policy.trusted_root)
        try:
            trust.verify_asset_signature(
                downloaded.path,
                asset_name=tarball.name,
                material=material,
                owner=owner,
                repo=repo,
                tag=release.tag,
                policy=nobody,
                mode="require",
            )
        except SignatureMissingError as unsigned:
            # No policy asked for a signature here: there is simply no signer to read.
            raise SignatureMissingError(
                f"release {release.tag} of {owner}/{repo} is not signed ({tarball.name} has "
                "no Sigstore bundle, attestation or signed checksums file), so there is no "
                "signer to trust; name one with --identity-regexp, or ask the publisher to "
                "sign releases",
                details={"asset": tarball.name, "release": release.tag},
            ) from unsigned
        except SignerUntrustedError as seen:
            return {
                "identity": seen.identity,
                "issuer": seen.issuer,
                "claims": seen.details.get("claims") or {},
                "release": release.tag,
                "asset": tarball.name,
            }
        raise NexoError(  # unreachable with no author entry: kept to fail closed
            f"{tarball.name}: the signer could not be determined", kind="signature_invalid"
        )
    finally:
        for temp in temps:
            temp.discard()


def _add(
    target: str,
    *,
    identity: str | None,
    identity_regexp: str | None,
    issuer: str | None,
    signer_workflow: str | None,
    mode: str | None,
    allow_republish: bool,
    tag: str | None,
    policy_path: Path,
    api_url: str | None,
    yes: bool,
    json_output: bool,
    timeout: float | None = None,
) -> dict[str, Any]:
    from nexo_pkg.trust.entry import load_policy  # noqa: PLC0415
    from nexo_pkg.trust.policy import GITHUB_ACTIONS_ISSUER, AuthorPolicy  # noqa: PLC0415
    from nexo_pkg.trust.policy_edit import add_author  # noqa: PLC0415
    from nexo_pkg.trust.suggest import author_entry_toml, suggest_author  # noqa: PLC0415

    owner, repo = _split_target(target)
    policy = load_policy(policy_path, explicit=False)
    seen: dict[str, Any] | None = None
    if identity is not None and identity_regexp is not None:
        raise UsageError("--identity and --identity-regexp exclude each other")
    if identity is None and identity_regexp is None:
        if repo is None:
            raise UsageError(
                "give OWNER/REPO to read the signer of its newest release, or name the "
                "signer with --identity-regexp / --identity"
            )
        seen = _release_signer(
            owner, repo, tag, policy, api_url, timeout=timeout, notice=None if json_output else say
        )
        suggestion = suggest_author(
            identity=seen["identity"],
            issuer=seen["issuer"],
            claims=seen["claims"],
            owner=owner,
            repo=repo,
        )
        if suggestion is None:
            raise NexoError(f"cannot derive an author entry for {owner}", kind="signer_untrusted")
        author = suggestion
    else:
        author = AuthorPolicy(
            owner=owner,
            identity=identity,
            identity_regexp=identity_regexp,
            oidc_issuer=issuer or GITHUB_ACTIONS_ISSUER,
            repos=(repo,) if repo else None,
        )
    author = _with_overrides(
        author,
        issuer=issuer,
        signer_workflow=signer_workflow,
        mode=mode,
        allow_republish=allow_republish,
    )
    entry = author_entry_toml(author)
    if not json_output:
        # Everything shown came from a release, a certificate or the command line: escaped.
        if seen is not None:
            say(
                printable(
                    f"Release {seen['release']} of {owner}/{repo} ({seen['asset']}) is signed by:"
                )
            )
            say(f"  identity: {printable(seen['identity'])}")
            say(f"  issuer:   {printable(seen['issuer'])}")
            for key, value in (seen["claims"] or {}).items():
                if value:
                    say(f"  {printable(key)}: {printable(value)}")
        say(f"Entry for {printable(policy_path)}:")
        for line in entry.splitlines():
            say(f"  {printable(line)}")
    if not yes:
        if not interactive():
            raise UsageError("not a terminal: pass --yes to write the entry")
        if not confirm("Trust this signer?"):
            raise NexoError("nothing was changed", kind="cancelled")
    result = add_author(policy_path, author)
    return {
        "ok": True,
        "policy": str(policy_path),
        "added": result.changed > 0,
        "entry": entry,
        "author": _author_json(author),
        "seen": seen,
    }


def _with_overrides(
    author: AuthorPolicy,
    *,
    issuer: str | None,
    signer_workflow: str | None,
    mode: str | None,
    allow_republish: bool,
) -> AuthorPolicy:
    from dataclasses import replace  # noqa: PLC0415

    from nexo_pkg.trust.policy import MODES  # noqa: PLC0415

    if mode is not None and mode not in MODES:
        raise UsageError(f"--mode must be one of {', '.join(MODES)}")
    changes: dict[str, Any] = {}
    if issuer is not None:
        changes["oidc_issuer"] = issuer
    if signer_workflow is not None:
        changes["signer_workflow"] = signer_workflow
    if mode is not None:
        changes["mode"] = mode
    if allow_republish:
        changes["allow_republish"] = True
    return replace(author, **changes)


def _verify(
    file: Path,
    *,
    bundle: Path | None,
    repo_text: str | None,
    owner_text: str | None,
    signer_workflow: str | None,
    issuer: str | None,
    tag: str | None,
    trusted_keys: Path | None,
    config: Path | None = None,
) -> tuple[SignatureOutcome, TrustPolicy, str | None, str | None]:
    from nexo_pkg.trust import entry as trust  # noqa: PLC0415
    from nexo_pkg.trust.policy import (  # noqa: PLC0415
        GITHUB_ACTIONS_ISSUER,
        AuthorPolicy,
        TrustPolicy,
    )
    from nexo_pkg.trust.suggest import escape_pattern  # noqa: PLC0415

    if repo_text is not None and owner_text is not None:
        raise UsageError("--repo and --owner exclude each other")
    owner: str | None = owner_text
    repo: str | None = None
    if repo_text is not None:
        owner, repo = _split_target(repo_text)
        if repo is None:
            raise UsageError("--repo takes OWNER/REPO")
    elif owner_text is not None:
        owner, _ = _split_target(owner_text)
    if not file.is_file():
        raise UsageError(f"{file} is not a file")
    if bundle is not None and not bundle.exists():
        raise UsageError(f"--bundle {bundle} does not exist")
    if trusted_keys is not None or owner is None:
        policy = trust.load_policy(
            _policy_path(trusted_keys, config), explicit=trusted_keys is not None
        )
        if signer_workflow is not None or issuer is not None:
            from dataclasses import replace  # noqa: PLC0415

            narrowed = tuple(
                replace(
                    author,
                    signer_workflow=signer_workflow or author.signer_workflow,
                    oidc_issuer=issuer or author.oidc_issuer,
                )
                for author in policy.authors
            )
            policy = replace(policy, authors=narrowed)
    else:
        # As `gh attestation verify --owner/--repo`: any workflow of the repository (or of
        # the owner) may have signed, in its own name or through a reusable workflow.
        scope = escape_pattern(repo) if repo else "[^/]+"
        author = AuthorPolicy(
            owner=owner,
            identity_regexp=(
                f"^https://github\\.com/{escape_pattern(owner)}/{scope}/\\.github/workflows/.+$"
            ),
            oidc_issuer=issuer or GITHUB_ACTIONS_ISSUER,
            repos=(repo,) if repo else None,
            signer_workflow=signer_workflow,
        )
        policy = TrustPolicy(default="require", authors=(author,))
    offered_as: str | None = None
    checksums = _signed_checksums_file(bundle) if bundle is not None else None
    if checksums is not None and bundle is not None:
        # The bundle of a checksums file (checksums.txt.sigstore.json) with the file beside
        # it: verified as install would, the file's signature then the line for FILE.
        material: dict[str, Path | bytes] = {checksums.name: checksums, bundle.name: bundle}
    elif bundle is not None:
        suffix = ".intoto.jsonl" if bundle.name.endswith(".jsonl") else ".sigstore.json"
        offered_as = file.name + suffix
        material = {offered_as: bundle}
    else:
        material = trust.local_material(file)
    try:
        outcome = trust.verify_asset_signature(
            file,
            asset_name=file.name,
            material=material,
            owner=owner,
            repo=repo,
            tag=tag,
            policy=policy,
            mode="require",
        )
    except NexoError as error:
        if offered_as is not None and bundle is not None:
            # The bundle is offered under the name install would look for; say its own.
            error.message = error.message.replace(offered_as, str(bundle))
            error.args = (error.message,)
        raise
    if offered_as is not None and bundle is not None and outcome.material is not None:
        from dataclasses import replace  # noqa: PLC0415

        outcome = replace(outcome, material=outcome.material.replace(offered_as, str(bundle)))
    return outcome, policy, owner, repo


def _signed_checksums_file(bundle: Path) -> Path | None:
    """The checksums file beside ``bundle`` that it signs (``checksums.txt`` for
    ``checksums.txt.sigstore.json``), or ``None``."""
    from nexo_pkg.trust.material import (  # noqa: PLC0415
        ATTESTATION_SUFFIX,
        BUNDLE_SUFFIXES,
        is_checksums_file,
    )

    for suffix in (*BUNDLE_SUFFIXES, ATTESTATION_SUFFIX):
        stem = bundle.name.removesuffix(suffix)
        if stem != bundle.name and is_checksums_file(stem):
            signed = bundle.with_name(stem)
            return signed if signed.is_file() else None
    return None


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

    @trust_app.command("add")
    def add_command(
        *,
        target: Annotated[str, typer.Argument(metavar="OWNER[/REPO]")],
        identity_regexp: Annotated[
            str | None,
            typer.Option("--identity-regexp", help="Trust this identity pattern (RE2)."),
        ] = None,
        identity: Annotated[
            str | None, typer.Option("--identity", help="Trust this exact identity.")
        ] = None,
        oidc_issuer: IssuerOption = None,
        signer_workflow: SignerWorkflowOption = None,
        mode: Annotated[
            str | None, typer.Option("--mode", help="ignore, warn or require for this owner.")
        ] = None,
        allow_republish: Annotated[
            bool,
            typer.Option(
                "--allow-republish",
                help="Trust copies of the signer's artifacts published by other repositories.",
            ),
        ] = False,
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
        document = guarded(
            lambda: _add(
                target,
                identity=identity,
                identity_regexp=identity_regexp,
                issuer=oidc_issuer,
                signer_workflow=signer_workflow,
                mode=mode,
                allow_republish=allow_republish,
                tag=tag,
                policy_path=_policy_path(trusted_keys, config),
                api_url=github_api_url,
                yes=yes,
                json_output=json_output,
                timeout=timeout,
            ),
            json_output=json_output,
        )
        if json_output:
            emit_json(document)
        elif document["added"]:
            say(f"Added to {printable(document['policy'])}.")
        else:
            say(f"{printable(document['policy'])} already has this entry; nothing changed.")

    @trust_app.command("list")
    def list_command(
        *,
        trusted_keys: TrustedKeysOption = None,
        config: ConfigOption = None,
        json_output: JsonOption = False,
    ) -> None:
        """Show the policy's default mode and its author entries."""
        from nexo_pkg.trust.entry import load_policy  # noqa: PLC0415

        path = _policy_path(trusted_keys, config)
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
                    "authors": [_author_json(author) for author in policy.authors],
                    "warnings": list(policy.warnings),
                }
            )
            return
        # Every value below comes from the policy file, whoever wrote it: escaped.
        for warning in policy.warnings:
            say(printable(warning))
        say(printable(f"Policy: {path}{'' if path.exists() else ' (not created yet)'}"))
        say(f"Default mode: {printable(policy.default)}")
        if not policy.authors:
            say("No [[authors]] entries: no signer is trusted.")
        for author in policy.authors:
            who = author.identity or author.identity_regexp
            repos = f" repos={','.join(author.repos)}" if author.repos else ""
            extra = f" signer_workflow={author.signer_workflow}" if author.signer_workflow else ""
            result_line(printable(f"{author.owner:<20} {who}{repos}{extra} (line {author.line})"))

    @trust_app.command("remove")
    def remove_command(
        *,
        target: Annotated[str, typer.Argument(metavar="OWNER[/REPO]")],
        trusted_keys: TrustedKeysOption = None,
        config: ConfigOption = None,
        yes: YesOption = False,
        json_output: JsonOption = False,
    ) -> None:
        """Stop trusting OWNER's signers (with REPO: the entries limited to that repository)."""
        from nexo_pkg.trust.policy_edit import remove_authors  # noqa: PLC0415

        def run() -> dict[str, Any]:
            owner, repo = _split_target(target)
            if not yes and not interactive():
                raise UsageError("not a terminal: pass --yes to remove entries")
            question = f"Remove the entries for {printable(target)}?"
            if not yes and not confirm(question):
                raise NexoError("nothing was changed", kind="cancelled")
            result = remove_authors(_policy_path(trusted_keys, config), owner, repo)
            if not result.changed:
                raise NexoError(
                    f"{result.path} has no [[authors]] entry for {target}", kind="not_trusted"
                )
            return {"ok": True, "policy": str(result.path), "removed": result.changed}

        document = guarded(run, json_output=json_output)
        if json_output:
            emit_json(document)
        else:
            say(f"Removed {document['removed']} entr{'y' if document['removed'] == 1 else 'ies'}.")

    @trust_app.command("verify")
    def verify_command(
        *,
        file: Annotated[Path, typer.Argument(metavar="FILE", help="The file to check.")],
        bundle: Annotated[
            Path | None,
            typer.Option("--bundle", help="Sigstore bundle or attestations (.jsonl) for FILE."),
        ] = None,
        repo: Annotated[
            str | None,
            typer.Option("--repo", help="OWNER/REPO the file must have been built in."),
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
        outcome, policy, bound_owner, bound_repo = guarded(
            lambda: _verify(
                file,
                bundle=bundle,
                repo_text=repo,
                owner_text=owner,
                signer_workflow=signer_workflow,
                issuer=oidc_issuer,
                tag=tag,
                trusted_keys=trusted_keys,
                config=config,
            ),
            json_output=json_output,
        )
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
                }
            )
            exit_with(0)
        # The file name, the material's name and everything the certificate says: escaped.
        # The report is the command's result: stdout, as `plugin verify`'s.
        result_line(printable(f"{file.name}: verified ({outcome.scheme}, {outcome.material})"))
        result_line(f"  identity: {printable(outcome.identity)}")
        result_line(f"  issuer:   {printable(outcome.issuer)}")
        for key, value in outcome.claims.items():
            if value:
                result_line(f"  {printable(key)}: {printable(value)}")
        scope = f"{bound_owner}/{bound_repo}" if bound_repo else (bound_owner or "any owner")
        source = policy.source or "the flags"
        result_line(printable(f"Policy ({source}): trusted for {scope}"))
