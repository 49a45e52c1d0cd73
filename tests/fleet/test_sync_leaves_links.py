"""``sync`` never touches a development install (``install --link``): not replaced, not
pruned, its checkout untouched — the lock speaks for installed copies only."""

from __future__ import annotations

from pathlib import Path

from support.cli import nexo
from support.registry import Registry
from support.tarballs import manifest_text, tree_snapshot

from .conftest import MakeDist, fleet_run


def test_sync_with_prune_leaves_a_linked_checkout_alone(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    checkout = tmp_path / "src" / "hello"
    checkout.mkdir(parents=True)
    (checkout / "nexo-plugin.toml").write_text(manifest_text("hello", "0.1.0"))
    (checkout / "main.py").write_text("print('hi')\n")
    before = tree_snapshot(checkout)
    dest = tmp_path / "plugins"
    linked = nexo(
        "plugin",
        "install",
        "--link",
        str(checkout),
        "--dest",
        str(dest),
        env=fleet_env,
        in_process=True,
    )
    assert linked.code == 0, linked.stderr

    pushed = nexo(
        "plugin",
        "push",
        str(make_dist(identity=None)),
        registry.ref("plugins/echo"),
        "--plain-http",
        env=fleet_env,
        in_process=True,
    )
    assert pushed.code == 0, pushed.stderr
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.echo]\nsource = "{registry.ref("plugins/echo")}"\n')
    locked = nexo(
        "plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env, in_process=True
    )
    assert locked.code == 0, locked.stderr

    synced = fleet_run(
        "sync",
        "--lock",
        tmp_path / "nexo-plugins.lock",
        "--dest",
        str(dest),
        "--plain-http",
        "--prune",
        env=fleet_env,
    )
    assert synced.code == 0, synced.stdout + synced.stderr
    report = synced.document
    assert [(p["id"], p["action"]) for p in report["plugins"]] == [("echo", "installed")]
    assert (dest / "hello").is_symlink()
    assert (dest / "hello").readlink() == checkout
    assert tree_snapshot(checkout) == before
    assert sorted(p.name for p in dest.iterdir() if not p.name.startswith(".")) == [
        "echo-1.2.3",
        "hello",
    ]
    listed = nexo("plugin", "list", "--dest", str(dest), "--json", env=fleet_env, in_process=True)
    assert {(p["id"], p["source"]) for p in listed.document["plugins"]} >= {("hello", "link")}
