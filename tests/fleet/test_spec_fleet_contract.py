"""SPEC §8 read from the outside: the lock's fields and order, a sync that is idempotent and
served by the shared blob cache, a pruning dry run that plans without writing, and the
registry-auth error kinds, against the real ``docker-registry``."""

from __future__ import annotations

import base64
import json
import tomllib
from pathlib import Path

from support.cli import CliResult, nexo
from support.registry import PASSWORD, USER, Registry

from .conftest import LINUX, MakeDist, auth_config, push_dist

TARGET_KEYS = ("asset", "size", "sha256", "tree", "manifest", "identity", "issuer")


def _plugin(*args: str, env: dict[str, str]) -> CliResult:
    return nexo("plugin", *args, "--json", env=env, in_process=True)


def test_lock_then_sync_is_sorted_stable_and_idempotent(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist,
    policy: Path,
) -> None:  # fmt: skip
    home = Path(fleet_env["NEXO_HOME"])
    push_dist(make_dist("echo", "1.2.3"), registry.ref("plugins/echo:1.2.3"), home)
    push_dist(make_dist("zeta", "0.1.0"), registry.ref("plugins/zeta:0.1.0"), home)
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(  # deliberately not in id order
        f'[plugins.zeta]\nsource = "{registry.ref("plugins/zeta")}"\n'
        f'[plugins.echo]\nsource = "{registry.ref("plugins/echo")}"\nversion = "^1"\n',
        encoding="utf-8",
    )
    trust = ("--plain-http", "--trusted-keys", str(policy))
    locked = _plugin("lock", "-f", str(wanted), *trust, env=fleet_env)
    assert locked.code == 0, locked.stderr
    assert locked.document["changes"] == {"echo": "locked 1.2.3", "zeta": "locked 0.1.0"}
    lock = tmp_path / "nexo-plugins.lock"
    text = lock.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    assert data["lock_version"] == 1
    assert list(data["plugins"]) == ["echo", "zeta"]
    for entry in data["plugins"].values():
        assert list(entry["targets"]) == sorted(["noarch", LINUX])
        assert entry["resolved"].startswith(entry["source"] + "@sha256:")
        for target in entry["targets"].values():
            assert set(TARGET_KEYS) <= set(target)
            blob = home / "cache" / "blobs" / "sha256" / target["sha256"]
            assert blob.is_file()  # lock fetched every target into the shared cache
    again = _plugin("lock", "-f", str(wanted), *trust, env=fleet_env)
    assert again.code == 0
    assert again.document["changes"] == {}
    assert lock.read_text(encoding="utf-8") == text

    dest = tmp_path / "root"
    sync = ("sync", "--lock", str(lock), "--dest", str(dest), *trust)
    planned = _plugin(*sync, "--dry-run", env=fleet_env)
    assert planned.code == 0
    assert [(step["id"], step["action"]) for step in planned.document["plan"]] == [
        ("echo", "install"), ("zeta", "install"),
    ]  # fmt: skip
    assert not dest.exists() or not any(dest.iterdir())

    blob_gets = registry.blob_gets()
    first = _plugin(*sync, env=fleet_env)
    assert first.code == 0
    assert first.document["changed"] is True
    assert registry.blob_gets() == blob_gets  # every tarball came from the cache lock filled
    receipts = {path: path.read_bytes() for path in dest.glob("*/.nexo-install.json")}
    assert len(receipts) == 2

    requests = registry.all_requests()
    second = _plugin(*sync, "--frozen", env=fleet_env)
    assert second.code == 0
    assert second.document["changed"] is False
    assert {p["action"] for p in second.document["plugins"]} == {"unchanged"}
    assert registry.all_requests() == requests  # no request at all
    assert {path: path.read_bytes() for path in dest.glob("*/.nexo-install.json")} == receipts


def test_prune_dry_run_plans_the_removal_and_removes_nothing(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist,
    policy: Path,
) -> None:  # fmt: skip
    home = Path(fleet_env["NEXO_HOME"])
    push_dist(make_dist("echo", "1.2.3"), registry.ref("plugins/echo:1.2.3"), home)
    dest = tmp_path / "root"
    installed = _plugin(
        "install", registry.ref("plugins/echo:1.2.3"), "--plain-http", "--yes",
        "--dest", str(dest), "--trusted-keys", str(policy), env=fleet_env,
    )  # fmt: skip
    assert installed.code == 0, installed.stderr
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text("", encoding="utf-8")
    assert _plugin("lock", "-f", str(wanted), env=fleet_env).code == 0
    sync = ("sync", "--lock", str(tmp_path / "nexo-plugins.lock"), "--dest", str(dest), "--prune")
    planned = _plugin(*sync, "--dry-run", env=fleet_env)
    assert planned.code == 0
    assert planned.document["plan"] == [
        {"id": "echo", "action": "remove", "from_version": "1.2.3", "version": None}
    ]
    assert (dest / "echo-1.2.3" / ".nexo-install.json").is_file()
    pruned = _plugin(*sync, env=fleet_env)
    assert pruned.code == 0
    assert not (dest / "echo-1.2.3").exists()


def test_registry_auth_kinds(
    tmp_path: Path, fleet_env: dict[str, str], auth_registry: Registry, make_dist: MakeDist,
    policy: Path,
) -> None:  # fmt: skip
    dist = make_dist()
    reference = auth_registry.ref("plugins/echo:1.2.3")
    anonymous = _plugin("push", str(dist), reference, "--plain-http", env=fleet_env)
    assert (anonymous.code, anonymous.document["kind"]) == (1, "registry_auth")
    config = auth_config(tmp_path, auth_registry)
    pushed = _plugin(
        "push", str(dist), reference, "--plain-http", "--registry-config", str(config),
        env=fleet_env,
    )  # fmt: skip
    assert pushed.code == 0, pushed.stderr

    def install(dest: str, env: dict[str, str], *extra: str) -> CliResult:
        return _plugin(
            "install", reference, "--plain-http", "--yes", "--dest", str(tmp_path / dest),
            "--trusted-keys", str(policy), *extra, env=env,
        )  # fmt: skip

    assert install("by-env", dict(fleet_env, REGISTRY_AUTH_FILE=str(config))).code == 0
    docker = tmp_path / "docker"
    docker.mkdir()
    key = f"http://{auth_registry.host}/v2/"  # read as docker reads it: names the host
    (docker / "config.json").write_text(
        json.dumps({"auths": {key: {"username": USER, "password": PASSWORD}}}), encoding="utf-8"
    )
    assert install("by-docker", dict(fleet_env, DOCKER_CONFIG=str(docker))).code == 0

    wrong = tmp_path / "wrong.json"
    pair = base64.b64encode(f"{USER}:not-the-password".encode()).decode()
    wrong.write_text(json.dumps({"auths": {auth_registry.host: {"auth": pair}}}), encoding="utf-8")
    refused = install("refused", fleet_env, "--registry-config", str(wrong))
    assert (refused.code, refused.document["kind"]) == (1, "registry_auth")
    assert not (tmp_path / "refused").exists() or not any((tmp_path / "refused").glob("echo*"))

    malformed = tmp_path / "malformed.json"
    malformed.write_text("{not json", encoding="utf-8")
    for path in (malformed, tmp_path / "absent.json"):
        broken = install("broken", fleet_env, "--registry-config", str(path))
        assert (broken.code, broken.document["kind"]) == (2, "registry_config")
    assert not (tmp_path / "broken").exists() or not any((tmp_path / "broken").glob("echo*"))


def test_the_requests_report_names_only_the_hosts_asked(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist,
    policy: Path,
) -> None:  # fmt: skip
    home = Path(fleet_env["NEXO_HOME"])
    push_dist(make_dist("echo", "1.2.3"), registry.ref("plugins/echo:1.2.3"), home)
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.echo]\nsource = "{registry.ref("plugins/echo")}"\n')
    trust = ("--plain-http", "--trusted-keys", str(policy))
    assert _plugin("lock", "-f", str(wanted), *trust, env=fleet_env).code == 0
    before = registry.all_requests()
    # The lock filled the cache, and no signature is read: nothing is asked of the registry.
    synced = _plugin(
        "sync", "--frozen", "--lock", str(tmp_path / "nexo-plugins.lock"),
        "--dest", str(tmp_path / "root"), "--skip-signature-verify", *trust, env=fleet_env,
    )  # fmt: skip
    assert synced.code == 0, synced.stderr
    assert [p["action"] for p in synced.document["plugins"]] == ["installed"]
    assert registry.all_requests() == before
    assert synced.document["requests"]["registries"] == {}
