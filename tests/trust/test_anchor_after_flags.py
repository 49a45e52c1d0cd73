"""A pattern that sets inline flags before its ``^`` (``(?i)^…$``) is anchored already: ``trust
add`` writes it as given, with no second ``^`` in front (``^(?i)^…$``), and the policy lint does
not call it unanchored. The pattern written matches exactly the identities the old form did,
for nexo-pkg (a full match) and for cosign and the reference installer (a search)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import clean_env, nexo

from nexo_pkg.trust.identity_pattern import full_match
from nexo_pkg.trust.policy import anchored_form, lint_policy_source, load_policy

PATTERN = r"(?i)^https://github\.com/acme/[a-z]+/\.github/workflows/release\.yml@.+$"
OLD_FORM = "^" + PATTERN  # what trust add wrote before
IDENTITIES = [
    "https://github.com/acme/echo/.github/workflows/release.yml@refs/tags/v1.0.0",
    "HTTPS://GITHUB.COM/ACME/ECHO/.GITHUB/WORKFLOWS/RELEASE.YML@refs/heads/main",
    "https://github.com/acme/echo/.github/workflows/release.yml@",
    "x https://github.com/acme/echo/.github/workflows/release.yml@refs/tags/v1",
    "https://github.com/acme/echo/.github/workflows/release.yml@v1\nextra",
    "https://github.com/evil/echo/.github/workflows/release.yml@refs/tags/v1",
    "https://github.com/acme/ec-ho/.github/workflows/release.yml@refs/tags/v1",
    "",
]


def _searched(pattern: str, identity: str) -> bool:
    """Whether a search for ``pattern`` (as cosign's regexp.MatchString) finds it in
    ``identity``, by the same RE2 engine."""
    return full_match(f"(?s:.*)(?:{pattern})(?s:.*)", identity)


def test_trust_add_writes_a_flagged_anchored_pattern_as_given(tmp_path: Path) -> None:
    policy = tmp_path / "config" / "trusted_keys.toml"
    policy.parent.mkdir()
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    result = nexo(
        "plugin", "trust", "add", "acme", "--identity-regexp", PATTERN,
        "--trusted-keys", policy, "--yes", env=env,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    [author] = load_policy(policy).authors
    assert author.identity_regexp == PATTERN
    assert "^^" not in policy.read_text(encoding="utf-8")
    assert sorted(p.name for p in policy.parent.iterdir()) == ["trusted_keys.toml"]
    assert not (tmp_path / "home").exists() or not any((tmp_path / "home").rglob("*.toml"))
    # The same identities, for a full match (nexo-pkg) and for a search (cosign, reference).
    for identity in IDENTITIES:
        assert full_match(author.identity_regexp, identity) == full_match(OLD_FORM, identity)
        assert _searched(author.identity_regexp, identity) == _searched(OLD_FORM, identity)
    assert [full_match(PATTERN, identity) for identity in IDENTITIES[:3]] == [True, True, False]


@pytest.mark.parametrize(
    ("pattern", "anchored"),
    [
        ("(?i)^a$", None),
        ("(?is)(?U)\\Aa\\z", None),
        ("(?i-m)^a$", None),
        ("(?i)^a", "(?i)^a$"),
        ("(?i)a$", "^(?i)a$"),
        # `(?m)` makes `^` a line start: it is no anchor, and is anchored in front as before.
        ("(?m)^a$", "^(?m)^a$"),
        ("(?i:^a)$", "^(?i:^a)$"),
        ("(?i)^a$|(?s)^b$", None),
    ],
)
def test_inline_flags_before_the_anchor(pattern: str, anchored: str | None) -> None:
    assert anchored_form(pattern) == anchored


def test_the_policy_lint_takes_a_flagged_anchor_as_an_anchor() -> None:
    text = f'[[authors]]\nowner = "acme"\nidentity_regexp = {PATTERN!r}\n'
    result = lint_policy_source(text, path="trusted_keys.toml")
    assert [d.code for d in result.diagnostics if d.code == "NXT010"] == []
