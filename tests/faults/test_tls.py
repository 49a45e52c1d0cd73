"""TLS against a man in the middle: an untrusted certificate is refused, a redirect from
HTTPS to plain HTTP is refused, an HTTPS API naming plain-HTTP asset URLs is refused, and a
trusted HTTPS GitHub installs (the control)."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from adversarial.harness import snapshot
from support.cli import CliResult, clean_env, nexo
from support.github_server import BlobServer
from support.tarballs import release_assets

from .server import FaultyGitHubServer, faulty_server
from .tls import Certificate, certificate, make_certificate, serve_tls

__all__ = ["certificate", "faulty_server"]

PLUGIN = "hello"
VERSION = "1.0.0"


@pytest.fixture
def tls_server(certificate: Certificate) -> Iterator[FaultyGitHubServer]:
    server = FaultyGitHubServer()
    serve_tls(server, certificate)
    server.publish("acme", PLUGIN, f"v{VERSION}", release_assets(PLUGIN, VERSION))
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _install(server: FaultyGitHubServer, home: Path, cert_file: Path | None) -> CliResult:
    env = clean_env(
        NEXO_HOME=str(home),
        NEXO_GITHUB_API_BASE=server.url,
        NEXO_HTTP_RETRY_BASE_MS="1",
        NO_PROXY="127.0.0.1,localhost",
        NEXO_GITHUB_TOKEN="loopback-token",  # noqa: S106 (sent only to 127.0.0.1)
    )
    if cert_file is not None:
        env["SSL_CERT_FILE"] = str(cert_file)
    return nexo("plugin", "install", f"acme/{PLUGIN}", "--yes", "--json", env=env, in_process=True)


def test_trusted_https_installs(
    tls_server: FaultyGitHubServer, certificate: Certificate, tmp_path: Path
) -> None:
    result = _install(tls_server, tmp_path / "home", certificate.cert_file)
    assert result.exit_code == 0, result.stdout
    assert (tmp_path / "home" / "state" / "plugins" / f"{PLUGIN}-{VERSION}").is_dir()


def test_untrusted_certificate_is_network(tls_server: FaultyGitHubServer, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    before = snapshot(home)
    # The client trusts another CA only: the server's certificate is unknown, as a MITM's is.
    other = make_certificate(tmp_path, "other")
    result = _install(tls_server, home, other.cert_file)
    assert result.exit_code == 1
    assert result.document["kind"] == "network"
    assert snapshot(home) == before
    # No request got through the handshake.
    assert tls_server.requests == []


def test_redirect_from_https_to_http_is_refused(
    tls_server: FaultyGitHubServer, certificate: Certificate, tmp_path: Path
) -> None:
    plain = BlobServer()
    plain.start()
    try:
        tls_server.redirect_releases_to(plain.url)
        home = tmp_path / "home"
        home.mkdir()
        before = snapshot(home)
        result = _install(tls_server, home, certificate.cert_file)
        assert result.exit_code == 1
        assert result.document["kind"] == "network"
        assert "redirect" in result.document["error"]
        assert plain.requests == []
        assert snapshot(home) == before
    finally:
        plain.stop()


def _release_pointing_at(server: FaultyGitHubServer, plain: BlobServer, which: str) -> bytes:
    """The release document with asset URLs moved to ``plain`` (which serves the real bytes)."""
    status, body, _, _ = server.route(None, f"/repos/acme/{PLUGIN}/releases/latest", {})  # type: ignore[arg-type]
    assert status == 200
    document = json.loads(body)
    for asset in document["assets"]:
        _, published = server.assets[asset["id"]]
        moved = plain.put(f"/downloads/{asset['name']}", published.data)
        for key in ("url", "browser_download_url"):
            if which in (key, "both"):
                asset[key] = moved
    return json.dumps(document).encode()


@pytest.mark.parametrize("which", ["url", "browser_download_url", "both"])
def test_plain_http_asset_urls_under_an_https_api_are_refused(
    tls_server: FaultyGitHubServer, certificate: Certificate, tmp_path: Path, which: str
) -> None:
    plain = BlobServer()
    plain.start()
    try:
        tls_server.override_release_body(_release_pointing_at(tls_server, plain, which))
        home = tmp_path / "home"
        home.mkdir()
        before = snapshot(home)
        result = _install(tls_server, home, certificate.cert_file)
        assert result.exit_code == 1, (result.stdout, result.stderr)
        assert result.document["kind"] == "network"
        assert "http://" in result.document["error"]
        # Not one byte travelled in clear text, and nothing was written.
        assert plain.requests == []
        assert snapshot(home) == before
    finally:
        plain.stop()


def test_plain_http_asset_urls_under_a_plain_http_api_are_used(
    faulty_server: FaultyGitHubServer, tmp_path: Path
) -> None:
    """The control: an http API base (a loopback mirror) may name http assets."""
    faulty_server.publish("acme", PLUGIN, f"v{VERSION}", release_assets(PLUGIN, VERSION))
    plain = BlobServer()
    plain.start()
    try:
        faulty_server.override_release_body(_release_pointing_at(faulty_server, plain, "both"))
        result = _install(faulty_server, tmp_path / "home", None)
        assert result.exit_code == 0, (result.stdout, result.stderr)
        assert plain.requests
    finally:
        plain.stop()


class _DrippingRelay:
    """A TCP relay in front of ``target`` that passes the client's bytes on at once but the
    server's one byte every ``pause`` seconds: a TLS handshake that never stalls long enough
    for a per-read timeout, yet never ends in time."""

    def __init__(self, target: tuple[str, int], pause: float) -> None:
        self.target = target
        self.pause = pause
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            threading.Thread(target=self._pipe, args=(client, upstream, 0.0), daemon=True).start()
            threading.Thread(
                target=self._pipe, args=(upstream, client, self.pause), daemon=True
            ).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, pause: float) -> None:
        with contextlib.suppress(OSError):
            while not self.stopped.is_set() and (data := source.recv(65536)):
                for index in range(len(data)) if pause else [None]:
                    if index is None:
                        sink.sendall(data)
                        continue
                    sink.sendall(data[index : index + 1])
                    if self.stopped.wait(pause):
                        return
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.close()

    def stop(self) -> None:
        self.stopped.set()
        self.listener.close()


def test_a_dripped_tls_handshake_is_cut_off_at_the_timeout(
    tls_server: FaultyGitHubServer, certificate: Certificate, tmp_path: Path
) -> None:
    address = urlsplit(tls_server.url)
    assert address.hostname is not None
    assert address.port is not None
    relay = _DrippingRelay((address.hostname, address.port), 0.2)
    try:
        home = tmp_path / "home"
        home.mkdir()
        before = snapshot(home)
        env = clean_env(
            NEXO_HOME=str(home),
            NEXO_GITHUB_API_BASE=f"https://127.0.0.1:{relay.port}",
            NO_PROXY="127.0.0.1,localhost",
            SSL_CERT_FILE=str(certificate.cert_file),
        )
        args = ["plugin", "install", f"acme/{PLUGIN}", "--yes", "--json", "--timeout", "2"]
        started = time.monotonic()
        result = nexo(*args, env=env, in_process=True)
        elapsed = time.monotonic() - started
    finally:
        relay.stop()
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert result.document["kind"] == "network"
    assert 1.5 < elapsed < 5
    assert snapshot(home) == before
