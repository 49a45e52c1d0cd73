"""``--help`` teaches by example: every command and subcommand of ``nexo plugin`` closes its
help with an ``Examples:`` section (as ``gh`` and ``uv`` do), through the real command line,
and every example it shows is a command line the command accepts (its options and arguments
parse)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
import typer
from support.cli import clean_env, nexo

from nexo_pkg.cli.app import COMMANDS, build_app

GROUPS = {"trust": ("list", "add", "remove", "verify"), "cache": ("dir", "size", "clean", "prune")}
PATHS = [
    *COMMANDS,
    *(f"{group} {name}" for group, names in GROUPS.items() for name in names),
]


def _examples(help_text: str) -> list[str]:
    _, marker, section = help_text.partition("  Examples:\n")
    assert marker, help_text
    return [line.strip() for line in section.splitlines() if line.strip().startswith("nexo ")]


def _command_named(command: Any, words: list[str], example: str) -> tuple[Any, list[str]]:
    """The command the leading names of ``words`` reach from ``command``, and the words left."""
    args = words
    while hasattr(command, "get_command") and args and not args[0].startswith("-"):
        command = command.get_command(None, args[0])
        assert command is not None, example
        args = args[1:]
    return command, args


@pytest.mark.parametrize("path", PATHS)
def test_every_help_ends_with_examples_the_command_accepts(path: str) -> None:
    shown = nexo("plugin", *path.split(), "--help", env=clean_env(), in_process=True)
    assert shown.code == 0, shown.stderr
    examples = _examples(shown.stdout)
    assert examples, shown.stdout
    plugin_group = typer.main.get_command(build_app()[0]).commands["plugin"]  # type: ignore[attr-defined]
    for example in examples:
        words = shlex.split(example.partition(" > ")[0])  # a shell redirection is no argument
        assert words[:2] == ["nexo", "plugin"], example
        command, args = _command_named(plugin_group, words[2:], example)
        named = " ".join(words[2 : len(words) - len(args)])
        assert named == path or named.startswith(f"{path} "), example
        # Parsing only: options and arguments as the command declares them.
        command.make_context(named, args, resilient_parsing=False)


@pytest.mark.parametrize("words", [[], ["plugin"], ["help"]])
def test_nexo_its_plugin_group_and_help_end_with_examples_that_run(
    tmp_path: Path, words: list[str]
) -> None:
    """docs/cli.md: each command's help ends with `Examples:`, `nexo -h` and `nexo plugin -h`
    and `nexo help -h` too; each example they show parses (a `nexo help …` one prints the
    help it names)."""
    shown = nexo(*words, "-h", env=clean_env(), in_process=True)
    assert shown.code == 0, shown.stderr
    examples = _examples(shown.stdout)
    assert examples, shown.stdout
    assert shown.stdout.rstrip("\n").endswith(examples[-1])
    root = typer.main.get_command(build_app()[0])
    for example in examples:
        words_shown = shlex.split(example)
        assert words_shown[0] == "nexo", example
        if words_shown[1] == "help":
            helped = nexo(*words_shown[1:], env=clean_env(), cwd=tmp_path, in_process=True)
            assert helped.code == 0, helped.stderr
            assert helped.stdout.startswith(f"Usage: nexo {' '.join(words_shown[2:])} ")
            continue
        command, args = _command_named(root, words_shown[1:], example)
        command.make_context(" ".join(words_shown), args, resilient_parsing=False)


@pytest.mark.parametrize("words", [[], ["plugin"], ["plugin", "trust"], ["plugin", "cache"]])
def test_a_group_alone_prints_its_help_as_written(words: list[str]) -> None:
    """``nexo`` (or a group) without a command prints the group's help, line by line as
    ``-h`` shows it, on stderr, exiting 2 for the missing command (as click, ruff and uv):
    never the help folded into one ``error:`` line."""
    alone = nexo(*words, env=clean_env())
    helped = nexo(*words, "-h", env=clean_env())
    assert (alone.code, alone.stdout) == (2, "")
    assert alone.stderr == helped.stdout
    assert alone.stderr.startswith(f"Usage: {' '.join(['nexo', *words])} ")
    assert "\nCommands:\n" in alone.stderr
    assert not alone.stderr.startswith("error:")


@pytest.mark.parametrize("command", ["install", "info", "sync"])
def test_the_target_option_names_its_default_variable(command: str) -> None:
    shown = nexo("plugin", command, "--help", env=clean_env(), in_process=True)
    assert "NEXO_INSTALL_TARGET" in " ".join(shown.stdout.split())


def test_upgrade_says_its_target_comes_from_the_receipt() -> None:
    shown = nexo("plugin", "upgrade", "--help", env=clean_env(), in_process=True)
    assert "receipt records" in " ".join(shown.stdout.split())


def test_an_identity_pattern_the_help_teaches_trusts_the_release_it_names(tmp_path: Path) -> None:
    """`trust add --help` shows an `--identity-regexp`: nexo-pkg matches it against the whole
    identity, so it must match a release workflow's identity of that owner, and lint it clean
    (anchored, as NXT010 asks), or the example writes a policy that trusts nothing."""
    import re

    from nexo_pkg.lint.engine import lint_file

    shown = nexo("plugin", "trust", "add", "--help", env=clean_env(), in_process=True)
    [example] = [line for line in _examples(shown.stdout) if "--identity-regexp" in line]
    words = shlex.split(example)
    pattern = words[words.index("--identity-regexp") + 1]
    identity = (
        "https://github.com/acme/nexo-plugin-weather/.github/workflows/release.yml@refs/tags/v1.0.0"
    )
    assert re.fullmatch(pattern, identity), pattern
    assert not re.fullmatch(pattern, identity.replace("github.com", "githubXcom", 1)), pattern
    policy = tmp_path / "trusted_keys.toml"
    escaped = pattern.replace("\\", "\\\\")
    policy.write_text(
        f'schema_version = "1.0"\n[[authors]]\nowner = "acme"\nidentity_regexp = "{escaped}"\n'
    )
    assert lint_file(policy).diagnostics == ()
