"""The one version model: the Rust ``semver`` crate's order, build metadata included, and the
refusals of the requirement parser that must stay (dtolnay/semver 1.0.28, the version the
daemon's Cargo.lock pins: ``src/impls.rs`` ``impl Ord for Prerelease`` / ``impl Ord for
BuildMetadata``, ``src/lib.rs`` ``#[derive(Ord)] struct Version``, ``src/parse.rs``).
test_version_differential.py asks the crate itself the same questions."""

from __future__ import annotations

import itertools

import pytest

from nexo_pkg.core.version import (
    BuildMetadata,
    Prerelease,
    Version,
    VersionError,
    compare_versions,
    parse_version,
)
from nexo_pkg.core.versionreq import parse_version_req

from .version_cases import ASCENDING


def test_order_is_the_crates() -> None:
    versions = [parse_version(text) for text in ASCENDING]
    assert sorted(sorted(versions, key=str)) == versions
    for lower, higher in itertools.pairwise(ASCENDING):
        assert compare_versions(lower, higher) == -1, (lower, higher)
        assert compare_versions(higher, lower) == 1, (higher, lower)
        assert compare_versions(lower, lower) == 0


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("0.1.5", "0.1.5+build.1"),
        ("1.0.0+b1", "1.0.0+b2"),
        ("1.0.0+b2", "1.0.0+b3"),
        ("1.0.0", "1.0.0+b1"),
    ],
)
def test_build_metadata_orders(lower: str, higher: str) -> None:
    # python-semver (and SemVer 2.0's precedence) call these equal; the daemon's crate does not.
    assert parse_version(lower) < parse_version(higher)
    assert parse_version(lower) != parse_version(higher)


def test_equal_only_when_written_the_same() -> None:
    assert parse_version("1.0.0+b1") == parse_version("1.0.0+b1")
    assert BuildMetadata("0") != BuildMetadata("00")
    assert BuildMetadata("0") < BuildMetadata("00")
    assert not BuildMetadata("") < BuildMetadata("")
    assert BuildMetadata("") < BuildMetadata("0")
    assert Prerelease("") > Prerelease("zzz")


def test_non_ascii_digits_are_not_numeric() -> None:
    # The crate tests `is_ascii_digit`; Python's str.isdigit also takes superscripts and
    # other scripts' digits.
    assert BuildMetadata("1") < BuildMetadata("a")
    assert BuildMetadata("a") < BuildMetadata("\u00b2")  # compared as text, not a number
    assert Prerelease("1") < Prerelease("\u0661")  # ARABIC-INDIC DIGIT ONE


def test_without_build_and_is_valid() -> None:
    assert parse_version("1.0.0-rc.1+b2").without_build() == parse_version("1.0.0-rc.1")
    assert Version.is_valid("1.0.0+b1")
    assert not Version.is_valid("v1.0.0")
    # the error is the crate's, word for word
    with pytest.raises(VersionError, match=r"^unexpected end of input while parsing minor"):
        compare_versions("1.0.0", "1.0")
    with pytest.raises(VersionError, match=r"^unexpected character 'v' while parsing major"):
        compare_versions("v1.0.0", "1.0.0")


def test_unprintable_characters_quoted_the_rust_way() -> None:
    with pytest.raises(VersionError) as caught:
        parse_version("1.0.0\u00a0")
    assert str(caught.value) == "unexpected character '\\u{a0}' after patch version number"
    with pytest.raises(VersionError) as caught:
        parse_version("1.0.0\t")
    assert str(caught.value) == "unexpected character '\\t' after patch version number"


# Refusals of core/versionreq.py that mutants used to get past (src/parse.rs: only spaces are
# skipped between tokens, a wildcard is a whole fragment, `X` included).
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("\t1.0", "unexpected character '\\t' while parsing major version number"),
        ("1.0,\t2.0", "unexpected character '\\t' while parsing major version number"),
        ("1.0\t", "expected comma after minor version number, found '\\t'"),
        ("1X", "expected comma after major version number, found 'X'"),
        ("*X", "unexpected character after wildcard in version req"),
        ("XX", "unexpected character after wildcard in version req"),
        ("1.X1", "expected comma after minor version number, found '1'"),
        ("1.X.1", "unexpected character after wildcard in version req"),
    ],
)
def test_requirement_refusals(text: str, message: str) -> None:
    with pytest.raises(VersionError) as caught:
        parse_version_req(text)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("requirement", "version", "matches"),
    [
        # A partial >= / <= never lets a pre-release in (src/eval.rs, `pre_is_compatible`
        # needs a comparator with the same major.minor.patch and a pre-release).
        (">=1.0", "1.0.0-alpha", False),
        (">=1", "1.0.0-alpha", False),
        (">=1.0", "1.0.1-alpha", False),
        ("<=1.0", "1.0.5-rc.1", False),
        ("<=1", "1.2.0-rc.1", False),
        ("<=1.0", "1.0.5", True),
        (">=1.0", "1.0.0", True),
        (">=1.0.0-alpha", "1.0.0-alpha", True),
        (">=1.0.0-alpha", "1.0.0-beta", True),
        ("<=1.0.0-beta", "1.0.0-alpha", True),
        ("<=1.0.0-alpha", "1.0.0-beta", False),
        # ...not even beside a comparator that opts into the pre-release: the partial one
        # itself must hold, and `1.0.0-alpha` is neither equal to `1.0` nor above or below it.
        (">=1.0, >=1.0.0-alpha", "1.0.0-alpha", False),
        (">=1, >=1.0.0-alpha", "1.0.0-alpha", False),
        ("<=1.0, >=1.0.0-alpha", "1.0.0-alpha", False),
        ("<=1.0, <=1.0.0-beta", "1.0.0-alpha", False),
        (">=1.0.0-alpha, <=1.0", "1.0.0-beta", False),
        # build metadata never takes part in matching (src/eval.rs)
        (">=0.1.5+build.1", "0.1.5", True),
        ("=1.0.0+b2", "1.0.0+b1", True),
    ],
)
def test_partial_comparators_and_prereleases(requirement: str, version: str, matches: bool) -> None:
    assert parse_version_req(requirement).matches(parse_version(version)) is matches
