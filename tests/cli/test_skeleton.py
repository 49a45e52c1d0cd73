"""The command-line skeleton: version, help listing every command, exit codes."""

from __future__ import annotations

from functools import partial

from support import cli

from nexo_pkg import __version__

# Every ``plugin`` command and group, spelled out here rather than read from the CLI's own
# table: the table drives both ``--help`` and completion, so a command dropped from it (or
# registered lazily without an entry) would go unnoticed if the test read the same table.
COMMANDS = [
    "lint", "schema", "rule", "new", "pack", "check", "install", "upgrade", "list", "remove",
    "verify", "sbom", "outdated", "rollback", "hold", "unhold", "search", "info", "doctor",
    "enable", "disable", "lsp", "lock", "sync", "push", "mirror", "cache", "trust",
]  # fmt: skip
SUBCOMMANDS = {
    "trust": ["add", "list", "remove", "verify"],
    "cache": ["dir", "size", "clean", "prune"],
}


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
    top = nexo("--help")
    assert top.code == 0
    assert " plugin " in top.stdout


def test_completion_offers_every_command_though_each_is_imported_only_when_it_runs() -> None:
    def offered(words: str) -> set[str]:
        env = cli.clean_env(
            _NEXO_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=str(len(words.split()))
        )
        result = cli.nexo(env=env)
        assert result.code == 0, result.stderr
        return set(result.stdout.split())

    assert offered("nexo plugin ") == set(COMMANDS)
    for group, names in SUBCOMMANDS.items():
        assert offered(f"nexo plugin {group} ") == set(names), group
        listed = nexo("plugin", group, "--help")
        assert listed.code == 0
        for name in names:
            assert f" {name} " in listed.stdout, (group, name)


def test_unknown_command_is_usage_error() -> None:
    result = nexo("plugin", "frobnicate")
    assert result.code == 2
    assert "Traceback" not in result.stderr
