"""The same tarball from a Windows, macOS or Linux checkout.

Modes in a tarball packed on Windows. Windows's file systems keep no execute bit: Python's
``stat`` there makes ``.exe``, ``.bat``, ``.cmd`` and ``.com`` files executable and nothing
else, so a project's ``tool.sh`` reads 0644 and its ``run.bat`` 0755. ``pack`` takes the
execute bits of ``src/`` from git's index there, and packs the bytes a Linux or macOS
checkout of the same commit packs.

Each Windows run is a real ``python -m nexo_pkg`` child under the Windows shim
(``tests/support/windows_shim.py``): ``os.name`` is ``"nt"``; the modes on disk are set here
as Windows shows them.
"""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
from pathlib import Path

from support import windows_shim
from support.cli import CliResult, clean_env, nexo

from pack.pack_helpers import build_wheel, write_project

EPOCH = "1700000000"
FILES = {"src/tool.sh": "#!/bin/sh\necho hi\n", "src/run.bat": "@echo off\r\n"}


def _git(project: Path, *arguments: str) -> None:
    env = {
        **clean_env(),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    subprocess.run(["git", *arguments], cwd=project, check=True, env=env, capture_output=True)


def _pack(project: Path, *, windows: bool) -> CliResult:
    env = clean_env()
    if windows:
        windows_shim.child_environment(env)
    result = nexo("plugin", "pack", "--source-date-epoch", EPOCH, "--quiet", env=env, cwd=project)
    assert result.code == 0, result.stderr
    return result


def _modes(tarball: Path) -> dict[str, int]:
    with tarfile.open(tarball) as archive:
        return {member.name: member.mode for member in archive.getmembers()}


def _as_windows_shows_it(project: Path) -> None:
    (project / "src" / "tool.sh").chmod(0o644)
    (project / "src" / "run.bat").chmod(0o755)


def test_a_tarball_packed_on_windows_takes_execute_bits_from_git(tmp_path: Path) -> None:
    project = write_project(tmp_path / "demo", files=FILES)
    (project / ".gitignore").write_text("dist/\n")
    _git(project, "init", "-q")
    _git(project, "add", ".")
    _git(project, "update-index", "--chmod=+x", "src/tool.sh")
    _git(project, "commit", "-qm", "init")
    # A Linux checkout of the commit has the modes git records.
    checkout = tmp_path / "checkout"
    _git(tmp_path, "clone", "-q", str(project), str(checkout))
    assert (checkout / "src" / "tool.sh").stat().st_mode & 0o111
    assert not (checkout / "src" / "run.bat").stat().st_mode & 0o111
    _pack(checkout, windows=False)

    _as_windows_shows_it(project)
    _pack(project, windows=True)
    name = "demo-0.1.0-noarch.tar.gz"
    modes = _modes(project / "dist" / name)
    assert modes["lib/plugin/tool.sh"] == 0o755
    assert modes["lib/plugin/run.bat"] == 0o644
    assert modes["lib/plugin/main.py"] == 0o644
    assert modes["bin/demo"] == 0o755
    assert (project / "dist" / name).read_bytes() == (checkout / "dist" / name).read_bytes()


def test_without_git_a_file_packed_on_windows_is_0644(tmp_path: Path) -> None:
    """No repository records a mode: what Windows's ``stat`` says of a ``.bat`` is no execute
    bit a daemon host would see on Linux."""
    project = write_project(tmp_path / "demo", files=FILES)
    _as_windows_shows_it(project)
    _pack(project, windows=True)
    modes = _modes(project / "dist" / "demo-0.1.0-noarch.tar.gz")
    assert {modes[f"lib/plugin/{name}"] for name in ("tool.sh", "run.bat", "main.py")} == {0o644}
    assert modes["bin/demo"] == 0o755


def test_what_finder_and_explorer_leave_in_src_is_not_packed(tmp_path: Path) -> None:
    """A Mac's ``.DS_Store`` and ``._*`` AppleDouble files and Windows's ``Thumbs.db`` are the
    author's desktop's: the tarball is the one a Linux checkout packs."""
    clean = write_project(tmp_path / "clean" / "demo", files={"src/pkg/util.py": "x = 1\n"})
    _pack(clean, windows=False)
    desktop = write_project(
        tmp_path / "desktop" / "demo",
        files={
            "src/pkg/util.py": "x = 1\n",
            "src/.DS_Store": "\0\0\0\1Bud1",
            "src/pkg/.DS_Store": "\0\0\0\1Bud1",
            "src/._main.py": "\0\5\26\7",
            "src/pkg/Thumbs.db": "\xd0\xcf",
        },
    )
    _pack(desktop, windows=False)
    name = "demo-0.1.0-noarch.tar.gz"
    assert (desktop / "dist" / name).read_bytes() == (clean / "dist" / name).read_bytes()


def test_a_custom_folder_icon_and_explorers_desktop_ini_are_not_packed(tmp_path: Path) -> None:
    """Finder keeps a folder's custom icon in ``Icon\\r`` (a name with a control character, which
    installers refuse) and Explorer a customised folder's settings in ``desktop.ini``: pack
    leaves both out, as the other desktop files, instead of refusing or shipping them."""
    clean = write_project(tmp_path / "clean" / "demo", files={"src/pkg/util.py": "x = 1\n"})
    _pack(clean, windows=False)
    desktop = write_project(
        tmp_path / "desktop" / "demo",
        files={
            "src/pkg/util.py": "x = 1\n",
            "src/Icon\r": "",
            "src/pkg/Icon\r": "",
            "src/desktop.ini": "[.ShellClassInfo]\r\nIconResource=x.ico,0\r\n",
        },
    )
    name = "demo-0.1.0-noarch.tar.gz"
    for windows in (False, True):
        _pack(desktop, windows=windows)
        assert (desktop / "dist" / name).read_bytes() == (clean / "dist" / name).read_bytes()
        (desktop / "dist" / name).unlink()


def test_vendored_execute_bits_on_windows_are_the_wheels(tmp_path: Path) -> None:
    """pip gives a vendored file the execute bit its wheel entry has; Windows keeps none on
    disk, so the tarball packed there takes the bits pip marked and equals a Linux pack."""
    wheels = build_wheel(
        tmp_path / "wheels",
        "toolkit",
        "1.0",
        {"toolkit/__init__.py": b"", "toolkit/run.sh": b"#!/bin/sh\necho hi\n"},
        purelib=True,
        tag="py3-none-any",
        executables=frozenset({"toolkit/run.sh"}),
    ).parent
    packed = {}
    for windows in (False, True):
        project = write_project(
            tmp_path / ("windows" if windows else "linux") / "demo", requirements="toolkit\n"
        )
        env = {**clean_env(), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
        if windows:
            windows_shim.child_environment(env)
        result = nexo("plugin", "pack", "--source-date-epoch", EPOCH, "-q", env=env, cwd=project)
        assert result.code == 0, result.stderr
        tarball = project / "dist" / "demo-0.1.0-noarch.tar.gz"
        modes = _modes(tarball)
        assert modes["lib/toolkit/run.sh"] == 0o755
        assert modes["lib/toolkit/__init__.py"] == 0o644
        packed[windows] = tarball.read_bytes()
    assert packed[True] == packed[False]


def test_a_symlink_checked_out_as_a_file_on_windows_packs_as_on_linux(tmp_path: Path) -> None:
    """Git for Windows checks a symlink out as a plain file holding the link's text unless
    symlinks are enabled; pack follows what git records, so the tarball holds the linked
    file's bytes as a Linux checkout of the same commit does."""
    project = write_project(tmp_path / "demo", files={"src/shared/util.py": "X = 1\n"})
    (project / "src" / "util.py").symlink_to("shared/util.py")
    (project / ".gitignore").write_text("dist/\n")
    _git(project, "init", "-q")
    _git(project, "add", ".")
    _git(project, "commit", "-qm", "init")
    _pack(project, windows=False)
    windows = tmp_path / "windows"
    _git(tmp_path, "-c", "core.symlinks=false", "clone", "-q", str(project), str(windows))
    assert (windows / "src" / "util.py").read_text() == "shared/util.py"
    _pack(windows, windows=True)
    name = "demo-0.1.0-noarch.tar.gz"
    with tarfile.open(windows / "dist" / name) as archive:
        member = archive.extractfile("lib/plugin/util.py")
        assert member is not None
        assert member.read() == b"X = 1\n"
    assert (windows / "dist" / name).read_bytes() == (project / "dist" / name).read_bytes()
    # Edited since the checkout, it is a file of its own.
    (windows / "src" / "util.py").write_text("Y = 2\n")
    _pack(windows, windows=True)
    with tarfile.open(windows / "dist" / name) as archive:
        member = archive.extractfile("lib/plugin/util.py")
        assert member is not None
        assert member.read() == b"Y = 2\n"


def test_a_recorded_symlink_out_of_the_project_is_refused_on_windows(tmp_path: Path) -> None:
    project = write_project(tmp_path / "demo")
    (project / "src" / "passwd").symlink_to("/etc/passwd")
    _git(project, "init", "-q")
    _git(project, "add", ".")
    _git(project, "commit", "-qm", "init")
    windows = tmp_path / "windows"
    _git(tmp_path, "-c", "core.symlinks=false", "clone", "-q", str(project), str(windows))
    env = clean_env()
    windows_shim.child_environment(env)
    result = nexo("plugin", "pack", "--json", env=env, cwd=windows)
    assert result.code == 1, result.stderr
    assert json.loads(result.stdout)["kind"] == "layout_invalid"
    assert "pointing outside" in result.stderr
    assert not (windows / "dist").exists()
