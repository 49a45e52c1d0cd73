"""The language server end to end: a real ``python -m nexo_pkg plugin lsp`` subprocess, driven
over its stdin/stdout by pygls's language client."""

from __future__ import annotations

import asyncio
import importlib
import json
import tomllib
from collections.abc import Callable, Coroutine
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from nexo_pkg.core.diagnostics import Diagnostic
from nexo_pkg.lint.engine import lint_bytes

from .client import LspSession
from .conftest import SharedServer

GOOD = """\
[plugin]
id = "demo"
version = "0.1.0"
name = "Demo"
description = "A demo plugin."
min_nexo_version = ">=0.1.0"

[plugin.sandbox]
enabled = true
network = "deny"
"""

# The fault (the stray `x`) follows two emoji on the same line: each is one code point but two
# UTF-16 code units, so its LSP column is 2 more than its code-point column.
SYNTAX_ERROR = GOOD.replace('name = "Demo"', 'name = "🙂🙂 Demo" x')


def run(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(scenario())


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _expected_range(text: str, diagnostic: Diagnostic) -> types.Range:
    """The LSP range of an engine span, computed independently of the server's code."""
    lines = text.split("\n")

    def position(line: int, column: int) -> types.Position:
        line_index = min(line - 1, len(lines) - 1)
        source = lines[line_index]
        return types.Position(line_index, _utf16(source[: column - 1]))

    return types.Range(
        position(diagnostic.span.start.line, diagnostic.span.start.column),
        position(diagnostic.span.end.line, diagnostic.span.end.column),
    )


def _assert_same_as_engine(text: str, published: types.PublishDiagnosticsParams) -> None:
    # As `nexo plugin lint` reads the same text from a file (a NUL is the binary finding).
    engine = lint_bytes(text.encode("utf-8"), path="nexo-plugin.toml").diagnostics
    assert len(published.diagnostics) == len(engine)
    for sent, found in zip(published.diagnostics, engine, strict=True):
        assert sent.code == found.code
        assert sent.message == found.message
        assert sent.source == "nexo"
        expected_severity = (
            types.DiagnosticSeverity.Error
            if found.severity == "error"
            else types.DiagnosticSeverity.Warning
        )
        assert sent.severity == expected_severity
        assert sent.range == _expected_range(text, found)
        if found.url:
            assert sent.code_description is not None
            assert sent.code_description.href == found.url


def test_initialize_advertises_what_the_server_does(shared_server: SharedServer) -> None:
    async def scenario(session: LspSession) -> None:
        assert session.initialize_result is not None
        capabilities = session.initialize_result.capabilities
        assert capabilities.position_encoding == types.PositionEncodingKind.Utf16
        assert capabilities.hover_provider
        assert capabilities.completion_provider is not None
        assert "[" in (capabilities.completion_provider.trigger_characters or [])
        assert isinstance(capabilities.code_action_provider, types.CodeActionOptions)
        kinds = capabilities.code_action_provider.code_action_kinds
        assert list(kinds or []) == [types.CodeActionKind.QuickFix]
        sync = capabilities.text_document_sync
        assert isinstance(sync, types.TextDocumentSyncOptions)
        assert sync.change == types.TextDocumentSyncKind.Full
        assert sync.open_close

    shared_server.run(scenario)


def test_syntax_error_after_emoji_then_fixed(shared_server: SharedServer, tmp_path: Path) -> None:
    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / "nexo-plugin.toml", SYNTAX_ERROR)
        published = await session.diagnostics(uri, version=1)
        _assert_same_as_engine(SYNTAX_ERROR, published)
        [syntax] = [d for d in published.diagnostics if d.code == "NX001"]
        line = SYNTAX_ERROR.split("\n").index('name = "🙂🙂 Demo" x')
        assert syntax.severity == types.DiagnosticSeverity.Error
        assert syntax.range.start == types.Position(line, len('name = "🙂🙂 Demo" ') + 2)
        assert syntax.message.startswith("TOML syntax error")

        version = session.change(uri, GOOD)
        fixed = await session.diagnostics(uri, version=version)
        assert len(fixed.diagnostics) == 0

    shared_server.run(scenario)


# An invalid JSON schema whose fault (`}` where a value goes) is on a later line of a multi-line
# literal string, after a tab and two emoji: 17 code points before it, 19 UTF-16 code units.
JSON_FAULT = GOOD + "\n[plugin.config_schema]\nschema = '''\n{\n\t\"t\": \"🙂🙂\", \"x\": }\n'''\n"


def test_a_json_fault_on_a_later_line_is_placed_in_utf16_units(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / "nexo-plugin.toml", JSON_FAULT)
        published = await session.diagnostics(uri, version=1)
        _assert_same_as_engine(JSON_FAULT, published)
        [fault] = [d for d in published.diagnostics if d.code == "NX117"]
        line = JSON_FAULT.split("\n").index('\t"t": "🙂🙂", "x": }')
        assert fault.range == types.Range(types.Position(line, 19), types.Position(line, 20))
        # The message says where as `nexo plugin lint` does: 1-based, in characters.
        assert fault.message.endswith(f"at line {line + 1}, column 18")

    shared_server.run(scenario)


RULES = (
    GOOD.replace('network = "deny"', 'network = "internet"')
    + """
[plugin.entrypoint]
command = "./run"
env = { GREETING = "héllo 🙂", NEXO_TOKEN = "x" }

[plugin.extends]
tools = ["demo_🙂", "demo_ok", "other_tool"]
"""
)


def test_schema_and_rule_findings_match_the_engine(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / "nexo-plugin.toml", RULES)
        published = await session.diagnostics(uri, version=1)
        _assert_same_as_engine(RULES, published)
        found = {(d.code, d.range.start.line): d for d in published.diagnostics}
        lines = RULES.split("\n")
        env_line = lines.index('env = { GREETING = "héllo 🙂", NEXO_TOKEN = "x" }')
        tools_line = lines.index('tools = ["demo_🙂", "demo_ok", "other_tool"]')
        # Written out by hand: `NEXO_TOKEN` starts at code point 30 of its line, after one
        # emoji, so at UTF-16 unit 31; `"other_tool"` starts at code point 30, unit 31.
        reserved = found["NX106", env_line]
        assert reserved.range == types.Range(
            types.Position(env_line, 31), types.Position(env_line, 41)
        )
        assert reserved.severity == types.DiagnosticSeverity.Error
        assert "NEXO_" in reserved.message
        namespace = found["NX113", tools_line]
        assert namespace.range == types.Range(
            types.Position(tools_line, 31), types.Position(tools_line, 43)
        )
        assert "other_tool" in namespace.message
        assert namespace.code_description is not None
        assert namespace.code_description.href.endswith("#nx113-tool-namespace-violation")
        network = lines.index('network = "internet"')
        enum = found["NX013", network]
        assert enum.range.start == types.Position(network, len("network = "))
        assert enum.source == "nexo"

        version = session.change(uri, GOOD)
        fixed = await session.diagnostics(uri, version=version)
        assert len(fixed.diagnostics) == 0

    shared_server.run(scenario)


def _apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 positions) the way a client does, last edit first."""
    lines = text.split("\n")

    def offset(position: types.Position) -> int:
        line = lines[position.line]
        units = 0
        for column, char in enumerate(line):
            if units >= position.character:
                return sum(len(item) + 1 for item in lines[: position.line]) + column
            units += _utf16(char)
        return sum(len(item) + 1 for item in lines[: position.line]) + len(line)

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))[::-1]:
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def test_quick_fixes_repair_findings_after_emoji(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / "nexo-plugin.toml", RULES)
        published = await session.diagnostics(uri, version=1)
        actions = await session.code_actions(uri, published.diagnostics)
        titles = [action.title for action in actions]
        # Every one of them changes what the plugin does, and says so; none is preferred, so
        # no editor applies one unasked.
        rename_tool = (
            "Rename tool to `demo_other_tool` (unsafe: the plugin's code must answer to the "
            "new name too)"
        )
        unsafe_variable = "(unsafe: the plugin's code must read the new name too)"
        # A removal leaves no new name to read: it says what it asks of the code instead.
        remove = "Remove `NEXO_TOKEN` (unsafe: the plugin's code must do without it)"
        assert sorted(titles) == sorted(
            [rename_tool, f"Rename `NEXO_TOKEN` to `DEMO_TOKEN` {unsafe_variable}", remove]
        )
        assert {action.is_preferred for action in actions} == {None}
        text = RULES
        for title in (rename_tool, remove):
            action = actions[titles.index(title)]
            assert action.kind == types.CodeActionKind.QuickFix
            assert action.edit is not None
            assert action.edit.changes is not None
            text = _apply_edits(text, list(action.edit.changes[uri]))
        assert 'env = { GREETING = "héllo 🙂" }' in text
        assert '"demo_other_tool"' in text
        version = session.change(uri, text)
        after = await session.diagnostics(uri, version=version)
        assert {d.code for d in after.diagnostics} == {"NX013", "NX110"}

    shared_server.run(scenario)


def _in_bytes(text: str, position: types.Position) -> types.Position:
    """``position`` (UTF-16, as published) with its character counted in UTF-8 bytes, as
    Neovim 0.7 sends diagnostics back in ``codeAction`` requests."""
    line = text.split("\n")[position.line]
    prefix = line.encode("utf-16-le")[: position.character * 2].decode("utf-16-le")
    return types.Position(position.line, len(prefix.encode("utf-8")))


def _changed(diagnostic: types.Diagnostic, **changes: Any) -> types.Diagnostic:
    """``diagnostic`` as a client might send it back, with ``changes``."""
    fields = {
        "range": diagnostic.range,
        "message": diagnostic.message,
        "severity": diagnostic.severity,
        "code": diagnostic.code,
        "source": diagnostic.source,
        "data": diagnostic.data,
    }
    return types.Diagnostic(**{**fields, **changes})


WIDE = GOOD + '\n[plugin.extends]\ntools = ["demo_中中中", "hello", "ab"]\n'


def test_quick_fixes_check_the_text_they_replace(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    """A range in other units (Neovim 0.7's byte columns), a diagnostic without the name it
    reported, or one whose name is no longer at its range: no fix, never an edit of the text
    that happens to be there (which once gave `["demo_中中中", "hello"demo_hello"]`)."""

    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / "nexo-plugin.toml", WIDE)
        published = await session.diagnostics(uri, version=1)
        renames = [d for d in published.diagnostics if d.code == "NX113"]
        assert [d.data["subject"] for d in renames] == ["hello", "ab"]  # type: ignore[index]
        # As published: each rename applies, and the edited document parses.
        good = await session.code_actions(uri, renames)
        assert len(good) == 2
        for action in good:
            assert action.edit is not None
            assert action.edit.changes is not None
            tomllib.loads(_apply_edits(WIDE, list(action.edit.changes[uri])))
        in_bytes = [
            _changed(
                d,
                range=types.Range(_in_bytes(WIDE, d.range.start), _in_bytes(WIDE, d.range.end)),
            )
            for d in renames
        ]
        assert [d.range for d in in_bytes] != [d.range for d in renames]
        assert await session.code_actions(uri, in_bytes) == []
        without_data = [_changed(d, data=None) for d in renames]
        assert await session.code_actions(uri, without_data) == []
        swapped = [
            _changed(first, data=second.data)
            for first, second in zip(renames, reversed(renames), strict=True)
        ]
        assert await session.code_actions(uri, swapped) == []

    shared_server.run(scenario)


def test_a_fix_that_would_not_parse_is_not_offered(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    """Renaming `NEXO_TOKEN` beside a `DEMO_TOKEN` would define that key twice: only the
    removal is offered, and it leaves TOML that parses."""
    text = (
        GOOD
        + '\n[plugin.entrypoint]\ncommand = "./run"\nenv = { DEMO_TOKEN = "a", NEXO_TOKEN = "b" }\n'
    )

    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / "nexo-plugin.toml", text)
        published = await session.diagnostics(uri, version=1)
        reserved = [d for d in published.diagnostics if d.code == "NX106"]
        assert [d.data["subject"] for d in reserved] == ["NEXO_TOKEN"]  # type: ignore[index]
        [action] = await session.code_actions(uri, reserved)
        assert action.title.startswith("Remove `NEXO_TOKEN` (unsafe")
        assert action.edit is not None
        assert action.edit.changes is not None
        fixed = _apply_edits(text, list(action.edit.changes[uri]))
        assert tomllib.loads(fixed)["plugin"]["entrypoint"]["env"] == {"DEMO_TOKEN": "a"}

    shared_server.run(scenario)


def test_client_may_negotiate_utf8_columns(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with LspSession(position_encodings=["utf-8"]) as session:
            assert session.initialize_result is not None
            encoding = session.initialize_result.capabilities.position_encoding
            assert encoding == types.PositionEncodingKind.Utf8
            uri = session.open(tmp_path / "nexo-plugin.toml", SYNTAX_ERROR)
            published = await session.diagnostics(uri)
            [syntax] = [d for d in published.diagnostics if d.code == "NX001"]
            prefix = 'name = "🙂🙂 Demo" '
            assert syntax.range.start.character == len(prefix.encode("utf-8"))
        assert session.returncode == 0

    run(scenario)


def test_rapid_edits_lint_only_the_newest_version(tmp_path: Path) -> None:
    # A wide debounce on its own server, so a busy machine cannot make the edits look slow.
    async def scenario() -> None:
        async with LspSession("--debounce-ms", "400") as session:
            uri = session.open(tmp_path / "nexo-plugin.toml", GOOD)
            assert len((await session.diagnostics(uri, version=1)).diagnostics) == 0
            for _ in range(4):
                session.change(uri, SYNTAX_ERROR)
            last = session.change(uri, SYNTAX_ERROR + "\n")
            published = await session.diagnostics(uri)
            assert published.version == last
            assert published.diagnostics
            with pytest.raises(TimeoutError):
                await session.diagnostics(uri, timeout=0.8)
            assert [p.version for p in session.history] == [1, last]

    run(scenario)


def test_save_relints_and_close_clears(shared_server: SharedServer, tmp_path: Path) -> None:
    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / "nexo-plugin.toml", SYNTAX_ERROR)
        assert (await session.diagnostics(uri, version=1)).diagnostics
        session.save(uri)
        assert (await session.diagnostics(uri, version=1)).diagnostics
        session.close(uri)
        cleared = await session.diagnostics(uri)
        assert len(cleared.diagnostics) == 0

    shared_server.run(scenario)


def test_other_files_get_no_diagnostics(shared_server: SharedServer, tmp_path: Path) -> None:
    async def scenario(session: LspSession) -> None:
        other = session.open(tmp_path / "Cargo.toml", "[[[ not toml")
        assert await session.hover(other, 0, 1) is None
        assert await session.complete(other, 0, 1) == []
        manifest = session.open(tmp_path / "nexo-plugin.toml", SYNTAX_ERROR)
        # Lints run in order, so a publication for Cargo.toml would have come first.
        published = await session.diagnostics(uri=manifest)
        assert published.uri == manifest
        assert [p for p in session.history if p.uri == other] == []

    shared_server.run(scenario)


def _schema_description(*path: str) -> str:
    shipped = resources.files("nexo_pkg").joinpath("schemas", "nexo-plugin.schema.json")
    schema = json.loads(shipped.read_text("utf-8"))
    node = schema
    for name in path:
        node = node["properties"][name]
        while "$ref" in node:
            target = schema
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    description = node["description"]
    assert isinstance(description, str)
    return description


def test_hover_shows_the_schema_description(shared_server: SharedServer, tmp_path: Path) -> None:
    text = GOOD.replace('name = "Demo"', 'name = "D🙂mo"')

    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / "nexo-plugin.toml", text)
        lines = text.split("\n")
        network = lines.index('network = "deny"')
        hovered = await session.hover(uri, network, 3)
        assert hovered is not None
        assert isinstance(hovered.contents, types.MarkupContent)
        assert hovered.contents.kind == types.MarkupKind.Markdown
        value = hovered.contents.value
        assert "plugin.sandbox.network" in value
        assert _schema_description("plugin", "sandbox", "network") in value
        assert '`"host"`' in value
        assert hovered.range == types.Range(
            types.Position(network, 0), types.Position(network, len("network"))
        )
        # Hovering the value after an emoji on the same line (UTF-16 column).
        name = lines.index('name = "D🙂mo"')
        on_value = await session.hover(uri, name, _utf16('name = "D🙂m'))
        assert on_value is not None
        assert isinstance(on_value.contents, types.MarkupContent)
        assert _schema_description("plugin", "name") in on_value.contents.value
        header = lines.index("[plugin.sandbox]")
        on_header = await session.hover(uri, header, len("[plugin.sa"))
        assert on_header is not None
        assert isinstance(on_header.contents, types.MarkupContent)
        assert _schema_description("plugin", "sandbox") in on_header.contents.value

    shared_server.run(scenario)


def test_hover_shows_the_type_and_default_of_the_key(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    # The hover names the key's type and, where the schema has one, its default, before the
    # description: `network` is a string defaulting to "deny", `enabled` a boolean defaulting
    # to false, `id` a string with no default (so none is shown).
    text = GOOD.replace('name = "Demo"', 'name = "D🙂mo"')
    lines = text.split("\n")

    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / "nexo-plugin.toml", text)

        async def first_line(line: str, character: int) -> str:
            hovered = await session.hover(uri, lines.index(line), character)
            assert hovered is not None
            assert isinstance(hovered.contents, types.MarkupContent)
            return hovered.contents.value.split("\n\n")[0]

        assert await first_line('network = "deny"', 2) == (
            '**`plugin.sandbox.network`** · `string` · default `"deny"`'
        )
        assert await first_line('network = "deny"', len('network = "de')) == (
            '**`plugin.sandbox.network`** · `string` · default `"deny"`'
        )
        assert await first_line("enabled = true", 1) == (
            "**`plugin.sandbox.enabled`** · `boolean` · default `false`"
        )
        assert await first_line('id = "demo"', 0) == "**`plugin.id`** · `string`"

    shared_server.run(scenario)


def test_completion_of_keys_tables_and_enum_values(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    text = GOOD + "\n[plugin.s\n"

    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / "nexo-plugin.toml", text)
        lines = text.split("\n")
        blank_in_sandbox = lines.index('network = "deny"') + 1
        keys = {item.label for item in await session.complete(uri, blank_in_sandbox, 0)}
        assert {"fs_read_paths", "fs_write_paths"} <= keys
        assert not {"enabled", "network"} & keys  # already present

        fresh = "[plugin.sandbox]\n\n"
        version = session.change(uri, fresh)
        await session.diagnostics(uri, version=version)
        keys = {item.label for item in await session.complete(uri, 1, 0)}
        assert {"enabled", "network", "fs_read_paths"} <= keys

        session.change(uri, '[plugin.sandbox]\nnetwork = \nenabled = "')
        values = await session.complete(uri, 1, len("network = "))
        assert [item.label for item in values] == ['"deny"', '"host"']
        assert values[0].text_edit is not None
        assert values[0].text_edit.new_text == '"deny"'

        session.change(uri, '[plugin.sandbox]\nnetwork = "h"\n')
        inside = await session.complete(uri, 1, len('network = "h'))
        assert [item.label for item in inside] == ["deny", "host"]
        edit = inside[1].text_edit
        assert isinstance(edit, types.TextEdit)
        assert edit.new_text == "host"
        assert edit.range == types.Range(
            types.Position(1, len('network = "')), types.Position(1, len('network = "h'))
        )

        session.change(uri, "[plugin]\n[plugin.sa\n")
        tables = await session.complete(uri, 1, len("[plugin.sa"))
        labels = [item.label for item in tables]
        assert "plugin.sandbox" in labels
        assert "plugin" not in labels  # already defined
        sandbox = tables[labels.index("plugin.sandbox")]
        assert isinstance(sandbox.text_edit, types.TextEdit)
        assert sandbox.text_edit.range.start == types.Position(1, 1)

    shared_server.run(scenario)


HALF_TYPED = [
    "",
    "[",
    "[[",
    "[plugin.",
    '[plugin]\nid = "',
    "[plugin]\nsandbox.",
    "[plugin.sandbox]\nfs_read_paths = [\n",
    "[plugin.entrypoint]\nenv = { A = ",
    '\x00\ufeff[plugin]\n"""',
    "🙂" * 50 + "\n[",
]


def test_half_typed_documents_never_break_the_server(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / "nexo-plugin.toml", "")
        await session.diagnostics(uri, version=1)
        for text in HALF_TYPED:
            version = session.change(uri, text)
            published = await session.diagnostics(uri, version=version)
            _assert_same_as_engine(text, published)
            lines = text.split("\n")
            for line in range(len(lines) + 1):
                for character in (0, 1, 5, 200):
                    await session.hover(uri, line, character)
                    await session.complete(uri, line, character)
        assert session.log_messages == []

    shared_server.run(scenario)


def _policy_linter_available() -> bool:
    try:
        module = importlib.import_module("nexo_pkg.trust.policy")
    except ImportError:
        return False
    return callable(getattr(module, "lint_policy_source", None))


@pytest.mark.skipif(
    not _policy_linter_available(), reason="nexo_pkg.trust.policy.lint_policy_source absent"
)
def test_trust_policy_documents_are_linted(shared_server: SharedServer, tmp_path: Path) -> None:
    from nexo_pkg.trust.policy import lint_policy_source

    text = 'schema_version = "1.0"\ndefault = "sometimes"\n[[authors]]\nowner = "🙂"\nbogus = 1\n'

    async def scenario(session: LspSession) -> None:
        path = tmp_path / "trusted_keys.toml"
        uri = session.open(path, text)
        published = await session.diagnostics(uri, version=1)
        engine = lint_policy_source(text, path=str(path)).diagnostics
        assert engine, "this policy has unknown keys and a bad mode"
        assert [d.code for d in published.diagnostics] == [d.code for d in engine]
        assert [d.message for d in published.diagnostics] == [d.message for d in engine]
        assert [d.range for d in published.diagnostics] == [
            _expected_range(text, d) for d in engine
        ]
        hovered = await session.hover(uri, 1, 2)
        assert hovered is not None
        assert isinstance(hovered.contents, types.MarkupContent)
        assert "**`default`**" in hovered.contents.value
        modes = await session.complete(uri, 1, len('default = "so'))
        assert [item.label for item in modes] == ["ignore", "warn", "require"]
        keys = {item.label for item in await session.complete(uri, 5, 0)}
        assert {"identity_regexp", "oidc_issuer", "mode"} <= keys
        assert "owner" not in keys

    shared_server.run(scenario)


def test_diagnostics_follow_the_nearest_lint_config(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    # The editor shows what `nexo plugin lint` reports: the nearest config file above the
    # manifest applies, read afresh so an edit of it shows on the next lint.
    text = (
        '[plugin]\nid = "weather"\nversion = "0.1.0"\nname = "W"\ndescription = "d"\n'
        'min_nexo_version = ">=0.1.0"\n[plugin.entrypoint]\ncommand = "python3"\n'
        'env = { NEXO_DEBUG = "1" }\n[plugin.extends]\ntools = ["forecast"]\n'
    )
    project = tmp_path / "configured"
    project.mkdir()
    (project / ".nexo.toml").write_text('[lint]\nignore = ["NX106"]\n', encoding="utf-8")

    async def scenario(session: LspSession) -> None:
        uri = session.open(project / "plugin.toml", text)
        published = await session.diagnostics(uri, version=1)
        assert sorted(str(item.code) for item in published.diagnostics) == ["NX113"]
        plain = session.open(tmp_path / "plugin.toml", text)
        published = await session.diagnostics(plain, version=1)
        assert sorted(str(item.code) for item in published.diagnostics) == ["NX106", "NX113"]

    shared_server.run(scenario)


def test_hover_and_completion_know_the_keys_a_kind_adds(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    """The dashboard's `layout.subdir` and `auth_check.path`/`candidates` (the keys one `kind`
    adds, in the schema's `if`/`then`), as the whatsapp, email, telegram and browser plugins
    write them: hover describes them and completion offers them (both used to say nothing)."""
    text = (
        GOOD
        + '\n[plugin.dashboard.layout]\nkind = "workspace_walk"\nsubdir = "whatsapp"\n'
        + '\n[plugin.dashboard.auth_check]\nkind = "session_dir_files"\n\n'
    )

    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / "nexo-plugin.toml", text)
        lines = text.split("\n")
        subdir = await session.hover(uri, lines.index('subdir = "whatsapp"'), 2)
        assert subdir is not None
        assert isinstance(subdir.contents, types.MarkupContent)
        assert "plugin.dashboard.layout.subdir" in subdir.contents.value
        assert "Workspace subdirectory" in subdir.contents.value
        blank = len(lines) - 2
        keys = {item.label for item in await session.complete(uri, blank, 0)}
        assert {"candidates", "path"} <= keys

    shared_server.run(scenario)
