"""The archive time comes from the last git commit of DIR; when git refuses to read the
repository (owned by another user: a bind mount in a container, a shared drive), the time
falls back to the constant, so the tarball differs from one packed where git reads it: pack
says so instead of changing the bytes in silence."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from support.cli import clean_env, nexo

from nexo_pkg.pack.epoch import FALLBACK_EPOCH
from pack.pack_helpers import write_project

COMMITTED = 1_650_000_000

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git_env(home: Path, **extra: str) -> dict[str, str]:
    """git with no configuration but its own (HOME under the test, no system file)."""
    return clean_env(
        HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_DATE=f"@{COMMITTED} +0000",
        GIT_COMMITTER_DATE=f"@{COMMITTED} +0000",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
        **extra,
    )


@pytest.fixture
def committed(tmp_path: Path) -> Path:
    project = write_project(tmp_path / "project")
    env = _git_env(tmp_path / "home")
    for command in (["init", "-q"], ["add", "."], ["commit", "-qm", "init"]):
        subprocess.run(["git", *command], cwd=project, check=True, env=env)
    return project


def _pack(project: Path, out: Path, env: dict[str, str]) -> dict[str, object]:
    result = nexo("plugin", "pack", project, "--out", out, "--json", env=env, cwd=project.parent)
    assert result.code == 0, result.stderr
    document = result.document
    assert isinstance(document, dict)
    return document


def _refusal_notes(document: dict[str, object]) -> list[str]:
    warnings = document["warnings"]
    assert isinstance(warnings, list)
    return [str(w) for w in warnings if "safe.directory" in str(w)]


def test_a_repository_git_refuses_is_named_with_the_fallback_time(
    tmp_path: Path, committed: Path
) -> None:
    home = tmp_path / "home"
    read = _pack(committed, tmp_path / "read", _git_env(home))
    assert read["source_date_epoch"] == COMMITTED
    assert _refusal_notes(read) == []

    # git's own switch for its ownership check: the repository reads as another user's.
    refused_env = _git_env(home, GIT_TEST_ASSUME_DIFFERENT_OWNER="1")
    refused = _pack(committed, tmp_path / "refused", refused_env)
    assert refused["source_date_epoch"] == FALLBACK_EPOCH
    [note] = _refusal_notes(refused)
    assert "git refuses to read the repository holding" in note
    assert str(FALLBACK_EPOCH) in note
    assert "SOURCE_DATE_EPOCH" in note

    # The text output says it too, as a warning line.
    text = nexo("plugin", "pack", committed, "--out", tmp_path / "text", "-q", env=refused_env)
    assert text.code == 0, text.stderr
    assert [line for line in text.stderr.splitlines() if "safe.directory" in line] == [
        f"warning: {note}"
    ]

    # A time given by the variable asks git nothing: no note.
    pinned = _pack(
        committed, tmp_path / "pinned", {**refused_env, "SOURCE_DATE_EPOCH": str(COMMITTED)}
    )
    assert pinned["source_date_epoch"] == COMMITTED
    assert _refusal_notes(pinned) == []


def test_a_project_outside_any_repository_gets_the_default_without_a_note(
    tmp_path: Path,
) -> None:
    project = write_project(tmp_path / "project")
    env = _git_env(tmp_path / "home", GIT_CEILING_DIRECTORIES=str(tmp_path))
    document = _pack(project, tmp_path / "out", env)
    assert document["source_date_epoch"] == FALLBACK_EPOCH
    assert _refusal_notes(document) == []
