"""``nexo plugin lint DIR`` looks settings up once per directory, still per directory: every
manifest of a tree gets the findings it gets when it is linted alone (from the same working
directory), whether its settings come from its own directory, a directory above it, the
tree's root, a ``pyproject.toml`` that does not count, or nowhere."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cli import nexo
from support.tarballs import manifest_text

# A manifest with three findings: NX106 (a NEXO_ variable), NX108 (a relative command) and
# NX113 (a tool outside the namespace).
EXTRA = """
[plugin.extends]
tools = ["forecast"]

[plugin.entrypoint]
command = "bin/demo"
env = { NEXO_X = "1" }
"""

# directory -> the settings file written there (name, text)
SETTINGS = {
    "a": (".nexo.toml", '[lint]\nignore = ["NX113"]\n'),
    "a/b": (".nexo.toml", '[lint]\nselect = ["NX106"]\n'),
    "p": ("pyproject.toml", '[tool.nexo.lint]\nignore = ["NX106"]\n'),
    "p/q": ("pyproject.toml", '[project]\nname = "not-settings"\n'),
    "r": (".nexo.toml", '[lint.per-file-ignores]\n"s/**" = ["NX108"]\n'),
}
MANIFESTS = ["a", "a/b", "a/b/c", "a/d", "p", "p/q", "r", "r/s", "r/t", "none", "none/deep/er"]


def _findings(result_stdout: str) -> dict[str, list[str]]:
    document = json.loads(result_stdout)
    return {
        Path(entry["path"]).as_posix(): sorted(d["code"] for d in entry["diagnostics"])
        for entry in document["files"]
    }


@pytest.mark.parametrize("root_settings", [False, True], ids=["no-root-settings", "root"])
def test_a_tree_lints_as_each_file_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root_settings: bool
) -> None:
    tree = tmp_path / "tree"
    for directory in MANIFESTS:
        (tree / directory).mkdir(parents=True, exist_ok=True)
        text = manifest_text("demo", "0.1.0", extra=EXTRA)
        (tree / directory / "nexo-plugin.toml").write_text(text)
    for directory, (name, text) in SETTINGS.items():
        (tree / directory / name).write_text(text)
    if root_settings:
        (tree / ".nexo.toml").write_text('[lint]\nignore = ["NX108"]\n')
    for cwd in (tree, tree / "a"):
        monkeypatch.chdir(cwd)
        together = nexo("plugin", "lint", os.path.relpath(tree), "--format", "json")
        assert together.code == 1, together.stderr
        found = _findings(together.stdout)
        assert len(found) == len(MANIFESTS)
        for path, codes in found.items():
            alone = nexo("plugin", "lint", path, "--format", "json", in_process=True)
            assert _findings(alone.stdout) == {path: codes}, path
    monkeypatch.chdir(tree)
    found = _findings(nexo("plugin", "lint", ".", "--format", "json", in_process=True).stdout)
    rest = ["NX106", "NX108", "NX113"]
    if root_settings:
        rest = ["NX106", "NX113"]
    assert found == {
        "a/nexo-plugin.toml": ["NX106", "NX108"],
        "a/b/nexo-plugin.toml": ["NX106"],
        "a/b/c/nexo-plugin.toml": ["NX106"],
        "a/d/nexo-plugin.toml": ["NX106", "NX108"],
        "p/nexo-plugin.toml": ["NX108", "NX113"],
        "p/q/nexo-plugin.toml": ["NX108", "NX113"],
        "r/nexo-plugin.toml": ["NX106", "NX108", "NX113"],
        "r/s/nexo-plugin.toml": ["NX106", "NX113"],
        "r/t/nexo-plugin.toml": ["NX106", "NX108", "NX113"],
        "none/nexo-plugin.toml": rest,
        "none/deep/er/nexo-plugin.toml": rest,
    }
