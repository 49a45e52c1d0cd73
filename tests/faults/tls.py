"""A throw-away certificate authority and TLS for the loopback servers.

:func:`make_certificate` writes a self-signed certificate for ``127.0.0.1`` (and its key);
clients trust it only when pointed at it with ``SSL_CERT_FILE``. :func:`serve_tls` wraps a
running loopback server's listening socket so it speaks HTTPS; :func:`serving_tls` starts
such a server and stops it after use. The fixture :func:`certificate` gives each test its own.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from support.github_server import _LoopbackServer

ServerT = TypeVar("ServerT", bound=_LoopbackServer)


@dataclass(frozen=True)
class Certificate:
    cert_file: Path
    key_file: Path


def make_certificate(directory: Path, name: str = "loopback") -> Certificate:
    """A self-signed CA certificate valid for IP 127.0.0.1 and ``localhost``."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"nexo test {name}")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file = directory / f"{name}.pem"
    key_file = directory / f"{name}.key"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return Certificate(cert_file, key_file)


def serve_tls(server: _LoopbackServer, certificate: Certificate) -> None:
    """Make ``server`` (not yet started) answer HTTPS; its ``url`` becomes ``https://``."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate.cert_file, certificate.key_file)
    httpd = server._httpd
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    server.url = f"https://127.0.0.1:{server.port}"


@contextmanager
def serving_tls(server: ServerT, certificate: Certificate) -> Iterator[ServerT]:
    """Start ``server`` speaking HTTPS with ``certificate``; stop it on the way out."""
    serve_tls(server, certificate)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def certificate(tmp_path: Path) -> Certificate:
    """A fresh throw-away CA certificate for 127.0.0.1 and localhost."""
    return make_certificate(tmp_path)
