"""pack warns when the manifest's entrypoint command names no executable file of the tarball.

The daemon runs `[plugin.entrypoint] command` as written (``Command::new(&command)`` with no
working directory of its own, crates/core/src/agent/nexo_plugin_registry/subprocess.rs:190 in
lordmacu/nexo-rs), not the ``bin/<id>`` the tarball ships: a ``./run.sh`` left from
development means the installed plugin does not start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import clean_env, nexo

from nexo_pkg.pack.build import PackOptions, pack
from pack.pack_helpers import ProjectFactory

EPOCH = 1_700_000_000


def _with_command(project: Path, command: str) -> Path:
    manifest = project / "nexo-plugin.toml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(
        text.replace('command = "./bin/demo"', f'command = "{command}"'), encoding="utf-8"
    )
    return project


@pytest.mark.parametrize(
    ("command", "state"),
    [
        ("./run.sh", "is not in"),
        ("./scripts/start", "is not in"),
        ("./lib/plugin/main.py", "is not executable in"),
        # The launcher with a trailing slash: execve refuses a directory path (ENOTDIR).
        ("./bin/demo/", "ends in a slash, so it names no file of"),
    ],
)
def test_a_command_the_tarball_lacks_is_warned(
    make_project: ProjectFactory, command: str, state: str
) -> None:
    project = _with_command(make_project(files={"run.sh": "#!/bin/sh\n"}), command)
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    [warning] = [note for note in result.notes if "[plugin.entrypoint] command" in note]
    assert f"command `{command}` {state} the tarball, which ships bin/demo" in warning
    assert 'set command = "./bin/demo"' in warning


def test_the_warning_is_printed_and_in_the_json_report(make_project: ProjectFactory) -> None:
    project = _with_command(make_project(), "./run.sh")
    completed = nexo(
        "plugin", "pack", project, "--json", "--source-date-epoch", str(EPOCH), env=clean_env()
    )
    assert completed.code == 0, completed.stderr
    document = json.loads(completed.stdout)
    [warning] = [w for w in document["warnings"] if "`./run.sh`" in w]
    assert "ships bin/demo" in warning
    assert "warning: the manifest's [plugin.entrypoint] command `./run.sh`" in completed.stderr


@pytest.mark.parametrize("command", ["./bin/demo", "bin/demo", "/usr/bin/python3", "python3"])
def test_a_command_the_tarball_holds_or_the_host_finds_is_not_warned(
    make_project: ProjectFactory, command: str
) -> None:
    project = _with_command(make_project(), command)
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    assert [note for note in result.notes if "[plugin.entrypoint] command" in note] == []


def test_a_compiled_plugin_s_command_is_judged_too(
    tmp_path: Path, make_project: ProjectFactory
) -> None:
    project = _with_command(make_project(), "./target/release/demo")
    binary = tmp_path / "demo-exe"
    binary.write_bytes(b"#!/bin/sh\n")
    binary.chmod(0o755)
    result = pack(
        PackOptions(
            project=project,
            target="x86_64-unknown-linux-gnu",
            binary=binary,
            source_date_epoch=EPOCH,
        ),
        environ={},
    )
    assert any("`./target/release/demo` is not in the tarball" in note for note in result.notes)
