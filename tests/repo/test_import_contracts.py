"""The import contracts of pyproject.toml ([tool.importlinter]) hold, and they do catch a
breach: a copy of the package with one forbidden import added fails ``lint-imports``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def lint_imports(root: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    """``lint-imports --no-cache`` on the package and pyproject.toml under ``root``."""
    executable = Path(sys.executable).with_name("lint-imports")
    found = str(executable) if executable.is_file() else shutil.which("lint-imports")
    if found is None:
        pytest.skip("lint-imports is not installed (pip install -e '.[test]' provides it)")
    selected = [argument for contract in contracts for argument in ("--contract", contract)]
    return subprocess.run(
        [found, "--no-cache", *selected],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_the_contracts_hold() -> None:
    completed = lint_imports(REPO)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "0 broken" in completed.stdout


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(
        REPO / "nexo_pkg",
        tmp_path / "nexo_pkg",
        ignore=shutil.ignore_patterns("__pycache__", "templates", "schemas"),
    )
    shutil.copy2(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


@pytest.mark.parametrize(
    ("module", "line", "contract", "shown"),
    [
        (
            "core/kinds.py",
            "from nexo_pkg.core.errors import NexoError\n",
            "floors",
            "nexo_pkg.core.kinds -> nexo_pkg.core.errors",
        ),
        (
            "install/compat.py",
            "import nexo_pkg.cli.common\n",
            "floors",
            "nexo_pkg.install.compat -> nexo_pkg.cli.common",
        ),
        (
            "manifest/schema.py",
            "import httpx\n",
            "lint-path",
            "nexo_pkg.manifest.schema -> httpx",
        ),
        (
            "lint/reporters.py",
            "from nexo_pkg.trust.entry import verify_asset_signature\n",
            "lint-path",
            "nexo_pkg.lint.reporters -> nexo_pkg.trust.entry",
        ),
    ],
    ids=["core-imports-errors", "install-imports-cli", "manifest-imports-httpx", "lint-verifies"],
)
def test_a_forbidden_import_breaks_its_contract(
    tmp_path: Path, module: str, line: str, contract: str, shown: str
) -> None:
    root = _copy(tmp_path)
    target = root / "nexo_pkg" / module
    target.write_text(target.read_text("utf-8") + line, encoding="utf-8")
    completed = lint_imports(root, contract)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "1 broken" in completed.stdout
    assert shown in completed.stdout


def test_architecture_doc_describes_every_contract() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    doc = (REPO / "docs" / "architecture.md").read_text("utf-8")
    section = doc.split("## Import contracts", 1)[1]
    assert [contract["id"] for contract in contracts] == ["floors", "lint-path"]
    for contract in contracts:
        assert f"**`{contract['id']}`** (a `{contract['type']}` contract" in section
