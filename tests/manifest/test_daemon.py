"""The daemon releases nexo-pkg knows, kept in one table, and the id rule every part shares."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nexo_pkg.core.version import parse_version
from nexo_pkg.manifest.daemon import (
    DAEMON_RELEASES,
    ID_MAX_LENGTH,
    ID_PATTERN,
    NEWEST_DAEMON_VERSION,
    PORTABLE_ID_MAX_LENGTH,
    id_problem,
    is_valid_id,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "lint.md"


def test_the_table_is_ordered_and_the_newest_release_is_the_default() -> None:
    versions = [parse_version(release.version) for release in DAEMON_RELEASES]
    cores = [(version.major, version.minor, version.patch) for version in versions]
    assert cores == sorted(cores)
    assert DAEMON_RELEASES[-1].version == NEWEST_DAEMON_VERSION
    assert (PORTABLE_ID_MAX_LENGTH, ID_MAX_LENGTH) == (32, 64)
    assert ID_PATTERN == "^[a-z][a-z0-9_]{0,63}$"


def test_the_user_docs_show_the_same_table() -> None:
    rows = re.findall(r"^\| (\d+\.\d+\.\d+) \| (.+) \|$", DOCS.read_text("utf-8"), re.MULTILINE)
    assert [version for version, _ in rows] == [release.version for release in DAEMON_RELEASES]
    for (_, text), release in zip(rows, DAEMON_RELEASES, strict=True):
        assert text == release.changes


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("", "must not be empty"),
        ("1abc", "must not start with a digit"),
        ("Abc", "uppercase letters are not allowed"),
        ("a" * 65, "must be at most 64 characters (it has 65)"),
        ("a-b", "character `-` is not allowed"),
        ("_ab", "must start with a lowercase letter"),
    ],
)
def test_id_problem_names_the_reason_in_the_daemons_order(value: str, reason: str) -> None:
    problem = id_problem(value)
    assert problem is not None
    assert problem.startswith(reason)
    assert not is_valid_id(value)


def test_ids_up_to_64_characters_are_valid_and_a_shorter_limit_can_be_asked_for() -> None:
    assert is_valid_id("a" * 64)
    assert id_problem("a" * 64) is None
    assert not is_valid_id("a" * 33, PORTABLE_ID_MAX_LENGTH)
    assert (
        id_problem("a" * 33, PORTABLE_ID_MAX_LENGTH) == "must be at most 32 characters (it has 33)"
    )
