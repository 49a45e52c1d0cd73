"""Vendoring: ``pip install --target`` of the plugin's requirements with the current Python."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from nexo_pkg.errors import EXIT_FAILURE
from nexo_pkg.pack.errors import PackError

_SUMMARY_LIMIT = 600


def pip_command(requirements: Path, target: Path) -> list[str]:
    """The pip invocation; ``PIP_*`` variables (index, find-links, proxies) still apply."""
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--target",
        str(target),
        "--requirement",
        str(requirements),
        # Byte code is interpreter-specific and would make the tarball differ per host.
        "--no-compile",
        "--quiet",
        "--no-input",
        "--disable-pip-version-check",
    ]


def summarise_pip_output(output: str) -> str:
    """Keep pip's ``ERROR:`` lines (or its last line) as one line for the error message."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line.removeprefix("ERROR:").strip() for line in lines if line.startswith("ERROR:")]
    summary = "; ".join(errors) if errors else (lines[-1] if lines else "no output")
    if len(summary) > _SUMMARY_LIMIT:
        summary = summary[: _SUMMARY_LIMIT - 1] + "…"
    return summary


def vendor_requirements(
    requirements: Path,
    target: Path,
    *,
    cwd: Path,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Install ``requirements`` into the (new) directory ``target``.

    Runs in ``cwd`` so relative paths in the requirements resolve against the project.
    Raises ``vendor_failed`` (exit 1) with pip's error summarised when pip fails or is missing.
    """
    env = dict(os.environ if environ is None else environ)
    try:
        completed = subprocess.run(
            pip_command(requirements, target),
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError as exc:
        raise PackError(
            f"cannot run pip with {sys.executable}: {exc.strerror}",
            kind="vendor_failed",
            exit_code=EXIT_FAILURE,
        ) from exc
    if completed.returncode != 0:
        output = completed.stderr + "\n" + completed.stdout
        if "No module named pip" in output:
            summary = f"pip is not installed for {sys.executable}"
        else:
            summary = summarise_pip_output(output)
        raise PackError(
            f"could not vendor {requirements.name}: {summary}",
            kind="vendor_failed",
            exit_code=EXIT_FAILURE,
            details={"pip_exit_code": completed.returncode},
        )
