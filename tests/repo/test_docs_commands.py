"""Every ``nexo …`` command line in a code block of README.md and docs/ is one the CLI takes.

An example line (``nexo plugin install dist/weather-0.1.0-noarch.tar.gz --yes``) is parsed by
the real command tree as a run would parse it: the command exists, every option exists and
gets the values it needs, the arguments fit. A synopsis (``nexo plugin list [--include-orphan]
[--json]``, with its continuation lines) names an existing command and only options it has.
The examples that need neither network nor an installed plugin are run, and must succeed.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import typer
from support.cli import clean_env, nexo
from typer import _click as click
from typer.core import TyperGroup

from nexo_pkg.cli.app import build_app
from nexo_pkg.core.output import OUTPUT

REPO = Path(__file__).resolve().parents[2]
# The README every scaffolded project starts with is documentation too.
TEMPLATES = sorted((REPO / "nexo_pkg" / "scaffold" / "templates").glob("*/README.md"))
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *TEMPLATES]
SHELL_OPERATORS = {"|", "||", "&&", ";", ">", ">>", "<", "2>", "2>&1"}
# Options whose callback acts at parse time on the machine (writes a completion script).
ACTING_AT_PARSE = ("--install-completion",)
# Commands an example may be run with here: offline, reading nothing installed.
RUNNABLE = {
    ("--version",),
    ("-V",),
    ("plugin", "--help"),
    ("plugin", "rule"),
    ("plugin", "lint", "--explain"),
    ("plugin", "schema"),
    ("plugin", "cache", "dir"),
    ("help",),
}


@dataclass(frozen=True)
class CommandLine:
    page: str
    text: str
    synopsis: bool


def _blocks(text: str) -> list[str]:
    return re.findall(r"^ *```[a-z]*\n(.*?)^ *```", text, re.MULTILINE | re.DOTALL)


# What stands before a command on its line: a comment mark (an example commented out), a
# ``$ `` prompt, a workflow's ``- run:``, a Dockerfile's ``RUN`` with its flags, and
# environment assignments (``SOURCE_DATE_EPOCH=0 nexo plugin sync …``).
PREFIX = re.compile(r"^\s*(?:#\s*)?(?:\$ |- run: |RUN (?:--\S+ )*)?(?:[A-Z_][A-Z0-9_]*=\S* )*")


def _joined(block: str) -> list[str]:
    """The lines of ``block``, each ending in `` \\`` joined with the next, as a shell reads
    them."""
    lines: list[str] = []
    pending = ""
    for raw in block.splitlines():
        if raw.endswith(" \\"):
            pending += raw[:-2] + " " if not pending else raw[:-2].strip() + " "
            continue
        lines.append(pending + raw.strip() if pending else raw)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def command_lines() -> list[CommandLine]:
    """Every ``nexo`` line of every code block (prompts, ``- run:``, ``RUN``, environment
    assignments and a comment mark stripped; backslash continuations joined), with the
    indented ``[...]`` lines that continue a synopsis."""
    found: list[CommandLine] = []
    for page in PAGES:
        for block in _blocks(page.read_text(encoding="utf-8")):
            current: CommandLine | None = None
            for raw in _joined(block):
                line = PREFIX.sub("", raw).strip()
                if current is not None and raw.startswith((" ", "\t")) and line.startswith("["):
                    current = replace(current, text=f"{current.text} {line}")
                    continue
                if current is not None:
                    found.append(current)
                    current = None
                if line == "nexo" or line.startswith("nexo "):
                    synopsis = bool(re.search(r"\[|\]|\s\|\s|\.\.\.", line.split("#")[0]))
                    current = CommandLine(page.relative_to(REPO).as_posix(), line, synopsis)
            if current is not None:
                found.append(current)
    return found


LINES = command_lines()


def _words(line: CommandLine) -> list[str]:
    """The arguments after ``nexo``, up to the first shell operator, comments dropped."""
    words = shlex.split(line.text, comments=True)[1:]
    cut = next((i for i, word in enumerate(words) if word in SHELL_OPERATORS), len(words))
    return words[:cut]


def _resolve(words: list[str]) -> tuple[click.Command, list[str], list[str]]:
    """The command ``words`` name, its path of names, and the words left for it."""
    command: click.Command = typer.main.get_command(build_app()[0])
    path: list[str] = []
    rest = list(words)
    context: click.Context | None = None
    while isinstance(command, TyperGroup) and rest and not rest[0].startswith("-"):
        context = command.make_context(path[-1] if path else "nexo", [], parent=context,
                                       resilient_parsing=True)  # fmt: skip
        found = command.get_command(context, rest[0])
        assert found is not None, f"no command {' '.join([*path, rest[0]])!r}"
        path.append(rest.pop(0))
        command = found
    return command, path, rest


def _option_names(command: click.Command) -> set[str]:
    return {name for param in command.params for name in (*param.opts, *param.secondary_opts)}


@pytest.fixture(autouse=True)
def _restore_output() -> Any:
    """Parsing runs the shared options' callbacks (``-q``, ``--color``): undo them."""
    saved = (OUTPUT.quiet, OUTPUT.verbose, OUTPUT.color)
    yield
    OUTPUT.quiet, OUTPUT.verbose, OUTPUT.color = saved


def test_the_docs_have_command_lines_of_both_kinds() -> None:
    pages = {Path(line.page).name for line in LINES}
    assert {"README.md", "cli.md", "install.md", "fleet.md", "trust.md", "lint.md"} <= pages
    assert len(TEMPLATES) == 2
    templates = {page.relative_to(REPO).as_posix() for page in TEMPLATES}
    assert templates <= {line.page for line in LINES}
    assert sum(line.synopsis for line in LINES) >= 10
    assert sum(not line.synopsis for line in LINES) >= 30
    # A command after environment assignments, continued over lines, in a Dockerfile; and
    # one commented out in a workflow: examples too.
    fleet = [line.text for line in LINES if line.page == "docs/fleet.md"]
    assert any(
        text.startswith("nexo plugin sync --frozen") and "--require-signature" in text
        for text in fleet
    )
    upgrading = "nexo plugin lock --upgrade --trusted-keys trusted_keys.toml --require-signature"
    assert upgrading in fleet


@pytest.mark.parametrize(
    "line", [line for line in LINES if line.synopsis], ids=lambda line: line.text[:60]
)
def test_every_synopsis_names_a_command_and_its_options(line: CommandLine) -> None:
    text = line.text.split("#")[0]
    words = [word for word in re.split(r"[\s\[\]|]+", text) if word][1:]
    leading = []
    for word in words:
        if word.startswith("-") or not word.islower() or "/" in word or "." in word:
            break
        leading.append(word)
    command, path, _ = _resolve(leading)
    known = _option_names(command)
    named = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][a-z0-9-]*)", text))
    assert named - known == set(), f"{line.page}: {line.text!r}: {' '.join(path)}"


@pytest.mark.parametrize(
    "line", [line for line in LINES if not line.synopsis], ids=lambda line: line.text[:60]
)
def test_every_example_parses_as_the_command_line_would(line: CommandLine) -> None:
    words = _words(line)
    if any(word in ACTING_AT_PARSE for word in words):
        command, _, rest = _resolve(words)
        assert {word for word in rest if word.startswith("--")} <= _option_names(command)
        return
    command, path, rest = _resolve(words)
    try:
        command.make_context(path[-1] if path else "nexo", rest)
    except typer.Exit:
        pass  # --version, --help: they answer while parsing
    except click.exceptions.UsageError as error:
        pytest.fail(f"{line.page}: {line.text!r}: {error.format_message()}")


@pytest.mark.parametrize(
    "line",
    [
        line
        for line in LINES
        if not line.synopsis and any(tuple(_words(line)[: len(key)]) == key for key in RUNNABLE)
    ],
    ids=lambda line: line.text[:60],
)
def test_the_offline_examples_run(line: CommandLine, tmp_path: Path) -> None:
    env = clean_env(HOME=str(tmp_path), NEXO_HOME=str(tmp_path / "nexo"))
    env.pop("NEXO_CONFIG_DIR", None)
    done = nexo(*_words(line), env=env, cwd=tmp_path, in_process=True)
    assert done.code == 0, f"{line.page}: {line.text!r}: {done.stderr}"
    assert done.stdout


# Options every command has, which no synopsis repeats.
SHARED_OPTIONS = {"--help", "--quiet", "--verbose", "--color"}


def test_the_cache_synopses_of_the_fleet_page_name_every_option() -> None:
    """docs/fleet.md gives the ``cache`` subcommands' synopses in its prose
    (`` `clean [-y] [--json]` ``): each names every option its command takes (one spelling of
    each), so none is left for the reader to find in --help."""
    text = (REPO / "docs" / "fleet.md").read_text(encoding="utf-8")
    found = dict(
        re.findall(r"`(?:nexo plugin cache )?(dir|size|clean|prune) ((?:\[[^\]`]+\] ?)+)`", text)
    )
    assert set(found) == {"dir", "size", "clean", "prune"}, found
    for name, synopsis in found.items():
        command, _, _ = _resolve(["plugin", "cache", name])
        named = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][a-z0-9-]*)", synopsis))
        wanted = [
            set(param.opts) | set(param.secondary_opts)
            for param in command.params
            if param.param_type_name == "option" and not set(param.opts) & SHARED_OPTIONS
        ]
        missing = [sorted(each) for each in wanted if not each & named]
        assert missing == [], f"cache {name} {synopsis}"
        assert named <= _option_names(command), f"cache {name} {synopsis}"
