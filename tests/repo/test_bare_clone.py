"""A checkout with nothing beside it (no ``../shared``, no ``NEXO_TEST_FIXTURES``) runs the
tests: the ones that need the shared fixtures skip, naming the path they looked for."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# What reads the shared fixtures: the variable, and the helpers of tests/support/shared_fixtures.py.
READING = frozenset({
    "NEXO_TEST_FIXTURES", "shared_fixtures_dir", "shared_fixture", "require_shared_fixture",
    "shared_files", "skip_unless_present",
})  # fmt: skip
# Left out of the clone (IGNORED), or about the repository itself (this module among them).
NOT_RUN = ("tests/repo/", "tests/fuzz/", "tests/support/")


def _words(node: ast.AST) -> set[str]:
    """The names, attributes, parameters and strings ``node``'s code mentions."""
    found: set[str] = set()
    for part in ast.walk(node):
        if isinstance(part, ast.Name):
            found.add(part.id)
        elif isinstance(part, ast.Attribute):
            found.add(part.attr)
        elif isinstance(part, ast.arg):
            found.add(part.arg)
        elif isinstance(part, ast.alias):
            found.add(part.asname or part.name)
        elif isinstance(part, ast.Constant) and isinstance(part.value, str):
            found.add(part.value)
    return found


def _reading(tree: ast.Module, seeds: set[str]) -> set[str]:
    """``seeds`` and the module-level names (functions, fixtures, classes, constants) whose
    code reaches one of them, to a fixed point."""
    defined: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined[node.name] = _words(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        defined[name.id] = _words(node)
    names = set(seeds)
    while grown := {n for n, used in defined.items() if n not in names and used & names}:
        names |= grown
    return names


def needing_fixtures(tests: Path = REPO / "tests") -> list[str]:
    """The tests that read the shared fixtures (as node ids), themselves or through a name a
    fixture, helper or ``conftest.py`` of their directory binds to them (``FIXTURES`` of
    tests/trust/helpers.py); a module that reads them with no test doing so, whole."""
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in tests.rglob("*.py")}
    # What each helper module and conftest.py binds to the fixtures.
    bound = {
        path: _reading(tree, set(READING)) - READING
        for path, tree in trees.items()
        if not path.name.startswith("test_") and _words(tree) & READING
    }
    found: list[str] = []
    for module in sorted(trees):
        name = module.relative_to(tests.parent).as_posix()
        if not module.name.startswith("test_") or name.startswith(NOT_RUN):
            continue
        tree = trees[module]
        seeds = set(READING)
        for helper, names in bound.items():
            if helper.name == "conftest.py" and module.is_relative_to(helper.parent):
                seeds |= names
            elif helper.parent == module.parent:
                seeds |= names & _imported_from(tree, helper.stem)
        names = _reading(tree, seeds)
        tests_reading = [
            f"{name}::{node.name}"
            for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef))
            and node.name.lower().startswith("test")
            and node.name in names
        ]
        if tests_reading:
            found.extend(tests_reading)
        elif _words(tree) & names - seeds | _words(tree) & READING:
            found.append(name)
    return found


def _imported_from(tree: ast.Module, stem: str) -> set[str]:
    """The names ``tree`` imports from the module ``stem`` (``from .stem import X``)."""
    return {
        alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == stem
        for alias in node.names
    }


IGNORED = shutil.ignore_patterns(
    ".git", ".venv", ".cache", "__pycache__", "*.egg-info", ".*_cache", "benchmarks", "fuzz"
)


def test_a_clone_without_the_shared_fixtures_skips_with_the_path(tmp_path: Path) -> None:
    clone = tmp_path / "nexo-pkg"
    shutil.copytree(REPO, clone, ignore=IGNORED)
    env = {key: value for key, value in os.environ.items() if key != "NEXO_TEST_FIXTURES"}
    env["PYTHONPATH"] = str(clone)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
         *needing_fixtures()],
        cwd=clone, env=env, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    looked = tmp_path / "shared" / "fixtures"
    assert f"shared fixtures not found at {looked}/" in output
    assert "set NEXO_TEST_FIXTURES" in output
    assert " passed" in output


def test_the_tests_reading_the_fixtures_are_found_not_listed(tmp_path: Path) -> None:
    """A new module that reads the shared fixtures is run by the clone test without being
    named anywhere: directly, through a fixture of its own, a helper's name or conftest."""
    tests = tmp_path / "tests"
    (tests / "area").mkdir(parents=True)
    (tests / "area" / "helpers.py").write_text(
        'from support.shared_fixtures import shared_fixture\nVECTORS = shared_fixture("v")\n'
        'PLAIN = "x"\n'
    )
    (tests / "area" / "conftest.py").write_text(
        "import pytest\nfrom support.shared_fixtures import shared_fixture\n"
        '@pytest.fixture\ndef corpus():\n    return shared_fixture("c")\n'
    )
    (tests / "area" / "test_direct.py").write_text(
        "import os\nfrom pathlib import Path\n"
        'def test_reads():\n    Path(os.environ["NEXO_TEST_FIXTURES"], "a").read_bytes()\n'
        "def test_not():\n    pass\n"
    )
    (tests / "area" / "test_through.py").write_text(
        "import pytest\nfrom .helpers import PLAIN, VECTORS\n"
        "@pytest.fixture\ndef wheel():\n    return VECTORS / 'w'\n"
        "def test_helper(wheel):\n    wheel.read_bytes()\n"
        "def test_conftest(corpus):\n    corpus.read_bytes()\n"
        "def test_plain():\n    assert PLAIN\n"
    )
    (tests / "area" / "test_marked.py").write_text(
        "from support.shared_fixtures import skip_unless_present\n"
        'pytestmark = skip_unless_present("v")\ndef test_x():\n    pass\n'
    )
    (tests / "area" / "test_unrelated.py").write_text("def test_y():\n    pass\n")
    assert needing_fixtures(tests) == [
        "tests/area/test_direct.py::test_reads",
        "tests/area/test_marked.py",
        "tests/area/test_through.py::test_helper",
        "tests/area/test_through.py::test_conftest",
    ]
    # Every module the clone test once named is still among those found.
    found = {test.split("::")[0] for test in needing_fixtures()}
    for module in (
        "tests/editors/test_taplo.py", "tests/cli/test_lint_cli.py",
        "tests/trust/test_policy_dialect.py", "tests/install/test_operator_settings.py",
        "tests/manifest/test_manifest_schema.py", "tests/trust/test_trust_cli.py",
        "tests/trust/test_lazy_import.py", "tests/trust/test_github_attestations.py",
        "tests/trust/test_gh_verdicts.py", "tests/trust/test_policy_reading.py",
        "tests/trust/test_exact_signer_match.py",
    ):  # fmt: skip
        assert module in found, module
