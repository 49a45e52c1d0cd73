"""``check`` judges one reading of the manifest: the model it spawns from, the lint that
decides whether anything starts and the sandbox plan's lines all come from the same bytes. A
manifest swapped for another one while check runs cannot make the lint pass a file the model
was not read from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from check.check_plugins import cli_check, toml_string
from nexo_pkg.manifest.model import plugin_manifest_from_data

MANIFEST = (
    '[plugin]\nid = "reach"\nversion = "0.1.0"\nname = "r"\ndescription = "r"\n'
    'min_nexo_version = ">=0.1.0"\n[plugin.entrypoint]\ncommand = "./run"\n'
    "[plugin.sandbox]\nenabled = true\nfs_read_paths = [{read}]\nfs_write_paths = [{write}]\n"
)


def _check(document: dict[str, Any], name: str) -> dict[str, Any]:
    found = [entry for entry in document["checks"] if entry["name"] == name]
    assert found, f"check {name} did not run: {document['checks']}"
    entry: dict[str, Any] = found[0]
    return entry


def test_a_manifest_swapped_after_it_was_read_is_not_what_the_lint_judges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The manifest read binds the host's `/` writable (NX146: lint refuses it, the daemon
    would spawn it); right after check read it, a clean one replaces it. The lint still
    judges the bytes the plugin's model came from: nothing starts, NX146 is named."""
    root = tmp_path / "p"
    root.mkdir()
    marker = tmp_path / "started"
    launcher = root / "run"
    launcher.write_text(f"#!/bin/sh\n: > {marker}\nexit 0\n", encoding="utf-8")
    launcher.chmod(0o755)
    manifest = root / "nexo-plugin.toml"
    read = toml_string(str(root))
    manifest.write_text(
        MANIFEST.format(read=read, write=toml_string("${state_dir}/../../../..")),
        encoding="utf-8",
    )
    clean = MANIFEST.format(read=read, write=toml_string("${state_dir}")).encode()
    swapped: list[Path] = []

    def swap_after_the_read(document: Any) -> Any:
        # Called once check has read the manifest and before anything else judges it.
        if not swapped:
            replacement = tmp_path / "clean.toml"
            replacement.write_bytes(clean)
            replacement.replace(manifest)
            swapped.append(manifest)
        return plugin_manifest_from_data(document)

    monkeypatch.setattr("nexo_pkg.check.target.plugin_manifest_from_data", swap_after_the_read)
    code, document = cli_check(root)
    assert swapped, "the manifest was never read"
    assert manifest.read_bytes() == clean  # the swap happened
    assert code == 1, document
    entry = _check(document, "manifest")
    assert entry["status"] == "fail", entry
    assert "NX146" in entry["detail"]
    assert _check(document, "spawn")["status"] == "fail"
    assert not marker.exists()
