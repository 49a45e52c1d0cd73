"""Release tags with ``/`` (release-plz's ``nexo-plugin-google/v0.2.0``; GitHub takes them,
and the reference installer passes them through): ``install owner/repo@TAG``, ``outdated``,
``upgrade`` and ``rollback``'s remedy reach the release, the tag encoded as one part of the
API's path and quoted in printed commands."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer
from support.stand_in import use_stand_in
from support.tarballs import release_assets, tree_snapshot

OLD, NEW = "nexo-plugin-hello/v1.0.0", "nexo-plugin-hello/v2.0.0"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer) -> Path:
    return use_stand_in(monkeypatch, tmp_path, server)


def test_a_path_like_tag_installs_upgrades_and_is_named_by_rollback(
    home: Path, tmp_path: Path, server: GitHubServer
) -> None:
    server.publish("acme", "hello", OLD, release_assets("hello", "1.0.0"), latest=False)
    dest = tmp_path / "root"
    code, out, err = nexo("plugin", "install", f"acme/hello@{OLD}", "--dest", str(dest),
                          "--yes", "--json", in_process=True)  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["version"] == "1.0.0"
    receipt = json.loads((dest / "hello-1.0.0" / ".nexo-install.json").read_text())
    assert receipt["tag"] == OLD
    server.publish("acme", "hello", NEW, release_assets("hello", "2.0.0"))
    code, out, err = nexo("plugin", "upgrade", f"hello@{NEW}", "--dest", str(dest), "--yes",
                          "--json", in_process=True)  # fmt: skip
    assert code == 0, err
    assert (dest / "hello-2.0.0").is_dir()
    assert not (dest / "hello-1.0.0").exists()
    # The kept 1.0.0 loses its file hashes (as another tool writes it): rollback names the
    # release to install again, which works as printed.
    (kept,) = (dest / ".nexo" / "kept").rglob(".nexo-install.json")
    document = json.loads(kept.read_text())
    del document["files"]
    kept.write_text(json.dumps(document))
    before = tree_snapshot(dest)
    code, out, _ = nexo("plugin", "rollback", "hello", "--dest", str(dest), "--json",
                        in_process=True)  # fmt: skip
    assert code == 1
    refusal = json.loads(out)
    assert refusal["kind"] == "checksum_missing"
    assert tree_snapshot(dest) == before
    command = shlex.join(["nexo", "plugin", "install", f"acme/hello@{OLD}", "--allow-downgrade",
                          "--dest", str(dest)])  # fmt: skip
    assert f"(`{command}`)" in refusal["error"], refusal["error"]
    code, _, err = nexo(*shlex.split(command)[1:], "--yes", in_process=True)
    assert code == 0, err
    assert (dest / "hello-1.0.0").is_dir()
    assert not (dest / "hello-2.0.0").exists()
    code, out, err = nexo("plugin", "outdated", "--dest", str(dest), "--json", in_process=True)
    assert code == 0, err
    # Pinned on the tag it names; the latest release is named by its own tag.
    (row,) = json.loads(out)["plugins"]
    assert (row["installed"], row["status"], row["latest"], row["latest_tag"]) == (
        "1.0.0", "pinned", "2.0.0", NEW
    )  # fmt: skip
