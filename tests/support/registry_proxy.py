"""A loopback reverse proxy in front of the real registry, giving it what distribution 2.8
lacks or a test needs to provoke.

* ``referrers_api``: the OCI 1.1 referrers API, as newer registries (distribution 3, Zot,
  Harbor 2.8+, ghcr.io) serve it. A manifest PUT with a ``subject`` is forwarded, recorded,
  and answered with the ``OCI-Subject`` header (telling the client that no tag-schema
  fallback is needed); ``GET /v2/<name>/referrers/<digest>`` answers the image index of the
  recorded referrers (``?artifactType=`` filtered, ``page_size`` entries a page with a
  ``Link`` to the next). ``foreign_referrers`` puts a descriptor of another artifact type
  first in every listing, as an SBOM or a scan result would be.
* ``token_uses``: a bearer token is good for that many requests; after them a request bearing
  it gets the registry's own 401 challenge, as when a token expires mid-run.
* ``fail(method, fragment, status, times)``: the next ``times`` such requests (every one with
  ``times=None``) are answered ``status`` without reaching the registry, as an overloaded
  registry or a load balancer in front of it answers; status ``0`` forwards the request but
  sends only the first half of the registry's body and hangs up (a connection cut mid-body).

* ``elsewhere``: the ``http://HOST:PORT`` of another server. Tag lists and referrers listings
  then continue there (an absolute ``Link`` to it), and blob uploads are sent there (the
  upload ``Location`` rewritten to it), as a hostile or misconfigured registry may answer.
  ``authorizations`` records the ``Authorization`` header of every request that had one.

* ``challenge``, ``link``, ``location``: raw header values a fuzzer sets. ``challenge`` answers
  every request without ``Authorization`` with a 401 carrying it as ``WWW-Authenticate``;
  ``link`` is sent as the ``Link`` of every tag list; ``location`` replaces the ``Location`` of
  a blob upload.
* ``redirect_blobs``: a base URL (``http://HOST:PORT``); every blob GET is answered with a
  307 to that base plus the blob's path, as registries that keep blobs in object storage
  answer. ``retry_after`` is the ``Retry-After`` of the answers ``fail`` makes (``"0"``).
* ``upstream_authorization``: an ``Authorization`` sent to the registry on behalf of a
  request that came without one (a blob store holding its own access to the blobs).
* ``serve_tls(cert_file, key_file)``: answer HTTPS (before ``start``); ``url`` says which.
* ``plant(repository, reference, data, media_type)``: that manifest is answered for
  ``GET``/``HEAD /v2/<repository>/manifests/<reference>`` without asking the registry, for a
  document the registry itself would refuse to store.

* ``slow(method, fragment, seconds, times)``: the next ``times`` such requests wait
  ``seconds`` before they are handled, as a registry under load answers late.

* ``hold_blob``: a digest (``sha256:…``); a GET of that blob is answered only once a
  signature lookup (a referrers listing or a ``sha256-<hex>`` fallback tag) has arrived, or
  after ``hold_seconds``; ``released_by`` then says which (``"lookup"`` or ``"timeout"``).

Everything else is forwarded as it is (the ``Host`` header too, so the registry's upload
``Location`` URLs point at the proxy). Every request is logged as ``(method, path, status)``,
and its arrival as ``(method, path, monotonic seconds)`` in ``arrivals``.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from support.http_kit import Certificate, LoopbackServer, send

INDEX_MEDIA_TYPE = "application/vnd.oci.image.index.v1+json"
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "upgrade"}


@dataclass
class RegistryProxy:
    upstream: str  # host:port of the real registry
    referrers_api: bool = False
    page_size: int = 0  # 0: one page
    foreign_referrers: bool = False
    log: list[tuple[str, str, int]] = field(default_factory=list)
    referrers: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    token_uses: int = 0  # 0: tokens never run out
    uses: dict[str, int] = field(default_factory=dict)
    failures: list[list[Any]] = field(default_factory=list)
    elsewhere: str = ""
    challenge: str = ""
    link: str = ""
    location: str = ""
    planted: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    authorizations: list[tuple[str, str]] = field(default_factory=list)
    redirect_blobs: str = ""
    retry_after: str = "0"
    upstream_authorization: str = ""
    arrivals: list[tuple[str, str, float]] = field(default_factory=list)
    hold_blob: str = ""
    hold_seconds: float = 10.0
    released_by: str = ""
    delays: list[list[Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.server = LoopbackServer(fallback=self.handle)
        self.host = self.server.address
        self.url = self.server.url
        self._lock = threading.Lock()
        self._looked_up = threading.Event()

    def start(self) -> RegistryProxy:
        self.server.start()
        return self

    def serve_tls(self, cert_file: str, key_file: str) -> RegistryProxy:
        """Answer HTTPS with this certificate (call before :meth:`start`)."""
        self.server.use_tls(Certificate(Path(cert_file), Path(key_file)))
        self.url = self.server.url
        return self

    def stop(self) -> None:
        self.server.stop()

    def ref(self, path: str) -> str:
        return f"oci://{self.host}/{path}"

    def plant(self, repository: str, reference: str, data: bytes, media_type: str) -> None:
        with self._lock:
            self.planted[f"/v2/{repository}/manifests/{reference}"] = (data, media_type)

    def fail(self, method: str, fragment: str, status: int, times: int | None = 1) -> None:
        with self._lock:
            self.failures.append([method, fragment, status, times])

    def slow(self, method: str, fragment: str, seconds: float, times: int = 1) -> None:
        with self._lock:
            self.delays.append([method, fragment, seconds, times])

    def _delay(self, method: str, path: str) -> float:
        with self._lock:
            for delay in self.delays:
                wanted, fragment, seconds, times = delay
                if wanted == method and fragment in path and times > 0:
                    delay[3] = times - 1
                    return float(seconds)
        return 0.0

    def _failure(self, method: str, path: str) -> int | None:
        with self._lock:
            for failure in self.failures:
                wanted, fragment, status, times = failure
                if wanted != method or fragment not in path or times == 0:
                    continue
                if times is not None:
                    failure[3] = times - 1
                return int(status)
        return None

    def count(self, method: str, fragment: str, status: int | None = None) -> int:
        return sum(
            1
            for m, path, code in self.log
            if m == method and fragment in path and (status is None or code == status)
        )

    # -- one request ---------------------------------------------------------------------

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        method = handler.command
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        parts = urlsplit(handler.path)
        with self._lock:
            self.arrivals.append((method, parts.path, time.monotonic()))
        time.sleep(self._delay(method, parts.path))
        if method == "GET" and ("/referrers/" in parts.path or "/manifests/sha256-" in parts.path):
            self._looked_up.set()
        if self.hold_blob and method == "GET" and parts.path.endswith(f"/blobs/{self.hold_blob}"):
            seen = self._looked_up.wait(self.hold_seconds)
            with self._lock:
                self.released_by = self.released_by or ("lookup" if seen else "timeout")
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in HOP_BY_HOP}
        authorization = headers.get("Authorization", "")
        if authorization:
            with self._lock:
                self.authorizations.append((parts.path, authorization))
        elif self.upstream_authorization:
            headers["Authorization"] = self.upstream_authorization
        if self.redirect_blobs and method == "GET" and "/blobs/sha256:" in parts.path:
            target = f"{self.redirect_blobs}{handler.path}"
            self.log.append((method, parts.path, 307))  # logged before the client hears it
            send(handler, 307, b"", [("Location", target)])
            return
        if authorization.startswith("Bearer "):
            token = authorization.removeprefix("Bearer ")
            with self._lock:
                self.uses[token] = self.uses.get(token, 0) + 1
                refused = bool(self.token_uses) and self.uses[token] > self.token_uses
            if refused:
                # The registry's own challenge for this path: ask it without the token.
                headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        segments = parts.path.split("/")
        if self.challenge and not authorization:
            self.log.append((method, parts.path, 401))
            send(handler, 401, b"", [("WWW-Authenticate", self.challenge)])
            return
        failed = self._failure(method, parts.path)
        if failed == 0:
            status, answer, reply = self._forward(method, handler.path, headers, body)
            self.log.append((method, parts.path, 0))
            handler.send_response(status)
            for key, value in answer:
                handler.send_header(key, value)
            handler.send_header("Content-Length", str(len(reply)))
            handler.end_headers()
            handler.wfile.write(reply[: len(reply) // 2])
            handler.wfile.flush()
            handler.close_connection = True
            return
        if failed is not None:
            busy = json.dumps({"errors": [{"code": "UNAVAILABLE", "message": "busy"}]}).encode()
            busy_headers = [("Content-Type", "application/json"), ("Retry-After", self.retry_after)]
            self.log.append((method, parts.path, failed))
            send(handler, failed, busy, busy_headers, head=method == "HEAD")
            return
        if method in {"GET", "HEAD"} and parts.path in self.planted:
            data, media_type = self.planted[parts.path]
            status = 200
            self.log.append((method, parts.path, status))
            send(handler, status, data, [("Content-Type", media_type)], head=method == "HEAD")
            return
        if self.referrers_api and method == "GET" and "referrers" in segments[:-1]:
            status = self._referrers(handler, parts.path, parts.query, headers)
        else:
            status, answer, reply = self._forward(method, handler.path, headers, body)
            if self.elsewhere:
                answer = self._sent_elsewhere(method, parts.path, status, answer)
            answer = self._fuzzed(method, parts.path, status, answer)
            if (
                self.referrers_api
                and method == "PUT"
                and "/manifests/" in parts.path
                and status == 201
            ):
                subject = self._record(parts.path, body)
                if subject is not None:
                    answer.append(("OCI-Subject", subject))
            self.log.append((method, parts.path, status))
            send(handler, status, reply, answer, head=method == "HEAD")
            return
        self.log.append((method, parts.path, status))

    def _forward(
        self, method: str, target: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        connection = http.client.HTTPConnection(self.upstream, timeout=60)
        try:
            connection.request(method, target, body=body or None, headers=headers)
            response = connection.getresponse()
            data = response.read()
            kept = [(k, v) for k, v in response.getheaders() if k.lower() not in HOP_BY_HOP]
            if method == "HEAD":
                length = response.getheader("Content-Length")
                if length is not None:
                    kept.append(("Content-Length", length))
            return response.status, kept, data
        finally:
            connection.close()

    def _record(self, path: str, body: bytes) -> str | None:
        """Remember a pushed manifest that has a ``subject``; its subject's digest."""
        try:
            document = json.loads(body)
        except ValueError:
            return None
        subject = document.get("subject") if isinstance(document, dict) else None
        if not isinstance(subject, dict) or not isinstance(subject.get("digest"), str):
            return None
        repository = path.removeprefix("/v2/").split("/manifests/")[0]
        descriptor: dict[str, Any] = {
            "mediaType": document.get("mediaType"),
            "digest": "sha256:" + hashlib.sha256(body).hexdigest(),
            "size": len(body),
            "artifactType": document.get("artifactType")
            or (document.get("config") or {}).get("mediaType"),
        }
        if document.get("annotations"):
            descriptor["annotations"] = document["annotations"]
        with self._lock:
            listed = self.referrers.setdefault((repository, subject["digest"]), [])
            if all(item["digest"] != descriptor["digest"] for item in listed):
                listed.append(descriptor)
        return str(subject["digest"])

    def _referrers(
        self, handler: BaseHTTPRequestHandler, path: str, query: str, headers: dict[str, str]
    ) -> int:
        repository, _, digest = path.removeprefix("/v2/").rpartition("/referrers/")
        if "Authorization" not in headers:
            # Ask the registry for its challenge on this repository, as it guards it.
            status, challenge, body = self._forward(
                "GET", f"/v2/{repository}/tags/list", headers, b""
            )
            if status == 401:
                send(handler, status, body, challenge)
                return status
        with self._lock:
            listed = list(self.referrers.get((repository, digest), []))
        if self.foreign_referrers:
            foreign = {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": "sha256:" + hashlib.sha256(digest.encode()).hexdigest(),
                "size": 2,
                "artifactType": "application/vnd.example.sbom.v1+json",
            }
            listed.insert(0, foreign)
        wanted = parse_qs(query).get("artifactType")
        answer: list[tuple[str, str]] = [("Content-Type", INDEX_MEDIA_TYPE)]
        if wanted:
            listed = [item for item in listed if item.get("artifactType") in wanted]
            answer.append(("OCI-Filters-Applied", "artifactType"))
        start = int((parse_qs(query).get("page") or ["0"])[0])
        if self.page_size:
            page = listed[start : start + self.page_size]
            if start + self.page_size < len(listed):
                following = f"/v2/{repository}/referrers/{digest}?page={start + self.page_size}"
                answer.append(("Link", f'<{following}>; rel="next"'))
        else:
            page = listed
        if self.elsewhere:
            answer.append(("Link", f'<{self.elsewhere}{path}?page=9>; rel="next"'))
        index = {"schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE, "manifests": page}
        send(handler, 200, json.dumps(index).encode(), answer)
        return 200

    def _fuzzed(
        self, method: str, path: str, status: int, answer: list[tuple[str, str]]
    ) -> list[tuple[str, str]]:
        """``answer``'s headers with the fuzzer's ``Link`` and ``Location`` put in."""
        if self.link and method == "GET" and path.endswith("/tags/list") and status == 200:
            return [*answer, ("Link", self.link)]
        if self.location and method == "POST" and "/blobs/uploads" in path and status == 202:
            kept = [(key, value) for key, value in answer if key.lower() != "location"]
            return [*kept, ("Location", self.location)]
        return answer

    def _sent_elsewhere(
        self, method: str, path: str, status: int, answer: list[tuple[str, str]]
    ) -> list[tuple[str, str]]:
        """``answer``'s headers with the next tag page or the upload sent to ``elsewhere``."""
        if method == "GET" and path.endswith("/tags/list") and status == 200:
            return [*answer, ("Link", f'<{self.elsewhere}{path}?last=zzz>; rel="next"')]
        if method == "POST" and "/blobs/uploads" in path and status == 202:
            moved = []
            for key, value in answer:
                there = urlsplit(value)
                moved.append(
                    (key, f"{self.elsewhere}{there.path}?{there.query}")
                    if key.lower() == "location"
                    else (key, value)
                )
            return moved
        return answer
