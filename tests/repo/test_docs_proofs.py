"""Every test the documentation names as the proof of a defence exists.

docs/security.md (and the other pages) name their proofs as ``tests/x/test_y.py::test_z``,
and further tests of the same file as ``::test_w``. A renamed or removed test leaves a
promise with no proof behind it; this walks every page and finds each named test's ``def``.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md"])

# A full reference (file, optionally a test), or a `::test_…` shorthand for the file named last.
REFERENCE = re.compile(r"(tests/[\w/]+\.py)(?:::(test_[\w*]+))?|`::(test_[\w*]+)")
DEFINED = re.compile(r"^\s*(?:async\s+)?def\s+(test_\w+)\s*\(", re.MULTILINE)


def named_tests(text: str) -> list[tuple[str, str]]:
    """``(file, test)`` for every test named in ``text``, shorthands resolved to the file
    named before them."""
    named: list[tuple[str, str]] = []
    last_file: str | None = None
    for match in REFERENCE.finditer(text):
        full_file, full_test, short_test = match.groups()
        if full_file is not None:
            last_file = full_file
            if full_test is not None:
                named.append((full_file, full_test))
        elif last_file is not None:
            named.append((last_file, short_test))
    return named


def test_shorthands_are_resolved_to_the_file_named_last() -> None:
    text = (
        "`tests/a/test_b.py::test_one`, `::test_two`; see `tests/c/test_d.py` and "
        "`::test_three`; an address `::1` is no test"
    )
    assert named_tests(text) == [
        ("tests/a/test_b.py", "test_one"),
        ("tests/a/test_b.py", "test_two"),
        ("tests/c/test_d.py", "test_three"),
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_test_named_as_a_proof_exists(page: Path) -> None:
    missing = []
    for file, test in named_tests(page.read_text(encoding="utf-8")):
        path = ROOT / file
        if not path.is_file():
            # Pages about a scaffolded project name that project's own tests.
            if file.count("/") > 1:
                missing.append(f"{file} (no such file)")
            continue
        defined = DEFINED.findall(path.read_text(encoding="utf-8"))
        if not fnmatch.filter(defined, test):
            missing.append(f"{file}::{test}")
    assert missing == [], f"{page.name} names tests that do not exist"
