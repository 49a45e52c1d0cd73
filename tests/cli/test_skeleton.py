"""The command-line skeleton: version, help listing every command, exit codes."""

from __future__ import annotations

import subprocess
import sys

from nexo_pkg import __version__

COMMANDS = [
    "lint",
    "schema",
    "new",
    "pack",
    "check",
    "install",
    "upgrade",
    "list",
    "remove",
    "verify",
    "lsp",
]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nexo_pkg", *args], capture_output=True, text=True, check=False
    )


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"nexo-pkg {__version__}"


def test_plugin_help_lists_every_command() -> None:
    result = run("plugin", "--help")
    assert result.returncode == 0
    for command in COMMANDS:
        assert f" {command} " in result.stdout, command


def test_unknown_command_is_usage_error() -> None:
    result = run("plugin", "frobnicate")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
