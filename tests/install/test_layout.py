"""The install root as the daemon sees it: exactly one discoverable manifest per plugin id at
every step of install, ``--force``, upgrade (with and without ``--keep-old``) and remove, and
an interrupted ``--force`` that the next run finishes instead of losing both trees.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cli import clean_env, nexo
from support.daemon_walk import assert_one_per_id, discoverable, discovered_versions
from support.tarballs import (
    manifest_text,
    plugin_tarball,
    release_assets,
    tree_snapshot,
    write_plugin,
)

from nexo_pkg.cli import Interrupted
from nexo_pkg.core import dirs
from nexo_pkg.core.errors import NexoError
from nexo_pkg.install import root as install_root
from nexo_pkg.install.pipeline import install, remove, upgrade
from nexo_pkg.install.receipts import scan_kept

from .conftest import InstallEnv

Walk = Callable[[], None]


@pytest.fixture
def watched(install_env: InstallEnv, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Walk the root like the daemon after every rename inside the root: no id may ever be
    discoverable twice. Yields the log of renames seen."""
    seen: list[str] = []
    real_rename = Path.rename

    def rename(self: Path, target: Any) -> Path:
        moved = real_rename(self, target)
        if install_env.dest in Path(target).parents:
            seen.append(f"{self.name} -> {Path(target).relative_to(install_env.dest)}")
            assert_one_per_id(install_env.dest)
        return moved

    monkeypatch.setattr(Path, "rename", rename)
    return seen


def _publish(env: InstallEnv, version: str, *, latest: bool = True) -> None:
    env.server.publish("acme", "x", f"v{version}", release_assets("x", version), latest=latest)


def test_one_manifest_per_id_at_every_step(install_env: InstallEnv, watched: list[str]) -> None:
    dest = install_env.dest
    _publish(install_env, "0.9.0")
    install("acme/x", install_env.make_options())
    assert discovered_versions(dest) == {"x": "0.9.0"}
    install("acme/x", install_env.make_options(force=True))
    assert discovered_versions(dest) == {"x": "0.9.0"}
    # 0.10.0 sorts before 0.9.0: with both discoverable the daemon would load the wrong one.
    _publish(install_env, "0.10.0")
    kept = upgrade("x", install_env.make_options(), keep_old=True)
    assert discovered_versions(dest) == {"x": "0.10.0"}
    assert [item.receipt.version for item in scan_kept(dest) if item.receipt] == ["0.9.0"]
    assert kept.kept
    assert not kept.removed_old
    # By default the version replaced is kept and the one kept before it goes.
    _publish(install_env, "0.11.0")
    upgraded = upgrade("x", install_env.make_options())
    assert not upgraded.removed_old
    assert upgraded.pruned == kept.kept
    assert discovered_versions(dest) == {"x": "0.11.0"}
    assert [item.receipt.version for item in scan_kept(dest) if item.receipt] == ["0.10.0"]
    _publish(install_env, "0.12.0")
    deleted = upgrade("x", install_env.make_options(), keep_old=False)
    assert deleted.removed_old
    assert not deleted.kept
    assert not deleted.pruned
    assert discovered_versions(dest) == {"x": "0.12.0"}
    assert [item.receipt.version for item in scan_kept(dest) if item.receipt] == ["0.10.0"]
    assert sorted(path.name for path in dest.iterdir()) == [
        ".nexo",
        ".nexo-install.lock",
        "x-0.12.0",
    ]
    removed = remove("x", dest)
    assert sorted(item.kept for item in removed) == [False, True]
    assert discovered_versions(dest) == {}
    assert sorted(path.name for path in dest.iterdir()) == [".nexo-install.lock"]
    # Staging trees and old trees were four levels down whenever they existed.
    assert any("-> .nexo/staging" not in line and ".nexo/kept/" in line for line in watched)
    for line in watched:
        target = line.split(" -> ")[1]
        if target.startswith(".nexo/"):
            assert len(Path(target).parts) == 4, line


def test_kept_versions_are_listed_as_kept(install_env: InstallEnv) -> None:
    _publish(install_env, "1.0.0")
    env = clean_env(
        NEXO_HOME=str(install_env.home),
        NEXO_GITHUB_API_BASE=install_env.server.url,
        NEXO_HTTP_RETRY_BASE_MS="1",
    )
    assert nexo("plugin", "install", "acme/x", "--yes", env=env, in_process=True).exit_code == 0
    _publish(install_env, "1.1.0")
    upgraded = nexo("plugin", "upgrade", "x", "--keep-old", "--json", env=env, in_process=True)
    assert upgraded.exit_code == 0, upgraded.stdout
    listing = nexo("plugin", "list", "--json", env=env, in_process=True).document
    assert [(p["version"], p["kept"]) for p in listing["plugins"]] == [
        ("1.1.0", False),
        ("1.0.0", True),
    ]
    assert listing["plugins"][1]["path"] == upgraded.document["kept_paths"][0]
    human = nexo("plugin", "list", env=env, in_process=True)
    (kept_line,) = [line for line in human.stdout.splitlines() if "1.0.0" in line]
    assert " kept " in kept_line
    _publish(install_env, "1.2.0")
    said = nexo("plugin", "upgrade", "x", "--keep-old", "--yes", env=env, in_process=True)
    assert said.exit_code == 0, said.stderr
    assert "Kept 1.1.0 out of the daemon's sight" in said.stderr
    assert "nexo plugin rollback x" in said.stderr


def test_stale_staging_trees_are_never_discoverable_and_are_swept(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    _publish(install_env, "1.0.0")
    with install_root.locked_root(install_env.dest) as root:
        stale = root.new_staging("x")
    (stale / "nexo-plugin.toml").write_text('[plugin]\nid = "x"\nversion = "9.9.9"\n')
    assert discovered_versions(install_env.dest) == {}
    install("acme/x", install_env.make_options())
    assert not stale.exists()
    assert discovered_versions(install_env.dest) == {"x": "1.0.0"}


def test_a_signal_while_staging_is_made_leaves_no_holder(
    install_env: InstallEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SIGTERM lands between the staging holder and its tree (the window a signal sent as soon
    # as the holder appears hits): the holder goes too, and nothing is left for the next run.
    real_make_dir = dirs.make_dir

    def make_dir(path: Path) -> None:
        real_make_dir(path)
        if path.name == install_root.TREE_NAME:
            raise Interrupted(signal.SIGTERM)

    monkeypatch.setattr(install_root, "make_dir", make_dir)
    with install_root.locked_root(install_env.dest) as root, pytest.raises(Interrupted):
        root.new_staging("x")
    staging_area = install_env.dest / ".nexo" / "staging"
    assert not staging_area.exists() or list(staging_area.iterdir()) == []


# -- an interrupted --force --------------------------------------------------------------------

_KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path

    real_rename = Path.rename
    moment = sys.argv[1]

    def rename(self, target):
        target = Path(target)
        staged = "staging" in str(self)
        if moment == "before-new" and staged and target.name == "x-1.0.0":
            os.kill(os.getpid(), signal.SIGKILL)
        if moment == "before-old" and self.name == "x-1.0.0" and not staged:
            os.kill(os.getpid(), signal.SIGKILL)
        moved = real_rename(self, target)
        if moment == "after-new" and staged and target.name == "x-1.0.0":
            os.kill(os.getpid(), signal.SIGKILL)
        return moved

    Path.rename = rename
    sys.argv = ["nexo", *sys.argv[2:]]
    from nexo_pkg.cli.main import main
    main()
    """
)


@pytest.mark.parametrize("moment", ["before-old", "before-new", "after-new"])
def test_sigkill_during_force_is_recovered_by_the_next_run(
    install_env: InstallEnv, tmp_path: Path, moment: str
) -> None:
    old = plugin_tarball("x", "1.0.0", payload=b"old")
    new = plugin_tarball("x", "1.0.0", payload=b"new")
    tarball = write_plugin(tmp_path / "dist", "x", "1.0.0", data=old)
    dest = install_env.dest
    args = ["plugin", "install", str(tarball), "--dest", str(dest), "--yes", "--json"]
    env = clean_env(NEXO_HOME=str(install_env.home))
    assert nexo(*args, env=env, in_process=True).exit_code == 0
    write_plugin(tmp_path / "dist", "x", "1.0.0", data=new)
    killed = subprocess.run(
        [sys.executable, "-c", _KILLER, moment, *args, "--force"],
        env=env,
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert len(assert_one_per_id(dest)) <= 1
    # The next run (even a listing) finishes or undoes the replacement: one complete tree.
    listing = nexo("plugin", "list", "--dest", str(dest), "--json", env=env, in_process=True)
    assert [p["version"] for p in listing.document["plugins"]] == ["1.0.0"]
    assert discovered_versions(dest) == {"x": "1.0.0"}
    verified = nexo("plugin", "verify", "--dest", str(dest), "--json", env=env, in_process=True)
    assert verified.exit_code == 0, verified.stdout
    data = (dest / "x-1.0.0" / "lib/plugin/data.bin").read_bytes()
    # The replacement was recorded once the new tree was complete: the next run finishes it.
    assert data == b"new"
    again = nexo(*args, "--force", env=env, in_process=True)
    assert again.exit_code == 0, again.stdout
    assert not (dest / ".nexo").exists()
    assert sorted(path.name for path in dest.iterdir()) == [".nexo-install.lock", "x-1.0.0"]


def test_remove_after_an_interrupted_replacement(install_env: InstallEnv, tmp_path: Path) -> None:
    tarball = write_plugin(tmp_path / "dist", "x", "1.0.0", data=plugin_tarball("x", "1.0.0"))
    dest = install_env.dest
    args = ["plugin", "install", str(tarball), "--dest", str(dest), "--yes", "--json"]
    env = clean_env(NEXO_HOME=str(install_env.home))
    assert nexo(*args, env=env, in_process=True).exit_code == 0
    write_plugin(tmp_path / "dist", "x", "1.0.0", data=plugin_tarball("x", "1.0.0", payload=b"2"))
    killed = subprocess.run(
        [sys.executable, "-c", _KILLER, "before-new", *args, "--force"],
        env=env,
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert discovered_versions(dest) == {}
    # `remove` finds the plugin the interrupted run was replacing, and removes it.
    removed = nexo("plugin", "remove", "x", "--dest", str(dest), "--yes", env=env, in_process=True)
    assert removed.exit_code == 0, removed.stdout
    assert discovered_versions(dest) == {}
    assert sorted(path.name for path in dest.iterdir()) == [".nexo-install.lock"]


def test_installing_another_version_replaces_the_installed_one(
    install_env: InstallEnv, watched: list[str]
) -> None:
    _publish(install_env, "1.0.0", latest=False)
    _publish(install_env, "2.0.0")
    first = install("acme/x@v1.0.0", install_env.make_options())
    second = install("acme/x", install_env.make_options())
    assert discovered_versions(install_env.dest) == {"x": "2.0.0"}
    # The version replaced is kept for rollback, as upgrade keeps it.
    assert second.to_json()["replaced"][0].startswith(str(install_env.dest / ".nexo/kept"))
    assert second.to_json()["kept_paths"] == second.to_json()["replaced"]
    assert not first.path.exists()
    # The older version replaces the newer one only when asked to, as `upgrade` does.
    with pytest.raises(NexoError) as refused:
        install("acme/x@v1.0.0", install_env.make_options())
    assert refused.value.kind == "downgrade_refused"
    assert discovered_versions(install_env.dest) == {"x": "2.0.0"}
    back = install("acme/x@v1.0.0", install_env.make_options(allow_downgrade=True))
    assert discovered_versions(install_env.dest) == {"x": "1.0.0"}
    assert back.path == first.path
    assert len(watched) >= 4


def test_an_interrupted_replacement_whose_new_tree_is_gone_restores_the_old(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    tarball = write_plugin(tmp_path / "dist", "x", "1.0.0", data=plugin_tarball("x", "1.0.0"))
    dest = install_env.dest
    args = ["plugin", "install", str(tarball), "--dest", str(dest), "--yes", "--json"]
    env = clean_env(NEXO_HOME=str(install_env.home))
    assert nexo(*args, env=env, in_process=True).exit_code == 0
    before = (dest / "x-1.0.0" / ".nexo-install.json").read_bytes()
    write_plugin(tmp_path / "dist", "x", "1.0.0", data=plugin_tarball("x", "1.0.0", payload=b"2"))
    killed = subprocess.run(
        [sys.executable, "-c", _KILLER, "before-new", *args, "--force"],
        env=env,
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    (staged,) = (dest / ".nexo" / "staging").glob("*/tree")
    shutil.rmtree(staged)
    listing = nexo("plugin", "list", "--dest", str(dest), "--json", env=env, in_process=True)
    assert [p["version"] for p in listing.document["plugins"]] == ["1.0.0"]
    assert (dest / "x-1.0.0" / ".nexo-install.json").read_bytes() == before
    assert discovered_versions(dest) == {"x": "1.0.0"}


def test_a_directory_without_a_receipt_holding_the_id_is_named_before_installing(
    tmp_path: Path,
) -> None:
    # An install never replaces a directory it did not write; when one (without a receipt)
    # holds the same plugin, the daemon finds the id twice and loads whichever sorts first,
    # so the confirmation screen and the document say which, and that directory stays.
    dest = tmp_path / "plugins"
    for name, plugin in (("hello-0.9.0", "hello"), ("other-1.0.0", "other")):
        (dest / name / "bin").mkdir(parents=True)
        (dest / name / "nexo-plugin.toml").write_text(
            manifest_text(plugin, name.rpartition("-")[2])
        )
    before = tree_snapshot(dest / "hello-0.9.0")
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    result = nexo("plugin", "install", tarball, "--dest", dest, "--yes", "--json", env=env)
    assert result.code == 0, result.stderr
    shadow = [w for w in result.document["warnings"] if "no install receipt" in w]
    orphan = dest / "hello-0.9.0"
    assert shadow == [
        f"{orphan} (no install receipt) also holds plugin hello: the daemon loads one "
        f"directory per id, the first by file name ({orphan}); remove or move the other one "
        "out of the plugin root"
    ]
    assert f"warning: {shadow[0]}" in result.stderr
    assert tree_snapshot(orphan) == before
    assert [found.parent for found in discoverable(dest)["hello"]] == [orphan, dest / "hello-1.0.0"]
    # Installed beside no such directory, nothing is said.
    shutil.rmtree(orphan)
    again = nexo("plugin", "install", tarball, "--dest", tmp_path / "b", "--yes", "--json", env=env)
    assert not [w for w in again.document["warnings"] if "no install receipt" in w]
