"""Run the real ``nexo plugin lint --format json`` CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def run_lint_json(
    paths: Iterable[Path],
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[int, dict[str, Any]]:
    """The exit code and the JSON report of one CLI run over ``paths`` (in ``cwd``).

    ``env`` replaces the whole environment when given (the caller decides what to inherit).
    """
    completed = subprocess.run(
        [sys.executable, "-m", "nexo_pkg", "plugin", "lint", "--format", "json", *args]
        + [str(path) for path in paths],
        capture_output=True,
        text=True,
        check=False,
        env=env if env is not None else dict(os.environ),
        cwd=cwd,
    )
    assert "Traceback" not in completed.stderr, completed.stderr
    report: dict[str, Any] = json.loads(completed.stdout)
    return completed.returncode, report
