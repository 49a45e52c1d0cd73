"""`pack` says each long step as it starts, not once it is over, and a pack stopped in the
middle of one leaves nothing behind.

The installed console script packs a scaffolded plugin whose requirements are vendored from a
package index on a loopback port that takes the connection and never answers: pip waits there.
The note naming that step must reach stderr (a pipe, Python's streams buffered as a user's
are) while pip is still waiting; Ctrl-C then ends the pack with one line and 130, and neither
a tarball nor pack's scratch directory is left in the project.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from support.cli import TRACEBACK, clean_env

from nexo_pkg.scaffold.generator import NewProject, create_project

NEXO = Path(sys.executable).with_name("nexo")
NOTE = "vendoring requirements.txt with pip ..."


def _stderr_until(process: subprocess.Popen[bytes], wanted: str, deadline: float) -> str:
    """What the process wrote on stderr until a line holding ``wanted`` (or the deadline)."""
    assert process.stderr is not None
    seen = b""
    while wanted.encode() not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], 0.2)
        if ready:
            chunk = os.read(process.stderr.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
    return seen.decode("utf-8", "replace")


def test_the_vendoring_note_comes_as_pip_starts_and_ctrl_c_leaves_nothing(
    tmp_path: Path,
) -> None:
    project = create_project(NewProject(plugin_id="demo", lang="python", dest=tmp_path / "demo"))
    (project.path / "requirements.txt").write_text("nexoai>=0.4\n", encoding="utf-8")
    before = sorted(p.relative_to(project.path) for p in project.path.rglob("*"))
    with socket.socket() as silent:
        # Takes connections (the kernel's backlog) and never answers a byte.
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        env = clean_env(
            HOME=str(tmp_path / "home"),
            NEXO_HOME=str(tmp_path / "nexo"),
            PIP_CONFIG_FILE=os.devnull,
            PIP_INDEX_URL=f"http://127.0.0.1:{port}/simple",
            PIP_RETRIES="0",
            PIP_TIMEOUT="120",
            PIP_DISABLE_PIP_VERSION_CHECK="1",
        )
        env.pop("PYTHONUNBUFFERED", None)
        process = subprocess.Popen(
            [str(NEXO), "plugin", "pack"],
            cwd=project.path,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            said = _stderr_until(process, NOTE, time.monotonic() + 60)
            assert NOTE in said, said
            # pip is still waiting for the index: the note came as the step started.
            time.sleep(0.5)
            assert process.poll() is None, said
            process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    stderr = said + err.decode("utf-8", "replace")
    assert process.returncode == 130, stderr
    assert TRACEBACK not in stderr
    assert stderr.strip().splitlines()[-1] == "error: interrupted [interrupted]", stderr
    assert out == b""
    after = sorted(p.relative_to(project.path) for p in project.path.rglob("*"))
    assert after == before
