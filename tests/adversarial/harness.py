"""Helpers shared by the adversarial, fault and crash tests: tree snapshots and CLI runs.

:func:`snapshot` records every path under a directory (type, mode, size, content hash, link
target) so a test can prove that a refused command wrote nothing: compare the snapshot taken
before with the one taken after. :func:`run_cli` runs the real ``nexo`` command line, either in
a subprocess (the exact user experience) or in-process through Click's runner (the same code
path, minus ~1 s of interpreter start-up per call, for tests that run it dozens of times).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]

# Variables that would point a command at the real GitHub, a proxy, or the user's home.
ENV_TO_CLEAR = (
    "NEXO_GITHUB_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "GH_HOST",
    "NEXO_GITHUB_API_BASE",
    "GITHUB_API_URL",
    "NEXO_HTTP_TIMEOUT",
    "NEXO_INSTALL_TARGET",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "ALL_PROXY",
    "https_proxy",
    "http_proxy",
    "all_proxy",
)


@dataclass(frozen=True)
class Entry:
    """One path in a snapshot."""

    kind: str  # "file", "dir", "symlink" or "other"
    mode: int
    size: int
    digest: str  # sha256 of a file's bytes, a symlink's target, "" otherwise


def snapshot(root: Path) -> dict[str, Entry]:
    """Every path under ``root`` (relative, ``root`` itself as ``.``), links not followed."""
    found: dict[str, Entry] = {}
    if not root.exists() and not root.is_symlink():
        return found
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(directory)
        for name in [".", *dirnames, *filenames] if here == root else [*dirnames, *filenames]:
            path = here if name == "." else here / name
            info = path.lstat()
            relative = "." if path == root else str(path.relative_to(root))
            if stat.S_ISLNK(info.st_mode):
                entry = Entry("symlink", 0, 0, str(path.readlink()))
            elif stat.S_ISDIR(info.st_mode):
                entry = Entry("dir", stat.S_IMODE(info.st_mode), 0, "")
            elif stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                entry = Entry("file", stat.S_IMODE(info.st_mode), info.st_size, digest)
            else:
                entry = Entry("other", stat.S_IMODE(info.st_mode), 0, "")
            found[relative] = entry
    return found


def diff(before: Mapping[str, Entry], after: Mapping[str, Entry]) -> dict[str, list[str]]:
    """Paths added, removed and changed between two snapshots (empty lists: identical)."""
    return {
        "added": sorted(set(after) - set(before)),
        "removed": sorted(set(before) - set(after)),
        "changed": sorted(p for p in set(before) & set(after) if before[p] != after[p]),
    }


def unchanged(before: Mapping[str, Entry], after: Mapping[str, Entry]) -> bool:
    return not any(diff(before, after).values())


@dataclass(frozen=True)
class CliResult:
    """Exit code and output of one ``nexo`` run; ``document`` is the parsed ``--json`` output."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def document(self) -> dict[str, Any]:
        parsed = json.loads(self.stdout)
        assert isinstance(parsed, dict), self.stdout
        return parsed


# A gh configuration directory that does not exist: gh, when installed, is logged in nowhere.
NO_GH_LOGIN = "/nonexistent/nexo-tests/gh-config"


def clean_env(**extra: str) -> dict[str, str]:
    """The current environment without GitHub/proxy settings or a gh login, plus ``extra``."""
    env = {key: value for key, value in os.environ.items() if key not in ENV_TO_CLEAR}
    env["NO_COLOR"] = "1"
    env["GH_CONFIG_DIR"] = NO_GH_LOGIN
    env.update(extra)
    return env


def run_cli(
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | None = None,
    timeout: float = 120.0,
) -> CliResult:
    """Run ``python -m nexo_pkg ARGS`` in a subprocess with exactly ``env``."""
    completed = subprocess.run(
        [sys.executable, "-m", "nexo_pkg", *args],
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    return CliResult(completed.returncode, completed.stdout, completed.stderr)


def run_cli_in_process(args: Sequence[str], *, env: Mapping[str, str]) -> CliResult:
    """Run the same Typer application in this process (Click's runner isolates the streams
    and the environment variables given; the working directory is the caller's)."""
    from typer.testing import CliRunner

    from nexo_pkg.cli.main import app

    runner = CliRunner()
    overrides: dict[str, str | None] = dict.fromkeys(ENV_TO_CLEAR)
    overrides.update(env)
    result = runner.invoke(app, list(args), env=overrides, catch_exceptions=False)
    return CliResult(result.exit_code, result.stdout, result.stderr)
