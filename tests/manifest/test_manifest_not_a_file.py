"""A manifest name that holds no regular file (a FIFO, a directory, a dangling link, a
device) is named for what it is by ``pack`` and ``check``, not reported as "no plugin.toml";
nothing opens a FIFO (nothing blocks) and nothing is written."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from support.cli import clean_env, nexo

SHAPES = {
    "fifo": "a FIFO, not a file",
    "directory": "a directory, not a file",
    "dangling": "a symlink that never reaches a file",
    "device": "a device, not a file",
}


def _snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every entry below ``root``: its mode, and a regular file's bytes (a FIFO is never
    opened: reading it would block)."""
    found: dict[str, tuple[int, bytes]] = {}
    for path in sorted(root.rglob("*")):
        mode = path.lstat().st_mode
        found[str(path.relative_to(root))] = (
            mode,
            path.read_bytes() if stat.S_ISREG(mode) else b"",
        )
    return found


def _project(tmp_path: Path, name: str, shape: str) -> Path:
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    (project / "src" / "main.py").write_text("print('hi')\n", encoding="utf-8")
    manifest = project / name
    if shape == "fifo":
        os.mkfifo(manifest)
    elif shape == "directory":
        manifest.mkdir()
    elif shape == "dangling":
        manifest.symlink_to(project / "gone.toml")
    else:
        manifest.symlink_to("/dev/zero")
    return project


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
@pytest.mark.parametrize("name", ["plugin.toml", "nexo-plugin.toml"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_pack_and_check_name_what_stands_where_the_manifest_goes(
    tmp_path: Path, name: str, shape: str
) -> None:
    project = _project(tmp_path, name, shape)
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    before = _snapshot(project)
    problem = f"{project / name} is {SHAPES[shape]}; a plugin's manifest is a regular file"
    for command, kind in (("pack", "manifest_missing"), ("check", "target_invalid")):
        text = nexo("plugin", command, project, env=env, cwd=tmp_path, timeout=30)
        assert text.exit_code == 2, (command, text.stdout, text.stderr)
        assert text.stderr.splitlines() == [f"error: {problem} [{kind}]"], command
        as_json = nexo("plugin", command, project, "--json", env=env, cwd=tmp_path, timeout=30)
        assert as_json.exit_code == 2, (command, as_json.stderr)
        document = as_json.document
        assert (document["kind"], document["error"]) == (kind, problem), command
    assert _snapshot(project) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proj"]


def test_an_empty_project_is_still_told_to_run_new(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    text = nexo("plugin", "pack", project, env=env, cwd=tmp_path)
    assert text.exit_code == 2
    assert text.stderr.splitlines() == [
        f"error: no plugin.toml or nexo-plugin.toml in {project}; run `nexo plugin new` or "
        "pass the project directory [manifest_missing]"
    ]
