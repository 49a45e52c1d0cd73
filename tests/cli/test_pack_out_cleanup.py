"""``pack --out DIR`` that fails after it created DIR (a full disk, here the file-size limit,
which fails the write as a full disk would) removes the directories it created while they are
empty, and nothing else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import clean_env

from nexo_pkg.scaffold.generator import NewProject, create_project

pytestmark = pytest.mark.skipif(os.name != "posix", reason="RLIMIT_FSIZE is POSIX")


def _small_files() -> None:
    import resource

    # Python ignores SIGXFSZ: a write past the limit fails with EFBIG instead of killing it.
    resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))


def _pack(
    project: Path, out: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    binary = project / "demo-binary"
    binary.write_bytes(b"\x7fELF" + os.urandom(256 * 1024))  # far over the limit, packed
    binary.chmod(0o755)
    args = ["--target", "x86_64-unknown-linux-gnu", "--binary", str(binary), "--out", str(out)]
    return subprocess.run(
        [sys.executable, "-m", "nexo_pkg", "plugin", "pack", str(project), *args, "--json"],
        env=clean_env(**(env or {})),
        capture_output=True,
        text=True,
        preexec_fn=_small_files,
        check=False,
        timeout=120,
    )


def test_a_failed_pack_removes_the_output_directories_it_created(tmp_path: Path) -> None:
    project = tmp_path / "demo"
    create_project(NewProject("demo", dest=project))
    out = tmp_path / "made" / "by" / "pack"
    result = _pack(project, out)
    assert result.returncode == 2, result.stderr  # pack: an output that cannot be written
    document = json.loads(result.stdout)
    assert (document["ok"], document["kind"]) == (False, "io")
    assert not (tmp_path / "made").exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["demo"]


def test_a_failed_pack_leaves_an_output_directory_it_did_not_create(tmp_path: Path) -> None:
    project = tmp_path / "demo"
    create_project(NewProject("demo", dest=project))
    out = tmp_path / "given"
    out.mkdir()
    (tmp_path / "made").mkdir()
    result = _pack(project, out)
    assert result.returncode == 2, result.stderr  # pack: an output that cannot be written
    assert out.is_dir()
    assert list(out.iterdir()) == []
    # An existing parent of a new --out stays; only what pack made goes.
    result = _pack(project, tmp_path / "made" / "out")
    assert result.returncode == 2, result.stderr  # pack: an output that cannot be written
    assert (tmp_path / "made").is_dir()
    assert list((tmp_path / "made").iterdir()) == []


# Another process makes ROOT/made just before pack makes its first directory under ROOT:
# that directory is the other process's, not pack's. (A `sitecustomize` hook: the moment is
# deterministic.)
ANOTHER_MAKES_A_PARENT = """
import os

_root = os.environ["NEXO_TEST_RACE_ROOT"]
_mkdir = os.mkdir


def _mkdir_after_another(path, *args, **kwargs):
    other = os.path.join(_root, "made")
    if str(path).startswith(other) and not os.path.lexists(other):
        _mkdir(other)
        with open(os.path.join(_root, "other-made-it"), "w"):
            pass
    return _mkdir(path, *args, **kwargs)


os.mkdir = _mkdir_after_another
"""


def test_a_failed_pack_leaves_a_parent_another_process_made_meanwhile(tmp_path: Path) -> None:
    project = tmp_path / "demo"
    create_project(NewProject("demo", dest=project))
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(ANOTHER_MAKES_A_PARENT, encoding="utf-8")
    env = {"PYTHONPATH": os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")])}
    env["NEXO_TEST_RACE_ROOT"] = str(tmp_path)
    result = _pack(project, tmp_path / "made" / "by" / "pack", env)
    assert result.returncode == 2, result.stderr  # pack: an output that cannot be written
    assert (tmp_path / "other-made-it").exists()  # the other process was first
    # Only what pack made goes: `made` is the other process's, empty or not.
    assert (tmp_path / "made").is_dir()
    assert list((tmp_path / "made").iterdir()) == []


@pytest.mark.parametrize("out", ["loop", "loop/dist", "made/loop/dist"])
def test_an_output_directory_through_a_link_loop_is_refused_in_one_line(
    tmp_path: Path, out: str
) -> None:
    # (It was an `unexpected RuntimeError`: Python's own "Symlink loop".)
    project = tmp_path / "demo"
    create_project(NewProject("demo", dest=project))
    (tmp_path / "made").mkdir()
    for where in (tmp_path / "loop", tmp_path / "made" / "loop"):
        where.symlink_to(where.name)
    result = _pack(project, tmp_path / out)
    assert result.returncode == 2, result.stderr
    document = json.loads(result.stdout)
    assert (document["ok"], document["kind"]) == (False, "usage" if out == "loop" else "io")
    assert "RuntimeError" not in result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"error: output directory {tmp_path / out} is a symbolic link that loops; remove it, "
        "or name another with --out [usage]"
        if out == "loop"
        else f"error: cannot create output directory {tmp_path / out}: Too many levels of "
        "symbolic links [io]"
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["demo", "loop", "made"]
    assert [path.name for path in (tmp_path / "made").iterdir()] == ["loop"]
