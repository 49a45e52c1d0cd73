"""nexo-pkg imports its own modules plainly: no ``importlib`` indirection hides an import from
the import contracts (``lint-imports``), and no second archive extractor hides behind one."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "nexo_pkg"
# import_module("nexo_pkg..."), import_module(f"...{name}"), __import__(...): any dynamic import
# of a module by name.
DYNAMIC = re.compile(r"\bimport_module\(|\b__import__\(")


def _lines_matching(pattern: re.Pattern[str]) -> list[str]:
    return [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if "templates" not in path.parts
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]


def test_no_module_of_ours_is_imported_by_name() -> None:
    assert _lines_matching(DYNAMIC) == []


def test_one_archive_extractor() -> None:
    """Check and install extract a release tarball with sources/extract.py alone."""
    assert _lines_matching(re.compile(r"\.extractall\(|\.extract\(member")) == []
