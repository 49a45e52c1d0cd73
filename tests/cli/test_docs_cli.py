"""docs/cli.md says what the commands do: its tables are checked against the real ones."""

from __future__ import annotations

import re
from pathlib import Path

from support.cli import nexo

from nexo_pkg.cli.app import COMMANDS, SHELLS

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
