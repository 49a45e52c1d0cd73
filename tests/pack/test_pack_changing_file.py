"""A file that grows or shrinks while ``pack`` reads it stops the pack in one ``io`` line
naming the file: the tarball never holds a header whose size its bytes do not match, and
nothing is left in DIST."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pack.pack_helpers import write_project

# The file changes right after pack has read its size (a `sitecustomize` hook on os.fstat:
# the moment is deterministic, the change is a real write to the real file).
CHANGES_AFTER_ITS_SIZE_IS_READ = """
import os

_victim = os.environ["NEXO_TEST_CHANGING_FILE"]
_how = os.environ["NEXO_TEST_CHANGE"]
_fstat = os.fstat


def _fstat_then_change(fd, *args, **kwargs):
    found = _fstat(fd, *args, **kwargs)
    try:
        path = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return found
    if path == _victim and not os.path.exists(_victim + ".changed"):
        open(_victim + ".changed", "w").close()
        with open(_victim, "ab" if _how == "grow" else "r+b") as handle:
            if _how == "grow":
                handle.write(b"# one more line\\n")
            else:
                handle.truncate(3)
    return found


os.fstat = _fstat_then_change
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/fd")
@pytest.mark.parametrize("how", ["grow", "shrink"])
def test_a_file_that_changes_size_while_packed_stops_the_pack(tmp_path: Path, how: str) -> None:
    project = write_project(tmp_path / "project", files={"src/data.py": "x = 1\n" * 4000})
    victim = project / "src" / "data.py"
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(CHANGES_AFTER_ITS_SIZE_IS_READ, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")]),
        "NEXO_TEST_CHANGING_FILE": str(victim),
        "NEXO_TEST_CHANGE": how,
    }
    out = tmp_path / "dist"
    command = [sys.executable, "-m", "nexo_pkg", "plugin", "pack", str(project), "--json"]
    completed = subprocess.run(
        [*command, "--out", str(out)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert Path(f"{victim}.changed").exists()  # the file did change, after its size was read
    assert completed.returncode == 2, completed.stderr
    document = json.loads(completed.stdout)
    assert (document["ok"], document["kind"]) == (False, "io")
    assert "changed size while it was packed" in document["error"]
    assert str(victim) in document["error"]
    assert (
        completed.stderr.strip().splitlines()[-1]
        == f"error: {document['error']} [{document['kind']}]"
    )
    assert "Traceback" not in completed.stderr
    assert not out.exists()  # no partial tarball, no sidecar
