"""Build plugin directories for the check tests and prove no process outlives a check."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import nexo_plugin_sdk
from typer.testing import CliRunner

from nexo_pkg.cli.app import build_app

app = build_app()[0]

PLUGINS = Path(__file__).resolve().parent.parent / "fixtures" / "plugins"
SCRIPTED = PLUGINS / "scripted.py"
SDK_PLUGIN = PLUGINS / "sdk_plugin"

LAUNCHER = """#!/usr/bin/env bash
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec env PYTHONPATH="$DIR/lib" python3 "$DIR/lib/plugin/main.py" "$@"
"""


#: Reply deadline of the check tests: plugins answer in well under a second; the margin is for
#: a loaded machine.
TIMEOUT_MS = 10_000


def cli_check(root: Path, *options: str, env: dict[str, str] | None = None) -> tuple[int, Any]:
    """``nexo plugin check ROOT --json`` through the command line (in this process), so the
    exit code is checked too: ``(exit code, the JSON document)``."""
    result = CliRunner().invoke(
        app,
        ["plugin", "check", str(root), "--json", "--timeout-ms", str(TIMEOUT_MS), *options],
        env=env,
    )
    return result.exit_code, json.loads(result.stdout)


def toml_string(value: str) -> str:
    """A TOML basic string (JSON escaping is valid TOML for these values)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def scripted_plugin(
    root: Path,
    mode: str,
    *,
    plugin_id: str = "scripted",
    tools: tuple[str, ...] = (),
    manifest_name: str = "nexo-plugin.toml",
    command: str = sys.executable,
    extra: str = "",
) -> Path:
    """A project directory whose entrypoint runs ``scripted.py MODE`` with ``command`` (this
    interpreter by default); ``extra`` is appended to the manifest (more tables)."""
    root.mkdir(parents=True, exist_ok=True)
    tool_list = ", ".join(toml_string(name) for name in tools)
    (root / manifest_name).write_text(
        f"""[plugin]
id = "{plugin_id}"
version = "0.1.0"
name = "Scripted"
description = "Test plugin"
min_nexo_version = ">=0.1.0"

[plugin.entrypoint]
command = {toml_string(command)}
args = [{toml_string(str(SCRIPTED))}, "{mode}"]

[plugin.extends]
tools = [{tool_list}]
{extra}""",
        encoding="utf-8",
    )
    return root


def sdk_project(root: Path) -> Path:
    """The SDK fixture project with ``command`` pointing at this interpreter (has nexoai)."""
    shutil.copytree(SDK_PLUGIN, root)
    manifest = root / "nexo-plugin.toml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(
        text.replace('command = "python3"', f"command = {toml_string(sys.executable)}"),
        encoding="utf-8",
    )
    return root


def sdk_packed(root: Path) -> Path:
    """The packed layout of the SDK fixture: ``bin/<id>`` launcher, ``lib/plugin``, and the
    SDK vendored into ``lib/`` (the launcher runs ``python3`` from PATH)."""
    root.mkdir(parents=True)
    shutil.copy(SDK_PLUGIN / "nexo-plugin.toml", root / "nexo-plugin.toml")
    (root / "lib" / "plugin").mkdir(parents=True)
    shutil.copy(SDK_PLUGIN / "main.py", root / "lib" / "plugin" / "main.py")
    sdk_source = Path(nexo_plugin_sdk.__file__).parent
    shutil.copytree(
        sdk_source,
        root / "lib" / "nexo_plugin_sdk",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (root / "bin").mkdir()
    launcher = root / "bin" / "sdkdemo"
    launcher.write_text(LAUNCHER, encoding="utf-8")
    launcher.chmod(0o755)
    return root


def python_first_on_path() -> str:
    """PATH with this interpreter's directory first, so the launcher's ``python3`` is ours."""
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def recorded_pids(pid_file: Path) -> list[int]:
    """The pids a fixture plugin wrote to ``FIXTURE_PID_FILE``."""
    if not pid_file.exists():
        return []
    return [int(line) for line in pid_file.read_text(encoding="utf-8").split()]


def process_state(pid: int) -> str | None:
    """The ``/proc`` state letter of ``pid`` (``"Z"`` for a zombie), or None when gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def assert_reaped(pid: int) -> None:
    """The plugin itself: dead and reaped by the host (no zombie, no /proc entry)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        pass
    else:  # pragma: no cover - the failure being tested for
        raise AssertionError(f"plugin process {pid} still exists (state {process_state(pid)})")
    assert not Path(f"/proc/{pid}").exists()


def assert_not_running(pid: int, *, within: float = 5.0) -> None:
    """A process the plugin started: killed with its group.

    Once its parent (the plugin) is gone it belongs to init; whether it is then reaped is
    init's job (some container inits never reap), so a zombie counts as not running.
    """
    deadline = time.monotonic() + within
    while True:
        state = process_state(pid)
        if state in (None, "Z", "X"):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"process {pid} is still running (state {state})")
        time.sleep(0.02)
