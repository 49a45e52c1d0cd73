"""The one reader of tomllib's error position, and every TOML file kind going through it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from nexo_pkg.core.diagnostics import Position, Span
from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.toml_spans import syntax_error
from nexo_pkg.fleet.lockfile import read_lock, read_wanted
from nexo_pkg.lint.config import load_config
from nexo_pkg.trust.policy import lint_policy_source

PACKAGE = Path(__file__).resolve().parents[2] / "nexo_pkg"


def _error(text: str) -> tomllib.TOMLDecodeError:
    with pytest.raises(tomllib.TOMLDecodeError) as caught:
        tomllib.loads(text)
    return caught.value


def test_the_position_is_taken_off_the_message_and_made_a_span() -> None:
    text = 'a = 1\nb = "x\n'
    syntax = syntax_error(text, _error(text))
    assert syntax.message == "Illegal character '\\n'"
    assert syntax.span == Span(Position(2, 7), Position(2, 7))


def test_the_end_of_the_document_is_an_empty_span_after_the_last_character() -> None:
    text = "a = [1,\n  2,\n\n"
    syntax = syntax_error(text, _error(text))
    assert "end of document" not in syntax.message
    assert syntax.span == Span(Position(2, 5), Position(2, 5))


def test_a_policy_in_inline_tables_is_located_by_the_span_scanner(tmp_path: Path) -> None:
    """The policy linter points at the key inside an inline table (a line scanner could only
    point at the line where ``authors`` starts)."""
    text = 'authors = [\n  { owner = "acme", identity = "spiffe://x/ab", mode = "bogus" },\n]\n'
    result = lint_policy_source(text, path=str(tmp_path / "trusted_keys.toml"))
    (finding,) = result.diagnostics
    assert (finding.code, finding.key_path) == ("NXT004", "authors[0].mode")
    assert finding.span == Span(Position(2, 49), Position(2, 53))


def test_a_policy_syntax_error_has_its_position(tmp_path: Path) -> None:
    result = lint_policy_source("[[authors]]\nowner = \n", path=str(tmp_path / "trusted_keys.toml"))
    (finding,) = result.diagnostics
    assert finding.code == "NXT001"
    assert finding.span.start == Position(2, 9)
    assert "(at line" not in finding.message


@pytest.mark.parametrize("name", ["nexo-plugins.lock", "nexo-plugins.toml"])
def test_fleet_files_name_the_line_and_column(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("lock_version = 1\n[plugins.echo\n", encoding="utf-8")
    with pytest.raises(NexoError) as caught:
        (read_lock if name.endswith(".lock") else read_wanted)(path)
    assert caught.value.kind == ("lock_invalid" if name.endswith(".lock") else "wanted_invalid")
    assert caught.value.message.startswith(f"{path}:2:14: not valid TOML (")
    assert caught.value.details["line"] == 2


def test_the_lint_configuration_names_the_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "nexo-lint.toml"
    path.write_text("select = [\n  'NX001'\n  'NX002',\n]\n", encoding="utf-8")
    with pytest.raises(NexoError) as caught:
        load_config(path)
    assert caught.value.kind == "config_invalid"
    assert caught.value.message.endswith("(at line 3, column 3)")
    assert caught.value.details["line"] == 3


def test_no_other_reader_of_the_parser_position() -> None:
    """Only core/toml_spans.py reads ``(at line L, column C)`` out of a TOML error."""
    pattern = re.compile(r"at line \(|\\\(at line|exc\.line\b|exc\.col\b")
    found = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "toml_spans.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []
