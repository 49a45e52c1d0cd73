"""A loopback token service for a registry with bearer-token auth (the Docker token spec).

The registry (distribution, ``auth.token``) answers 401 with ``WWW-Authenticate: Bearer
realm=…,service=…,scope=…``; clients ask this server for a token. It issues an ES256 JWT
signed by its own self-signed certificate (sent in the ``x5c`` header; the registry trusts the
certificate through ``rootcertbundle``), granting the actions asked for in ``scope``:

* ``GET`` with HTTP basic credentials (the user's password, or the refresh token as password
  as containerd falls back to), every action asked for;
* ``GET`` without credentials when ``anonymous_pull`` is set (a public repository, as on
  Docker Hub or ghcr.io): ``pull`` only;
* ``POST`` of an OAuth2 form (``grant_type=refresh_token`` with ``refresh_token`` and
  ``client_id``, or ``grant_type=password``) unless ``oauth_post`` is off (then 404, as GCR).

Every request is recorded (as a :class:`TokenRequest`; the raw ones in ``server.requests``).
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

from support.http_kit import LoopbackServer, send

SERVICE = "nexo-test-registry"
ISSUER = "nexo-test-token-issuer"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass
class TokenRequest:
    scope: str
    authorization: str | None
    method: str = "GET"
    form: dict[str, str] = field(default_factory=dict)
    granted: bool = False
    service: str | None = None


@dataclass
class TokenServer:
    """Issues tokens to ``username``/``password`` (anonymous requests get a 401)."""

    username: str
    password: str
    directory: Path
    anonymous_pull: bool = False
    # Answered instead of a real token when set (a hostile token service).
    forged_token: str | None = None
    refresh_token: str | None = None
    oauth_post: bool = True
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
        # Every path answers (a client asks the realm it was told, whatever it is).
        self.server = LoopbackServer(
            protocol="HTTP/1.0", methods=("GET", "POST"), fallback=self._dispatch
        )
        self.realm = f"{self.server.url}/token"

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()

    def _dispatch(self, handler: BaseHTTPRequestHandler) -> None:
        if handler.command == "POST":
            self.answer_oauth(handler)
        else:
            self.answer(handler)

    def _token(self, scope: str, *, pull_only: bool = False) -> str:
        access = []
        for item in scope.split():
            kind, _, rest = item.partition(":")
            name, _, actions = rest.rpartition(":")
            granted = [a for a in actions.split(",") if a == "pull" or not pull_only]
            access.append({"type": kind, "name": name, "actions": granted})
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

    def _basic(self, secret: str) -> str:
        return "Basic " + base64.b64encode(f"{self.username}:{secret}".encode()).decode()

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        query = parse_qs(urlsplit(handler.path).query)
        scope = " ".join(query.get("scope", []))
        authorization = handler.headers.get("Authorization")
        accepted = {self._basic(self.password)}
        if self.refresh_token is not None:
            # containerd's fallback: the refresh token as the password of basic auth.
            pair = f"<token>:{self.refresh_token}".encode()
            accepted.add(self._basic(self.refresh_token))
            accepted.add("Basic " + base64.b64encode(pair).decode())
        service = query.get("service", [None])[0]
        record = TokenRequest(scope, authorization, service=service)
        if authorization in accepted:
            token = self._token(scope)
        elif authorization is None and self.anonymous_pull:
            token = self._token(scope, pull_only=True)
        else:
            self.requests.append(record)
            self._send(handler, 401, {"errors": [{"code": "UNAUTHORIZED"}]})
            return
        record.granted = True
        self.requests.append(record)
        token = token if self.forged_token is None else self.forged_token
        self._send(handler, 200, {"token": token, "expires_in": 300})

    def answer_oauth(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        form = {k: v[-1] for k, v in parse_qs(handler.rfile.read(length).decode()).items()}
        record = TokenRequest(form.get("scope", ""), handler.headers.get("Authorization"))
        record.method, record.form = "POST", form
        if not self.oauth_post:
            self.requests.append(record)
            self._send(handler, 404, {"errors": [{"code": "NOT_FOUND"}]})
            return
        grant = form.get("grant_type")
        valid = bool(form.get("client_id")) and (
            (grant == "refresh_token" and form.get("refresh_token") == self.refresh_token)
            or (
                grant == "password"
                and (form.get("username"), form.get("password")) == (self.username, self.password)
            )
        )
        if self.refresh_token is None and grant == "refresh_token":
            valid = False
        if not valid:
            self.requests.append(record)
            self._send(handler, 401, {"error": "invalid_grant"})
            return
        record.granted = True
        token = self._token(record.scope)
        self.requests.append(record)
        self._send(handler, 200, {"access_token": token, "expires_in": 300, "scope": record.scope})

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, document: dict[str, Any]) -> None:
        send(handler, status, json.dumps(document).encode(), {"Content-Type": "application/json"})
