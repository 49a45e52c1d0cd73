"""A small synchronous GitHub Releases client built on httpx.

It resolves releases, downloads assets through the API asset URL, retries 5xx answers and
connection failures with exponential backoff, turns rate limiting into a clear message, and
follows redirects itself so the bearer token only ever goes to the API's own origin.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from urllib.parse import quote, urljoin, urlsplit

import httpx

from nexo_pkg import __version__
from nexo_pkg.errors import NexoError, UsageError

DEFAULT_API_BASE = "https://api.github.com"
API_BASE_ENV = ("NEXO_GITHUB_API_BASE", "GITHUB_API_URL")
TOKEN_ENV = ("NEXO_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN")
RETRY_BASE_ENV = "NEXO_HTTP_RETRY_BASE_MS"
API_VERSION = "2022-11-28"
MAX_REDIRECTS = 5
DEFAULT_RETRIES = 3
DEFAULT_RETRY_BASE_SECONDS = 0.5
MAX_RETRY_DELAY_SECONDS = 8.0
CHUNK_SIZE = 1024 * 1024

T = TypeVar("T")


@dataclass(frozen=True)
class ReleaseAsset:
    """One file attached to a release, as the API describes it."""

    name: str
    url: str
    browser_download_url: str
    size: int
    digest: str | None = None


@dataclass(frozen=True)
class Release:
    """A resolved release: its tag and assets."""

    tag: str
    assets: tuple[ReleaseAsset, ...]
    html_url: str = ""

    def asset(self, name: str) -> ReleaseAsset | None:
        for asset in self.assets:
            if asset.name == name:
                return asset
        return None


class DownloadSink(Protocol):
    """Where a streamed download goes; ``reset`` starts over before a retry."""

    def reset(self) -> None: ...

    def set_total(self, total: int | None) -> None: ...

    def write(self, chunk: bytes) -> None: ...


class _RetryableError(Exception):
    """A failure worth another attempt (5xx, dropped connection, timeout)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def resolve_api_base(flag: str | None = None) -> str:
    """``--github-api-url`` > ``NEXO_GITHUB_API_BASE`` > ``GITHUB_API_URL`` > api.github.com.

    Raises :class:`UsageError` when the chosen value is not an http(s) URL.
    """
    value = flag or next((os.environ[name] for name in API_BASE_ENV if os.environ.get(name)), None)
    base = (value or DEFAULT_API_BASE).rstrip("/")
    parts = urlsplit(base)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise UsageError(f"GitHub API URL {base!r} is not an http(s) URL")
    return base


def resolve_token() -> str | None:
    """The first of ``NEXO_GITHUB_TOKEN``, ``GITHUB_TOKEN``, ``GH_TOKEN`` that is set."""
    for name in TOKEN_ENV:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def retry_base_delay_from_env() -> float:
    """Backoff base in seconds; ``NEXO_HTTP_RETRY_BASE_MS`` lowers it (tests use 1 ms)."""
    raw = os.environ.get(RETRY_BASE_ENV)
    if raw is None:
        return DEFAULT_RETRY_BASE_SECONDS
    try:
        return max(0.0, float(raw) / 1000.0)
    except ValueError as exc:
        raise UsageError(f"{RETRY_BASE_ENV}={raw!r} is not a number of milliseconds") from exc


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return (parts.scheme, (parts.hostname or "").lower(), port)


def _format_reset(response: httpx.Response) -> tuple[str, dict[str, Any]]:
    """When the rate limit resets, from ``Retry-After`` or ``X-RateLimit-Reset``."""
    details: dict[str, Any] = {"status": response.status_code}
    retry_after = response.headers.get("retry-after")
    reset = response.headers.get("x-ratelimit-reset")
    moment: dt.datetime | None = None
    if retry_after and retry_after.strip().isdigit():
        details["retry_after"] = int(retry_after)
        moment = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=int(retry_after))
    elif reset and reset.strip().isdigit():
        moment = dt.datetime.fromtimestamp(int(reset), dt.UTC)
    if moment is None:
        return "later", details
    stamp = moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")
    details["reset_at"] = stamp
    return f"at {stamp}", details


def _is_rate_limited(response: httpx.Response) -> bool:
    if response.status_code == 429:
        return True
    if response.status_code != 403:
        return False
    headers = response.headers
    return headers.get("x-ratelimit-remaining") == "0" or "retry-after" in headers


class GitHubClient:
    """GitHub REST client for releases; use as a context manager to close the connection pool.

    ``retry_base_delay`` defaults to ``NEXO_HTTP_RETRY_BASE_MS`` (or 0.5 s); attempt ``n``
    waits ``base * 2**n`` seconds, capped at 8 s.
    """

    def __init__(
        self,
        api_base: str,
        token: str | None = None,
        *,
        retries: int = DEFAULT_RETRIES,
        retry_base_delay: float | None = None,
        timeout: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.api_base = api_base.rstrip("/")
        self.token = token
        self.retries = retries
        self.retry_base_delay = (
            retry_base_delay_from_env() if retry_base_delay is None else retry_base_delay
        )
        self._sleep = sleep
        # trust_env keeps HTTPS_PROXY, NO_PROXY, SSL_CERT_FILE and friends working.
        self._http = httpx.Client(
            follow_redirects=False,
            trust_env=True,
            transport=_LazyTransport(),
            timeout=httpx.Timeout(timeout, connect=min(timeout, 15.0)),
            headers={"User-Agent": f"nexo-pkg/{__version__}"},
        )

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # -- requests -------------------------------------------------------------------------

    def _headers_for(self, url: str, accept: str) -> dict[str, str]:
        headers = {"Accept": accept, "X-GitHub-Api-Version": API_VERSION}
        if accept == "application/octet-stream":
            # Hash and size checks apply to the bytes as published, never a re-encoding.
            headers["Accept-Encoding"] = "identity"
        # The token belongs to the API origin only: a redirect to a CDN or any other host
        # must never receive it.
        if self.token and _origin(url) == _origin(self.api_base):
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    @contextmanager
    def _open(self, url: str, accept: str, what: str) -> Iterator[httpx.Response]:
        """GET ``url`` following redirects by hand; yield a streamed 200 response.

        Raises :class:`_RetryableError` for 5xx and transport failures, :class:`NexoError` for the
        rest (``rate_limited``, ``network``); 404 is left to the caller via ``status_code``.
        """
        current = url
        for _ in range(MAX_REDIRECTS + 1):
            request = self._http.build_request(
                "GET", current, headers=self._headers_for(current, accept)
            )
            try:
                response = self._http.send(request, stream=True)
            except httpx.TransportError as exc:
                raise _RetryableError(f"{what}: {type(exc).__name__}: {exc}") from exc
            if response.is_redirect:
                location = response.headers.get("location", "")
                response.close()
                target = urljoin(current, location)
                if urlsplit(current).scheme == "https" and urlsplit(target).scheme != "https":
                    raise NexoError(
                        f"{what}: refusing a redirect from https to {target}", kind="network"
                    )
                current = target
                continue
            try:
                if response.status_code >= 500:
                    raise _RetryableError(f"{what}: HTTP {response.status_code}")
                if _is_rate_limited(response):
                    when, details = _format_reset(response)
                    raise NexoError(
                        f"GitHub API rate limit exceeded ({what}); it resets {when}. Set "
                        "NEXO_GITHUB_TOKEN (or GITHUB_TOKEN / GH_TOKEN) to a token for a "
                        "higher limit",
                        kind="rate_limited",
                        details=details,
                    )
                yield response
            finally:
                response.close()
            return
        raise NexoError(f"{what}: more than {MAX_REDIRECTS} redirects", kind="network")

    def _with_retries(self, operation: Callable[[], T]) -> T:
        last: _RetryableError | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                delay = min(self.retry_base_delay * (2 ** (attempt - 1)), MAX_RETRY_DELAY_SECONDS)
                self._sleep(delay)
            try:
                return operation()
            except _RetryableError as exc:
                last = exc
        message = last.message if last is not None else "no attempt was made"
        raise NexoError(
            f"{message} (gave up after {self.retries + 1} attempts); check the network, "
            "proxy settings (HTTPS_PROXY) and the GitHub API URL",
            kind="network",
        ) from last

    # -- releases -------------------------------------------------------------------------

    def _get_api_json(self, path: str, what: str, not_found: Callable[[], Any]) -> Any:
        """GET a JSON document of the API (with retries); a 404 answers ``not_found()``."""

        def attempt() -> Any:
            with self._open(self.api_base + path, "application/vnd.github+json", what) as response:
                if response.status_code == 404:
                    return not_found()
                _expect_ok(response, what)
                try:
                    response.read()
                    return response.json()
                except (httpx.HTTPError, ValueError) as exc:
                    raise _RetryableError(f"{what}: unreadable answer ({exc})") from exc

        return self._with_retries(attempt)

    def get_release(self, owner: str, repo: str, tag: str | None) -> Release:
        """Resolve ``tag`` (or the latest release) of ``owner/repo``, exactly as asked.

        The answer's ``tag_name`` must be the tag asked for: a mirror or proxy that answers a
        lookup with another release (an older one, say) is refused. Raises
        ``release_not_found`` on 404 or such a substitution, ``rate_limited``, ``network``
        otherwise.
        """
        path = f"/repos/{quote(owner, safe='')}/{quote(repo, safe='')}/releases/"
        path += f"tags/{quote(tag, safe='')}" if tag else "latest"
        what = f"release {owner}/{repo}@{tag}" if tag else f"latest release of {owner}/{repo}"
        details = {"owner": owner, "repo": repo, "tag": tag}

        def not_found() -> Any:
            raise NexoError(
                f"{what} not found (is the repository public, or is a token set?)",
                kind="release_not_found",
                details=details,
            )

        release = _parse_release(self._get_api_json(path, what, not_found), what)
        if tag is not None and release.tag != tag:
            raise NexoError(
                f"{what}: the server answered with release {release.tag!r} instead; refusing "
                "a substituted release (check the GitHub API URL and any mirror or proxy)",
                kind="release_not_found",
                details={**details, "answered_tag": release.tag},
            )
        return release

    def find_release(self, owner: str, repo: str, tag: str | None) -> Release:
        """Like :meth:`get_release`, but forgiving about the ``v`` of a tag.

        ``1.2.3`` that does not exist is retried as ``v1.2.3``. When neither exists, the
        ``release_not_found`` error lists the repository's release tags nearest to the one
        asked for (or says the repository itself was not found).
        """
        try:
            return self.get_release(owner, repo, tag)
        except NexoError as error:
            if tag is None or error.kind != "release_not_found" or "answered_tag" in error.details:
                raise
        if tag[:1] not in {"v", "V"}:
            try:
                return self.get_release(owner, repo, "v" + tag)
            except NexoError as error:
                if error.kind != "release_not_found" or "answered_tag" in error.details:
                    raise
        tags = self.release_tags(owner, repo)
        details: dict[str, Any] = {"owner": owner, "repo": repo, "tag": tag}
        if tags is None:
            raise NexoError(
                f"repository {owner}/{repo} not found (is it public, or is a token set?)",
                kind="release_not_found",
                details=details,
            )
        nearest = nearest_tags(tag, tags)
        details["nearest_tags"] = nearest
        listing = ", ".join(nearest) if nearest else "it has no releases"
        raise NexoError(
            f"{owner}/{repo} has no release tagged {tag!r}; nearest tags: {listing}",
            kind="release_not_found",
            details=details,
        )

    def release_tags(self, owner: str, repo: str) -> list[str] | None:
        """Tags of the newest 100 releases of ``owner/repo``; ``None`` when the repository
        is not found. Raises ``rate_limited`` or ``network``."""
        path = f"/repos/{quote(owner, safe='')}/{quote(repo, safe='')}/releases?per_page=100"
        what = f"releases of {owner}/{repo}"

        document = self._get_api_json(path, what, lambda: None)
        if document is None:
            return None
        if not isinstance(document, list):
            raise NexoError(f"{what}: the API answer is not a list of releases", kind="network")
        return [
            item["tag_name"]
            for item in document
            if isinstance(item, dict) and isinstance(item.get("tag_name"), str)
        ]

    def read_manifest_asset(
        self, release: Release, names: tuple[str, ...], *, max_bytes: int
    ) -> tuple[str, str] | None:
        """The first of ``names`` the release carries, as ``(name, text)``; ``None`` if none.

        Raises ``archive_unsafe`` when it is larger than ``max_bytes`` and ``network`` when it
        cannot be fetched; bytes that are not UTF-8 are replaced (the manifest parser then
        refuses them).
        """
        for name in names:
            asset = release.asset(name)
            if asset is not None:
                data = self.fetch_bytes(asset, max_bytes=max_bytes)
                return name, data.decode("utf-8", errors="replace")
        return None

    def download(self, asset: ReleaseAsset, sink: DownloadSink, *, max_bytes: int) -> None:
        """Stream ``asset`` into ``sink`` through its API URL (``application/octet-stream``),
        or its browser download URL when the API URL answers 403, 404 or 410.

        Retries restart the sink. Raises ``archive_unsafe`` when the asset is larger than
        ``max_bytes``, ``network`` when it cannot be fetched completely.
        """
        what = f"download of {asset.name}"
        urls = [url for url in (asset.url, asset.browser_download_url) if url]
        if not urls:
            raise NexoError(f"{what}: the release lists no URL for it", kind="network")
        for index, url in enumerate(urls):
            try:
                self._download_from(url, asset, sink, max_bytes=max_bytes, what=what)
                return
            except NexoError as error:
                # Some mirrors and proxies in front of GitHub Enterprise only serve the
                # browser download URL: fall back to it when the API asset URL is refused
                # outright. Network faults were already retried and are not retried again.
                refused = error.details.get("http_status") in _REFUSED_STATUSES
                if not refused or index == len(urls) - 1 or urls[1] == urls[0]:
                    raise

    def _download_from(
        self, url: str, asset: ReleaseAsset, sink: DownloadSink, *, max_bytes: int, what: str
    ) -> None:
        def attempt() -> None:
            sink.reset()
            with self._open(url, "application/octet-stream", what) as response:
                _expect_ok(response, what)
                length = response.headers.get("content-length")
                declared = int(length) if length and length.isdigit() else None
                if declared is not None and declared > max_bytes:
                    raise _too_large(asset.name, max_bytes)
                sink.set_total(declared or asset.size or None)
                received = 0
                try:
                    for chunk in response.iter_raw(CHUNK_SIZE):
                        received += len(chunk)
                        if received > max_bytes:
                            raise _too_large(asset.name, max_bytes)
                        sink.write(chunk)
                except httpx.TransportError as exc:
                    raise _RetryableError(f"{what}: {type(exc).__name__}: {exc}") from exc
                if declared is not None and received != declared:
                    raise _RetryableError(f"{what}: got {received} of {declared} bytes")

        self._with_retries(attempt)

    def fetch_bytes(self, asset: ReleaseAsset, *, max_bytes: int) -> bytes:
        """Download a small asset (manifest, checksum, signature) into memory."""
        sink = _MemorySink()
        self.download(asset, sink, max_bytes=max_bytes)
        return bytes(sink.buffer)

    def get_json(self, url: str, *, what: str, max_bytes: int) -> tuple[Any, str | None]:
        """GET the API document at ``url``: ``(document, next page URL)``, ``(None, None)`` on
        404. The body is capped at ``max_bytes`` after content decoding; an unreadable or
        too deeply nested answer is ``network``."""

        def attempt() -> tuple[Any, str | None]:
            with self._open(url, "application/vnd.github+json", what) as response:
                if response.status_code == 404:
                    return None, None
                _expect_ok(response, what)
                body = bytearray()
                try:
                    for chunk in response.iter_bytes(CHUNK_SIZE):
                        body += chunk
                        if len(body) > max_bytes:
                            raise NexoError(
                                f"{what}: the answer is larger than {max_bytes} bytes",
                                kind="network",
                            )
                except httpx.TransportError as exc:
                    raise _RetryableError(f"{what}: {type(exc).__name__}: {exc}") from exc
                except httpx.DecodingError as exc:
                    raise NexoError(f"{what}: undecodable answer ({exc})", kind="network") from exc
                try:
                    document = json.loads(body)
                except (ValueError, RecursionError) as exc:
                    raise NexoError(f"{what}: the answer is not JSON", kind="network") from exc
                following = response.links.get("next", {}).get("url")
                if following is not None and _origin(following) != _origin(self.api_base):
                    following = None  # pages stay on the API's origin
                return document, following

        return self._with_retries(attempt)


_REFUSED_STATUSES = frozenset({403, 404, 410})


class _LazyTransport(httpx.BaseTransport):
    """Builds the TLS transport (loading the CA bundle costs a noticeable fraction of a
    second) only when an ``https`` URL is actually requested."""

    def __init__(self) -> None:
        self._transports: dict[str, httpx.HTTPTransport] = {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        scheme = request.url.scheme
        transport = self._transports.get(scheme)
        if transport is None:
            # Plain http never uses the context; https verifies as httpx does by default,
            # honouring SSL_CERT_FILE / SSL_CERT_DIR.
            transport = httpx.HTTPTransport(verify=scheme == "https", trust_env=True)
            self._transports[scheme] = transport
        return transport.handle_request(request)

    def close(self) -> None:
        for transport in self._transports.values():
            transport.close()


class _MemorySink:
    def __init__(self) -> None:
        self.buffer = bytearray()

    def reset(self) -> None:
        self.buffer.clear()

    def set_total(self, total: int | None) -> None:
        del total

    def write(self, chunk: bytes) -> None:
        self.buffer += chunk


def _too_large(name: str, max_bytes: int) -> NexoError:
    return NexoError(
        f"{name} is larger than the download limit of {max_bytes} bytes "
        "(raise it with --max-download-size)",
        kind="archive_unsafe",
    )


def _expect_ok(response: httpx.Response, what: str) -> None:
    if response.status_code == 200:
        return
    if response.status_code == 401:
        raise NexoError(
            f"{what}: GitHub rejected the token (HTTP 401); check NEXO_GITHUB_TOKEN / "
            "GITHUB_TOKEN / GH_TOKEN",
            kind="network",
        )
    raise NexoError(
        f"{what}: HTTP {response.status_code}",
        kind="network",
        details={"http_status": response.status_code},
    )


_TRAILING_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)(?:[-+][0-9A-Za-z.+-]*)?$")
MAX_NEAREST_TAGS = 5


def _version_numbers(tag: str) -> tuple[int, int, int] | None:
    match = _TRAILING_VERSION.search(tag)
    if match is None:
        return None
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def nearest_tags(wanted: str, tags: list[str], *, limit: int = MAX_NEAREST_TAGS) -> list[str]:
    """The ``limit`` tags closest to ``wanted``: by version distance where both carry a
    version (``v0.3.1``, ``nexo-plugin-google-v0.2.0``), then by spelling, newer first."""
    target = _version_numbers(wanted)

    def key(tag: str) -> tuple[tuple[int, ...], float, tuple[int, ...], str]:
        version = _version_numbers(tag)
        distance: tuple[int, ...] = (1 << 30,)
        if target is not None and version is not None:
            distance = tuple(abs(a - b) for a, b in zip(target, version, strict=True))
        spelling = difflib.SequenceMatcher(None, wanted, tag).ratio()
        newer_first = tuple(-part for part in version or (0, 0, 0))
        return distance, -spelling, newer_first, tag

    return sorted(set(tags), key=key)[:limit]


def _parse_release(document: Any, what: str) -> Release:
    if not isinstance(document, dict) or not isinstance(document.get("tag_name"), str):
        raise NexoError(f"{what}: the API answer is not a release", kind="network")
    listed = document.get("assets")
    if listed is None:
        listed = []
    if not isinstance(listed, list):
        raise NexoError(f"{what}: the API answer's `assets` is not a list", kind="network")
    assets: list[ReleaseAsset] = []
    for item in listed:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        size = item.get("size")
        digest = item.get("digest")
        assets.append(
            ReleaseAsset(
                name=item["name"],
                url=str(item.get("url") or ""),
                browser_download_url=str(item.get("browser_download_url") or ""),
                size=size if isinstance(size, int) else 0,
                digest=digest if isinstance(digest, str) else None,
            )
        )
    return Release(
        tag=document["tag_name"], assets=tuple(assets), html_url=str(document.get("html_url", ""))
    )
