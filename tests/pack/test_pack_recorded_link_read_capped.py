"""On Windows, pack reads a file that git records as a symbolic link (checked out as a plain
file holding the link's text) to tell whether it is still that text. It reads it as a regular
file, no further than a link's text can be: a file edited since into a huge one is a file of
its own, never read whole (so pack neither takes the memory of the file nor dies without a
document), and a FIFO there is never waited on.

The Windows runs are real console-script children under the Windows shim
(``tests/support/windows_shim.py``)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from support import windows_shim
from support.cli import clean_env

from pack.pack_helpers import write_project

NEXO = str(Path(sys.executable).parent / "nexo")
# Far above what pack needs, far below the file: reading it whole cannot succeed.
ADDRESS_SPACE = 768 * 1024 * 1024
HUGE = 2 * 1024 * 1024 * 1024


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every path below ``root`` with its mode and size, by ``lstat`` (nothing is opened)."""
    return {
        str(path.relative_to(root)): (path.lstat().st_mode, path.lstat().st_size)
        for path in root.rglob("*")
    }


def _git(cwd: Path, *arguments: str) -> None:
    env = {
        **clean_env(),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    subprocess.run(["git", *arguments], cwd=cwd, check=True, env=env, capture_output=True)


def _windows_checkout(tmp_path: Path) -> Path:
    """A project whose src/util.py is a link to src/shared/util.py, cloned as Git for Windows
    clones it without symlink support: util.py a plain file holding ``shared/util.py``."""
    project = write_project(tmp_path / "demo", files={"src/shared/util.py": "X = 1\n"})
    (project / "src" / "util.py").symlink_to("shared/util.py")
    _git(project, "init", "-q")
    _git(project, "add", ".")
    _git(project, "commit", "-qm", "init")
    windows = tmp_path / "windows"
    _git(tmp_path, "-c", "core.symlinks=false", "clone", "-q", str(project), str(windows))
    assert (windows / "src" / "util.py").read_text() == "shared/util.py"
    return windows


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS, sparse files")
@pytest.mark.parametrize("edited", ["huge file", "fifo"])
def test_a_recorded_link_edited_into_a_huge_file_or_a_fifo_is_not_read_whole(
    tmp_path: Path, edited: str
) -> None:
    windows = _windows_checkout(tmp_path)
    recorded = windows / "src" / "util.py"
    recorded.unlink()
    if edited == "huge file":
        with recorded.open("wb") as handle:
            handle.truncate(HUGE)
    else:
        os.mkfifo(recorded)
    # A FIFO elsewhere in src/ stops the pack once the tree is walked (layout_invalid), after
    # git's records were read: the refusal shows pack got that far.
    os.mkfifo(windows / "src" / "pipe")
    before = _tree(windows)
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    windows_shim.child_environment(env)
    out = tmp_path / "dist"
    packed = subprocess.run(
        [NEXO, "plugin", "pack", str(windows), "--out", str(out), "--json"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
        stdin=subprocess.DEVNULL, preexec_fn=_limited,
    )  # fmt: skip
    assert "Traceback" not in packed.stderr, packed.stderr[-2000:]
    document = json.loads(packed.stdout)
    assert (packed.returncode, document["kind"]) == (1, "layout_invalid"), document
    assert "pipe is not a regular file or directory" in document["error"]
    assert not out.exists()
    assert _tree(windows) == before
