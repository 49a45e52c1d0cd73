"""What ``sync`` keeps for ``rollback`` when it puts back the locked artifact of the version
already installed (a receipt that no longer matches the lock, as after a tag pushed again):
the tree replaced at the same path is not a version to roll back to, so it is neither said
to be kept nor allowed to push out the version an earlier sync kept."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import nexo
from support.registry import Registry

from .conftest import LINUX, MakeDist, push_dist


def _lock(project: Path, registry: Registry, requirement: str, env: dict[str, str]) -> Path:
    """``project``'s lock of alpha at ``requirement``."""
    project.mkdir(parents=True, exist_ok=True)
    wanted = project / "nexo-plugins.toml"
    source = registry.ref("plugins/alpha")
    wanted.write_text(f'[plugins.alpha]\nsource = "{source}"\nversion = "{requirement}"\n')
    locked = nexo("plugin", "lock", "-f", str(wanted), "--plain-http", env=env, in_process=True)
    assert locked.code == 0, locked.stderr
    return project / "nexo-plugins.lock"


def _listed(root: Path, env: dict[str, str]) -> list[tuple[str, bool]]:
    listing = nexo("plugin", "list", "--dest", str(root), "--json", env=env, in_process=True)
    return sorted((entry["version"], entry["kept"]) for entry in listing.document["plugins"])


def _two_locked_versions(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> tuple[Path, Path]:
    """alpha 1.0.0 and 1.1.0 pushed unsigned, and a lock pinning each: (newer, older)."""
    home = Path(fleet_env["NEXO_HOME"])
    for version in ("1.0.0", "1.1.0"):
        dist = make_dist("alpha", version, identity=None, targets=(LINUX,))
        push_dist(dist, registry.ref("plugins/alpha"), home)
    newer = _lock(tmp_path / "newer", registry, "=1.1.0", fleet_env)
    older = _lock(tmp_path / "older", registry, "=1.0.0", fleet_env)
    return newer, older


def test_reinstalling_the_locked_version_keeps_the_version_kept_before(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    newer, older = _two_locked_versions(tmp_path, fleet_env, registry, make_dist)
    root = tmp_path / "root"

    def sync(lock: Path) -> dict[str, object]:
        synced = nexo(
            "plugin", "sync", "--lock", str(lock), "--dest", str(root), "--plain-http",
            "--frozen", "--json", env=fleet_env, in_process=True,
        )  # fmt: skip
        assert synced.code == 0, synced.stderr
        (plugin,) = synced.document["plugins"]
        assert isinstance(plugin, dict)
        return plugin

    sync(newer)
    downgraded = sync(older)
    assert downgraded["change"] == "downgrade"
    assert _listed(root, fleet_env) == [("1.0.0", False), ("1.1.0", True)]

    # The receipt no longer matches the lock (its tarball's hash): the locked artifact is
    # put back at the same path.
    receipt = root / "alpha-1.0.0" / ".nexo-install.json"
    document = json.loads(receipt.read_text())
    receipt.write_text(json.dumps({**document, "sha256": "0" * 64}))
    reinstalled = sync(older)
    assert reinstalled["version"] == "1.0.0"
    assert reinstalled.get("kept_paths", []) == []
    assert _listed(root, fleet_env) == [("1.0.0", False), ("1.1.0", True)]
    assert json.loads(receipt.read_text())["sha256"] == document["sha256"]
    text = nexo(
        "plugin", "sync", "--lock", str(older), "--dest", str(root), "--plain-http",
        "--frozen", env=fleet_env, in_process=True,
    )  # fmt: skip
    assert text.code == 0
    assert "kept for rollback" not in text.stderr


def test_a_sync_that_changes_a_held_plugin_says_it_released_the_hold(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    """The lock names another version of a held plugin: sync installs it (the lock decides),
    and the hold it ends is said, in the text and as ``released_hold`` in ``--json``."""
    newer, older = _two_locked_versions(tmp_path, fleet_env, registry, make_dist)
    root = tmp_path / "root"
    common = ("--dest", str(root), "--plain-http", "--frozen")

    def synced(lock: Path, *extra: str) -> tuple[int, str, str]:
        run = nexo("plugin", "sync", "--lock", str(lock), *common, *extra, env=fleet_env,
                   in_process=True)  # fmt: skip
        return run.code, run.stdout, run.stderr

    assert synced(older)[0] == 0
    held = nexo("plugin", "hold", "alpha", "--dest", str(root), env=fleet_env, in_process=True)
    assert held.code == 0, held.stderr
    code, _, err = synced(newer)
    assert code == 0, err
    assert "alpha 1.0.0 \u2192 1.1.0: upgraded" in err
    assert "hold at 1.0.0 released (the lock names 1.1.0)" in err
    assert not (root / ".nexo" / "holds" / "alpha.json").exists()
    # Held again, and synced back as --json: the document names the hold it released.
    assert nexo("plugin", "hold", "alpha", "--dest", str(root), env=fleet_env,
                in_process=True).code == 0  # fmt: skip
    code, out, err = synced(older, "--json")
    assert code == 0, err
    (plugin,) = json.loads(out)["plugins"]
    assert (plugin["change"], plugin["released_hold"]) == ("downgrade", "1.1.0")
    # A sync that finds the plugin in place keeps the hold, and says nothing of one.
    assert nexo("plugin", "hold", "alpha", "--dest", str(root), env=fleet_env,
                in_process=True).code == 0  # fmt: skip
    code, out, err = synced(older, "--json")
    assert code == 0, err
    (plugin,) = json.loads(out)["plugins"]
    assert plugin["action"] == "unchanged"
    assert "released_hold" not in plugin
    assert (root / ".nexo" / "holds" / "alpha.json").exists()
