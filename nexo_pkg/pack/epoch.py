"""The archive timestamp: ``--source-date-epoch`` > ``SOURCE_DATE_EPOCH`` > git > a constant."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.git import git_completed
from nexo_pkg.core.source_date import LATEST_EPOCH, epoch_seconds, source_date_epoch
from nexo_pkg.core.terminal import printable
from nexo_pkg.pack.errors import usage_error

#: 1980-01-01T00:00:00Z: the oldest time a zip file can hold, the usual reproducible default.
FALLBACK_EPOCH = 315532800


@dataclass(frozen=True)
class SourceDateEpoch:
    """The chosen timestamp and where it came from (``flag``, ``env``, ``git``, ``default``)."""

    value: int
    origin: str
    #: Why the time is not what the project would give elsewhere (git refused the repository).
    note: str | None = None


def _git_commit_time(project: Path) -> int | str | None:
    """The last commit time of DIR; ``None`` outside a repository or before a commit touches
    DIR; the note to print when git refuses to read the repository (``safe.directory``)."""
    completed = git_completed(project, "log", "-1", "--format=%ct", "--", ".")
    if completed is None:
        return None
    output = completed.stdout.strip()
    if completed.returncode == 0 and output.isdigit():
        return int(output)
    if completed.returncode != 0 and "safe.directory" in completed.stderr:
        return (
            f"git refuses to read the repository holding {printable(str(project))} (owned by"
            f" another user: git's safe.directory), so the archive time is the default"
            f" {FALLBACK_EPOCH}, not the last commit's, and the tarball differs from one packed"
            " where git reads the repository; mark it safe (`git config --global --add"
            " safe.directory PATH`) or set SOURCE_DATE_EPOCH"
        )
    return None


def _flag_value(flag: int | str) -> int | None:
    """The flag's seconds, read as the variable is (:func:`epoch_seconds`)."""
    if isinstance(flag, int):
        return flag if 0 <= flag <= LATEST_EPOCH else None
    return epoch_seconds(flag)


def resolve_source_date_epoch(
    flag: int | str | None, environ: Mapping[str, str], project: Path
) -> SourceDateEpoch:
    """Pick the archive mtime; a negative, malformed or past-9999 flag or variable is a usage
    error (the flag as text is read by the variable's rule)."""
    if flag is not None:
        value = _flag_value(flag)
        if value is None:
            shown = repr(flag) if isinstance(flag, str) else str(flag)
            raise usage_error(
                f"--source-date-epoch must be an integer from 0 to {LATEST_EPOCH}"
                f" (9999-12-31T23:59:59Z), got {shown}"
            )
        return SourceDateEpoch(value, "flag")
    try:
        configured = source_date_epoch(environ)
    except NexoError as exc:
        raise usage_error(exc.message) from exc
    if configured is not None:
        return SourceDateEpoch(configured, "env")
    committed = _git_commit_time(project)
    if isinstance(committed, int):
        return SourceDateEpoch(committed, "git")
    return SourceDateEpoch(FALLBACK_EPOCH, "default", committed)
