"""Checks of the repository itself: declared dependencies (deptry) and its workflows (zizmor).

Both tools are test extras; when one is missing from this environment its test is skipped
with a reason rather than passing silently.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / ".github" / "workflows"
_USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>[^\s#]+)", re.MULTILINE)


def tool(name: str) -> str:
    """The path of ``name`` beside this interpreter (the test extras) or on PATH; else skip."""
    beside = Path(sys.executable).with_name(name)
    if beside.is_file():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]' provides it)")
    return found


def test_every_imported_distribution_is_declared() -> None:
    completed = subprocess.run(
        [tool("deptry"), "."],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={"NO_COLOR": "1", "PATH": str(Path(sys.executable).parent)},
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "No dependency issues found" in completed.stdout + completed.stderr


def test_workflows_have_no_zizmor_findings() -> None:
    completed = subprocess.run(
        [tool("zizmor"), "--offline", "--no-progress", str(WORKFLOWS)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "No findings to report" in completed.stdout + completed.stderr


def test_every_action_is_pinned_by_commit() -> None:
    references = [
        match["ref"]
        for path in sorted(WORKFLOWS.glob("*.yml"))
        for match in _USES.finditer(path.read_text(encoding="utf-8"))
    ]
    assert references
    remote = [ref for ref in references if not ref.startswith("./")]
    unpinned = [ref for ref in remote if not re.fullmatch(r"[^@]+@[0-9a-f]{40}", ref)]
    assert unpinned == []


def test_release_workflow_builds_attests_and_publishes() -> None:
    text = (WORKFLOWS / "release.yml").read_text(encoding="utf-8")
    assert "python -m build" in text
    assert "pypa/gh-action-pypi-publish@" in text
    assert "actions/attest-build-provenance@" in text
    assert "id-token: write" in text
    # Trusted publishing: no long-lived PyPI token anywhere.
    assert "password:" not in text
    assert "PYPI_API_TOKEN" not in text
