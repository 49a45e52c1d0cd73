"""The whole fleet flow against the real ``docker-registry`` behind htpasswd basic auth
(SPEC §8: "basic auth with an htpasswd file"): ``mirror`` and ``push`` write into it, ``lock``
and ``sync --frozen --require-signature`` read from it, credentials from
``REGISTRY_AUTH_FILE`` and from the docker config; without them every step is
``registry_auth`` and leaves nothing behind."""

from __future__ import annotations

from pathlib import Path

from support.cli import nexo
from support.github_server import GitHubServer, github_server
from support.private_sigstore import PrivateSigstore
from support.registry import Registry
from support.registry_env import publish_signed_release
from support.tarballs import tree_snapshot

from .conftest import ACME_IDENTITY, MakeDist, auth_config, fleet_run

__all__ = ["github_server"]


def test_mirror_push_lock_and_sync_through_basic_auth_and_refused_without_it(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    auth_registry: Registry,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    publish_signed_release(github_server, private_sigstore, "1.2.3")
    anonymous = {**fleet_env, "NEXO_GITHUB_API_BASE": github_server.url}
    config = auth_config(tmp_path, auth_registry)
    by_file = {**anonymous, "REGISTRY_AUTH_FILE": str(config)}
    docker = tmp_path / "docker"
    docker.mkdir()
    (docker / "config.json").write_bytes(config.read_bytes())
    by_docker = {**anonymous, "DOCKER_CONFIG": str(docker)}
    echo, weather = auth_registry.ref("site/echo"), auth_registry.ref("site/weather")
    dist = make_dist("weather", "0.4.0")

    # Writing without credentials: refused, nothing reaches the registry's storage.
    for args in (
        ("mirror", "acme/nexo-plugin-echo@v1.2.3", echo),
        ("push", str(dist), weather),
    ):
        refused = nexo("plugin", *args, "--plain-http", "--json", env=anonymous, in_process=True)
        assert (refused.code, refused.document["kind"]) == (1, "registry_auth"), refused.stderr
        assert auth_registry.blob_files() == []

    mirrored = nexo(
        "plugin", "mirror", "acme/nexo-plugin-echo@v1.2.3", echo, "--plain-http", "--json",
        env=by_file, in_process=True,
    )  # fmt: skip
    assert mirrored.code == 0, mirrored.stderr
    pushed = nexo("plugin", "push", str(dist), weather, "--plain-http", "--json", env=by_docker,
                  in_process=True)  # fmt: skip
    assert pushed.code == 0, pushed.stderr
    github_server.stop()  # from here on only the registry is there

    project = tmp_path / "fleet"
    project.mkdir()
    wanted = project / "nexo-plugins.toml"
    wanted.write_text(
        f'[plugins.weather]\nsource = "{weather}"\n[plugins.echo]\nsource = "{echo}"\n',
        encoding="utf-8",
    )
    lock = project / "nexo-plugins.lock"
    trust = ("--plain-http", "--trusted-keys", str(policy), "--require-signature")
    cold = {"NEXO_HOME": str(tmp_path / "cold-home")}  # an empty cache: every blob is asked
    refused = fleet_run("lock", "-f", wanted, *trust, env={**anonymous, **cold})
    assert (refused.code, refused.document["kind"]) == (1, "registry_auth"), refused.stderr
    assert not lock.exists()
    locked = fleet_run("lock", "-f", wanted, *trust, env={**by_file, **cold})
    assert locked.code == 0, locked.stderr
    assert locked.document["changes"] == {"echo": "locked 1.2.3", "weather": "locked 0.4.0"}
    assert lock.read_text(encoding="utf-8").count(f'identity = "{ACME_IDENTITY}"') == 3

    # A host with an empty cache and no credentials: each plugin fails on its own as
    # registry_auth; nothing is installed or cached.
    host = {"NEXO_HOME": str(tmp_path / "host-home")}
    dest = tmp_path / "root"
    sync = ("sync", "--lock", str(lock), "--dest", str(dest), "--frozen", *trust)
    failed = nexo("plugin", *sync, "--json", env={**anonymous, **host}, in_process=True)
    assert failed.code == 1
    assert [(p["id"], p["action"], p["kind"]) for p in failed.document["plugins"]] == [
        ("echo", "failed", "registry_auth"),
        ("weather", "failed", "registry_auth"),
    ]
    assert not dest.exists() or not [p for p in dest.iterdir() if not p.name.startswith(".")]
    blobs = tmp_path / "host-home" / "cache" / "blobs" / "sha256"
    assert not blobs.exists() or not any(blobs.iterdir())

    # With credentials from the docker config: installed with the original signer, and a
    # second run asks the registry nothing.
    synced = nexo("plugin", *sync, "--json", env={**by_docker, **host}, in_process=True)
    assert synced.code == 0, synced.stderr
    assert [(p["id"], p["action"], p.get("identity")) for p in synced.document["plugins"]] == [
        ("echo", "installed", ACME_IDENTITY),
        ("weather", "installed", ACME_IDENTITY),
    ]
    snapshot = tree_snapshot(dest)
    asked = auth_registry.all_requests()
    again = nexo("plugin", *sync, "--json", env={**by_docker, **host}, in_process=True)
    assert again.code == 0, again.stderr
    assert again.document["changed"] is False
    assert auth_registry.all_requests() == asked
    assert tree_snapshot(dest) == snapshot
