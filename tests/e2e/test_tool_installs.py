"""nexo-pkg installed the way the ecosystem recommends, then used for a plugin's whole life.

``uv tool install .`` and ``pipx install .`` each put nexo-pkg in an isolated environment under a
temporary home; the ``nexo`` they install then scaffolds a plugin, packs it (vendoring its
requirements with the pip nexo-pkg depends on), installs the tarball and checks the installed
plugin's handshake. Nothing leaves the machine: uv, pipx and pip resolve from the wheelhouse
that ``scripts/test.sh`` fills (``--no-index --find-links``). When uv, pipx or the wheelhouse
is missing the test says so and is skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# Enough of nexo-pkg's own dependencies to tell a full wheelhouse from the nexoai-only one.
NEEDED = ("typer-", "sigstore-", "pygls-", "setuptools-", "nexoai-", "pip-")


def tool(name: str) -> str:
    beside = Path(sys.executable).with_name(name)
    if beside.is_file():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (the test extras provide it)")
    return found


@pytest.fixture(scope="module")
def full_wheelhouse(wheelhouse: Path) -> Path:
    names = [path.name for path in wheelhouse.glob("*.whl")]
    missing = [prefix for prefix in NEEDED if not any(n.startswith(prefix) for n in names)]
    if missing:
        pytest.skip(
            f"the wheelhouse {wheelhouse} lacks {', '.join(missing)}: run scripts/test.sh, "
            "which downloads nexo-pkg's dependencies there"
        )
    return wheelhouse


def offline_env(home: Path, wheelhouse: Path) -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE")
    env = {key: os.environ[key] for key in keep if key in os.environ}
    bin_dir = home / ".local" / "bin"
    env.update(
        HOME=str(home),
        PATH=os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), env["PATH"]]),
        NEXO_HOME=str(home / ".nexo"),
        PIP_CONFIG_FILE=os.devnull,
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheelhouse),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        UV_NO_CONFIG="1",
        UV_OFFLINE="1",
        UV_CACHE_DIR=str(home / ".cache" / "uv"),
        UV_TOOL_DIR=str(home / ".local" / "share" / "uv" / "tools"),
        UV_TOOL_BIN_DIR=str(bin_dir),
        PIPX_HOME=str(home / ".local" / "share" / "pipx"),
        PIPX_BIN_DIR=str(bin_dir),
        NO_COLOR="1",
    )
    return env


def run(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(
        command, env=env, cwd=cwd, capture_output=True, text=True, check=False, timeout=300
    )
    assert completed.returncode == 0, f"{command}\n{completed.stdout}\n{completed.stderr}"
    return completed


def plugin_lifecycle(nexo: Path, env: dict[str, str], work: Path) -> bytes:
    """new -> pack -> install -> check with the installed ``nexo``; return the tarball."""
    assert nexo.is_file(), f"no {nexo}"
    version = run([str(nexo), "--version"], env, work)
    assert version.stdout.startswith("nexo-pkg ")
    run([str(nexo), "plugin", "new", "demo", "--dest", "project"], env, work)
    run([str(nexo), "plugin", "pack", "project", "--out", "dist"], env, work)
    tarball = work / "dist" / "demo-0.1.0-noarch.tar.gz"
    assert tarball.is_file()
    run([str(nexo), "plugin", "install", str(tarball), "--yes"], env, work)
    listed = run([str(nexo), "plugin", "list"], env, work)
    assert [line.split()[0] for line in listed.stdout.splitlines()] == ["demo"]
    checked = run([str(nexo), "plugin", "check", "demo", "--timeout-ms", "30000"], env, work)
    assert "check passed for demo" in checked.stdout
    return tarball.read_bytes()


def uv_install(home: Path, wheelhouse: Path, env: dict[str, str]) -> Path:
    command = [tool("uv"), "tool", "install", "--no-index", "--find-links", str(wheelhouse)]
    run([*command, "--python", sys.executable, str(REPO)], env, home.parent)
    return home / ".local" / "bin" / "nexo"


def pipx_install(home: Path, wheelhouse: Path, env: dict[str, str]) -> Path:
    pip_args = f"--no-index --find-links={wheelhouse}"
    command = [tool("pipx"), "install", "--python", sys.executable, "--pip-args", pip_args]
    run([*command, str(REPO)], env, home.parent)
    return home / ".local" / "bin" / "nexo"


def test_uv_and_pipx_installs_run_the_whole_flow_and_pack_the_same_bytes(
    tmp_path: Path, full_wheelhouse: Path
) -> None:
    tarballs: dict[str, bytes] = {}
    for name, install in (("uv", uv_install), ("pipx", pipx_install)):
        work = tmp_path / name
        work.mkdir()
        env = offline_env(work / "home", full_wheelhouse)
        nexo = install(work / "home", full_wheelhouse, env)
        tarballs[name] = plugin_lifecycle(nexo, env, work)
    # The vendored tree (pip's own output) is the same whichever tool installed nexo-pkg.
    assert tarballs["uv"] == tarballs["pipx"]
