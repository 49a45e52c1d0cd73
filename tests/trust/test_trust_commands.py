"""What the trust commands decide, through trust.commands (the command line only parses,
asks and renders)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nexo_pkg.core.errors import NexoError
from nexo_pkg.trust.api import load_policy
from nexo_pkg.trust.commands import (
    chosen_author,
    needs_release_signer,
    record_author,
    remove_entries,
    verification_policy,
    with_overrides,
)
from nexo_pkg.trust.policy import GITHUB_ACTIONS_ISSUER, TrustPolicy

CLI_TRUST = Path(__file__).resolve().parents[2] / "nexo_pkg" / "cli" / "trust.py"


@pytest.mark.parametrize(
    ("repo", "identity", "regexp", "message"),
    [
        ("echo", "a@example.com", "^a$", "--identity and --identity-regexp exclude each other"),
        (None, None, None, "give OWNER/REPO to read the signer"),
    ],
)
def test_the_signer_flags_are_checked(
    repo: str | None, identity: str | None, regexp: str | None, message: str
) -> None:
    with pytest.raises(NexoError) as caught:
        needs_release_signer(repo, identity, regexp)
    assert caught.value.kind == "usage"
    assert message in caught.value.message


def test_a_named_signer_needs_no_release() -> None:
    assert needs_release_signer("echo", None, None) is True
    assert needs_release_signer(None, "https://github.com/acme/echo/x", None) is False


def test_the_flags_make_the_entry_and_override_it() -> None:
    author = chosen_author(
        "acme", "echo", identity=None, identity_regexp="^x$", issuer=None, seen=None
    )
    assert (author.owner, author.repos, author.oidc_issuer) == (
        "acme",
        ("echo",),
        GITHUB_ACTIONS_ISSUER,
    )
    changed = with_overrides(
        author, issuer=None, signer_workflow="acme/echo/.github/workflows/r.yml", mode="warn",
        allow_republish=True,
    )  # fmt: skip
    assert (changed.mode, changed.allow_republish) == ("warn", True)
    with pytest.raises(NexoError) as caught:
        with_overrides(
            author, issuer=None, signer_workflow=None, mode="loud", allow_republish=False
        )
    assert caught.value.kind == "usage"


def test_a_seen_signer_becomes_an_anchored_entry() -> None:
    identity = "https://github.com/acme/echo/.github/workflows/release.yml@refs/tags/v1.0.0"
    seen: dict[str, object] = {
        "identity": identity,
        "issuer": GITHUB_ACTIONS_ISSUER,
        "claims": {"source_repository": "acme/echo"},
    }
    author = chosen_author(
        "acme", "echo", identity=None, identity_regexp=None, issuer=None, seen=seen
    )
    assert author.identity_regexp is not None
    assert re.fullmatch(author.identity_regexp, identity)


def test_no_entry_is_suggested_for_a_signer_built_outside_the_owner() -> None:
    from nexo_pkg.trust.suggest import suggest_author

    identity = "https://github.com/evil/echo/.github/workflows/release.yml@refs/tags/v1.0.0"
    claims = {"source_repository": "evil/echo"}
    for repo in ("echo", None):
        suggested = suggest_author(
            identity=identity, issuer=GITHUB_ACTIONS_ISSUER, claims=claims, owner="acme",
            repo=repo,
        )  # fmt: skip
        assert suggested is None
    own = suggest_author(identity=identity, issuer=GITHUB_ACTIONS_ISSUER, claims=claims,
                         owner="Evil", repo=None)  # fmt: skip
    assert own is not None
    assert own.owner == "Evil"


def test_record_then_remove(tmp_path: Path) -> None:
    policy = tmp_path / "trusted_keys.toml"
    author = chosen_author(
        "acme", None, identity="a@example.com", identity_regexp=None, issuer=None, seen=None
    )
    first = record_author(policy, author, None)
    again = record_author(policy, author, None)
    assert (first["added"], again["added"]) == (True, False)
    assert [each.owner for each in load_policy(policy).authors] == ["acme"]
    before = policy.read_bytes()
    with pytest.raises(NexoError) as caught:
        remove_entries(policy, "other", None, "other")
    assert caught.value.kind == "not_trusted"
    assert policy.read_bytes() == before
    done = remove_entries(policy, "acme", None, "acme")
    assert (done["removed"], done["narrowed"]) == (1, 0)
    assert load_policy(policy).authors == ()


def test_verify_narrows_a_policy_or_scopes_an_owner() -> None:
    scoped = verification_policy(None, owner="acme", repo="echo", signer_workflow=None, issuer=None)
    (author,) = scoped.authors
    assert author.identity_regexp == "(?i)^https://github\\.com/acme/echo/\\.github/workflows/.+$"
    assert scoped.default == "require"
    # A policy's entries are taken as install reads them: the flags narrow the verdict after
    # verification (verify_file), and written into the entries they could widen them.
    policy = TrustPolicy(authors=scoped.authors)
    narrowed = verification_policy(
        policy, owner=None, repo=None,
        signer_workflow="acme/echo/.github/workflows/r.yml", issuer="https://issuer.example",
    )  # fmt: skip
    assert narrowed is policy


def test_the_command_line_holds_no_trust_decisions() -> None:
    text = CLI_TRUST.read_text(encoding="utf-8")
    for name in ("AuthorPolicy(", "policy_edit", "suggest_author", "verify_asset_signature"):
        assert name not in text, name
