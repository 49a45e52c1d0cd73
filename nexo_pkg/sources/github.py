"""A small synchronous GitHub Releases client on the one HTTP client of :mod:`nexo_pkg.net.client`.

It resolves releases, downloads assets through the API asset URL and turns rate limiting into
a clear message. Connections, the total deadline of every request, retries (jittered
exponential backoff, ``Retry-After``, never a name that does not resolve), redirects (checked
on every hop, never from https to http) and the caps on JSON answers are the net client's;
the bearer token is handed to it as the API origin's own credentials, so it only ever goes to
that origin, and under an https API nothing is fetched over plain http.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import hashlib
import io
import json
import logging
import os
import re
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit, urlunsplit

from nexo_pkg.core.errors import NexoError, UsageError
from nexo_pkg.core.programs import find_program, run_capped
from nexo_pkg.core.terminal import shown
from nexo_pkg.net.api import (
    DEFAULT_READ_TIMEOUT_SECONDS,
    DEFAULT_RETRIES,
    DOCUMENT_ACCEPT_ENCODING,
    HEADER_SECONDS,
    MAX_DOCUMENT_BYTES,
    Deadline,
    HttpClient,
    Retryable,
    checked_url,
    declared_length,
    parse_json,
    parse_retry_after,
    same_origin,
)
from nexo_pkg.sources.cache import (
    AnswerCache,
    BlobCache,
    BlobSink,
    StoredAnswer,
    key_digest,
    over_download_limit,
    over_size_cap,
)
from nexo_pkg.sources.checksum import parse_digest
from nexo_pkg.sources.spec import timestamp_or_none

if TYPE_CHECKING:
    import httpx

DEFAULT_API_BASE = "https://api.github.com"
API_BASE_ENV = "NEXO_GITHUB_API_BASE"
# Set by GitHub Actions for every job; GH_HOST, set on purpose, comes before it.
ACTIONS_API_BASE_ENV = "GITHUB_API_URL"
GH_HOST_ENV = "GH_HOST"
NEXO_TOKEN_ENV = "NEXO_GITHUB_TOKEN"  # noqa: S105 (the name of a variable, not a secret)
# The tokens for the chosen API base (SPEC: NEXO_GITHUB_TOKEN, then these two) ...
GITHUB_TOKEN_ENV = ("GITHUB_TOKEN", "GH_TOKEN")
# ... with gh's GitHub Enterprise Server tokens before them on any other API host.
ENTERPRISE_TOKEN_ENV = ("GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN")
API_VERSION = "2022-11-28"
GH_AUTH_TIMEOUT_SECONDS = 5.0
# What `gh auth token` may print: a token is at most a few hundred bytes; past this (as a
# docker credential helper's answer) it is refused unread.
MAX_GH_TOKEN_OUTPUT_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ReleaseAsset:
    """One file attached to a release, as the API describes it."""

    name: str
    url: str
    browser_download_url: str
    size: int
    digest: str | None = None
    # The API's id of the asset and when it last changed: with the URLs and the size, what
    # names these bytes (GitHub never replaces an asset's bytes in place: a new upload is a
    # new asset). ``None`` where the answer does not say.
    asset_id: str | None = None
    updated_at: str | None = None

    def identity(self) -> str | None:
        """The key of these bytes (URLs, id, size, last change), or ``None`` when the
        answer gave no id or no time of change."""
        if self.asset_id is None or self.updated_at is None:
            return None
        # As JSON: no field can run into the next, whatever its text.
        fields = [self.url, self.browser_download_url, self.asset_id, self.size, self.updated_at]
        return json.dumps(["asset", *fields])


@dataclass(frozen=True)
class Release:
    """A resolved release: its tag and assets."""

    tag: str
    assets: tuple[ReleaseAsset, ...]
    # When GitHub published it (RFC 3339), if the API said so in that shape.
    published_at: str | None = None

    def asset(self, name: str) -> ReleaseAsset | None:
        return next((asset for asset in self.assets if asset.name == name), None)


_GH_HOST = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(?::[0-9]{1,5})?$")
_TOKEN_TEXT = re.compile(r"^[\x21-\x7e]{1,1024}$")


def resolve_api_base(flag: str | None = None) -> str:
    """``--github-api-url`` > ``NEXO_GITHUB_API_BASE`` > ``GH_HOST`` > ``GITHUB_API_URL`` >
    api.github.com.

    ``GH_HOST`` names a host as the gh CLI does: ``github.com`` is api.github.com, a
    ``*.ghe.com`` tenant is ``api.<tenant>``, any other host is GitHub Enterprise Server at
    ``https://<host>/api/v3``. Raises :class:`UsageError` when the chosen value is not an http(s)
    URL (or, for ``GH_HOST``, not a host name).
    """
    value = flag or os.environ.get(API_BASE_ENV) or None
    source = "--github-api-url" if flag else API_BASE_ENV
    if value is None and os.environ.get(GH_HOST_ENV, "").strip():
        value = api_base_for_host(os.environ[GH_HOST_ENV].strip())
        source = GH_HOST_ENV
    if value is None:
        value, source = os.environ.get(ACTIONS_API_BASE_ENV) or None, ACTIONS_API_BASE_ENV
    base = (value or DEFAULT_API_BASE).rstrip("/")
    try:
        parts = urlsplit(base)
        valid_port = parts.port is None or parts.port > 0
    except ValueError:  # an unclosed IPv6 bracket, a port out of range
        parts, valid_port = urlsplit(""), False
    # A query, a fragment, or blanks and control characters (which urlsplit drops from the
    # ends) would be glued to every request path: the base is no base at all.
    extra = (
        parts.query
        or parts.fragment
        or any(ord(char) <= 0x20 or ord(char) == 0x7F for char in base)
    )
    if parts.scheme not in {"http", "https"} or not parts.netloc or not valid_port or extra:
        fix = "" if source.startswith("--") else f"; fix it, or unset {source}"
        raise UsageError(
            f"GitHub API URL {shown(base)} ({source}) is not an http(s) URL such as "
            f"https://api.github.com or https://HOST/api/v3{fix}"
        )
    return base


def api_base_for_host(host: str) -> str:
    """The REST API base of a GitHub host as ``GH_HOST`` names it; raises :class:`UsageError`."""
    port = host.partition(":")[2]
    if not _GH_HOST.fullmatch(host) or ".." in host or (port and not 0 < int(port) <= 65535):
        raise UsageError(
            f"{GH_HOST_ENV}={shown(host)} is not a host name such as github.com or ghe.example.com"
        )
    host = host.lower()
    if host == "github.com":
        return DEFAULT_API_BASE
    if host.endswith(".ghe.com"):
        return f"https://api.{host}"
    return f"https://{host}/api/v3"


def is_github_cloud(api_base: str) -> bool:
    """Whether ``api_base`` is github.com's API or a ``*.ghe.com`` tenant's (gh's rule for which
    tokens apply)."""
    host = (urlsplit(api_base).hostname or "").lower()
    return host == "api.github.com" or (host.startswith("api.") and host.endswith(".ghe.com"))


def gh_host_of(api_base: str) -> str:
    """The host gh knows the API base by: github.com, ``<tenant>.ghe.com``, or its host[:port]."""
    if is_github_cloud(api_base):
        return (urlsplit(api_base).hostname or "").lower().removeprefix("api.")
    return urlsplit(api_base).netloc.rpartition("@")[2].lower()


def token_variables(api_base: str) -> tuple[str, ...]:
    """The variables read for ``api_base``, in order of precedence."""
    if is_github_cloud(api_base):
        return (NEXO_TOKEN_ENV, *GITHUB_TOKEN_ENV)
    return (NEXO_TOKEN_ENV, *ENTERPRISE_TOKEN_ENV, *GITHUB_TOKEN_ENV)


def resolve_token(api_base: str) -> str | None:
    """The token for ``api_base``, as the gh CLI would choose it.

    ``NEXO_GITHUB_TOKEN`` first; on a host other than github.com and ``*.ghe.com`` (GitHub
    Enterprise Server), gh's ``GH_ENTERPRISE_TOKEN``, ``GITHUB_ENTERPRISE_TOKEN`` next; then
    ``GITHUB_TOKEN``, ``GH_TOKEN``, the tokens of whichever API base was chosen (a GitHub Actions
    job sets ``GITHUB_TOKEN`` for its own ``GITHUB_API_URL``); then, for an https API only, what
    ``gh auth token --hostname HOST`` prints when gh is installed and logged in to that host.
    Whichever is chosen goes to the API's origin only.
    """
    for name in token_variables(api_base):
        value = os.environ.get(name, "").strip()
        if value and not _TOKEN.match(value):
            # Never echoed: it is a credential, however malformed.
            raise UsageError(
                f"{name} holds characters no GitHub token has (a token is printable ASCII "
                "without spaces); check the variable"
            )
        if value:
            return value
    if urlsplit(api_base).scheme != "https":
        return None
    return _gh_auth_token(gh_host_of(api_base))


def _gh_auth_token(host: str) -> str | None:
    """gh's stored token for ``host``, or ``None`` (gh missing, not logged in, slow, odd).
    An answer past :data:`MAX_GH_TOKEN_OUTPUT_BYTES` is a usage error, as a malformed token
    variable is: gh is killed and nothing of what it printed is used or echoed."""
    gh = find_program("gh")
    if gh is None:
        return None
    try:
        returncode, stdout = run_capped(
            [gh, "auth", "token", "--hostname", host],
            limit=MAX_GH_TOKEN_OUTPUT_BYTES,
            timeout=GH_AUTH_TIMEOUT_SECONDS,
            env={**os.environ, "GH_PROMPT_DISABLED": "1", "NO_COLOR": "1"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if stdout is None:
        raise UsageError(
            f"`gh auth token` ({gh}) printed more than "
            f"{MAX_GH_TOKEN_OUTPUT_BYTES // (1024 * 1024)} MiB, more than a token ever is; "
            "refusing it (set NEXO_GITHUB_TOKEN, or check that program)"
        )
    try:
        token = stdout.decode("utf-8").strip()
    except UnicodeError:
        return None
    if returncode != 0 or not _TOKEN_TEXT.fullmatch(token):
        return None
    return token


def _header_seconds(response: httpx.Response, name: str) -> int | None:
    match = HEADER_SECONDS.match(response.headers.get(name, ""))
    return int(match.group(1)) if match else None


def _format_reset(response: httpx.Response) -> tuple[str, dict[str, Any]]:
    """When the rate limit resets, from ``Retry-After`` or ``X-RateLimit-Reset``; a value that
    is not a plausible number of seconds (too long, not ASCII digits) is "later"."""
    details: dict[str, Any] = {"status": response.status_code}
    retry_after = _header_seconds(response, "retry-after")
    reset = _header_seconds(response, "x-ratelimit-reset")
    moment: dt.datetime | None = None
    try:
        if retry_after is not None:
            details["retry_after"] = retry_after
            moment = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=retry_after)
        elif reset is not None:
            moment = dt.datetime.fromtimestamp(reset, dt.UTC)
    except (OverflowError, ValueError, OSError):
        moment = None
    if moment is None:
        return "later", details
    stamp = moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")
    details["reset_at"] = stamp
    return f"at {stamp}", details


_LOG = logging.getLogger(__name__)

# The ``type`` of an entry of a GraphQL answer's ``errors`` that says the rate limit is spent
# (answered with HTTP 200: github/docs#22607; ``RATE_LIMIT`` in some answers, githubkit#271).
_GRAPHQL_LIMITED = frozenset({"RATE_LIMITED", "RATE_LIMIT"})


def _graphql_rate_limited(document: Any) -> bool:
    """Whether a GraphQL answer's ``errors`` say the rate limit is spent."""
    errors = document.get("errors") if isinstance(document, dict) else None
    return isinstance(errors, list) and any(
        isinstance(error, dict) and error.get("type") in _GRAPHQL_LIMITED for error in errors
    )


def _is_rate_limited(response: httpx.Response) -> bool:
    headers = response.headers
    limited = headers.get("x-ratelimit-remaining") == "0" or "retry-after" in headers
    return response.status_code == 429 or (response.status_code == 403 and limited)


class GitHubClient(contextlib.AbstractContextManager["GitHubClient"]):
    """GitHub REST client for releases; use as a context manager to close the connection pool.
    The other options configure its :class:`~nexo_pkg.net.client.HttpClient`; ``blobs`` is the
    cache small assets go through (:meth:`fetch_bytes`); with ``answers`` the API documents it
    reads are kept beside it and asked for again with their ``ETag``
    (:class:`~nexo_pkg.sources.cache.AnswerCache`)."""

    def __init__(
        self,
        api_base: str,
        token: str | None = None,
        *,
        retries: int = DEFAULT_RETRIES,
        retry_base_delay: float | None = None,
        timeout: float | None = None,
        read_timeout: float = DEFAULT_READ_TIMEOUT_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
        blobs: BlobCache | None = None,
        overall: Deadline | None = None,
        notice: Callable[[str], None] | None = None,
        answers: bool = False,
    ) -> None:
        self.api_base = api_base.rstrip("/")
        self.token = token
        self.blobs = blobs
        self._net = HttpClient(
            timeout=timeout,
            read_timeout=read_timeout,
            retries=retries,
            retry_base_delay=retry_base_delay,
            overall=overall,
            https_only=(
                f"the https API {self.api_base}"
                if urlsplit(self.api_base).scheme == "https"
                else None
            ),
            hint="the GitHub API URL",
            notice=notice,
            sleep=sleep,
        )
        self._net.host = urlsplit(self.api_base).netloc
        # When GraphQL answered that its rate limit is spent: when it resets ("at …" or
        # "later"); nothing more is asked of it (REST's limit is separate).
        self.graphql_spent: str | None = None
        self._answers = AnswerCache(blobs) if blobs is not None and answers else None

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._net.close()

    def stop(self) -> None:
        """Cut this client's requests short for good (see ``HttpClient.stop``)."""
        self._net.stop()

    # -- requests -------------------------------------------------------------------------

    @contextmanager
    def _open(
        self,
        url: str,
        accept: str,
        what: str,
        extra: dict[str, str] | None = None,
        *,
        content: bytes | None = None,
    ) -> Iterator[httpx.Response]:
        """GET ``url`` through the net client (redirects checked on every hop, the token
        only for the API's own origin); yield a streamed answer.

        Raises :class:`Retryable` for 5xx and transport failures, :class:`NexoError` for the
        rest (``rate_limited``, ``network``); 404 is left to the caller via ``status_code``.
        """
        credentials = {"Authorization": f"Bearer {self.token}"} if self.token else None
        # Hash and size checks apply to the bytes as published, never a re-encoding.
        binary = accept == "application/octet-stream"
        encoding = "identity" if binary else DOCUMENT_ACCEPT_ENCODING
        with self._net.open(
            "GET" if content is None else "POST",
            url,
            what,
            content=content,
            headers={
                "Accept": accept,
                "X-GitHub-Api-Version": API_VERSION,
                "Accept-Encoding": encoding,
                **(extra or {}),
            },
            credentials=credentials,
            credentials_origin=self.api_base,
        ) as response:
            if response.status_code >= 500:
                raise Retryable(
                    f"{what}: HTTP {response.status_code}",
                    parse_retry_after(response.headers.get("retry-after")),
                )
            if _is_rate_limited(response):
                when, details = _format_reset(response)
                raise NexoError(
                    self._limit_message(what, when), kind="rate_limited", details=details
                )
            yield response

    def _limit_message(self, what: str, when: str) -> str:
        """What a spent rate limit is said as: without a token, which variables would raise
        it; with one, that this token's limit is spent (another token of the same account
        shares it) and where the token came from."""
        if self.token is None:
            return (
                f"GitHub API rate limit exceeded ({what}); it resets {when}. Set "
                f"{self._token_hint()} to a token for a higher limit"
            )
        return (
            f"GitHub API rate limit exceeded ({what}): the limit of the token from "
            f"{self._token_source()} is spent; it resets {when}"
        )

    def _token_source(self) -> str:
        """The variable the token was read from, as :func:`resolve_token` chooses it, else
        gh's login."""
        for name in token_variables(self.api_base):
            if os.environ.get(name, "").strip() == self.token:
                return name
        return "`gh auth token`"

    def _token_hint(self) -> str:
        names = token_variables(self.api_base)
        return f"{', '.join(names[:-1])} or {names[-1]} (or log in with `gh auth login`)"

    # -- releases -------------------------------------------------------------------------

    def _api_json(
        self, url: str, what: str, not_found: Callable[[], Any]
    ) -> tuple[Any, str | None]:
        """GET an API document (with retries): ``(document, next page URL)`` (``Link:
        rel="next"``, kept only on the API's origin); a 404 answers ``(not_found(), None)``.

        The document is at most :data:`MAX_DOCUMENT_BYTES` on the wire and again after
        gzip/deflate decoding, parsed without recursing past its limit: ``network`` for an
        answer over the cap, in another content encoding, or that is not JSON; a body cut
        short is retried.
        """

        # The answer kept from an earlier run is sent for again with If-None-Match, and
        # used only when the server says, with a 304, that it has not changed (GitHub does
        # not count such an answer against the rate limit). Keyed by URL and token.
        key = f"{url}\n{key_digest(self.token or '')}"
        stored = self._answers.get(key, MAX_DOCUMENT_BYTES) if self._answers else None
        condition = {"If-None-Match": stored.etag} if stored is not None else None

        def attempt() -> tuple[Any, str | None]:
            with self._open(url, "application/vnd.github+json", what, condition) as response:
                if response.status_code in {304, 404}:
                    # Read to its end (a 304 has no body), so the connection is kept alive
                    # for the next request instead of being closed unread.
                    self._net.read_document(response, what, limit=MAX_DOCUMENT_BYTES)
                if response.status_code == 404:
                    return not_found(), None
                if response.status_code == 304 and stored is not None:
                    return parse_json(stored.body, what), stored.following
                if 400 <= response.status_code < 500 and response.status_code != 401:
                    _expect_ok(response, what, said=self._said(response, what))
                _expect_ok(response, what, self._token_hint())
                body = self._net.read_document(response, what, limit=MAX_DOCUMENT_BYTES)
                following = response.links.get("next", {}).get("url")
                if following is not None and not same_origin(following, self.api_base):
                    following = None
                document = parse_json(body, what)
                etag = response.headers.get("etag")
                if self._answers is not None and etag:
                    self._answers.put(key, StoredAnswer(etag, following, body))
                return document, following

        return self._net.with_retries(attempt)

    def _said(self, response: httpx.Response, what: str) -> str | None:
        """The ``message`` of a refusal's JSON body (``Validation Failed``, ``Resource not
        accessible by integration``), at most 200 characters; ``None`` when it has none."""
        try:
            body = self._net.read_document(response, what, limit=_REFUSAL_BYTES)
            message = parse_json(body, what).get("message")
        except (NexoError, AttributeError):
            return None
        return message[:200] if isinstance(message, str) and message.strip() else None

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
                f"{what} not found (is the repository public, or is {self._token_hint()} set?)",
                kind="release_not_found",
                details=details,
            )

        document, _ = self._api_json(self.api_base + path, what, not_found)
        release = _parse_release(document, what)
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

        ``1.2.3`` that does not exist is retried as ``v1.2.3``; ``latest``, when no release is
        tagged so, is the latest release (as the reference installer reads ``@latest``). When
        neither exists, the ``release_not_found`` error lists the repository's release tags
        nearest to the one asked for (or says the repository itself was not found).
        """
        try:
            return self.get_release(owner, repo, tag)
        except NexoError as error:
            if error.kind != "release_not_found" or "answered_tag" in error.details:
                raise
            if tag is None:
                raise self._no_latest_release(owner, repo, error) from None
        if tag == LATEST_TAG:
            try:
                return self.get_release(owner, repo, None)
            except NexoError as error:
                if error.kind != "release_not_found" or "answered_tag" in error.details:
                    raise
                raise self._no_latest_release(owner, repo, error) from None
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
                f"repository {owner}/{repo} not found (is it public, or is "
                f"{self._token_hint()} set?)",
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

    def _no_latest_release(self, owner: str, repo: str, error: NexoError) -> NexoError:
        """Why ``releases/latest`` of ``owner/repo`` answered 404: the repository is not
        found (``error`` as it was), it has no releases, or all it has are prereleases or
        drafts, which GitHub never calls the latest (its newest tags are listed)."""
        tags = self.release_tags(owner, repo)
        if tags is None:
            return error
        details: dict[str, Any] = {"owner": owner, "repo": repo, "tag": None}
        if not tags:
            return NexoError(
                f"{owner}/{repo} has no releases", kind="release_not_found", details=details
            )
        newest = list(dict.fromkeys(tags))[:MAX_NEAREST_TAGS]
        details["nearest_tags"] = newest
        return NexoError(
            f"{owner}/{repo} has no latest release (GitHub never calls a prerelease or a draft "
            f"the latest); its newest tags: {', '.join(newest)}; name one as "
            f"{owner}/{repo}@TAG",
            kind="release_not_found",
            details=details,
        )

    def release_tags(self, owner: str, repo: str) -> list[str] | None:
        """Tags of the newest 100 releases of ``owner/repo``; ``None`` when the repository
        is not found. Raises ``rate_limited`` or ``network``."""
        path = f"/repos/{quote(owner, safe='')}/{quote(repo, safe='')}/releases?per_page=100"
        what = f"releases of {owner}/{repo}"

        document, _ = self._api_json(self.api_base + path, what, lambda: None)
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
        self,
        release: Release,
        names: tuple[str, ...],
        *,
        max_bytes: int,
        browser_first: bool = False,
    ) -> tuple[str, str] | None:
        """The first of ``names`` the release carries, as ``(name, text)``; ``None`` if none.

        Read as the daemon's installer reads it (``std::str::from_utf8``, then the TOML
        parser, which drops a leading byte-order mark: toml_edit's ``parser/document.rs`` at
        toml-v0.8.23): bytes that are not UTF-8 are ``manifest_invalid``, a BOM is removed.
        Raises ``archive_unsafe`` when it is larger than ``max_bytes`` and ``network`` when it
        cannot be fetched. ``browser_first``: as :meth:`download` says. Kept among the answers
        when the client keeps them (:meth:`_kept_asset`).
        """
        for name in names:
            asset = release.asset(name)
            if asset is not None:
                too_large = over_size_cap(
                    name, max_bytes, holds="a manifest", kind="archive_unsafe"
                )
                data = self._kept_asset(
                    asset, max_bytes=max_bytes, browser_first=browser_first, too_large=too_large
                )
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise NexoError(
                        f"release {release.tag}: its asset {name} is not a manifest the daemon "
                        f"can read: it is not valid UTF-8 (byte {exc.start})",
                        kind="manifest_invalid",
                        details={"tag": release.tag, "asset": name},
                    ) from None
                return name, text.removeprefix("\ufeff")
        return None

    def _kept_asset(
        self, asset: ReleaseAsset, *, max_bytes: int, browser_first: bool, too_large: NexoError
    ) -> bytes:
        """:meth:`fetch_bytes`, and with the answers kept (``answers``) an asset the release
        lists no digest for (so the blob cache cannot hold it) is kept among them under what
        names its bytes (:meth:`ReleaseAsset.identity`: URLs, id, size, last change) and the
        SHA-256 of the bytes; it is used again, without a request, only when the release
        still lists it so and the bytes kept still hash to that and have the listed size. A
        changed asset (uploaded again: a new id, another size or time) is fetched again."""
        identity = asset.identity()
        if self._answers is None or parse_digest(asset.digest) is not None or identity is None:
            return self.fetch_bytes(
                asset, max_bytes=max_bytes, browser_first=browser_first, too_large=too_large
            )
        stored = self._answers.get(identity, max_bytes)
        if (
            stored is not None
            and len(stored.body) == asset.size
            and stored.etag == _sha256_tag(stored.body)
        ):
            return stored.body
        data = self.fetch_bytes(
            asset, max_bytes=max_bytes, browser_first=browser_first, too_large=too_large
        )
        self._answers.put(identity, StoredAnswer(_sha256_tag(data), None, data))
        return data

    def download(
        self,
        asset: ReleaseAsset,
        sink: BlobSink,
        *,
        max_bytes: int,
        browser_first: bool = False,
        too_large: NexoError | None = None,
    ) -> None:
        """Stream ``asset`` into ``sink`` through its API URL (``application/octet-stream``),
        or its browser download URL when the API URL answers 403, 404 or 410.
        ``browser_first`` tries the browser download URL first (and the API URL on those
        answers): github.com serves it outside the API's rate limit, which a lookup without
        a token spares so (the bytes are checked alike: the digest, the size limit).

        Retries restart the sink. Raises ``too_large`` (default: ``archive_unsafe``, naming
        --max-download-size) when the asset is larger than ``max_bytes``, ``network`` when it
        cannot be fetched completely or when a URL the release names may not be fetched (plain
        http under an https API, another scheme).
        """
        what = f"download of {asset.name}"
        ordered = (asset.url, asset.browser_download_url)
        urls = [url for url in (ordered[::-1] if browser_first else ordered) if url]
        if not urls:
            raise NexoError(f"{what}: the release lists no URL for it", kind="network")
        # Every URL the answer gives is checked before the first byte is asked for.
        for url in urls:
            checked_url(url, what, https_only=self._net.https_only)
        if too_large is None:
            too_large = over_download_limit(asset.name, max_bytes)
        for index, url in enumerate(urls):
            try:
                self._download_from(
                    url,
                    sink,
                    what,
                    max_bytes=max_bytes,
                    listed_size=asset.size,
                    too_large=too_large,
                )
                return
            except NexoError as error:
                # Some mirrors and proxies in front of GitHub Enterprise only serve the
                # browser download URL: fall back to it when the API asset URL is refused
                # outright. Network faults were already retried and are not retried again.
                refused = error.details.get("http_status") in _REFUSED_STATUSES
                if not refused or index == len(urls) - 1 or urls[1] == urls[0]:
                    raise

    def _download_from(
        self,
        url: str,
        sink: BlobSink,
        what: str,
        *,
        max_bytes: int,
        listed_size: int,
        too_large: NexoError,
    ) -> None:
        """Stream ``url`` into ``sink`` (with retries, each restarting it); ``too_large``
        past ``max_bytes``. ``listed_size`` (the release's ``assets[].size``; 0: unknown) is
        what must arrive: fewer or more bytes are a failed download (``network``, after the
        retries) before any checksum is compared, whatever the ``Content-Length`` said."""

        def attempt() -> None:
            sink.reset()
            with self._open(url, "application/octet-stream", what) as response:
                _expect_ok(response, what, self._token_hint())
                declared = declared_length(response)
                if declared is not None and declared > max_bytes:
                    raise too_large
                sink.set_total(declared or listed_size or None)
                received = 0
                for chunk in self._net.raw_chunks(response, what):
                    received += len(chunk)
                    if received > max_bytes:
                        raise too_large
                    if listed_size and received > listed_size:
                        raise Retryable(_not_listed_size(what, received, listed_size))
                    sink.write(chunk)
                if declared is not None and received != declared:
                    raise Retryable(f"{what}: got {received} of {declared} bytes")
                if listed_size and received != listed_size:
                    raise Retryable(_not_listed_size(what, received, listed_size))

        self._net.with_retries(attempt)

    def fetch_bytes(
        self,
        asset: ReleaseAsset,
        *,
        max_bytes: int,
        browser_first: bool = False,
        too_large: NexoError | None = None,
    ) -> bytes:
        """Download a small asset (manifest, checksum, signature) into memory; through the
        shared blob cache ``blobs`` when there is one and the API gives the asset's digest
        (a cached blob is re-hashed and used without a request; ``checksum_mismatch`` for
        bytes that do not hash to the digest). ``browser_first`` and ``too_large``: as
        :meth:`download`."""
        expected = parse_digest(asset.digest) if self.blobs is not None else None
        if self.blobs is None or expected is None:
            buffer = io.BytesIO()
            self.download(
                asset,
                BlobSink(buffer),
                max_bytes=max_bytes,
                browser_first=browser_first,
                too_large=too_large,
            )
            return buffer.getvalue()

        def fetch(sink: BlobSink) -> None:
            self.download(
                asset, sink, max_bytes=max_bytes, browser_first=browser_first, too_large=too_large
            )

        with self.blobs.open_blob(expected, fetch) as blob:
            try:
                return blob.read_bytes()
            except OSError as exc:
                raise NexoError(f"cannot read {blob}: {exc.strerror or exc}", kind="io") from exc

    def fetch_url(self, url: str, *, what: str, max_bytes: int) -> bytes:
        """The bytes at ``url`` (a URL an API answer named, such as an attestation's
        ``bundle_url``) under the rules of an asset download: http(s) only and https only
        under an https API, redirects checked the same way, the token only for the API's own
        origin, at most ``max_bytes`` (``signature_invalid`` past it), retries within one
        deadline. Raises ``network`` when it cannot be fetched."""
        checked_url(url, what, https_only=self._net.https_only)
        buffer = io.BytesIO()
        too_large = NexoError(
            f"{what}: larger than {max_bytes} bytes; refusing to read it", kind="signature_invalid"
        )
        self._download_from(
            url, BlobSink(buffer), what, max_bytes=max_bytes, listed_size=0, too_large=too_large
        )
        return buffer.getvalue()

    def latest_releases(
        self, repositories: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], Release]:
        """The latest release of each ``(owner, repo)``, asked in one GraphQL request (the
        API's ``repository.latestRelease``; a token is required, so callers ask only with
        one). A repository the answer gives no release for is left out, for its caller to
        ask the REST API as before. Raises ``rate_limited`` and ``network`` as the REST
        requests do, and ``network`` for an answer that is not GraphQL's. An answer whose
        ``errors`` say the rate limit is spent (HTTP 200, ``RATE_LIMITED``) is said on the debug
        log and recorded in :attr:`graphql_spent`; what it holds is kept (usually nothing)."""
        fields = (
            "latestRelease { tagName publishedAt "
            "releaseAssets(first: 100) { nodes { id name size downloadUrl digest updatedAt } } }"
        )
        declared: list[str] = []
        selections: list[str] = []
        variables: dict[str, str] = {}
        for index, (owner, repo) in enumerate(repositories):
            declared.append(f"$o{index}: String!, $n{index}: String!")
            selections.append(
                f"r{index}: repository(owner: $o{index}, name: $n{index}) {{ {fields} }}"
            )
            variables[f"o{index}"], variables[f"n{index}"] = owner, repo
        query = f"query({', '.join(declared)}) {{ {' '.join(selections)} }}"
        body = json.dumps({"query": query, "variables": variables}).encode()
        what = f"latest releases of {len(repositories)} repositories (GraphQL)"

        def attempt() -> tuple[Any, str]:
            with self._open(
                graphql_url(self.api_base), "application/json", what,
                {"Content-Type": "application/json"}, content=body,
            ) as response:  # fmt: skip
                _expect_ok(response, what, self._token_hint())
                raw = self._net.read_document(response, what, limit=MAX_DOCUMENT_BYTES)
                return parse_json(raw, what), _format_reset(response)[0]

        document, when = self._net.with_retries(attempt)
        limited = _graphql_rate_limited(document)
        if limited:
            # GraphQL's limit is its own: the REST API may still answer each repository.
            self.graphql_spent = when
            _LOG.debug(
                "GitHub's GraphQL API says its rate limit is spent (%s; it resets %s); "
                "asking the REST API for each repository instead",
                what,
                when,
            )
        data = document.get("data") if isinstance(document, dict) else None
        if not isinstance(data, dict):
            if limited:
                return {}
            raise NexoError(f"{what}: the answer holds no data", kind="network")
        found: dict[tuple[str, str], Release] = {}
        for index, key in enumerate(repositories):
            node = data.get(f"r{index}")
            latest = node.get("latestRelease") if isinstance(node, dict) else None
            if isinstance(latest, dict) and isinstance(latest.get("tagName"), str):
                found[key] = _graphql_release(latest)
        return found

    def get_json(self, url: str, *, what: str) -> tuple[Any, str | None]:
        """GET the API document at ``url``: ``(document, next page URL)`` (``Link:
        rel="next"``, kept only on the API's origin), ``(None, None)`` on 404. Read as every
        API answer is (:meth:`_api_json`: capped, deadline, nesting)."""
        return self._api_json(url, what, lambda: None)


_REFUSED_STATUSES = frozenset({403, 404, 410})


def _sha256_tag(data: bytes) -> str:
    """``sha256:<hex>`` of ``data``: what a kept asset's bytes must hash to when read back."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


_TOKEN = re.compile(r"^[\x21-\x7e]+$")
# The tag the reference installer reads as "the latest release" (and keeps in its receipts).
LATEST_TAG = "latest"


# A refusal's body is read for its message only: GitHub's are a few hundred bytes.
_REFUSAL_BYTES = 64 * 1024


def _not_listed_size(what: str, received: int, listed_size: int) -> str:
    got = f"at least {received}" if received > listed_size else str(received)
    return f"{what}: got {got} bytes, but the release lists it as {listed_size} bytes"


def _expect_ok(
    response: httpx.Response, what: str, hint: str = "the token", *, said: str | None = None
) -> None:
    """Nothing for a 200; else the ``network`` failure, with what GitHub ``said``."""
    if response.status_code == 200:
        return
    if response.status_code == 401:
        raise NexoError(
            f"{what}: GitHub rejected the token (HTTP 401); check {hint}",
            kind="network",
        )
    raise NexoError(
        f"{what}: HTTP {response.status_code}" + (f": {said}" if said else ""),
        kind="network",
        details={"http_status": response.status_code},
    )


_TRAILING_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)(?:[-+][0-9A-Za-z.+-]*)?$")
MAX_NEAREST_TAGS = 5


def _version_numbers(tag: str) -> tuple[int, int, int] | None:
    match = _TRAILING_VERSION.search(tag)
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


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


def graphql_url(api_base: str) -> str:
    """The GraphQL endpoint beside a REST API base: ``/graphql`` under it, or
    ``/api/graphql`` for GitHub Enterprise Server's ``/api/v3``."""
    parts = urlsplit(api_base.rstrip("/"))
    path = parts.path
    path = path[: -len("/v3")] + "/graphql" if path.endswith("/api/v3") else path + "/graphql"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _graphql_release(latest: dict[str, Any]) -> Release:
    """A :class:`Release` from GraphQL's ``latestRelease``: its assets have only a browser
    download URL (no API asset URL), fetched under the same rules and digest checks."""
    listing = latest.get("releaseAssets")
    nodes = listing.get("nodes") if isinstance(listing, dict) else None
    return Release(
        tag=latest["tagName"],
        assets=_assets(
            nodes if isinstance(nodes, list) else [], None, "downloadUrl", updated="updatedAt"
        ),
        published_at=timestamp_or_none(latest.get("publishedAt")),
    )


def _assets(
    listed: list[Any], api_url: str | None, download_url: str, *, updated: str = "updated_at"
) -> tuple[ReleaseAsset, ...]:
    """The assets of a release answer: each item's ``name``, ``size``, ``digest`` and ``id``,
    its API URL under ``api_url`` (``None``: the answer has none), its browser download URL
    under ``download_url`` and its last change under ``updated``; an item without a name is
    passed over."""
    assets: list[ReleaseAsset] = []
    for item in listed:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        size, digest = item.get("size"), item.get("digest")
        asset_id, changed = item.get("id"), item.get(updated)
        assets.append(
            ReleaseAsset(
                name=item["name"],
                url=str(item.get(api_url) or "") if api_url else "",
                browser_download_url=str(item.get(download_url) or ""),
                # A size that is no count of bytes (negative, a boolean, not a number) is
                # no listing: the asset's size is then unknown (0), as when it is absent.
                size=size
                if isinstance(size, int) and not isinstance(size, bool) and size > 0
                else 0,
                digest=digest if isinstance(digest, str) else None,
                asset_id=str(asset_id)
                if isinstance(asset_id, str | int) and not isinstance(asset_id, bool)
                else None,
                updated_at=changed if isinstance(changed, str) else None,
            )
        )
    return tuple(assets)


def _parse_release(document: Any, what: str) -> Release:
    if not isinstance(document, dict) or not isinstance(document.get("tag_name"), str):
        raise NexoError(f"{what}: the API answer is not a release", kind="network")
    listed = document.get("assets")
    if listed is None:
        listed = []
    if not isinstance(listed, list):
        raise NexoError(f"{what}: the API answer's `assets` is not a list", kind="network")
    return Release(
        tag=document["tag_name"],
        assets=_assets(listed, "url", "browser_download_url"),
        published_at=timestamp_or_none(document.get("published_at")),
    )
