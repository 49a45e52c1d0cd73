"""Each bad input of a pack, through the real command line: one ``error:`` line on stderr
(after the lint diagnostics of a manifest with errors), the exit code and ``--json`` kind of
its kind, and nothing written anywhere: the project tree (DIST included) and the temporary
directory are as they were."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from support.cli import clean_env, nexo

from nexo_pkg.scaffold.generator import NewProject, create_project


def _no_manifest(project: Path) -> list[str]:
    (project / "plugin.toml").unlink()
    return []


def _no_main(project: Path) -> list[str]:
    (project / "src" / "main.py").unlink()
    return []


def _link_outside(project: Path) -> list[str]:
    secret = project.parent / "secret.txt"
    secret.write_text("secret\n")
    (project / "src" / "secret.py").symlink_to(secret)
    return []


def _fifo(project: Path) -> list[str]:
    os.mkfifo(project / "src" / "pipe.py")
    return []


def _uninstallable(project: Path) -> list[str]:
    (project / "requirements.txt").write_text("nexoai>=0.4\nno-such-distribution-x==1.0\n")
    return []


def _dist_is_a_file(project: Path) -> list[str]:
    (project / "dist").write_text("not a directory\n")
    return []


def _version_no_file_name(project: Path) -> list[str]:
    manifest = project / "plugin.toml"
    manifest.write_text(manifest.read_text().replace('version = "0.1.0"', 'version = "0.1/../x"'))
    return []


def _version_no_file_name_out_elsewhere(project: Path) -> list[str]:
    _version_no_file_name(project)
    return ["--out", str(project.parent / "out" / "deep")]  # not made for a refused pack


def _binary_not_executable(project: Path) -> list[str]:
    (project / "exe").write_bytes(b"\x7fELF")
    return ["--target", "x86_64-unknown-linux-gnu", "--binary", str(project / "exe")]


def _snapshot(root: Path) -> dict[str, tuple[str, int, str]]:
    """Every entry below ``root``: kind, mode and content hash or link target (a FIFO is
    recorded, never opened: reading one blocks)."""
    snapshot: dict[str, tuple[str, int, str]] = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        relative, mode = path.relative_to(root).as_posix(), stat.S_IMODE(info.st_mode)
        if stat.S_ISLNK(info.st_mode):
            snapshot[relative] = ("link", 0, str(path.readlink()))
        elif stat.S_ISREG(info.st_mode):
            snapshot[relative] = ("file", mode, hashlib.sha256(path.read_bytes()).hexdigest())
        else:
            snapshot[relative] = ("dir" if path.is_dir() else "other", mode, "")
    return snapshot


@pytest.mark.skipif(os.name != "posix", reason="FIFOs and symlinks as made here are POSIX")
@pytest.mark.parametrize(
    ("spoil", "expected"),
    [
        (_no_manifest, (2, "manifest_missing", "no plugin.toml or nexo-plugin.toml in")),
        (_no_main, (1, "layout_invalid", "src/main.py is missing")),
        (_link_outside, (1, "layout_invalid", "is a symlink pointing outside")),
        (_fifo, (1, "layout_invalid", "is not a regular file or directory")),
        (_uninstallable, (1, "vendor_failed", "no-such-distribution-x")),
        (_dist_is_a_file, (2, "usage", "exists and is not a directory")),
        (_version_no_file_name, (1, "manifest_invalid", "has 1 lint error")),
        (_version_no_file_name_out_elsewhere, (1, "manifest_invalid", "has 1 lint error")),
        (_binary_not_executable, (2, "usage", "is not executable")),
    ],
    ids=lambda value: getattr(value, "__name__", None),
)
def test_a_bad_input_is_one_line_and_writes_nothing(
    tmp_path: Path,
    offline_pip_env: dict[str, str],
    spoil: Callable[[Path], list[str]],
    expected: tuple[int, str, str],
) -> None:
    code, kind, says = expected
    project = tmp_path / "work" / "demo"
    create_project(NewProject("demo", dest=project))
    extra = spoil(project)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    before = _snapshot(tmp_path / "work")
    env = clean_env(TMPDIR=str(temporary), HOME=str(tmp_path), **offline_pip_env)
    for args in (["--json"], []):
        result = nexo("plugin", "pack", project, *extra, "--quiet", *args, env=env, cwd=tmp_path)
        assert result.code == code, result.stderr
        if args:
            document = result.document
            assert (document["ok"], document["kind"]) == (False, kind)
            assert says in document["error"]
        lines = [line for line in result.stderr.splitlines() if not line.startswith("warning: ")]
        if kind == "manifest_invalid":  # the lint diagnostics come first, then the error
            assert "NX101" in result.stderr
            lines = lines[-1:]
        assert lines == [result.error_line], result.stderr
        assert result.error_line.endswith(f" [{kind}]"), result.error_line
        assert says in result.error_line
        assert _snapshot(tmp_path / "work") == before
        assert sorted(path.name for path in temporary.iterdir()) == []
