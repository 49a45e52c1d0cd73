"""A scaffolded microapp passes `nexo plugin check --strict` at every id length `new` takes.

The model sees a microapp's tool as ``ext_<id>_<tool>`` and the daemon cuts and hashes a name
over 64 characters (``ToolDef::fit_name``, crates/llm/src/types.rs; `check` warns
``tools.names``). A microapp's tool is itself ``<id>_<name>``, so the id counts twice: `new`
shortens the example tool's name to fit, and refuses an id that leaves it no room, as it
refuses a plugin id that leaves a tool name none.
"""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path

import pytest
from support import windows_shim
from support.cli import nexo
from support.tarballs import tree_snapshot

ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
#: A pin of our own, so `new` warns nothing about where the release workflow gets nexo-pkg.
PIN = ("--nexo-pkg-spec", "nexo-pkg==0.1.0")


def _id(length: int) -> str:
    return ("m" + ALPHABET)[:length]


@pytest.mark.parametrize("length", [26, 27, 28])
def test_the_example_tool_reaches_the_model_whole(tmp_path: Path, length: int) -> None:
    plugin_id = _id(length)
    created = nexo("plugin", "new", plugin_id, "--kind", "microapp", *PIN, "-q", cwd=tmp_path)
    assert created.code == 0, created.stderr
    project = tmp_path / plugin_id
    [tool] = tomllib.loads((project / "plugin.toml").read_text("utf-8"))["capabilities"]["tools"]
    assert tool.startswith(f"{plugin_id}_")
    assert len(f"ext_{plugin_id}_{tool}") <= 64

    # The development launcher runs `python3` from PATH: make it this interpreter.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    # On Windows (or the shim's view of it) `check` warns that the bash launcher cannot run
    # there and checks the Python entry instead: the one warning expected, so not --strict.
    windows = os.name == "nt" or os.environ.get(windows_shim.ENV_FLAG) == "1"
    strict = () if windows else ("--strict",)
    checked = nexo(
        "plugin", "check", ".", *strict, "--json", "--timeout-ms", "30000",
        env={**os.environ, "PATH": path}, cwd=project,
    )  # fmt: skip
    document = json.loads(checked.stdout)
    assert checked.code == 0, checked.stdout + checked.stderr
    assert document["ok"] is True
    warned = [entry["name"] for entry in document["checks"] if entry["status"] != "pass"]
    assert warned == (["manifest"] if windows else [])
    assert document["microapp"]["tools"] == [{"name": tool, "llm_name": f"ext_{plugin_id}_{tool}"}]


@pytest.mark.parametrize("length", [29, 30])
def test_an_id_that_leaves_the_tool_no_room_is_refused_and_nothing_written(
    tmp_path: Path, length: int
) -> None:
    plugin_id = _id(length)
    before = tree_snapshot(tmp_path)
    refused = nexo("plugin", "new", plugin_id, "--kind", "microapp", *PIN, cwd=tmp_path)
    assert refused.code == 2, refused.stderr
    assert refused.error_line.endswith(" [usage]"), refused.stderr
    assert refused.stderr.splitlines() == [refused.error_line]
    assert "at most 28 characters" in refused.error_line
    assert tree_snapshot(tmp_path) == before
    # The same id is a plugin's: only a microapp's tool carries the id twice.
    assert nexo("plugin", "new", plugin_id, *PIN, "-q", cwd=tmp_path).code == 0
