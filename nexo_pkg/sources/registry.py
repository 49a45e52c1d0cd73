"""A small client for the OCI distribution API (v2), on the one HTTP client of
:mod:`nexo_pkg.net.client`.

It does what a plugin fleet needs and nothing else: manifests by tag or digest (GET, HEAD,
PUT), blobs (HEAD, streamed GET checked against their digest, monolithic upload), tag lists,
and referrers (the OCI 1.1 API with the ``sha256-<hex>`` tag-schema fallback). Auth answers
the registry's ``WWW-Authenticate`` challenge: ``Basic`` with the configured credentials, or
``Bearer`` by asking the named token realm (anonymously or with the credentials) for a token
per scope. Every request is counted per kind, for reports and benchmarks.

HTTPS always, except ``plain_http`` for a loopback host (tests, a local mirror); under https
every URL and redirect hop is https too. Every request goes through
:class:`~nexo_pkg.net.client.HttpClient` (deadline, retries, redirects, caps: docs/network.md);
the registry's credentials and tokens go only to its own origin, a token service's only to its.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import re
import threading
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexo_pkg.core.errors import NexoError, UsageError
from nexo_pkg.net.api import (
    DOCUMENT_ACCEPT_ENCODING,
    HttpClient,
    Retryable,
    is_http_url,
    parse_json,
    parse_retry_after,
    shown_url,
)
from nexo_pkg.sources.cache import BlobSink, over_download_limit
from nexo_pkg.sources.oci_auth import Credentials
from nexo_pkg.sources.oci_reference import is_loopback_name

if TYPE_CHECKING:
    import httpx

INDEX_MEDIA_TYPE = "application/vnd.oci.image.index.v1+json"
MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"
MANIFEST_ACCEPT = ", ".join(
    (
        INDEX_MEDIA_TYPE,
        MANIFEST_MEDIA_TYPE,
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.docker.distribution.manifest.v2+json",
    )
)
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
# Tag lists of busy repositories run to megabytes; token answers and errors are small.
MAX_TAG_LIST_BYTES = 16 * 1024 * 1024
MAX_SMALL_ANSWER_BYTES = 1024 * 1024
MAX_ERROR_TEXT_BYTES = 64 * 1024
# Pages of one tag or referrers listing: far beyond any real repository, a stop for endless Links.
MAX_PAGES = 1000
_SHA256_REFERENCE = re.compile(r"sha256:[0-9a-f]{64}")
# RFC 7235/9110 challenges, as docker's and containerd's parsers read them: a scheme token,
# then `name=value` parameters (names case-insensitive, values a token or a quoted string with
# backslash escapes), challenges separated by commas, several headers joined by commas.
_TCHAR = r"[!#$%&'*+.^_`|~0-9A-Za-z-]"
_CHALLENGE_SCHEME = re.compile(rf"[\s,]*({_TCHAR}+)")
_CHALLENGE_PARAM = re.compile(rf'[\s,]*({_TCHAR}+)[ \t]*=[ \t]*("(?:[^"\\]|\\.)*"?|{_TCHAR}*)')
_TOKEN68 = re.compile(r"[ \t]*[A-Za-z0-9._~+/-]+=*[ \t]*(?=,|$)")
# A GET or HEAD that meets a dropped connection or one of these is tried again, up to RETRIES
# more times with backoff, within the request's one deadline; other methods are not.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
IDEMPOTENT = frozenset({"GET", "HEAD"})
RETRIES = 3
# 401s answered in one request (a basic round, a token, a renewed token) before giving up.
MAX_CHALLENGES = 2
# A bearer token as a header carries it: visible ASCII, no space (RFC 6750's b64token is
# narrower; registries' JWTs fit it).
_HEADER_TOKEN = re.compile(r"[\x21-\x7e]+")
# What docker and containerd send as the OAuth2 client of a refresh-token exchange.
OAUTH_CLIENT_ID = "nexo-pkg"
# Token services without the OAuth2 POST endpoint answer one of these; then GET is asked.
OAUTH_UNSUPPORTED = frozenset({400, 401, 404, 405})

_CHECK_CREDENTIALS = (
    "check them, or log in again (docker login, REGISTRY_AUTH_FILE or --registry-config)"
)


class HostFacts:
    """What the clients of one registry host learn about it during one command, shared by
    the clients of its threads: whether it has the referrers API (``None`` until its first
    answer; while that is unknown, one client at a time asks, so that a host without the
    API is asked once per command, however many threads)."""

    def __init__(self) -> None:
        self.referrers_api: bool | None = None
        self.probing = threading.Lock()


@dataclass(frozen=True)
class Manifest:
    """A manifest or index as the registry returned it, with its digest."""

    data: bytes
    media_type: str
    digest: str

    def json(self) -> dict[str, Any]:
        document = parse_json(
            self.data, f"the registry's manifest {self.digest}", kind="registry_invalid"
        )
        if not isinstance(document, dict):
            raise NexoError(
                f"the registry's manifest {self.digest} is not a JSON object",
                kind="registry_invalid",
            )
        return document


def sha256_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class _BodyCut(Exception):  # noqa: N818 - a signal between two methods, never raised out
    """A blob's body stopped arriving partway (``error`` says how)."""

    def __init__(self, error: NexoError) -> None:
        super().__init__(error.message)
        self.error = error


def _network(message: str) -> NexoError:
    return NexoError(message, kind="network")


def _basic(username: str, password: str) -> dict[str, str]:
    """The ``Authorization`` header of HTTP basic auth."""
    pair = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
    return {"Authorization": "Basic " + pair}


def parse_challenges(header: str) -> list[tuple[str, dict[str, str]]]:
    """The challenges of a ``WWW-Authenticate`` value: each scheme lowercased with its
    parameters (names lowercased, quoted values unescaped). Whatever does not parse ends the
    reading; never raises."""
    found: list[tuple[str, dict[str, str]]] = []
    position = 0
    while position < len(header):
        scheme = _CHALLENGE_SCHEME.match(header, position)
        if scheme is None:
            break
        position = scheme.end()
        params: dict[str, str] = {}
        found.append((scheme.group(1).lower(), params))
        token68 = _TOKEN68.match(header, position)
        if token68 is not None and "=" not in header[position : token68.end()].rstrip("= \t"):
            position = token68.end()
            continue
        while (param := _CHALLENGE_PARAM.match(header, position)) is not None:
            name, value = param.group(1).lower(), param.group(2)
            if value.startswith('"'):
                value = re.sub(r"\\(.)", r"\1", value[1:].removesuffix('"'))
            params.setdefault(name, value)
            position = param.end()
    return found


class RegistryClient(contextlib.AbstractContextManager["RegistryClient"]):
    """One registry host; use as a context manager. Raises :class:`NexoError` on failure.

    Kinds: ``network`` (connection, the request's deadline, unexpected status),
    ``registry_auth`` (401/403), ``release_not_found`` (a manifest that does not exist),
    ``checksum_mismatch`` (bytes that do not hash to the digest asked for),
    ``registry_invalid`` (a malformed, oversized or too deeply nested answer). ``timeout`` is
    the total time one request may take, its body and any authentication round included.
    ``notice`` hears a line when an answer is slow (as the GitHub client's does).
    """

    def __init__(
        self,
        host: str,
        *,
        credentials: Credentials | None = None,
        plain_http: bool = False,
        loopback: bool = False,
        timeout: float | None = None,
        retry_base_delay: float | None = None,
        facts: HostFacts | None = None,
        notice: Callable[[str], None] | None = None,
    ) -> None:
        if plain_http and not loopback:
            raise UsageError(
                f"--plain-http is only allowed for a loopback registry, not {host}",
            )
        self.host = host
        self.base = f"{'http' if plain_http else 'https'}://{host}/v2/"
        self.credentials = credentials
        self.facts = facts or HostFacts()
        self.requests: Counter[str] = Counter()
        self._tokens: dict[str, str] = {}
        self._manifests: dict[tuple[str, str], Manifest] = {}
        self._basic = False
        self._net = HttpClient(
            timeout=timeout,
            retries=RETRIES,
            retry_base_delay=retry_base_delay,
            https_only=None if plain_http else f"the https registry {host}",
            # --plain-http is for this machine: a redirect, page link or upload location
            # naming plain http on another host is refused as the token realm is.
            plain_only_to=is_loopback_name if plain_http else None,
            hint=f"the registry host {host}",
            notice=notice,
        )

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._net.close()

    def stop(self) -> None:
        """Cut this client's requests short for good (see ``HttpClient.stop``)."""
        self._net.stop()

    # -- transport and auth --------------------------------------------------------------

    def _auth_header(self, scope: str) -> dict[str, str]:
        """The credentials for ``scope``; the net client sends them only to this registry's
        own scheme, host and port, so a ``Link`` page, an upload ``Location`` or a redirect
        elsewhere gets none."""
        if scope in self._tokens:
            return {"Authorization": f"Bearer {self._tokens[scope]}"}
        if self._basic and self.credentials is not None:
            return _basic(self.credentials.username, self.credentials.password)
        return {}

    def _answer_challenge(
        self, response: httpx.Response, scope: str, *, renewed: bool, sent_basic: bool = False
    ) -> None:
        """Get what the 401's challenge asks for. A bearer token already held for ``scope`` is
        fetched anew once per request (tokens expire, often after a minute, while a run goes
        on); ``renewed`` says this request already did, so a second refusal is final. The user
        name and password are refused only by an answer to a request that carried them
        (``sent_basic``): requests side by side may have gone out before another one learnt
        that the registry asks for them."""
        challenge = ", ".join(response.headers.get_list("www-authenticate"))
        challenges = parse_challenges(challenge)
        # A registry offering both is answered with a token, as docker's client prefers.
        scheme, params = next(
            ((name, found) for name, found in challenges if name == "bearer"),
            challenges[0] if challenges else ("", {}),
        )
        if scheme == "basic":
            if self.credentials is None or self.credentials.identity_token:
                raise NexoError(
                    f"{self.host} asks for a user name and password; add them to the registry "
                    "config (docker login, REGISTRY_AUTH_FILE or --registry-config)",
                    kind="registry_auth",
                )
            if sent_basic:
                raise NexoError(
                    f"{self.host} refused the user name and password configured for it (user "
                    f"{self.credentials.username!r}); {_CHECK_CREDENTIALS}",
                    kind="registry_auth",
                )
            self._basic = True
            return
        if scheme == "bearer":
            if scope in self._tokens and renewed:
                raise NexoError(
                    f"{self.host} refused its own token for {scope}"
                    + ("" if self.credentials else " (no credentials are configured for it)"),
                    kind="registry_auth",
                )
            self._tokens[scope] = self._fetch_token(params, scope)
            return
        raise NexoError(
            f"{self.host} answered 401 with an unsupported challenge {challenge!r}",
            kind="registry_auth",
        )

    def _fetch_token(self, params: dict[str, str], scope: str) -> str:
        """A bearer token for ``scope`` from the challenge's realm, as docker and containerd
        ask: an ``identitytoken`` is exchanged as an OAuth2 refresh token (POST), falling back
        to a GET with basic auth when the service has no OAuth2 endpoint (404, 405, 400, 401,
        as GCR, Artifactory and ACR answer); other credentials go as basic auth on a GET;
        without credentials the GET is anonymous (public repositories)."""
        realm = self._checked_realm(params.get("realm"))
        service = {"service": params["service"]} if "service" in params else {}
        query = {"scope": params.get("scope") or scope, **service}
        credentials = self.credentials
        if credentials is not None and credentials.identity_token:
            form = {
                "grant_type": "refresh_token",
                "refresh_token": credentials.identity_token,
                "client_id": OAUTH_CLIENT_ID,
                **query,
            }
            status, document = self._token_answer("POST", realm, data=form)
            if status in OAUTH_UNSUPPORTED:
                status, document = self._token_answer(
                    "GET",
                    realm,
                    params=query,
                    basic=_basic(credentials.username or "<token>", credentials.identity_token),
                )
        else:
            status, document = self._token_answer(
                "GET",
                realm,
                params=query,
                basic=_basic(credentials.username, credentials.password) if credentials else None,
            )
        what = f"the token service of {self.host}"
        if status in {400, 401, 403}:
            refused = (
                f"refused the credentials configured for {self.host} ({status}); "
                + _CHECK_CREDENTIALS
                if credentials
                else f"refused an anonymous token ({status})"
            )
            raise NexoError(f"{what} {refused}", kind="registry_auth")
        if status != 200:
            raise _network(f"{what} answered {status}")
        token = (
            document.get("token") or document.get("access_token")
            if isinstance(document, dict)
            else None
        )
        if not isinstance(token, str) or not token:
            raise NexoError(f"{what} answered without a token", kind="registry_auth")
        if not _HEADER_TOKEN.fullmatch(token):
            # It would go in an Authorization header: CR/LF would split it, anything outside
            # visible ASCII cannot be sent. Never shown (it is a credential).
            raise NexoError(
                f"{what} answered a token that cannot be sent in a header (control, space or "
                "non-ASCII characters)",
                kind="registry_auth",
            )
        return token

    def _checked_realm(self, realm: str | None) -> str:
        """The challenge's token realm: an absolute https URL, or http only when the registry
        itself is the loopback plain-http one and the realm is on loopback too (credentials
        never cross the network in clear).
        ``registry_auth`` otherwise, a malformed URL included."""
        if not realm:
            raise NexoError(
                f"{self.host} sent a bearer challenge without a realm", kind="registry_auth"
            )
        try:
            parts = urllib.parse.urlsplit(realm)
            parts.port  # noqa: B018 - a port that is not one raises here
            if not is_http_url(realm):
                raise ValueError(realm)
        except ValueError as error:
            raise NexoError(
                f"{self.host} named a malformed token realm {shown_url(realm)}",
                kind="registry_auth",
            ) from error
        # Plain http only between this machine and itself: the registry is the loopback
        # `--plain-http` one and the realm is on loopback too. A loopback registry naming an
        # http realm on another host would send the credentials across the network in clear.
        plain_allowed = self.base.startswith("http://") and is_loopback_name(parts.hostname or "")
        if not parts.hostname or parts.scheme not in (
            {"https", "http"} if plain_allowed else {"https"}
        ):
            raise NexoError(
                f"{self.host} named the token realm {shown_url(realm)}: credentials go to a token "
                "service over https only (plain http only on this machine, for a loopback "
                "--plain-http registry)",
                kind="registry_auth",
            )
        return realm

    def _token_answer(
        self,
        method: str,
        realm: str,
        *,
        params: dict[str, str] | None = None,
        data: dict[str, str] | None = None,
        basic: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        """One request to the token service: its status, and its JSON document when 200."""
        what = f"the token service of {self.host}"
        self.requests["token"] += 1
        try:
            # The credentials belong to the realm's origin: a redirect elsewhere gets none.
            with self._net.slow_notice(0, 1):
                response = self._net.send(
                    method,
                    realm,
                    f"cannot reach {what}",
                    headers={"Accept-Encoding": DOCUMENT_ACCEPT_ENCODING},
                    credentials=basic,
                    credentials_origin=realm,
                    params=params,
                    data=data,
                )
        except Retryable as exc:
            raise _network(exc.message) from exc
        try:
            if response.status_code != 200:
                self._short_text(response)
                return response.status_code, None
            return 200, self._read_json(response, what, limit=MAX_SMALL_ANSWER_BYTES)
        finally:
            response.close()

    @contextmanager
    def _request(
        self,
        method: str,
        path: str,
        *,
        scope: str,
        kind: str,
        headers: dict[str, str] | None = None,
        content: bytes | None = None,
    ) -> Iterator[httpx.Response]:
        url = path if path.startswith(("http://", "https://")) else self.base + path
        sent = {"Accept-Encoding": DOCUMENT_ACCEPT_ENCODING, **(headers or {})}
        challenges = 0
        attempt = 0
        retries = RETRIES if method in IDEMPOTENT else 0
        # One deadline for the whole request: retries, authentication rounds, headers and body.
        with self._net.request_scope():
            while True:
                self.requests[kind] += 1
                credentials = self._auth_header(scope)
                try:
                    with self._net.slow_notice(attempt, retries + 1):
                        response = self._net.send(
                            method,
                            url,
                            f"cannot reach registry {self.host}",
                            headers=sent,
                            credentials=credentials,
                            credentials_origin=self.base,
                            content=content,
                        )
                except Retryable as exc:
                    delay = self._net.retry_delay(attempt) if attempt < retries else None
                    if delay is None:
                        raise _network(exc.message) from exc
                    self._net.pause(delay)
                    attempt += 1
                    continue
                if response.status_code == 401:
                    response.close()
                    challenges += 1
                    if challenges > MAX_CHALLENGES:
                        raise NexoError(
                            f"{self.host} keeps asking for authentication", kind="registry_auth"
                        )
                    self._answer_challenge(
                        response,
                        scope,
                        renewed=challenges > 1,
                        sent_basic=credentials.get("Authorization", "").startswith("Basic "),
                    )
                    continue
                delay = None
                if response.status_code in RETRY_STATUSES and attempt < retries:
                    delay = self._net.retry_delay(
                        attempt, parse_retry_after(response.headers.get("retry-after"))
                    )
                if delay is not None:
                    self._short_text(response)
                    response.close()
                    self._net.pause(delay)
                    attempt += 1
                    continue
                try:
                    if response.status_code == 403:
                        raise NexoError(
                            f"{self.host} denies {method} {path.split('?', maxsplit=1)[0]} (403)",
                            kind="registry_auth",
                        )
                    if response.status_code == 429:
                        raise self._rate_limited(response)
                    yield response
                finally:
                    response.close()
                return

    def _rate_limited(self, response: httpx.Response) -> NexoError:
        """``rate_limited`` for a 429 still answered after the retries (a registry's pull
        limit, such as Docker Hub's): when to ask again, and that signing in may raise it."""
        wait = parse_retry_after(response.headers.get("retry-after"))
        when = "" if wait is None else f"; it asks to wait {max(1, round(wait))} s"
        details: dict[str, object] = {"host": self.host, "status": 429}
        if wait is not None:
            details["retry_after_seconds"] = max(1, round(wait))
        return NexoError(
            f"{self.host} refuses more requests for now (429 Too Many Requests){when}: try "
            "again later, or sign in to the registry (a higher limit often comes with it)",
            kind="rate_limited",
            details=details,
        )

    def _raw_chunks(self, response: httpx.Response, what: str) -> Iterator[bytes]:
        """The body as it arrives on the wire, under the request's deadline; ``network`` when
        it stops arriving."""
        try:
            yield from self._net.raw_chunks(response, what)
        except Retryable as exc:
            raise _network(exc.message) from exc

    def _read_document(self, response: httpx.Response, what: str, *, limit: int) -> bytes:
        """A document body: at most ``limit`` bytes on the wire and after gzip/deflate
        decoding; ``registry_invalid`` past that or in another encoding."""
        try:
            return self._net.read_document(response, what, limit=limit, kind="registry_invalid")
        except Retryable as exc:
            raise _network(exc.message) from exc

    def _read_json(self, response: httpx.Response, what: str, *, limit: int) -> Any:
        """A JSON document read as :meth:`_read_document` reads it; ``registry_invalid`` when
        it is not JSON or nested too deeply."""
        return parse_json(
            self._read_document(response, what, limit=limit), what, kind="registry_invalid"
        )

    def _short_text(self, response: httpx.Response) -> str:
        """The start of an answer nobody needs (an error, an upload's reply), for a message;
        what follows the first :data:`MAX_ERROR_TEXT_BYTES` is left unread."""
        data = bytearray()
        with contextlib.suppress(NexoError):
            for chunk in self._raw_chunks(response, "the registry's answer"):
                data += chunk
                if len(data) >= MAX_ERROR_TEXT_BYTES:
                    break
        if response.headers.get("content-encoding", "identity").strip().lower() != "identity":
            return ""
        return " ".join(bytes(data[:200]).decode("utf-8", errors="replace").split())

    @staticmethod
    def _scope(repository: str, push: bool = False) -> str:
        return f"repository:{repository}:{'pull,push' if push else 'pull'}"

    def _unexpected(self, response: httpx.Response, what: str) -> NexoError:
        body = self._short_text(response)
        return _network(f"{what}: the registry answered {response.status_code} {body}".rstrip())

    # -- manifests -----------------------------------------------------------------------

    def get_manifest(self, repository: str, reference: str) -> Manifest:
        """GET a manifest or index by tag or digest; a digest is checked against the bytes.

        What a digest names never changes: one asked for again in the same run (a lock
        resolves a target, then opens it) is answered from memory."""
        remembered = self._manifests.get((repository, reference))
        if remembered is not None:
            return remembered
        if ":" in reference and not _SHA256_REFERENCE.fullmatch(reference):
            # A tag never holds ':'; a digest in another algorithm would go unchecked.
            raise NexoError(
                f"manifest {reference[:100]!r} is not named by a sha256 digest",
                kind="registry_invalid",
            )
        with self._request(
            "GET",
            f"{repository}/manifests/{reference}",
            scope=self._scope(repository),
            kind="manifest_get",
            headers={"Accept": MANIFEST_ACCEPT},
        ) as response:
            if response.status_code == 404:
                raise NexoError(
                    f"oci://{self.host}/{repository} has no manifest {reference}",
                    kind="release_not_found",
                    details={"reference": f"oci://{self.host}/{repository}", "tag": reference},
                )
            if response.status_code != 200:
                raise self._unexpected(response, f"cannot get manifest {reference}")
            what = f"manifest {reference} from {self.host}"
            raw = self._read_document(response, what, limit=MAX_MANIFEST_BYTES)
            media_type = response.headers.get("content-type", "").split(";")[0].strip()
        digest = sha256_digest(raw)
        if reference.startswith("sha256:") and digest != reference:
            raise NexoError(
                f"{what} hashes to {digest}",
                kind="checksum_mismatch",
                details={"expected": reference, "actual": digest},
            )
        document = parse_json(raw, what, kind="registry_invalid")
        declared = document.get("mediaType") if isinstance(document, dict) else None
        manifest = Manifest(raw, declared if isinstance(declared, str) else media_type, digest)
        if reference.startswith("sha256:"):
            self._manifests[(repository, reference)] = manifest
        return manifest

    def manifest_exists(self, repository: str, reference: str) -> bool:
        return self._exists(repository, "manifest", reference, {"Accept": MANIFEST_ACCEPT})

    def _exists(
        self, repository: str, what: str, reference: str, headers: dict[str, str] | None = None
    ) -> bool:
        """HEAD the ``what`` (``manifest``, ``blob``) ``reference`` of ``repository``: whether
        it is there (200) or not (404); any other answer is ``network``."""
        with self._request(
            "HEAD",
            f"{repository}/{what}s/{reference}",
            scope=self._scope(repository),
            kind=f"{what}_head",
            headers=headers,
        ) as response:
            if response.status_code == 404:
                return False
            if response.status_code != 200:
                raise self._unexpected(response, f"cannot check {what} {reference}")
            return True

    def put_manifest(
        self, repository: str, reference: str, data: bytes, media_type: str
    ) -> dict[str, str]:
        """PUT a manifest under a tag or its digest; returns the response headers."""
        with self._request(
            "PUT",
            f"{repository}/manifests/{reference}",
            scope=self._scope(repository, push=True),
            kind="manifest_put",
            headers={"Content-Type": media_type},
            content=data,
        ) as response:
            if response.status_code not in {200, 201}:
                raise self._unexpected(response, f"cannot push manifest {reference}")
            self._short_text(response)
            return dict(response.headers)

    def list_tags(self, repository: str) -> list[str]:
        """Every tag of ``repository`` (following ``Link`` pagination); ``[]`` if it is absent."""
        tags: list[str] = []
        what = f"the tag list of {repository}"

        def read(_page: int, response: httpx.Response) -> bool:
            if response.status_code == 404:
                return False
            if response.status_code != 200:
                raise self._unexpected(response, f"cannot list the tags of {repository}")
            document = self._read_json(response, what, limit=MAX_TAG_LIST_BYTES)
            found = (document.get("tags") if isinstance(document, dict) else None) or []
            if not isinstance(found, list):
                raise NexoError(f"{what} is not a list of tags", kind="registry_invalid")
            tags.extend(tag for tag in found if isinstance(tag, str))
            return True

        self._paged(repository, f"{repository}/tags/list", what, read, kind="tags")
        return tags

    def _paged(
        self,
        repository: str,
        path: str,
        what: str,
        read: Callable[[int, httpx.Response], bool],
        *,
        kind: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        """GET ``path`` and the pages its ``Link`` headers name after it, handing each answer
        and its page number (from 1) to ``read`` until it returns false. A registry whose
        ``Link`` never ends is cut off past :data:`MAX_PAGES` (``registry_invalid``)."""
        pages = 0
        while path:
            if pages >= MAX_PAGES:
                raise NexoError(
                    f"{what} runs past {MAX_PAGES} pages; the registry's Link headers do not end",
                    kind="registry_invalid",
                )
            pages += 1
            scope = self._scope(repository)
            with self._request("GET", path, scope=scope, kind=kind, headers=headers) as response:
                if not read(pages, response):
                    return
                path = self._next_page(response)

    def _next_page(self, response: httpx.Response) -> str:
        """Where a paginated answer continues (its ``Link: <…>; rel="next"``), else ``""``."""
        match = re.match(r"\s*<([^>]+)>", response.headers.get("link", ""))
        if not match:
            return ""
        return self._followed_url(match.group(1), "a Link header")

    def _followed_url(self, target: str, what: str) -> str:
        """``target`` (a ``Link`` page, an upload ``Location``) as an absolute URL, relative
        ones against the registry; ``registry_invalid`` when it is not an http(s) URL.
        Whether credentials go along is decided per request (:func:`same_origin`)."""
        try:
            url = urllib.parse.urljoin(self.base, target)
        except ValueError:
            url = ""
        if not is_http_url(url) or any(ord(char) < 0x21 or ord(char) == 0x7F for char in target):
            raise NexoError(
                f"{self.host} sent {what} that is not a URL: {shown_url(target)}",
                kind="registry_invalid",
            )
        return url

    # -- blobs ---------------------------------------------------------------------------

    def blob_exists(self, repository: str, digest: str) -> bool:
        return self._exists(repository, "blob", digest)

    def get_blob(
        self,
        repository: str,
        digest: str,
        write: Callable[[bytes], None],
        *,
        max_bytes: int,
        reset: Callable[[], None] | None = None,
        size: int | None = None,
    ) -> int:
        """Stream a blob into ``write``, hashing as it goes; returns its size.

        A body cut off halfway is fetched again from the start (up to :data:`RETRIES` times,
        with backoff) when ``reset`` can discard what ``write`` was given. Raises
        ``checksum_mismatch`` when the bytes do not hash to ``digest`` or run past ``size``
        (the size its descriptor names, when known: read no further) (the caller discards
        what it wrote), ``archive_unsafe`` past ``max_bytes``.
        """
        named, attempt = size, 0
        while True:
            try:
                got, actual = self._stream_blob(repository, digest, write, max_bytes, named)
                break
            except _BodyCut as cut:
                delay = self._net.retry_delay(attempt) if reset is not None else None
                if attempt >= RETRIES or delay is None or reset is None:
                    raise cut.error from cut.error.__cause__
                self._net.pause(delay)
                reset()
                attempt += 1
        if actual != digest:
            raise NexoError(
                f"blob {digest} from oci://{self.host}/{repository} hashes to {actual}: the "
                "registry served other bytes than it names",
                kind="checksum_mismatch",
                details={"expected": digest, "actual": actual},
            )
        return got

    def _stream_blob(
        self,
        repository: str,
        digest: str,
        write: Callable[[bytes], None],
        max_bytes: int,
        named: int | None = None,
    ) -> tuple[int, str]:
        """One GET of a blob into ``write``: its size and ``sha256:`` digest. A transfer that
        fails once the body has started is :class:`_BodyCut` (unless its deadline passed).

        The bytes are hashed once: when ``write`` is an empty blob cache sink's, by the sink
        (it hashes exactly what it is given), else here."""
        sink = getattr(write, "__self__", None)
        if isinstance(sink, BlobSink) and write == sink.write and sink.size == 0:
            hasher, shared = sink.hasher, True
        else:
            hasher, shared = hashlib.sha256(), False
        size = 0
        with self._request(
            "GET",
            f"{repository}/blobs/{digest}",
            scope=self._scope(repository),
            kind="blob_get",
            # The digest names the bytes as stored: never a re-encoding of them.
            headers={"Accept-Encoding": "identity"},
        ) as response:
            if response.status_code == 404:
                raise NexoError(
                    f"oci://{self.host}/{repository} has no blob {digest}",
                    kind="release_not_found",
                )
            if response.status_code != 200:
                raise self._unexpected(response, f"cannot get blob {digest}")
            what = f"download of blob {digest} from {self.host} failed"
            try:
                # ``write`` is a blob sink's: it fails with ``io``, never ``network``.
                for chunk in self._raw_chunks(response, what):
                    size += len(chunk)
                    if named is not None and size > named:
                        raise NexoError(
                            f"blob {digest} from oci://{self.host}/{repository} runs past the "
                            f"{named} bytes its descriptor names: the registry served other "
                            "bytes than it names",
                            kind="checksum_mismatch",
                            details={"expected": digest, "size": named},
                        )
                    if size > max_bytes:
                        raise over_download_limit(f"blob {digest}", max_bytes)
                    if not shared:
                        hasher.update(chunk)
                    write(chunk)
            except NexoError as error:
                if error.kind == "network" and not self._net.deadline.expired():
                    raise _BodyCut(error) from error
                raise
        return size, "sha256:" + hasher.hexdigest()

    def push_blob(self, repository: str, data: bytes | Path) -> tuple[str, int]:
        """Upload a blob unless the registry has it; returns ``(digest, size)``."""
        raw = data.read_bytes() if isinstance(data, Path) else data
        digest = sha256_digest(raw)
        if self.blob_exists(repository, digest):
            return digest, len(raw)
        scope = self._scope(repository, push=True)
        with self._request(
            "POST", f"{repository}/blobs/uploads/", scope=scope, kind="blob_upload"
        ) as response:
            if response.status_code != 202 or "location" not in response.headers:
                raise self._unexpected(response, "cannot start a blob upload")
            location = response.headers["location"]
            self._short_text(response)
        location = self._followed_url(location, "a blob upload Location")
        separator = "&" if "?" in location else "?"
        with self._request(
            "PUT",
            f"{location}{separator}digest={digest}",
            scope=scope,
            kind="blob_put",
            headers={"Content-Type": "application/octet-stream"},
            content=raw,
        ) as response:
            if response.status_code not in {201, 204}:
                raise self._unexpected(response, f"cannot upload blob {digest}")
            self._short_text(response)
        return digest, len(raw)

    # -- referrers -----------------------------------------------------------------------

    def referrers(self, repository: str, digest: str) -> list[dict[str, Any]]:
        """Descriptors of the manifests whose ``subject`` is ``digest``.

        The OCI 1.1 referrers API first, following its ``Link`` pagination. A registry
        without it (404, or an answer that is not an image index) is asked for the fallback
        index tagged ``sha256-<hex>``; so is one whose API lists nothing, since artifacts
        pushed before a registry gained the API are only listed there. A host found without
        the API is not asked for it again by this command (:class:`HostFacts`). No
        referrers: ``[]``.
        """
        facts = self.facts
        found: list[dict[str, Any]] = []
        asked = False
        if facts.referrers_api is None:
            with facts.probing:
                if facts.referrers_api is None:
                    found, facts.referrers_api = self._listed_referrers(repository, digest)
                    asked = True
        if facts.referrers_api and not asked:
            found, _ = self._listed_referrers(repository, digest)
        return found or self._fallback_referrers(repository, digest)

    def _listed_referrers(self, repository: str, digest: str) -> tuple[list[dict[str, Any]], bool]:
        """What the referrers API lists for ``digest``, and whether the registry has it."""
        found: list[dict[str, Any]] = []
        what = f"the referrers of {digest}"
        supported = False

        def read(page: int, response: httpx.Response) -> bool:
            nonlocal supported
            supported = response.status_code == 200 and response.headers.get(
                "content-type", ""
            ).startswith(INDEX_MEDIA_TYPE)
            if not supported:
                if page > 1 or response.status_code not in {200, 404}:
                    raise self._unexpected(response, f"cannot list {what}")
                self._short_text(response)
                return False
            document = self._read_document(response, what, limit=MAX_MANIFEST_BYTES)
            found.extend(_descriptors(document))
            return True

        path = f"{repository}/referrers/{digest}"
        headers = {"Accept": INDEX_MEDIA_TYPE}
        self._paged(repository, path, what, read, kind="referrers", headers=headers)
        return found, supported

    def _fallback_referrers(self, repository: str, digest: str) -> list[dict[str, Any]]:
        """The descriptors of the tag-schema index of ``digest``; ``[]`` when there is none."""
        try:
            fallback = self.get_manifest(repository, fallback_tag(digest))
        except NexoError as error:
            if error.kind == "release_not_found":
                return []
            raise
        return _descriptors(fallback.data)


def fallback_tag(digest: str) -> str:
    """The referrers tag schema: ``sha256:abc…`` -> ``sha256-abc…``."""
    algorithm, _, hexdigest = digest.partition(":")
    return f"{algorithm}-{hexdigest}"


def _descriptors(data: bytes) -> list[dict[str, Any]]:
    document = parse_json(data, "a referrers index", kind="registry_invalid")
    manifests = document.get("manifests") if isinstance(document, dict) else None
    if not isinstance(manifests, list):
        return []
    return [item for item in manifests if isinstance(item, dict)]
