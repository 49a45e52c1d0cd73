"""``identity_regexp`` speaks RE2, the dialect of cosign and of the reference installer, and
the reference's own ``trusted_keys.toml`` inputs parse and behave as they do there, whichever
engine runs the patterns (google-re2, or the pure-Python one where it has no wheel)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from support.shared_fixtures import skip_unless_present

from nexo_pkg.core.errors import NexoError
from nexo_pkg.trust.api import load_policy, resolve_mode
from nexo_pkg.trust.policy import anchored_form, lint_policy_source, parse_policy

from .helpers import SHARED_FIXTURES

# Every test here runs with google-re2 and with the pure-Python engine (musllinux).
pytestmark = pytest.mark.usefixtures("each_pattern_engine")

TRUSTED_KEYS = SHARED_FIXTURES / "daemon-parity" / "trusted-keys"

# What the reference installer's TrustedKeysConfig::load answers for each input (serde with
# deny_unknown_fields, lowercase modes, a string schema_version, Rust `regex` compilation).
ACCEPTED = [
    "tk_authors.toml",
    "tk_cosign_binary.toml",
    "tk_empty.toml",
    "tk_minimal.toml",
    "tk_rust_posix_class.toml",
    "tk_rust_unicode_class.toml",
    "tk_unanchored.toml",
]
REJECTED = [
    "tk_bad_regex.toml",
    "tk_missing_identity.toml",
    "tk_mode_caps.toml",
    "tk_python_only_lookahead.toml",
    "tk_schema_int.toml",
    "tk_unknown_field.toml",
]


@skip_unless_present("daemon-parity", "trusted-keys")
def test_every_reference_input_is_classified() -> None:
    assert sorted(p.name for p in TRUSTED_KEYS.glob("*.toml")) == sorted(ACCEPTED + REJECTED)


@pytest.mark.parametrize("name", ACCEPTED)
@skip_unless_present("daemon-parity", "trusted-keys")
def test_inputs_the_reference_accepts_parse(name: str) -> None:
    load_policy(TRUSTED_KEYS / name, explicit=True)


@pytest.mark.parametrize("name", REJECTED)
def test_inputs_the_reference_rejects_are_policy_invalid(name: str) -> None:
    with pytest.raises(NexoError) as caught:
        load_policy(TRUSTED_KEYS / name, explicit=True)
    assert caught.value.kind == "policy_invalid"
    assert str(TRUSTED_KEYS / name) in caught.value.message


@skip_unless_present("daemon-parity", "trusted-keys")
def test_authors_and_modes_resolve_as_in_the_reference() -> None:
    policy = load_policy(TRUSTED_KEYS / "tk_authors.toml", explicit=True)
    assert policy.default == "require"
    assert resolve_mode(policy, "lordmacu", require_signature=False, skip_verify=False) == (
        "require"
    )
    assert resolve_mode(policy, "other", require_signature=False, skip_verify=False) == "ignore"
    assert resolve_mode(policy, "nobody", require_signature=False, skip_verify=False) == "require"
    assert policy.authors[1].oidc_issuer == "https://example.com"


@skip_unless_present("daemon-parity", "trusted-keys")
def test_posix_class_matches_like_rust_regex() -> None:
    (author,) = load_policy(TRUSTED_KEYS / "tk_rust_posix_class.toml", explicit=True).authors
    base = "https://github.com/lordmacu/{}/.github/workflows/release.yml@refs/tags/v1.0.0"
    assert author.identity_matches(base.format("nexo-plugin-slack"))
    assert not author.identity_matches(base.format("nexo plugin"))


@skip_unless_present("daemon-parity", "trusted-keys")
def test_unicode_class_matches_like_rust_regex() -> None:
    (author,) = load_policy(TRUSTED_KEYS / "tk_rust_unicode_class.toml", explicit=True).authors
    assert author.identity_matches("https://github.com/lordmacú/anything")
    assert not author.identity_matches("https://github.com/lord-macu/anything")


@skip_unless_present("daemon-parity", "trusted-keys")
def test_lookahead_is_invalid_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "trusted_keys.toml"
    text = (TRUSTED_KEYS / "tk_python_only_lookahead.toml").read_text()
    with pytest.raises(NexoError) as caught:
        parse_policy(text, path=path)
    assert caught.value.kind == "policy_invalid"
    assert f"{path}:4:" in caught.value.message
    assert "RE2" in caught.value.message


def test_backreference_and_lookbehind_are_invalid(tmp_path: Path) -> None:
    for pattern in (r"^(a)\\1$", r"^(?<=x)a$", r"^(?=a)a$"):
        text = f'[[authors]]\nowner = "acme"\nidentity_regexp = "{pattern}"\n'
        with pytest.raises(NexoError):
            parse_policy(text, path=tmp_path / "trusted_keys.toml")


def test_a_hostile_pattern_matches_in_linear_time() -> None:
    text = '[[authors]]\nowner = "acme"\nidentity_regexp = "^(a+)+$"\n'
    (author,) = parse_policy(text, path=Path("trusted_keys.toml")).authors
    started = time.monotonic()
    assert not author.identity_matches("a" * 50_000 + "!")
    assert time.monotonic() - started < 1.0


def test_full_match_stays_whatever_the_anchors() -> None:
    text = '[[authors]]\nowner = "acme"\nidentity_regexp = "^https://github\\\\.com/acme/"\n'
    (author,) = parse_policy(text, path=Path("trusted_keys.toml")).authors
    assert not author.identity_matches("https://github.com/acme/x")


@skip_unless_present("daemon-parity", "trusted-keys")
def test_unanchored_pattern_warns_with_the_anchored_form() -> None:
    text = (TRUSTED_KEYS / "tk_unanchored.toml").read_text()
    result = lint_policy_source(text, path="trusted_keys.toml")
    (warning,) = [d for d in result.diagnostics if d.code == "NXT010"]
    assert warning.severity == "warning"
    assert 'identity_regexp = "^github.com/lordmacu/$"' in warning.message
    assert warning.span.start.line == 4


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"^https://x/.*$", None),
        (r"\Ahttps://x/.*\z", None),
        (r"https://x/.*", r"^https://x/.*$"),
        (r"^https://x/.*", r"^https://x/.*$"),
        (r"https://x/.*\$", r"^https://x/.*\$$"),
        (r"^a$|^b$", None),
        (r"a|b", r"^(?:a|b)$"),
    ],
)
def test_anchored_form(pattern: str, expected: str | None) -> None:
    assert anchored_form(pattern) == expected


def test_anchored_patterns_do_not_warn() -> None:
    text = '[[authors]]\nowner = "acme"\nidentity_regexp = "^https://github\\\\.com/acme/.+$"\n'
    result = lint_policy_source(text, path="trusted_keys.toml")
    assert [d.code for d in result.diagnostics] == []


def test_deeply_nested_policy_is_policy_invalid_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "trusted_keys.toml"
    path.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(NexoError) as caught:
        load_policy(path, explicit=True)
    assert caught.value.kind == "policy_invalid"
    assert "nested too deeply" in caught.value.message
    lint = lint_policy_source(path.read_text(), path=str(path))
    assert [d.code for d in lint.diagnostics] == ["NXT001"]


def test_oversized_policy_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "trusted_keys.toml"
    path.write_text("# " + "x" * (2 * 1024 * 1024) + "\n")
    with pytest.raises(NexoError) as caught:
        load_policy(path, explicit=True)
    assert caught.value.kind == "policy_invalid"
    assert "larger than" in caught.value.message


def test_new_author_keys_are_validated(tmp_path: Path) -> None:
    policy = parse_policy(
        '[[authors]]\nowner = "acme"\nidentity_regexp = "^x$"\n'
        'signer_workflow = "acme/tools/.github/workflows/attest.yml"\n'
        'source_ref = "^refs/tags/v.*$"\npredicate_type = "https://slsa.dev/provenance/v1"\n'
        "allow_republish = true\n",
        path=tmp_path / "trusted_keys.toml",
    )
    (author,) = policy.authors
    assert author.signer_workflow == "acme/tools/.github/workflows/attest.yml"
    assert author.source_ref_matches("refs/tags/v1.0.0")
    assert not author.source_ref_matches("refs/heads/main")
    assert author.allow_republish
    for bad in (
        'signer_workflow = "attest.yml"\n',
        'source_ref = "(?=x)"\n',
        'allow_republish = "yes"\n',
    ):
        with pytest.raises(NexoError):
            parse_policy(
                '[[authors]]\nowner = "acme"\nidentity_regexp = "^x$"\n' + bad,
                path=tmp_path / "trusted_keys.toml",
            )
