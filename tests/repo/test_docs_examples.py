"""The examples of the docs are true: the lint output shown is what ``nexo plugin lint``
prints, the example workflows pass zizmor, and every ``#:schema`` directive names a file
taplo can fetch (a raw URL of a file in this repository, or a relative path)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from support.cli import nexo

from .test_repo_checks import tool

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
RAW_PREFIX = "https://raw.githubusercontent.com/nexo-pkg/nexo-pkg/main/"


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def _plain_env() -> dict[str, str]:
    """This environment with ``NO_COLOR`` and without ``FORCE_COLOR``: a plain report."""
    env = {key: value for key, value in os.environ.items() if key != "FORCE_COLOR"}
    return {**env, "NO_COLOR": "1"}


def test_the_lint_example_shows_what_lint_prints(tmp_path: Path) -> None:
    text = (DOCS / "lint.md").read_text(encoding="utf-8")
    manifest = next(block for block in _blocks(text, "toml") if "naem" in block)
    (tmp_path / "nexo-plugin.toml").write_text(manifest, encoding="utf-8")
    console = next(block for block in _blocks(text, "console") if "naem" in block)
    command, _, shown = console.partition("\n")
    assert command == "$ nexo plugin lint"
    result = nexo("plugin", "lint", env=_plain_env(), cwd=tmp_path, in_process=True)
    assert result.code == 1
    assert result.stdout == shown
    [github] = re.findall(r"^```\n(::error.*?)^```", text, re.MULTILINE | re.DOTALL)
    github_run = nexo(
        "plugin", "lint", "--format", "github", env=_plain_env(), cwd=tmp_path, in_process=True
    )
    assert github_run.stdout == github


def test_the_example_workflows_pass_zizmor(tmp_path: Path) -> None:
    text = (DOCS / "editors.md").read_text(encoding="utf-8")
    workflows = [block for block in _blocks(text, "yaml") if "\njobs:" in block]
    assert len(workflows) == 2
    directory = tmp_path / ".github" / "workflows"
    directory.mkdir(parents=True)
    for index, workflow in enumerate(workflows):
        (directory / f"example-{index}.yml").write_text(workflow, encoding="utf-8")
    done = subprocess.run(
        [tool("zizmor"), "--offline", "--no-progress", str(directory)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings to report" in done.stdout + done.stderr


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda path: path.name)
def test_schema_directives_name_a_file_taplo_can_fetch(page: Path) -> None:
    for target in re.findall(r"#:schema ([^\s`]+)", page.read_text(encoding="utf-8")):
        if "://" in target:
            assert target.startswith(RAW_PREFIX), target
            assert (REPO / target.removeprefix(RAW_PREFIX)).is_file(), target
        else:
            assert target.startswith("./"), target
            assert target.endswith(".json"), target
