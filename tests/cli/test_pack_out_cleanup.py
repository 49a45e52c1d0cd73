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


def _pack(project: Path, out: Path) -> subprocess.CompletedProcess[str]:
    binary = project / "demo-binary"
    binary.write_bytes(b"\x7fELF" + os.urandom(256 * 1024))  # far over the limit, packed
    binary.chmod(0o755)
    args = ["--target", "x86_64-unknown-linux-gnu", "--binary", str(binary), "--out", str(out)]
    return subprocess.run(
        [sys.executable, "-m", "nexo_pkg", "plugin", "pack", str(project), *args, "--json"],
        env=clean_env(),
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
