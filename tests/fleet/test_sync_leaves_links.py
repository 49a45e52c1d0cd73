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


def test_a_locked_plugin_linked_for_development_fails_alone_with_a_remedy_sync_takes(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    checkout = tmp_path / "src" / "echo"
    checkout.mkdir(parents=True)
    (checkout / "nexo-plugin.toml").write_text(manifest_text("echo", "0.1.0"))
    before = tree_snapshot(checkout)
    dest = tmp_path / "plugins"
    linked = nexo(
        "plugin", "install", "--link", str(checkout), "--dest", str(dest),
        env=fleet_env, in_process=True,
    )  # fmt: skip
    assert linked.code == 0, linked.stderr
    wanted = tmp_path / "nexo-plugins.toml"
    for plugin_id in ("echo", "other"):
        dist = make_dist(plugin_id, "1.2.3", identity=None)
        pushed = nexo(
            "plugin", "push", str(dist), registry.ref(f"plugins/{plugin_id}"), "--plain-http",
            env=fleet_env, in_process=True,
        )  # fmt: skip
        assert pushed.code == 0, pushed.stderr
    wanted.write_text(
        f'[plugins.echo]\nsource = "{registry.ref("plugins/echo")}"\n\n'
        f'[plugins.other]\nsource = "{registry.ref("plugins/other")}"\n'
    )
    locked = nexo(
        "plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env, in_process=True
    )
    assert locked.code == 0, locked.stderr

    lock_file = tmp_path / "nexo-plugins.lock"
    # The rehearsal says what the run then does: echo refused with the run's words, other in.
    before_root = tree_snapshot(dest)
    planned = fleet_run(
        "sync", "--lock", lock_file, "--dest", str(dest), "--dry-run", env=fleet_env
    )
    assert tree_snapshot(dest) == before_root
    synced = fleet_run(
        "sync", "--lock", lock_file, "--dest", str(dest), "--plain-http", env=fleet_env
    )
    assert synced.code == 1, synced.stderr
    outcomes = {p["id"]: p for p in synced.document["plugins"]}
    steps = {step["id"]: step for step in planned.document["plan"]}
    assert (planned.code, planned.document["kind"]) == (synced.code, synced.document["kind"])
    assert (steps["echo"]["kind"], steps["echo"]["error"]) == (
        outcomes["echo"]["kind"],
        outcomes["echo"]["error"],
    )
    assert (steps["other"]["action"], "error" in steps["other"]) == ("install", False)
    assert (outcomes["echo"]["action"], outcomes["echo"]["kind"]) == ("failed", "already_installed")
    assert outcomes["other"]["action"] == "installed"
    # The remedy is one sync takes: it has no --force (install's way past the link).
    error = outcomes["echo"]["error"]
    assert "--force" not in error
    assert "sync never replaces a development link" in error
    # It names the root sync was given: without --dest, remove would look in the default one.
    assert f"`nexo plugin remove echo --dest {dest}`" in error
    assert "--force" not in synced.stderr
    assert (dest / "echo").readlink() == checkout
    assert tree_snapshot(checkout) == before
    # Following the remedy works: the link goes, the checkout stays, the lock's echo comes.
    removed = nexo(
        "plugin", "remove", "echo", "--dest", str(dest), "--yes", env=fleet_env, in_process=True
    )
    assert removed.code == 0, removed.stderr
    again = fleet_run(
        "sync", "--lock", lock_file, "--dest", str(dest), "--plain-http", env=fleet_env
    )
    assert again.code == 0, again.stderr
    assert tree_snapshot(checkout) == before
    assert sorted(p.name for p in dest.iterdir() if not p.name.startswith(".")) == [
        "echo-1.2.3",
        "other-1.2.3",
    ]


def test_a_dry_run_says_the_run_refuses_a_plugin_linked_for_development(
    tmp_path: Path, fleet_env: dict[str, str]
) -> None:
    """The plan is the run's: a locked plugin whose id a development link holds is not
    planned as an install the run then refuses, but said refused, with its kind, the
    run's words and exit code; nothing is written, the link and checkout stay."""
    checkout = tmp_path / "src" / "echo"
    checkout.mkdir(parents=True)
    (checkout / "nexo-plugin.toml").write_text(manifest_text("echo", "0.1.0"))
    dest = tmp_path / "plugins"
    linked = nexo(
        "plugin", "install", "--link", str(checkout), "--dest", str(dest),
        env=fleet_env, in_process=True,
    )  # fmt: skip
    assert linked.code == 0, linked.stderr
    lock = tmp_path / "nexo-plugins.lock"
    lock.write_text(
        "lock_version = 1\n\n[plugins.echo]\n"
        'source = "oci://127.0.0.1:9/plugins/echo"\nrequirement = "*"\nversion = "1.0.0"\n'
        f'resolved = "oci://127.0.0.1:9/plugins/echo@sha256:{"a" * 64}"\n\n'
        '[plugins.echo.targets.noarch]\nasset = "echo-1.0.0-noarch.tar.gz"\nsize = 10\n'
        f'sha256 = "{"b" * 64}"\nmanifest = "sha256:{"c" * 64}"\n',
        encoding="utf-8",
    )
    before = (tree_snapshot(dest), tree_snapshot(checkout))
    common = ("plugin", "sync", "--lock", str(lock), "--dest", str(dest), "--dry-run")
    planned = nexo(*common, "--json", env=fleet_env, in_process=True)
    assert (planned.code, planned.document["ok"], planned.document["kind"]) == (
        1,
        False,
        "sync_failed",
    )
    [step] = planned.document["plan"]
    assert (step["id"], step["action"], step["kind"]) == ("echo", "install", "already_installed")
    assert "sync never replaces a development link" in step["error"]
    assert f"`nexo plugin remove echo --dest {dest}`" in step["error"]
    assert f"error: echo: {step['error']} [already_installed]" in planned.stderr.splitlines()
    text = nexo(*common, env=fleet_env, in_process=True)
    assert text.code == 1
    assert text.stdout.split() == ["echo", "1.0.0", "install:", "refused", "[already_installed]"]
    assert f"error: echo: {step['error']} [already_installed]" in text.stderr.splitlines()
    assert "Dry run: 0 change(s) planned" in text.stderr
    assert "the run would fail: echo" in text.stderr
    assert (tree_snapshot(dest), tree_snapshot(checkout)) == before
