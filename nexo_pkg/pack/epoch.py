"""The archive timestamp: ``--source-date-epoch`` > ``SOURCE_DATE_EPOCH`` > git > a constant."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.git import git_output
from nexo_pkg.core.source_date import LATEST_EPOCH, source_date_epoch
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


def resolve_source_date_epoch(
    flag: int | None, environ: Mapping[str, str], project: Path
) -> SourceDateEpoch:
    """Pick the archive mtime; a negative flag, one past year 9999 or a malformed variable is
    a usage error."""
    if flag is not None:
        if not 0 <= flag <= LATEST_EPOCH:
            raise usage_error(
                f"--source-date-epoch must be an integer from 0 to {LATEST_EPOCH}"
                f" (9999-12-31T23:59:59Z), got {flag}"
            )
        return SourceDateEpoch(flag, "flag")
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
