"""What is planted under ``.nexo/kept`` is never a kept version: a holder that is a symbolic
link (to a tree outside the root, say) is neither put back by ``rollback`` (which would report
a swap it never made and hold the plugin at a version that is not installed) nor deleted
through the link by the pruning of ``install`` or by ``remove``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.daemon_walk import discovered_versions
from support.tarballs import tree_snapshot, write_plugin

from .conftest import InstallEnv


def _root_with_a_linked_holder(
    install_env: InstallEnv, tmp_path: Path
) -> tuple[Path, Path, dict[str, str], dict[str, Path]]:
    """x 1.1.0 installed, the kept 1.0.0's holder moved outside the root and linked back."""
    dest = install_env.dest
    env = clean_env(NEXO_HOME=str(install_env.home))
    tarballs = {v: write_plugin(tmp_path / "dist", "x", v) for v in ("1.0.0", "1.1.0", "1.2.0")}
    for version in ("1.0.0", "1.1.0"):
        args: list[str | Path] = ["plugin", "install", tarballs[version], "--dest", dest, "--yes"]
        assert nexo(*args, env=env, in_process=True).exit_code == 0
    [holder] = (dest / ".nexo" / "kept").iterdir()
    outside = tmp_path / "outside"
    holder.rename(outside)
    holder.symlink_to(outside, target_is_directory=True)
    return dest, outside, env, tarballs


def test_rollback_puts_back_no_holder_that_is_a_link(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    dest, outside, env, _ = _root_with_a_linked_holder(install_env, tmp_path)
    before = tree_snapshot(outside)
    back = nexo("plugin", "rollback", "x", "--dest", dest, "--yes", "--json", env=env)
    assert back.exit_code == 1, back.stdout
    document = json.loads(back.stdout)
    assert document["kind"] == "not_installed"
    assert discovered_versions(dest) == {"x": "1.1.0"}
    assert not (dest / ".nexo" / "holds").exists()  # no hold at a version not installed
    assert tree_snapshot(outside) == before
    listed = json.loads(nexo("plugin", "list", "--dest", dest, "--json", env=env).stdout)
    assert [item["version"] for item in listed["plugins"]] == ["1.1.0"]


def test_install_and_remove_delete_nothing_through_a_holder_that_is_a_link(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    dest, outside, env, tarballs = _root_with_a_linked_holder(install_env, tmp_path)
    before = tree_snapshot(outside)
    args: list[str | Path] = [
        "plugin", "install", tarballs["1.2.0"], "--dest", dest, "--yes", "--json",
    ]  # fmt: skip
    installed = nexo(*args, env=env, in_process=True)
    assert installed.exit_code == 0, installed.stderr
    assert json.loads(installed.stdout)["pruned_kept_paths"] == []
    assert tree_snapshot(outside) == before
    removed = nexo("plugin", "remove", "x", "--dest", dest, "--yes", env=env, in_process=True)
    assert removed.exit_code == 0, removed.stderr
    assert tree_snapshot(outside) == before
    assert discovered_versions(dest) == {}


def test_doctor_names_a_kept_tree_whose_receipt_cannot_be_read(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    """A kept tree whose receipt is not JSON is skipped by list, rollback, pruning and remove
    alike: doctor is where the operator learns it takes space, with the command that deletes
    it; nothing is deleted by doctor."""
    dest = install_env.dest
    env = clean_env(NEXO_HOME=str(install_env.home))
    for version in ("1.0.0", "1.1.0"):
        tarball = write_plugin(tmp_path / "dist", "x", version)
        args: list[str | Path] = ["plugin", "install", tarball, "--dest", dest, "--yes"]
        assert nexo(*args, env=env, in_process=True).exit_code == 0
    [holder] = (dest / ".nexo" / "kept").iterdir()
    (holder / "tree" / ".nexo-install.json").write_text("{not json", encoding="utf-8")
    before = tree_snapshot(dest)
    doctor = nexo("plugin", "doctor", "--dest", dest, "--no-check", "--json", env=env)
    findings = json.loads(doctor.stdout)["findings"]
    [found] = [item for item in findings if item["path"] == str(holder)]
    assert (found["severity"], found["check"]) == ("warning", "leftover")
    assert "receipt unreadable" in found["message"]
    assert found["message"].endswith(f"delete it: rm -rf -- {holder}")
    assert tree_snapshot(dest) == before


@pytest.mark.parametrize("where", ["holder", "tree"])
def test_doctor_names_a_link_planted_under_kept_as_a_leftover(
    install_env: InstallEnv, tmp_path: Path, where: str
) -> None:
    """A link where kept versions go is skipped by list, rollback, pruning and remove (above):
    doctor names it as the leftover it is, with the command that deletes the link (never what
    it points to); doctor itself deletes nothing."""
    dest, outside, env, _ = _root_with_a_linked_holder(install_env, tmp_path)
    [link] = (dest / ".nexo" / "kept").iterdir()
    if where == "tree":
        # The holder is a real directory again; its tree is the link.
        link.unlink()
        link.mkdir()
        (outside / "tree").rename(tmp_path / "outside-tree")
        link = link / "tree"
        link.symlink_to(tmp_path / "outside-tree", target_is_directory=True)
    before = (
        tree_snapshot(dest),
        tree_snapshot(tmp_path / "outside-tree" if where == "tree" else outside),
    )
    doctor = nexo("plugin", "doctor", "--dest", dest, "--no-check", "--json", env=env)
    findings = json.loads(doctor.stdout)["findings"]
    [found] = [item for item in findings if item["path"] == str(link)]
    assert (found["severity"], found["check"]) == ("warning", "leftover")
    assert found["message"] == (
        "a symbolic link where kept versions go, never made by a run: no rollback puts it "
        f"back and no command deletes it; delete it (the link only): rm -- {link}"
    )
    text = nexo("plugin", "doctor", "--dest", dest, "--no-check", env=env)
    assert f"delete it (the link only): rm -- {link}" in text.stdout + text.stderr
    after = (
        tree_snapshot(dest),
        tree_snapshot(tmp_path / "outside-tree" if where == "tree" else outside),
    )
    assert after == before
    assert link.is_symlink()


def test_rollback_names_a_file_of_the_kept_tree_changed_two_ways_once(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    """A link put where a kept file was differs in content and in mode: the refusal names it
    once, in its line and in ``changed``, and nothing moves."""
    dest = install_env.dest
    env = clean_env(NEXO_HOME=str(install_env.home))
    for version in ("1.0.0", "1.1.0"):
        tarball = write_plugin(tmp_path / "dist", "x", version)
        args: list[str | Path] = ["plugin", "install", tarball, "--dest", dest, "--yes"]
        assert nexo(*args, env=env, in_process=True).exit_code == 0
    [holder] = (dest / ".nexo" / "kept").iterdir()
    (holder / "tree" / "bin" / "x").unlink()
    (holder / "tree" / "bin" / "x").symlink_to("/bin/sh")
    before = tree_snapshot(dest)
    refused = nexo("plugin", "rollback", "x", "--dest", dest, "--yes", "--json", env=env)
    assert refused.exit_code == 1
    document = json.loads(refused.stdout)
    assert document["kind"] == "checksum_mismatch"
    assert document["changed"] == ["bin/x"]
    assert "no longer matches its receipt (bin/x); nothing was changed" in document["error"]
    assert tree_snapshot(dest) == before
