"""Fleets end to end against a real registry (CNCF distribution) and the loopback GitHub."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

from support.cli import nexo
from support.github_server import GitHubServer, github_server
from support.private_sigstore import PrivateSigstore
from support.receipts import reference_receipt_struct
from support.registry import Registry
from support.registry_env import publish_signed_release, write_wanted
from support.tarballs import release_assets, tree_snapshot
from support.token_server import TokenServer

from .conftest import (
    ACME_IDENTITY,
    LINUX,
    MakeDist,
    auth_config,
    fleet_run,
    push_dist,
)

__all__ = ["github_server"]

ISSUER = "https://token.actions.githubusercontent.com"


def test_push_then_install_from_an_authenticated_registry_verifies_the_signer(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    auth_registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    config = auth_config(tmp_path, auth_registry)
    dist = make_dist()
    pushed = nexo(
        "plugin",
        "push",
        str(dist),
        auth_registry.ref("plugins/echo"),
        "--plain-http",
        "--registry-config",
        str(config),
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert pushed.code == 0, pushed.stderr
    document = pushed.document
    assert document["targets"] == ["noarch", LINUX]
    assert document["signed"] == ["noarch", LINUX]

    dest = tmp_path / "plugins"
    installed = nexo(
        "plugin",
        "install",
        auth_registry.ref("plugins/echo:1.2.3"),
        "--dest",
        str(dest),
        "--plain-http",
        "--registry-config",
        str(config),
        "--trusted-keys",
        str(policy),
        "--require-signature",
        "--yes",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert installed.code == 0, installed.stderr
    result = installed.document
    assert result["target"] == LINUX
    signature = result["signature"]
    assert (signature["status"], signature["identity"], signature["issuer"]) == (
        "verified",
        ACME_IDENTITY,
        ISSUER,
    )
    assert signature["scheme"] == "sigstore-bundle"
    receipt = json.loads((dest / "echo-1.2.3" / ".nexo-install.json").read_text())
    assert receipt["source"] == "oci-registry"
    assert receipt["signature"]["identity"] == ACME_IDENTITY
    # The reference installer reads it: its ten string fields, `source` free-form text.
    as_reference = reference_receipt_struct(receipt)
    assert (as_reference["owner"], as_reference["repo"], as_reference["tag"]) == ("", "", "")
    assert as_reference["source"] == "oci-registry"
    verified = nexo("plugin", "verify", "echo", "--dest", str(dest), env=fleet_env, in_process=True)
    assert verified.code == 0, verified.stderr

    # Without credentials the registry refuses, and nothing is installed.
    other = tmp_path / "other"
    refused = nexo(
        "plugin",
        "install",
        auth_registry.ref("plugins/echo:1.2.3"),
        "--dest",
        str(other),
        "--plain-http",
        "--yes",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert refused.code == 1
    assert refused.document["kind"] == "registry_auth"
    assert not other.exists() or not any(other.iterdir())


def test_a_signature_by_another_identity_is_refused_from_the_registry(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    dist = make_dist(identity="https://github.com/mallory/x/.github/workflows/r.yml@refs/tags/v1")
    push_dist(dist, registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    dest = tmp_path / "plugins"
    refused = nexo(
        "plugin",
        "install",
        registry.ref("plugins/echo:1.2.3"),
        "--dest",
        str(dest),
        "--plain-http",
        "--trusted-keys",
        str(policy),
        "--require-signature",
        "--yes",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert refused.code == 1
    assert refused.document["kind"] == "signer_untrusted"
    assert not (dest / "echo-1.2.3").exists()


def test_mirror_then_air_gapped_sync_keeps_the_original_signer(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy: Path,
) -> None:
    publish_signed_release(github_server, private_sigstore, "1.2.3")
    env = {**fleet_env, "NEXO_GITHUB_API_BASE": github_server.url}
    mirrored = nexo(
        "plugin",
        "mirror",
        "acme/nexo-plugin-echo@v1.2.3",
        registry.ref("mirror/echo"),
        "--plain-http",
        "--json",
        env=env,
        in_process=True,
    )
    assert mirrored.code == 0, mirrored.stderr
    assert mirrored.document["github_release"] == "acme/nexo-plugin-echo@v1.2.3"
    github_server.stop()

    # The air-gapped side: its own home (empty cache), only the registry reachable.
    offline = {**env, "NEXO_HOME": str(tmp_path / "offline-home")}
    project = tmp_path / "fleet"
    project.mkdir()
    write_wanted(project / "nexo-plugins.toml", {"echo": registry.ref("mirror/echo")})
    lock_file = project / "nexo-plugins.lock"
    locked = nexo(
        "plugin",
        "lock",
        "-f",
        str(project / "nexo-plugins.toml"),
        "--plain-http",
        "--trusted-keys",
        str(policy),
        "--require-signature",
        env=offline,
        in_process=True,
    )
    assert locked.code == 0, locked.stderr
    lock_text = lock_file.read_text()
    assert f'identity = "{ACME_IDENTITY}"' in lock_text
    assert 'github = "acme/nexo-plugin-echo@v1.2.3"' in lock_text
    dest = tmp_path / "air-gapped"
    # The air-gapped daemon discovers its plugins there (nothing for sync to warn about).
    discovery = tmp_path / "offline-home" / "config" / "plugins" / "discovery.yaml"
    discovery.parent.mkdir(parents=True)
    discovery.write_text(f"discovery:\n  search_paths: [{dest}]\n")
    synced = fleet_run(
        "sync",
        "--lock",
        lock_file,
        "--dest",
        str(dest),
        "--frozen",
        "--plain-http",
        "--trusted-keys",
        str(policy),
        "--require-signature",
        env=offline,
    )
    assert synced.code == 0, synced.stderr
    report = synced.document
    assert report["plugins"] == [
        {
            "id": "echo",
            "action": "installed",
            "change": "install",
            "version": "1.2.3",
            "path": str(dest / "echo-1.2.3"),
            "identity": ACME_IDENTITY,
        }
    ]
    receipt = json.loads((dest / "echo-1.2.3" / ".nexo-install.json").read_text())
    assert receipt["signature"]["identity"] == ACME_IDENTITY
    # A mirror keeps the release's coordinates, so the reference installer's `upgrade`,
    # which reads only those, follows the original release on GitHub.
    assert reference_receipt_struct(receipt)["owner"] == "acme"
    assert (receipt["owner"], receipt["repo"], receipt["tag"]) == (
        "acme",
        "nexo-plugin-echo",
        "v1.2.3",
    )

    # A plain install from the mirror applies the original owner's policy entries as well.
    single = tmp_path / "single"
    installed = nexo(
        "plugin",
        "install",
        registry.ref("mirror/echo:1.2.3"),
        "--dest",
        str(single),
        "--plain-http",
        "--trusted-keys",
        str(policy),
        "--require-signature",
        "--yes",
        "--json",
        env=offline,
        in_process=True,
    )
    assert installed.code == 0, installed.stderr
    signature = installed.document["signature"]
    assert (signature["status"], signature["identity"]) == ("verified", ACME_IDENTITY)


def test_lock_sync_is_idempotent_and_prune_removes_what_the_lock_drops(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    home = Path(fleet_env["NEXO_HOME"])
    for plugin_id in ("echo", "weather"):
        push_dist(make_dist(plugin_id), registry.ref(f"plugins/{plugin_id}"), home)
    project = tmp_path / "fleet"
    project.mkdir()
    wanted = write_wanted(
        project / "nexo-plugins.toml",
        {"echo": registry.ref("plugins/echo"), "weather": registry.ref("plugins/weather")},
    )
    lock_file = project / "nexo-plugins.lock"
    common = ("--plain-http", "--trusted-keys", str(policy))
    assert (
        nexo("plugin", "lock", "-f", str(wanted), *common, env=fleet_env, in_process=True).code == 0
    )
    first_text = lock_file.read_text()
    mtime = lock_file.stat().st_mtime_ns
    # Locking again changes nothing (not even the file's time), and --check agrees.
    again = fleet_run("lock", "-f", wanted, *common, env=fleet_env)
    assert again.document["written"] is False
    assert lock_file.read_text() == first_text
    assert lock_file.stat().st_mtime_ns == mtime
    assert (
        nexo("plugin", "lock", "-f", str(wanted), "--check", env=fleet_env, in_process=True).code
        == 0
    )

    # A fresh home: the first sync downloads both tarballs.
    env = {**fleet_env, "NEXO_HOME": str(tmp_path / "host-home")}
    dest = tmp_path / "root"
    before = registry.blob_gets()
    first = fleet_run("sync", "--lock", lock_file, "--dest", str(dest), *common, env=env)
    assert first.code == 0, first.stderr
    assert [p["action"] for p in first.document["plugins"]] == ["installed", "installed"]
    downloaded = registry.blob_gets() - before
    assert downloaded >= 2  # two tarballs (signature bundles come on top)
    snapshot = tree_snapshot(dest)
    times = {p: p.stat().st_mtime_ns for p in dest.rglob("*")}

    # The second sync asks the registry for no blob and writes nothing.
    before_second = registry.all_requests()
    second = fleet_run("sync", "--lock", lock_file, "--dest", str(dest), *common, env=env)
    assert second.code == 0, second.stderr
    report = second.document
    assert report["changed"] is False
    assert [p["action"] for p in report["plugins"]] == ["unchanged", "unchanged"]
    assert registry.all_requests() == before_second
    assert tree_snapshot(dest) == snapshot
    assert {p: p.stat().st_mtime_ns for p in dest.rglob("*")} == times

    # Drop weather from the wanted set: sync relocks, and --prune removes it.
    write_wanted(wanted, {"echo": registry.ref("plugins/echo")})
    stale = nexo("plugin", "lock", "-f", str(wanted), "--check", env=fleet_env, in_process=True)
    assert stale.code == 1
    assert "weather is locked but no longer wanted" in stale.stderr
    stale_json = fleet_run("lock", "-f", wanted, "--check", env=fleet_env)
    assert stale_json.code == 1
    document = stale_json.document
    assert (document["ok"], document["kind"]) == (False, "lock_stale")
    assert document["stale"] == ["weather is locked but no longer wanted"]
    assert "weather" in document["error"]
    locked_bytes = lock_file.read_bytes()
    requests_before = registry.all_requests()
    frozen = fleet_run(
        "sync", "--lock", lock_file, "--dest", str(dest), "--frozen", *common, env=env
    )
    assert frozen.code == 1
    assert frozen.document["kind"] == "lock_stale"
    # Refused before anything: the lock, the root and the registry are left as they were.
    assert lock_file.read_bytes() == locked_bytes
    assert tree_snapshot(dest) == snapshot
    assert registry.all_requests() == requests_before
    pruned = fleet_run(
        "sync", "--lock", lock_file, "--dest", str(dest), "--prune", *common, env=env
    )
    assert pruned.code == 0, pruned.stderr
    actions = {p["id"]: p["action"] for p in pruned.document["plugins"]}
    assert actions == {"echo": "unchanged", "weather": "removed"}
    assert sorted(p.name for p in dest.iterdir() if not p.name.startswith(".")) == ["echo-1.2.3"]
    assert "weather" not in lock_file.read_text()


def test_a_tampered_blob_in_registry_storage_is_refused(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
) -> None:
    dist = make_dist(identity=None, targets=(LINUX,))
    push_dist(dist, registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    project = tmp_path / "fleet"
    project.mkdir()
    wanted = write_wanted(project / "nexo-plugins.toml", {"echo": registry.ref("plugins/echo")})
    assert (
        nexo(
            "plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env, in_process=True
        ).code
        == 0
    )
    tarball = (dist / f"echo-1.2.3-{LINUX}.tar.gz").read_bytes()
    tampered = 0
    for blob in registry.blob_files():
        if blob.read_bytes() == tarball:
            blob.write_bytes(tarball[:-1] + bytes([tarball[-1] ^ 0xFF]))
            tampered += 1
    assert tampered == 1
    env = {**fleet_env, "NEXO_HOME": str(tmp_path / "clean-home")}
    dest = tmp_path / "root"
    synced = fleet_run(
        "sync",
        "--lock",
        project / "nexo-plugins.lock",
        "--dest",
        str(dest),
        "--frozen",
        "--plain-http",
        env=env,
    )
    assert synced.code == 1
    report = synced.document
    assert report["plugins"][0]["kind"] == "checksum_mismatch"
    assert not (dest / "echo-1.2.3").exists()
    blobs = tmp_path / "clean-home" / "cache" / "blobs" / "sha256"
    assert not blobs.exists() or not any(blobs.iterdir())


def test_a_lock_row_whose_size_was_edited_is_refused(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
) -> None:
    """The size is part of what the lock pins: a row that names the right sha256 with
    another size does not describe its tarball, and nothing is installed from it."""
    dist = make_dist(identity=None, targets=(LINUX,))
    push_dist(dist, registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    project = tmp_path / "fleet"
    project.mkdir()
    wanted = write_wanted(project / "nexo-plugins.toml", {"echo": registry.ref("plugins/echo")})
    assert fleet_run("lock", "-f", wanted, "--plain-http", env=fleet_env).code == 0
    lock_file = project / "nexo-plugins.lock"
    size = len((dist / f"echo-1.2.3-{LINUX}.tar.gz").read_bytes())
    text = lock_file.read_text()
    assert text.count(f"size = {size}\n") == 1
    lock_file.write_text(text.replace(f"size = {size}\n", f"size = {size - 1}\n"))
    dest = tmp_path / "root"
    synced = fleet_run(
        "sync", "--lock", lock_file, "--dest", str(dest), "--frozen", "--plain-http",
        env={**fleet_env, "NEXO_HOME": str(tmp_path / "clean-home")},
    )  # fmt: skip
    assert synced.code == 1
    [failed] = synced.document["plugins"]
    assert (failed["action"], failed["kind"]) == ("failed", "checksum_mismatch")
    assert f"is {size} bytes, but the lock says {size - 1}" in failed["error"]
    assert not (dest / "echo-1.2.3").exists()


def test_frozen_sync_on_two_clean_roots_is_byte_identical_without_github(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    github_server: GitHubServer,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    env = {**fleet_env, "NEXO_GITHUB_API_BASE": github_server.url}
    project = tmp_path / "fleet"
    project.mkdir()
    wanted = write_wanted(project / "nexo-plugins.toml", {"echo": registry.ref("plugins/echo")})
    common = ("--plain-http", "--trusted-keys", str(policy), "--require-signature")
    assert nexo("plugin", "lock", "-f", str(wanted), *common, env=env, in_process=True).code == 0
    roots = []
    for name in ("a", "b"):
        host_env = {**env, "NEXO_HOME": str(tmp_path / f"home-{name}")}
        dest = tmp_path / f"root-{name}"
        synced = nexo(
            "plugin",
            "sync",
            "--lock",
            str(project / "nexo-plugins.lock"),
            "--dest",
            str(dest),
            "--frozen",
            *common,
            env=host_env,
            in_process=True,
        )
        assert synced.code == 0, synced.stderr
        roots.append(dest)
    assert tree_snapshot(roots[0]) == tree_snapshot(roots[1])
    receipts = [(root / "echo-1.2.3" / ".nexo-install.json").read_bytes() for root in roots]
    assert receipts[0] == receipts[1]
    assert github_server.requests == []


def test_twenty_roots_syncing_concurrently_end_byte_identical(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
) -> None:
    for plugin_id in ("echo", "weather"):
        dist = make_dist(plugin_id, identity=None)
        push_dist(dist, registry.ref(f"plugins/{plugin_id}"), Path(fleet_env["NEXO_HOME"]))
    project = tmp_path / "fleet"
    project.mkdir()
    wanted = write_wanted(
        project / "nexo-plugins.toml",
        {"echo": registry.ref("plugins/echo"), "weather": registry.ref("plugins/weather")},
    )
    assert (
        nexo(
            "plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env, in_process=True
        ).code
        == 0
    )
    shutil.rmtree(tmp_path / "home" / "cache")
    # Every host shares one home (and so one blob cache), the harshest case for the cache.
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "nexo_pkg",
                "plugin",
                "sync",
                "--lock",
                str(project / "nexo-plugins.lock"),
                "--dest",
                str(tmp_path / f"host-{n:02d}"),
                "--frozen",
                "--plain-http",
            ],
            env=fleet_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(20)
    ]
    for process in processes:
        _out, err = process.communicate(timeout=240)
        assert process.returncode == 0, err
    snapshots = [tree_snapshot(tmp_path / f"host-{n:02d}") for n in range(20)]
    assert all(snapshot == snapshots[0] for snapshot in snapshots)
    assert {"echo-1.2.3/.nexo-install.json", "weather-1.2.3/.nexo-install.json"} <= set(
        snapshots[0]
    )
    blobs = list((tmp_path / "home" / "cache" / "blobs" / "sha256").iterdir())
    assert len(blobs) == 2


def test_upgrade_follows_the_registry_the_plugin_came_from(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    reference = registry.ref("plugins/echo")
    push_dist(make_dist(), reference, Path(fleet_env["NEXO_HOME"]))
    dest = tmp_path / "plugins"
    common = ("--dest", str(dest), "--plain-http", "--trusted-keys", str(policy), "--yes")
    by_digest = r"/manifests/sha256:[0-9a-f]{64}$"
    before = registry.requests("GET", by_digest)
    installed = nexo(
        "plugin", "install", reference + ":1.2.3", *common, "--json", env=fleet_env, in_process=True
    )
    assert installed.code == 0, installed.stderr
    # Of the two targets' manifests only this host's is read, once, and its signature's.
    assert registry.requests("GET", by_digest) - before == 2
    receipt = json.loads((dest / "echo-1.2.3" / ".nexo-install.json").read_text())
    assert receipt["registry"].startswith(reference + "@sha256:")

    same = nexo("plugin", "upgrade", "echo", *common, "--json", env=fleet_env, in_process=True)
    assert same.code == 0, same.stderr
    assert same.document["upgraded"] is False

    newer = make_dist("echo", "1.3.0", identity=ACME_IDENTITY.replace("v1.2.3", "v1.3.0"))
    push_dist(newer, reference, Path(fleet_env["NEXO_HOME"]))
    upgraded = nexo(
        "plugin",
        "upgrade",
        "echo",
        *common,
        "--no-keep-old",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert upgraded.code == 0, upgraded.stderr
    document = upgraded.document
    assert (document["from_version"], document["version"], document["upgraded"]) == (
        "1.2.3",
        "1.3.0",
        True,
    )
    assert (document["removed_old"], document["kept_paths"]) == (True, [])
    assert sorted(p.name for p in dest.iterdir() if not p.name.startswith(".")) == ["echo-1.3.0"]

    # --keep-old keeps the replaced version out of the daemon's sight, as for GitHub installs.
    third = make_dist("echo", "1.4.0", identity=ACME_IDENTITY.replace("v1.2.3", "v1.4.0"))
    push_dist(third, reference, Path(fleet_env["NEXO_HOME"]))
    kept = nexo(
        "plugin", "upgrade", "echo", *common, "--keep-old", "--json", env=fleet_env, in_process=True
    )
    assert kept.code == 0, kept.stderr
    document = kept.document
    assert (document["from_version"], document["version"]) == ("1.3.0", "1.4.0")
    assert document["removed_old"] is False
    assert len(document["kept_paths"]) == 1
    assert (
        json.loads((Path(document["kept_paths"][0]) / ".nexo-install.json").read_text())["version"]
        == "1.3.0"
    )
    assert sorted(p.name for p in dest.iterdir() if not p.name.startswith(".")) == ["echo-1.4.0"]

    # `list` names the registry artifact the plugin came from.
    listed = nexo("plugin", "list", "--dest", str(dest), env=fleet_env, in_process=True)
    assert listed.code == 0, listed.stderr
    line = next(row for row in listed.stdout.splitlines() if row.startswith("echo "))
    assert f"{reference}@sha256:" in line
    assert "local file" not in line
    listed_json = nexo(
        "plugin", "list", "--dest", str(dest), "--json", env=fleet_env, in_process=True
    ).document
    current = next(item for item in listed_json["plugins"] if not item["kept"])
    assert current["source"] == "oci-registry"
    assert current["registry"].startswith(reference + "@sha256:")


def test_bearer_token_challenges_are_answered_with_the_configured_credentials(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    token_registry: tuple[Registry, TokenServer],
    make_dist: MakeDist,
) -> None:
    running, tokens = token_registry
    config = auth_config(tmp_path, running)
    reference = running.ref("plugins/echo")
    push_dist(make_dist(identity=None), reference, Path(fleet_env["NEXO_HOME"]), config)
    assert any("push" in request.scope for request in tokens.requests)
    dest = tmp_path / "plugins"
    installed = nexo(
        "plugin",
        "install",
        reference + ":1.2.3",
        "--dest",
        str(dest),
        "--plain-http",
        "--registry-config",
        str(config),
        "--yes",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert installed.code == 0, installed.stderr
    assert (dest / "echo-1.2.3" / ".nexo-install.json").is_file()
    assert tokens.requests[-1].scope == "repository:plugins/echo:pull"
    assert tokens.requests[-1].authorization is not None

    # Anonymous: the token service refuses, and that is registry_auth, with nothing written.
    refused = nexo(
        "plugin",
        "install",
        reference + ":1.2.3",
        "--dest",
        str(tmp_path / "other"),
        "--plain-http",
        "--yes",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert refused.code == 1
    assert refused.document["kind"] == "registry_auth"
    assert not (tmp_path / "other" / "echo-1.2.3").exists()


def test_concurrent_syncs_of_one_root_install_each_plugin_once(
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
) -> None:
    push_dist(make_dist(identity=None), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    wanted = write_wanted(tmp_path / "nexo-plugins.toml", {"echo": registry.ref("plugins/echo")})
    assert (
        nexo(
            "plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env, in_process=True
        ).code
        == 0
    )
    dest = tmp_path / "root"
    command = [
        sys.executable, "-m", "nexo_pkg", "plugin", "sync", "--lock",
        str(tmp_path / "nexo-plugins.lock"), "--dest", str(dest), "--frozen", "--plain-http",
        "--json",
    ]  # fmt: skip
    processes = [
        subprocess.Popen(command, env=fleet_env, stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    actions = []
    for process in processes:
        out, _err = process.communicate(timeout=120)
        assert process.returncode == 0
        actions.append(json.loads(out)["plugins"][0]["action"])
    # The sync lock serialises them: one installs, the others find it in place.
    assert sorted(actions) == ["installed", "unchanged", "unchanged"]
    assert sorted(p.name for p in dest.iterdir() if not p.name.startswith(".")) == ["echo-1.2.3"]


def test_a_release_signed_by_artifact_attestations_mirrors_and_verifies_offline(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy: Path,
) -> None:
    assets = release_assets("echo", "1.2.3", target=LINUX)
    tarball = f"echo-1.2.3-{LINUX}.tar.gz"
    github_server.publish("acme", "nexo-plugin-echo", "v1.2.3", assets)
    attestation = private_sigstore.attest(
        assets[tarball],
        identity="https://github.com/actions/reusable/.github/workflows/attest.yml@refs/tags/v1",
        repository="acme/nexo-plugin-echo",
        ref="refs/tags/v1.2.3",
        build_config_uri=ACME_IDENTITY,
    )
    digest = hashlib.sha256(assets[tarball]).hexdigest()
    github_server.publish_attestations("acme", "nexo-plugin-echo", digest, [attestation])
    env = {**fleet_env, "NEXO_GITHUB_API_BASE": github_server.url}
    mirrored = nexo(
        "plugin",
        "mirror",
        "acme/nexo-plugin-echo@v1.2.3",
        registry.ref("mirror/echo"),
        "--plain-http",
        "--json",
        env=env,
        in_process=True,
    )
    assert mirrored.code == 0, mirrored.stderr
    assert mirrored.document["signed"] == [LINUX]
    github_server.stop()

    offline = {**env, "NEXO_HOME": str(tmp_path / "offline-home")}
    # A reusable workflow of another repository signed: the policy names it, as gh wants.
    reusable = "actions/reusable/.github/workflows/attest.yml"
    policy.write_text(policy.read_text() + f'signer_workflow = "{reusable}"\n')
    dest = tmp_path / "air-gapped"
    installed = nexo(
        "plugin",
        "install",
        registry.ref("mirror/echo:1.2.3"),
        "--dest",
        str(dest),
        "--plain-http",
        "--trusted-keys",
        str(policy),
        "--require-signature",
        "--yes",
        "--json",
        env=offline,
        in_process=True,
    )
    assert installed.code == 0, installed.stderr
    signature = installed.document["signature"]
    assert signature["status"] == "verified"
    assert signature["scheme"] == "github-attestation"
    # The SAN is the identity; the calling workflow is beside it.
    assert signature["identity"] == f"https://github.com/{reusable}@refs/tags/v1"
    assert signature["claims"]["build_config_uri"] == ACME_IDENTITY

    # A lock written when the calling workflow was the recorded identity still syncs.
    project = tmp_path / "fleet"
    project.mkdir()
    write_wanted(project / "nexo-plugins.toml", {"echo": registry.ref("mirror/echo")})
    common = ("--plain-http", "--trusted-keys", str(policy), "--require-signature")
    locked = nexo(
        "plugin",
        "lock",
        "-f",
        str(project / "nexo-plugins.toml"),
        *common,
        env=offline,
        in_process=True,
    )
    assert locked.code == 0, locked.stderr
    lock_file = project / "nexo-plugins.lock"
    assert signature["identity"] in lock_file.read_text()
    lock_file.write_text(lock_file.read_text().replace(signature["identity"], ACME_IDENTITY))
    synced = fleet_run(
        "sync",
        "--lock",
        lock_file,
        "--dest",
        str(tmp_path / "root"),
        "--frozen",
        *common,
        env=offline,
    )
    assert synced.code == 0, synced.stderr
    assert synced.document["plugins"][0]["action"] == "installed"


def test_upgrade_to_a_named_tag_of_the_registry_the_plugin_came_from(
    *, tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    """``upgrade ID@TAG`` (or ``--tag``) of a registry install moves to that tag of its
    repository with upgrade's rules, as it moves a release install to that release: an older
    version is ``downgrade_refused`` unless ``--allow-downgrade``, a tag the repository does not
    have is ``release_not_found``; the tag is never silently passed over."""
    home, reference = Path(fleet_env["NEXO_HOME"]), registry.ref("plugins/echo")
    for version in ("1.0.0", "2.0.0", "3.0.0"):
        push_dist(make_dist("echo", version, identity=None), reference, home)
    dest = tmp_path / "plugins"
    common = ("--dest", str(dest), "--plain-http", "--yes", "--json")

    def run(*args: str) -> tuple[int, dict[str, object]]:
        done = nexo("plugin", *args, *common, env=fleet_env, in_process=True)
        return done.code, done.document

    assert run("install", reference + ":2.0.0")[0] == 0
    code, document = run("upgrade", "echo@1.0.0")
    assert (code, document["kind"]) == (1, "downgrade_refused"), document
    code, document = run("upgrade", "echo@9.9.9")
    assert (code, document["kind"]) == (1, "release_not_found"), document
    assert sorted(p.name for p in dest.iterdir() if not p.name.startswith(".")) == ["echo-2.0.0"]
    code, document = run("upgrade", "echo", "--tag", "1.0.0", "--allow-downgrade")
    assert code == 0, document
    assert (document["from_version"], document["version"]) == ("2.0.0", "1.0.0")
    # `latest` follows the highest version tag, as without a tag.
    code, document = run("upgrade", "echo@latest")
    assert code == 0, document
    assert (document["from_version"], document["version"]) == ("1.0.0", "3.0.0")
