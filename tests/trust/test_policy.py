"""``trusted_keys.toml``: parsing, every refusal with its line, mode resolution, lint."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import nexo

from nexo_pkg.core.errors import NexoError
from nexo_pkg.trust.api import (
    GITHUB_ACTIONS_ISSUER,
    TrustPolicy,
    default_policy_path,
    load_policy,
    resolve_mode,
)
from nexo_pkg.trust.policy import lint_policy_source

from .helpers import ROOT_SHAPE

FULL = """\
schema_version = "1.0"
default = "require"
cosign_binary = "/usr/bin/cosign"

[[authors]]
owner = "lordmacu"
identity_regexp = "^https://github.com/lordmacu/[^/]+/\\\\.github/workflows/release\\\\.yml@refs/tags/v.*$"
oidc_issuer = "https://token.actions.githubusercontent.com"
repos = ["nexo-plugin-slack"]
mode = "warn"

[[authors]]
owner = "other"
identity = "https://github.com/other/p/.github/workflows/release.yml@refs/tags/v1.0.0"
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "trusted_keys.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_full_policy_parses(tmp_path: Path) -> None:
    path = _write(tmp_path, FULL)
    policy = load_policy(path)
    assert policy.default == "require"
    assert policy.source == path
    assert policy.cosign_binary == "/usr/bin/cosign"
    first, second = policy.authors
    assert first.owner == "lordmacu"
    assert first.repos == ("nexo-plugin-slack",)
    assert first.mode == "warn"
    assert first.line == 5
    assert second.identity is not None
    assert second.oidc_issuer == GITHUB_ACTIONS_ISSUER
    assert second.mode is None
    # The keys the entry sets, as its [[authors]] table writes them.
    assert dict(second.entry_items()) == {
        "owner": "other",
        "identity": second.identity,
        "oidc_issuer": GITHUB_ACTIONS_ISSUER,
    }


def test_missing_default_file_is_warn_without_authors(tmp_path: Path) -> None:
    path = default_policy_path(tmp_path)
    policy = load_policy(path)
    assert policy == TrustPolicy(location=path)
    assert policy.source is None
    assert policy.default == "warn"
    assert policy.authors == ()


def test_missing_explicit_file_is_policy_invalid(tmp_path: Path) -> None:
    with pytest.raises(NexoError) as caught:
        load_policy(tmp_path / "nope.toml", explicit=True)
    assert caught.value.kind == "policy_invalid"
    assert caught.value.exit_code == 2


def test_default_policy_path() -> None:
    assert default_policy_path(Path("/h")) == Path("/h/config/extensions/trusted_keys.toml")


HEADER = 'schema_version = "1.0"\n'
AUTHOR = '[[authors]]\nowner = "acme"\n'


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        (HEADER + "colour = 1\n", 2, "unknown key `colour`"),
        (HEADER + AUTHOR + 'identity = "x"\nidentity_regex = "x"\n', 5, "identity_regex"),
        (HEADER + AUTHOR + 'identity_regexp = "[unclosed"\n', 4, "does not compile"),
        (HEADER + AUTHOR + "\n", 2, "no identity"),
        (HEADER + AUTHOR + 'identity = "a"\nidentity_regexp = "a"\n', 4, "both"),
        (HEADER + 'default = "strict"\n', 2, "ignore, warn, require"),
        (HEADER + AUTHOR + 'identity = "a"\nmode = "yolo"\n', 5, "ignore, warn, require"),
        (HEADER + "default = 3\n", 2, "must be a string"),
        (HEADER + AUTHOR + 'identity = "a"\nrepos = "one"\n', 5, "array of strings"),
        (HEADER + AUTHOR + 'identity = "a"\nrepos = []\n', 5, "empty"),
        (HEADER + AUTHOR + 'identity = "a"\nrepos = ["acme/x"]\n', 5, "not GitHub repository"),
        (HEADER + '[[authors]]\nidentity = "a"\n', 2, "no `owner`"),
        (HEADER + '[[authors]]\nowner = "a b"\nidentity = "a"\n', 3, "GitHub owner"),
        (HEADER + 'authors = "x"\n', 2, "array of tables"),
        ("schema_version = 2\n", 1, "must be a string"),
        (HEADER + 'default = "warn\n', 2, "invalid TOML"),
        (HEADER + "[authors]\nowner = 1\n", 2, "array of tables"),
        (HEADER + 'trusted_root = "missing.json"\n', 2, "does not exist"),
    ],
)
def test_invalid_policy_names_the_line(tmp_path: Path, text: str, line: int, needle: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(NexoError) as caught:
        load_policy(path)
    error = caught.value
    assert error.kind == "policy_invalid"
    assert error.exit_code == 2
    assert error.message.startswith(f"{path}:{line}:"), error.message
    assert needle in error.message
    assert error.details["line"] == line


def test_not_utf8_is_policy_invalid(tmp_path: Path) -> None:
    path = tmp_path / "trusted_keys.toml"
    path.write_bytes(b'default = "\xff"\n')
    with pytest.raises(NexoError) as caught:
        load_policy(path)
    assert caught.value.kind == "policy_invalid"


def test_trusted_root_is_relative_to_the_policy(tmp_path: Path) -> None:
    (tmp_path / "roots").mkdir()
    (tmp_path / "roots" / "trusted_root.json").write_text(ROOT_SHAPE)
    policy = load_policy(_write(tmp_path, 'trusted_root = "roots/trusted_root.json"\n'))
    assert policy.trusted_root == tmp_path / "roots" / "trusted_root.json"


@pytest.mark.parametrize(
    ("skip", "require", "owner", "expected"),
    [
        (True, False, "lordmacu", "ignore"),
        (False, True, "lordmacu", "require"),
        (False, False, "lordmacu", "warn"),  # the author's mode
        (False, False, "LordMacu", "warn"),  # GitHub owners are case-insensitive
        (False, False, "other", "require"),  # author without mode: the default
        (False, False, "nobody", "require"),
        (False, False, None, "require"),
    ],
)
def test_resolve_mode(
    tmp_path: Path, skip: bool, require: bool, owner: str | None, expected: str
) -> None:
    policy = load_policy(_write(tmp_path, FULL))
    assert resolve_mode(policy, owner, require_signature=require, skip_verify=skip) == expected


@pytest.mark.parametrize(
    ("repo", "expected"),
    [("sandbox", "ignore"), ("SandBox", "ignore"), ("echo", "require"), (None, "ignore")],
)
def test_a_mode_limited_by_repos_sets_only_those_repositories(
    tmp_path: Path, repo: str | None, expected: str
) -> None:
    # `ignore` for one experimental repository must not switch signatures off for every
    # repository of the owner: the entry that applies to the repository decides.
    text = (
        'schema_version = "1.0"\ndefault = "warn"\n'
        '[[authors]]\nowner = "acme"\nidentity = "x@example.com"\nrepos = ["sandbox"]\n'
        'mode = "ignore"\n'
        '[[authors]]\nowner = "acme"\nidentity = "y@example.com"\nmode = "require"\n'
    )
    policy = load_policy(_write(tmp_path, text))
    found = resolve_mode(policy, "acme", require_signature=False, skip_verify=False, repo=repo)
    assert found == expected


def test_identity_regexp_is_a_full_match(tmp_path: Path) -> None:
    policy = load_policy(_write(tmp_path, FULL))
    lordmacu = policy.authors[0]
    good = "https://github.com/lordmacu/p/.github/workflows/release.yml@refs/tags/v1"
    assert lordmacu.identity_matches(good)
    assert not lordmacu.identity_matches(good.replace("lordmacu", "lordmacu-evil"))
    unanchored = load_policy(
        _write(tmp_path, HEADER + AUTHOR + 'identity_regexp = "https://github.com/acme/"\n')
    ).authors[0]
    assert not unanchored.identity_matches("https://github.com/acme/x")
    assert not unanchored.identity_matches("evil https://github.com/acme/")


def test_lint_reports_every_problem_with_positions() -> None:
    text = (
        HEADER
        + 'cosign_binary = "cosign"\n'
        + AUTHOR
        + '  identity_regexp = "(x"\n'
        + 'mood = "warn"\n'
        + '[[authors]]\nowner = "b"\n'
    )
    result = lint_policy_source(text, path="trusted_keys.toml")
    found = [
        (d.code, d.severity, d.span.start.line, d.span.start.column) for d in result.diagnostics
    ]
    assert found == [
        ("NXT009", "warning", 2, 1),
        ("NXT007", "error", 5, 3),
        ("NXT002", "error", 6, 1),
        ("NXT005", "error", 7, 1),
    ]
    assert not result.success
    assert all(d.url and d.help for d in result.diagnostics)


def test_lint_of_a_valid_policy_is_clean() -> None:
    result = lint_policy_source(
        FULL.replace('cosign_binary = "/usr/bin/cosign"\n', ""), path="x/trusted_keys.toml"
    )
    assert result.diagnostics == ()
    assert result.success


def test_lint_syntax_error_position() -> None:
    result = lint_policy_source('default = "warn"\nx = = 1\n', path="trusted_keys.toml")
    (diagnostic,) = result.diagnostics
    assert diagnostic.code == "NXT001"
    assert diagnostic.span.start.line == 2


def test_every_rule_is_documented() -> None:
    from nexo_pkg.trust.policy import POLICY_RULES

    docs = (Path(__file__).resolve().parent.parent.parent / "docs" / "trust.md").read_text()
    for rule in POLICY_RULES.values():
        assert f"### {rule.code} {rule.name}\n" in docs


def test_lint_cli_checks_trust_policies(tmp_path: Path) -> None:
    import json

    path = _write(tmp_path, HEADER + AUTHOR + 'identity_regexp = "(x"\n')
    result = nexo("plugin", "lint", str(path), "--format", "json", in_process=True)
    assert result.code == 1, result.stderr
    (file_report,) = json.loads(result.stdout)["files"]
    (diagnostic,) = file_report["diagnostics"]
    assert diagnostic["code"] == "NXT007"
    assert diagnostic["range"]["start"] == {"line": 4, "column": 1}
    path.write_text(FULL.replace('cosign_binary = "/usr/bin/cosign"\n', ""))
    clean = nexo("plugin", "lint", str(path), in_process=True)
    assert clean.code == 0, clean.stderr


@pytest.mark.parametrize("value", ["~no-such-user-here/root.json", "~1.2"])
def test_trusted_root_with_an_unknown_home_is_not_found(tmp_path: Path, value: str) -> None:
    with pytest.raises(NexoError) as caught:
        load_policy(_write(tmp_path, f'trusted_root = "{value}"\n'))
    assert caught.value.kind == "policy_invalid"
    assert "does not exist" in caught.value.message


def test_trusted_root_name_too_long_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NexoError) as caught:
        load_policy(_write(tmp_path, f'trusted_root = "{"x" * 5000}"\n'))
    assert "does not exist" in caught.value.message


def test_a_byte_order_mark_is_dropped_as_the_daemon_drops_it(tmp_path: Path) -> None:
    """The daemon reads trusted_keys.toml with the `toml` crate, whose parser drops a leading
    UTF-8 BOM (toml_edit's src/parser/document.rs, "Remove BOM if present", toml-v0.8.23)."""
    path = tmp_path / "trusted_keys.toml"
    path.write_bytes(b"\xef\xbb\xbf" + FULL.encode())
    policy = load_policy(path, explicit=True)
    assert policy.default == "require"
    assert policy.authors[0].owner == "lordmacu"
    assert policy.authors[0].line == 5


def test_an_empty_identity_regexp_is_refused(tmp_path: Path) -> None:
    """The daemon compiles `identity_regexp = ""` and matches it unanchored, so it would trust
    every signer; nexo refuses it (a deliberate difference, docs/security.md)."""
    path = _write(
        tmp_path, 'default = "require"\n\n[[authors]]\nowner = "acme"\nidentity_regexp = ""\n'
    )
    with pytest.raises(NexoError) as caught:
        load_policy(path, explicit=True)
    assert caught.value.kind == "policy_invalid"
    assert caught.value.message == (
        f"{path}:5:1: invalid trust policy: `authors[0].identity_regexp` must not be empty"
    )
