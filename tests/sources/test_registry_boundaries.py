"""What a registry, or whoever can push to it, may not decide: the version a tag installs,
where credentials go, which descriptors are followed, and what the origin annotation says."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
from faults.tls import make_certificate
from support.cli import nexo
from support.registry import PASSWORD, USER, Registry, start_registry
from support.registry_proxy import RegistryProxy
from support.stderr import without_notes
from support.tarballs import plugin_tarball
from support.token_server import TokenServer

from nexo_pkg.fleet.publish import collect_dist
from nexo_pkg.sources import artifact, oci
from nexo_pkg.sources.artifact import GitHubOrigin
from nexo_pkg.sources.oci_reference import parse_reference
from nexo_pkg.sources.registry import INDEX_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, RegistryClient

from .conftest import LINUX, MakeDist, auth_config, fleet_run, push_dist
from .test_hostile_registry import _push_target


def _push_under(
    dist: Path, running: Registry, path: str, tag: str, *, origin: GitHubOrigin | None = None
) -> None:
    """Push ``dist`` under ``tag`` (with ``origin`` as its origin annotation) as a registry
    writer may, past the CLI's own checks."""
    plugin_id, version, targets, manifest_text = collect_dist(dist)
    reference = parse_reference(running.ref(f"{path}:{tag}"))
    with RegistryClient(reference.host, plain_http=True, loopback=True) as client:
        oci.push_version(
            client, reference, plugin_id=plugin_id, version=version, targets=targets,
            manifest_text=manifest_text, origin=origin, created="2026-01-01T00:00:00Z",
        )  # fmt: skip


def _tags(running: Registry, path: str) -> list[str]:
    reference = parse_reference(running.ref(path))
    with RegistryClient(reference.host, plain_http=True, loopback=True) as client:
        return client.list_tags(reference.repository)


# -- 1. a version tag names the version it holds ------------------------------------------


def test_push_refuses_a_version_tag_that_names_another_version(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    dist = make_dist("echo", "0.1.0")
    pushed = nexo(
        "plugin",
        "push",
        str(dist),
        registry.ref("plugins/echo:2.0.0"),
        "--plain-http",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert pushed.code == 2, pushed.stderr
    assert pushed.document["kind"] == "source_invalid"
    assert _tags(registry, "plugins/echo") == []
    # A tag that is not a version names nothing to contradict.
    labelled = nexo(
        "plugin",
        "push",
        str(dist),
        registry.ref("plugins/echo:stable"),
        "--plain-http",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert labelled.code == 0, labelled.stderr
    del tmp_path


# A tag cannot hold `+`: Helm and ORAS spell build metadata `_` (`2.0.0_x` is 2.0.0+x). A tag
# that starts as a version but is none (`02.0.0`, `2.0.0.1`) names no version it could hold.
_OTHER_VERSION_TAGS = ["2.0.0_x", "0.1.0_build", "02.0.0", "2.0.0.1"]


def test_a_version_tag_in_the_oci_spelling_or_not_quite_semver_is_held_to_its_version(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    dist = make_dist("echo", "0.1.0")
    for tag in _OTHER_VERSION_TAGS:
        pushed = nexo("plugin", "push", str(dist), registry.ref(f"plugins/echo:{tag}"),
                      "--plain-http", "--json", env=fleet_env, in_process=True)  # fmt: skip
        assert (pushed.code, pushed.document["kind"]) == (2, "source_invalid"), tag
    assert _tags(registry, "plugins/echo") == []
    dest = tmp_path / "plugins"
    for tag in _OTHER_VERSION_TAGS:
        _push_under(dist, registry, "plugins/echo", tag)
        installed = nexo("plugin", "install", registry.ref(f"plugins/echo:{tag}"), "--dest",
                         str(dest), "--plain-http", "--yes", "--json", env=fleet_env,
                         in_process=True)  # fmt: skip
        assert installed.code == 1, (tag, installed.stderr)
        assert installed.document["kind"] == "registry_invalid", tag
        assert f"plugins/echo:{tag} holds echo 0.1.0" in installed.document["error"]
    assert not dest.exists() or not [p for p in dest.iterdir() if not p.name.startswith(".")]
    # The tag naming the version, and one naming its build, are that version.
    for tag in ("0.1.0", "v0.1.0"):
        pushed = nexo("plugin", "push", str(dist), registry.ref(f"plugins/echo:{tag}"),
                      "--plain-http", "--json", env=fleet_env, in_process=True)  # fmt: skip
        assert pushed.code == 0, pushed.stderr
    built = make_dist("built", "0.1.0+b.7")
    pushed = nexo("plugin", "push", str(built), registry.ref("plugins/built:0.1.0_b.7"),
                  "--plain-http", "--json", env=fleet_env, in_process=True)  # fmt: skip
    assert pushed.code == 0, pushed.stderr


def test_install_lock_and_sync_refuse_a_tag_that_holds_another_version(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    """A tag moved onto an older version (with its genuine signature) is not that version:
    the GitHub path holds a release to the version its manifest carries, and so does this."""
    _push_under(make_dist("echo", "0.1.0"), registry, "plugins/echo", "2.0.0")
    dest = tmp_path / "plugins"
    installed = nexo(
        "plugin",
        "install",
        registry.ref("plugins/echo:2.0.0"),
        "--dest",
        str(dest),
        "--plain-http",
        "--yes",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert installed.code == 1, installed.stderr
    assert installed.document["kind"] == "registry_invalid"
    assert not dest.exists() or not [p for p in dest.iterdir() if not p.name.startswith(".")]
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.echo]\nsource = "{registry.ref("plugins/echo:2.0.0")}"\n')
    locked = fleet_run("lock", "-f", wanted, "--plain-http", env=fleet_env)
    assert locked.code == 1, locked.stderr
    assert locked.document["kind"] == "registry_invalid"
    assert not (tmp_path / "nexo-plugins.lock").exists()
    # Without a tag, the highest version tag is taken, and checked the same way.
    wanted.write_text(f'[plugins.echo]\nsource = "{registry.ref("plugins/echo")}"\n')
    synced = fleet_run(
        "sync",
        "--lock",
        tmp_path / "nexo-plugins.lock",
        "--dest",
        str(dest),
        "--plain-http",
        env=fleet_env,
    )
    assert synced.code == 1, synced.stderr
    assert synced.document["kind"] == "registry_invalid"
    assert not (tmp_path / "nexo-plugins.lock").exists()
    assert not dest.exists() or not [p for p in dest.iterdir() if not p.name.startswith(".")]


def test_install_over_a_newer_version_needs_allow_downgrade(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    for version in ("1.0.0", "0.1.0"):
        dist = make_dist("echo", version, identity=None)
        pushed = nexo(
            "plugin",
            "push",
            str(dist),
            registry.ref("plugins/echo"),
            "--plain-http",
            env=fleet_env,
            in_process=True,
        )
        assert pushed.code == 0, pushed.stderr
    dest = tmp_path / "plugins"

    def install(*extra: str) -> dict[str, object]:
        result = nexo(
            "plugin",
            "install",
            registry.ref(f"plugins/echo:{extra[0]}"),
            "--dest",
            str(dest),
            "--plain-http",
            "--yes",
            "--json",
            *extra[1:],
            env=fleet_env,
            in_process=True,
        )
        return result.document | {"exit": result.code}

    first = install("1.0.0")
    assert first["exit"] == 0, first
    refused = install("0.1.0")
    assert (refused["exit"], refused["kind"]) == (1, "downgrade_refused")
    assert sorted(p.name for p in dest.iterdir() if not p.name.startswith(".")) == ["echo-1.0.0"]
    allowed = install("0.1.0", "--allow-downgrade")
    assert allowed["exit"] == 0, allowed
    assert sorted(p.name for p in dest.iterdir() if not p.name.startswith(".")) == ["echo-0.1.0"]


# -- 2. credentials go only to the host they are configured for ----------------------------


def _proxied(tmp_path: Path, running: Registry, **options: Any) -> tuple[RegistryProxy, Path]:
    """A proxy in front of ``running`` and a docker config with the test credentials for it."""
    proxy = RegistryProxy(running.host, **options).start()
    pair = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    config = tmp_path / "proxy-auth.json"
    config.write_text(json.dumps({"auths": {proxy.host: {"auth": pair}}}), encoding="utf-8")
    return proxy, config


def test_basic_credentials_do_not_follow_a_link_to_another_host(
    tmp_path: Path, fleet_env: dict[str, str], auth_registry: Registry, make_dist: MakeDist
) -> None:
    """Tag lists and referrers continue where ``Link`` says; another host gets no
    credentials there, as docker, containerd and oras send them to their own host only."""
    push_dist(
        make_dist(), auth_registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]),
        auth_config(tmp_path, auth_registry),
    )  # fmt: skip
    elsewhere = RegistryProxy(auth_registry.host).start()
    proxy, config = _proxied(
        tmp_path, auth_registry, referrers_api=True, elsewhere=f"http://{elsewhere.host}"
    )
    try:
        for reference in (proxy.ref("plugins/echo:1.2.3"), proxy.ref("plugins/echo")):
            result = nexo(
                "plugin",
                "install",
                reference,
                "--dest",
                str(tmp_path / "plugins"),
                "--plain-http",
                "--registry-config",
                str(config),
                "--yes",
                "--json",
                env=fleet_env,
                # A process of its own: after other runs in this process, this one misses
                # requests the test watches (something is kept in the process between runs).
                in_process=False,
            )
            assert result.code == 1, result.stderr
            assert result.document["kind"] in {"registry_auth", "network"}
        assert proxy.authorizations, "the registry itself was sent the credentials"
        assert any("/tags/list" in path for _, path, _ in elsewhere.log)
        assert any("/referrers/" in path for _, path, _ in elsewhere.log)
        assert elsewhere.authorizations == []
    finally:
        proxy.stop()
        elsewhere.stop()


def test_an_upload_location_on_another_host_gets_no_credentials(
    tmp_path: Path, fleet_env: dict[str, str], auth_registry: Registry, make_dist: MakeDist
) -> None:
    elsewhere = RegistryProxy(auth_registry.host).start()
    proxy, config = _proxied(tmp_path, auth_registry, elsewhere=f"http://{elsewhere.host}")
    try:
        pushed = nexo(
            "plugin",
            "push",
            str(make_dist(identity=None)),
            proxy.ref("plugins/echo"),
            "--plain-http",
            "--registry-config",
            str(config),
            "--json",
            env=fleet_env,
            in_process=True,
        )
        assert pushed.code == 1, pushed.stderr
        assert pushed.document["kind"] == "registry_auth"
        assert any(method == "PUT" for method, _, _ in elsewhere.log)
        assert elsewhere.authorizations == []
        assert proxy.authorizations
    finally:
        proxy.stop()
        elsewhere.stop()


def test_an_https_registry_s_plain_http_token_realm_gets_nothing(
    tmp_path: Path, fleet_env: dict[str, str]
) -> None:
    """An https registry whose challenge names an ``http://`` realm would have the user name
    and password cross the network in clear: refused before the token service is asked."""
    certificate = make_certificate(tmp_path)
    (tmp_path / "token").mkdir()
    service = TokenServer(USER, PASSWORD, tmp_path / "token")
    service.start()
    running = start_registry(
        tmp_path / "tls-registry",
        token=service,
        tls=(certificate.cert_file, certificate.key_file),
    )
    try:
        config = auth_config(tmp_path, running)
        result = nexo(
            "plugin",
            "install",
            running.ref("plugins/echo:1.2.3"),
            "--dest",
            str(tmp_path / "plugins"),
            "--registry-config",
            str(config),
            "--yes",
            "--json",
            env={**fleet_env, "SSL_CERT_FILE": str(certificate.cert_file)},
            in_process=True,
        )
        assert result.code == 1, result.stderr
        document = result.document
        assert document["kind"] == "registry_auth"
        assert "https" in document["error"]
        assert service.requests == []
    finally:
        running.stop()
        service.stop()


def _this_machine_off_loopback() -> str | None:
    """An address of this machine that is not loopback (what a route out would use), or
    None. A UDP ``connect`` sends nothing; it only picks the address."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
            address = str(probe.getsockname()[0])
        except OSError:
            return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def test_a_loopback_registry_s_plain_http_realm_on_another_host_gets_nothing(
    tmp_path: Path, fleet_env: dict[str, str]
) -> None:
    """``--plain-http`` keeps plain http on this machine: a loopback registry whose challenge
    names an ``http://`` realm on a host that is not loopback would have the user name and
    password cross the network in clear. Refused before that host is asked."""
    address = _this_machine_off_loopback()
    if address is None:
        pytest.skip("this machine has no address off loopback to stand for another host")
    reached: list[bytes] = []
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind((address, 0))
    listener.listen(4)
    listener.settimeout(0.2)
    stop = threading.Event()

    def record() -> None:
        while not stop.is_set():
            try:
                connection, _peer = listener.accept()
            except OSError:
                continue
            with connection:
                connection.settimeout(2)
                with contextlib.suppress(OSError):
                    reached.append(connection.recv(65536))

    recorder = threading.Thread(target=record, daemon=True)
    recorder.start()
    (tmp_path / "token").mkdir()
    service = TokenServer(USER, PASSWORD, tmp_path / "token")
    service.start()
    service.realm = f"http://{address}:{listener.getsockname()[1]}/token"
    running = start_registry(tmp_path / "registry", token=service)
    try:
        config = auth_config(tmp_path, running)
        result = nexo(
            "plugin",
            "install",
            running.ref("plugins/echo:1.2.3"),
            "--dest",
            str(tmp_path / "plugins"),
            "--registry-config",
            str(config),
            "--plain-http",
            "--yes",
            "--json",
            env=fleet_env,
            in_process=True,
        )
        assert result.code == 1, result.stderr
        assert result.document["kind"] == "registry_auth"
        assert "https" in result.document["error"]
        assert PASSWORD not in result.stdout + result.stderr
    finally:
        running.stop()
        service.stop()
        stop.set()
        recorder.join(timeout=5)
        listener.close()
    assert reached == [], reached
    assert not (tmp_path / "plugins").exists() or not [
        path for path in (tmp_path / "plugins").iterdir() if not path.name.startswith(".")
    ]


# -- 3. every followed descriptor is a verified digest --------------------------------------


@pytest.mark.parametrize("entry_reference", ["by-tag", "sha512:" + "ab" * 64])
def test_a_pinned_index_must_pin_its_target_manifests(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, entry_reference: str
) -> None:
    """An index pinned by ``@sha256:`` that lists its target as a tag (whatever the registry
    then answers for the tag) or in an algorithm nothing checks is refused."""
    reference = parse_reference(registry.ref("plugins/echo"))
    with RegistryClient(reference.host, plain_http=True, loopback=True) as client:
        entry = _push_target(
            client, reference.repository, f"echo-1.2.3-{LINUX}.tar.gz",
            plugin_tarball("echo", "1.2.3"),
        )  # fmt: skip
        raw = client.get_manifest(reference.repository, entry["digest"]).data
        client.put_manifest(reference.repository, "by-tag", raw, MANIFEST_MEDIA_TYPE)
    entry["digest"] = entry_reference
    # The registry will not store an index naming a tag; one in front of it may answer it.
    index = artifact.canonical(
        {
            "schemaVersion": 2,
            "mediaType": INDEX_MEDIA_TYPE,
            "artifactType": artifact.ARTIFACT_TYPE,
            "manifests": [entry],
            "annotations": {artifact.PLUGIN_ID: "echo", artifact.PLUGIN_VERSION: "1.2.3"},
        }
    )
    pinned = "sha256:" + hashlib.sha256(index).hexdigest()
    proxy = RegistryProxy(registry.host).start()
    proxy.plant(reference.repository, pinned, index, INDEX_MEDIA_TYPE)
    dest = tmp_path / "plugins"
    try:
        result = nexo(
            "plugin",
            "install",
            proxy.ref(f"plugins/echo@{pinned}"),
            "--dest",
            str(dest),
            "--plain-http",
            "--yes",
            "--json",
            env=fleet_env,
            in_process=True,
        )
    finally:
        proxy.stop()
    assert result.code == 1, result.stderr
    assert result.document["kind"] == "registry_invalid"
    assert not dest.exists() or not [p for p in dest.iterdir() if not p.name.startswith(".")]


# -- 4. the origin annotation is an owner/repo@tag --------------------------------------------


@pytest.mark.parametrize(
    ("owner", "repo", "tag"),
    [
        ("../../evil\x1b[31m", "x y", "v1\u202e"),
        ("acme", "nexo-plugin-echo", "v1.2.3\n[plugins.evil]"),
        ("acme/other", "echo", "v1.2.3"),
        ("acme", "..", "v1.2.3"),
    ],
)
def test_an_origin_annotation_outside_the_source_grammar_is_registry_invalid(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    owner: str,
    repo: str,
    tag: str,
) -> None:
    """``dev.nexo.plugin.github-release`` picks whose trust-policy entry applies and is
    written to the lock and the receipts: held to the grammar of an owner/repo@tag source."""
    plugin_id, version, targets, manifest_text = collect_dist(make_dist(identity=None))
    reference = parse_reference(registry.ref("plugins/echo:1.2.3"))
    with RegistryClient(reference.host, plain_http=True, loopback=True) as client:
        oci.push_version(
            client, reference, plugin_id=plugin_id, version=version, targets=targets,
            manifest_text=manifest_text, origin=GitHubOrigin(owner, repo, tag),
            created="2026-01-01T00:00:00Z",
        )  # fmt: skip
    dest = tmp_path / "plugins"
    installed = nexo(
        "plugin",
        "install",
        str(reference),
        "--dest",
        str(dest),
        "--plain-http",
        "--yes",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert installed.code == 1, installed.stderr
    assert installed.document["kind"] == "registry_invalid"
    assert not dest.exists() or not [p for p in dest.iterdir() if not p.name.startswith(".")]
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.echo]\nsource = "{reference}"\n')
    locked = fleet_run("lock", "-f", wanted, "--plain-http", env=fleet_env)
    assert locked.code == 1, locked.stderr
    assert locked.document["kind"] == "registry_invalid"
    assert not (tmp_path / "nexo-plugins.lock").exists()
    assert "\x1b" not in installed.stdout + installed.stderr + locked.stderr


# -- credential helpers and credentials files -----------------------------------------------


def test_a_credential_helper_with_a_slash_runs_nothing(
    tmp_path: Path, fleet_env: dict[str, str]
) -> None:
    """``credHelpers: {host: "../../x"}`` would make ``docker-credential-../../x`` a path
    relative to the working directory; a helper is a plain name on PATH, nothing else."""
    work = tmp_path / "work"
    (work / "docker-credential-..").mkdir(parents=True)
    marker = tmp_path / "helper-ran"
    program = work / "x"
    program.write_text(f"#!/bin/sh\ntouch {marker}\necho '{{}}'\n")
    program.chmod(0o755)
    host = "127.0.0.1:9"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"credHelpers": {host: "../../x"}}), encoding="utf-8")
    result = nexo("plugin", "install", f"oci://{host}/plugins/echo:1.0.0", "--plain-http",
                  "--registry-config", str(config), "--dest", str(tmp_path / "root"), "--yes",
                  "--json", cwd=work, env=fleet_env, in_process=True)  # fmt: skip
    assert result.code == 2, result.stderr
    assert json.loads(result.stdout)["kind"] == "registry_config"
    assert not marker.exists()
    assert not (tmp_path / "root").exists()


@pytest.mark.parametrize("search", [":{path}", ".:{path}", "bin:{path}", "{path}:"])
def test_a_credential_helper_is_never_found_through_a_relative_path_entry(
    tmp_path: Path, fleet_env: dict[str, str], search: str
) -> None:
    """An empty, ``.`` or relative PATH entry names the working directory (a cloned
    repository): a ``docker-credential-x`` planted there is not run, as Go's ``exec.LookPath``
    (docker's helpers) refuses it since Go 1.19; the helper is not found, nothing else."""
    work = tmp_path / "work"
    marker = tmp_path / "helper-ran"
    for where in (work, work / "bin"):
        where.mkdir(parents=True, exist_ok=True)
        program = where / "docker-credential-planted"
        program.write_text(
            f'#!/bin/sh\ntouch {marker}\necho \'{{"Username": "u", "Secret": "s"}}\'\n'
        )
        program.chmod(0o755)
    host = "127.0.0.1:9"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"credHelpers": {host: "planted"}}), encoding="utf-8")
    env = {**fleet_env, "PATH": search.format(path="/usr/bin:/bin")}
    result = nexo("plugin", "install", f"oci://{host}/plugins/echo:1.0.0", "--plain-http",
                  "--registry-config", str(config), "--dest", str(tmp_path / "root"), "--yes",
                  "--json", cwd=work, env=env)  # fmt: skip
    assert result.code == 2, result.stderr
    assert json.loads(result.stdout)["kind"] == "registry_config"
    assert "docker-credential-planted" in json.loads(result.stdout)["error"]
    assert not marker.exists()
    assert not (tmp_path / "root").exists()


def test_a_credentials_file_nested_beyond_reason_is_registry_config(
    tmp_path: Path, fleet_env: dict[str, str]
) -> None:
    config = tmp_path / "config.json"
    config.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    result = nexo(
        "plugin",
        "install",
        "oci://127.0.0.1:9/plugins/echo:1.0.0",
        "--plain-http",
        "--registry-config",
        str(config),
        "--dest",
        str(tmp_path / "root"),
        "--yes",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert result.code == 2, result.stderr
    assert result.document["kind"] == "registry_config"
    assert "Traceback" not in result.stderr
    assert len(without_notes(result.stderr).strip().splitlines()) <= 1


def test_a_registry_copy_without_an_origin_is_judged_by_the_default_mode(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    """No owner is known for a version pushed straight to a registry: the policy's
    ``default`` decides, whatever an owner's entry says (docs/security.md §11)."""
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
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        'schema_version = "1.0"\ndefault = "require"\n\n[[authors]]\nowner = "acme"\n'
        'identity_regexp = "^https://github\\\\.com/acme/.*$"\nmode = "warn"\n',
        encoding="utf-8",
    )
    dest = tmp_path / "plugins"
    result = nexo(
        "plugin",
        "install",
        registry.ref("plugins/echo:1.2.3"),
        "--dest",
        str(dest),
        "--plain-http",
        "--trusted-keys",
        str(policy),
        "--yes",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert result.code == 1, result.stderr
    assert result.document["kind"] == "signature_missing"
    assert not dest.exists() or not [p for p in dest.iterdir() if not p.name.startswith(".")]


def test_sync_to_a_lock_that_names_an_older_version_installs_it(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    """The lock is what the root must hold: the downgrade guard of ``install`` is not
    ``sync``'s."""
    for version in ("1.0.0", "2.0.0"):
        dist = str(make_dist("echo", version, identity=None))
        pushed = nexo(
            "plugin",
            "push",
            dist,
            registry.ref("plugins/echo"),
            "--plain-http",
            env=fleet_env,
            in_process=True,
        )
        assert pushed.code == 0, pushed.stderr
    dest = tmp_path / "plugins"
    installed = nexo(
        "plugin",
        "install",
        registry.ref("plugins/echo:2.0.0"),
        "--dest",
        str(dest),
        "--plain-http",
        "--yes",
        env=fleet_env,
        in_process=True,
    )
    assert installed.code == 0, installed.stderr
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.echo]\nsource = "{registry.ref("plugins/echo:1.0.0")}"\n')
    assert (
        nexo(
            "plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env, in_process=True
        ).code
        == 0
    )
    synced = fleet_run(
        "sync",
        "--lock",
        tmp_path / "nexo-plugins.lock",
        "--dest",
        str(dest),
        "--plain-http",
        env=fleet_env,
    )
    assert synced.code == 0, synced.stdout + synced.stderr
    assert sorted(p.name for p in dest.iterdir() if not p.name.startswith(".")) == ["echo-1.0.0"]
