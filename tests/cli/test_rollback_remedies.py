"""The commands ``rollback`` prints, pasted as printed, act on the plugin and root it spoke
of: a version kept from a local tarball into a root given with ``--dest`` is named with that
root (only ``PATH``, the tarball a receipt does not record, is to be filled in)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer
from support.stand_in import use_stand_in
from support.tarballs import tree_snapshot, write_plugin


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer) -> Path:
    return use_stand_in(monkeypatch, tmp_path, server)


def test_a_kept_tarball_without_file_hashes_is_named_with_its_root(
    home: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "other root"
    tarballs = {v: write_plugin(tmp_path / "dist", "hello", v) for v in ("1.0.0", "2.0.0")}
    for version in ("1.0.0", "2.0.0"):
        code, _, err = nexo("plugin", "install", str(tarballs[version]), "--dest", str(dest),
                            "--yes", in_process=True)  # fmt: skip
        assert code == 0, err
    (receipt,) = (dest / ".nexo" / "kept").rglob(".nexo-install.json")
    document = json.loads(receipt.read_text())
    del document["files"]  # as the reference installer writes it
    receipt.write_text(json.dumps(document))
    before = tree_snapshot(dest)
    code, out, _ = nexo("plugin", "rollback", "hello", "--dest", str(dest), "--json",
                        in_process=True)  # fmt: skip
    assert code == 1
    refusal = json.loads(out)
    assert refusal["kind"] == "checksum_missing"
    assert tree_snapshot(dest) == before
    command = shlex.join(["nexo", "plugin", "install", "PATH", "--allow-downgrade", "--dest",
                          str(dest)])  # fmt: skip
    assert f"(`{command}`, PATH the tarball of 1.0.0)" in refusal["error"], refusal["error"]
    words = [str(tarballs["1.0.0"]) if word == "PATH" else word for word in shlex.split(command)]
    code, _, err = nexo(*words[1:], "--yes", in_process=True)
    assert code == 0, err
    assert (dest / "hello-1.0.0" / "bin" / "hello").is_file()
    assert not (dest / "hello-2.0.0").exists()
    assert not (home / "state" / "plugins" / "hello-1.0.0").exists()
