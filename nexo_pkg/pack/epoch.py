"""The archive timestamp: ``--source-date-epoch`` > ``SOURCE_DATE_EPOCH`` > git > a constant."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.git import git_output
from nexo_pkg.core.source_date import LATEST_EPOCH, epoch_seconds, source_date_epoch
from nexo_pkg.pack.errors import usage_error

#: 1980-01-01T00:00:00Z: the oldest time a zip file can hold, the usual reproducible default.
FALLBACK_EPOCH = 315532800


@dataclass(frozen=True)
class SourceDateEpoch:
    """The chosen timestamp and where it came from (``flag``, ``env``, ``git``, ``default``)."""

    value: int
    origin: str


def _git_commit_time(project: Path) -> int | None:
    output = git_output(project, "log", "-1", "--format=%ct", "--", ".")
    if output is None or not output.isdigit():
        # Not a repository, no commit touching DIR yet, or git refused (safe.directory).
        return None
    return int(output)


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
    if committed is not None:
        return SourceDateEpoch(committed, "git")
    return SourceDateEpoch(FALLBACK_EPOCH, "default")
