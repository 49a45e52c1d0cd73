"""Positions as the user's editor counts them, through the real ``nexo plugin lint`` process.

SPEC §2: every diagnostic has a 1-based line and column "pointing at the offending key or value
in the file"; lines are what an editor (and LSP) counts, ended by a line feed, and columns count
code points (docs/lint.md "json"). YAML itself (libyaml, which serde_yaml reads with) also
breaks lines at NEL (U+0085), LINE SEPARATOR (U+2028) and PARAGRAPH SEPARATOR (U+2029), which a
quoted string or a comment may hold: those must not shift the reported lines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo

BREAKS = ["\u2028", "\u2029", "\x85"]


def _lint(path: Path, *args: str) -> tuple[int, list[dict[str, Any]]]:
    result = nexo("plugin", "lint", *args, "--format", "json", path.name, cwd=path.parent)
    [entry] = json.loads(result.stdout)["files"]
    return result.code, entry["diagnostics"]


def _config(tmp_path: Path, text: str) -> Path:
    (tmp_path / "extensions").mkdir()
    path = tmp_path / "config" / "extensions.yaml"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("separator", BREAKS)
def test_a_yaml_unicode_line_separator_in_a_string_does_not_shift_later_lines(
    tmp_path: Path, separator: str
) -> None:
    path = _config(tmp_path, f'extensions:\n  search_paths: ["a{separator}b"]\n  bogus: 1\n')
    code, [finding] = _lint(path)
    assert code == 1
    assert finding["code"] == "NX220"
    assert finding["range"] == {"start": {"line": 3, "column": 3}, "end": {"line": 3, "column": 8}}
    text = nexo("plugin", "lint", path.name, cwd=path.parent).stdout
    assert "extensions.yaml:3:3: NX220 " in text
    assert "3 |   bogus: 1" in text
    github = nexo("plugin", "lint", "--format", "github", path.name, cwd=path.parent).stdout
    assert ",line=3,col=3,endLine=3,endColumn=8," in github


@pytest.mark.parametrize("separator", BREAKS)
def test_a_yaml_syntax_error_after_a_unicode_line_separator_is_on_its_editor_line(
    tmp_path: Path, separator: str
) -> None:
    """libyaml ends the comment at the separator, so `more` starts a plain scalar and the
    colon after `extensions` is refused: on line 2 of the file, where the editor shows it."""
    path = _config(tmp_path, f"# note{separator}more\nextensions:\n  enabled: true\n")
    code, [finding] = _lint(path)
    assert code == 1
    assert finding["code"] == "NX222"
    assert finding["range"]["start"] == {"line": 2, "column": 11}


def test_a_yaml_mid_line_byte_order_mark_counts_as_a_column(tmp_path: Path) -> None:
    """Columns count code points, a U+FEFF inside a quoted string too."""
    path = _config(tmp_path, 'extensions: {search_paths: ["\ufeffa"], bogus: 1}\n')
    code, [finding] = _lint(path)
    assert code == 1
    assert finding["code"] == "NX220"
    assert finding["range"] == {
        "start": {"line": 1, "column": 36},
        "end": {"line": 1, "column": 41},
    }
