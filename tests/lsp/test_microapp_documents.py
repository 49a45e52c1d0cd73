"""The language server lints microapp manifests and the daemon's extensions.yaml/agents.yaml
with the same codes, lines and messages as `nexo plugin lint` (a real server subprocess)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from nexo_pkg.lint.engine import lint_config_source, lint_source

from .client import LspSession
from .conftest import SharedServer

MICROAPP = """\
[plugin]
id = "weather_app"
version = "0.1.0"

[capabilities]
tools = ["get-weather"]
admin = { required = ["agents_crud"] }

[transport]
kind = "stdio"
command = "python3"
"""

EXTENSIONS = """\
extensions:
  entries:
    weather_app:
      capabilities_grant: []
      timeout_secs: 30
"""

AGENTS = """\
agents:
  - id: ana
    extensions: [weather_app]
"""


def test_microapp_manifests_get_the_extension_parser_rules(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    path = tmp_path / "plugin.toml"
    engine = lint_source(MICROAPP, path=str(path)).diagnostics

    async def scenario(session: LspSession) -> None:
        uri = session.open(path, MICROAPP)
        published = await session.diagnostics(uri, version=1)
        assert [d.code for d in published.diagnostics] == ["NX206", "NX211"]
        assert [d.code for d in published.diagnostics] == [d.code for d in engine]
        assert [d.range.start.line for d in published.diagnostics] == [5, 6]

    shared_server.run(scenario)


def test_daemon_config_files_are_linted(shared_server: SharedServer, tmp_path: Path) -> None:
    config = tmp_path / "config"

    async def scenario(session: LspSession) -> None:
        for name, text, expected in (
            ("extensions.yaml", EXTENSIONS, [("NX220", 4, 6)]),
            ("agents.yaml", AGENTS + "    model: {provider: p, model: m}\n", [("NX220", 2, 4)]),
        ):
            path = config / name
            uri = session.open(path, text)
            published = await session.diagnostics(uri, version=1)
            found = [
                (d.code, d.range.start.line, d.range.start.character) for d in published.diagnostics
            ]
            assert found == expected
            engine = lint_config_source(text, path=str(path))
            assert engine is not None
            assert [d.message for d in published.diagnostics] == [
                d.message for d in engine.diagnostics
            ]

    shared_server.run(scenario)


def _markdown(hovered: types.Hover | None) -> str:
    assert hovered is not None
    assert isinstance(hovered.contents, types.MarkupContent)
    assert hovered.contents.kind == types.MarkupKind.Markdown
    return hovered.contents.value


def test_extensions_yaml_gets_hover_and_completion_from_its_schema(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    text = (
        "extensions:\n"
        "  enabled: true\n"
        "  entries:\n"
        "    weather_app:\n"
        "      capabilities_grant: []\n"
        "      allow_external_bind: \n"
        "  \n"
    )
    lines = text.split("\n")

    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / "config" / "extensions.yaml", text)
        grant = lines.index("      capabilities_grant: []")
        hovered = await session.hover(uri, grant, 8)
        assert "extensions.entries.weather_app.capabilities_grant" in _markdown(hovered)
        assert hovered is not None
        assert hovered.range == types.Range(
            types.Position(grant, 6), types.Position(grant, len("      capabilities_grant"))
        )
        # On the value: the key is described too.
        assert "extensions.enabled" in _markdown(await session.hover(uri, 1, 12))
        assert "`boolean`" in _markdown(await session.hover(uri, 1, 12))
        # Keys of `extensions` not written yet, at the indentation typed.
        blank = len(lines) - 2
        labels = [item.label for item in await session.complete(uri, blank, 2)]
        assert "search_paths" in labels
        assert "max_depth" in labels
        assert "enabled" not in labels
        assert "entries" not in labels
        # Inside an entry: its two keys, less the one written.
        bind = lines.index("      allow_external_bind: ")
        values = await session.complete(uri, bind, len(lines[bind]))
        assert [item.label for item in values] == ["true", "false"]
        # A blank line gets nothing; an entry's id is described by what `entries` holds.
        assert await session.hover(uri, blank, 2) is None
        entry = _markdown(await session.hover(uri, lines.index("    weather_app:"), 6))
        assert "extensions.entries.weather_app" in entry

    shared_server.run(scenario)


def test_agents_yaml_gets_hover_and_completion_for_the_microapp_keys(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    text = AGENTS + "    extensions_config:\n      weather_app: {}\n  - id: bo\n    \n"
    lines = text.split("\n")

    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / "config" / "agents.yaml", text)
        old = lines.index("    extensions: [weather_app]")
        described = _markdown(await session.hover(uri, old, 6))
        assert "agents.extensions" in described
        assert "NX220" in described
        assert "*Deprecated.*" in described
        config = lines.index("    extensions_config:")
        assert "NX230" in _markdown(await session.hover(uri, config, 6))
        # In the second agent, both microapp keys are offered; `id` is written already.
        blank = len(lines) - 2
        labels = [item.label for item in await session.complete(uri, blank, 4)]
        assert "extensions_config" in labels
        assert "id" not in labels

    shared_server.run(scenario)


def test_microapp_manifests_get_hover_and_completion_from_their_schema(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    """A microapp's plugin.toml is read by the extension manifest parser, so its help comes
    from `microapp-manifest.schema.json`, not from the plugin manifest's schema; a half-typed
    one (that does not parse) too."""
    lines = MICROAPP.split("\n")
    transport = lines.index("[transport]")
    kind = lines.index('kind = "stdio"')

    async def scenario(session: LspSession) -> None:
        uri = session.open(tmp_path / "plugin.toml", MICROAPP)
        await session.diagnostics(uri, version=1)
        assert "transport.kind" in _markdown(await session.hover(uri, kind, 1))
        assert '`"stdio"`' in _markdown(await session.hover(uri, kind, 1))
        assert "`transport`" in _markdown(await session.hover(uri, transport, 3))
        # A new key in [transport]: the keys of its table not written yet.
        session.edit(uri, [((kind + 2, 0), (kind + 2, 0), "\n")])
        labels = [item.label for item in await session.complete(uri, kind + 2, 0)]
        assert "args" in labels
        assert "kind" not in labels
        assert "command" not in labels
        # A half-typed header: the microapp's tables, none of a plugin manifest's.
        end = len(lines) - 1
        session.edit(uri, [((end, 0), (end, 0), "[")])
        tables = [item.label for item in await session.complete(uri, end, 1)]
        assert "meta" in tables
        assert "plugin.sandbox" not in tables
        assert "plugin.entrypoint" not in tables

    shared_server.run(scenario)


def test_hover_in_microapp_files_shows_the_description_and_default(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    """Hover in a microapp's plugin.toml and in extensions.yaml tells what a key does and its
    default, as it does in a plugin manifest (it used to show the type alone)."""
    config = tmp_path / "config"
    config.mkdir()
    yaml_text = (
        "extensions:\n  max_depth: 5\n  entries:\n    weather_app:\n"
        "      allow_external_bind: true\n"
    )

    async def scenario(session: LspSession) -> None:
        manifest = session.open(tmp_path / "plugin.toml", MICROAPP)
        await session.diagnostics(manifest, version=1)
        command = _markdown(
            await session.hover(manifest, MICROAPP.split("\n").index('command = "python3"'), 2)
        )
        assert "transport.command" in command
        assert "Program the daemon spawns" in command
        described = _markdown(await session.hover(manifest, 1, 1))
        assert "lowercase letter" in described
        extensions = session.open(config / "extensions.yaml", yaml_text)
        await session.diagnostics(extensions, version=1)
        depth = _markdown(await session.hover(extensions, 1, 3))
        assert "extensions.max_depth" in depth
        assert "default `3`" in depth
        assert "below each search path" in depth
        bind = _markdown(await session.hover(extensions, 4, 8))
        assert "default `false`" in bind
        assert "127.0.0.1" in bind

    shared_server.run(scenario)


def test_every_key_of_the_microapp_schemas_is_described() -> None:
    """Hover and taplo show a key's description: every property of the microapp manifest and
    extensions.yaml schemas has one, as every property of the plugin manifest schema does."""
    from nexo_pkg.lint.daemon_files import microapp_schemas

    undescribed: list[str] = []

    def walk(node: object, path: str) -> None:
        if isinstance(node, dict):
            for name, child in node.get("properties", {}).items():
                key = f"{path}.{name}" if path else name
                if (
                    isinstance(child, dict)
                    and "const" not in child
                    and not child.get("description")
                ):
                    undescribed.append(key)
                walk(child, key)
            for variant in node.get("oneOf", []):
                walk(variant, path)
            if isinstance(node.get("additionalProperties"), dict):
                walk(node["additionalProperties"], f"{path}.*")

    for schema in microapp_schemas().values():
        walk(schema, "")
    assert undescribed == []


@pytest.mark.parametrize("line_end", ["\r", "\r\n"], ids=["lone-cr", "crlf"])
def test_yaml_lines_end_where_lsp_ends_them(
    shared_server: SharedServer, tmp_path: Path, line_end: str
) -> None:
    """LSP ends a line at `\\n`, `\\r\\n` or a lone `\\r`, as YAML does: a file saved with
    old-Mac line ends gets its findings on their own lines, at the lines and columns `nexo
    plugin lint` reports (they used to be piled at the end of line 0), and hover finds the
    key under the cursor."""
    text = "extensions:\n  enabled: 7\n  bogus_key: 1\n".replace("\n", line_end)
    path = tmp_path / "config" / "extensions.yaml"
    engine = lint_config_source(text, path=str(path))
    assert engine is not None
    expected = [
        (d.code, (d.span.start.line - 1, d.span.start.column - 1),
         (d.span.end.line - 1, d.span.end.column - 1))
        for d in engine.diagnostics
    ]  # fmt: skip
    assert [(code, start) for code, start, _ in expected] == [("NX221", (1, 11)), ("NX220", (2, 2))]

    async def scenario(session: LspSession) -> None:
        uri = session.open(path, text)
        published = await session.diagnostics(uri, version=1)
        found = [
            (d.code, (d.range.start.line, d.range.start.character),
             (d.range.end.line, d.range.end.character))
            for d in published.diagnostics
        ]  # fmt: skip
        assert found == expected
        assert "extensions.enabled" in _markdown(await session.hover(uri, 1, 4))

    shared_server.run(scenario)
