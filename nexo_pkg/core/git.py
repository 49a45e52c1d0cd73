"""Asking git about a working tree, for the few places that read one (pack's timestamp, the
scaffold's pin of nexo-pkg). git is optional: a failure of any kind is no answer."""

from __future__ import annotations

import subprocess
from pathlib import Path

from nexo_pkg.core.programs import find_program

__all__ = ["git_completed", "git_output", "git_paths"]


def git_completed(directory: Path, *arguments: str) -> subprocess.CompletedProcess[str] | None:
    """``git ARGUMENTS`` run in ``directory``, its output as text; ``None`` when git is missing,
    cannot start or times out."""
    git = find_program("git")
    if git is None:
        return None
    try:
        return subprocess.run(
            [git, *arguments],
            cwd=directory,
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None


def git_output(directory: Path, *arguments: str) -> str | None:
    """The stripped standard output of ``git ARGUMENTS`` run in ``directory``; ``None`` when
    git is missing, fails, times out, or ``directory`` is no repository git will read."""
    completed = git_completed(directory, *arguments)
    if completed is None or completed.returncode != 0:
        return None
    return completed.stdout.strip()


def git_paths(directory: Path, *arguments: str) -> list[str] | None:
    """The NUL-separated records ``git ARGUMENTS`` (given ``-z``) prints in ``directory``,
    read as UTF-8 (git writes paths as it stores them, whatever the console's code page);
    ``None`` as :func:`git_output` gives it."""
    git = find_program("git")
    if git is None:
        return None
    try:
        completed = subprocess.run(
            [git, *arguments], cwd=directory, capture_output=True, check=False, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if completed.returncode != 0:
        return None
    text = completed.stdout.decode("utf-8", "surrogateescape")
    return [record for record in text.split("\0") if record]
