"""Quick fixes: applying each one makes its finding go away and leaves valid TOML; a fix is
offered only where the text still holds the name its finding reported."""

from __future__ import annotations

import tomllib

import pytest

from nexo_pkg.core.diagnostics import Diagnostic
from nexo_pkg.lint.engine import lint_source
from nexo_pkg.lint.fixes import TextFix as Fix
from nexo_pkg.lsp.code_actions import fixes_for, titled
from nexo_pkg.lsp.positions import LineIndex

HEAD = """\
[plugin]
id = "demo"
version = "0.1.0"
name = "Demo"
description = "A demo plugin."
min_nexo_version = ">=0.1.0"
"""


def _published(text: str, diagnostic: Diagnostic) -> tuple[int, int]:
    """The offsets of the finding's range, as the server publishes it."""
    index = LineIndex(text)
    start, end = diagnostic.span.start, diagnostic.span.end
    return index.offset(start.line - 1, start.column - 1), index.offset(
        end.line - 1, end.column - 1
    )


def _fixes(
    text: str,
    diagnostic: Diagnostic,
    *,
    subject: str | None = None,
    at: tuple[int, int] | None = None,
) -> list[Fix]:
    """The fixes offered for ``diagnostic`` at ``at`` (default: its published range)."""
    assert diagnostic.fix is not None
    return fixes_for(
        text,
        *(at or _published(text, diagnostic)),
        code=diagnostic.code,
        name=diagnostic.name,
        help_text=diagnostic.help,
        subject=diagnostic.fix.subject if subject is None else subject,
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
    assert fix.applicability == "unsafe"
    assert titled(fix, diagnostic.code, diagnostic.name) == (
        "Rename tool to `demo_other_tool` (unsafe: the plugin's code must answer to the new "
        "name too)"
    )
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
    assert (
        fixes_for(text, 0, 5, code="NX999", name="", help_text="rename it to `x`", subject="plugi")
        == []
    )
    at = (text.index('"other'), text.index('"]') + 1)
    # The code alone is enough when the client drops the rule name ...
    assert fixes_for(
        text, *at, code="NX113", name="", help_text=diagnostic.help, subject="other_tool"
    )
    # ... but not the reported name: without it, or with another, nothing is offered.
    for subject in ("", "other", "other_tool2"):
        assert (
            fixes_for(text, *at, code="NX113", name="", help_text=diagnostic.help, subject=subject)
            == []
        )


def _byte_column_range(text: str, diagnostic: Diagnostic) -> tuple[int, int]:
    """The offsets a client lands on when it sends the finding's range back in UTF-8 bytes
    where the server speaks UTF-16 (Neovim 0.7 does, in codeAction requests)."""
    index = LineIndex(text)
    line = diagnostic.span.start.line - 1
    source = text.split("\n")[line]
    start_bytes, end_bytes = (
        len(source[: position.column - 1].encode("utf-8"))
        for position in (diagnostic.span.start, diagnostic.span.end)
    )
    return index.offset(line, start_bytes), index.offset(line, end_bytes)


def test_a_range_in_other_units_gets_no_fix_never_broken_toml() -> None:
    """`tools = ["demo_中中中", "hello", "ab"]`: the byte columns of `"hello"` land on other
    text; the rename once wrote `["demo_中中中", "hello"demo_hello"]` there."""
    text = HEAD + '\n[plugin.extends]\ntools = ["demo_中中中", "hello", "ab"]\n'
    for diagnostic in lint_source(text).diagnostics:
        if diagnostic.name != "tool-namespace-violation":
            continue
        assert diagnostic.fix is not None
        in_bytes = _byte_column_range(text, diagnostic)
        assert in_bytes != _published(text, diagnostic)
        offered = _fixes(text, diagnostic, at=in_bytes)
        assert offered == []
        # At the range the server published, the same fix applies and the result parses.
        [fix] = _fixes(text, diagnostic)
        tomllib.loads(_apply(text, fix))


def test_a_reserved_variable_is_checked_by_its_name_too() -> None:
    text = HEAD + '\n[plugin.entrypoint]\ncommand = "./run"\nenv = { NEXO_A = "1", NEXO_B = "2" }\n'
    first, second = [
        d for d in lint_source(text).diagnostics if d.name == "reserved-entrypoint-env"
    ]
    assert second.fix is not None
    # The range of NEXO_A with the name NEXO_B (a stale diagnostic): nothing.
    assert _fixes(text, first, subject=second.fix.subject) == []
    # A quoted key names the same variable.
    quoted = text.replace("NEXO_A =", '"NEXO_A" =')
    diagnostic = next(d for d in lint_source(quoted).diagnostics if d.key_path.endswith("NEXO_A"))
    assert diagnostic.fix is not None
    assert diagnostic.fix.subject == "NEXO_A"
    assert [fix.title for fix in _fixes(quoted, diagnostic)] == [
        "Rename `NEXO_A` to `DEMO_A`",
        "Remove `NEXO_A`",
    ]


def test_a_rename_that_would_not_parse_is_not_offered() -> None:
    """Renaming `NEXO_TOKEN` to `DEMO_TOKEN` beside an existing `DEMO_TOKEN` would define the
    key twice: only the removal is offered."""
    text = (
        HEAD
        + '\n[plugin.entrypoint]\ncommand = "./run"\n'
        + 'env = { DEMO_TOKEN = "a", NEXO_TOKEN = "b" }\n'
    )
    diagnostic = _only(text, "reserved-entrypoint-env")
    assert diagnostic.fix is None  # lint --fix has nothing to apply either
    found = fixes_for(
        text,
        text.index("NEXO_TOKEN"),
        text.index("NEXO_TOKEN") + len("NEXO_TOKEN"),
        code=diagnostic.code,
        name=diagnostic.name,
        help_text=diagnostic.help,
        subject="NEXO_TOKEN",
    )
    assert [fix.title for fix in found] == ["Remove `NEXO_TOKEN`"]
    tomllib.loads(_apply(text, found[0]))
