"""Ctrl-C during ``install --force`` and ``upgrade ID``: a signal before the new tree goes
into place stops the command with the root as it was; one that lands once the tree is in
place waits for the result, so the command never says ``interrupted`` alone about a plugin
it did install.

The signal is sent by a ``sitecustomize`` hook at an exact step (right after the step that
writes the staging tree to disk, or right after the new tree is published), so nothing races.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import clean_env, nexo_with_sitecustomize, stand_in_env
from support.github_server import GitHubServer
from support.stderr import without_notes
from support.step_signal import signal_after_step
from support.tarballs import (
    plugin_tarball,
    release_assets,
    sha256_hex,
    tree_snapshot,
    write_plugin,
)

pytestmark = [
    pytest.mark.daemon_host,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]


def _receipt_sha(tree: Path) -> str:
    return str(json.loads((tree / ".nexo-install.json").read_text(encoding="utf-8"))["sha256"])


def _leftovers(dest: Path) -> list[str]:
    areas = [dest / ".nexo" / area for area in ("staging", "removing", "journal")]
    found = [str(p) for area in areas if area.is_dir() for p in area.iterdir()]
    legacy = [p.name for p in dest.iterdir() if p.name.startswith((".staging-", ".removing-"))]
    return found + legacy


@pytest.mark.parametrize(
    ("step", "published"),
    [
        pytest.param("nexo_pkg.core.durable.sync_tree", False, id="before-the-rename"),
        pytest.param("nexo_pkg.install.root.publish", True, id="after-the-rename"),
    ],
)
def test_ctrl_c_during_a_forced_reinstall_is_the_old_tree_or_the_new_one_said(
    tmp_path: Path, step: str, published: bool
) -> None:
    dest = tmp_path / "plugins"
    first = write_plugin(tmp_path / "one", "hello", "1.0.0", data=plugin_tarball("hello", "1.0.0"))
    second_data = plugin_tarball("hello", "1.0.0", payload=b"second build\n")
    second = write_plugin(tmp_path / "two", "hello", "1.0.0", data=second_data)
    env = clean_env(NEXO_HOME=str(tmp_path / "nexo"), HOME=str(tmp_path))
    installed = subprocess.run(
        [str(Path(sys.executable).with_name("nexo")), "plugin", "install", str(first),
         "--dest", str(dest), "--yes", "--json"],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    before = tree_snapshot(dest)
    tree = dest / "hello-1.0.0"

    run = nexo_with_sitecustomize(
        tmp_path,
        signal_after_step("nexo_pkg.install.pipeline", step),
        "plugin", "install", str(second), "--dest", str(dest), "--force", "--yes", "--json",
    )  # fmt: skip

    assert run.returncode == 130, run.stderr
    assert "Traceback" not in run.stderr
    assert without_notes(run.stderr).strip().splitlines()[-1] == "error: interrupted [interrupted]"
    document = json.loads(run.stdout)  # exactly one document
    if published:
        # The new tree is in place: the command says so, then that it was stopped.
        assert document["ok"] is True, document
        assert document["sha256"] == sha256_hex(second_data)
        assert _receipt_sha(tree) == sha256_hex(second_data)
        assert (tree / "lib/plugin/data.bin").read_bytes() == b"second build\n"
    else:
        assert document == {"ok": False, "kind": "interrupted", "error": "interrupted"}
        assert tree_snapshot(dest) == before
    assert _leftovers(dest) == []


def test_ctrl_c_once_an_upgrade_put_the_new_version_in_place_still_says_so(
    tmp_path: Path,
) -> None:
    dest = tmp_path / "plugins"
    with GitHubServer() as server:
        server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
        env = stand_in_env(tmp_path / "nexo", server.url, HOME=str(tmp_path))
        installed = subprocess.run(
            [str(Path(sys.executable).with_name("nexo")), "plugin", "install", "acme/hello",
             "--dest", str(dest), "--yes", "--json"],
            env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
            check=False,
        )  # fmt: skip
        assert installed.returncode == 0, installed.stderr
        server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
        run = nexo_with_sitecustomize(
            tmp_path,
            signal_after_step("nexo_pkg.install.pipeline", "nexo_pkg.install.root.publish"),
            "plugin", "upgrade", "hello", "--dest", str(dest), "--github-api-url", server.url,
            "--yes", "--json",
        )  # fmt: skip

    assert run.returncode == 130, run.stderr
    assert without_notes(run.stderr).strip().splitlines()[-1] == "error: interrupted [interrupted]"
    document = json.loads(run.stdout)
    assert document["ok"] is True, document
    assert (document["version"], document["upgraded"]) == ("2.0.0", True)
    assert (dest / "hello-2.0.0" / ".nexo-install.json").is_file()
    assert not (dest / "hello-1.0.0").exists()
    assert _leftovers(dest) == []
