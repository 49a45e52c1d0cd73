"""``install`` of another version over an installed plugin keeps the version it replaces for
``rollback`` as ``upgrade`` does (under ``.nexo/kept``, one per plugin), says so on its
confirmation screen, and ``--force`` over the same version keeps nothing new."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import clean_env, nexo
from support.daemon_walk import discovered_versions
from support.tarballs import release_assets, write_plugin

from nexo_pkg.install.receipts import scan_kept

from .conftest import InstallEnv


def _kept(dest: Path) -> list[str]:
    return sorted(item.receipt.version for item in scan_kept(dest) if item.receipt is not None)


def test_install_over_another_version_keeps_it_for_rollback(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    dest = install_env.dest
    env = clean_env(NEXO_HOME=str(install_env.home))
    tarballs = {v: write_plugin(tmp_path / "dist", "x", v) for v in ("1.0.0", "1.1.0", "1.2.0")}

    def install(version: str, *flags: str) -> dict[str, object]:
        args: list[str | Path] = [
            "plugin",
            "install",
            tarballs[version],
            "--dest",
            dest,
            "--yes",
            "--json",
            *flags,
        ]
        result = nexo(*args, env=env, in_process=True)
        assert result.exit_code == 0, result.stdout + result.stderr
        document: dict[str, object] = json.loads(result.stdout)
        return document

    install("1.0.0")
    # The screen names what is replaced and that it is kept.
    shown = nexo(
        "plugin", "install", tarballs["1.1.0"], "--dest", dest, "--dry-run", env=env,
        in_process=True,
    )  # fmt: skip
    assert shown.exit_code == 0, shown.stderr
    assert f"Replaces:     {dest / 'x-1.0.0'} (kept for rollback)" in shown.stderr
    second = install("1.1.0")
    kept_paths = second["kept_paths"]
    assert isinstance(kept_paths, list)
    [kept] = kept_paths
    assert Path(kept).relative_to(dest).parts[:2] == (".nexo", "kept")
    assert discovered_versions(dest) == {"x": "1.1.0"}
    assert _kept(dest) == ["1.0.0"]
    # One previous version per plugin, as upgrade keeps: the one kept before goes.
    third = install("1.2.0")
    assert third["pruned_kept_paths"] == [kept]
    assert _kept(dest) == ["1.1.0"]
    # --force over the same version keeps nothing new.
    forced = install("1.2.0", "--force")
    assert forced["kept_paths"] == []
    assert _kept(dest) == ["1.1.0"]
    # And rollback brings the replaced version back.
    back = nexo("plugin", "rollback", "x", "--dest", dest, "--yes", env=env, in_process=True)
    assert back.exit_code == 0, back.stdout + back.stderr
    assert discovered_versions(dest) == {"x": "1.1.0"}


def test_rollback_of_a_local_tarball_names_a_remedy_that_works(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    dest = install_env.dest
    env = clean_env(NEXO_HOME=str(install_env.home))
    tarballs = {v: write_plugin(tmp_path / "dist", "x", v) for v in ("1.0.0", "1.1.0")}
    for version in ("1.0.0", "1.1.0"):
        args: list[str | Path] = ["plugin", "install", tarballs[version], "--dest", dest, "--yes"]
        assert nexo(*args, env=env, in_process=True).exit_code == 0
    back = nexo("plugin", "rollback", "x", "--dest", dest, env=env, in_process=True)
    assert back.exit_code == 0, back.stderr
    # `upgrade x@TAG` refuses a plugin installed from a file: it is not offered.
    said = back.stdout + back.stderr
    assert "@TAG" not in said
    assert "installing another tarball (`nexo plugin install PATH`) names a version" in said
    again = nexo("plugin", "rollback", "x", "--dest", dest, env=env, in_process=True)
    assert again.exit_code == 1
    assert "@TAG" not in again.stderr
    assert "installing its tarball (`nexo plugin install PATH`) returns to one" in again.stderr
    # The remedy works: installing the other tarball names a version and ends the hold.
    args = ["plugin", "install", str(tarballs["1.1.0"]), "--dest", str(dest), "--yes"]
    assert nexo(*args, env=env, in_process=True).exit_code == 0
    listed = json.loads(nexo("plugin", "list", "--dest", dest, "--json", env=env).stdout)
    [plugin] = [item for item in listed["plugins"] if not item["kept"]]
    assert (plugin["version"], plugin["held"]) == ("1.1.0", False)


def test_a_kept_version_rollback_cannot_check_is_not_promised_back(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    """Over a plugin the reference installer left (a receipt without file hashes), ``install``
    and ``upgrade`` keep the replaced tree, but ``rollback`` refuses it (nothing says what
    its files should be): neither the screen nor the report promises it back."""
    from .test_receipts import _write_reference_install

    dest = install_env.dest
    env = clean_env(NEXO_HOME=str(install_env.home), NEXO_GITHUB_API_BASE=install_env.server.url)
    _write_reference_install(dest, "x", "1.0.0", "latest")
    installed = nexo(
        "plugin", "install", write_plugin(tmp_path, "x", "1.1.0"), "--dest", dest, "--yes", env=env
    )
    assert installed.exit_code == 0, installed.stderr
    _write_reference_install(dest, "y", "1.0.0", "latest")
    install_env.server.publish("acme", "y", "v1.1.0", release_assets("y", "1.1.0"))
    upgraded = nexo("plugin", "upgrade", "y", "--dest", dest, "--yes", env=env)
    assert upgraded.exit_code == 0, upgraded.stderr
    for plugin_id, run in (("x", installed), ("y", upgraded)):
        assert (
            f"{dest}/{plugin_id}-1.0.0 (kept, but its receipt has no file hashes, so rollback "
            "cannot bring it back)"
        ) in run.stderr
        assert "brings it back" not in run.stderr
        assert f"so `nexo plugin rollback {plugin_id}` cannot check it" in run.stderr
        refused = nexo("plugin", "rollback", plugin_id, "--dest", dest, "--yes", env=env)
        assert refused.exit_code == 1
        assert "its receipt has no file hashes" in refused.stderr
    assert _kept(dest) == ["1.0.0", "1.0.0"]
    assert discovered_versions(dest) == {"x": "1.1.0", "y": "1.1.0"}


def test_a_version_pruned_in_the_same_run_is_not_reported_replaced(
    install_env: InstallEnv,
) -> None:
    """Two versions side by side (as the reference installer leaves them): ``upgrade`` moves
    both aside, keeps the newer for rollback and prunes the older in the same run. ``--json``
    says the pruned one only in ``pruned_kept_paths``: ``replaced`` names no path that is
    gone, and the root holds exactly the new version and the one kept."""
    from .test_receipts import _write_reference_install

    dest = install_env.dest
    _write_reference_install(dest, "hello", "1.0.0", "latest")
    _write_reference_install(dest, "hello", "1.1.0", "latest")
    install_env.server.publish("acme", "hello", "v1.2.0", release_assets("hello", "1.2.0"))
    env = clean_env(NEXO_HOME=str(install_env.home), NEXO_GITHUB_API_BASE=install_env.server.url)
    args = ["plugin", "upgrade", "hello", "--yes", "--json", "--dest", str(dest)]
    result = nexo(*args, env=env, in_process=True)
    assert result.exit_code == 0, result.stdout + result.stderr
    document = json.loads(result.stdout)
    [kept] = document["kept_paths"]
    [pruned] = document["pruned_kept_paths"]
    assert Path(kept).parent.name.startswith("hello-1.1.0-")
    assert Path(pruned).parent.name.startswith("hello-1.0.0-")
    assert document["replaced"] == [kept]
    assert not Path(pruned).exists()
    assert all(Path(path).is_dir() for path in document["replaced"])
    # Nothing else on disk: the new version, the one kept, the root's lock file.
    assert sorted(path.name for path in dest.iterdir()) == [
        ".nexo",
        ".nexo-install.lock",
        "hello-1.2.0",
    ]
    assert [path.name for path in (dest / ".nexo").iterdir()] == ["kept"]
    assert [path / "tree" for path in (dest / ".nexo" / "kept").iterdir()] == [Path(kept)]
    assert discovered_versions(dest) == {"hello": "1.2.0"}


def test_install_over_two_versions_side_by_side_names_no_deleted_tree_replaced(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    """Two versions side by side (as the reference installer leaves them): a plain
    ``install`` keeps the newer for rollback and deletes the older in the same run.
    ``replaced`` names where the replaced trees are now, so only the one kept, never the
    place under ``.nexo/removing`` the other passed through on its way out."""
    from .test_receipts import _write_reference_install

    dest = install_env.dest
    _write_reference_install(dest, "x", "1.0.0", "latest")
    _write_reference_install(dest, "x", "1.1.0", "latest")
    tarball = write_plugin(tmp_path / "dist", "x", "1.2.0")
    env = clean_env(NEXO_HOME=str(install_env.home))
    args: list[str | Path] = ["plugin", "install", tarball, "--dest", dest, "--yes", "--json"]
    result = nexo(*args, env=env, in_process=True)
    assert result.exit_code == 0, result.stdout + result.stderr
    document = json.loads(result.stdout)
    [kept] = document["kept_paths"]
    assert Path(kept).parent.name.startswith("x-1.1.0-")
    assert document["replaced"] == [kept]
    assert document["pruned_kept_paths"] == []
    assert sorted(path.name for path in dest.iterdir()) == [
        ".nexo",
        ".nexo-install.lock",
        "x-1.2.0",
    ]
    assert [path.name for path in (dest / ".nexo").iterdir()] == ["kept"]
    # --force over the same version deletes the tree it replaces: nothing is named.
    forced = nexo(*args, "--force", env=env, in_process=True)
    assert forced.exit_code == 0, forced.stdout + forced.stderr
    again = json.loads(forced.stdout)
    assert (again["replaced"], again["kept_paths"], again["pruned_kept_paths"]) == ([], [], [])
    assert discovered_versions(dest) == {"x": "1.2.0"}
