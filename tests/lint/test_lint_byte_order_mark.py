"""One leading byte-order mark is skipped, as the daemon's TOML parser skips it (toml_edit
0.22, ``parser/document.rs``: ``opt(b"\\xEF\\xBB\\xBF")``), and only one: a second U+FEFF is
the document's first character, which no TOML statement starts with, so the daemon refuses
the manifest. ``lint`` (from a file and in the editor) says what ``pack`` and the daemon say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import clean_env, nexo

from nexo_pkg.lsp.server import lint_text
from nexo_pkg.manifest.read import ManifestTOMLError, read_manifest

BOM = "\ufeff"
MANIFEST = """\
[plugin]
id = "demo"
version = "0.1.0"
name = "Demo"
description = "A plugin for tests."
min_nexo_version = ">=0.1.0"

[plugin.entrypoint]
command = "./bin/demo"
"""


def _lint(tmp_path: Path, text: str) -> tuple[int, list[dict[str, object]]]:
    path = tmp_path / "nexo-plugin.toml"
    path.write_bytes(text.encode("utf-8"))
    result = nexo("plugin", "lint", "--format", "json", path, env=clean_env())
    [entry] = json.loads(result.stdout)["files"]
    return result.code, entry["diagnostics"]


def test_one_mark_is_skipped(tmp_path: Path) -> None:
    assert _lint(tmp_path, BOM + MANIFEST) == (0, [])
    assert lint_text("manifest", BOM + MANIFEST, str(tmp_path / "nexo-plugin.toml")) == ()


@pytest.mark.parametrize("marks", [2, 3])
def test_a_second_mark_is_a_syntax_error_as_the_daemon_reads_it(tmp_path: Path, marks: int) -> None:
    text = BOM * marks + MANIFEST
    with pytest.raises(ManifestTOMLError):
        read_manifest(text.encode("utf-8"))  # what pack and install read
    code, [finding] = _lint(tmp_path, text)
    assert code == 1
    assert finding["code"] == "NX001"
    assert finding["range"] == {"start": {"line": 1, "column": 1}, "end": {"line": 1, "column": 2}}
    # The editor counts the skipped mark as the first column.
    [editor] = lint_text("manifest", text, str(tmp_path / "nexo-plugin.toml"))
    assert editor.code == "NX001"
    assert (editor.span.start.line, editor.span.start.column) == (1, 2)
