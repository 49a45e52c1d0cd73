"""``lock`` and ``sync`` take install's archive limit flags (SPEC §5 step 6): a plugin past the
10,000-entry default, pushed to the real registry, is refused with ``archive_unsafe`` naming
the flag (the lock and the root untouched) and goes through with ``--max-entries 20000``."""

from __future__ import annotations

from pathlib import Path

from support.cli import nexo
from support.registry import Registry
from support.tarballs import file, manifest_text, plugin_members, targz, tree_snapshot, write_plugin

from .conftest import LINUX, push_dist

EXTRA_FILES = 10_050
RAISED = ("--max-entries", "20000")


def _big_dist(directory: Path) -> Path:
    """What ``pack`` writes for bulky 1.0.0 (linux, unsigned): 10,050 small files beside the
    plugin."""
    members = plugin_members("bulky", "1.0.0")
    members += [file(f"share/sdk/f{index}", "") for index in range(EXTRA_FILES)]
    write_plugin(directory, "bulky", "1.0.0", target=LINUX, data=targz(members))
    (directory / "nexo-plugin.toml").write_text(manifest_text("bulky", "1.0.0"))
    return directory


def test_lock_and_sync_of_a_plugin_past_the_entry_limit_take_max_entries(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry
) -> None:
    home = Path(fleet_env["NEXO_HOME"])
    reference = registry.ref("plugins/bulky")
    push_dist(_big_dist(tmp_path / "dist"), reference, home)
    project = tmp_path / "project"
    project.mkdir()
    wanted = project / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.bulky]\nsource = "{reference}"\n', encoding="utf-8")
    lock, root = project / "nexo-plugins.lock", tmp_path / "root"
    lock_args = ("plugin", "lock", "-f", str(wanted), "--plain-http")
    sync_args = ("plugin", "sync", "--lock", str(lock), "--dest", str(root), "--plain-http")

    refused = nexo(*lock_args, env=fleet_env)
    assert refused.code == 1, refused.stderr
    assert "(raise the limit with --max-entries) [archive_unsafe]" in refused.stderr
    assert not lock.exists()
    locked = nexo(*lock_args, *RAISED, env=fleet_env)
    assert locked.code == 0, locked.stderr
    locked_text = lock.read_text(encoding="utf-8")

    for arguments in (sync_args, (*sync_args, "--frozen")):
        failed = nexo(*arguments, "--json", env=fleet_env)
        assert failed.code == 1, failed.stderr
        (outcome,) = failed.document["plugins"]
        assert outcome["kind"] == "archive_unsafe", outcome
        assert "(raise the limit with --max-entries)" in outcome["error"]
        assert "nexo plugin install" not in outcome["error"]
        left = tree_snapshot(root)
        assert not [name for name in left if "bulky" in name], left
        assert lock.read_text(encoding="utf-8") == locked_text

    synced = nexo(*sync_args, "--frozen", *RAISED, env=fleet_env)
    assert synced.code == 0, synced.stderr
    (installed,) = [p for p in root.iterdir() if p.name.startswith("bulky")]
    assert (installed / "share" / "sdk" / f"f{EXTRA_FILES - 1}").is_file()
    assert lock.read_text(encoding="utf-8") == locked_text
