"""The import contracts of pyproject.toml ([tool.importlinter]) hold, and they do catch a
breach: a copy of the package with one forbidden import added fails ``lint-imports``.
"""

from __future__ import annotations

import ast
import os
import re
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
    (tmp_path / "scripts").mkdir()
    shutil.copy2(REPO / "scripts" / "import_contracts.py", tmp_path / "scripts")
    return tmp_path


@pytest.mark.parametrize(
    ("module", "line", "contract", "shown"),
    [
        (
            "core/kinds.py",
            "import nexo_pkg.manifest.names\n",
            "floors",
            "nexo_pkg.core.kinds -> nexo_pkg.manifest.names",
        ),
        (
            "install/compat.py",
            "import nexo_pkg.cli.common\n",
            "floors",
            "nexo_pkg.install.compat -> nexo_pkg.cli.common",
        ),
        (
            "install/root.py",
            "import nexo_pkg.fleet.lockfile\n",
            "floors",
            "nexo_pkg.install.root -> nexo_pkg.fleet.lockfile",
        ),
        (
            "sources/github.py",
            "import nexo_pkg.lint.engine\n",
            "floors",
            "nexo_pkg.sources.github -> nexo_pkg.lint.engine",
        ),
        (
            "net/bounded.py",
            "import nexo_pkg.sources.cache\n",
            "floors",
            "nexo_pkg.net.bounded -> nexo_pkg.sources.cache",
        ),
        (
            "fleet/doctor.py",
            "from nexo_pkg.install.root import _lock_timeout\n",
            "public-names",
            "nexo_pkg.fleet.doctor (l.",
        ),
        (
            "fleet/doctor.py",
            "from nexo_pkg.install import root\nREACH = root._private_helper\n",
            "public-names",
            "nexo_pkg.install.root._private_helper",
        ),
        (
            "sources/github.py",
            "from nexo_pkg.sources.download import cached_asset\n",
            "sources-acyclic",
            ".github -> .download",
        ),
        (
            "cli/lsp.py",
            "from nexo_pkg.cli.main import install_signal_handlers\n",
            "cli-acyclic",
            ".main -> .app",
        ),
        (
            "net/transport.py",
            "from nexo_pkg.net.client import USER_AGENT\n",
            "net-acyclic",
            ".transport -> .client",
        ),
        (
            "check/microapp_target.py",
            "from nexo_pkg.check.target import resolve_target\n",
            "check-acyclic",
            ".target -> .microapp_target",
        ),
        (
            "sources/download.py",
            "from rich.progress import Progress\n",
            "no-console-below-cli",
            "nexo_pkg.sources.download -> rich",
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
        (
            "fleet/doctor.py",
            "from nexo_pkg.sources.cache import BlobCache\n",
            "faces",
            "imports nexo_pkg.sources.cache",
        ),
        (
            "install/root.py",
            "import nexo_pkg.net.client\n",
            "faces",
            "nexo_pkg.install.root (l.",
        ),
        (
            "cli/trust.py",
            "from nexo_pkg.trust.entry import load_policy\n",
            "faces",
            "imports nexo_pkg.trust.entry",
        ),
        (
            "sources/local.py",
            "from nexo_pkg.net.bounded import Deadline\n",
            "faces",
            "nexo_pkg.sources.local (l.",
        ),
        (
            "cli/operate.py",
            "from nexo_pkg.install.pipeline import install\n",
            "faces",
            "imports nexo_pkg.install.pipeline",
        ),
        (
            "cli/fleet.py",
            "from nexo_pkg.fleet.sync import sync_plan\n",
            "faces",
            "imports nexo_pkg.fleet.sync",
        ),
    ],
    ids=[
        "core-imports-manifest",
        "install-imports-cli",
        "install-imports-fleet",
        "sources-imports-sibling-lint",
        "net-imports-sources",
        "fleet-imports-a-private-name",
        "fleet-reads-a-private-attribute",
        "sources-in-a-circle",
        "cli-in-a-circle",
        "net-in-a-circle",
        "check-in-a-circle",
        "sources-draw-a-bar",
        "manifest-imports-httpx",
        "lint-verifies",
        "fleet-past-the-sources-face",
        "install-past-the-net-face",
        "cli-past-the-trust-face",
        "sources-past-the-net-face",
        "cli-past-the-install-face",
        "cli-past-the-fleet-face",
    ],
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
    assert [contract["id"] for contract in contracts] == [
        "floors",
        "public-names",
        "faces",
        "private-modules",
        "check-acyclic",
        "sources-acyclic",
        "cli-acyclic",
        "net-acyclic",
        "lint-path",
        "no-console-below-cli",
    ]
    for contract in contracts:
        assert f"**`{contract['id']}`** (a `{contract['type']}` contract" in section


def test_every_room_below_the_cli_is_kept_from_the_console() -> None:
    """``no-console-below-cli`` names every room the floors put below ``cli``: a room added
    to a floor (as ``sbom`` was) is held to it too."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    contracts = {each["id"]: each for each in config["tool"]["importlinter"]["contracts"]}
    layers = contracts["floors"]["layers"]
    below_cli = {
        f"nexo_pkg.{room.strip()}"
        for floor in layers[layers.index("cli") + 1 :]
        for room in floor.split("|")
    }
    assert set(contracts["no-console-below-cli"]["source_modules"]) == below_cli


def test_a_console_in_a_module_of_sbom_breaks_the_contract(tmp_path: Path) -> None:
    """A module of ``sbom`` that draws with rich breaks ``no-console-below-cli`` even when no
    other room imports it (so no chain from another room's module reaches it)."""
    root = _copy(tmp_path)
    (root / "nexo_pkg" / "sbom" / "drawing.py").write_text(
        "from rich.console import Console\n", encoding="utf-8"
    )
    completed = lint_imports(root, "no-console-below-cli")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "nexo_pkg.sbom.drawing -> rich" in completed.stdout


def _rooms_imported_by(room: str) -> set[str]:
    """The other rooms of ``nexo_pkg`` that the modules of ``room`` import, at any depth."""
    found: set[str] = set()
    for path in (REPO / "nexo_pkg" / room).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
                if node.module == "nexo_pkg":
                    names = [f"nexo_pkg.{alias.name}" for alias in node.names]
            else:
                continue
            found |= {name.split(".")[1] for name in names if name.startswith("nexo_pkg.")}
    return found - {room}


def test_sources_imports_the_rooms_the_architecture_names() -> None:
    doc = (REPO / "docs" / "architecture.md").read_text("utf-8")
    sentence = re.search(r"`sources` imports only (.*?);", doc, re.DOTALL)
    assert sentence is not None
    named = set(re.findall(r"`(\w+)`", re.sub(r"\(.*?\)", "", sentence[1], flags=re.DOTALL)))
    assert _rooms_imported_by("sources") == named


def test_a_private_module_is_imported_only_from_its_package(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    (root / "nexo_pkg" / "install" / "_journal.py").write_text("VALUE = 1\n", encoding="utf-8")
    doctor = root / "nexo_pkg" / "fleet" / "doctor.py"
    doctor.write_text(
        doctor.read_text("utf-8") + "import nexo_pkg.install._journal\n", encoding="utf-8"
    )
    completed = lint_imports(root, "private-modules")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "nexo_pkg.fleet.doctor -> nexo_pkg.install._journal" in completed.stdout


def test_pre_commit_runs_the_contracts(tmp_path: Path) -> None:
    """The repository's own pre-commit configuration runs ``lint-imports`` (with the
    virtualenv's tools on PATH, as after activating it), and it passes."""
    import yaml

    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text("utf-8"))
    hooks = {hook["id"]: hook for repo in config["repos"] for hook in repo["hooks"]}
    assert hooks["lint-imports"]["entry"] == "lint-imports"
    assert hooks["lint-imports"]["pass_filenames"] is False
    tools = Path(sys.executable).parent
    pre_commit = tools / "pre-commit"
    if not pre_commit.is_file() or not (REPO / ".git").exists():
        pytest.skip("pre-commit (pip install -e '.[test]') and a git checkout are needed")
    completed = subprocess.run(
        [str(pre_commit), "run", "lint-imports", "--all-files"],
        cwd=REPO,
        env={
            **os.environ,
            "PATH": f"{tools}{os.pathsep}{os.environ.get('PATH', '')}",
            "PRE_COMMIT_HOME": str(tmp_path / "pre-commit"),
        },
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "import contracts (lint-imports)" in completed.stdout
    assert "Passed" in completed.stdout
