"""docs/cli.md says what the commands do: its tables are checked against the real ones."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer
from support.cli import nexo

from nexo_pkg.cli.app import COMMANDS, SHELLS, build_app
from nexo_pkg.cli.reference import MARKER, reference_markdown

REPO = Path(__file__).resolve().parents[2]
PAGE = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = PAGE.index(f"## {title}")
    end = PAGE.find("\n## ", start + 1)
    return PAGE[start : end if end >= 0 else len(PAGE)]


def help_of(*args: str) -> str:
    """What ``nexo ARGS --help`` prints (the run must succeed)."""
    shown = nexo(*args, "--help", in_process=True)
    assert shown.code == 0, shown.stderr
    return shown.stdout


def test_every_nexo_variable_in_the_page_is_read_by_the_code() -> None:
    source = "\n".join(path.read_text(encoding="utf-8") for path in REPO.glob("nexo_pkg/**/*.py"))
    names = set(re.findall(r"`(NEXO_[A-Z_]+)`", section("Environment variables")))
    assert names
    assert [name for name in sorted(names) if name not in source] == []


def test_every_shared_option_is_on_every_command() -> None:
    options = re.findall(r"`(--[a-z]+)", section("Quiet, verbose, colour"))
    assert {"--quiet", "--verbose", "--color"} <= set(options)
    for command in ("list", "install", "lint", "trust add"):
        text = help_of("plugin", *command.split())
        for option in ("--quiet", "--verbose", "--color", "--help"):
            assert option in text, (command, option)
        assert "-h, --help" in text


def test_exit_codes_and_shells_match() -> None:
    codes = re.findall(r"^\| `(\d+)` \|", section("Exit codes"), flags=re.MULTILINE)
    assert codes == ["0", "1", "2", "130", "143", "129"]
    plugin_help = help_of("plugin")
    assert "130 interrupted" in plugin_help
    assert "143" in plugin_help
    assert "129 hung up" in plugin_help
    for shell in SHELLS:
        assert shell in section("Shell completion")


def test_the_config_keys_in_the_page_are_the_ones_read() -> None:
    from nexo_pkg.lint import config

    shown = set(re.findall(r"^(\w[\w-]*) = ", section("Configuration files"), flags=re.MULTILINE))
    assert shown == {"select", "ignore", "exclude"}
    assert shown <= config._KEYS
    assert "per-file-ignores" in section("Configuration files")


def test_every_command_is_listed_in_plugin_help() -> None:
    text = help_of("plugin")
    for name in COMMANDS:
        assert re.search(rf"^  {name}\s", text, flags=re.MULTILINE), name


def test_the_command_reference_is_current() -> None:
    """Every argument and option of every command is in docs/cli.md, in its `--help` words."""
    assert MARKER in PAGE, "run: python scripts/gen_cli_reference.py"
    assert PAGE.split(MARKER, 1)[1] == reference_markdown().split(MARKER, 1)[1], (
        "run: python scripts/gen_cli_reference.py"
    )


def test_every_option_of_every_command_is_in_the_page() -> None:
    """Read from the real command tree, not from the generator: the page names each option
    of each command under that command's heading."""
    root, _ = build_app()
    missing: list[str] = []
    # Described once, under "Quiet, verbose, colour" (checked above).
    shared = {"--quiet", "--verbose", "--color", "--help"}

    def walk(ctx: Any) -> None:
        command = ctx.command
        if hasattr(command, "list_commands"):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                walk(sub.make_context(name, [], parent=ctx, resilient_parsing=True))
            return
        heading = f"\n### `{ctx.command_path}`\n"
        assert heading in PAGE, ctx.command_path
        start = PAGE.index(heading) + len(heading)
        end = PAGE.find("\n### ", start)
        described = PAGE[start : end if end >= 0 else len(PAGE)]
        for param in command.params:
            for option in getattr(param, "opts", []) + getattr(param, "secondary_opts", []):
                if option.startswith("--") and option not in shared and option not in described:
                    missing.append(f"{ctx.command_path} {option}")

    walk(typer.main.get_command(root).make_context("nexo", [], resilient_parsing=True))
    assert missing == []


def _command_names() -> set[str]:
    """Every command under ``nexo plugin``, a group's as ``GROUP SUB`` (``trust add``)."""
    root = typer.main.get_command(build_app()[0])
    context = root.make_context("nexo", [], resilient_parsing=True)
    plugin = root.get_command(context, "plugin")  # type: ignore[attr-defined]
    plugin_context = plugin.make_context("plugin", [], parent=context, resilient_parsing=True)
    names: set[str] = set()
    for name in COMMANDS:
        command = plugin.get_command(plugin_context, name)
        if hasattr(command, "list_commands"):
            names |= {f"{name} {sub}" for sub in command.list_commands(plugin_context)}
        else:
            names.add(name)
    return names


def test_the_readme_platform_table_names_every_command_and_what_windows_refuses() -> None:
    """README.md "Which OS runs what": every command (each `trust` and `cache` subcommand
    too) is in a row, and the one row Windows refuses is exactly the commands that refuse to
    run there (those that manage a daemon's plugin root)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("### Which OS runs what")
    table = readme[start : readme.index("\n\n", readme.index("|---", start))]
    rows = [line.strip("|").split(" | ") for line in table.splitlines() if line.startswith("| `")]
    named = [set(re.findall(r"`([a-z]+(?: [a-z]+)?)`", row[0].split("(")[0])) for row in rows]
    refused = {name for name, spec in COMMANDS.items() if spec.plugin_root}
    assert [names for names, row in zip(named, rows, strict=True) if "refused" in row[-1]] == [
        refused
    ]
    assert sorted(_command_names() - set().union(*named)) == []


# The commands that may ask before they change something (a terminal, no --yes).
ASKING = {"install", "upgrade", "remove", "trust add", "trust remove"}


def test_yes_is_on_every_command_the_page_lists_and_its_help_says_whether_it_asks() -> None:
    """docs/cli.md: `--yes` is taken by every command that changes state, "whether it asks or
    not". Each one's help says which: skipping a question, or accepted though nothing is
    asked (not "Do not ask for confirmation" on a command that never asks)."""
    habits = section("One set of habits")
    listed = set(re.findall(r"`([a-z]+(?: [a-z]+)?)`", habits.split("A\n  script")[0]))
    assert listed >= ASKING
    for command in sorted(listed):
        text = " ".join(help_of("plugin", *command.split()).split())
        assert "-y, --yes" in text, command
        says = text.split("-y, --yes ", 1)[1]
        if command in ASKING:
            assert says.startswith("Do not ask for confirmation."), command
        else:
            assert says.startswith("Accepted for scripts"), command
            assert "this one asks nothing" in says, command
    with_yes = {
        name for name in _command_names() if "-y, --yes" in help_of("plugin", *name.split())
    }
    assert with_yes == listed
