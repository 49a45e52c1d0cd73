"""``sync --prune`` removes a plugin the lock does not name as ``nexo plugin remove`` does:
its installed version, the versions kept for it and its hold (docs/install.md: "`remove`
ends it too"), so nothing of it is left for ``list`` to show or ``rollback`` to bring back."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support.cli import nexo
from support.registry import Registry

from .conftest import LINUX, MakeDist, push_dist


def _lock(project: Path, registry: Registry, plugins: dict[str, str], env: dict[str, str]) -> Path:
    project.mkdir(parents=True, exist_ok=True)
    wanted = project / "nexo-plugins.toml"
    wanted.write_text(
        "".join(
            f'[plugins.{name}]\nsource = "{registry.ref(f"plugins/{name}")}"\n'
            f'version = "{requirement}"\n'
            for name, requirement in plugins.items()
        )
    )
    locked = nexo("plugin", "lock", "-f", str(wanted), "--plain-http", env=env, in_process=True)
    assert locked.code == 0, locked.stderr
    return project / "nexo-plugins.lock"


def test_prune_removes_the_kept_versions_and_the_hold_too(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    home = Path(fleet_env["NEXO_HOME"])
    for name, version in (("alpha", "1.0.0"), ("alpha", "1.1.0"), ("beta", "1.0.0")):
        dist = make_dist(name, version, identity=None, targets=(LINUX,))
        push_dist(dist, registry.ref(f"plugins/{name}"), home)
    older = _lock(tmp_path / "older", registry, {"alpha": "=1.0.0"}, fleet_env)
    newer = _lock(tmp_path / "newer", registry, {"alpha": "=1.1.0"}, fleet_env)
    other = _lock(tmp_path / "other", registry, {"beta": "=1.0.0"}, fleet_env)
    root = tmp_path / "root"

    def sync(lock: Path, *flags: str) -> dict[str, object]:
        synced = nexo(
            "plugin", "sync", "--lock", str(lock), "--dest", str(root), "--plain-http",
            "--frozen", "--json", *flags, env=fleet_env, in_process=True,
        )  # fmt: skip
        assert synced.code == 0, synced.stderr
        return synced.document

    sync(older)
    sync(newer)  # alpha 1.0.0 kept for rollback
    rolled = nexo(
        "plugin", "rollback", "alpha", "--dest", str(root), "--yes", "--json",
        env=fleet_env, in_process=True,
    )  # fmt: skip
    assert rolled.code == 0, rolled.stderr
    assert rolled.document["held"] is True  # alpha 1.0.0 held, 1.1.0 kept
    hold = root / ".nexo" / "holds" / "alpha.json"
    assert hold.is_file()

    plan = sync(other, "--prune", "--dry-run")["plan"]
    assert isinstance(plan, list)
    removing = {"id": "alpha", "action": "remove", "from_version": "1.0.0", "version": None}
    assert {**removing, "releases_hold": "1.0.0"} in plan

    plugins = sync(other, "--prune")["plugins"]
    assert isinstance(plugins, list)
    (removal,) = [item for item in plugins if item["id"] == "alpha"]
    assert removal["action"] == "removed"
    assert removal["change"] == "remove"
    assert removal["released_hold"] == "1.0.0"
    assert not hold.exists()
    listing = nexo("plugin", "list", "--dest", str(root), "--json", env=fleet_env, in_process=True)
    assert [(item["id"], item["kept"]) for item in listing.document["plugins"]] == [("beta", False)]
    back = nexo(
        "plugin", "rollback", "alpha", "--dest", str(root), "--yes", "--json",
        env=fleet_env, in_process=True,
    )  # fmt: skip
    assert back.code == 1
    assert back.document["kind"] == "not_installed"
    assert not (root / "alpha-1.1.0").exists()
    assert not (root / "alpha-1.0.0").exists()

    text = nexo(
        "plugin", "sync", "--lock", str(other), "--dest", str(root), "--plain-http",
        "--frozen", "--prune", env=fleet_env, in_process=True,
    )  # fmt: skip
    assert text.code == 0, text.stderr  # nothing left of alpha to prune again
    assert "alpha" not in text.stderr


def test_the_plan_says_which_holds_the_run_ends(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    """A sync that changes a held plugin ends its hold (the lock names the version): its dry
    run says so with that change, and not for a held plugin it leaves unchanged."""
    home = Path(fleet_env["NEXO_HOME"])
    for version in ("1.0.0", "1.1.0"):
        dist = make_dist("alpha", version, identity=None, targets=(LINUX,))
        push_dist(dist, registry.ref("plugins/alpha"), home)
    older = _lock(tmp_path / "older", registry, {"alpha": "=1.0.0"}, fleet_env)
    newer = _lock(tmp_path / "newer", registry, {"alpha": "=1.1.0"}, fleet_env)
    root = tmp_path / "root"

    def sync(lock: Path, *flags: str) -> tuple[dict[str, object], str]:
        synced = nexo(
            "plugin", "sync", "--lock", str(lock), "--dest", str(root), "--plain-http",
            "--frozen", *flags, env=fleet_env, in_process=True,
        )  # fmt: skip
        assert synced.code == 0, synced.stderr
        return (synced.document if "--json" in flags else {}), synced.stdout

    sync(older)
    sync(newer)
    rolled = nexo(
        "plugin", "rollback", "alpha", "--dest", str(root), "--yes", env=fleet_env, in_process=True
    )
    assert rolled.code == 0, rolled.stderr  # alpha 1.0.0 held

    same, text = sync(older, "--dry-run", "--json")
    assert same["plan"] == [
        {"id": "alpha", "action": "unchanged", "from_version": "1.0.0", "version": "1.0.0"}
    ]
    assert sync(older, "--json")[0]["plugins"][0].get("released_hold") is None  # type: ignore[index]
    assert (root / ".nexo" / "holds" / "alpha.json").is_file()

    planned, _ = sync(newer, "--dry-run", "--json")
    assert planned["plan"] == [
        {
            "id": "alpha",
            "action": "upgrade",
            "from_version": "1.0.0",
            "version": "1.1.0",
            "releases_hold": "1.0.0",
        }
    ]
    _, text = sync(newer, "--dry-run")
    assert "upgrade; ends the hold at 1.0.0" in text
    done, _ = sync(newer, "--json")
    assert done["plugins"][0]["released_hold"] == "1.0.0"  # type: ignore[index]
    assert not (root / ".nexo" / "holds" / "alpha.json").exists()


def _chattr(flag: str, path: Path) -> bool:
    chattr = shutil.which("chattr")
    if chattr is None:
        return False
    done = subprocess.run([chattr, flag, str(path)], capture_output=True, check=False)
    return done.returncode == 0


@pytest.mark.skipif(os.name != "posix", reason="chattr is POSIX")
@pytest.mark.parametrize("json_output", [False, True])
def test_prune_that_leaves_files_says_so(
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    json_output: bool,
) -> None:
    """A plugin pruned whose files cannot all be deleted leaves the daemon's sight as `remove`
    leaves it, and the run says where its files are left: a warning line naming the path
    (with --json, among the plugin's warnings); its report line is still `removed`."""
    if os.geteuid() != 0:
        pytest.skip("an undeletable file needs chattr +i, as root")
    home = Path(fleet_env["NEXO_HOME"])
    for name in ("alpha", "beta"):
        dist = make_dist(name, "1.0.0", identity=None, targets=(LINUX,))
        push_dist(dist, registry.ref(f"plugins/{name}"), home)
    first = _lock(tmp_path / "first", registry, {"alpha": "=1.0.0"}, fleet_env)
    other = _lock(tmp_path / "other", registry, {"beta": "=1.0.0"}, fleet_env)
    root = tmp_path / "root"
    base = ["plugin", "sync", "--dest", str(root), "--plain-http", "--frozen"]
    synced = nexo(*base, "--lock", str(first), env=fleet_env, in_process=True)
    assert synced.code == 0, synced.stderr
    tree = root / "alpha-1.0.0"
    stuck = next(path for path in sorted(tree.rglob("*")) if path.is_file())
    if not _chattr("+i", stuck):
        pytest.skip("chattr +i is not available here")
    flags = ["--prune", *(["--json"] if json_output else [])]
    try:
        pruned = nexo(*base, "--lock", str(other), *flags, env=fleet_env, in_process=True)
        [left] = list(root.glob(".nexo/removing/*"))
    finally:
        for found in root.glob(f".nexo/removing/*/tree/{stuck.relative_to(tree)}"):
            _chattr("-i", found)
        _chattr("-i", stuck)
    assert pruned.code == 0, pruned.stderr
    assert not tree.exists()
    said = (
        f"a removed version's files could not all be deleted: {left} left (the next install, "
        "remove, rollback or sync on the root, or an upgrade that installs a version, deletes "
        "it once it can)"
    )
    if json_output:
        [removal] = [item for item in pruned.document["plugins"] if item["id"] == "alpha"]
        assert (removal["action"], removal["change"]) == ("removed", "remove")
        assert removal["warnings"] == [said]
    else:
        assert f"warning: alpha: {said}" in pruned.stderr.splitlines()
