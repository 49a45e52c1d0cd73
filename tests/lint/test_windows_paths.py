"""A manifest written on Windows, linted as the daemon's Linux and macOS hosts will read it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support import cli

PROJECT = """\
[plugin]
id = "demo"
version = "0.1.0"
name = "Demo"
description = "The Demo nexo plugin."
min_nexo_version = ">=0.1.0"

[plugin.entrypoint]
command = {command}
"""


def _diagnostics(manifest: Path) -> list[dict[str, str]]:
    result = cli.nexo("plugin", "lint", manifest, "--format", "json", env=cli.clean_env())
    [linted] = json.loads(result.stdout)["files"]
    keys = ("code", "message", "help")
    return [{key: str(d[key]) for key in keys} for d in linted["diagnostics"]]


@pytest.mark.parametrize(
    "command",
    ["'./bin\\demo'", "'.\\bin\\demo'", "'bin\\demo'", '"bin\\\\demo"', "'.\\bin/demo'"],
)
def test_a_command_separated_by_backslashes_is_reported_with_a_fix_that_parses(
    tmp_path: Path, command: str
) -> None:
    manifest = tmp_path / "plugin.toml"
    manifest.write_text(PROJECT.format(command=command), encoding="utf-8", newline="\n")
    diagnostics = _diagnostics(manifest)
    assert [d["code"] for d in diagnostics] == ["NX108"], diagnostics
    assert "separates its path with `\\`" in diagnostics[0]["message"]
    suggested = re.fullmatch(r"write `command = (.+)`", diagnostics[0]["help"])
    assert suggested is not None, diagnostics[0]["help"]
    # The fix, pasted as offered, is TOML that lints clean and names bin/demo with a slash.
    assert suggested.group(1) == '"./bin/demo"'
    manifest.write_text(PROJECT.format(command=suggested.group(1)), encoding="utf-8")
    assert _diagnostics(manifest) == []


def test_a_fix_that_keeps_a_backslash_offers_valid_toml(tmp_path: Path) -> None:
    manifest = tmp_path / "plugin.toml"
    manifest.write_text(PROJECT.format(command="' ./bin\\x'"), encoding="utf-8")
    diagnostics = _diagnostics(manifest)
    assert [d["code"] for d in diagnostics] == ["NX108"]
    suggested = re.fullmatch(r"write `command = (.+)`", diagnostics[0]["help"])
    assert suggested is not None, diagnostics[0]["help"]
    manifest.write_text(PROJECT.format(command=suggested.group(1)), encoding="utf-8")
    after = _diagnostics(manifest)
    # It parses (no NX001) and now holds `./bin\x`, which is the backslash report.
    assert [d["code"] for d in after] == ["NX108"]
    assert "`./bin\\x` separates its path" in after[0]["message"]
