"""TLS against a man in the middle: an untrusted certificate is refused, a redirect from
HTTPS to plain HTTP is refused, and a trusted HTTPS GitHub installs (the control)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from adversarial.harness import CliResult, clean_env, run_cli_in_process, snapshot
from support.github_server import BlobServer
from support.tarballs import release_assets

from .server import FaultyGitHubServer
from .tls import Certificate, make_certificate, serve_tls

PLUGIN = "hello"
VERSION = "1.0.0"


@pytest.fixture
def certificate(tmp_path: Path) -> Certificate:
    return make_certificate(tmp_path)


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
    return run_cli_in_process(["plugin", "install", f"acme/{PLUGIN}", "--yes", "--json"], env=env)


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
