"""A project saved by Windows editors: a manifest with a UTF-8 byte-order mark and CRLF line
ends. The daemon's TOML parser (``toml_edit``, ``opt(b"\\xEF\\xBB\\xBF")`` in its document
parser) reads past the mark, and so do lint, ``pack``, ``install`` and ``check``."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest
from support.cli import clean_env, nexo

from nexo_pkg.pack.build import PackOptions, pack
from pack.pack_helpers import write_project

EPOCH = 1_700_000_000
BOM = b"\xef\xbb\xbf"


def _windows_project(root: Path) -> bytes:
    """Rewrite the manifest of a minimal project as Notepad saves it; its new bytes."""
    write_project(root)
    manifest = root / "nexo-plugin.toml"
    saved = BOM + manifest.read_bytes().replace(b"\n", b"\r\n")
    manifest.write_bytes(saved)
    return saved


@pytest.mark.daemon_host
@pytest.mark.parametrize("target", ["noarch", "x86_64-unknown-linux-gnu"])
def test_a_manifest_with_a_byte_order_mark_and_crlf_packs_installs_and_checks(
    tmp_path: Path, target: str
) -> None:
    project = tmp_path / "project"
    saved = _windows_project(project)
    binary = None
    if target != "noarch":
        binary = tmp_path / "demo-exe"
        binary.write_text("#!/bin/sh\nexit 0\n")
        binary.chmod(0o755)
    result = pack(
        PackOptions(project=project, target=target, binary=binary, source_date_epoch=EPOCH),
        environ={},
    )
    # The manifest is packed and copied as it was written, mark and all.
    assert (project / "dist" / "nexo-plugin.toml").read_bytes() == saved
    with tarfile.open(result.tarball.path) as archive:
        member = archive.extractfile("nexo-plugin.toml")
        assert member is not None
        assert member.read() == saved
    # The nexoai SDK reads the manifest with tomllib, which refuses the mark: said for Python.
    bom_notes = [note for note in result.notes if "byte-order mark" in note]
    assert len(bom_notes) == (1 if target == "noarch" else 0)

    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    dest = tmp_path / "plugins"
    installed = nexo(
        "plugin", "install", str(result.tarball.path), "--dest", str(dest), "--yes",
        "--target", target if target != "noarch" else "x86_64-unknown-linux-gnu", "--json",
        env=env, in_process=True,
    )  # fmt: skip
    assert installed.code == 0, installed.stderr
    assert (dest / "demo-0.1.0" / "nexo-plugin.toml").read_bytes() == saved
    # `check` gets past the manifest to the plugin itself.
    checked = nexo("plugin", "check", str(result.tarball.path), "--json", env=env, in_process=True)
    assert checked.document.get("checks"), checked.document
