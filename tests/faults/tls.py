"""TLS for the loopback servers, on the kit's throw-away certificate authority.

:func:`make_certificate` (from :mod:`support.http_kit`) writes a self-signed certificate for
``127.0.0.1`` (and its key); clients trust it only when pointed at it with ``SSL_CERT_FILE``.
:func:`serve_tls` makes a loopback server not yet started speak HTTPS; :func:`serving_tls`
starts such a server and stops it after use. The fixture :func:`certificate` gives each test
its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest
from support.http_kit import Certificate, LoopbackServer, make_certificate

__all__ = ["Certificate", "certificate", "make_certificate", "serve_tls", "serving_tls"]

ServerT = TypeVar("ServerT", bound=LoopbackServer)


def serve_tls(server: LoopbackServer, certificate: Certificate) -> None:
    """Make ``server`` (not yet started) answer HTTPS; its ``url`` becomes ``https://``."""
    server.use_tls(certificate)


@contextmanager
def serving_tls(server: ServerT, certificate: Certificate) -> Iterator[ServerT]:
    """Start ``server`` speaking HTTPS with ``certificate``; stop it on the way out."""
    serve_tls(server, certificate)
    with server:
        yield server


@pytest.fixture
def certificate(tmp_path: Path) -> Certificate:
    """A fresh throw-away CA certificate for 127.0.0.1 and localhost."""
    return make_certificate(tmp_path)
