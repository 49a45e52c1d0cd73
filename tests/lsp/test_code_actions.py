"""Quick fixes: applying each one makes its finding go away and leaves valid TOML."""

from __future__ import annotations

import tomllib

import pytest

from nexo_pkg.core.diagnostics import Diagnostic
from nexo_pkg.lint.engine import lint_source
from nexo_pkg.lsp.code_actions import Fix, fixes_for
from nexo_pkg.lsp.positions import LineIndex

HEAD = """\
[plugin]
id = "demo"
version = "0.1.0"
name = "Demo"
description = "A demo plugin."
min_nexo_version = ">=0.1.0"
"""


def _fixes(text: str, diagnostic: Diagnostic) -> list[Fix]:
    index = LineIndex(text)
    start = index.offset(diagnostic.span.start.line - 1, diagnostic.span.start.column - 1)
    end = index.offset(diagnostic.span.end.line - 1, diagnostic.span.end.column - 1)
    return fixes_for(
        text,
        start,
        end,
        code=diagnostic.code,
        name=diagnostic.name,
        help_text=diagnostic.help,
    )


def _apply(text: str, fix: Fix) -> str:
    for start, end, new_text in sorted(fix.edits, reverse=True):
        text = text[:start] + new_text + text[end:]
    return text


def _only(text: str, name: str) -> Diagnostic:
    [found] = [d for d in lint_source(text).diagnostics if d.name == name]
    return found


def test_tool_rename_keeps_the_quote_style() -> None:
    text = HEAD + '\n[plugin.extends]\ntools = ["demo_🙂", "demo_ok", \'other_tool\']\n'
    diagnostic = _only(text, "tool-namespace-violation")
    [fix] = _fixes(text, diagnostic)
    assert fix.title == "Rename tool to `demo_other_tool`"
    assert fix.preferred
    fixed = _apply(text, fix)
    assert "'demo_other_tool'" in fixed
    assert "tool-namespace-violation" not in {d.name for d in lint_source(fixed).diagnostics}


@pytest.mark.parametrize(
    ("env", "removed"),
    [
        ('env = { GREETING = "héllo 🙂", NEXO_TOKEN = "x" }', 'env = { GREETING = "héllo 🙂" }'),
        ('env = { NEXO_TOKEN = "x", GREETING = "hi" }', 'env = { GREETING = "hi" }'),
        ('env = { NEXO_TOKEN = "x" }', "env = {  }"),
    ],
)
def test_reserved_variable_in_an_inline_table(env: str, removed: str) -> None:
    text = HEAD + f'\n[plugin.entrypoint]\ncommand = "./run"\n{env}\n'
    diagnostic = _only(text, "reserved-entrypoint-env")
    rename, remove = _fixes(text, diagnostic)
    assert rename.title == "Rename `NEXO_TOKEN` to `DEMO_TOKEN`"
    assert remove.title == "Remove `NEXO_TOKEN`"
    for fix in (rename, remove):
        fixed = _apply(text, fix)
        tomllib.loads(fixed)
        assert "reserved-entrypoint-env" not in {d.name for d in lint_source(fixed).diagnostics}
    assert removed in _apply(text, remove)
    assert "DEMO_TOKEN" in _apply(text, rename)


def test_reserved_variable_in_a_table_removes_its_line() -> None:
    table = '[plugin.entrypoint.env]\nNEXO_X = "1"\nKEEP = "2"\n'
    text = HEAD + '\n[plugin.entrypoint]\ncommand = "./run"\n\n' + table
    diagnostic = _only(text, "reserved-entrypoint-env")
    remove = _fixes(text, diagnostic)[-1]
    fixed = _apply(text, remove)
    assert fixed.endswith('[plugin.entrypoint.env]\nKEEP = "2"\n')
    assert lint_source(fixed).success


def test_no_fix_when_the_text_moved_on_or_the_rule_is_unknown() -> None:
    text = HEAD + '\n[plugin.extends]\ntools = ["other_tool"]\n'
    diagnostic = _only(text, "tool-namespace-violation")
    shifted = "\n" + text  # the finding's range now points at other text
    assert _fixes(shifted, diagnostic) == []
    assert fixes_for(text, 0, 5, code="NX999", name="", help_text="rename it to `x`") == []
    # The code alone is enough when the client drops the diagnostic's data.
    assert fixes_for(
        text,
        text.index('"other'),
        text.index('"]') + 1,
        code="NX113",
        name="",
        help_text=diagnostic.help,
    )
