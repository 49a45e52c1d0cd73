"""One of each thing on the command line: options, the failure renderer, the prompt, formats."""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path

import pytest
from support import cli

from nexo_pkg.cli.linting import FORMATS
from nexo_pkg.lint.reporters import REPORTERS

CLI = Path(__file__).resolve().parents[2] / "nexo_pkg" / "cli"
# Flags that mean something else on some command, declared there with their own help:
# --timeout per request, per plugin or for the whole command, pack's --target, `new`'s --dest,
# check's --dest and --config (where an installed id is looked up), the --nexo-version check
# sends or doctor checks, sync's --dry-run (a plan read from the lock and the receipts: no
# check is run).
OWN_MEANING = {"--timeout", "--target", "--dest", "--config", "--nexo-version", "--dry-run"}
OPTION = re.compile(r'typer\.Option\(\s*"(--[a-z-]+)"', re.MULTILINE)


@pytest.fixture(autouse=True)
def _plain_wide_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """No colour, and help wide enough that an option's text stays on one line."""
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "200")


# No run here needs a process of its own.
nexo = partial(cli.nexo, in_process=True)


def test_a_shared_option_is_declared_only_in_the_options_module() -> None:
    shared = set(OPTION.findall((CLI / "options.py").read_text(encoding="utf-8")))
    assert {"--trusted-keys", "--json", "--config", "--dest", "--target"} <= shared
    again = {
        f"{path.name}: {flag}"
        for path in sorted(CLI.glob("*.py"))
        if path.name != "options.py"
        for flag in OPTION.findall(path.read_text(encoding="utf-8"))
        if flag in shared and flag not in OWN_MEANING
    }
    assert again == set()


def _help_of(flag: str, *command: str) -> str:
    text = nexo("plugin", *command, "--help").stdout
    flat = re.sub(r"[\s│]+", " ", text)
    found = re.search(re.escape(flag) + r"(?: PATH)? (.*?)(?: --[a-z]|$)", flat)
    assert found, text
    return found.group(1)


def test_trusted_keys_says_the_same_on_every_command() -> None:
    helps = {
        command: _help_of("--trusted-keys", *command.split())
        for command in ("install", "sync", "lock", "trust add", "trust list", "info")
    }
    assert len(set(helps.values())) == 1, helps
    assert "trusted_keys.toml" in next(iter(helps.values()))


def test_the_lint_formats_are_the_reporter_registry() -> None:
    assert tuple(REPORTERS) == FORMATS
    assert f"[{'|'.join(REPORTERS)}]" in nexo("plugin", "lint", "--help").stdout
    refused = nexo("plugin", "lint", "--format", "yaml", "--stdin")
    assert refused.code == 2
    assert ", ".join(REPORTERS) in refused.stderr


def test_a_lint_failure_is_rendered_as_every_other_failure(tmp_path: Path) -> None:
    """The fast lint path reports through core's renderer: the line is escaped (a config path
    chosen by whoever named it cannot drive the terminal) and --verbose names the kind."""
    config = tmp_path / "config\x1b[2J"
    (tmp_path / "plugin.toml").write_text("", encoding="utf-8")
    result = nexo("--verbose", "plugin", "lint", "--config", str(config), str(tmp_path))
    assert result.code == 2
    assert "\x1b" not in result.stderr
    (line,) = [each for each in result.stderr.splitlines() if each.startswith("error: ")]
    assert "config\\u001b[2J" in line
    assert line.endswith("[config]")  # the kind of a --config naming no directory anywhere


@pytest.mark.parametrize(
    "command",
    [
        (
            "trust",
            "add",
            "acme/echo",
            "--identity",
            "https://github.com/acme/echo/.github/workflows/r.yml@refs/tags/v1",
        ),
        ("trust", "remove", "acme"),
    ],
)
def test_the_trust_prompts_are_the_shared_one(tmp_path: Path, command: tuple[str, ...]) -> None:
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text("# kept\n", encoding="utf-8")
    result = nexo("plugin", *command, "--trusted-keys", str(policy), "--json")
    assert result.code == 2
    assert json.loads(result.stdout)["kind"] == "usage"
    assert "not a terminal: pass --yes" in result.stderr
    assert policy.read_text(encoding="utf-8") == "# kept\n"


@pytest.mark.parametrize(
    "command",
    [("list", "--dest"), ("verify", "--dest"), ("pack",), ("doctor", "--no-check", "--dest")],
)
def test_a_file_name_too_long_is_a_usage_error(tmp_path: Path, command: tuple[str, ...]) -> None:
    """A path no file system takes (a name over 255 bytes) is input that cannot be used as
    given: exit 2, kind usage, one document with --json and one line on stderr; nothing
    written."""
    (tmp_path / "home").mkdir()
    env = cli.clean_env(NEXO_HOME=str(tmp_path / "home"))
    result = nexo("plugin", *command, "x" * 300, "--json", env=env, cwd=tmp_path)
    assert result.code == 2, result.stderr
    document = json.loads(result.stdout)
    assert (document["ok"], document["kind"]) == (False, "usage")
    assert "file name too long" in document["error"]
    (line,) = [each for each in result.stderr.splitlines() if each.strip()]
    assert line.startswith("error: file name too long")
    assert sorted(path.name for path in tmp_path.rglob("*")) == ["home"]
