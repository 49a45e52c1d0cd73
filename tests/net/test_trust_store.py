"""One trust store for every https connection: the OS's (truststore), as pip's when ``pack``
vendors; ``SSL_CERT_FILE``/``SSL_CERT_DIR`` still name the CAs when set."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import ssl
import subprocess
import threading
from pathlib import Path

import httpx
import pytest
import truststore
from support.cli import clean_env, nexo
from support.http_kit import Certificate, LoopbackServer, make_certificate

from nexo_pkg.core.errors import ConfigError, NexoError
from nexo_pkg.net.client import HttpClient, environment_proxies
from nexo_pkg.net.tls import tls_context


@pytest.fixture
def no_ca_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)


def _proxied_contexts() -> list[object]:
    """The TLS context of every proxied mount (httpx keeps it on the proxy pool)."""
    mounts = environment_proxies()
    assert mounts
    return [
        transport._pool._ssl_context
        for transport in mounts.values()
        if isinstance(transport, httpx.HTTPTransport)
    ]


def _status(url: str) -> int:
    """The status of one GET of ``url`` by the one HTTP client (no retries)."""
    with HttpClient(retries=0) as client, client.request_scope():

        def get() -> int:
            response = client.send("GET", url, "the loopback server")
            response.close()
            return response.status_code

        return client.with_retries(get)


@pytest.mark.usefixtures("no_ca_settings")
def test_without_ca_settings_https_verifies_with_the_os_trust_store() -> None:
    context = tls_context()
    assert isinstance(context, truststore.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname is True


@pytest.mark.usefixtures("no_ca_settings")
def test_proxied_connections_verify_with_the_same_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    contexts = _proxied_contexts()
    assert contexts
    assert all(isinstance(context, truststore.SSLContext) for context in contexts)


@pytest.mark.usefixtures("no_ca_settings")
def test_a_certificate_the_os_does_not_trust_is_refused(tmp_path: Path) -> None:
    server = LoopbackServer()
    server.use_tls(make_certificate(tmp_path))
    with server, pytest.raises(NexoError) as raised:
        _status(f"{server.url}/")
    assert raised.value.kind == "network"
    assert "certificate" in str(raised.value).lower()


def test_ssl_cert_file_still_names_the_cas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    certificate: Certificate = make_certificate(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate.cert_file))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    server = LoopbackServer()
    server.use_tls(certificate)
    with server:
        assert _status(f"{server.url}/") == 404
    for context in _proxied_contexts():
        assert isinstance(context, ssl.SSLContext)
        assert not isinstance(context, truststore.SSLContext)
        assert len(context.get_ca_certs()) == 1


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to hash a CA dir")
def test_ssl_cert_dir_still_names_the_cas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    certificate = make_certificate(tmp_path)
    directory = tmp_path / "cas"
    directory.mkdir()
    shutil.copy(certificate.cert_file, directory / "loopback.pem")
    subprocess.run(["openssl", "rehash", str(directory)], check=True)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.setenv("SSL_CERT_DIR", str(directory))
    server = LoopbackServer()
    server.use_tls(certificate)
    with server:
        assert _status(f"{server.url}/") == 404


def test_ca_settings_naming_no_certificates_are_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bogus = tmp_path / "bogus.pem"
    bogus.write_text("not a certificate\n", encoding="utf-8")
    monkeypatch.setenv("SSL_CERT_FILE", str(bogus))
    with pytest.raises(ConfigError) as raised:
        tls_context()
    assert raised.value.kind == "config"
    assert "SSL_CERT_FILE" in str(raised.value)


@pytest.mark.parametrize("planted", ["fifo", "device", "directory"])
def test_a_ca_file_that_is_no_regular_file_is_a_config_error_at_once(
    tmp_path: Path, planted: str
) -> None:
    """OpenSSL opens ``SSL_CERT_FILE`` as it is: a FIFO would hang the command until killed,
    a device be read without end. Each is one ``config`` line naming the variable (exit 2),
    in a subprocess whose timeout fails the test instead of hanging it."""
    if planted == "fifo":
        target = tmp_path / "ca.pem"
        os.mkfifo(target)
    else:
        target = Path("/dev/zero") if planted == "device" else tmp_path
    env = clean_env(
        NEXO_HOME=str(tmp_path / "home"),
        NEXO_GITHUB_API_BASE="https://127.0.0.1:9",
        SSL_CERT_FILE=str(target),
    )
    for command in (("info",), ("install", "--yes")):
        result = nexo("plugin", *command, "acme/hello", "--json", env=env, timeout=60)
        assert result.code == 2, result.stderr
        assert result.document["kind"] == "config"
        assert f"SSL_CERT_FILE={target}" in result.document["error"]
    assert not (tmp_path / "home" / "state").exists()


@pytest.mark.usefixtures("no_ca_settings")
@pytest.mark.parametrize("source", ["github", "registry"])
def test_an_untrusted_certificate_is_refused_at_once_naming_the_ca_settings(
    tmp_path: Path, source: str
) -> None:
    """A certificate this host does not trust is refused on the first connection (the same
    certificate would be refused on every retry), in one ``network`` line that names what
    makes a private CA trusted: ``SSL_CERT_FILE``, ``SSL_CERT_DIR`` or the system store."""
    certificate = make_certificate(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate.cert_file, certificate.key_file)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    accepted: list[int] = []

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            accepted.append(1)
            with contextlib.suppress(OSError), connection:
                context.wrap_socket(connection, server_side=True).close()

    threading.Thread(target=serve, daemon=True).start()
    env = clean_env(
        NEXO_HOME=str(tmp_path / "home"), NEXO_GITHUB_API_BASE=f"https://127.0.0.1:{port}"
    )
    what = "acme/nexo-plugin-echo@v1.0.0" if source == "github" else f"oci://127.0.0.1:{port}/a/b:1"
    try:
        for flags in ((), ("--json",)):
            result = nexo("plugin", "install", what, "--yes", *flags, env=env, cwd=tmp_path)
            assert result.exit_code == 1, result.stderr
            if flags:
                document = json.loads(result.stdout)
                assert document["kind"] == "network"
                said = document["error"]
            else:
                assert result.stderr.count("\n") == 1, result.stderr
                assert result.stderr.endswith(" [network]\n"), result.stderr
                said = result.stderr
            assert "CERTIFICATE_VERIFY_FAILED" in said
            assert "SSL_CERT_FILE" in said
            assert "SSL_CERT_DIR" in said
            assert "gave up after" not in said
    finally:
        listener.close()
    assert len(accepted) == 2  # one connection for each run: no retry
    assert not (tmp_path / "home" / "state" / "plugins").exists()


@pytest.mark.parametrize(
    ("problem", "remedy"),
    [
        ("wrong_host", "not for this host name: check the host in the URL"),
        ("out_of_date", "has expired or is not valid yet: check this machine's clock"),
    ],
)
def test_a_certificate_for_another_host_or_out_of_date_is_not_sent_to_the_ca_settings(
    tmp_path: Path, problem: str, remedy: str
) -> None:
    """A certificate whose CA is trusted (``SSL_CERT_FILE`` names it) but that names another
    host, or has expired, is refused at once saying that: naming the CA again (the remedy of
    an untrusted issuer) cannot help."""
    certificate = make_certificate(
        tmp_path, other_host=problem == "wrong_host", expired=problem == "out_of_date"
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate.cert_file, certificate.key_file)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with contextlib.suppress(OSError), connection:
                context.wrap_socket(connection, server_side=True).close()

    threading.Thread(target=serve, daemon=True).start()
    env = clean_env(
        NEXO_HOME=str(tmp_path / "home"),
        NEXO_GITHUB_API_BASE=f"https://127.0.0.1:{port}",
        SSL_CERT_FILE=str(certificate.cert_file),
    )
    try:
        result = nexo("plugin", "install", "acme/nexo-plugin-echo@v1.0.0", "--yes", "--json",
                      env=env, cwd=tmp_path)  # fmt: skip
    finally:
        listener.close()
    assert result.exit_code == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["kind"] == "network", document
    assert "CERTIFICATE_VERIFY_FAILED" in document["error"], document
    assert remedy in document["error"], document
    assert "SSL_CERT_FILE" not in document["error"], document
    assert document["certificate"] == problem, document
    assert "gave up after" not in document["error"], document
