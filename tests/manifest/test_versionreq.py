"""Cargo ``semver`` 1.x semantics: the case tables follow the crate's documentation and tests."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nexo_pkg.core.version import Prerelease, Version, VersionError, parse_version
from nexo_pkg.core.versionreq import Op, parse_version_req

# (requirement, versions that match, versions that do not)
MATCH_TABLE: list[tuple[str, list[str], list[str]]] = [
    # no operator means caret
    (
        "1.0.0",
        ["1.0.0", "1.1.0", "1.0.1"],
        ["0.9.9", "0.10.0", "0.1.0", "1.0.0-pre", "1.0.1-pre"],
    ),
    (
        "^1.0.0",
        ["1.0.0", "1.1.0", "1.0.1"],
        ["0.9.9", "0.10.0", "0.1.0", "1.0.0-pre", "1.0.1-pre"],
    ),
    # exact
    ("=1.0.0", ["1.0.0"], ["1.0.1", "0.9.9", "0.10.0", "0.1.0", "1.0.0-pre"]),
    ("=0.9.0", ["0.9.0"], ["0.9.1", "1.9.0", "0.0.9", "0.9.0-pre"]),
    ("=0.0.2", ["0.0.2"], ["0.0.1", "0.0.3", "0.0.2-pre"]),
    ("=0.1.0-beta2.a", ["0.1.0-beta2.a"], ["0.9.1", "0.1.0", "0.1.1-beta2.a", "0.1.0-beta2"]),
    ("=0.1.0+meta", ["0.1.0", "0.1.0+meta", "0.1.0+any"], ["0.1.1"]),
    ("=1.2", ["1.2.0", "1.2.9"], ["1.3.0", "1.2.0-pre"]),
    ("=1", ["1.0.0", "1.9.9"], ["2.0.0", "0.9.0"]),
    ("=2.1.1-really.0", ["2.1.1-really.0"], ["2.1.1"]),
    # greater / less
    (">= 1.0.0", ["1.0.0", "2.0.0"], ["0.1.0", "0.0.1", "1.0.0-pre", "2.0.0-pre"]),
    (
        ">= 2.1.0-alpha2",
        ["2.1.0-alpha2", "2.1.0-alpha3", "2.1.0", "3.0.0"],
        ["2.0.0", "2.1.0-alpha1", "2.0.0-alpha2", "3.0.0-alpha2"],
    ),
    ("< 1.0.0", ["0.1.0", "0.0.1"], ["1.0.0", "1.0.0-beta", "1.0.1", "0.9.9-alpha"]),
    (
        "<= 2.1.0-alpha2",
        ["2.1.0-alpha2", "2.1.0-alpha1", "2.0.0", "1.0.0"],
        ["2.1.0", "2.2.0-alpha1", "2.0.0-alpha2", "1.0.0-alpha2"],
    ),
    (">1.0.0-alpha, <1.0.0", ["1.0.0-beta"], ["1.0.0", "1.0.0-alpha"]),
    (">1.0.0-alpha, <1.0", [], ["1.0.0-beta"]),
    (">1.0.0-alpha, <1", [], ["1.0.0-beta"]),
    (">1", ["2.0.0"], ["1.9.9", "1.0.0"]),
    (">1.2", ["1.3.0", "2.0.0"], ["1.2.9"]),
    ("<1.2", ["1.1.9", "0.1.0"], ["1.2.0", "1.2.1"]),
    ("<=1.2", ["1.2.0", "1.2.9", "1.1.0"], ["1.3.0"]),
    (">=1", ["1.0.0", "5.0.0"], ["0.9.9"]),
    # several comparators (AND)
    ("> 0.0.9, <= 2.5.3", ["0.0.10", "1.0.0", "2.5.3"], ["0.0.8", "2.5.4"]),
    ("0.3.0, 0.4.0", [], ["0.0.8", "0.3.0", "0.4.0"]),
    ("<= 0.2.0, >= 0.5.0", [], ["0.0.8", "0.3.0", "0.5.1"]),
    ("0.1.0, 0.1.4, 0.1.6", ["0.1.6", "0.1.9"], ["0.1.0", "0.1.4", "0.2.0"]),
    (
        ">=0.5.1-alpha3, <0.6",
        ["0.5.1-alpha3", "0.5.1-alpha4", "0.5.1-beta", "0.5.1", "0.5.5"],
        ["0.5.1-alpha1", "0.5.2-alpha3", "0.5.5-pre", "0.5.0-pre", "0.6.0", "0.6.0-pre"],
    ),
    (">=0.1, <0.5", ["0.1.0", "0.4.99"], ["0.5.0", "0.0.9", "1.0.0"]),
    (">=0.1.0,<0.5.0", ["0.3.0"], ["0.5.0"]),
    # tilde
    ("~1", ["1.0.0", "1.0.1", "1.1.1"], ["0.9.1", "2.9.0", "0.0.9"]),
    ("~1.2", ["1.2.0", "1.2.1"], ["1.1.1", "1.3.0", "0.0.9"]),
    ("~1.2.2", ["1.2.2", "1.2.4"], ["1.2.1", "1.9.0", "1.0.9", "2.0.1", "0.1.3"]),
    (
        "~1.2.3-beta.2",
        ["1.2.3", "1.2.4", "1.2.3-beta.2", "1.2.3-beta.4"],
        ["1.3.3", "1.1.4", "1.2.3-beta.1", "1.2.4-beta.2"],
    ),
    ("~0.1", ["0.1.0", "0.1.7"], ["0.2.0", "0.0.9"]),
    # caret
    ("^1", ["1.1.2", "1.1.0", "1.2.1", "1.0.1"], ["0.9.1", "2.9.0", "0.1.4"]),
    ("^1.1", ["1.1.2", "1.1.0", "1.2.1"], ["0.9.1", "2.9.0", "1.0.1", "0.1.4"]),
    (
        "^1.1.2",
        ["1.1.2", "1.1.4", "1.2.1"],
        ["0.9.1", "2.9.0", "1.1.1", "0.0.1", "1.1.2-alpha1", "1.1.3-alpha1", "2.9.0-alpha1"],
    ),
    (
        "^0.1.2",
        ["0.1.2", "0.1.4"],
        ["0.9.1", "2.9.0", "1.1.1", "0.0.1", "0.1.2-beta", "0.1.3-alpha", "0.2.0-pre"],
    ),
    (
        "^0.5.1-alpha3",
        ["0.5.1-alpha3", "0.5.1-alpha4", "0.5.1-beta", "0.5.1", "0.5.5"],
        ["0.5.1-alpha1", "0.5.2-alpha3", "0.5.5-pre", "0.5.0-pre", "0.6.0"],
    ),
    ("^0.0.2", ["0.0.2"], ["0.9.1", "2.9.0", "1.1.1", "0.0.1", "0.1.4", "0.0.3"]),
    ("^0.0", ["0.0.2", "0.0.0"], ["0.9.1", "2.9.0", "1.1.1", "0.1.4"]),
    ("^0", ["0.9.1", "0.0.2", "0.0.0"], ["2.9.0", "1.1.1"]),
    (
        "^1.4.2-beta.5",
        ["1.4.2", "1.4.3", "1.4.2-beta.5", "1.4.2-beta.6", "1.4.2-c"],
        ["0.9.9", "2.0.0", "1.4.2-alpha", "1.4.2-beta.4", "1.4.3-beta.5"],
    ),
    ("^0.2", ["0.2.0", "0.2.9"], ["0.3.0", "0.1.9", "1.0.0"]),
    ("0.2", ["0.2.0", "0.2.9"], ["0.3.0", "0.1.9"]),
    ("1", ["1.0.0", "1.99.0"], ["2.0.0", "0.9.0"]),
    # wildcards
    ("*", ["0.9.1", "2.9.0", "0.0.9", "1.0.1", "1.1.1"], ["1.0.0-pre"]),
    ("x", ["0.9.1", "2.9.0"], []),
    ("X", ["0.9.1", "2.9.0"], []),
    ("1.*", ["1.2.0", "1.2.1", "1.1.1", "1.3.0"], ["0.0.9", "2.0.0", "1.2.0-pre"]),
    ("1.x", ["1.2.0", "1.3.0"], ["0.0.9"]),
    ("1.X", ["1.2.0", "1.3.0"], ["0.0.9"]),
    ("1.*.*", ["1.2.0", "1.3.0"], ["0.0.9"]),
    ("1.2.*", ["1.2.0", "1.2.2", "1.2.4"], ["1.9.0", "1.0.9", "2.0.1", "0.1.3"]),
    ("1.2.x", ["1.2.0", "1.2.2"], ["1.9.0"]),
    ("1.2.X", ["1.2.0", "1.2.2"], ["1.9.0"]),
    ("0.3.*", ["0.3.0", "0.3.17"], ["0.4.0", "0.2.9"]),
    ("0.*.*", ["0.5.0", "0.0.1"], ["1.0.0"]),
    (">=1.*", ["1.0.0", "2.0.0"], ["0.9.0"]),
    ("<1.*", ["0.9.0"], ["1.0.0", "1.5.0"]),
    # spaces
    ("  >=  0.1.0  ,   <  0.5  ", ["0.2.0"], ["0.5.0"]),
    (">= 0.1.0", ["0.1.0"], ["0.0.1"]),
    # build metadata is ignored
    ("^1.2.3+build.5", ["1.2.3", "1.9.0"], ["2.0.0"]),
]


@pytest.mark.parametrize(("requirement", "matching", "not_matching"), MATCH_TABLE)
def test_match_table(requirement: str, matching: list[str], not_matching: list[str]) -> None:
    req = parse_version_req(requirement)
    for text in matching:
        assert req.matches(parse_version(text)), f"{requirement!r} should match {text}"
    for text in not_matching:
        assert not req.matches(parse_version(text)), f"{requirement!r} should not match {text}"


REQ_ERRORS: list[tuple[str, str]] = [
    ("", "unexpected end of input while parsing major version number"),
    ("   ", "unexpected end of input while parsing major version number"),
    ("^", "unexpected end of input while parsing major version number"),
    (">=", "unexpected end of input while parsing major version number"),
    ("\0", "unexpected character '\\0' while parsing major version number"),
    (">= >= 0.0.2", "unexpected character '>' while parsing major version number"),
    (">== 0.0.2", "unexpected character '=' while parsing major version number"),
    ("==1.0.0", "unexpected character '=' while parsing major version number"),
    ("a.0.0", "unexpected character 'a' while parsing major version number"),
    ("v1.0.0", "unexpected character 'v' while parsing major version number"),
    (">=v0.1", "unexpected character 'v' while parsing major version number"),
    ("1.0.0-", "empty identifier segment in pre-release identifier"),
    ("1.0.0+", "empty identifier segment in build metadata"),
    ("1.0.0-a..b", "empty identifier segment in pre-release identifier"),
    ("1.2.3 - 2.3.4", "expected comma after patch version number, found '-'"),
    ("> 0.0.9 <= 2.5.3", "expected comma after patch version number, found '<'"),
    ("=1.2.3 || =2.3.4", "expected comma after patch version number, found '|'"),
    (">=0.1 <0.5", "expected comma after minor version number, found '<'"),
    ("1.2-alpha", "expected comma after minor version number, found '-'"),
    (">=0.1.0,", "unexpected end of input while parsing major version number"),
    (",>=0.1.0", "unexpected character ',' while parsing major version number"),
    (">=\t0.1.0", "unexpected character '\\t' while parsing major version number"),
    (">=0.1.0\t", "expected comma after patch version number, found '\\t'"),
    ("*.1", "unexpected character after wildcard in version req"),
    ("1.*.1", "unexpected character after wildcard in version req"),
    (">=1.*.1", "unexpected character after wildcard in version req"),
    ("*1", "unexpected character after wildcard in version req"),
    ("*, 0.20.0-any", "wildcard req (*) must be the only comparator in the version req"),
    ("0.20.0-any, *", "wildcard req (*) must be the only comparator in the version req"),
    ("0.20.0-any, *, 1.0", "wildcard req (*) must be the only comparator in the version req"),
    (">=1.0, x", "wildcard req (x) must be the only comparator in the version req"),
    ("01.0.0", "invalid leading zero in major version number"),
    ("1.02", "invalid leading zero in minor version number"),
    ("1.2.03", "invalid leading zero in patch version number"),
    ("1.2.3-01", "invalid leading zero in pre-release identifier"),
    ("18446744073709551616", "value of major version number exceeds u64::MAX"),
    (", ".join([">= 0.0.0"] * 33), "excessive number of version comparators"),
]


@pytest.mark.parametrize(("requirement", "message"), REQ_ERRORS)
def test_requirement_errors(requirement: str, message: str) -> None:
    with pytest.raises(VersionError) as caught:
        parse_version_req(requirement)
    assert str(caught.value) == message


def test_thirty_two_comparators_are_accepted() -> None:
    req = parse_version_req(", ".join([">= 0.0.0"] * 32))
    assert len(req.comparators) == 32


@pytest.mark.parametrize(
    ("requirement", "display"),
    [
        ("1.2.3", "^1.2.3"),
        ("0.2", "^0.2"),
        ("=1.2.3", "=1.2.3"),
        (">= 0.1.0", ">=0.1.0"),
        ("1.*", "1.*"),
        ("1.*.*", "1.*"),
        ("0.3.x", "0.3.*"),
        ("*", "*"),
        (">=1.*", ">=1"),
        (">=0.5.1-alpha3,<0.6", ">=0.5.1-alpha3, <0.6"),
        ("~1.2.3+build", "~1.2.3"),
    ],
)
def test_display_is_the_crate_normal_form(requirement: str, display: str) -> None:
    assert str(parse_version_req(requirement)) == display


def test_operators_and_partial_parts() -> None:
    req = parse_version_req("<=1.2, 3.*, ~4")
    assert [c.op for c in req.comparators] == [Op.LESS_EQ, Op.WILDCARD, Op.TILDE]
    assert (req.comparators[0].minor, req.comparators[0].patch) == (2, None)
    assert req.comparators[1].minor is None
    assert parse_version_req("*").comparators == ()


VERSION_ERRORS: list[tuple[str, str]] = [
    ("", "empty string, expected a semver version"),
    ("  ", "unexpected character ' ' while parsing major version number"),
    (" 1.2.3", "unexpected character ' ' while parsing major version number"),
    ("1", "unexpected end of input while parsing major version number"),
    ("1.2", "unexpected end of input while parsing minor version number"),
    ("1.2.3-", "empty identifier segment in pre-release identifier"),
    ("a.b.c", "unexpected character 'a' while parsing major version number"),
    ("v1.2.3", "unexpected character 'v' while parsing major version number"),
    ("1.2.3 abc", "unexpected character ' ' after patch version number"),
    ("1.2.3 ", "unexpected character ' ' after patch version number"),
    ("1.2.3-01", "invalid leading zero in pre-release identifier"),
    ("1.2.3++", "empty identifier segment in build metadata"),
    ("07", "invalid leading zero in major version number"),
    ("1.07.0", "invalid leading zero in minor version number"),
    ("111111111111111111111.0.0", "value of major version number exceeds u64::MAX"),
    ("8\0", "unexpected character '\\0' after major version number"),
    ("1.2.3-alpha_1", "unexpected character '_' after pre-release identifier"),
    ("1.2.3.4", "unexpected character '.' after patch version number"),
    ("1.2.x", "unexpected character 'x' while parsing patch version number"),
]


@pytest.mark.parametrize(("text", "message"), VERSION_ERRORS)
def test_version_errors(text: str, message: str) -> None:
    with pytest.raises(VersionError) as caught:
        parse_version(text)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "text",
    [
        "0.0.0",
        "1.2.3",
        "1.2.3-alpha",
        "1.2.3-alpha.1",
        "1.2.3-0",
        "1.2.3-1a",
        "1.2.3-a-b",
        "1.2.3+001",
        "1.2.3+1a",
        "1.2.3-rc.1+build.5",
        "18446744073709551615.0.0",
    ],
)
def test_valid_versions_round_trip(text: str) -> None:
    assert str(parse_version(text)) == text
    assert str(Version.parse(text)) == text


def test_prerelease_precedence_follows_semver_org() -> None:
    ordered = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
    ]
    tags = [parse_version(text).pre for text in ordered]
    for lower, higher in itertools.pairwise(tags):
        assert lower < higher
        assert higher > lower
        assert lower <= higher
        assert higher >= lower
    assert Prerelease("") > Prerelease("zzz")


def test_without_prerelease_keeps_numbers() -> None:
    version = parse_version("0.1.6-rc3+b1").without_prerelease()
    assert str(version) == "0.1.6+b1"
    assert parse_version_req(">=0.1.0").matches(version)
    assert not parse_version_req(">=0.1.0").matches(parse_version("0.1.6-rc3"))


def test_single_comparator_matches_applies_prerelease_rule() -> None:
    req = parse_version_req(">=1.0.0-alpha")
    assert len(req.comparators) == 1
    assert req.matches(parse_version("1.0.0-beta"))
    assert not req.matches(parse_version("1.1.0-beta"))


_parts = st.integers(min_value=0, max_value=30)
_ops = st.sampled_from(["", "=", ">", ">=", "<", "<=", "~", "^"])


@given(op=_ops, major=_parts, minor=st.none() | _parts, patch=_parts, use_patch=st.booleans())
def test_display_reparses_to_the_same_requirement(
    op: str, major: int, minor: int | None, patch: int, use_patch: bool
) -> None:
    text = f"{op}{major}"
    if minor is not None:
        text += f".{minor}"
        if use_patch:
            text += f".{patch}"
    req = parse_version_req(text)
    assert parse_version_req(str(req)) == req


@given(major=_parts, minor=_parts, patch=_parts)
def test_caret_equals_explicit_range(major: int, minor: int, patch: int) -> None:
    # Cargo documents ^1.2.3 as >=1.2.3, <2.0.0; ^0.2.3 as >=0.2.3, <0.3.0; ^0.0.3 as =0.0.3.
    version = Version(major, minor, patch)
    for base in ("1.2.3", "0.2.3", "0.0.3", "2.0.0", "0.0.0"):
        caret = parse_version_req(f"^{base}")
        b_major, b_minor, b_patch = (int(part) for part in base.split("."))
        if b_major > 0:
            upper = f"{b_major + 1}.0.0"
        elif b_minor > 0:
            upper = f"0.{b_minor + 1}.0"
        else:
            upper = f"0.0.{b_patch + 1}"
        explicit = parse_version_req(f">={base}, <{upper}")
        assert caret.matches(version) == explicit.matches(version)
