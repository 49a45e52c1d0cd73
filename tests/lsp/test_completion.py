"""Completion candidates and hover text, in process, over the small test schema."""

from __future__ import annotations

from pathlib import Path

from support.shared_fixtures import shared_files, skip_unless_present

from nexo_pkg.lint.engine import lint_source
from nexo_pkg.lsp.completion import complete_at
from nexo_pkg.lsp.hover import hover_at
from nexo_pkg.lsp.schema_nav import SchemaNavigator, packaged_navigator

from .test_code_actions import HEAD
from .test_schema_nav import SCHEMA

NAVIGATOR = SchemaNavigator(SCHEMA)


def _labels(text: str, marker: str) -> list[str]:
    """Labels offered with the cursor just after the last ``marker``."""
    offset = text.rindex(marker) + len(marker)
    return [candidate.label for candidate in complete_at(NAVIGATOR, text, offset)]


def test_keys_of_the_current_table_minus_those_present() -> None:
    text = "[plugin.sandbox]\nenabled = true\n\n"
    assert _labels(text, "true\n") == ["network"]


def test_keys_after_a_dotted_prefix() -> None:
    text = "[plugin]\nsandbox.\n"
    assert _labels(text, "sandbox.") == ["enabled", "network"]


def test_key_being_typed_is_not_counted_as_present() -> None:
    text = "[plugin.sandbox]\nnetwork\n"
    candidates = complete_at(NAVIGATOR, text, text.index("network") + 3)
    assert [c.label for c in candidates] == ["enabled", "network"]
    network = candidates[1]
    assert text[network.replace[0] : network.replace[1]] == "network"
    assert network.insert == "network = "
    assert "Allowed values" in network.documentation


def test_enum_values_outside_and_inside_a_string() -> None:
    bare = "[plugin.sandbox]\nnetwork = \n"
    candidates = complete_at(NAVIGATOR, bare, bare.index("= ") + 2)
    assert [c.insert for c in candidates] == ['"deny"', '"host"']
    quoted = '[plugin.sandbox]\nnetwork = "ho"\n'
    candidates = complete_at(NAVIGATOR, quoted, quoted.index("ho") + 2)
    assert [c.insert for c in candidates] == ["deny", "host"]
    assert quoted[candidates[0].replace[0] : candidates[0].replace[1]] == "ho"


def test_booleans_for_a_boolean_key() -> None:
    text = "[plugin.sandbox]\nenabled = t\n"
    assert _labels(text, "= t") == ["true", "false"]


def test_header_offers_tables_not_yet_defined() -> None:
    text = "[plugin]\n[plugin.sandbox]\n[plugin.s\n"
    assert "plugin.channels" in _labels(text, "[plugin.s")
    assert "plugin.sandbox" not in _labels(text, "[plugin.s")
    assert "plugin.channels.register" not in _labels(text, "[plugin.s")
    array = "[[plugin.c\n"
    assert _labels(array, "[[plugin.c") == ["plugin.channels.register"]


def test_unknown_places_offer_nothing() -> None:
    assert _labels("[nope]\n\n", "]\n") == []
    assert _labels("# [plugin.\n", "# [plug") == []


def test_hover_on_key_header_and_value() -> None:
    text = '[plugin.sandbox]\nnetwork = "deny"\n'
    on_key = hover_at(NAVIGATOR, text, text.index("network") + 2)
    assert on_key is not None
    markdown, (start, end) = on_key
    assert text[start:end] == "network"
    assert "**`plugin.sandbox.network`**" in markdown
    assert "Net." in markdown
    assert 'default `"deny"`' in markdown
    on_header = hover_at(NAVIGATOR, text, text.index("sandbox") + 1)
    assert on_header is not None
    assert "Process sandbox." in on_header[0]
    on_value = hover_at(NAVIGATOR, text, text.index("deny") + 1)
    assert on_value is not None
    assert "Net." in on_value[0]
    assert hover_at(NAVIGATOR, "[plugin]\nunknown = 1\n", 12) is None
    assert hover_at(NAVIGATOR, "\n\n", 1) is None


@skip_unless_present("reference-manifests")
def test_every_prefix_of_real_manifests_is_handled() -> None:
    """Typing a manifest character by character never makes hover or completion raise."""
    from nexo_pkg.lsp.schema_nav import packaged_navigator

    navigator = packaged_navigator("nexo-plugin.schema.json") or NAVIGATOR
    here = Path(__file__).parent
    manifests = sorted((here / "fixtures").glob("*.toml")) + shared_files(
        "*plugin-python.toml", "reference-manifests"
    )
    assert len(manifests) == 2
    for manifest in manifests:
        text = manifest.read_text("utf-8")
        for end in range(len(text) + 1):
            prefix = text[:end]
            complete_at(navigator, prefix, end)
            hover_at(navigator, prefix, max(0, end - 1))


def test_equals_is_added_only_where_a_key_stands_alone() -> None:
    new_line = "[plugin.sandbox]\n\n"
    [enabled, network] = complete_at(NAVIGATOR, new_line, len(new_line) - 1)
    assert (enabled.insert, network.insert) == ("enabled = ", "network = ")
    existing = '[plugin.sandbox]\nnetwork = "deny"\n'
    candidates = complete_at(NAVIGATOR, existing, existing.index("work"))
    assert {c.insert for c in candidates} == {"enabled", "network"}
    dotted = "[plugin]\nsandbox.enabled = true\n"
    tables = complete_at(NAVIGATOR, dotted, dotted.index("box"))
    assert "sandbox" in {c.insert for c in tables}
    assert {c.kind for c in tables if c.label == "sandbox"} == {"table"}


def test_enum_values_inside_an_array() -> None:
    navigator = SchemaNavigator(
        {"properties": {"kinds": {"type": "array", "items": {"enum": ["tools", "hooks"]}}}}
    )
    text = 'kinds = ["tools", "'
    assert [c.insert for c in complete_at(navigator, text, len(text))] == ["tools", "hooks"]
    bare = "kinds = ["
    assert [c.insert for c in complete_at(navigator, bare, len(bare))] == ['"tools"', '"hooks"']


MANIFEST_NAVIGATOR = packaged_navigator("nexo-plugin.schema.json")
CURSOR = "@@"


def _tables_offered(text: str) -> list[str]:
    """Tables offered for an empty header where ``CURSOR`` stands."""
    assert MANIFEST_NAVIGATOR is not None
    offset = text.index(CURSOR)
    document = text.replace(CURSOR, "", 1)
    return [c.label for c in complete_at(MANIFEST_NAVIGATOR, document, offset)]


def _problems_once_added(text: str, table: str) -> set[str]:
    """The structure codes a header for ``table`` at the cursor gives the manifest."""
    added = text.replace(CURSOR, table, 1)
    codes = {d.code for d in lint_source(added, path="plugin.toml").diagnostics}
    return codes & {"NX001", "NX002", "NX012"}


SHAPES = {
    "inline sandbox": HEAD + "sandbox = { enabled = false }\n\n[" + CURSOR + "]\n",
    "dotted sandbox": HEAD + "sandbox.enabled = false\n\n[" + CURSOR + "]\n",
    "no array yet": HEAD + "\n[" + CURSOR + "]\n",
    "array above": HEAD + '\n[[plugin.admin_ui.screens]]\nid = "a"\n\n[' + CURSOR + "]\n",
    "array header, array above": HEAD
    + '\n[[plugin.admin_ui.screens]]\nid = "a"\n\n[['
    + CURSOR
    + "]]\n",
    "inline entrypoint": HEAD + 'entrypoint = { command = "./run" }\n\n[' + CURSOR + "]\n",
}


def test_table_completion_offers_only_what_can_be_added() -> None:
    """`[plugin.sandbox]` where `sandbox = {…}` (or `sandbox.x = …`) already defines it is
    NX002; a table inside an array of tables without its `[[…]]` above is NX012."""
    inline = _tables_offered(SHAPES["inline sandbox"])
    assert "plugin.sandbox" not in inline
    assert "plugin.entrypoint" in inline
    assert "plugin.sandbox" not in _tables_offered(SHAPES["dotted sandbox"])
    fresh = _tables_offered(SHAPES["no array yet"])
    assert "plugin.sandbox" in fresh
    assert not [table for table in fresh if table.startswith("plugin.admin_ui.screens.")]
    assert "plugin.admin_ui.screens.title" in _tables_offered(SHAPES["array above"])
    assert "plugin.admin_ui.screens.fields" in _tables_offered(SHAPES["array header, array above"])
    entrypoint = _tables_offered(SHAPES["inline entrypoint"])
    assert "plugin.entrypoint" not in entrypoint
    assert "plugin.entrypoint.env" not in entrypoint


def test_every_table_offered_keeps_the_manifest_well_formed() -> None:
    for name, text in SHAPES.items():
        offered = _tables_offered(text)
        assert offered, name
        broken = {table: codes for table in offered if (codes := _problems_once_added(text, table))}
        assert broken == {}, name
