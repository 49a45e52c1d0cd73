"""The ``nexo-plugin-lint`` pre-commit hook, run by the real pre-commit.

pre-commit builds its own virtualenv and pip-installs this repository from a git revision, so
these tests use the committed ``HEAD`` of the checkout (never uncommitted files) and need the
package index for the dependencies: they are marked ``index`` (deselect with
``-m 'not index'`` when offline).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from identify import identify
from pre_commit.clientlib import load_manifest  # type: ignore[import-untyped]  # no py.typed

ROOT = Path(__file__).resolve().parents[2]
HOOKS = ROOT / ".pre-commit-hooks.yaml"
PRE_COMMIT = [sys.executable, "-m", "pre_commit"]

GOOD = """\
[plugin]
id = "demo"
version = "0.1.0"
name = "Demo"
description = "A demo plugin."
min_nexo_version = ">=0.1.0"
"""
BAD = GOOD.replace('id = "demo"', 'id = "Demo"')


def test_hook_manifest_is_valid_for_pre_commit() -> None:
    [hook] = load_manifest(str(HOOKS))
    assert hook["id"] == "nexo-plugin-lint"
    assert hook["entry"] == "nexo plugin lint --force-exclude"
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is True
    files = re.compile(hook["files"])
    for path in (
        "nexo-plugin.toml",
        "plugins/slack/nexo-plugin.toml",
        "plugin.toml",
        "plugins/slack/plugin.toml",
    ):
        assert files.search(path)
        assert set(hook["types"]) <= identify.tags_from_filename(path)
    for path in (
        "my-nexo-plugin.toml",
        "nexo-plugin.toml.bak",
        "nexo-plugin.yaml",
        "Cargo.toml",
        "myplugin.toml",
        "plugin.toml.bak",
    ):
        assert not files.search(path)


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _committed_head() -> str:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("the hook is installed from a git checkout of this repository")
    head = _git("rev-parse", "HEAD", cwd=ROOT)
    tracked = _git("ls-tree", "--name-only", head, ".pre-commit-hooks.yaml", cwd=ROOT)
    assert tracked == ".pre-commit-hooks.yaml", "commit .pre-commit-hooks.yaml first"
    return head


def _project(tmp_path: Path, manifests: dict[str, str]) -> Path:
    """A git repository holding ``manifests`` plus a broken TOML file the hook must skip."""
    project = tmp_path / "project"
    project.mkdir()
    _git("init", "--quiet", cwd=project)
    for relative, text in {**manifests, "config/other.toml": "[[[ not a manifest"}.items():
        target = project / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    _git("add", ".", cwd=project)
    return project


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"PRE_COMMIT_HOME": str(home), "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    env.pop("PRE_COMMIT_CONFIG", None)
    return env


@pytest.mark.index
@pytest.mark.timeout(900)
def test_try_repo_fails_on_a_bad_manifest_and_skips_others(tmp_path: Path) -> None:
    head = _committed_head()
    project = _project(tmp_path, {"bad/nexo-plugin.toml": BAD, "good/nexo-plugin.toml": GOOD})
    done = subprocess.run(
        [*PRE_COMMIT, "try-repo", str(ROOT), "nexo-plugin-lint", "--ref", head, "--all-files"],
        cwd=project,
        env=_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "bad/nexo-plugin.toml:2:6: NX100" in output
    assert "good/nexo-plugin.toml" not in output.replace("bad/nexo-plugin.toml", "")
    assert "other.toml" not in output


@pytest.mark.index
@pytest.mark.timeout(900)
def test_try_repo_respects_the_config_exclude(tmp_path: Path) -> None:
    """pre-commit names every staged manifest; `exclude` in .nexo.toml still skips them."""
    head = _committed_head()
    project = _project(
        tmp_path,
        {
            "vendor/nexo-plugin.toml": BAD,
            "good/nexo-plugin.toml": GOOD,
            ".nexo.toml": '[lint]\nexclude = ["vendor/"]\n',
        },
    )
    done = subprocess.run(
        [*PRE_COMMIT, "try-repo", str(ROOT), "nexo-plugin-lint", "--ref", head, "--all-files"],
        cwd=project,
        env=_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "NX100" not in output
    # Without the exclude the same tree fails: the hook did lint the files it was given.
    (project / ".nexo.toml").write_text("[lint]\n", encoding="utf-8")
    _git("add", ".nexo.toml", cwd=project)
    again = subprocess.run(
        [*PRE_COMMIT, "try-repo", str(ROOT), "nexo-plugin-lint", "--ref", head, "--all-files"],
        cwd=project,
        env=_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert again.returncode == 1, again.stdout + again.stderr
    assert "vendor/nexo-plugin.toml:2:6: NX100" in again.stdout + again.stderr


@pytest.fixture(scope="module")
def installed_hook(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """A pre-commit home shared by the module, so the hook environment is built once."""
    return _committed_head(), tmp_path_factory.mktemp("pre-commit-home")


@pytest.mark.index
@pytest.mark.timeout(900)
@pytest.mark.parametrize(("text", "expected"), [(GOOD, 0), (BAD, 1)])
def test_hook_passes_a_good_manifest_and_fails_a_bad_one(
    installed_hook: tuple[str, Path], tmp_path: Path, text: str, expected: int
) -> None:
    head, home = installed_hook
    project = _project(tmp_path, {"nexo-plugin.toml": text})
    config = project / ".pre-commit-config.yaml"
    config.write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {head}\n    hooks:\n      - id: nexo-plugin-lint\n",
        encoding="utf-8",
    )
    _git("add", ".pre-commit-config.yaml", cwd=project)
    done = subprocess.run(
        [*PRE_COMMIT, "run", "nexo-plugin-lint", "--all-files"],
        cwd=project,
        env=_env(home),
        capture_output=True,
        text=True,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == expected, output
    assert ("nexo-plugin.toml:2:6: NX100" in output) == (expected == 1)
    assert "other.toml" not in output
