"""The author entry that would trust a signer that was seen, as TOML and as a command.

Used by refusals (``signer_untrusted`` names the entry and the ``nexo plugin trust add``
command to run) and by ``trust add`` itself, so both say the same thing.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nexo_pkg.core.terminal import toml_string
from nexo_pkg.trust.policy import GITHUB_ACTIONS_ISSUER, SLSA_PROVENANCE_V1, AuthorPolicy

_RE2_SPECIAL = set(".^$*+?()[]{}|\\")


def escape_pattern(text: str) -> str:
    """``text`` as an RE2 literal (only the characters RE2 treats specially are escaped)."""
    return "".join("\\" + char if char in _RE2_SPECIAL else char for char in text)


def workflow_pattern(uri: str) -> str:
    """An anchored pattern for the workflow ``uri``: any tag when it ran for a tag, else the
    exact ref it ran for."""
    base, _, ref = uri.partition("@")
    if ref.startswith("refs/tags/"):
        return f"^{escape_pattern(base)}@refs/tags/.+$"
    if ref:
        return f"^{escape_pattern(base)}@{escape_pattern(ref)}$"
    return f"^{escape_pattern(base)}$"


def _repository_of(uri: str) -> str | None:
    if not uri.startswith("https://github.com/"):
        return None
    parts = uri.removeprefix("https://github.com/").split("/")
    return f"{parts[0]}/{parts[1]}" if len(parts) >= 2 and parts[1] else None


def suggest_author(
    *,
    identity: str | None,
    issuer: str | None,
    claims: Mapping[str, Any],
    owner: str | None,
    repo: str | None,
    predicate_type: str | None = None,
) -> AuthorPolicy | None:
    """The narrowest author entry that trusts this signer for ``owner/repo`` (``None`` when
    its certificate names no source repository, or it was built outside ``owner``): a GitHub Actions
    signer gets an anchored pattern for any tag of its workflow, the repository in ``repos``,
    and, when a reusable workflow signed for the repository, the starting workflow as
    identity and the reusable one as ``signer_workflow``; an attestation of another
    ``predicate_type`` than SLSA provenance v1 (an entry's default) gets it named.
    """
    if not identity:
        return None
    source = claims.get("source_repository")
    if not isinstance(source, str) or not source:
        return None  # the owner is always bound, and nothing binds this signer to one
    if owner is not None and source.partition("/")[0].casefold() != owner.casefold():
        return None  # the owner is always bound: no entry of `owner` trusts this signer
    entry_owner = owner or source.partition("/")[0]
    repo_name = repo or source.partition("/")[2] or None
    signer_workflow: str | None = None
    base_identity = identity
    build_config = claims.get("build_config_uri")
    if (
        _repository_of(identity) is not None
        and (_repository_of(identity) or "").casefold() != source.casefold()
        and isinstance(build_config, str)
    ):
        base_identity = build_config
        workflow = claims.get("signer_workflow")
        signer_workflow = workflow if isinstance(workflow, str) else None
    is_workflow = base_identity.startswith("https://")
    return AuthorPolicy(
        owner=entry_owner,
        identity_regexp=workflow_pattern(base_identity) if is_workflow else None,
        identity=None if is_workflow else base_identity,
        oidc_issuer=issuer or GITHUB_ACTIONS_ISSUER,
        repos=(repo_name,) if repo_name else None,
        signer_workflow=signer_workflow if is_workflow else None,
        predicate_type=predicate_type if predicate_type != SLSA_PROVENANCE_V1 else None,
    )


def author_entry_toml(author: AuthorPolicy) -> str:
    """``author`` as the ``[[authors]]`` table to paste into ``trusted_keys.toml``."""
    lines = ["[[authors]]"]
    for key, value in author.entry_items():
        if isinstance(value, bool):
            lines.append(f"{key} = {'true' if value else 'false'}")
        elif isinstance(value, tuple):
            lines.append(f"{key} = [{', '.join(toml_string(item) for item in value)}]")
        else:
            lines.append(f"{key} = {toml_string(value)}")
    return "\n".join(lines) + "\n"


def trust_add_command(author: AuthorPolicy, *, repo: str | None, policy_path: Path | None) -> str:
    """The ``nexo plugin trust add`` command line that writes ``author``."""
    target = f"{author.owner}/{repo}" if repo else author.owner
    if repo is None and author.repos and len(author.repos) == 1:
        target = f"{author.owner}/{author.repos[0]}"
    words = ["nexo", "plugin", "trust", "add", target]
    if author.identity_regexp is not None:
        words += ["--identity-regexp", author.identity_regexp]
    if author.identity is not None:
        words += ["--identity", author.identity]
    if author.oidc_issuer != GITHUB_ACTIONS_ISSUER:
        words += ["--oidc-issuer", author.oidc_issuer]
    if author.signer_workflow is not None:
        words += ["--signer-workflow", author.signer_workflow]
    if author.predicate_type is not None:
        words += ["--predicate-type", author.predicate_type]
    if policy_path is not None:
        words += ["--trusted-keys", str(policy_path)]
    return shlex.join(words)
