"""``lock`` and ``sync`` handle several plugins at a time (``--jobs``) and end exactly as one
at a time would: the same lock file, receipts and trees byte for byte, the same report, the
same failure; timings are the benchmarks' business (benchmarks/fleet_scale.py)."""

from __future__ import annotations

import fcntl
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.cli import nexo
from support.registry import Registry
from support.registry_env import write_wanted
from support.tarballs import tree_snapshot

from .conftest import LINUX, MakeDist, push_dist

PLUGINS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")


def _publish(registry: Registry, make_dist: MakeDist, home: Path, *, signed: bool) -> None:
    for number, plugin_id in enumerate(PLUGINS):
        dist = make_dist(
            plugin_id,
            f"1.{number}.0",
            targets=(LINUX,),
            payload=plugin_id.encode() * 4096,
            **({} if signed else {"identity": None}),
        )
        push_dist(dist, registry.ref(f"plugins/{plugin_id}"), home)


def _wanted(directory: Path, registry: Registry, *, missing: str | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    names = [*PLUGINS[:3], *([missing] if missing else []), *PLUGINS[3:]]
    sources = {name: registry.ref(f"plugins/{name}") for name in names}
    return write_wanted(directory / "nexo-plugins.toml", sources)


def test_lock_with_many_jobs_writes_the_bytes_of_one_at_a_time(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    _publish(registry, make_dist, Path(fleet_env["NEXO_HOME"]), signed=True)
    common = ("--plain-http", "--trusted-keys", str(policy), "--require-signature", "--json")
    locks = []
    # One at a time, six at a time, and the default (no --jobs: several at a time).
    for jobs in ("1", "6", ""):
        # A cold blob cache each time: every tarball is fetched and verified again.
        env = {**fleet_env, "NEXO_HOME": str(tmp_path / f"home-{jobs or 'default'}")}
        wanted = _wanted(tmp_path / f"project-{jobs or 'default'}", registry)
        flags = ("--jobs", jobs) if jobs else ()
        result = nexo("plugin", "lock", "-f", str(wanted), *flags, *common, env=env)
        assert result.code == 0, result.stderr
        assert result.document["changes"] == {
            plugin_id: f"locked 1.{number}.0" for number, plugin_id in enumerate(PLUGINS)
        }
        locks.append((wanted.parent / "nexo-plugins.lock").read_bytes())
    assert locks[0] == locks[1] == locks[2]
    document = locks[1].decode()
    # Every entry records its signer, in the wanted set's order.
    assert document.count("identity = ") == len(PLUGINS)
    assert [document.index(f"[plugins.{p}]") for p in PLUGINS] == sorted(
        document.index(f"[plugins.{p}]") for p in PLUGINS
    )


def test_a_plugin_that_cannot_be_locked_fails_the_same_way_with_many_jobs(
    *, tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    _publish(registry, make_dist, Path(fleet_env["NEXO_HOME"]), signed=False)
    errors = []
    for jobs in ("1", "6"):
        wanted = _wanted(tmp_path / f"project-{jobs}", registry, missing="ghost")
        result = nexo(
            "plugin",
            "lock",
            "-f",
            str(wanted),
            "--jobs",
            jobs,
            "--plain-http",
            "--json",
            env=fleet_env,
        )
        assert result.code == 1, result.stdout
        document = result.document
        errors.append((document["kind"], document["error"]))
        # Nothing is written when one plugin fails.
        assert not (wanted.parent / "nexo-plugins.lock").exists()
    assert errors[0] == errors[1]
    assert errors[0][1].startswith("ghost: "), errors[0]


def test_sync_with_many_jobs_ends_byte_identical_to_one_at_a_time(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    _publish(registry, make_dist, Path(fleet_env["NEXO_HOME"]), signed=True)
    common = ("--plain-http", "--trusted-keys", str(policy), "--require-signature")
    wanted = _wanted(tmp_path / "project", registry)
    assert nexo("plugin", "lock", "-f", str(wanted), *common, env=fleet_env).code == 0
    lock_path = wanted.parent / "nexo-plugins.lock"
    lock_bytes = lock_path.read_bytes()
    roots, reports = [], []
    for jobs in ("1", "6"):
        env = {**fleet_env, "NEXO_HOME": str(tmp_path / f"home-{jobs}")}
        dest = tmp_path / f"root-{jobs}"
        synced = nexo(
            "plugin",
            "sync",
            "--lock",
            str(lock_path),
            "--dest",
            str(dest),
            "--frozen",
            "--jobs",
            jobs,
            "--json",
            *common,
            env=env,
        )
        assert synced.code == 0, synced.stdout
        # Each run has its own home, named in what it warns (its daemon discovers no root).
        shown = synced.stdout.replace(str(dest), "<dest>").replace(env["NEXO_HOME"], "<home>")
        document = json.loads(shown)
        reports.append((document["plugins"], document["requests"]["registries"]))
        roots.append(dest)
    assert lock_path.read_bytes() == lock_bytes
    assert reports[0] == reports[1]
    assert [item["id"] for item in reports[1][0]] == sorted(PLUGINS)
    assert {item["action"] for item in reports[1][0]} == {"installed"}
    # Trees, receipts and the root's bookkeeping: byte for byte.
    assert tree_snapshot(roots[0]) == tree_snapshot(roots[1])
    for number, plugin_id in enumerate(PLUGINS):
        receipt = f"{plugin_id}-1.{number}.0/.nexo-install.json"
        assert (roots[0] / receipt).read_bytes() == (roots[1] / receipt).read_bytes()
        assert json.loads((roots[1] / receipt).read_text())["signature"]["status"] == "verified"
    assert sorted(p.name for p in roots[1].iterdir()) == sorted(
        [".nexo-install.lock", ".nexo-sync.lock"]
        + [f"{plugin_id}-1.{n}.0" for n, plugin_id in enumerate(PLUGINS)]
    )


def test_one_failing_plugin_leaves_the_others_synced_with_many_jobs(
    *, tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    _publish(registry, make_dist, Path(fleet_env["NEXO_HOME"]), signed=False)
    wanted = _wanted(tmp_path / "project", registry)
    assert nexo("plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env).code == 0
    lock_path = wanted.parent / "nexo-plugins.lock"
    # The lock now names a tarball digest the registry does not hold for one plugin.
    text = lock_path.read_text(encoding="utf-8")
    start = text.index("[plugins.charlie]")
    sha_at = text.index('sha256 = "', start) + len('sha256 = "')
    lock_path.write_text(text[:sha_at] + "0" * 64 + text[sha_at + 64 :], encoding="utf-8")
    dest = tmp_path / "root"
    env = {**fleet_env, "NEXO_HOME": str(tmp_path / "clean-home")}
    synced = nexo(
        "plugin",
        "sync",
        "--lock",
        str(lock_path),
        "--dest",
        str(dest),
        "--frozen",
        "--jobs",
        "6",
        "--plain-http",
        "--json",
        env=env,
    )
    assert synced.code == 1
    document = synced.document
    assert document["kind"] == "sync_failed"
    actions = {item["id"]: (item["action"], item.get("kind")) for item in document["plugins"]}
    assert actions.pop("charlie") == ("failed", "checksum_mismatch")
    assert set(actions.values()) == {("installed", None)}
    assert not (dest / "charlie-1.2.0").exists()
    assert not (dest / ".nexo").exists()  # no staging tree or journal left behind


def test_jobs_out_of_range_is_a_usage_error_and_nothing_is_written(
    *, tmp_path: Path, fleet_env: dict[str, str], registry: Registry
) -> None:
    wanted = _wanted(tmp_path / "project", registry)
    for jobs in ("0", "65"):
        locked = nexo("plugin", "lock", "-f", str(wanted), "--jobs", jobs, "--json", env=fleet_env)
        assert locked.code == 2, locked.stdout
        assert locked.document["kind"] == "usage"
        assert not (wanted.parent / "nexo-plugins.lock").exists()
        dest = tmp_path / "root"
        synced = nexo(
            "plugin",
            "sync",
            "--lock",
            str(tmp_path / "none.lock"),
            "--dest",
            str(dest),
            "--jobs",
            jobs,
            "--json",
            env=fleet_env,
        )
        assert synced.code == 2, synced.stdout
        assert synced.document["kind"] == "usage"
        assert not dest.exists()


def test_a_sync_with_nothing_to_install_forks_no_worker(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A root already in line with the lock is checked without worker processes (the same
    report as ever: every plugin unchanged); a plugin missing again brings them back."""
    from nexo_pkg.fleet import sync as sync_module
    from nexo_pkg.fleet.pool import CpuPool

    _publish(registry, make_dist, Path(fleet_env["NEXO_HOME"]), signed=True)
    common = ("--plain-http", "--trusted-keys", str(policy), "--require-signature")
    wanted = _wanted(tmp_path / "project", registry)
    assert nexo("plugin", "lock", "-f", str(wanted), *common, env=fleet_env).code == 0
    lock_path = wanted.parent / "nexo-plugins.lock"
    dest = tmp_path / "root"
    args = ("plugin", "sync", "--lock", str(lock_path), "--dest", str(dest), "--frozen")
    first = nexo(*args, "--jobs", "6", "--json", *common, env=fleet_env)
    assert first.code == 0, first.stdout
    pools: list[int] = []
    workers: list[int] = []

    class Recorded(CpuPool):
        def __init__(self, jobs: int, *, per_core: bool = True) -> None:
            pools.append(jobs)
            super().__init__(jobs, per_core=per_core)
            workers.append(self.workers)

    monkeypatch.setattr(sync_module, "CpuPool", Recorded)
    again = nexo(*args, "--jobs", "6", "--json", *common, env=fleet_env, in_process=True)
    assert again.code == 0, again.stdout
    assert pools == [1]
    plugins = json.loads(again.stdout)["plugins"]
    assert [(p["id"], p["action"]) for p in plugins] == [(i, "unchanged") for i in sorted(PLUGINS)]
    shutil.rmtree(dest / "charlie-1.2.0")
    pools.clear()
    workers.clear()
    third = nexo(*args, "--jobs", "6", "--json", *common, env=fleet_env, in_process=True)
    assert third.code == 0, third.stdout
    assert pools == [6]
    # Extraction is CPU work: one worker process per core, up to the jobs.
    assert workers == [min(6, os.cpu_count() or 1)]
    actions = {p["id"]: p["action"] for p in json.loads(third.stdout)["plugins"]}
    assert actions == {i: "installed" if i == "charlie" else "unchanged" for i in PLUGINS}


def test_a_sync_on_one_core_extracts_in_its_own_process_and_ends_the_same(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One core (``os.cpu_count() == 1``): no worker process is started, the plugins still go
    six at a time on threads, and the root ends as a sync with several cores leaves it."""
    from nexo_pkg.fleet import sync as sync_module
    from nexo_pkg.fleet.pool import CpuPool

    _publish(registry, make_dist, Path(fleet_env["NEXO_HOME"]), signed=False)
    wanted = _wanted(tmp_path / "project", registry)
    assert nexo("plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env).code == 0
    lock_path = wanted.parent / "nexo-plugins.lock"
    workers: list[int] = []

    class Recorded(CpuPool):
        def __init__(self, jobs: int, *, per_core: bool = True) -> None:
            super().__init__(jobs, per_core=per_core)
            workers.append(self.workers)

    roots = []
    for cores in (1, 2):
        monkeypatch.setattr(os, "cpu_count", lambda cores=cores: cores)
        monkeypatch.setattr(sync_module, "CpuPool", Recorded)
        dest = tmp_path / f"root-{cores}"
        synced = nexo(
            "plugin", "sync", "--lock", str(lock_path), "--dest", str(dest), "--frozen",
            "--plain-http", "--jobs", "6", "--json",
            env={**fleet_env, "NEXO_HOME": str(tmp_path / f"home-{cores}")}, in_process=True,
        )  # fmt: skip
        assert synced.code == 0, synced.stdout
        assert {item["action"] for item in synced.document["plugins"]} == {"installed"}
        roots.append(dest)
    assert workers == [1, 2]
    assert tree_snapshot(roots[0]) == tree_snapshot(roots[1])


MALLORY = "https://github.com/mallory/x/.github/workflows/r.yml@refs/tags/v1"


def test_a_sync_of_many_verifies_each_signer_as_install_does_and_fails_only_that_plugin(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    """Every plugin but charlie is signed by acme's release workflow; charlie by another
    owner's. The lock is made without a policy (it records whoever signed); the sync, with the
    policy that binds acme's plugins to acme's workflow, refuses charlie with the kind and words
    ``install`` refuses it with, installs the others verified, and leaves no trace of charlie."""
    home = Path(fleet_env["NEXO_HOME"])
    for number, plugin_id in enumerate(PLUGINS):
        signer = {"identity": MALLORY} if plugin_id == "charlie" else {}
        dist = make_dist(
            plugin_id, f"1.{number}.0", targets=(LINUX,), payload=plugin_id.encode(), **signer
        )
        push_dist(dist, registry.ref(f"plugins/{plugin_id}"), home)
    wanted = _wanted(tmp_path / "project", registry)
    # The lock's host also trusts mallory's workflow; the sync's host trusts acme's alone.
    lenient = policy.with_name("lenient_keys.toml")
    mallory = (
        '[[authors]]\nowner = "mallory"\nrepos = ["x"]\n'
        "identity_regexp = '^https://github\\.com/mallory/x/\\.github/workflows/r\\.yml@.+$'\n"
        'oidc_issuer = "https://token.actions.githubusercontent.com"\n\n'
    )
    text = policy.read_text(encoding="utf-8")
    lenient.write_text(text.replace("[[authors]]", mallory + "[[authors]]", 1), encoding="utf-8")
    locked = nexo(
        "plugin", "lock", "-f", str(wanted), "--plain-http", "--trusted-keys", str(lenient),
        env=fleet_env,
    )  # fmt: skip
    assert locked.code == 0, locked.stderr
    lock_path = wanted.parent / "nexo-plugins.lock"
    assert MALLORY in lock_path.read_text(encoding="utf-8")
    common = ("--plain-http", "--trusted-keys", str(policy), "--require-signature", "--json")
    installed = nexo(
        "plugin", "install", registry.ref("plugins/charlie:1.2.0"), "--dest",
        str(tmp_path / "install-root"), "--yes", *common, env=fleet_env,
    )  # fmt: skip
    assert installed.code == 1, installed.stdout
    dest = tmp_path / "root"
    synced = nexo(
        "plugin", "sync", "--lock", str(lock_path), "--dest", str(dest), "--frozen",
        "--jobs", "6", *common, env=fleet_env,
    )  # fmt: skip
    assert synced.code == 1, synced.stdout
    document = synced.document
    assert document["kind"] == "sync_failed"
    outcomes = {item["id"]: item for item in document["plugins"]}
    charlie = outcomes.pop("charlie")
    assert (charlie["action"], charlie["kind"]) == ("failed", installed.document["kind"])
    assert charlie["kind"] == "signer_untrusted"
    assert charlie["error"] == installed.document["error"]
    assert {item["action"] for item in outcomes.values()} == {"installed"}
    assert not list(dest.glob("charlie-*"))
    for number, plugin_id in enumerate(PLUGINS):
        if plugin_id != "charlie":
            receipt = dest / f"{plugin_id}-1.{number}.0" / ".nexo-install.json"
            assert json.loads(receipt.read_text())["signature"]["status"] == "verified"
    # The receipt a sync writes is the one `install` writes for the same artifact.
    alone = nexo(
        "plugin", "install", registry.ref("plugins/alpha:1.0.0"), "--dest",
        str(tmp_path / "install-root"), "--yes", *common, env=fleet_env,
    )  # fmt: skip
    assert alone.code == 0, alone.stdout
    by_install = json.loads((tmp_path / "install-root/alpha-1.0.0/.nexo-install.json").read_text())
    by_sync = json.loads((dest / "alpha-1.0.0/.nexo-install.json").read_text())
    # All but the time: a sync dates its receipts by the lock (the same on every host).
    published = lock_path.read_text(encoding="utf-8").split('published = "', 1)[1].split('"')[0]
    assert by_sync.pop("installed_at") == published
    by_install.pop("installed_at")
    assert by_sync == by_install
    assert not (dest / ".nexo").exists() or _only_kept(dest)


def _only_kept(dest: Path) -> bool:
    return all(path.name == "kept" for path in (dest / ".nexo").iterdir())


def test_the_root_s_install_lock_is_held_from_the_first_plugin_to_the_last(
    *, tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    """An install, upgrade or remove waits on ``<dest>/.nexo-install.lock``: from the moment a
    sync of several plugins takes it, whoever gets it next finds every plugin synced and no
    staging tree, never a root half-way through the sync."""
    home = Path(fleet_env["NEXO_HOME"])
    rng = random.Random(13)  # noqa: S311 (incompressible payloads, not cryptography)
    for number, plugin_id in enumerate(PLUGINS):
        dist = make_dist(
            plugin_id, f"1.{number}.0", identity=None, targets=(LINUX,),
            payload=rng.randbytes(2 * 1024 * 1024),
        )  # fmt: skip
        push_dist(dist, registry.ref(f"plugins/{plugin_id}"), home)
    wanted = _wanted(tmp_path / "project", registry)
    assert nexo("plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env).code == 0
    dest = tmp_path / "root"
    final = sorted(f"{plugin_id}-1.{n}.0" for n, plugin_id in enumerate(PLUGINS))
    process = subprocess.Popen(
        [sys.executable, "-m", "nexo_pkg", "plugin", "sync", "--lock",
         str(wanted.parent / "nexo-plugins.lock"), "--dest", str(dest), "--frozen",
         "--plain-http", "--json"],
        env={**fleet_env, "NEXO_HOME": str(tmp_path / "clean-home")},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    held_seen, seen_free_after = False, []
    lock_path = dest / ".nexo-install.lock"
    while process.poll() is None:
        time.sleep(0.001)
        try:
            descriptor = os.open(lock_path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                held_seen = True
                continue
            if held_seen:
                # Free again after the sync took it: the sync must be done with the root.
                plugins = sorted(p.name for p in dest.iterdir() if not p.name.startswith("."))
                staging = dest / ".nexo" / "staging"
                busy = staging.exists() and any(staging.iterdir())
                seen_free_after.append((plugins, busy))
        finally:
            os.close(descriptor)
    out, err = process.communicate()
    assert process.returncode == 0, (out, err)
    assert held_seen
    assert all(found == (final, False) for found in seen_free_after), seen_free_after
    assert sorted(p.name for p in dest.iterdir() if not p.name.startswith(".")) == final
