"""``list`` shows where a plugin came from as far as its receipt says: a release receipt that
names no tag (a hand-edited one) is shown as ``owner/repo``, never ``owner/repo@None``; one with
a tag as ``owner/repo@tag``. ``list`` only reads: the root is unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.tarballs import tree_snapshot, write_plugin


@pytest.mark.parametrize(
    ("tag", "shown"), [("", "acme/x"), ("v1.0.0", "acme/x@v1.0.0")], ids=["no-tag", "tag"]
)
def test_list_shows_a_release_origin_without_none(tag: str, shown: str, tmp_path: Path) -> None:
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    dest = tmp_path / "root"
    tarball = write_plugin(tmp_path / "dist", "x", "1.0.0")
    installed = nexo("plugin", "install", tarball, "--dest", dest, "--yes", env=env)
    assert installed.exit_code == 0, installed.stderr
    receipt = dest / "x-1.0.0" / ".nexo-install.json"
    document = json.loads(receipt.read_text(encoding="utf-8"))
    document.update(source="github-releases", owner="acme", repo="x", tag=tag)
    receipt.write_text(json.dumps(document), encoding="utf-8")
    before = tree_snapshot(tmp_path)

    listed = nexo("plugin", "list", "--dest", dest, env=env)
    assert listed.exit_code == 0, listed.stderr
    [row] = [line for line in listed.stdout.splitlines() if line.startswith("x ")]
    assert row.split()[:3] == ["x", "1.0.0", shown]
    assert "None" not in listed.stdout
    as_json = nexo("plugin", "list", "--dest", dest, "--json", env=env)
    [plugin] = json.loads(as_json.stdout)["plugins"]
    assert (plugin["owner"], plugin["repo"], plugin["tag"]) == ("acme", "x", tag or None)
    assert tree_snapshot(tmp_path) == before
