"""A loopback GitHub Releases API for install tests, with fault injection.

:class:`GitHubServer` serves ``/repos/{owner}/{repo}/releases/latest``,
``/releases/tags/{tag}``, ``/releases`` (the list, newest first), ``/releases/assets/{id}``
(JSON, or the bytes with ``Accept: application/octet-stream``) and
``/{owner}/{repo}/releases/download/{tag}/{name}``, all on 127.0.0.1 with a real HTTP/1.1
server. Every request is recorded with its headers. Release documents carry an ``ETag`` and
are answered 304, without a body, to an ``If-None-Match`` naming it. ``POST /graphql``
answers the ``repository { latestRelease }`` queries of ``outdated`` (with a token only).

Usage::

    def test_x(github_server: GitHubServer, asset_host: BlobServer) -> None:
        github_server.publish("acme", "hello", "v1.0.0", {"hello-1.0.0-noarch.tar.gz": data})
        github_server.fail(status=502, times=2)            # next two requests answer 502
        github_server.drop_connection(path_contains="/assets/")
        github_server.rate_limit(status=403, reset=1_900_000_000)
        github_server.graphql_rate_limit(reset=1_900_000_000)  # 200 with RATE_LIMITED
        github_server.redirect_assets_to(asset_host)       # asset bytes come from another port
        ...
        github_server.requests_to("/assets/")[0].headers["authorization"]

Faults are consumed in the order they were added; each matches requests whose path contains
``path_contains`` (every request when ``None``) and fires ``times`` times (``None``: forever).
The same fault switches work on :class:`BlobServer`.

The fixtures :func:`github_server` and :func:`asset_host` start and stop the servers; import
them into a test module or ``conftest.py`` (``from support.github_server import
github_server, asset_host``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from support.http_kit import LoopbackServer

FaultKind = Literal[
    "status", "drop", "truncate", "wrong_length", "slow", "rate_limit", "graphql_rate_limit"
]


@dataclass
class Fault:
    """An injected misbehaviour; see the module docstring."""

    kind: FaultKind
    times: int | None = 1
    path_contains: str | None = None
    status: int = 500
    delay: float = 0.0
    length_delta: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    error_type: str = ""

    def matches(self, path: str) -> bool:
        return self.path_contains is None or self.path_contains in path


@dataclass
class PublishedAsset:
    id: int
    name: str
    data: bytes
    digest: str | None
    # When GitHub says the asset last changed (`updated_at`); a test that swaps an asset's
    # bytes in place moves it on, as a new upload would.
    updated_at: str = "2026-01-01T00:00:00Z"
    # What the API lists as the asset's `size` when not its length (a hostile mirror's -1).
    listed_size: Any = None


@dataclass
class PublishedRelease:
    owner: str
    repo: str
    tag: str
    assets: list[PublishedAsset]
    # When GitHub says it was published (`published_at`), RFC 3339 UTC.
    published_at: str = field(
        default_factory=lambda: dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    )


class _LoopbackServer(LoopbackServer):
    """The loopback server (GET only) with the fault switches; :meth:`route` answers.

    Subclasses answer through :meth:`route`, not the kit's :meth:`add_route`."""

    def __init__(self, methods: Sequence[str] = ("GET",)) -> None:
        super().__init__(methods=methods)
        self._faults: list[Fault] = []
        self._holds: list[tuple[str, str, float, threading.Event]] = []
        # hold_until's verdicts: the held path -> "request" (released by the awaited
        # request) or "timeout".
        self.released_by: dict[str, str] = {}

    # -- fault switches -----------------------------------------------------------------

    def add_fault(self, fault: Fault) -> Fault:
        with self._lock:
            self._faults.append(fault)
        return fault

    def fail(
        self, status: int = 500, *, times: int | None = 1, path_contains: str | None = None
    ) -> Fault:
        """Answer ``status`` (a 5xx by default) instead of the real response."""
        return self.add_fault(Fault("status", times, path_contains, status=status))

    def drop_connection(self, *, times: int | None = 1, path_contains: str | None = None) -> Fault:
        """Send the headers and half the body, then close the connection."""
        return self.add_fault(Fault("drop", times, path_contains))

    def truncate_body(self, *, times: int | None = 1, path_contains: str | None = None) -> Fault:
        """Send a well-formed response whose body is only the first half of the real one."""
        return self.add_fault(Fault("truncate", times, path_contains))

    def wrong_content_length(
        self, delta: int, *, times: int | None = 1, path_contains: str | None = None
    ) -> Fault:
        """Declare ``len(body) + delta`` as Content-Length, send the whole body, then close."""
        return self.add_fault(Fault("wrong_length", times, path_contains, length_delta=delta))

    def slow(
        self, delay: float, *, times: int | None = None, path_contains: str | None = None
    ) -> Fault:
        """Wait ``delay`` seconds before answering."""
        return self.add_fault(Fault("slow", times, path_contains, delay=delay))

    def rate_limit(
        self,
        *,
        status: int = 403,
        reset: int | None = None,
        retry_after: int | None = None,
        times: int | None = 1,
        path_contains: str | None = None,
    ) -> Fault:
        """Answer like GitHub's rate limiter, with ``X-RateLimit-*`` / ``Retry-After``."""
        headers = {"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0"}
        headers["X-RateLimit-Reset"] = str(reset if reset is not None else int(time.time()) + 600)
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        return self.add_fault(
            Fault("rate_limit", times, path_contains, status=status, headers=headers)
        )

    def graphql_rate_limit(
        self,
        *,
        error_type: str = "RATE_LIMITED",
        reset: int | None = None,
        headers: bool = True,
        times: int | None = 1,
    ) -> Fault:
        """Answer ``POST /graphql`` as GitHub's GraphQL API answers a spent rate limit: HTTP
        200, ``{"data": null, "errors": [{"type": "RATE_LIMITED", ...}]}`` (github/docs#22607;
        some answers say ``RATE_LIMIT``: ``error_type``), with ``X-RateLimit-Remaining: 0``
        and ``X-RateLimit-Reset`` unless ``headers`` is false."""
        extra = {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0"}
        extra["X-RateLimit-Reset"] = str(reset if reset is not None else int(time.time()) + 600)
        extra["X-RateLimit-Resource"] = "graphql"
        return self.add_fault(
            Fault(
                "graphql_rate_limit",
                times,
                "/graphql",
                status=200,
                headers=extra if headers else {},
                error_type=error_type,
            )
        )

    def hold_until(self, path_contains: str, awaited: str, *, seconds: float = 10.0) -> None:
        """Answer a request whose path contains ``path_contains`` only once a request whose
        path contains ``awaited`` has arrived (or after ``seconds``); :attr:`released_by`
        says which released it."""
        with self._lock:
            self._holds.append((path_contains, awaited, seconds, threading.Event()))

    def _hold(self, path: str) -> None:
        with self._lock:
            holds = list(self._holds)
        for _, awaited, _, seen in holds:
            if awaited in path:
                seen.set()
        for held, _, seconds, seen in holds:
            if held in path:
                released = seen.wait(seconds)
                with self._lock:
                    self.released_by.setdefault(held, "request" if released else "timeout")

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    # -- request handling ---------------------------------------------------------------

    def _take_faults(self, path: str) -> list[Fault]:
        taken: list[Fault] = []
        with self._lock:
            kinds: set[str] = set()
            for fault in self._faults:
                if fault.kind in kinds or not fault.matches(path):
                    continue
                if fault.times is not None:
                    if fault.times <= 0:
                        continue
                    fault.times -= 1
                kinds.add(fault.kind)
                taken.append(fault)
        return taken

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path
        headers = {key.lower(): value for key, value in handler.headers.items()}
        self._hold(path)
        faults = self._take_faults(path)
        for fault in faults:
            if fault.kind == "slow":
                time.sleep(fault.delay)
        for fault in faults:
            if fault.kind in {"status", "rate_limit", "graphql_rate_limit"}:
                # Answered without routing: the request's body is read all the same, so a
                # kept-alive connection's next request starts where the client put it.
                _drain(handler, headers)
            if fault.kind == "status":
                body = b'{"message": "Server Error"}'
                self._send(handler, fault.status, body, [], extra=fault.headers)
                return
            if fault.kind == "rate_limit":
                body = b'{"message": "API rate limit exceeded"}'
                self._send(handler, fault.status, body, [], extra=fault.headers)
                return
            if fault.kind == "graphql_rate_limit":
                message = "API rate limit already exceeded for user ID 1."
                document = {
                    "data": None,
                    "errors": [{"type": fault.error_type, "message": message}],
                }
                body = json.dumps(document).encode()
                self._send(handler, fault.status, body, [], extra=fault.headers)
                return
        status, body, content_type, extra = self.route(handler, urlsplit(path).path, headers)
        self._send(handler, status, body, faults, content_type=content_type, extra=extra)

    def route(
        self, handler: BaseHTTPRequestHandler, path: str, headers: dict[str, str]
    ) -> tuple[int, bytes, str, dict[str, str]]:
        """Answer one request: ``(status, body, content type, extra headers)``."""
        raise NotImplementedError

    def _send(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        body: bytes,
        faults: list[Fault],
        *,
        content_type: str = "application/json",
        extra: Mapping[str, str] | None = None,
    ) -> None:
        kinds = {fault.kind: fault for fault in faults}
        declared = len(body)
        if "truncate" in kinds:
            body = body[: len(body) // 2]
            declared = len(body)
        if "wrong_length" in kinds:
            declared = max(0, len(body) + kinds["wrong_length"].length_delta)
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", content_type)
            handler.send_header("Content-Length", str(declared))
            for key, value in (extra or {}).items():
                handler.send_header(key, value)
            if "drop" in kinds or "wrong_length" in kinds:
                handler.send_header("Connection", "close")
            handler.end_headers()
            if "drop" in kinds:
                handler.wfile.write(body[: len(body) // 2])
                handler.wfile.flush()
                handler.close_connection = True
                handler.connection.shutdown(socket.SHUT_RDWR)
                return
            handler.wfile.write(body)
            handler.wfile.flush()
            if "wrong_length" in kinds:
                handler.close_connection = True
                handler.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            # The client hung up first (a reset, a broken pipe, or gone before the shutdown:
            # a client that read the declared length and closed owes the server nothing).
            handler.close_connection = True


def _drain(handler: BaseHTTPRequestHandler, headers: Mapping[str, str]) -> None:
    """Read the request's body (its ``Content-Length``) and drop it."""
    length = int(headers.get("content-length", "0") or "0")
    if length > 0:
        handler.rfile.read(length)


class BlobServer(_LoopbackServer):
    """A second loopback host (another port) serving bytes, e.g. the target of a redirect."""

    def __init__(self) -> None:
        super().__init__()
        self.blobs: dict[str, bytes] = {}
        self.redirects: dict[str, str] = {}
        # Every path answered with a 302 here, when set.
        self.redirect_all: str | None = None

    def put(self, path: str, data: bytes) -> str:
        """Serve ``data`` at ``path``; return its absolute URL."""
        self.blobs[path] = data
        return self.url + path

    def redirect(self, path: str, location: str) -> str:
        """Answer ``path`` with a 302 to ``location``; return the URL of ``path``."""
        self.redirects[path] = location
        return self.url + path

    def route(
        self, handler: BaseHTTPRequestHandler, path: str, headers: dict[str, str]
    ) -> tuple[int, bytes, str, dict[str, str]]:
        del handler, headers
        if self.redirect_all is not None:
            return 302, b"", "text/plain", {"Location": self.redirect_all}
        if path in self.redirects:
            return 302, b"", "text/plain", {"Location": self.redirects[path]}
        if path in self.blobs:
            return 200, self.blobs[path], "application/octet-stream", {}
        return 404, b"not found", "text/plain", {}


class GitHubServer(_LoopbackServer):
    """The GitHub Releases API subset the installer uses; see the module docstring."""

    def __init__(self) -> None:
        super().__init__(methods=("GET", "POST"))
        self.releases: dict[tuple[str, str], list[PublishedRelease]] = {}
        self.latest: dict[tuple[str, str], str] = {}
        self.repositories: list[dict[str, Any]] = []
        self.assets: dict[int, tuple[PublishedRelease, PublishedAsset]] = {}
        self.redirect_target: BlobServer | None = None
        self.required_token: str | None = None
        self.substitutions: dict[tuple[str, str, str], str] = {}
        self.attestations: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self.attestation_page_size = 30
        self._next_id = 1000

    def publish(
        self,
        owner: str,
        repo: str,
        tag: str,
        assets: Mapping[str, bytes],
        *,
        digests: bool | Mapping[str, str | None] = False,
        latest: bool = True,
    ) -> PublishedRelease:
        """Publish a release. ``digests=True`` gives every asset its ``sha256:`` API digest;
        a mapping sets chosen digests (e.g. a wrong one). ``latest`` makes it the latest."""
        published: list[PublishedAsset] = []
        for name, data in assets.items():
            self._next_id += 1
            if isinstance(digests, Mapping):
                digest = digests.get(name)
            elif digests:
                digest = "sha256:" + hashlib.sha256(data).hexdigest()
            else:
                digest = None
            published.append(PublishedAsset(self._next_id, name, data, digest))
        release = PublishedRelease(owner, repo, tag, published)
        self.releases.setdefault((owner, repo), []).append(release)
        for asset in published:
            self.assets[asset.id] = (release, asset)
        if latest:
            self.latest[(owner, repo)] = tag
        return release

    def publish_attestations(
        self, owner: str, repo: str, digest: str, bundles: Sequence[dict[str, Any]]
    ) -> None:
        """Serve ``bundles`` from ``/repos/{owner}/{repo}/attestations/sha256:{digest}``, in
        pages of :attr:`attestation_page_size` linked by ``Link: rel="next"``."""
        entries = [{"bundle": bundle, "repository_id": 1} for bundle in bundles]
        self.publish_attestation_entries(owner, repo, digest, entries)

    def publish_attestation_entries(
        self, owner: str, repo: str, digest: str, entries: Sequence[dict[str, Any]]
    ) -> None:
        """Like :meth:`publish_attestations` with the answer's entries as given, e.g.
        ``{"bundle": None, "bundle_url": URL}`` as GitHub answers for stored bundles."""
        self.attestations.setdefault((owner, repo, digest), []).extend(entries)

    def _attestation_page(
        self, owner: str, repo: str, digest: str, query: str
    ) -> tuple[int, bytes, str, dict[str, str]]:
        bundles = self.attestations.get((owner, repo, digest))
        if not bundles:
            return 404, b'{"message": "Not Found"}', "application/json", {}
        page = int(parse_qs(query).get("page", ["1"])[0])
        size = self.attestation_page_size
        chunk = bundles[(page - 1) * size : page * size]
        extra: dict[str, str] = {}
        if page * size < len(bundles):
            following = (
                f"{self.url}/repos/{owner}/{repo}/attestations/sha256:{digest}"
                f"?per_page={size}&page={page + 1}"
            )
            extra["Link"] = f'<{following}>; rel="next"'
        body = json.dumps({"attestations": chunk}).encode()
        return 200, body, "application/json", extra

    def redirect_assets_to(self, target: BlobServer | None) -> None:
        """Answer asset downloads with a 302 to ``target`` (another port), as GitHub does."""
        self.redirect_target = target

    def require_token(self, token: str | None) -> None:
        """Answer 404 (like a private repository) unless ``Bearer <token>`` is sent."""
        self.required_token = token

    def substitute(self, owner: str, repo: str, asked: str, served: str) -> None:
        """Answer the lookup of tag ``asked`` with the release document of tag ``served``, as
        a hostile or broken mirror would."""
        self.substitutions[(owner, repo, asked)] = served

    def asset_api_url(self, release: PublishedRelease, name: str) -> str:
        for asset in release.assets:
            if asset.name == name:
                return f"{self.url}/repos/{release.owner}/{release.repo}/releases/assets/{asset.id}"
        raise KeyError(name)

    def _release_json(self, release: PublishedRelease) -> dict[str, Any]:
        base = f"{self.url}/repos/{release.owner}/{release.repo}"
        return {
            "tag_name": release.tag,
            "name": release.tag,
            "draft": False,
            "prerelease": False,
            "html_url": f"{self.url}/{release.owner}/{release.repo}/releases/tag/{release.tag}",
            "published_at": release.published_at,
            "assets": [self._asset_json(release, asset, base) for asset in release.assets],
        }

    def _asset_json(
        self, release: PublishedRelease, asset: PublishedAsset, base: str
    ) -> dict[str, Any]:
        return {
            "id": asset.id,
            "name": asset.name,
            "size": len(asset.data) if asset.listed_size is None else asset.listed_size,
            "content_type": "application/octet-stream",
            "digest": asset.digest,
            "updated_at": asset.updated_at,
            "url": f"{base}/releases/assets/{asset.id}",
            "browser_download_url": (
                f"{self.url}/{release.owner}/{release.repo}/releases/download/"
                f"{release.tag}/{asset.name}"
            ),
        }

    def _find(self, owner: str, repo: str, tag: str | None) -> PublishedRelease | None:
        wanted = tag if tag is not None else self.latest.get((owner, repo))
        for release in self.releases.get((owner, repo), []):
            if release.tag == wanted:
                return release
        return None

    def route(
        self, handler: BaseHTTPRequestHandler, path: str, headers: dict[str, str]
    ) -> tuple[int, bytes, str, dict[str, str]]:
        not_found: tuple[int, bytes, str, dict[str, str]] = (
            404,
            b'{"message": "Not Found"}',
            "application/json",
            {},
        )
        token = self.required_token
        if token is not None and headers.get("authorization") != f"Bearer {token}":
            return not_found
        parts = [unquote(part) for part in path.strip("/").split("/")]
        if handler is not None and handler.command == "POST":
            return self._graphql(handler, headers) if parts == ["graphql"] else not_found
        if parts == ["search", "repositories"]:
            return self._search(parse_qs(urlsplit(handler.path).query))
        if len(parts) == 5 and parts[0] == "repos" and parts[3] == "attestations":
            digest = parts[4].removeprefix("sha256:")
            return self._attestation_page(parts[1], parts[2], digest, urlsplit(handler.path).query)
        if len(parts) == 4 and parts[0] == "repos" and parts[3] == "releases":
            if (parts[1], parts[2]) not in self.releases:
                return not_found
            listed = reversed(self.releases[(parts[1], parts[2])])
            body = json.dumps([self._release_json(release) for release in listed]).encode()
            return self._conditional(body, headers)
        if len(parts) >= 5 and parts[0] == "repos" and parts[3] == "releases":
            owner, repo = parts[1], parts[2]
            if parts[4:] == ["latest"]:
                release = self._find(owner, repo, None)
            elif len(parts) == 6 and parts[4] == "tags":
                served = self.substitutions.get((owner, repo, parts[5]), parts[5])
                release = self._find(owner, repo, served)
            elif len(parts) == 6 and parts[4] == "assets" and parts[5].isdigit():
                return self._serve_asset(int(parts[5]), headers)
            else:
                return not_found
            if release is None:
                return not_found
            body = json.dumps(self._release_json(release)).encode()
            return self._conditional(body, headers)
        if len(parts) == 6 and parts[2:4] == ["releases", "download"]:
            release = self._find(parts[0], parts[1], parts[4])
            for asset in release.assets if release else []:
                if asset.name == parts[5]:
                    return 200, asset.data, "application/octet-stream", {}
        return not_found

    def _graphql(
        self, handler: BaseHTTPRequestHandler, headers: dict[str, str]
    ) -> tuple[int, bytes, str, dict[str, str]]:
        """``POST /graphql``: the ``rN: repository(owner: $oN, name: $nN) { latestRelease
        {...} }`` selections nexo-pkg sends, answered as GitHub's GraphQL API answers them
        (``null`` for a repository it does not know, with an entry in ``errors``). Like
        GitHub, it refuses a request without a token (401)."""
        if not headers.get("authorization", "").startswith("Bearer "):
            _drain(handler, headers)
            body = b'{"message": "This endpoint requires you to be authenticated."}'
            return 401, body, "application/json", {}
        length = int(headers.get("content-length", "0"))
        request = json.loads(handler.rfile.read(length))
        variables = request.get("variables", {})
        data: dict[str, Any] = {}
        errors: list[dict[str, Any]] = []
        for alias, owner_var, name_var in re.findall(
            r"(\w+): repository\(owner: \$(\w+), name: \$(\w+)\)", request["query"]
        ):
            owner, repo = variables[owner_var], variables[name_var]
            release = self._find(owner, repo, None)
            if (owner, repo) not in self.releases:
                data[alias] = None
                errors.append({"type": "NOT_FOUND", "path": [alias]})
                continue
            data[alias] = {
                "latestRelease": None if release is None else self._graphql_release(release)
            }
        document: dict[str, Any] = {"data": data}
        if errors:
            document["errors"] = errors
        return 200, json.dumps(document).encode(), "application/json", {}

    def _graphql_release(self, release: PublishedRelease) -> dict[str, Any]:
        return {
            "tagName": release.tag,
            "publishedAt": release.published_at,
            "releaseAssets": {
                "nodes": [
                    {
                        "id": f"RA_{asset.id}",
                        "name": asset.name,
                        "size": len(asset.data),
                        "digest": asset.digest,
                        "updatedAt": asset.updated_at,
                        "downloadUrl": (
                            f"{self.url}/{release.owner}/{release.repo}/releases/download/"
                            f"{release.tag}/{asset.name}"
                        ),
                    }
                    for asset in release.assets
                ]
            },
        }

    @staticmethod
    def _conditional(
        body: bytes, headers: dict[str, str]
    ) -> tuple[int, bytes, str, dict[str, str]]:
        """A release document with its ``ETag``, or 304 and no body when the request's
        ``If-None-Match`` names it (as GitHub answers, without counting it against the
        rate limit)."""
        etag = f'"{hashlib.sha256(body).hexdigest()[:40]}"'
        if headers.get("if-none-match") == etag:
            return 304, b"", "application/json", {"ETag": etag}
        return 200, body, "application/json", {"ETag": etag}

    def _search(self, query: dict[str, list[str]]) -> tuple[int, bytes, str, dict[str, str]]:
        """``/search/repositories``: the words of ``q`` must all appear in a repository's
        name or description, and each ``topic:X`` among its topics (as GitHub's search)."""
        words = " ".join(query.get("q", [""])).split()
        topics = [word.removeprefix("topic:") for word in words if word.startswith("topic:")]
        terms = [word.lower() for word in words if not word.startswith("topic:")]
        limit = int(query.get("per_page", ["30"])[0])
        items = [
            repository
            for repository in self.repositories
            if all(topic in repository.get("topics", []) for topic in topics)
            and all(
                term in f"{repository['full_name']} {repository.get('description') or ''}".lower()
                for term in terms
            )
        ]
        body = {"total_count": len(items), "incomplete_results": False, "items": items[:limit]}
        return 200, json.dumps(body).encode(), "application/json", {}

    def add_repository(
        self, full_name: str, description: str, *, topics: Sequence[str] = ("nexo-plugin",)
    ) -> None:
        """A repository the search endpoint knows."""
        self.repositories.append(
            {
                "full_name": full_name,
                "description": description,
                "topics": list(topics),
                "stargazers_count": len(self.repositories),
                "html_url": f"https://github.com/{full_name}",
            }
        )

    def _serve_asset(
        self, asset_id: int, headers: dict[str, str]
    ) -> tuple[int, bytes, str, dict[str, str]]:
        found = self.assets.get(asset_id)
        if found is None:
            return 404, b'{"message": "Not Found"}', "application/json", {}
        release, asset = found
        if "application/octet-stream" not in headers.get("accept", ""):
            base = f"{self.url}/repos/{release.owner}/{release.repo}"
            body = json.dumps(self._asset_json(release, asset, base)).encode()
            return 200, body, "application/json", {}
        if self.redirect_target is not None:
            location = self.redirect_target.put(f"/blobs/{asset.id}/{asset.name}", asset.data)
            return 302, b"", "text/plain", {"Location": location}
        return 200, asset.data, "application/octet-stream", {}


@pytest.fixture
def github_server() -> Iterator[GitHubServer]:
    """A running :class:`GitHubServer` on 127.0.0.1."""
    with GitHubServer() as server:
        yield server


@pytest.fixture
def asset_host() -> Iterator[BlobServer]:
    """A running :class:`BlobServer`: a second loopback host for redirected downloads."""
    with BlobServer() as server:
        yield server
