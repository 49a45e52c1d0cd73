"""A pack stopped by a signal while pip vendors leaves nothing behind: no partial asset in
DIST and none of pip's temporary directories (its ``--target`` staging, its build tracker) in
the temporary directory, although pip itself is killed before it can remove them."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.cli import clean_env

from nexo_pkg.scaffold.generator import NewProject, create_project

pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals sent to a process are POSIX")


def _pip_dirs(root: Path) -> list[Path]:
    return [path for path in root.rglob("pip-*") if path.is_dir()]


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_pack_stopped_while_pip_vendors_leaves_no_temporary_files(
    tmp_path: Path, stop: signal.Signals
) -> None:
    project = tmp_path / "demo"
    create_project(NewProject("demo", dest=project))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    # An index that takes the connection and never answers keeps pip busy, its temporary
    # directories made, until the pack is stopped.
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        env = clean_env(
            TMPDIR=str(temporary),
            HOME=str(tmp_path),
            PIP_NO_INDEX="1",
            PIP_FIND_LINKS=f"http://127.0.0.1:{port}/wheels/",
            PIP_TIMEOUT="120",
            PIP_RETRIES="0",
            PIP_NO_CACHE_DIR="1",
            PIP_DISABLE_PIP_VERSION_CHECK="1",
        )
        process = subprocess.Popen(
            [sys.executable, "-m", "nexo_pkg", "plugin", "pack", str(project), "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 60
            while not _pip_dirs(temporary):
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "pip never made its temporary directories"
                time.sleep(0.05)
            time.sleep(0.3)  # pip is waiting for the index
            process.send_signal(stop)
            stdout, stderr = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert process.returncode == 128 + stop, stderr
    assert (json.loads(stdout)["ok"], json.loads(stdout)["kind"]) == (False, "interrupted")
    assert "Traceback" not in stderr
    assert sorted(path.name for path in temporary.iterdir()) == []
    assert not (project / "dist").exists()
