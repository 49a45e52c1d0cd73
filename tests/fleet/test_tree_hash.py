"""The lock's unpacked-tree hash and ``nexo plugin verify --lock``, against a real registry."""

from __future__ import annotations

import hashlib
import json
import shutil
import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo
from support.registry import Registry
from support.tarballs import directory, file, plugin_members, targz

from nexo_pkg.fleet.treehash import hash_directory, hash_tarball
from nexo_pkg.sources.archive import ArchiveLimits

from .conftest import LINUX, MakeDist, push_dist


def test_the_tree_hash_does_not_depend_on_the_order_of_the_tar_entries(tmp_path: Path) -> None:
    members = plugin_members("echo", "1.2.3", payload=b"data")
    # Reversed, and without the explicit directories (extraction implies them).
    shuffled = [m for m in reversed(members) if m.name not in {"bin", "lib", "lib/plugin"}]
    first, second = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz"
    first.write_bytes(targz(members))
    second.write_bytes(targz(shuffled))
    assert first.read_bytes() != second.read_bytes()
    limits = ArchiveLimits()
    assert hash_tarball(first, "echo", limits) == hash_tarball(second, "echo", limits)
    # bin/<id> is 0755 once installed, whatever the archive says; so is its hash.
    plain = [
        file(m.name, m.data) if m.name == "bin/echo" else m for m in members
    ]  # mode 0644 in the archive
    third = tmp_path / "c.tar.gz"
    third.write_bytes(targz(plain))
    assert hash_tarball(third, "echo", limits) == hash_tarball(first, "echo", limits)
    # Another mode, another content or another file is another hash.
    changed = [file("lib/plugin/main.py", "print('bye')\n") if m.name == "lib/plugin/main.py"
               else m for m in members]  # fmt: skip
    executable = [file(m.name, m.data, mode=0o755) if m.name == "lib/plugin/main.py" else m
                  for m in members]  # fmt: skip
    extra = [*members, directory("share"), file("share/x", "x")]
    hashes = {hash_tarball(first, "echo", limits)}
    for index, variant in enumerate((changed, executable, extra)):
        path = tmp_path / f"variant-{index}.tar.gz"
        path.write_bytes(targz(variant))
        hashes.add(hash_tarball(path, "echo", limits))
    assert len(hashes) == 4


@pytest.fixture
def synced_root(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> tuple[Path, Path]:
    """A lock made against a real registry and a root synced from it: (lock, root)."""
    return _lock_and_sync(tmp_path, fleet_env, registry, make_dist(identity=None, targets=(LINUX,)))


def _lock_and_sync(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, dist: Path
) -> tuple[Path, Path]:
    """Push ``dist``, lock it and sync it into a new root; the registry is stopped after."""
    push_dist(dist, registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    project = tmp_path / "fleet"
    project.mkdir()
    wanted = project / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.echo]\nsource = "{registry.ref("plugins/echo")}"\n')
    assert (
        nexo(
            "plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env, in_process=True
        ).code
        == 0
    )
    lock_file = project / "nexo-plugins.lock"
    root = tmp_path / "root"
    synced = nexo(
        "plugin",
        "sync",
        "--lock",
        str(lock_file),
        "--dest",
        str(root),
        "--frozen",
        "--plain-http",
        env=fleet_env,
        in_process=True,
    )
    assert synced.code == 0, synced.stderr
    registry.stop()  # verify --lock is offline
    return lock_file, root


def test_verify_lock_accepts_the_noarch_tarball_sync_installed_on_this_host(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    """A version published for noarch only: the receipt names the host's target, the lock
    only noarch, and that noarch row is what the installed tree answers to."""
    dist = make_dist(identity=None, targets=("noarch",))
    lock_file, root = _lock_and_sync(tmp_path, fleet_env, registry, dist)
    code, report = verify_lock(fleet_env, lock_file, root)
    assert code == 0, report
    (plugin,) = report["plugins"]
    assert (plugin["ok"], plugin["target"], plugin["problem"]) == (True, "noarch", None)
    assert plugin["actual_tree"] == plugin["tree"] == hash_directory(root / "echo-1.2.3")
    (root / "echo-1.2.3" / "lib" / "plugin" / "main.py").write_text("print('changed')\n")
    code, report = verify_lock(fleet_env, lock_file, root)
    assert code == 1
    assert report["plugins"][0]["modified"] == ["lib/plugin/main.py"]


def verify_lock(env: dict[str, str], lock_file: Path, root: Path) -> tuple[int, dict[str, Any]]:
    done = nexo(
        "plugin",
        "verify",
        "--lock",
        str(lock_file),
        "--dest",
        str(root),
        "--json",
        env=env,
        in_process=True,
    )
    return done.code, done.document


def documented_tree_hash(root: Path) -> str:
    """The ``n1:`` hash as docs/fleet.md defines it, written from that text alone: a line per
    entry below ``root`` (the receipt left out), ``d <mode> <path>`` for a directory,
    ``f <mode> <sha256 hex> <path>`` for a regular file, ``x 0000 - <path>`` for anything
    else, sorted by the path's UTF-8 bytes; ``n1:`` + the sha256 hex of the lines."""
    lines: dict[bytes, str] = {}
    for path in root.rglob("*"):
        relative = path.relative_to(root).as_posix()
        if relative == ".nexo-install.json":
            continue
        info = path.lstat()
        mode = f"{stat.S_IMODE(info.st_mode):04o}"
        if stat.S_ISDIR(info.st_mode):
            line = f"d {mode} {relative}\n"
        elif stat.S_ISREG(info.st_mode):
            line = f"f {mode} {hashlib.sha256(path.read_bytes()).hexdigest()} {relative}\n"
        else:
            line = f"x 0000 - {relative}\n"
        lines[relative.encode()] = line
    text = "".join(lines[key] for key in sorted(lines))
    return "n1:" + hashlib.sha256(text.encode()).hexdigest()


def test_the_lock_records_the_documented_tree_hash_of_the_synced_root(
    fleet_env: dict[str, str], synced_root: tuple[Path, Path]
) -> None:
    """Anyone can check a root against the lock from the documented definition alone."""
    lock_file, root = synced_root
    locked = tomllib.loads(lock_file.read_text())["plugins"]["echo"]["targets"][LINUX]["tree"]
    tree = root / "echo-1.2.3"
    assert locked == documented_tree_hash(tree)
    (tree / "lib" / "link").symlink_to("plugin")
    assert documented_tree_hash(tree) == hash_directory(tree) != locked


def test_the_lock_records_the_tree_hash_of_the_synced_root(
    fleet_env: dict[str, str], synced_root: tuple[Path, Path]
) -> None:
    lock_file, root = synced_root
    text = lock_file.read_text()
    recorded = next(line for line in text.splitlines() if line.startswith("tree = "))
    assert recorded == f'tree = "{hash_directory(root / "echo-1.2.3")}"'
    code, report = verify_lock(fleet_env, lock_file, root)
    assert code == 0, report
    (plugin,) = report["plugins"]
    assert (plugin["ok"], plugin["target"], plugin["actual_tree"]) == (True, LINUX, plugin["tree"])


# change -> (the report's list that names it, the path it names)
CHANGES = {
    "file": ("modified", "lib/plugin/main.py"),
    "mode": ("mode_changed", "lib/plugin/main.py"),
    "extra": ("extra", "lib/plugin/extra.py"),
    "missing": ("missing", "lib/plugin/main.py"),
    "extra-directory": ("extra", "lib/empty"),
    "extra-link": ("extra", "lib/link"),
    "directory-mode": ("mode_changed", "lib"),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_verify_lock_detects_a_changed_file_mode_or_extra_file(
    fleet_env: dict[str, str], synced_root: tuple[Path, Path], change: str
) -> None:
    """The tree hash has a line for every entry, directories and links included: an empty
    directory or a link added, or a directory's mode changed, is another tree."""
    lock_file, root = synced_root
    tree = root / "echo-1.2.3"
    main = tree / "lib" / "plugin" / "main.py"
    if change == "file":
        main.write_text("print('changed')\n")
    elif change == "mode":
        main.chmod(0o755)
    elif change == "extra":
        (tree / "lib" / "plugin" / "extra.py").write_text("")
    elif change == "missing":
        main.unlink()
    elif change == "extra-directory":
        (tree / "lib" / "empty").mkdir()
    elif change == "extra-link":
        (tree / "lib" / "link").symlink_to("plugin")
    else:
        (tree / "lib").chmod(0o700)
    before = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    code, report = verify_lock(fleet_env, lock_file, root)
    (tree / "lib").chmod(0o755)
    assert code == 1
    (plugin,) = report["plugins"]
    assert plugin["ok"] is False
    assert plugin["actual_tree"] != plugin["tree"]
    listed, name = CHANGES[change]
    assert name in plugin[listed]
    # Checking changes nothing.
    assert {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()} == before


def test_verify_lock_refuses_a_plugin_directory_every_user_can_write(
    fleet_env: dict[str, str], synced_root: tuple[Path, Path]
) -> None:
    """The tree hash covers what is below the plugin directory; the directory itself must be
    0755 as install made it, or anyone could add files the daemon runs."""
    lock_file, root = synced_root
    tree = root / "echo-1.2.3"
    tree.chmod(0o777)
    code, report = verify_lock(fleet_env, lock_file, root)
    assert code == 1
    (plugin,) = report["plugins"]
    assert plugin["ok"] is False
    assert plugin["actual_tree"] == plugin["tree"]  # nothing below it changed
    assert plugin["problem"] == "the plugin directory's mode is 0777, not 0755"
    assert plugin["mode_changed"] == ["."]
    tree.chmod(0o755)
    code, report = verify_lock(fleet_env, lock_file, root)
    assert code == 0, report


@pytest.mark.parametrize(
    ("mode", "ok"), [(0o775, True), (0o700, True), (0o777, False)], ids=["0775", "0700", "0777"]
)
def test_verify_lock_judges_a_reference_install_s_directory_by_its_suspicious_bits(
    fleet_env: dict[str, str], synced_root: tuple[Path, Path], mode: int, *, ok: bool
) -> None:
    """The reference installer records no modes and makes the plugin directory with
    ``create_dir_all`` (0777 less the umask: 0775 under the common umask 002, 0700 under 077),
    so its mode is no tampering; as ``verify`` does for such a receipt, only a bit no install
    sets (0777's other-write) fails it."""
    lock_file, root = synced_root
    tree = root / "echo-1.2.3"
    receipt_path = tree / ".nexo-install.json"
    receipt = json.loads(receipt_path.read_text())
    reference = {key: receipt[key] for key in (
        "schema_version", "id", "version", "owner", "repo", "tag", "target", "sha256",
        "installed_at", "source")}  # fmt: skip
    receipt_path.write_text(json.dumps(reference, indent=2))
    tree.chmod(mode)
    try:
        code, report = verify_lock(fleet_env, lock_file, root)
    finally:
        tree.chmod(0o755)
    (plugin,) = report["plugins"]
    assert plugin["actual_tree"] == plugin["tree"]
    assert (code, plugin["ok"]) == ((0, True) if ok else (1, False)), report
    assert plugin["problem"] == (None if ok else "the plugin directory's mode is 0777, not 0755")


def test_verify_lock_says_what_it_cannot_check(
    tmp_path: Path, fleet_env: dict[str, str], synced_root: tuple[Path, Path]
) -> None:
    lock_file, root = synced_root
    # A lock written before tree hashes: it says so, exit 1.
    old = tmp_path / "old.lock"
    old.write_text("\n".join(line for line in lock_file.read_text().splitlines()
                             if not line.startswith("tree = ")) + "\n")  # fmt: skip
    code, report = verify_lock(fleet_env, old, root)
    assert code == 1
    assert "records no tree hash" in report["plugins"][0]["problem"]
    # A plugin the root does not hold.
    code, report = verify_lock(fleet_env, lock_file, tmp_path / "empty-root")
    assert code == 1
    assert report["plugins"][0]["problem"].startswith("not installed")
    # A malformed tree value is a malformed lock (exit 2).
    bad = tmp_path / "bad.lock"
    bad.write_text(lock_file.read_text().replace('tree = "n1:', 'tree = "x1:'))
    code, report = verify_lock(fleet_env, bad, root)
    assert code == 2
    assert report["kind"] == "lock_invalid"
    assert json.loads(json.dumps(report))["ok"] is False


def test_verify_lock_of_an_id_the_lock_does_not_name_is_refused_not_passed(
    fleet_env: dict[str, str], synced_root: tuple[Path, Path]
) -> None:
    lock_file, root = synced_root

    def verify(plugin_id: str) -> tuple[int, dict[str, Any]]:
        done = nexo(
            "plugin", "verify", plugin_id, "--lock", str(lock_file), "--dest", str(root),
            "--json", env=fleet_env, in_process=True,
        )  # fmt: skip
        return done.code, done.document

    code, report = verify("echo")
    assert (code, [item["id"] for item in report["plugins"]]) == (0, ["echo"])
    code, report = verify("ehco")  # a typo vouches for nothing: it is not an empty pass
    assert (code, report["kind"]) == (2, "usage"), report
    assert "ehco" in report["error"]
    assert "echo" in report["error"]  # the ids the lock does name


def test_a_removal_leftover_the_daemon_skips_is_no_install_for_verify_lock_and_sync(
    fleet_env: dict[str, str], synced_root: tuple[Path, Path]
) -> None:
    """The reference installer's ``remove`` left ``echo-1.2.3.removing-<8 hex>`` beside the
    synced ``echo-1.2.3``, which the daemon loads (it sorts first) while skipping the
    leftover: as for ``list``, ``verify`` and ``doctor``, it is no second install of echo.
    ``verify --lock`` passes and ``sync --frozen`` (offline: the registry is stopped) finds
    echo unchanged and touches nothing."""
    lock_file, root = synced_root
    leftover = root / "echo-1.2.3.removing-0badf00d"
    shutil.copytree(root / "echo-1.2.3", leftover)
    code, report = verify_lock(fleet_env, lock_file, root)
    assert code == 0, report
    (plugin,) = report["plugins"]
    assert (plugin["ok"], plugin["path"], plugin["problem"]) == (
        True,
        str(root / "echo-1.2.3"),
        None,
    )
    before = sorted(str(path.relative_to(root)) for path in root.rglob("*"))
    args = ["plugin", "sync", "--lock", str(lock_file), "--dest", str(root), "--frozen"]
    synced = nexo(*args, "--plain-http", "--json", env=fleet_env, in_process=True)
    assert synced.code == 0, synced.stdout + synced.stderr
    [outcome] = synced.document["plugins"]
    assert (outcome["id"], outcome["action"], outcome["version"]) == ("echo", "unchanged", "1.2.3")
    assert sorted(str(path.relative_to(root)) for path in root.rglob("*")) == before


def test_sync_deletes_what_an_interrupted_run_left_as_doctor_says(
    fleet_env: dict[str, str], synced_root: tuple[Path, Path]
) -> None:
    """``doctor`` names ``sync`` among the commands that delete a tree left under
    ``.nexo/removing``; a ``sync --frozen`` with nothing to change (offline: the registry is
    stopped) does delete it, and changes nothing else."""
    lock_file, root = synced_root
    left = root / ".nexo" / "removing" / "echo-1.2.2-0123456789ab"
    shutil.copytree(root / "echo-1.2.3", left / "tree")
    doctor = nexo("plugin", "doctor", "--dest", str(root), "--no-check", "--json", env=fleet_env)
    [finding] = [f for f in doctor.document["findings"] if f["check"] == "leftover"]
    assert finding["path"] == str(left)
    assert "the next install, remove, rollback or sync on the root" in finding["message"]
    before = {
        str(path.relative_to(root))
        for path in root.rglob("*")
        if not path.is_relative_to(root / ".nexo")
    }
    args = ["plugin", "sync", "--lock", str(lock_file), "--dest", str(root), "--frozen"]
    synced = nexo(*args, "--plain-http", "--json", env=fleet_env, in_process=True)
    assert synced.code == 0, synced.stdout + synced.stderr
    assert [item["action"] for item in synced.document["plugins"]] == ["unchanged"]
    assert not left.exists()
    assert {str(path.relative_to(root)) for path in root.rglob("*")} == before
