"""Artifacts carried by the ecosystem's own tools: Debian's ``skopeo``, ``oras`` (oras-py).

Every test runs the real client against real ``docker-registry`` servers on 127.0.0.1 and then
the real ``nexo`` CLI against what the client wrote, with real Sigstore signatures from the
private test instance. ``skopeo`` is a system tool (``scripts/test.sh`` installs it in CI);
``oras`` comes with the ``test`` extra.
"""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import tarfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo
from support.private_sigstore import PrivateSigstore
from support.registry import Registry, start_registry
from support.tarballs import plugin_tarball, tree_snapshot, write_plugin
from support.tools import require_tool

from nexo_pkg.sources import artifact
from nexo_pkg.sources.registry import INDEX_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, RegistryClient

from .conftest import ACME_IDENTITY, LINUX, MakeDist, fleet_run, push_dist

ISSUER = "https://token.actions.githubusercontent.com"
ACCEPT = f"{INDEX_MEDIA_TYPE}, {MANIFEST_MEDIA_TYPE}"


@pytest.fixture
def second_registry(tmp_path: Path) -> Iterator[Registry]:
    """Another registry, the destination of a copy."""
    running = start_registry(tmp_path / "second-registry")
    yield running
    running.stop()


def skopeo() -> str:
    return require_tool("skopeo", "apt-get install skopeo (scripts/test.sh does in CI)")


def get_json(running: Registry, path: str) -> dict[str, Any]:
    request = urllib.request.Request(f"http://{running.host}/v2/{path}", headers={"Accept": ACCEPT})
    with urllib.request.urlopen(request, timeout=10) as answer:
        document = json.loads(answer.read())
    assert isinstance(document, dict)
    return document


def tags_of(running: Registry, repository: str) -> list[str]:
    return sorted(get_json(running, f"{repository}/tags/list")["tags"])


def skopeo_copy_all(source: str, destination: str) -> None:
    done = subprocess.run(
        [skopeo(), "copy", "--all", "--src-tls-verify=false", "--dest-tls-verify=false",
         f"docker://{source}", f"docker://{destination}"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def copy_every_tag(source: Registry, target: Registry, repository: str, into: str) -> None:
    """``skopeo copy --all`` of every tag of ``repository`` (versions and sha256-… indexes)."""
    for tag in tags_of(source, repository):
        skopeo_copy_all(f"{source.host}/{repository}:{tag}", f"{target.host}/{into}:{tag}")


def push_docker_manifest(running: Registry, repository: str, tag: str | None) -> str:
    """A docker image manifest (neither an OCI index nor manifest) under ``tag``, else under
    its digest; returns the digest."""
    docker = "application/vnd.docker.distribution.manifest.v2+json"
    with RegistryClient(running.host, plain_http=True, loopback=True) as client:
        config, size = client.push_blob(repository, b"{}")
        data = artifact.canonical(
            {
                "schemaVersion": 2,
                "mediaType": docker,
                "config": artifact.descriptor(
                    "application/vnd.docker.container.image.v1+json", config, size
                ),
                "layers": [],
            }
        )
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        client.put_manifest(repository, tag or digest, data, docker)
    return digest


def wanted_file(directory: Path, source: str) -> Path:
    """A wanted set that asks for ``echo`` from ``source``, in a new ``directory``."""
    directory.mkdir()
    path = directory / "nexo-plugins.toml"
    path.write_text(f'[plugins.echo]\nsource = "{source}"\n')
    return path


def install_verified(
    env: dict[str, str], reference: str, dest: Path, policy: Path
) -> dict[str, Any]:
    installed = nexo(
        "plugin",
        "install",
        reference,
        "--dest",
        str(dest),
        "--plain-http",
        "--trusted-keys",
        str(policy),
        "--require-signature",
        "--yes",
        "--json",
        env=env,
        in_process=True,
    )
    assert installed.code == 0, installed.stderr
    return installed.document


def lock_and_sync_frozen(
    env: dict[str, str], tmp_path: Path, source: str, policy: Path, name: str
) -> dict[str, Any]:
    """Lock ``source`` and sync it with ``--frozen --require-signature`` into a new root."""
    project = wanted_file(tmp_path / f"fleet-{name}", source).parent
    common = ("--plain-http", "--trusted-keys", str(policy), "--require-signature")
    locked = nexo(
        "plugin",
        "lock",
        "-f",
        str(project / "nexo-plugins.toml"),
        *common,
        env=env,
        in_process=True,
    )
    assert locked.code == 0, locked.stderr
    host_env = {**env, "NEXO_HOME": str(tmp_path / f"home-{name}")}
    synced = fleet_run(
        "sync",
        "--lock",
        project / "nexo-plugins.lock",
        "--dest",
        str(tmp_path / f"root-{name}"),
        "--frozen",
        *common,
        env=host_env,
    )
    assert synced.code == 0, synced.stderr
    return synced.document


def test_a_skopeo_copy_all_of_every_tag_installs_and_syncs_with_its_signatures(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    second_registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    """skopeo 1.9 re-serialises the index and the tag-schema referrer indexes without
    ``artifactType``; the annotations and every per-target manifest survive byte-exact."""
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    tags = tags_of(registry, "plugins/echo")
    assert len([tag for tag in tags if tag.startswith("sha256-")]) == 2
    copy_every_tag(registry, second_registry, "plugins/echo", "copied/echo")
    copied = get_json(second_registry, "copied/echo/manifests/1.2.3")
    original = get_json(registry, "plugins/echo/manifests/1.2.3")
    assert "artifactType" in original
    assert "artifactType" not in copied
    assert all("artifactType" not in item for item in copied["manifests"])
    assert [m["digest"] for m in copied["manifests"]] == [
        m["digest"] for m in original["manifests"]
    ]

    result = install_verified(
        fleet_env, second_registry.ref("copied/echo:1.2.3"), tmp_path / "installed", policy
    )
    signature = result["signature"]
    assert (signature["status"], signature["identity"], signature["issuer"]) == (
        "verified",
        ACME_IDENTITY,
        ISSUER,
    )
    report = lock_and_sync_frozen(
        fleet_env, tmp_path, second_registry.ref("copied/echo"), policy, "copy"
    )
    assert [(p["action"], p["identity"]) for p in report["plugins"]] == [
        ("installed", ACME_IDENTITY)
    ]


def test_a_skopeo_sync_all_of_the_repository_installs_and_syncs_verified(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    second_registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    done = subprocess.run(
        [skopeo(), "sync", "--all", "--src", "docker", "--dest", "docker",
         "--src-tls-verify=false", "--dest-tls-verify=false",
         f"{registry.host}/plugins/echo", f"{second_registry.host}/synced"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert tags_of(second_registry, "synced/echo") == tags_of(registry, "plugins/echo")
    result = install_verified(
        fleet_env, second_registry.ref("synced/echo:1.2.3"), tmp_path / "installed", policy
    )
    assert (result["signature"]["status"], result["signature"]["identity"]) == (
        "verified",
        ACME_IDENTITY,
    )
    report = lock_and_sync_frozen(
        fleet_env, tmp_path, second_registry.ref("synced/echo"), policy, "sync"
    )
    assert report["plugins"][0]["identity"] == ACME_IDENTITY


def test_an_oras_push_of_a_tarball_with_the_documented_annotations_installs(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """oras-py writes one image manifest, no index and no ``artifactType``."""
    oras_client = pytest.importorskip("oras.client", reason="oras (oras-py) is in the test extra")
    directory = tmp_path / "oras"
    tarball = write_plugin(
        directory, "echo", "1.2.3", target=LINUX, data=plugin_tarball("echo", "1.2.3")
    )
    monkeypatch.chdir(directory)
    client = oras_client.OrasClient(hostname=registry.host, insecure=True)
    client.push(
        target=f"{registry.host}/single/echo:1.2.3",
        files=[f"{tarball.name}:{artifact.LAYER_MEDIA_TYPE}"],
        manifest_annotations={
            artifact.PLUGIN_ID: "echo",
            artifact.PLUGIN_VERSION: "1.2.3",
            artifact.PLUGIN_TARGET: LINUX,
        },
        quiet=True,
    )
    manifest = get_json(registry, "single/echo/manifests/1.2.3")
    assert manifest["mediaType"] == MANIFEST_MEDIA_TYPE
    assert "artifactType" not in manifest
    dest = tmp_path / "plugins"
    installed = nexo(
        "plugin",
        "install",
        registry.ref("single/echo:1.2.3"),
        "--dest",
        str(dest),
        "--plain-http",
        "--yes",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert installed.code == 0, installed.stderr
    result = installed.document
    assert (result["id"], result["version"], result["target"]) == ("echo", "1.2.3", LINUX)
    assert (dest / "echo-1.2.3" / "bin" / "echo").is_file()
    # Lock and sync take it as a version with that one target.
    wanted = wanted_file(tmp_path / "fleet", registry.ref("single/echo"))
    locked = nexo(
        "plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env, in_process=True
    )
    assert locked.code == 0, locked.stderr
    assert f"[plugins.echo.targets.{LINUX}]" in (wanted.parent / "nexo-plugins.lock").read_text()
    synced = nexo(
        "plugin",
        "sync",
        "--lock",
        str(wanted.parent / "nexo-plugins.lock"),
        "--dest",
        str(tmp_path / "root"),
        "--frozen",
        "--plain-http",
        env=fleet_env,
        in_process=True,
    )
    assert synced.code == 0, synced.stderr
    assert (tmp_path / "root" / "echo-1.2.3" / "bin" / "echo").is_file()


def test_a_manifest_without_the_annotations_is_refused_as_not_a_plugin(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    oras_client = pytest.importorskip("oras.client", reason="oras (oras-py) is in the test extra")
    directory = tmp_path / "oras"
    tarball = write_plugin(directory, "echo", "1.2.3", data=plugin_tarball("echo", "1.2.3"))
    monkeypatch.chdir(directory)
    oras_client.OrasClient(hostname=registry.host, insecure=True).push(
        target=f"{registry.host}/bare/echo:1.2.3", files=[tarball.name], quiet=True
    )
    dest = tmp_path / "plugins"
    refused = nexo(
        "plugin",
        "install",
        registry.ref("bare/echo:1.2.3"),
        "--dest",
        str(dest),
        "--plain-http",
        "--yes",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert refused.code == 1
    document = refused.document
    assert document["kind"] == "registry_invalid"
    assert "is not a nexo plugin" in document["error"]
    assert not dest.exists() or not any(p for p in dest.iterdir() if p.name.startswith("echo"))


def test_a_per_target_manifest_by_digest_installs_verified(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    index = get_json(registry, "plugins/echo/manifests/1.2.3")
    noarch = next(
        m["digest"]
        for m in index["manifests"]
        if m["annotations"][artifact.PLUGIN_TARGET] == "noarch"
    )
    result = install_verified(
        fleet_env, f"{registry.ref('plugins/echo')}@{noarch}", tmp_path / "plugins", policy
    )
    assert (result["target"], result["signature"]["identity"]) == ("noarch", ACME_IDENTITY)


def test_a_lock_of_a_per_target_manifest_by_digest_gives_every_host_the_same_receipt(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    """One target's manifest carries no creation time of its own: the lock dates the version
    by its tarball (as push does), so a frozen sync on another host, at another moment,
    writes the same receipt rather than one stamped with its own clock."""
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    index = get_json(registry, "plugins/echo/manifests/1.2.3")
    noarch = next(
        m["digest"]
        for m in index["manifests"]
        if m["annotations"][artifact.PLUGIN_TARGET] == "noarch"
    )
    source = f"{registry.ref('plugins/echo')}@{noarch}"
    first = lock_and_sync_frozen(fleet_env, tmp_path, source, policy, "one")
    lock_text = (tmp_path / "fleet-one" / "nexo-plugins.lock").read_text()
    # The tarballs of support.tarballs are packed at 1_700_000_000.
    assert 'published = "2023-11-14T22:13:20Z"' in lock_text
    time.sleep(1.1)
    host_env = {**fleet_env, "NEXO_HOME": str(tmp_path / "home-two")}
    second = fleet_run(
        "sync", "--lock", tmp_path / "fleet-one" / "nexo-plugins.lock",
        "--dest", str(tmp_path / "root-two"), "--frozen", "--plain-http",
        "--trusted-keys", str(policy), "--require-signature", env=host_env,
    )  # fmt: skip
    assert second.code == 0, second.stderr
    assert first["plugins"][0]["identity"] == ACME_IDENTITY
    assert tree_snapshot(tmp_path / "root-two") == tree_snapshot(tmp_path / "root-one")
    receipt = json.loads((tmp_path / "root-two" / "echo-1.2.3" / ".nexo-install.json").read_text())
    assert receipt["installed_at"] == "2023-11-14T22:13:20Z"


def test_a_foreign_manifest_by_digest_names_the_reference_with_an_at_sign(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
) -> None:
    """A docker image manifest is neither an index nor an OCI manifest."""
    digest = push_docker_manifest(registry, "foreign/thing", None)
    refused = nexo(
        "plugin",
        "install",
        f"{registry.ref('foreign/thing')}@{digest}",
        "--dest",
        str(tmp_path / "plugins"),
        "--plain-http",
        "--yes",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert refused.code == 1
    document = refused.document
    assert document["kind"] == "registry_invalid"
    assert f"foreign/thing@{digest} is a" in document["error"]
    assert "thing:sha256" not in document["error"]


def test_signatures_are_attached_as_cosign_bundle_referrers(
    *, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    index = get_json(registry, "plugins/echo/manifests/1.2.3")
    for entry in index["manifests"]:
        fallback = get_json(registry, "plugins/echo/manifests/" + entry["digest"].replace(":", "-"))
        (descriptor,) = fallback["manifests"]
        assert descriptor["artifactType"] == artifact.BUNDLE_MEDIA_TYPE
        assert descriptor["annotations"][artifact.BUNDLE_CONTENT] == "message-signature"
        referrer = get_json(registry, f"plugins/echo/manifests/{descriptor['digest']}")
        assert referrer["artifactType"] == artifact.BUNDLE_MEDIA_TYPE
        assert referrer["subject"]["digest"] == entry["digest"]
        (layer,) = referrer["layers"]
        assert layer["mediaType"] == artifact.BUNDLE_MEDIA_TYPE
        assert referrer["config"]["mediaType"] == artifact.EMPTY_MEDIA_TYPE


def test_a_referrer_of_the_earlier_nexo_signature_type_still_verifies(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    private_sigstore: PrivateSigstore,
    policy: Path,
) -> None:
    """An artifact pushed before the cosign layout: one referrer of nexo's own type."""
    dist = make_dist(identity=None, targets=(LINUX,))
    push_dist(dist, registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    index = get_json(registry, "plugins/echo/manifests/1.2.3")
    (entry,) = index["manifests"]
    name = f"echo-1.2.3-{LINUX}.tar.gz"
    bundle = json.dumps(
        private_sigstore.sign((dist / name).read_bytes(), identity=ACME_IDENTITY)
    ).encode()
    with RegistryClient(registry.host, plain_http=True, loopback=True) as client:
        empty, empty_size = client.push_blob("plugins/echo", artifact.EMPTY_DATA)
        layer, layer_size = client.push_blob("plugins/echo", bundle)
        referrer = {
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA_TYPE,
            "artifactType": artifact.SIGNATURE_ARTIFACT_TYPE,
            "config": artifact.descriptor(artifact.EMPTY_MEDIA_TYPE, empty, empty_size),
            "layers": [
                artifact.descriptor(
                    artifact.BUNDLE_MEDIA_TYPE, layer, layer_size,
                    annotations={artifact.TITLE: name + ".sigstore.json"},
                )
            ],
            "subject": artifact.descriptor(MANIFEST_MEDIA_TYPE, entry["digest"], entry["size"]),
        }  # fmt: skip
        _attach_referrer(
            client, entry["digest"], artifact.canonical(referrer), artifact.SIGNATURE_ARTIFACT_TYPE
        )
    result = install_verified(
        fleet_env, registry.ref("plugins/echo:1.2.3"), tmp_path / "plugins", policy
    )
    assert (result["signature"]["status"], result["signature"]["identity"]) == (
        "verified",
        ACME_IDENTITY,
    )


def test_two_pushes_of_one_dist_without_source_date_epoch_give_one_index_digest(
    *, tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    assert "SOURCE_DATE_EPOCH" not in fleet_env
    dist = make_dist()
    digests = []
    for name in ("first", "second"):
        pushed = nexo(
            "plugin",
            "push",
            str(dist),
            registry.ref(f"{name}/echo"),
            "--plain-http",
            "--json",
            env=fleet_env,
            in_process=True,
        )
        assert pushed.code == 0, pushed.stderr
        digests.append(pushed.document["digest"])
        time.sleep(1.1)  # the clock moves on between the pushes
    assert digests[0] == digests[1]
    index = get_json(registry, "first/echo/manifests/1.2.3")
    # The time is the one pack wrote into the tarball's entries.
    with tarfile.open(dist / f"echo-1.2.3-{LINUX}.tar.gz") as archive:
        mtime = archive.getmembers()[0].mtime
    created = index["annotations"][artifact.CREATED]
    assert created == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(mtime))


def test_a_frozen_sync_through_a_registry_mirror_never_asks_the_locked_registry(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    second_registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    wanted = wanted_file(tmp_path / "fleet", registry.ref("plugins/echo"))
    project = wanted.parent
    lock_file = project / "nexo-plugins.lock"
    common = ("--plain-http", "--trusted-keys", str(policy), "--require-signature")
    assert (
        nexo("plugin", "lock", "-f", str(wanted), *common, env=fleet_env, in_process=True).code == 0
    )
    lock_text = lock_file.read_text()

    def sync_into(name: str, *extra: str, env: dict[str, str] | None = None) -> dict[str, Any]:
        host_env = {**(env or fleet_env), "NEXO_HOME": str(tmp_path / f"home-{name}")}
        synced = fleet_run(
            "sync",
            "--lock",
            lock_file,
            "--dest",
            str(tmp_path / name),
            "--frozen",
            *common,
            *extra,
            env=host_env,
        )
        assert synced.code == 0, synced.stderr
        return synced.document

    sync_into("from-origin")
    copy_every_tag(registry, second_registry, "plugins/echo", "plugins/echo")
    copy_every_tag(registry, second_registry, "plugins/echo", "cache/plugins/echo")
    registry.stop()
    served_before = registry.all_requests()

    flag = sync_into("by-flag", "--registry-mirror", f"{registry.host}={second_registry.host}")
    env = {**fleet_env, "NEXO_REGISTRY_MIRRORS": f"{registry.host}={second_registry.host}"}
    by_env = sync_into("by-env", env=env)
    wanted.write_text(
        wanted.read_text()
        + f'\n[registries."{registry.host}"]\nmirrors = ["{second_registry.host}/cache"]\n'
    )
    by_table = sync_into("by-table")

    origin = tree_snapshot(tmp_path / "from-origin")
    for name, report in (("by-flag", flag), ("by-env", by_env), ("by-table", by_table)):
        assert tree_snapshot(tmp_path / name) == origin, name
        assert list(report["requests"]["registries"]) == [second_registry.host]
        assert report["plugins"][0]["identity"] == ACME_IDENTITY
        assert report["relocked"] is False
    assert registry.all_requests() == served_before
    assert lock_file.read_text() == lock_text


def test_an_install_by_digest_is_served_by_a_mirror_and_a_tag_only_by_its_registry(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    second_registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    """``NEXO_REGISTRY_MIRRORS`` serves an ``install oci://…@sha256:…`` whole, index
    included, with the registry down (a digest pins every byte, so a mirror cannot change
    it); a tag is only ever resolved against the registry it names."""
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    with urllib.request.urlopen(
        urllib.request.Request(
            f"http://{registry.host}/v2/plugins/echo/manifests/1.2.3",
            headers={"Accept": INDEX_MEDIA_TYPE},
            method="HEAD",
        )
    ) as answer:
        digest = answer.headers["Docker-Content-Digest"]
    # A byte-for-byte copy (skopeo would re-serialise the index under another digest).
    mirrored = nexo(
        "plugin", "mirror", registry.ref("plugins/echo:1.2.3"),
        second_registry.ref("cache/plugins/echo"), "--plain-http", env=fleet_env, in_process=True,
    )  # fmt: skip
    assert mirrored.code == 0, mirrored.stderr
    registry.stop()
    env = {
        **fleet_env,
        "NEXO_HOME": str(tmp_path / "offline-home"),
        "NEXO_REGISTRY_MIRRORS": f"{registry.host}={second_registry.host}/cache",
    }
    dest = tmp_path / "plugins"
    common = ("--dest", str(dest), "--plain-http", "--trusted-keys", str(policy), "--yes")
    installed = nexo(
        "plugin", "install", registry.ref(f"plugins/echo@{digest}"), *common,
        "--require-signature", "--json", env=env, in_process=True,
    )  # fmt: skip
    assert installed.code == 0, installed.stderr
    assert installed.document["signature"]["identity"] == ACME_IDENTITY
    receipt = json.loads((dest / "echo-1.2.3" / ".nexo-install.json").read_text())
    assert receipt["registry"] == registry.ref(f"plugins/echo@{digest}")
    by_tag = nexo(
        "plugin", "install", registry.ref("plugins/echo:1.2.3"), *common, "--force", "--json",
        env=env, in_process=True,
    )  # fmt: skip
    assert (by_tag.code, by_tag.document["kind"]) == (1, "network")
    assert registry.host in by_tag.document["error"]


def test_a_mirror_that_serves_other_bytes_is_refused_and_nothing_is_installed(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    second_registry: Registry,
    make_dist: MakeDist,
) -> None:
    dist = make_dist(identity=None, targets=(LINUX,))
    push_dist(dist, registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    wanted = wanted_file(tmp_path / "fleet", registry.ref("plugins/echo"))
    project = wanted.parent
    assert (
        nexo(
            "plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env, in_process=True
        ).code
        == 0
    )
    copy_every_tag(registry, second_registry, "plugins/echo", "plugins/echo")
    tarball = (dist / f"echo-1.2.3-{LINUX}.tar.gz").read_bytes()
    for blob in second_registry.blob_files():
        if blob.read_bytes() == tarball:
            blob.write_bytes(tarball[:-1] + bytes([tarball[-1] ^ 0xFF]))
    registry.stop()
    dest = tmp_path / "root"
    synced = fleet_run(
        "sync",
        "--lock",
        project / "nexo-plugins.lock",
        "--dest",
        str(dest),
        "--frozen",
        "--plain-http",
        "--registry-mirror",
        f"{registry.host}={second_registry.host}",
        env={**fleet_env, "NEXO_HOME": str(tmp_path / "clean-home")},
    )
    assert synced.code == 1
    assert synced.document["plugins"][0]["kind"] == "checksum_mismatch"
    assert not (dest / "echo-1.2.3").exists()


def test_a_mirror_that_lacks_the_digest_or_is_down_is_passed_over(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    second_registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    """As containerd's hosts: the first mirror that has the manifest serves it; an empty
    mirror falls through to the registry, a closed one to the next mirror."""
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    wanted = wanted_file(tmp_path / "fleet", registry.ref("plugins/echo"))
    lock_file = wanted.parent / "nexo-plugins.lock"
    common = ("--plain-http", "--trusted-keys", str(policy), "--require-signature")
    assert nexo("plugin", "lock", "-f", str(wanted), *common, env=fleet_env,
                in_process=True).code == 0  # fmt: skip
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{probe.getsockname()[1]}"

    def sync_into(name: str, *mirrors: str) -> dict[str, Any]:
        flags = [flag for mirror in mirrors
                 for flag in ("--registry-mirror", f"{registry.host}={mirror}")]  # fmt: skip
        synced = fleet_run(
            "sync", "--lock", lock_file, "--dest", str(tmp_path / name), "--frozen",
            *common, *flags, env={**fleet_env, "NEXO_HOME": str(tmp_path / f"home-{name}")},
        )  # fmt: skip
        assert synced.code == 0, synced.stderr
        assert synced.document["plugins"][0]["identity"] == ACME_IDENTITY
        return dict(synced.document["requests"]["registries"])

    # The mirror holds nothing yet: it is asked for the manifest, the registry serves it.
    empty = sync_into("empty-mirror", second_registry.host)
    assert set(empty[second_registry.host]) == {"manifest_get"}
    assert empty[registry.host]["blob_get"] == 2
    copy_every_tag(registry, second_registry, "plugins/echo", "plugins/echo")
    registry.stop()
    served = sync_into("closed-mirror", closed, second_registry.host)
    assert served[second_registry.host]["blob_get"] == 2
    assert registry.host not in served
    assert tree_snapshot(tmp_path / "closed-mirror") == tree_snapshot(tmp_path / "empty-mirror")


def test_a_mirror_that_serves_another_signer_s_signature_is_refused(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    second_registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    """The same manifests and tarballs, signed by another identity the policy also trusts:
    a mirror is trusted for bytes only, so the signer the lock recorded decides."""
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    wanted = wanted_file(tmp_path / "fleet", registry.ref("plugins/echo"))
    lock_file = wanted.parent / "nexo-plugins.lock"
    common = ("--plain-http", "--trusted-keys", str(policy), "--require-signature")
    assert nexo("plugin", "lock", "-f", str(wanted), *common, env=fleet_env,
                in_process=True).code == 0  # fmt: skip
    rebuilt = ACME_IDENTITY.replace("v1.2.3", "v1.2.3-rebuilt")  # matches the policy too
    push_dist(make_dist(identity=rebuilt), second_registry.ref("plugins/echo"),
              Path(fleet_env["NEXO_HOME"]))  # fmt: skip
    registry.stop()
    dest = tmp_path / "root"
    refused = fleet_run(
        "sync", "--lock", lock_file, "--dest", str(dest), "--frozen", *common,
        "--registry-mirror", f"{registry.host}={second_registry.host}",
        env={**fleet_env, "NEXO_HOME": str(tmp_path / "clean-home")},
    )  # fmt: skip
    assert refused.code == 1
    (plugin,) = refused.document["plugins"]
    assert plugin["kind"] == "signer_untrusted"
    assert rebuilt in plugin["error"]
    assert not (dest / "echo-1.2.3").exists()


@pytest.mark.parametrize(
    ("where", "value", "kind"),
    [
        ("flag", "no-equals-sign", "usage"),
        ("flag", "registry.example.com=Bad Host", "usage"),
        ("env", "registry.example.com=", "usage"),
        ("table", 'mirrors = "not-a-list"', "wanted_invalid"),
        ("table", 'mirrors = ["bad host"]', "wanted_invalid"),
        ("table", 'mirror = ["typo.example.com"]', "wanted_invalid"),
        # A registry host with a path never equals a reference's host: the mirror would
        # never be used, so it is refused rather than passed over in silence.
        ("flag", "registry.example.com/plugins=mirror.example.com", "usage"),
        ("env", "https://registry.example.com=mirror.example.com", "usage"),
    ],
)
def test_a_malformed_mirror_setting_is_refused_before_anything_is_fetched(
    *, tmp_path: Path, fleet_env: dict[str, str], where: str, value: str, kind: str
) -> None:
    project = tmp_path / "fleet"
    project.mkdir()
    wanted = '[plugins.echo]\nsource = "oci://registry.example.com/plugins/echo"\n'
    if where == "table":
        wanted += f'\n[registries."registry.example.com"]\n{value}\n'
    (project / "nexo-plugins.toml").write_text(wanted)
    lock_file = project / "nexo-plugins.lock"
    env = dict(fleet_env)
    extra: list[str] = []
    if where == "flag":
        extra = ["--registry-mirror", value]
    if where == "env":
        env["NEXO_REGISTRY_MIRRORS"] = value
    dest = tmp_path / "root"
    refused = fleet_run("sync", "--lock", lock_file, "--dest", str(dest), *extra, env=env)
    assert refused.code == 2, refused.stderr
    assert refused.document["kind"] == kind
    assert not lock_file.exists()
    assert not dest.exists()


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("registry.example.com=https://mirror.example.com/cache",
         "the mirror 'https://mirror.example.com/cache' has a URL scheme; write it as "
         "HOST[:PORT][/PATH]"),
        ("registry.example.com/plugins=mirror.example.com",
         "the host 'registry.example.com/plugins' has a path"),
        ("registry.example.com=mirror.example.com/Cache",
         "the mirror 'mirror.example.com/Cache' is refused: repository path components"),
        ("registry.example.com=mirror.example.com:99999",
         "the mirror 'mirror.example.com:99999' is refused: 'mirror.example.com:99999' is not "
         "a registry host[:port]"),
    ],
)  # fmt: skip
def test_a_malformed_mirror_is_named_as_written_in_one_line_with_its_kind(
    *, tmp_path: Path, fleet_env: dict[str, str], value: str, words: str
) -> None:
    """The refusal speaks of the ``HOST=MIRROR`` the user wrote, never of a reference it was
    checked as (``oci://…/probe``), and the text line ends with the ``--json`` kind."""
    project = tmp_path / "fleet"
    project.mkdir()
    (project / "nexo-plugins.toml").write_text(
        '[plugins.echo]\nsource = "oci://registry.example.com/plugins/echo"\n'
    )
    args = ("plugin", "sync", "--lock", str(project / "nexo-plugins.lock"),
            "--dest", str(tmp_path / "root"), "--registry-mirror", value)  # fmt: skip
    text = nexo(*args, env=fleet_env, in_process=True)
    document = nexo(*args, "--json", env=fleet_env, in_process=True)
    assert (text.code, document.code) == (2, 2)
    assert document.document["kind"] == "usage"
    (line,) = text.stderr.splitlines()
    assert line == f"error: {document.document['error']} [usage]"
    assert words in line
    assert "probe" not in line
    assert "oci://" not in line
    assert not (project / "nexo-plugins.lock").exists()
    assert not (tmp_path / "root").exists()


def raw_manifest(running: Registry, repository: str, reference: str) -> bytes:
    request = urllib.request.Request(
        f"http://{running.host}/v2/{repository}/manifests/{reference}", headers={"Accept": ACCEPT}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return bytes(answer.read())


def mirror(env: dict[str, str], source: str, destination: str) -> dict[str, Any]:
    done = nexo(
        "plugin", "mirror", source, destination, "--plain-http", "--json", env=env, in_process=True
    )
    assert done.code == 0, done.stderr
    return done.document


def test_mirror_between_registries_keeps_every_digest_and_a_second_run_copies_nothing(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    second_registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    index = raw_manifest(registry, "plugins/echo", "1.2.3")
    with RegistryClient(registry.host, plain_http=True, loopback=True) as client:
        client.put_manifest("plugins/echo", "stable", index, INDEX_MEDIA_TYPE)
    source, copy = registry.ref("plugins/echo:1.2.3"), second_registry.ref("copy/echo")

    first = mirror(fleet_env, source, copy)
    assert first["tags"] == ["1.2.3", "stable"]
    assert first["copied"]["blobs"] >= 5  # empty config, two tarballs, two bundles
    assert tags_of(second_registry, "copy/echo") == tags_of(registry, "plugins/echo")
    for tag in tags_of(registry, "plugins/echo"):
        assert raw_manifest(second_registry, "copy/echo", tag) == raw_manifest(
            registry, "plugins/echo", tag
        )

    writes = second_registry.requests("(PUT|POST|PATCH)", ".")
    again = mirror(fleet_env, source, copy)
    assert again["copied"] == {"blobs": 0, "manifests": 0, "tags": 0}
    assert again["digest"] == first["digest"]
    assert second_registry.requests("(PUT|POST|PATCH)", ".") == writes

    registry.stop()
    result = install_verified(
        fleet_env, second_registry.ref("copy/echo:stable"), tmp_path / "plugins", policy
    )
    assert (result["signature"]["status"], result["signature"]["identity"]) == (
        "verified",
        ACME_IDENTITY,
    )


def test_mirror_by_digest_to_an_untagged_repository_prints_a_pinned_reference_that_installs(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    second_registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    """No tag on either side: the copy is reachable by its digest alone, so ``pinned`` must
    name the destination repository (its host's port included) at that digest."""
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    (entry, _) = get_json(registry, "plugins/echo/manifests/1.2.3")["manifests"]
    source = registry.ref("plugins/echo@" + entry["digest"])
    copied = mirror(fleet_env, source, second_registry.ref("bydigest/echo"))
    assert copied["digest"] == entry["digest"]
    assert copied["tags"] == []
    pinned = second_registry.ref("bydigest/echo@" + entry["digest"])
    assert copied["pinned"] == pinned
    tagged = mirror(fleet_env, registry.ref("plugins/echo:1.2.3"), second_registry.ref("t/echo"))
    assert tagged["pinned"] == second_registry.ref("t/echo@" + tagged["digest"])
    registry.stop()
    result = install_verified(fleet_env, pinned, tmp_path / "plugins", policy)
    assert (result["id"], result["version"], result["signature"]["status"]) == (
        "echo",
        "1.2.3",
        "verified",
    )


def test_mirror_between_registries_resumes_a_partial_copy(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    second_registry: Registry,
    make_dist: MakeDist,
) -> None:
    dist = make_dist()
    push_dist(dist, registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    full = mirror(fleet_env, registry.ref("plugins/echo:1.2.3"), second_registry.ref("full/echo"))
    # A run cut off after one tarball: only that blob is there.
    with RegistryClient(second_registry.host, plain_http=True, loopback=True) as client:
        client.push_blob("part/echo", dist / f"echo-1.2.3-{LINUX}.tar.gz")
    resumed = mirror(
        fleet_env, registry.ref("plugins/echo:1.2.3"), second_registry.ref("part/echo")
    )
    assert resumed["copied"]["blobs"] == full["copied"]["blobs"] - 1
    assert resumed["copied"]["manifests"] == full["copied"]["manifests"]
    assert tags_of(second_registry, "part/echo") == tags_of(registry, "plugins/echo")


def test_mirror_between_registries_refuses_what_is_not_a_plugin_and_writes_nothing(
    *, fleet_env: dict[str, str], registry: Registry, second_registry: Registry
) -> None:
    push_docker_manifest(registry, "foreign/thing", "1.0.0")
    refused = nexo(
        "plugin",
        "mirror",
        registry.ref("foreign/thing:1.0.0"),
        second_registry.ref("copy/thing"),
        "--plain-http",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert refused.code == 1
    assert refused.document["kind"] == "registry_invalid"
    assert second_registry.requests("(PUT|POST|PATCH)", ".") == 0
    to_digest = nexo(
        "plugin",
        "mirror",
        registry.ref("foreign/thing:1.0.0"),
        second_registry.ref("copy/thing") + "@sha256:" + "a" * 64,
        "--plain-http",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert to_digest.code == 2
    assert to_digest.document["kind"] == "usage"


def test_mirror_between_registries_stops_at_a_referrer_chain_too_deep_for_a_plugin(
    *, fleet_env: dict[str, str], registry: Registry, second_registry: Registry, make_dist: MakeDist
) -> None:
    """A source registry answering with an endless chain of referrers is refused in one
    line, not followed until the interpreter's recursion limit."""
    push_dist(make_dist(identity=None, targets=(LINUX,)), registry.ref("plugins/echo"),
              Path(fleet_env["NEXO_HOME"]))  # fmt: skip
    (entry,) = get_json(registry, "plugins/echo/manifests/1.2.3")["manifests"]
    subject = artifact.descriptor(MANIFEST_MEDIA_TYPE, entry["digest"], entry["size"])
    with RegistryClient(registry.host, plain_http=True, loopback=True) as client:
        empty, size = client.push_blob("plugins/echo", artifact.EMPTY_DATA)
        for _ in range(24):
            data = artifact.canonical(
                {
                    "schemaVersion": 2,
                    "mediaType": MANIFEST_MEDIA_TYPE,
                    "artifactType": "application/x-chain",
                    "config": artifact.descriptor(artifact.EMPTY_MEDIA_TYPE, empty, size),
                    "layers": [artifact.descriptor(artifact.EMPTY_MEDIA_TYPE, empty, size)],
                    "subject": subject,
                }
            )
            digest = "sha256:" + hashlib.sha256(data).hexdigest()
            client.put_manifest("plugins/echo", digest, data, MANIFEST_MEDIA_TYPE)
            listing = {
                "schemaVersion": 2,
                "mediaType": INDEX_MEDIA_TYPE,
                "manifests": [artifact.descriptor(MANIFEST_MEDIA_TYPE, digest, len(data))],
            }
            client.put_manifest(
                "plugins/echo", str(subject["digest"]).replace(":", "-"),
                artifact.canonical(listing), INDEX_MEDIA_TYPE,
            )  # fmt: skip
            subject = artifact.descriptor(MANIFEST_MEDIA_TYPE, digest, len(data))
    refused = nexo(
        "plugin",
        "mirror",
        registry.ref("plugins/echo:1.2.3"),
        second_registry.ref("copy/echo"),
        "--plain-http",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert refused.code == 1, refused.stderr
    document = refused.document
    assert document["kind"] == "registry_invalid"
    assert "deep" in document["error"]
    assert "Traceback" not in refused.stderr


def test_a_skopeo_copy_mirrors_on_with_its_signatures(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    second_registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    """Reading is tolerant in ``mirror`` too: an index skopeo re-serialised without
    ``artifactType``, and its tag-schema referrer indexes, are copied on byte for byte, and
    the copy of the copy installs verified."""
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    copy_every_tag(registry, second_registry, "plugins/echo", "copied/echo")
    assert "artifactType" not in get_json(second_registry, "copied/echo/manifests/1.2.3")
    registry.stop()
    third = start_registry(tmp_path / "third-registry")
    try:
        copied = mirror(fleet_env, second_registry.ref("copied/echo:1.2.3"), third.ref("m/echo"))
        assert copied["tags"] == ["1.2.3"]
        assert tags_of(third, "m/echo") == tags_of(second_registry, "copied/echo")
        for tag in tags_of(second_registry, "copied/echo"):
            assert raw_manifest(third, "m/echo", tag) == raw_manifest(
                second_registry, "copied/echo", tag
            )
        second_registry.stop()
        result = install_verified(fleet_env, third.ref("m/echo:1.2.3"), tmp_path / "p", policy)
        assert (result["signature"]["status"], result["signature"]["identity"]) == (
            "verified",
            ACME_IDENTITY,
        )
    finally:
        third.stop()


def test_a_skopeo_copy_of_the_version_tag_alone_is_refused_unsigned_under_a_required_signature(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    second_registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    """skopeo copies no referrers: without the ``sha256-…`` tags the copy carries no
    signature, and ``--require-signature`` refuses it in one line ending with its kind."""
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    skopeo_copy_all(
        f"{registry.host}/plugins/echo:1.2.3", f"{second_registry.host}/bare/echo:1.2.3"
    )
    assert tags_of(second_registry, "bare/echo") == ["1.2.3"]
    dest = tmp_path / "plugins"
    args = ("plugin", "install", second_registry.ref("bare/echo:1.2.3"), "--dest", str(dest),
            "--plain-http", "--trusted-keys", str(policy), "--require-signature",
            "--yes")  # fmt: skip
    text = nexo(*args, env=fleet_env, in_process=True)
    document = nexo(*args, "--json", env=fleet_env, in_process=True)
    assert (text.code, document.code) == (1, 1)
    assert document.document["kind"] == "signature_missing"
    (line,) = text.stderr.splitlines()
    assert line == f"error: {document.document['error']} [signature_missing]"
    # It says where a registry keeps signatures, and how a copy keeps them; not the file
    # names a GitHub release carries beside its tarball.
    assert "signature referrers of its manifest" in line
    assert "sha256-… tags are copied too" in line
    assert ".sigstore.json" not in line
    assert not dest.exists() or not list(dest.iterdir())


def test_a_sigstore_bundle_named_dot_bundle_is_attached_as_a_cosign_bundle_referrer(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    """``cosign sign-blob --new-bundle-format --bundle X.bundle`` writes a Sigstore bundle
    under the ``.bundle`` name: a push attaches it as cosign's bundle spec does (its own
    referrer of the bundle's type), so cosign-style tooling finds it, and install verifies."""
    dist = make_dist(targets=(LINUX,))
    name = f"echo-1.2.3-{LINUX}.tar.gz"
    (dist / f"{name}.sigstore.json").rename(dist / f"{name}.bundle")
    push_dist(dist, registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    (entry,) = get_json(registry, "plugins/echo/manifests/1.2.3")["manifests"]
    fallback = get_json(registry, "plugins/echo/manifests/" + entry["digest"].replace(":", "-"))
    (descriptor,) = fallback["manifests"]
    assert descriptor["artifactType"] == artifact.BUNDLE_MEDIA_TYPE
    referrer = get_json(registry, f"plugins/echo/manifests/{descriptor['digest']}")
    assert referrer["artifactType"] == artifact.BUNDLE_MEDIA_TYPE
    assert referrer["annotations"][artifact.BUNDLE_CONTENT] == "message-signature"
    (layer,) = referrer["layers"]
    assert layer["mediaType"] == artifact.BUNDLE_MEDIA_TYPE
    result = install_verified(
        fleet_env, registry.ref("plugins/echo:1.2.3"), tmp_path / "plugins", policy
    )
    assert (result["signature"]["status"], result["signature"]["identity"]) == (
        "verified",
        ACME_IDENTITY,
    )


@pytest.mark.parametrize("titled", [False, True], ids=["untitled", "digest-title"])
def test_a_bundle_attached_as_cosign_s_bundle_spec_lays_it_out_verifies(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    private_sigstore: PrivateSigstore,
    policy: Path,
    titled: bool,
) -> None:
    """cosign attaches a bundle as a referrer whose one layer is either untitled or titled
    ``sha256-<bundle digest hex>.sigstore.json`` (its bundle spec's suggested file name), and
    lists it in the ``sha256-<subject>`` index on a registry without the referrers API: either
    way it is the signature of the manifest it refers to."""
    dist = make_dist(identity=None, targets=(LINUX,))
    push_dist(dist, registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    (entry,) = get_json(registry, "plugins/echo/manifests/1.2.3")["manifests"]
    bundle = json.dumps(
        private_sigstore.sign(
            (dist / f"echo-1.2.3-{LINUX}.tar.gz").read_bytes(), identity=ACME_IDENTITY
        )
    ).encode()
    with RegistryClient(registry.host, plain_http=True, loopback=True) as client:
        empty, empty_size = client.push_blob("plugins/echo", artifact.EMPTY_DATA)
        layer, layer_size = client.push_blob("plugins/echo", bundle)
        title = {artifact.TITLE: layer.replace(":", "-") + ".sigstore.json"} if titled else None
        annotations = {
            artifact.BUNDLE_CONTENT: "message-signature",
            artifact.CREATED: "2024-03-07T18:17:38.000Z",
        }
        referrer = {
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA_TYPE,
            "artifactType": artifact.BUNDLE_MEDIA_TYPE,
            "config": artifact.descriptor(artifact.EMPTY_MEDIA_TYPE, empty, empty_size),
            "layers": [
                artifact.descriptor(
                    artifact.BUNDLE_MEDIA_TYPE, layer, layer_size, annotations=title
                )
            ],
            "subject": artifact.descriptor(MANIFEST_MEDIA_TYPE, entry["digest"], entry["size"]),
            "annotations": annotations,
        }  # fmt: skip
        # Written as cosign writes it (indented, not canonical JSON).
        data = json.dumps(referrer, indent=2).encode()
        _attach_referrer(client, entry["digest"], data, artifact.BUNDLE_MEDIA_TYPE, annotations)
    result = install_verified(
        fleet_env, registry.ref("plugins/echo:1.2.3"), tmp_path / "plugins", policy
    )
    assert (result["signature"]["status"], result["signature"]["identity"]) == (
        "verified",
        ACME_IDENTITY,
    )


def _attach_referrer(
    client: RegistryClient,
    subject: str,
    data: bytes,
    artifact_type: str,
    annotations: dict[str, str] | None = None,
) -> None:
    """Put the referrer manifest ``data`` of ``plugins/echo`` and the referrers tag schema's
    fallback index (``sha256-<subject>``) that lists it, as a registry without the referrers
    API keeps them."""
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    client.put_manifest("plugins/echo", digest, data, MANIFEST_MEDIA_TYPE)
    fallback = {
        "schemaVersion": 2,
        "mediaType": INDEX_MEDIA_TYPE,
        "manifests": [
            artifact.descriptor(
                MANIFEST_MEDIA_TYPE, digest, len(data),
                artifactType=artifact_type, annotations=annotations,
            )
        ],
    }  # fmt: skip
    client.put_manifest(
        "plugins/echo", subject.replace(":", "-"), artifact.canonical(fallback), INDEX_MEDIA_TYPE
    )
