"""The command-line skeleton: version, help listing every command, exit codes."""

from __future__ import annotations

from functools import partial

from support import cli

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


# No run here needs a process of its own.
nexo = partial(cli.nexo, in_process=True)


def test_version() -> None:
    result = nexo("--version")
    assert result.code == 0
    assert result.stdout.strip() == f"nexo-pkg {__version__}"


def test_plugin_help_lists_every_command() -> None:
    result = nexo("plugin", "--help")
    assert result.code == 0
    for command in COMMANDS:
        assert f" {command} " in result.stdout, command


def test_unknown_command_is_usage_error() -> None:
    result = nexo("plugin", "frobnicate")
    assert result.code == 2
    assert "Traceback" not in result.stderr
