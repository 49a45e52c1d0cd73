"""`new --kind microapp` refuses an id the daemon's extension parser refuses.

lordmacu/nexo-rs eec3f33 crates/extensions/src/manifest.rs:55-64 (`RESERVED_IDS`) and
`validate_id`: a reserved id is `ManifestError::ReservedId`, and discovery skips the microapp.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import nexo

from nexo_pkg.manifest.microapp import RESERVED_IDS


@pytest.mark.parametrize("plugin_id", sorted(RESERVED_IDS))
def test_a_reserved_microapp_id_is_refused_and_nothing_written(
    tmp_path: Path, plugin_id: str
) -> None:
    refused = nexo("plugin", "new", plugin_id, "--kind", "microapp", cwd=tmp_path, in_process=True)
    assert refused.code == 2
    [line] = refused.stderr.strip().splitlines()
    assert line.startswith(f"error: invalid plugin id '{plugin_id}': the daemon reserves it")
    assert f"'{plugin_id}_app'" in line
    assert list(tmp_path.iterdir()) == []


def test_a_reserved_id_is_fine_for_a_plugin(tmp_path: Path) -> None:
    """Only the extension parser reserves them; a plugin called `memory` is the daemon's own."""
    created = nexo("plugin", "new", "memory", cwd=tmp_path, in_process=True)
    assert created.code == 0, created.stderr


def test_a_description_the_extension_parser_refuses_is_refused(tmp_path: Path) -> None:
    """crates/extensions/src/manifest.rs `validate_description`: more than 512 chars (not
    bytes: `chars().count()`) is `DescriptionTooLong`."""
    refused = nexo(
        "plugin", "new", "greeter", "--kind", "microapp", "--description", "é" * 513,
        cwd=tmp_path, in_process=True,
    )  # fmt: skip
    assert refused.code == 2
    assert "at most 512" in refused.stderr
    assert list(tmp_path.iterdir()) == []
    created = nexo(
        "plugin", "new", "greeter", "--kind", "microapp", "--description", "é" * 512,
        cwd=tmp_path, in_process=True,
    )  # fmt: skip
    assert created.code == 0, created.stderr
    linted = nexo("plugin", "lint", str(tmp_path / "greeter"), cwd=tmp_path, in_process=True)
    assert linted.code == 0, linted.stdout + linted.stderr
