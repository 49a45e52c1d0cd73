"""The author commands' tests run where authors work: ``scripts/author-tests.txt`` lists them,
``scripts/test.sh`` runs them again under ``--windows-shim`` and ci.yml on macOS and Windows,
so a POSIX-only call on the path of ``lint``, ``lsp``, ``schema``, ``new``, ``pack`` or
``check`` fails CI here. Each command's own tests must be in the list."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SUBSET = REPO / "scripts" / "author-tests.txt"

#: Each author command and the tests of its own (a directory or a file) the subset must hold.
OWN_TESTS = {
    "lint": ("tests/lint", "tests/cli/test_lint_cli.py"),
    "lsp": ("tests/lsp",),
    "schema": ("tests/cli/test_schema_outside.py",),
    "new": ("tests/scaffold", "tests/cli/test_new_cli.py"),
    "pack": ("tests/pack", "tests/cli/test_pack_feedback.py"),
    "check": ("tests/check/test_check_host.py", "tests/check/test_check_windows.py"),
}


def _listed() -> list[str]:
    lines = SUBSET.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_every_listed_path_exists() -> None:
    missing = [path for path in _listed() if not (REPO / path).exists()]
    assert missing == []


def test_every_author_command_has_its_own_tests_in_the_subset() -> None:
    listed = _listed()

    def covered(path: str) -> bool:
        return any(path == entry or path.startswith(entry.rstrip("/") + "/") for entry in listed)

    absent = {
        command: [path for path in paths if not covered(path)]
        for command, paths in OWN_TESTS.items()
    }
    assert {command: paths for command, paths in absent.items() if paths} == {}
    for paths in OWN_TESTS.values():
        assert all((REPO / path).exists() for path in paths), paths
