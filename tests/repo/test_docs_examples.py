"""The examples of the docs are true: every ``nexo …`` command written inline in their prose
names a command and only options it has, the lint output shown is what ``nexo plugin lint``
prints, the tarball layout and ``--json`` document shown are what ``nexo plugin pack`` makes,
the example workflows pass zizmor, and every ``#:schema`` directive names a file
taplo can fetch (a raw URL of a file in this repository, or a relative path)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tarfile
from pathlib import Path

import pytest
from pack.pack_helpers import write_project
from support.cli import clean_env, nexo

from .test_docs_commands import PAGES, _option_names, _resolve
from .test_repo_checks import tool

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
RAW_PREFIX = "https://raw.githubusercontent.com/nexo-pkg/nexo-pkg/main/"


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


# The daemon's own command line, which its docs' prose names beside ours (microapps.md).
DAEMON_COMMANDS = {"ext"}
# What ends the words ``nexo`` reads: a shell operator, a continuation, a placeholder.
INLINE_END = re.compile(r"\s(?:\\?\||>|<|&&|;|\\$)")


def inline_commands() -> list[tuple[str, str]]:
    """Every `` `nexo …` `` of the prose of README.md, docs/ and the scaffold READMEs (code
    blocks left to test_docs_commands), as (page, text up to the first shell operator)."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        prose = re.sub(r"^ *```[a-z]*\n.*?^ *```", "", text, flags=re.MULTILINE | re.DOTALL)
        for command in re.findall(r"`(nexo(?: [^`]*)?)`", prose):
            found.append((page.relative_to(REPO).as_posix(), INLINE_END.split(command)[0]))
    return found


INLINE = inline_commands()


def test_the_prose_names_commands_inline() -> None:
    assert len(INLINE) > 200
    assert ("docs/cli.md", "nexo plugin list") in INLINE  # cut at `| wc -l`
    assert any(text.startswith("nexo plugin lint --stdin --stdin-filename") for _, text in INLINE)


@pytest.mark.parametrize(
    ("page", "text"), sorted(set(INLINE)), ids=[f"{p}:{t[:50]}" for p, t in sorted(set(INLINE))]
)
def test_every_inline_command_names_a_command_and_its_options(page: str, text: str) -> None:
    """`` `nexo plugin lint --fix --unsafe-fixes` ``, `` `nexo plugin schema [--kind K]` ``:
    the words up to the first option, placeholder or path are commands of the real tree, and
    every option named (``--help``/``-h`` included) is one that command takes."""
    words = [word for word in re.split(r"[\s\[\]|…]+", text) if word][1:]
    if words[:1] and words[0] in DAEMON_COMMANDS:
        return
    leading = []
    for word in words:
        if word.startswith("-") or not word.islower() or "/" in word or "." in word:
            break
        leading.append(word)
    command, path, _ = _resolve(leading)
    known = _option_names(command) | {"-h", "--help"}
    named = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][a-z0-9-]*)", text))
    assert named - known == set(), f"{page}: `{text}`: not options of {' '.join(path)!r}"


def _plain_env() -> dict[str, str]:
    """This environment with ``NO_COLOR`` and without ``FORCE_COLOR``: a plain report."""
    env = {key: value for key, value in os.environ.items() if key != "FORCE_COLOR"}
    return {**env, "NO_COLOR": "1"}


def test_the_lint_example_shows_what_lint_prints(tmp_path: Path) -> None:
    text = (DOCS / "lint.md").read_text(encoding="utf-8")
    manifest = next(block for block in _blocks(text, "toml") if "naem" in block)
    (tmp_path / "nexo-plugin.toml").write_text(manifest, encoding="utf-8")
    console = next(block for block in _blocks(text, "console") if "naem" in block)
    command, _, shown = console.partition("\n")
    assert command == "$ nexo plugin lint"
    result = nexo("plugin", "lint", env=_plain_env(), cwd=tmp_path, in_process=True)
    assert result.code == 1
    assert result.stdout == shown
    [github] = re.findall(r"^```\n(::error.*?)^```", text, re.MULTILINE | re.DOTALL)
    github_run = nexo(
        "plugin", "lint", "--format", "github", env=_plain_env(), cwd=tmp_path, in_process=True
    )
    assert github_run.stdout == github


def _layout_patterns(block: str) -> list[re.Pattern[str]]:
    """The first column of the layout rows: ``bin/<id>`` names any one file name, ``…`` and
    ``<vendored deps>`` anything below."""
    patterns = []
    for row in block.splitlines():
        name = row.split()[0]
        text = re.escape(name).replace(re.escape("…"), ".+")
        text = re.sub(r"<vendored\\ deps>", ".+", text)
        text = re.sub(r"<[a-z]+>", "[^/]+", text)
        patterns.append(re.compile(text))
    return patterns


def test_the_pack_layout_and_json_are_what_pack_makes(tmp_path: Path) -> None:
    text = (DOCS / "pack.md").read_text(encoding="utf-8")
    [layout] = re.findall(r"^```\n(nexo-plugin\.toml .*?)^```", text, re.MULTILINE | re.DOTALL)
    shown = json.loads(next(block for block in _blocks(text, "json") if '"assets"' in block))
    project = write_project(tmp_path / "demo", files={"src/helpers/util.py": "X = 1\n"})
    env = clean_env(HOME=str(tmp_path), NEXO_HOME=str(tmp_path / "nexo"))
    done = nexo("plugin", "pack", "--json", env=env, cwd=project, in_process=True)
    assert done.code == 0, done.stderr
    document = json.loads(done.stdout)
    assert list(document) == list(shown)
    assert [list(asset) for asset in document["assets"]] == [list(a) for a in shown["assets"]]
    assert [Path(a["path"]).name.replace("demo", "ID") for a in document["assets"]] == [
        Path(a["path"]).name.replace("demo", "ID") for a in shown["assets"]
    ]
    with tarfile.open(project / document["assets"][0]["path"]) as archive:
        members = [member.name for member in archive.getmembers()]
    patterns = _layout_patterns(layout)
    for member in members:
        named = any(pattern.fullmatch(member) for pattern in patterns)
        below = any(pattern.pattern.startswith(re.escape(f"{member}/")) for pattern in patterns)
        assert named or below, f"docs/pack.md's layout does not show {member}"
    assert members[-1] == "sbom.cdx.json"


def test_the_example_workflows_pass_zizmor(tmp_path: Path) -> None:
    text = (DOCS / "editors.md").read_text(encoding="utf-8")
    workflows = [block for block in _blocks(text, "yaml") if "\njobs:" in block]
    assert len(workflows) == 2
    directory = tmp_path / ".github" / "workflows"
    directory.mkdir(parents=True)
    for index, workflow in enumerate(workflows):
        (directory / f"example-{index}.yml").write_text(workflow, encoding="utf-8")
    done = subprocess.run(
        [tool("zizmor"), "--offline", "--no-progress", str(directory)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings to report" in done.stdout + done.stderr


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda path: path.name)
def test_schema_directives_name_a_file_taplo_can_fetch(page: Path) -> None:
    for target in re.findall(r"#:schema ([^\s`]+)", page.read_text(encoding="utf-8")):
        if "://" in target:
            assert target.startswith(RAW_PREFIX), target
            assert (REPO / target.removeprefix(RAW_PREFIX)).is_file(), target
        else:
            assert target.startswith("./"), target
            assert target.endswith(".json"), target
