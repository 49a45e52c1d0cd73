"""``remove`` whose tree cannot all be deleted: the plugin leaves the daemon's sight, and the
command says honestly that its files were left (one ``io`` line naming where, exit 1) instead
of reporting success."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.daemon_walk import discovered_versions
from support.tarballs import release_assets, write_plugin

from .conftest import InstallEnv
from .test_receipts import _write_reference_install


def _chattr(flag: str, path: Path) -> bool:
    chattr = shutil.which("chattr")
    if chattr is None:
        return False
    done = subprocess.run([chattr, flag, str(path)], capture_output=True, check=False)
    return done.returncode == 0


@pytest.fixture
def undeletable(install_env: InstallEnv, tmp_path: Path) -> Iterator[Path]:
    """Plugin ``x`` 1.0.0 installed in the root, one of its files made undeletable: as root
    (who deletes whatever the modes say) an immutable file, else a read-only directory."""
    tarball = write_plugin(tmp_path / "dist", "x", "1.0.0")
    env = clean_env(NEXO_HOME=str(install_env.home))
    installed = nexo(
        "plugin", "install", tarball, "--dest", install_env.dest, "--yes", env=env, in_process=True
    )
    assert installed.exit_code == 0, installed.stderr
    tree = install_env.dest / "x-1.0.0"
    as_root = os.name == "posix" and os.geteuid() == 0
    if as_root:
        stuck = tree / "bin" / "x"
        if not _chattr("+i", stuck):
            pytest.skip("as root, a file is undeletable only with chattr +i, not available here")
    else:
        stuck = tree / "bin"
        stuck.chmod(0o555)
    try:
        yield tree
    finally:
        for found in install_env.dest.glob(".nexo/removing/*/tree/bin"):
            if as_root:
                _chattr("-i", found / "x")
            else:
                found.chmod(0o755)
        if as_root:
            _chattr("-i", stuck)
        elif stuck.exists():
            stuck.chmod(0o755)


@pytest.mark.skipif(os.name != "posix", reason="permissions and chattr are POSIX")
@pytest.mark.parametrize("json_output", [False, True])
def test_remove_that_leaves_files_says_so(
    install_env: InstallEnv, undeletable: Path, json_output: bool
) -> None:
    dest = install_env.dest
    env = clean_env(NEXO_HOME=str(install_env.home))
    args = ["plugin", "remove", "x", "--dest", str(dest), "--yes"]
    result = nexo(*args, *(["--json"] if json_output else []), env=env, in_process=True)
    assert result.exit_code == 1, result.stdout + result.stderr
    # No longer installed: out of the daemon's sight, no receipt left in the root.
    assert not undeletable.exists()
    assert discovered_versions(dest) == {}
    [left] = list(dest.glob(".nexo/removing/*"))
    assert (left / "tree" / "bin").is_dir()
    if json_output:
        document = json.loads(result.stdout)
        assert document["ok"] is False
        assert document["kind"] == "io"
        assert document["removed"] == [str(undeletable)]
        assert document["left"] == [str(left)]
    else:
        assert "Removed" not in result.stdout
        [line] = result.stderr.splitlines()
        assert line.startswith("error: x is no longer installed")
        assert str(left) in line
        assert line.endswith(
            f"{left} left (the next install, remove, rollback or sync on the root, or an "
            "upgrade that installs a version, deletes it once it can) [io]"
        )
    listed = nexo("plugin", "list", "--dest", dest, "--json", env=env, in_process=True)
    assert json.loads(listed.stdout)["plugins"] == []


@pytest.mark.skipif(os.name != "posix", reason="chattr is POSIX")
@pytest.mark.parametrize("json_output", [False, True])
def test_upgrade_pruning_a_kept_version_that_leaves_files_says_so(
    install_env: InstallEnv, json_output: bool
) -> None:
    """Upgrade keeps one previous version and removes the others; one whose files cannot all
    be deleted is said, as `remove` says it: a warning naming where it is left (in --json
    among the warnings). The upgrade itself succeeded (exit 0)."""
    if os.geteuid() != 0:
        pytest.skip("an undeletable file needs chattr +i, as root")
    dest = install_env.dest
    older = _write_reference_install(dest, "hello", "1.0.0", "latest")
    _write_reference_install(dest, "hello", "1.1.0", "latest")
    stuck = next(path for path in sorted(older.rglob("*")) if path.is_file())
    if not _chattr("+i", stuck):
        pytest.skip("chattr +i is not available here")
    install_env.server.publish("acme", "hello", "v1.2.0", release_assets("hello", "1.2.0"))
    env = clean_env(
        NEXO_HOME=str(install_env.home),
        NEXO_GITHUB_API_BASE=install_env.server.url,
        NEXO_HTTP_RETRY_BASE_MS="1",
    )
    try:
        args = ["plugin", "upgrade", "hello", "--yes", "--dest", str(dest)]
        result = nexo(*args, *(["--json"] if json_output else []), env=env, in_process=True)
        [left] = list(dest.glob(".nexo/removing/*"))
    finally:
        for found in dest.glob(f".nexo/removing/*/tree/{stuck.relative_to(older)}"):
            _chattr("-i", found)
        _chattr("-i", stuck)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert discovered_versions(dest) == {"hello": "1.2.0"}
    said = (
        f"a removed version's files could not all be deleted: {left} left (the next install, "
        "remove, rollback or sync on the root, or an upgrade that installs a version, deletes "
        "it once it can)"
    )
    if json_output:
        document = json.loads(result.stdout)
        [pruned] = document["pruned_kept_paths"]
        assert said in document["warnings"]
        assert pruned not in document["replaced"]
    else:
        # Never said removed: what could not be deleted is said once, as what it is.
        assert "Removed the version kept before it" not in result.stdout + result.stderr
        lines = result.stderr.splitlines()
        [line] = [line for line in lines if "no longer kept" in line]
        assert line.startswith(f"The version kept before it ({dest}/.nexo/kept/hello-1.0.0-")
        assert line.endswith("/tree) is no longer kept, but its files could not all be deleted.")
        assert lines[lines.index(line) + 1] == f"warning: {said}"


@pytest.mark.skipif(os.name != "posix", reason="permissions and chattr are POSIX")
@pytest.mark.parametrize("cleaner", ["install", "rollback"])
def test_what_remove_left_is_deleted_by_the_commands_it_names(
    install_env: InstallEnv, undeletable: Path, tmp_path: Path, cleaner: str
) -> None:
    """The line says which commands delete what was left: reading commands (``list``,
    ``verify``, ``doctor``, which names it with the same commands) leave it, the next install
    or rollback on the root deletes it (``sync``: tests/fleet/test_tree_hash.py)."""
    dest = install_env.dest
    env = clean_env(NEXO_HOME=str(install_env.home))
    if cleaner == "rollback":
        # A plugin with a version kept for rollback, installed before the leftover is made.
        for version in ("1.0.0", "1.1.0"):
            tarball = write_plugin(tmp_path / "dist-z", "z", version)
            args = ["plugin", "install", str(tarball), "--dest", str(dest), "--yes"]
            assert nexo(*args, env=env, in_process=True).exit_code == 0
    removed = nexo("plugin", "remove", "x", "--dest", dest, "--yes", env=env, in_process=True)
    assert removed.exit_code == 1, removed.stderr
    [left] = list(dest.glob(".nexo/removing/*"))
    for found in left.glob("tree/bin"):
        if os.geteuid() == 0:
            _chattr("-i", found / "x")
        else:
            found.chmod(0o755)
    for reading in ("list", "verify", "doctor"):
        nexo("plugin", reading, "--dest", dest, env=env, in_process=True)
        assert left.is_dir(), reading
    doctor = nexo("plugin", "doctor", "--dest", dest, "--no-check", "--json", env=env)
    [finding] = [f for f in json.loads(doctor.stdout)["findings"] if f["check"] == "leftover"]
    assert (finding["path"], finding["message"]) == (
        str(left),
        "left by an interrupted run or a removal that could not delete all its files; the next "
        "install, remove, rollback or sync on the root, or an upgrade that installs a version, "
        "deletes it once it can",
    )
    if cleaner == "install":
        tarball = write_plugin(tmp_path / "other", "y", "1.0.0")
        args = ["plugin", "install", str(tarball), "--dest", str(dest), "--yes"]
    else:
        args = ["plugin", "rollback", "z", "--dest", str(dest), "--yes"]
    assert nexo(*args, env=env, in_process=True).exit_code == 0
    assert not left.exists()
    if cleaner == "rollback":
        assert discovered_versions(dest) == {"z": "1.0.0"}
