"""A loopback token service for a registry with bearer-token auth (the Docker token spec).

The registry (distribution, ``auth.token``) answers 401 with ``WWW-Authenticate: Bearer
realm=…,service=…,scope=…``; clients ask this server for a token. It checks HTTP basic
credentials and issues an ES256 JWT signed by its own self-signed certificate (sent in the
``x5c`` header; the registry trusts the certificate through ``rootcertbundle``), granting the
actions asked for in ``scope``. Every request is recorded.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

SERVICE = "nexo-test-registry"
ISSUER = "nexo-test-token-issuer"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass
class TokenRequest:
    scope: str
    authorization: str | None


@dataclass
class TokenServer:
    """Issues tokens to ``username``/``password`` (anonymous requests get a 401)."""

    username: str
    password: str
    directory: Path
    requests: list[TokenRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "nexo test token issuer")])
        now = datetime.now(UTC)
        self.certificate = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + timedelta(hours=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self.key, hashes.SHA256())
        )
        self.root_bundle = self.directory / "token-root.pem"
        self.root_bundle.write_bytes(self.certificate.public_bytes(serialization.Encoding.PEM))
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.answer(self)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                del format, args

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.realm = f"http://127.0.0.1:{self.httpd.server_address[1]}/token"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _token(self, scope: str) -> str:
        access = []
        for item in scope.split():
            kind, _, rest = item.partition(":")
            name, _, actions = rest.rpartition(":")
            access.append({"type": kind, "name": name, "actions": actions.split(",")})
        der = self.certificate.public_bytes(serialization.Encoding.DER)
        header = {"typ": "JWT", "alg": "ES256", "x5c": [base64.b64encode(der).decode()]}
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "sub": self.username,
            "aud": SERVICE,
            "exp": now + 300,
            "nbf": now - 60,
            "iat": now,
            "jti": uuid.uuid4().hex,
            "access": access,
        }
        signing_input = (
            _b64url(json.dumps(header).encode()) + "." + _b64url(json.dumps(claims).encode())
        )
        r, s = decode_dss_signature(
            self.key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256()))
        )
        return signing_input + "." + _b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        query = parse_qs(urlsplit(handler.path).query)
        scope = " ".join(query.get("scope", []))
        authorization = handler.headers.get("Authorization")
        self.requests.append(TokenRequest(scope, authorization))
        expected = "Basic " + base64.b64encode(f"{self.username}:{self.password}".encode()).decode()
        if authorization != expected:
            body = b'{"errors": [{"code": "UNAUTHORIZED"}]}'
            handler.send_response(401)
        else:
            body = json.dumps({"token": self._token(scope), "expires_in": 300}).encode()
            handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
