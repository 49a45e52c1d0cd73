"""``[plugin.admin_ui]``: every ``AdminUiInvalid`` reason, and the ``visible_when`` language."""

from __future__ import annotations

import tomllib

import pytest

from nexo_pkg.core.diagnostics import Diagnostic
from nexo_pkg.manifest.options import LintOptions
from nexo_pkg.manifest.rules import check_semantics
from nexo_pkg.manifest.rules_admin_ui import LUCIDE_SUBSET, label_is_empty
from nexo_pkg.manifest.rules_visible_when import VisibleWhenError, check_visible_when

from .rule_support import BASE as SHARED_BASE
from .rule_support import locate

BASE = SHARED_BASE + "[plugin.admin_ui]\n"

SCREEN = """
[[plugin.admin_ui.screens]]
id = "{id}"
title = "Main"
[[plugin.admin_ui.screens.fields]]
key = "unit"
type = "text"
label = "Unit"
"""


def run(extra: str, admin_ui: str = "") -> list[Diagnostic]:
    return check_semantics(tomllib.loads(BASE + admin_ui + extra), locate, LintOptions())


def found(extra: str, admin_ui: str = "") -> list[tuple[str, str]]:
    return [(d.code, d.key_path) for d in run(extra, admin_ui)]


def test_empty_admin_ui_is_valid() -> None:
    assert run("") == []


def test_schema_version_and_mode() -> None:
    assert found("", 'schema_version = 2\nmode = "embedded"\n') == [
        ("NX160", "plugin.admin_ui.schema_version"),
        ("NX161", "plugin.admin_ui.mode"),
    ]
    assert found("", 'schema_version = 1\nmode = "declarative"\n') == []


# --- screens -----------------------------------------------------------------------------------


def test_screen_ids() -> None:
    extra = SCREEN.format(id="main") + SCREEN.format(id="main") + SCREEN.format(id="Main_1")
    extra += SCREEN.format(id="a" * 42) + SCREEN.format(id="a" * 41)
    assert found(extra) == [
        ("NX163", "plugin.admin_ui.screens[1].id"),
        ("NX162", "plugin.admin_ui.screens[2].id"),
        ("NX162", "plugin.admin_ui.screens[3].id"),
    ]


def test_screen_title_load_refresh_and_fields() -> None:
    extra = """
[[plugin.admin_ui.screens]]
id = "main"
title = { en = " ", es = "" }
load = "weather/load"
refresh = { method = "nexo/weather", interval_seconds = 5 }
"""
    assert found(extra) == [
        ("NX164", "plugin.admin_ui.screens[0].title"),
        ("NX165", "plugin.admin_ui.screens[0].load"),
        ("NX166", "plugin.admin_ui.screens[0]"),
        ("NX165", "plugin.admin_ui.screens[0].refresh.method"),
    ]
    assert found(extra, "describe = true\n") == [
        ("NX164", "plugin.admin_ui.screens[0].title"),
        ("NX165", "plugin.admin_ui.screens[0].load"),
        ("NX165", "plugin.admin_ui.screens[0].refresh.method"),
    ]


def test_screen_with_empty_fields_array() -> None:
    extra = '[[plugin.admin_ui.screens]]\nid = "main"\ntitle = "M"\nfields = []\n'
    assert found(extra) == [("NX166", "plugin.admin_ui.screens[0].fields")]


def test_fields() -> None:
    extra = """
[[plugin.admin_ui.screens]]
id = "main"
title = "Main"
[[plugin.admin_ui.screens.fields]]
key = "unit"
type = "select"
label = ""
[[plugin.admin_ui.screens.fields]]
key = "unit"
type = "multiselect"
label = "U"
options = []
[[plugin.admin_ui.screens.fields]]
key = "-bad key"
type = "select"
label = "B"
options_source = { kind = "rpc", method = "weather/units" }
visible_when = "unit =="
[[plugin.admin_ui.screens.fields]]
key = "ok.key-1_x"
type = "select"
label = { en = "OK" }
options_source = { kind = "static" }
visible_when = "unit == 'c' || (advanced && !simple)"
"""
    assert found(extra) == [
        ("NX164", "plugin.admin_ui.screens[0].fields[0].label"),
        ("NX168", "plugin.admin_ui.screens[0].fields[0].type"),
        ("NX163", "plugin.admin_ui.screens[0].fields[1].key"),
        ("NX167", "plugin.admin_ui.screens[0].fields[2].key"),
        ("NX165", "plugin.admin_ui.screens[0].fields[2].options_source.method"),
        ("NX169", "plugin.admin_ui.screens[0].fields[2].visible_when"),
    ]
    messages = {d.code: d.message for d in run(extra)}
    assert "unexpected end of expression" in messages["NX169"]


def test_actions() -> None:
    extra = (
        SCREEN.format(id="main")
        + """
[[plugin.admin_ui.screens.actions]]
id = "go"
label = "Go"
method = "nexo/admin/weather/go"
[[plugin.admin_ui.screens.actions]]
id = "go"
label = ""
method = "weather/go"
[[plugin.admin_ui.screens.actions]]
id = "Go!"
label = "x"
method = "nexo/admin/x"
[[plugin.admin_ui.screens.actions.prompt_fields]]
key = "p"
type = "select"
label = "P"
[[plugin.admin_ui.screens.actions.prompt_fields]]
key = "p"
type = "text"
label = "P"
"""
    )
    assert found(extra) == [
        ("NX163", "plugin.admin_ui.screens[0].actions[1].id"),
        ("NX164", "plugin.admin_ui.screens[0].actions[1].label"),
        ("NX165", "plugin.admin_ui.screens[0].actions[1].method"),
        ("NX162", "plugin.admin_ui.screens[0].actions[2].id"),
        ("NX168", "plugin.admin_ui.screens[0].actions[2].prompt_fields[0].type"),
    ]


def test_action_ids_are_unique_per_screen_only() -> None:
    action = (
        '[[plugin.admin_ui.screens.actions]]\nid = "go"\nlabel = "Go"\nmethod = "nexo/admin/w/go"\n'
    )
    extra = SCREEN.format(id="a") + action + SCREEN.format(id="b") + action
    assert found(extra) == []


# --- contributions -----------------------------------------------------------------------------


def contribution(**keys: str) -> str:
    body = "\n".join(f'{key} = "{value}"' for key, value in keys.items())
    return f"[[plugin.admin_ui.contributions]]\n{body}\n"


def test_contribution_slots() -> None:
    extra = (
        contribution(id="a", label="A", slot="core.sidebar.root")
        + contribution(id="b", label="B", slot="plugin.weather.my-menu")
        + contribution(id="c", label="C", slot="plugin.other.menu")
        + contribution(id="d", label="D", slot="plugin.weather.a.b")
        + contribution(id="e", label="E", slot="sidebar")
        + contribution(id="f", label="F")
    )
    assert found(extra) == [
        ("NX171", "plugin.admin_ui.contributions[2].slot"),
        ("NX171", "plugin.admin_ui.contributions[3].slot"),
        ("NX171", "plugin.admin_ui.contributions[4].slot"),
        ("NX172", "plugin.admin_ui.contributions[5]"),
    ]


def test_contribution_ids_labels_icons_screens() -> None:
    extra = (
        SCREEN.format(id="main")
        + contribution(id="a", label="A", slot="core.sidebar.root", icon="cloud", screen="main")
        + contribution(id="a", label=" ", slot="core.sidebar.root", icon="sun", screen="nope")
        + contribution(id="A", label="x", slot="core.sidebar.root", visible_when="a &&")
    )
    assert found(extra) == [
        ("NX163", "plugin.admin_ui.contributions[1].id"),
        ("NX164", "plugin.admin_ui.contributions[1].label"),
        ("NX173", "plugin.admin_ui.contributions[1].icon"),
        ("NX174", "plugin.admin_ui.contributions[1].screen"),
        ("NX162", "plugin.admin_ui.contributions[2].id"),
        ("NX169", "plugin.admin_ui.contributions[2].visible_when"),
    ]


def test_contribution_parents() -> None:
    extra = (
        contribution(id="root", label="R", slot="core.sidebar.root")
        + contribution(id="self", label="S", parent="self")
        + contribution(id="orphan", label="O", parent="missing")
        + contribution(id="x", label="X", parent="y")
        + contribution(id="y", label="Y", parent="x")
        + contribution(id="child", label="C", parent="root", slot="ignored.when.parent")
    )
    diagnostics = run(extra)
    assert [(d.code, d.key_path) for d in diagnostics] == [
        ("NX170", "plugin.admin_ui.contributions[1].parent"),
        ("NX170", "plugin.admin_ui.contributions[2].parent"),
        ("NX170", "plugin.admin_ui.contributions[3].parent"),
        ("NX170", "plugin.admin_ui.contributions[4].parent"),
    ]
    assert "cannot be its own parent" in diagnostics[0].message
    assert "does not exist" in diagnostics[1].message
    assert "cycles" in diagnostics[2].message


def test_parent_chain_depth() -> None:
    chain = contribution(id="c0", label="L", slot="core.sidebar.root")
    for level in range(1, 7):
        chain += contribution(id=f"c{level}", label="L", parent=f"c{level - 1}")
    # c5 is five hops from c0: accepted; c6 is six hops: refused.
    assert found(chain) == [("NX170", "plugin.admin_ui.contributions[6].parent")]
    assert "deeper than 5" in run(chain)[0].message


def test_lucide_subset_has_58_names() -> None:
    assert len(LUCIDE_SUBSET) == 58
    assert {"cloud", "refresh-cw", "x", "layout"} <= LUCIDE_SUBSET


@pytest.mark.parametrize(
    ("label", "empty"),
    [
        ("", True),
        (" ", True),
        ("a", False),
        ({}, True),
        ({"en": " "}, True),
        ({"en": "", "es": "x"}, False),
    ],
)
def test_label_is_empty(label: object, empty: bool) -> None:
    assert label_is_empty(label) is empty


def test_label_of_wrong_type_is_not_judged() -> None:
    assert label_is_empty(3) is None
    assert label_is_empty({"en": 3}) is None


# --- visible_when --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expression",
    [
        "advanced",
        "!advanced",
        "mode == 'advanced'",
        'mode != "basic"',
        "count >= 3 && count < -1.5",
        "a.b.c == true || x_y == false",
        "(a || b) && (c || d)",
        "((a))",
        "1 <= 2",
        "'text'",
        "a == b && c",
        "x" * 200,
    ],
)
def test_valid_expressions(expression: str) -> None:
    check_visible_when(expression)


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("", "unexpected end of expression"),
        ("   ", "unexpected end of expression"),
        ("a &&", "unexpected end of expression"),
        ("a = b", "expected `==`"),
        ("'open", "unterminated string literal"),
        ("'a\nb'", "newline inside string literal"),
        ("a @ b", "unexpected character `@`"),
        ("a & b", "unexpected character `&`"),
        ("(a || b", "expected `)`"),
        ("a b", "unexpected trailing token at 2"),
        ("a == b == c", "unexpected trailing token at 7"),
        ("a..b == 1", "invalid variable path `a..b`"),
        ("a. == 1", "invalid variable path `a.`"),
        ("- 1", "`-` not followed by a digit"),
        ("x == 1.2.3", "invalid number `1.2.3`"),
        ("!!a", "unexpected token `!` at 1"),
        (")", "unexpected token `)` at 0"),
    ],
)
def test_syntax_errors(expression: str, reason: str) -> None:
    with pytest.raises(VisibleWhenError) as caught:
        check_visible_when(expression)
    assert str(caught.value) == f"visible_when syntax error: {reason}"


def test_length_limit_counts_bytes() -> None:
    with pytest.raises(VisibleWhenError) as caught:
        check_visible_when("x" * 201)
    assert str(caught.value) == "visible_when expression exceeds 200 chars (got 201)"
    with pytest.raises(VisibleWhenError) as caught:
        check_visible_when("a == '" + "é" * 97 + "'")
    assert "(got 201)" in str(caught.value)  # 104 characters, 201 bytes


def test_depth_limit() -> None:
    check_visible_when("a == 1 || b == 2 || c == 3 || d == 4")  # depth 5
    with pytest.raises(VisibleWhenError) as caught:
        check_visible_when("a == 1 || b == 2 || c == 3 || d == 4 || e == 5")
    assert str(caught.value) == "visible_when AST depth exceeds 5"
    check_visible_when("!(!(!(!a)))")  # depth 5
    with pytest.raises(VisibleWhenError):
        check_visible_when("!(!(!(!(!a))))")
