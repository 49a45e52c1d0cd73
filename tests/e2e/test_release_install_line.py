"""The release workflow ``nexo plugin new`` writes installs nexo-pkg from a source that exists.

The "Lint and pack" step's install line, as generated with ``--nexo-pkg-spec``, is run as the
runner would run it, in a fresh virtualenv, offline: pip resolves nexo-pkg (a wheel built from
this checkout) and its dependencies from the wheelhouse ``scripts/test.sh`` fills
(``$NEXO_TEST_WHEELHOUSE``). The ``nexo`` it installs is the version that wrote the workflow.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from nexo_pkg import __version__

from .test_tool_installs import full_wheelhouse

__all__ = ["full_wheelhouse"]

REPO = Path(__file__).resolve().parents[2]
IGNORED = shutil.ignore_patterns(
    ".git", ".venv", ".cache", "__pycache__", "*.egg-info", ".*_cache", "build", "dist"
)


def _run(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, env=env, cwd=cwd, capture_output=True, text=True, check=False, timeout=600
    )
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done


def _install_line(workflow: Path) -> str:
    document = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    [step] = [s for s in document["jobs"]["build"]["steps"] if s.get("name") == "Lint and pack"]
    script: str = step["run"]
    [line] = [line for line in script.splitlines() if "pip install" in line]
    return line.strip()


def test_the_generated_install_line_installs_offline(tmp_path: Path, full_wheelhouse: Path) -> None:
    wheels = tmp_path / "wheels"
    source = tmp_path / "nexo-pkg"
    shutil.copytree(REPO, source, ignore=IGNORED)
    offline = {
        **{key: value for key, value in os.environ.items() if not key.startswith("PIP_")},
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": f"{full_wheelhouse} {wheels}",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_CONFIG_FILE": os.devnull,
    }
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(wheels), str(source)],
         offline, tmp_path)  # fmt: skip

    spec = f"nexo-pkg=={__version__}"
    _run([sys.executable, "-m", "nexo_pkg", "plugin", "new", "demo", "-q", "--nexo-pkg-spec",
          spec], os.environ.copy(), tmp_path)  # fmt: skip
    line = _install_line(tmp_path / "demo" / ".github" / "workflows" / "release.yml")
    assert line == f"python -m pip install {spec}"

    venv = tmp_path / "runner"
    _run([sys.executable, "-m", "venv", str(venv)], offline, tmp_path)
    runner = {**offline, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    runner.pop("PYTHONPATH", None)  # the runner has only what the line installs
    _run(["bash", "-c", f"set -euo pipefail\n{line}"], runner, tmp_path / "demo")
    version = _run([str(venv / "bin" / "nexo"), "--version"], runner, tmp_path)
    assert version.stdout == f"nexo-pkg {__version__}\n"
