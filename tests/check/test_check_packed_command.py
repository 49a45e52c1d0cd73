"""A packed layout whose manifest command is not what the tree holds: check runs bin/<id>
(SPEC §4 step 1), the daemon runs the manifest's command as written
(``Command::new(&command)`` with no working directory of its own,
crates/core/src/agent/nexo_plugin_registry/subprocess.rs:190 in lordmacu/nexo-rs), so check
warns that the installed plugin would not start."""

from __future__ import annotations

import json
import shlex
import sys
import tarfile
from pathlib import Path

import pytest
from support.cli import nexo

from check.check_plugins import SCRIPTED
from nexo_pkg.check import run_check

MANIFEST = """[plugin]
id = "scripted"
version = "0.1.0"
name = "Scripted"
description = "Test plugin"
min_nexo_version = ">=0.1.0"

[plugin.entrypoint]
command = "{command}"
"""


def packed(root: Path, command: str) -> Path:
    """A packed layout: the manifest and a working bin/scripted (runs scripted.py ok)."""
    (root / "bin").mkdir(parents=True)
    (root / "nexo-plugin.toml").write_text(MANIFEST.format(command=command), encoding="utf-8")
    launcher = root / "bin" / "scripted"
    launcher.write_text(
        f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(str(SCRIPTED))} ok\n",
        encoding="utf-8",
    )
    launcher.chmod(0o755)
    return root


def tarball_of(root: Path, tarball: Path) -> Path:
    with tarfile.open(tarball, "w:gz") as archive:
        for path in sorted(root.rglob("*")):
            archive.add(path, arcname=path.relative_to(root).as_posix(), recursive=False)
    return tarball


def manifest_warnings(checks: list[dict[str, str]]) -> list[str]:
    return [c["detail"] for c in checks if c["name"] == "manifest" and c["status"] == "warn"]


@pytest.mark.parametrize(
    ("command", "state"),
    [
        ("./run.sh", "is not in"),
        ("./lib/plugin/main.py", "is not executable in"),
        # The launcher itself with a trailing slash: execve refuses a directory path.
        ("./bin/scripted/", "ends in a slash, so it names no file of"),
    ],
)
def test_a_tarball_whose_manifest_command_it_lacks_is_warned(
    tmp_path: Path, command: str, state: str
) -> None:
    root = packed(tmp_path / "tree", command)
    if command.endswith("main.py"):
        (root / "lib" / "plugin").mkdir(parents=True)
        (root / "lib" / "plugin" / "main.py").write_text("print('x')\n", encoding="utf-8")
    tarball = tarball_of(root, tmp_path / "scripted-0.1.0-noarch.tar.gz")
    completed = nexo("plugin", "check", tarball, "--json", in_process=True)
    document = json.loads(completed.stdout)
    assert completed.code == 0, completed.stdout  # a warning: bin/scripted itself answers
    assert document["ok"] is True
    [warning] = manifest_warnings(document["checks"])
    assert f"command `{command}` {state} the tarball" in warning
    assert "bin/scripted" in warning
    assert 'set command = "./bin/scripted"' in warning
    # What check spawns is still bin/<id>, as SPEC §4 step 1 says for a packed layout.
    assert document["plugin"]["command"][0].endswith("/bin/scripted")


def test_a_packed_directory_whose_manifest_command_it_lacks_is_warned(tmp_path: Path) -> None:
    root = packed(tmp_path / "tree", "./run.sh")
    report = run_check(root, timeout_ms=10_000)
    assert report.ok, report.checks
    [warning] = manifest_warnings([check.to_json() for check in report.checks])
    assert "command `./run.sh` is not in the plugin directory" in warning


@pytest.mark.parametrize("command", ["./bin/scripted", "bin/../bin/scripted", "/bin/sh", "sh"])
def test_a_command_the_tree_holds_or_the_host_finds_is_not_warned(
    tmp_path: Path, command: str
) -> None:
    root = packed(tmp_path / "tree", command)
    tarball = tarball_of(root, tmp_path / "scripted-0.1.0-noarch.tar.gz")
    report = run_check(tarball, timeout_ms=10_000)
    assert report.ok, report.checks
    assert manifest_warnings([check.to_json() for check in report.checks]) == []
