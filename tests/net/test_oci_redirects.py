"""The OCI side of the one HTTP client: redirects are checked by nexo-pkg on every hop, against
the real ``docker-registry`` behind a loopback front that sends blob GETs elsewhere (as
registries keeping blobs in object storage do).

- An https registry whose blob GET answers ``307`` to an ``http://`` URL is refused
  (``network``, as the GitHub side refuses it) before the plain-http URL is asked, and nothing
  is installed, locked or cached as installed.
- A redirect to another origin (another loopback port) is followed without the registry's
  credentials: the target records every ``Authorization`` it was sent, and there is none.
- ``--plain-http`` is for this machine only: a loopback registry redirecting a blob GET to
  plain http on one of this machine's other (non-loopback) addresses is refused before that
  address is asked.
"""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from faults.tls import make_certificate
from support.cli import nexo
from support.http_kit import LoopbackServer, RecordedRequest
from support.registry import PASSWORD, USER, Registry
from support.registry_proxy import RegistryProxy

from .conftest import installed, publish, unsigned_dist


def test_an_https_registry_redirecting_a_blob_to_plain_http_is_refused(
    tmp_path: Path, net_env: dict[str, str], registry: Registry
) -> None:
    publish(unsigned_dist(tmp_path / "dist"), registry.ref("plugins/echo:1.2.3"), tmp_path / "h")
    certificate = make_certificate(tmp_path)
    plain = RegistryProxy(registry.host).start()
    front = RegistryProxy(registry.host, redirect_blobs=plain.url)
    front.serve_tls(str(certificate.cert_file), str(certificate.key_file)).start()
    env = {**net_env, "SSL_CERT_FILE": str(certificate.cert_file)}
    dest = tmp_path / "plugins"
    try:
        result = nexo(
            "plugin",
            "install",
            front.ref("plugins/echo:1.2.3"),
            "--dest",
            str(dest),
            "--yes",
            "--json",
            env=env,
            in_process=True,
        )
        # A refusal of policy is final: one blob GET, no retry of it.
        redirected = front.count("GET", "/blobs/sha256:", 307)
        wanted = tmp_path / "nexo-plugins.toml"
        wanted.write_text(f'[plugins.echo]\nsource = "{front.ref("plugins/echo:1.2.3")}"\n')
        lock = tmp_path / "nexo-plugins.lock"
        synced = nexo(
            "plugin",
            "sync",
            "--lock",
            str(lock),
            "--dest",
            str(dest),
            "--json",
            env=env,
            in_process=True,
        )
    finally:
        front.stop()
        plain.stop()
    assert result.code == 1, result.stderr
    document = result.document
    assert document["kind"] == "network", document
    assert "https to plain http" in document["error"]
    assert synced.code == 1, synced.stderr
    assert synced.document["kind"] == "network", synced.stdout
    # The manifests came over https; the blob was never asked for over plain http.
    assert front.count("GET", "/manifests/") >= 1
    assert redirected == 1
    assert plain.log == []
    assert installed(dest) == []
    assert not lock.exists()


def test_a_blob_redirect_to_another_origin_gets_no_credentials(
    tmp_path: Path, net_env: dict[str, str], auth_registry: Registry
) -> None:
    pair = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    config = tmp_path / "registry-auth.json"
    publish(
        unsigned_dist(tmp_path / "dist"),
        auth_registry.ref("plugins/echo:1.2.3"),
        tmp_path / "h",
        _auth_config(config, auth_registry.host, pair),
    )
    # The blob store on another port reaches the registry with its own access.
    store = RegistryProxy(auth_registry.host, upstream_authorization=f"Basic {pair}").start()
    front = RegistryProxy(auth_registry.host, redirect_blobs=store.url).start()
    _auth_config(config, front.host, pair)
    dest = tmp_path / "plugins"
    try:
        result = nexo(
            "plugin",
            "install",
            front.ref("plugins/echo:1.2.3"),
            "--dest",
            str(dest),
            "--plain-http",
            "--registry-config",
            str(config),
            "--yes",
            "--json",
            env=net_env,
            in_process=True,
        )
    finally:
        front.stop()
        store.stop()
    assert result.code == 0, result.stdout + result.stderr
    assert installed(dest) == ["echo-1.2.3"]
    assert front.authorizations, "the registry itself was sent its credentials"
    assert store.count("GET", "/blobs/sha256:", 200) >= 1
    assert store.authorizations == []


def _outward_address() -> str:
    """An address of this machine that is not loopback (the one a route out leaves by);
    skips when there is none."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.200", 9))  # no packet is sent for a UDP connect
            address = str(probe.getsockname()[0])
    except OSError:
        address = ""
    if not address or address.startswith("127.") or address == "0.0.0.0":
        pytest.skip("this machine has no non-loopback IPv4 address")
    return address


@contextmanager
def _outward_server() -> Iterator[tuple[str, list[RecordedRequest]]]:
    """An HTTP server on this machine's outward address (not loopback): its base URL and every
    request it gets (each answered 404)."""
    with LoopbackServer(host=_outward_address()) as server:
        yield server.url, server.requests


def test_a_plain_http_loopback_registry_redirecting_a_blob_off_this_machine_is_refused(
    tmp_path: Path, net_env: dict[str, str], registry: Registry
) -> None:
    """``--plain-http`` is allowed for a loopback registry; a 307 from it to plain http on
    another host (here this machine's own outward address, which is not loopback) would carry
    the download across the network in clear, so it is refused as the token realm is, and
    nothing is installed or locked."""
    publish(unsigned_dist(tmp_path / "dist"), registry.ref("plugins/echo:1.2.3"), tmp_path / "h")
    dest = tmp_path / "plugins"
    wanted = tmp_path / "nexo-plugins.toml"
    with _outward_server() as (store, asked):
        front = RegistryProxy(registry.host, redirect_blobs=store).start()
        wanted.write_text(f'[plugins.echo]\nsource = "{front.ref("plugins/echo:1.2.3")}"\n')
        try:
            result = nexo(
                "plugin", "install", front.ref("plugins/echo:1.2.3"), "--dest", str(dest),
                "--plain-http", "--yes", "--json", env=net_env, in_process=True,
            )  # fmt: skip
            locked = nexo(
                "plugin", "lock", "-f", str(wanted), "--plain-http", "--json",
                env=net_env, in_process=True,
            )  # fmt: skip
        finally:
            front.stop()
    assert result.code == 1, result.stdout + result.stderr
    assert result.document["kind"] == "network", result.document
    assert "plain http to a host other than this machine" in result.document["error"]
    assert locked.code == 1, locked.stdout + locked.stderr
    assert locked.document["kind"] == "network", locked.document
    assert front.count("GET", "/blobs/sha256:", 307) >= 2
    assert asked == []
    assert installed(dest) == []
    assert not (tmp_path / "nexo-plugins.lock").exists()


def test_a_plain_http_loopback_registry_sending_an_upload_off_this_machine_is_refused(
    tmp_path: Path, net_env: dict[str, str], registry: Registry
) -> None:
    """A push's upload ``Location`` naming plain http on another host is refused before the
    tarball is sent there, and no version is tagged."""
    with _outward_server() as (store, asked):
        front = RegistryProxy(registry.host, elsewhere=store).start()
        try:
            pushed = nexo(
                "plugin", "push", str(unsigned_dist(tmp_path / "dist")),
                front.ref("plugins/echo"), "--plain-http", "--json", env=net_env,
                in_process=True,
            )  # fmt: skip
        finally:
            front.stop()
    assert pushed.code == 1, pushed.stdout + pushed.stderr
    assert pushed.document["kind"] == "network", pushed.document
    assert "plain http to a host other than this machine" in pushed.document["error"]
    assert asked == []
    assert front.count("PUT", "/manifests/") == 0


def _auth_config(path: Path, host: str, pair: str) -> Path:
    """``path`` as a docker config.json holding ``pair`` for ``host`` (added to any there)."""
    document = json.loads(path.read_text()) if path.exists() else {"auths": {}}
    document["auths"][host] = {"auth": pair}
    path.write_text(json.dumps(document), encoding="utf-8")
    return path
