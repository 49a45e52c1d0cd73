"""Run the real ``nexo plugin lint --format json`` command line and read its report."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from support.cli import nexo


def run_lint_json(
    paths: Iterable[Path],
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[int, dict[str, Any]]:
    """The exit code and the JSON report of one run over ``paths`` (in ``cwd``), in this
    process (:func:`support.cli.nexo`); fails the test on a traceback.

    ``env`` replaces the whole environment when given (the caller decides what to inherit).
    """
    result = nexo(
        "plugin", "lint", "--format", "json", *args, *paths, env=env, cwd=cwd, in_process=True
    )
    report: dict[str, Any] = json.loads(result.stdout)
    return result.code, report
