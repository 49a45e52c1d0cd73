"""The language server lints microapp manifests and the daemon's extensions.yaml/agents.yaml
with the same codes, lines and messages as `nexo plugin lint` (a real server subprocess)."""

from __future__ import annotations

from pathlib import Path

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
            ("agents.yaml", AGENTS, [("NX220", 2, 4)]),
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
            assert await session.hover(uri, 0, 2) is None

    shared_server.run(scenario)
