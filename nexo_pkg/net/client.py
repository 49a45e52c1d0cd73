"""The one HTTP client every network user goes through (GitHub releases and attestations,
OCI registries and their token services, ``trust add``'s downloads).

:class:`HttpClient` owns the connections and the rules they follow, so no source can drift
from another: one transport (:class:`~nexo_pkg.net.transport.DirectTransport`, httpx's own
only for the proxies ``HTTPS_PROXY`` and friends name), one TLS setup, one ``User-Agent``,
one deadline per request enforced by a watchdog that cuts the connection, one retry policy
(:func:`backoff_delay`; a name that does not resolve and every refusal of policy are never
retried), one redirect policy checked by this code on every hop (never from https down to
http, credentials only to the origin they belong to) and one set of caps on what is read
(:mod:`nexo_pkg.net.bounded`). docs/network.md states each rule and its numbers.

Every refusal is a :class:`~nexo_pkg.core.errors.NexoError` of kind ``network``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import email.utils
import ipaddress
import math
import os
import random
import re
import socket
import ssl
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

from nexo_pkg import __version__
from nexo_pkg.core.credentials import bare_url
from nexo_pkg.core.errors import ConfigError, NexoError, UsageError
from nexo_pkg.core.terminal import printable, shown
from nexo_pkg.net.bounded import (
    SLOW_NOTICE_SECONDS,
    Deadline,
    SocketWatch,
    after,
    checked_timeout,
    declared_length,
    decoded_document,
    timeout_from_env,
)

# httpx's package init imports its own command-line tool (rich, pygments and click: tens of
# milliseconds at start-up) whenever those are installed; nothing here uses it, so its import
# is made to fail (httpx falls back to a stub) and the module is left importable afterwards.
_HIDE_HTTPX_MAIN = "httpx._main" not in sys.modules
if _HIDE_HTTPX_MAIN:
    sys.modules["httpx._main"] = None  # type: ignore[assignment]
try:
    import httpx
finally:
    if _HIDE_HTTPX_MAIN and sys.modules.get("httpx._main", sys) is None:
        del sys.modules["httpx._main"]

# The transport imports httpx: it comes after the import above hid httpx's command-line tool.
from nexo_pkg.net.transport import DEFAULT_PORTS, DirectTransport  # noqa: E402

USER_AGENT = f"nexo-pkg/{__version__}"
RETRY_BASE_ENV = "NEXO_HTTP_RETRY_BASE_MS"
DEFAULT_RETRIES = 3
DEFAULT_RETRY_BASE_SECONDS = 0.5
MAX_RETRY_DELAY_SECONDS = 8.0
# A server's Retry-After is honoured up to this; a longer one is waited this long at most.
MAX_RETRY_AFTER_SECONDS = 30.0
# Silence after which one attempt is abandoned (and retried while the deadline allows).
DEFAULT_READ_TIMEOUT_SECONDS = 30.0
CONNECT_TIMEOUT_SECONDS = 15.0
MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# Redirects that keep the method and body; the others are followed by GET and HEAD only.
_METHOD_KEEPING = frozenset({307, 308})
_FOLLOWED_METHODS = frozenset({"GET", "HEAD"})
_LOCATION = "nexo_location"
# A header's number of seconds. Ten ASCII digits reach the year 2286: anything longer is not
# a delay or a time a server means.
HEADER_SECONDS = re.compile(r"^\s*([0-9]{1,10})\s*$")

T = TypeVar("T")
E = TypeVar("E", bound=BaseException)
Origin = tuple[str, str, int | None]


def in_words(exc: httpx.TransportError, what: str = "") -> str:
    """A transport failure for a person, naming the host it happened with: an answer broken
    off or malformed is told in the words of its message (``the connection closed after N of
    M bytes of the answer``), a dropped connection or a timeout by what happened, never by
    the HTTP library's class name. When ``what`` (what was being fetched) already names that
    host (a registry's ``manifest 1.0.0 from HOST``), it is not named a second time."""
    host = None if _names_host(what, exc) else _host_of(exc)
    detail = str(exc)
    to, from_ = (f" to {host}", f" (from {host})") if host else ("", "")
    server = host or "the server"
    if isinstance(exc, ProxyConnectError):
        return (
            f"cannot connect{to} through the proxy {shown(exc.proxy)} {exc.variable} "
            f"names ({_without_errno(detail) or 'refused'})"
        )
    for kind, words, unsaid in _IN_WORDS:
        if isinstance(exc, kind):
            return words.format(server=server, to=to, from_=from_, detail=detail or unsaid)
    return f"{detail or 'the connection failed'}{f' ({host})' if host else ''}"


# Each transport failure in words, the first class that matches deciding (subclasses first),
# with what stands for an empty message: ``server`` is the host or "the server", ``to`` and
# ``from_`` " to HOST" and " (from HOST)", or empty when what was fetched names the host.
_IN_WORDS: tuple[tuple[type[httpx.TransportError], str, str], ...] = (
    (httpx.ConnectTimeout, "{server} did not take the connection in time", ""),
    (httpx.ReadTimeout, "{server} stopped sending the answer (timed out)", ""),
    (httpx.WriteTimeout, "{server} stopped taking the request (timed out)", ""),
    (httpx.TimeoutException, "no connection{to} was free in time", ""),
    (httpx.ConnectError, "cannot connect{to} ({detail})", "refused"),
    (httpx.ReadError, "the connection{to} broke during the answer ({detail})", "closed"),
    (httpx.WriteError, "the connection{to} broke while sending the request ({detail})", "closed"),
    (httpx.ProxyError, "the proxy refused the connection{to} ({detail})", "refused"),
    (httpx.RemoteProtocolError, "{detail}{from_}", "the answer is not valid HTTP"),
)


def _names_host(what: str, exc: httpx.TransportError) -> bool:
    """Whether ``what`` names the host (and port) ``exc`` happened with, as a whole word."""
    try:
        url = exc.request.url
    except RuntimeError:  # an error raised without its request
        return False
    host = _authority(url)  # an IPv6 address bracketed, as ``what`` writes it
    word = rf"(?<![\w.:-]){re.escape(host)}(?![\w.:-])"
    return bool(host) and re.search(word, what) is not None


def _host_of(exc: httpx.TransportError) -> str:
    """The host (and port) ``exc`` happened with, quoted, or ``the server``. An IPv6 address
    is bracketed, as a URL writes it (``[::1]:8080``)."""
    try:
        url = exc.request.url
    except RuntimeError:  # an error raised without its request
        return "the server"
    return shown(_authority(url))


def _authority(url: httpx.URL) -> str:
    """``url``'s host, and its port when it names one other than its scheme's default; an
    IPv6 address bracketed, as a URL writes it (``[::1]:8080``). Never its credentials."""
    host = f"[{url.host}]" if ":" in url.host else url.host
    return f"{host}:{url.port}" if url.port else host


def _without_errno(detail: str) -> str:
    """An ``OSError``'s words without the ``[Errno N]`` its ``str`` puts before them."""
    return re.sub(r"^\[Errno -?\d+\] ", "", detail)


class Retryable(Exception):  # noqa: N818 - a signal to the retry loop, never shown as such
    """A failure worth another attempt (5xx, dropped connection, timeout); ``retry_after``
    is the pause the server asked for, in seconds, if it asked."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


def retry_base_delay_from_env() -> float:
    """Backoff base in seconds; ``NEXO_HTTP_RETRY_BASE_MS`` lowers it (tests use 1 ms).
    Raises :class:`UsageError` for a value that is not a finite number of milliseconds, 0 or
    more (``nan``, ``-5`` and ``inf`` are no pause)."""
    raw = os.environ.get(RETRY_BASE_ENV)
    if raw is None:
        return DEFAULT_RETRY_BASE_SECONDS
    try:
        milliseconds = float(raw)
    except ValueError:
        milliseconds = math.nan
    if not math.isfinite(milliseconds) or milliseconds < 0:
        raise UsageError(f"{RETRY_BASE_ENV}={raw!r} is not a number of milliseconds (0 or more)")
    return milliseconds / 1000.0


def parse_retry_after(value: str | None, now: dt.datetime | None = None) -> float | None:
    """A ``Retry-After`` header in seconds from ``now``: delta-seconds or an HTTP-date (a date
    in the past is 0); ``None`` when absent or neither."""
    if value is None:
        return None
    match = HEADER_SECONDS.match(value)
    if match:
        return float(match.group(1))
    try:
        moment = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    current = now or dt.datetime.now(dt.UTC)
    return max(0.0, float((moment - current).total_seconds()))


def backoff_delay(attempt: int, base: float, retry_after: float | None = None) -> float:
    """The pause before attempt ``attempt + 2``: drawn from the upper half of ``base *
    2**attempt`` seconds (capped at :data:`MAX_RETRY_DELAY_SECONDS`), so clients that failed
    together do not come back in step; at least the server's ``retry_after``, which itself is
    capped at :data:`MAX_RETRY_AFTER_SECONDS`."""
    nominal = min(base * 2.0**attempt, MAX_RETRY_DELAY_SECONDS)
    delay = nominal / 2 + random.uniform(0, nominal / 2)  # noqa: S311 (not crypto)
    if retry_after is not None:
        delay = max(delay, min(max(0.0, retry_after), MAX_RETRY_AFTER_SECONDS))
    return delay


def _caused_by(exc: BaseException, kind: type[E]) -> E | None:
    """The first exception of ``kind`` in ``exc``'s chain of causes (``exc`` included)."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, kind):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def is_name_resolution_failure(exc: BaseException) -> bool:
    """Whether ``exc`` was caused by a failed host name lookup (``getaddrinfo``)."""
    return _caused_by(exc, socket.gaierror) is not None


def certificate_refused(exc: BaseException) -> bool:
    """Whether a TLS handshake failed because the server's certificate does not verify
    against the CA certificates in use (unknown issuer, self-signed, expired, wrong host)."""
    if _caused_by(exc, ssl.SSLCertVerificationError) is not None:
        return True
    return isinstance(exc, httpx.ConnectError) and "CERTIFICATE_VERIFY_FAILED" in str(exc)


# OpenSSL's verify codes of a certificate that a CA setting cannot make acceptable.
_WRONG_HOST_CODES = frozenset({62, 64})  # X509_V_ERR_HOSTNAME_MISMATCH, _IP_ADDRESS_MISMATCH
_OUT_OF_DATE_CODES = frozenset({9, 10})  # X509_V_ERR_CERT_NOT_YET_VALID, _CERT_HAS_EXPIRED


def _certificate_remedy(exc: BaseException) -> tuple[str, str]:
    """What is wrong with a certificate :func:`certificate_refused` found refused, as the
    ``certificate`` detail and the remedy of its message: a CA setting helps only a
    certificate whose issuer is not trusted, not one for another host or out of date."""
    refused = _caused_by(exc, ssl.SSLCertVerificationError)
    code = None if refused is None else refused.verify_code
    if code in _WRONG_HOST_CODES:
        return (
            "wrong_host",
            "the server's certificate is not for this host name: check the host in the URL",
        )
    if code in _OUT_OF_DATE_CODES:
        return (
            "out_of_date",
            "the server's certificate has expired or is not valid yet: check this "
            "machine's clock, or have the server's certificate renewed",
        )
    return (
        "untrusted",
        "the server's certificate is not trusted here: if your own CA signs it, name that "
        "CA's certificate with SSL_CERT_FILE (or a directory of them with SSL_CERT_DIR), or "
        "add it to the system trust store",
    )


def plain_http_answer(exc: Exception) -> bool:
    """Whether a TLS handshake failed because the server answered in plain http (OpenSSL's
    ``WRONG_VERSION_NUMBER``, or ``record layer failure`` since 3.2): asking again cannot help;
    ``--plain-http`` can."""
    text = str(exc).lower()
    return isinstance(exc, httpx.ConnectError) and (
        "wrong version number" in text or "wrong_version_number" in text or "record layer" in text
    )


def is_retryable(exc: BaseException) -> bool:
    """Whether a failure to get an answer is worth another attempt: a dropped connection, a
    timeout, a protocol error; never a name that does not resolve, a URL or scheme that
    cannot be asked, or a refusal of this client's policy (a :class:`NexoError`)."""
    if isinstance(exc, (NexoError, httpx.UnsupportedProtocol, httpx.InvalidURL)):
        return False
    return isinstance(exc, httpx.TransportError) and not is_name_resolution_failure(exc)


def origin(url: str) -> Origin:
    """Scheme, host and port of ``url`` (default ports filled in); raises ``ValueError`` for a
    port that is not one."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or DEFAULT_PORTS.get(scheme)


def same_origin(url: str, base: str) -> bool:
    """Whether ``url`` has ``base``'s scheme, host and port (default ports filled in); a URL
    that does not parse is on no origin."""
    try:
        return origin(url) == origin(base)
    except ValueError:
        return False


def checked_url(
    url: str,
    what: str,
    *,
    came_from: str | None = None,
    https_only: str | None = None,
    plain_only_to: Callable[[str], bool] | None = None,
) -> str:
    """``url`` if it may be fetched, else a ``network`` error (never retried).

    Only http(s) URLs with a host and a valid port, printable ASCII without spaces; never
    from https (``came_from``, the URL that redirected here) down to http; under
    ``https_only`` (the name of the https source, such as ``"the https API URL"``), https
    whatever an answer or a redirect says; under ``plain_only_to`` (whether a host name is
    this machine, for a ``--plain-http`` loopback source), plain http only to the hosts it
    accepts, whatever an answer or a redirect says.
    """
    try:
        parts = urlsplit(url)
        usable = parts.scheme in {"http", "https"} and bool(parts.hostname) and parts.port != 0
        # As the transport reads the host: an "xn--" label that is no Punycode is no host.
        usable = usable and bool(httpx.URL(url).host)
    except (ValueError, httpx.InvalidURL):
        usable = False
    if came_from is not None:
        label = f"{what}: refusing a redirect from {shown_url(came_from)} to {shown_url(url)}"
    else:
        label = f"{what}: refusing to fetch {shown_url(url)}"
    if not usable or not url.isascii() or not url.isprintable() or " " in url:
        raise NexoError(f"{label}: not an http(s) URL with a valid host and port", kind="network")
    if urlsplit(url).scheme == "https":
        return url
    if came_from is not None and urlsplit(came_from).scheme == "https":
        plain = "a step down from https to plain http"
    elif https_only:
        plain = f"plain http under {https_only}"
    elif plain_only_to is not None and not plain_only_to(urlsplit(url).hostname or ""):
        plain = "plain http to a host other than this machine (--plain-http is for loopback only)"
    else:
        return url
    raise NexoError(
        f"{label}: {plain} would expose the download to anyone on the path",
        kind="network",
        details={"refused_url": bare_url(url)},
    )


def is_http_url(url: str) -> bool:
    """Whether ``url`` parses (as the transport will parse it) as an http(s) URL with a
    host."""
    try:
        parsed = httpx.URL(url)
        # The host is decoded on use: a label "xn--" begins that is no Punycode (``xn--zz``)
        # raises an IDNA error (a ValueError) there, not when the URL is parsed.
        return parsed.scheme in {"http", "https"} and bool(parsed.host)
    except (ValueError, httpx.InvalidURL):
        return False


class ProxyNameError(httpx.ConnectError):
    """The host name of the proxy a variable names does not resolve (not the host asked)."""

    def __init__(self, message: str, *, request: httpx.Request, variable: str, host: str):
        super().__init__(message, request=request)
        self.variable = variable
        self.host = host


class ProxyConnectError(httpx.ConnectError):
    """A connection through the proxy a variable names that could not be made: to the proxy
    itself, or beyond it (the tunnel's TLS with the host asked). ``proxy``: the proxy's host
    and port, without its credentials."""

    def __init__(self, message: str, *, request: httpx.Request, variable: str, proxy: str):
        super().__init__(message, request=request)
        self.variable = variable
        self.proxy = proxy


class ProxyTransport(httpx.HTTPTransport):
    """httpx's transport through ``proxy`` (named by the variable ``variable``), which says
    so when the proxy's own host name does not resolve: a typo in ``HTTPS_PROXY`` must not
    read as the GitHub host being unknown."""

    def __init__(self, proxy: str, variable: str, *, verify: ssl.SSLContext) -> None:
        super().__init__(proxy=proxy, verify=verify)
        self.variable = variable
        self.proxy_host = httpx.URL(proxy).host
        self.proxy_where = _authority(httpx.URL(proxy))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return super().handle_request(request)
        except httpx.ConnectError as exc:
            if not is_name_resolution_failure(exc):
                # Never said as if the host asked refused: the connection went to the proxy.
                raise ProxyConnectError(
                    str(exc), request=request, variable=self.variable, proxy=self.proxy_where
                ) from exc
            raise ProxyNameError(
                str(exc), request=request, variable=self.variable, host=self.proxy_host
            ) from exc


def environment_proxies() -> dict[str, httpx.BaseTransport | None]:
    """The proxies ``HTTPS_PROXY``, ``HTTP_PROXY`` and ``ALL_PROXY`` name (any case), as httpx
    mounts: an httpx transport through the proxy per URL pattern, ``None`` (direct) for the
    hosts ``NO_PROXY`` lists. Empty without such variables, so a direct connection imports
    nothing more. A value no connection could be made with (a scheme other than http, https
    or socks5, a SOCKS proxy without ``socksio``, no host, a malformed host or port) is a
    ``config`` error naming the variable (exit 2), its credentials never shown. Every
    variable is judged whatever host a request goes to, as httpx parses every proxy the
    environment names when its client is made (``trust_env``); ``NO_PROXY=*`` turns them
    all off, so none is read."""
    variables = _proxy_variables(os.environ)
    names = {scheme: name for scheme, (name, _) in variables.items()}
    mounts = proxy_mounts({scheme: value for scheme, (_, value) in variables.items()}, names)
    transports: dict[str, httpx.BaseTransport | None] = {}
    context: ssl.SSLContext | None = None
    for pattern, proxy in mounts.items():
        if proxy is None:
            transports[pattern] = None
            continue
        if context is None:
            from nexo_pkg.net.tls import tls_context  # noqa: PLC0415 (proxied runs only)

            # One context for every proxied origin: the trust store a direct connection uses.
            context = tls_context()
        name = names.get(pattern.removesuffix("://"), "the proxy variable")
        try:
            url = httpx.URL(proxy)
            if not _port_in_range(url):
                raise httpx.InvalidURL("the port is not a number from 1 to 65535")
            _check_proxy_host(url)
            _check_resolvable_name(url.host)
            transports[pattern] = ProxyTransport(proxy, name, verify=context)
        except ImportError as exc:
            raise ConfigError(
                f"{name} names a SOCKS proxy ({_proxy_shown(proxy)}), which needs the "
                "socksio package (not installed): install httpx[socks] or name an http:// proxy"
            ) from exc
        except (ValueError, httpx.InvalidURL) as exc:
            raise ConfigError(
                f"{name} is not a usable proxy URL ({_proxy_shown(proxy)}): "
                f"{_proxy_problem(proxy, exc)}"
            ) from exc
    return transports


# A host name as the resolver is asked for it (IDNA-encoded): letters, digits, '-', '_', '.'.
_HOST_NAME = re.compile(rb"[A-Za-z0-9._-]+")


def _check_proxy_host(url: httpx.URL) -> None:
    """Raises ``httpx.InvalidURL`` when a proxy URL names no host (``http:///x``,
    ``http://:3128``) or a host no connection could be made to: httpx keeps what is neither
    a name nor an address percent-encoded as the host (``http://[bad`` is ``%5Bbad``), and
    a connection to it would fail only once a request is under way, as a name that does not
    resolve."""
    if not url.raw_host:
        raise httpx.InvalidURL("it names no host")
    # A host with a ':' is an IPv6 address, which httpx has checked already.
    if b":" not in url.raw_host and not _HOST_NAME.fullmatch(url.raw_host):
        raise httpx.InvalidURL("its host is no host name or address")


def _proxy_user_info(proxy: str) -> str:
    """What stands before the last ``@`` after the scheme of ``proxy`` (a user and password,
    as a person meant them, whatever the URL parser makes of them); empty without one."""
    return proxy.partition("://")[2].rpartition("@")[0]


def _proxy_shown(proxy: str) -> str:
    """``proxy`` as a message may show it: everything before the last ``@`` after the scheme
    masked, a password holding ``/``, ``?`` or ``#`` (which end a URL's authority) included,
    then as :func:`_without_credentials` shows a URL."""
    scheme, separator, rest = proxy.partition("://")
    if "@" in rest:
        rest = "***@" + rest.rpartition("@")[2]
    return _without_credentials(f"{scheme}{separator}{rest}")


def _proxy_problem(proxy: str, exc: ValueError | httpx.InvalidURL) -> str:
    """Why ``proxy`` is no usable proxy URL, in words that quote nothing of its user and
    password: a ``/``, ``?`` or ``#`` in them ends the URL's authority early, so the parser's
    own words (``Invalid port: 's3cret'``) would quote the password."""
    if isinstance(exc, ValueError) and "scheme" in str(exc):
        return "a proxy must be an http://, https:// or socks5:// URL"
    if re.search(r"[/?#]", _proxy_user_info(proxy)):
        return (
            "its user or password holds a '/', '?' or '#', which must be percent-encoded "
            "(%2F, %3F, %23)"
        )
    return printable(str(exc))


def check_proxy_settings() -> None:
    """Raises the ``config`` error :func:`environment_proxies` raises for a proxy variable
    no connection could be made with: for a command about to ask the network on behalf of
    several plugins, so that the setting is refused once (exit 2), before any request,
    rather than once per plugin."""
    for transport in environment_proxies().values():
        if transport is not None:
            transport.close()


def _check_resolvable_name(host: str) -> None:
    """Raises ``httpx.InvalidURL`` when the resolver could not even be asked for ``host``:
    a text host name goes to ``getaddrinfo`` through the IDNA codec, which refuses an empty
    label or one over 63 characters with a ``UnicodeError`` before any lookup."""
    try:
        host.encode("idna")
    except UnicodeError:
        raise httpx.InvalidURL(
            f"the host name {shown(host)} cannot be looked up (a label is empty or longer "
            "than 63 characters)"
        ) from None


def shown_url(url: str) -> str:
    """``url`` quoted for a message (as :func:`~nexo_pkg.core.terminal.shown`), without its
    user, password, query string and fragment: every message that names a URL uses this."""
    return shown(bare_url(url))


def _without_credentials(url: str) -> str:
    """``url`` as it may be shown: a user and password before the host are masked, no query
    string or fragment."""
    return printable(bare_url(url))


def _proxy_variables(environ: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """``{scheme: (variable, value)}``: the rules of :func:`proxy_settings`, with the name of
    the variable each setting came from (for messages)."""
    found: dict[str, tuple[str, str]] = {}
    for name, value in environ.items():
        if value and name.lower().endswith("_proxy"):
            found[name[:-6].lower()] = (name, value)
    if "REQUEST_METHOD" in environ:
        found.pop("http", None)
    for name, value in environ.items():
        if name.endswith("_proxy"):
            if value:
                found[name[:-6].lower()] = (name, value)
            else:
                found.pop(name[:-6].lower(), None)
    return found


def proxy_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """``{scheme: proxy}`` from ``environ``'s ``*_proxy`` variables, as the standard
    library's ``urllib.request.getproxies_environment`` reads them (from the mapping given,
    so tests need not change the process's environment): any case, a name ending in
    lower-case ``_proxy`` winning, an empty one of those removing the scheme, and upper-case
    ``HTTP_PROXY`` ignored under CGI (``REQUEST_METHOD`` set: a client's ``Proxy:`` header
    would land there)."""
    return {scheme: value for scheme, (_, value) in _proxy_variables(environ).items()}


_BRACKETED = re.compile(r"\[(?P<address>[^\]]*)\](?::(?P<port>[0-9]{1,5}))?")


def proxy_mounts(
    settings: Mapping[str, str], names: Mapping[str, str] | None = None
) -> dict[str, str | None]:
    """httpx mount patterns for proxy ``settings`` as ``urllib.request`` reads them from the
    environment (``{"https": "proxy:3128", "no": "localhost,.corp"}``): a proxy URL per
    scheme (``http://`` assumed when none is given), ``None`` (direct) for each host that
    ``NO_PROXY`` lists (``[::1]:8080``: that address and port only); ``NO_PROXY=*`` turns
    every proxy off, as curl and httpx do. An entry that names no host (``[127.0.0.1]``,
    ``127.0.0.1:*``) is a ``config`` error naming the variable (``names``: the variable of
    each scheme)."""
    mounts: dict[str, str | None] = {}
    for scheme in ("http", "https", "all"):
        proxy = settings.get(scheme)
        if proxy:
            mounts[f"{scheme}://"] = proxy if "://" in proxy else f"http://{proxy}"
    variable = (names or {}).get("no", "NO_PROXY")
    for raw in settings.get("no", "").split(","):
        host = raw.strip()
        if host == "*":
            return {}
        if not host:
            continue
        pattern = _no_proxy_pattern(host)
        try:
            valid = pattern is not None and bool(httpx.URL(pattern).host)
            valid = valid and _port_in_range(httpx.URL(str(pattern)))
        except httpx.InvalidURL:
            valid = False
        if not valid:
            raise ConfigError(
                f"{variable} lists {printable(host)!r}, which is no host name, address or "
                "URL (an IPv6 address goes in brackets, [::1] or [::1]:8080; a port is a "
                "number from 1 to 65535)"
            )
        mounts[str(pattern)] = None
    return mounts


def _port_in_range(url: httpx.URL) -> bool:
    """Whether ``url`` names no port or one a connection can be made to (httpx keeps any
    integer: ``-1``, ``65536`` or twenty digits)."""
    return url.port is None or 0 < url.port < 65536


def _no_proxy_pattern(host: str) -> str | None:
    """The httpx mount pattern of one ``NO_PROXY`` entry, ``None`` for brackets that hold no
    IPv6 address."""
    if "://" in host:
        return host
    bracketed = _BRACKETED.fullmatch(host)
    if bracketed is not None:
        try:
            inside = ipaddress.IPv6Address(bracketed["address"])
        except ValueError:
            return None
        port = bracketed["port"]
        return f"all://[{inside}]" + (f":{port}" if port else "")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return f"all://{host}" if host.lower() == "localhost" else f"all://*{host}"
    return f"all://[{address}]" if address.version == 6 else f"all://{host}"


def _set_location_aside(response: httpx.Response) -> None:
    """Move a redirect's ``Location`` out of httpx's sight: :meth:`HttpClient.send` follows
    (and checks) redirects, and httpx would otherwise parse a hostile one itself, failing in
    ways that read as a dropped connection."""
    location = response.headers.get("location")
    if location is not None and response.status_code in REDIRECT_STATUSES:
        del response.headers["location"]
        response.extensions[_LOCATION] = location


class HttpClient(contextlib.AbstractContextManager["HttpClient"]):
    """Connections, deadline, retries, redirects and caps for one source; use as a context
    manager to close the connection pool. One request at a time: the deadline and its
    watchdog belong to the client, not to a thread.

    ``timeout`` is the total time one request may take, every attempt, pause, redirect and
    the body included; ``overall`` a deadline no request may outlive (a command's whole
    network work). ``https_only`` (the https source's name, for messages) refuses plain
    http for every URL and hop; ``plain_only_to`` (a ``--plain-http`` loopback source's test
    of a host name) refuses plain http to any other host on every URL and hop. ``hint`` names
    what to check when a host does not answer
    (``"the GitHub API URL"``). ``notice`` hears a line when an attempt has had no answer
    for :data:`SLOW_NOTICE_SECONDS`.
    """

    def __init__(
        self,
        *,
        timeout: float | None = None,
        read_timeout: float = DEFAULT_READ_TIMEOUT_SECONDS,
        retries: int = DEFAULT_RETRIES,
        retry_base_delay: float | None = None,
        overall: Deadline | None = None,
        https_only: str | None = None,
        plain_only_to: Callable[[str], bool] | None = None,
        hint: str = "the URL",
        notice: Callable[[str], None] | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.timeout = timeout_from_env() if timeout is None else checked_timeout(timeout)
        self.read_timeout = min(read_timeout, self.timeout)
        self.retries = retries
        self.retry_base_delay = (
            retry_base_delay_from_env() if retry_base_delay is None else retry_base_delay
        )
        self.https_only = https_only
        self.plain_only_to = plain_only_to
        self.hint = hint
        self._overall = overall
        self._notice = notice
        # Set by stop(): a pause ends at once, and no request goes out any more.
        self._stopped = threading.Event()
        self._sleep = sleep if sleep is not None else self._stopped.wait
        # The deadline of the request under way, each thread's own (threads of one command
        # send requests side by side through one client): a thread that has begun none yet
        # sees this first one. The URL of the hop it sent last lives beside it.
        self._first_deadline = Deadline(self.timeout).within(overall)
        self._requests = threading.local()
        # The host of the request under way, for the slow-answer notice.
        self.host = ""
        # Every socket this client opened, so a deadline can cut whichever one is blocking.
        self._watch = SocketWatch()
        # trust_env keeps SSL_CERT_FILE and friends working; httpx reads the proxy variables
        # only for a client without a transport of its own, so they are mounted here.
        self._http = httpx.Client(
            follow_redirects=False,
            trust_env=True,
            transport=DirectTransport(),
            mounts=environment_proxies(),
            timeout=self._attempt_timeout(),
            headers={"User-Agent": USER_AGENT},
            event_hooks={"response": [_set_location_aside]},
        )

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def stop(self) -> None:
        """Stop for good, from any thread (the run was interrupted): the connections are cut,
        a pause between attempts ends, and every request fails at once (``interrupted``)."""
        self._stopped.set()
        self._watch.stop()

    def _stop_error(self, what: str) -> NexoError | None:
        if not self._stopped.is_set():
            return None
        return NexoError(
            f"{what}: stopped, the run was interrupted", kind="interrupted", exit_code=130
        )

    # -- one request ----------------------------------------------------------------------

    @property
    def deadline(self) -> Deadline:
        """The deadline of the request this thread has under way (:meth:`begin`)."""
        deadline: Deadline = getattr(self._requests, "deadline", self._first_deadline)
        return deadline

    @deadline.setter
    def deadline(self, deadline: Deadline) -> None:
        self._requests.deadline = deadline

    def begin(self) -> Deadline:
        """Start a request: a fresh deadline of ``timeout`` seconds (sooner if ``overall``
        passes first), returned and kept as :attr:`deadline`."""
        self.deadline = Deadline(self.timeout).within(self._overall)
        return self.deadline

    @contextmanager
    def request_scope(self) -> Iterator[Deadline]:
        """:meth:`begin` a request and cut its connections when its deadline passes inside
        the block."""
        deadline = self.begin()
        with self._watch.watchdog(deadline):
            yield deadline

    def send(
        self,
        method: str,
        url: str,
        what: str,
        *,
        headers: Mapping[str, str] | None = None,
        credentials: Mapping[str, str] | None = None,
        credentials_origin: str | None = None,
        content: bytes | None = None,
        data: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """Send one request under the current deadline, following redirects by the rules in
        the module docstring; the answer is streamed (the caller reads it under a cap and
        closes it).

        ``credentials`` (headers such as ``Authorization``) go only to the origin of
        ``credentials_origin`` (``url``'s own when not given), on the first hop and every
        later one. Raises :class:`Retryable` for a transport failure worth another attempt,
        ``network`` for a refused URL or redirect, too many redirects, a name that does not
        resolve and the deadline.
        """
        owner = credentials_origin or url
        current = checked_url(
            url, what, https_only=self.https_only, plain_only_to=self.plain_only_to
        )
        for _ in range(MAX_REDIRECTS + 1):
            stopped = self._stop_error(what)
            if stopped is not None:
                raise stopped
            self.host = urlsplit(current).netloc
            self._requests.url = current
            sent = dict(headers or {})
            if credentials and same_origin(current, owner):
                sent.update(credentials)
            try:
                request = self._http.build_request(
                    method,
                    current,
                    headers=sent,
                    content=content,
                    data=data,
                    params=params,
                    timeout=self._attempt_timeout(),
                    extensions={"trace": partial(self._watch.note, deadline=self.deadline)},
                )
                response = self._http.send(request, stream=True)
            except httpx.InvalidURL as exc:
                raise NexoError(
                    f"{what}: refusing to fetch {shown_url(current)}: {exc}", kind="network"
                ) from exc
            except httpx.TransportError as exc:
                raise self.failure(exc, what) from exc
            if self.deadline.expired():
                # The watchdog cut the connection while the headers were arriving: what was
                # read of them is no answer.
                response.close()
                raise self.deadline.error(what, "the answer's headers were still arriving")
            location = response.extensions.get(_LOCATION)
            follow = method in _FOLLOWED_METHODS or response.status_code in _METHOD_KEEPING
            if not isinstance(location, str) or not follow:
                return response
            response.close()
            try:
                target = urljoin(current, location)
            except ValueError:
                target = location
            current = checked_url(
                target,
                what,
                came_from=current,
                https_only=self.https_only,
                plain_only_to=self.plain_only_to,
            )
            # The query was part of the first URL; a redirect names its own.
            params = None
        raise NexoError(
            f"{what}: more than {MAX_REDIRECTS} redirects (the last to {shown_url(current)})",
            kind="network",
        )

    @contextmanager
    def open(
        self,
        method: str,
        url: str,
        what: str,
        **options: Any,
    ) -> Iterator[httpx.Response]:
        """:meth:`send` as a context manager that closes the answer."""
        response = self.send(method, url, what, **options)
        try:
            yield response
        finally:
            response.close()

    def failure(self, exc: httpx.TransportError, what: str) -> Exception:
        """What a transport error means: the deadline, a name that does not resolve or a URL
        that cannot be asked (``network``, not worth another attempt), or a fault worth
        retrying (:class:`Retryable`)."""
        stopped = self._stop_error(what)
        if stopped is not None:
            return stopped
        if self.deadline.expired():
            # The watchdog cut the connection: what the library saw is that cut, not the cause.
            named = _names_host(what, exc)
            return self.deadline.error(
                what, "no complete answer" if named else f"no complete answer from {_host_of(exc)}"
            )
        if isinstance(exc, ProxyNameError):
            return NexoError(
                f"{what}: cannot resolve the host name {shown(exc.host)} of the proxy "
                f"{exc.variable} names ({exc}); check {exc.variable}, the network and DNS "
                "settings",
                kind="network",
                details={"host": exc.host, "proxy_variable": exc.variable},
            )
        if is_name_resolution_failure(exc):
            try:
                host = exc.request.url.host
            except RuntimeError:  # an error raised without its request
                host = "?"
            return NexoError(
                f"{what}: cannot resolve the host name {shown(host)} ({exc}); check "
                f"{self.hint}, the network and DNS settings",
                kind="network",
                details={"host": host},
            )
        if plain_http_answer(exc):
            return NexoError(
                f"{what}: the server answered https with plain http ({exc}); a registry that "
                "speaks plain http on this machine is reached with --plain-http",
                kind="network",
            )
        if certificate_refused(exc):
            # The same certificate is refused on every attempt: asking again cannot help.
            problem, remedy = _certificate_remedy(exc)
            return NexoError(
                f"{what}: {in_words(exc, what)}; {remedy}",
                kind="network",
                details={"certificate": problem},
            )
        if not is_retryable(exc):
            return NexoError(f"{what}: {in_words(exc, what)}", kind="network")
        return Retryable(f"{what}: {in_words(exc, what)}")

    def _attempt_timeout(self) -> httpx.Timeout:
        """Per-operation timeouts for the next attempt, never beyond the request's deadline."""
        remaining = max(0.001, self.deadline.remaining())
        read = min(self.read_timeout, remaining)
        return httpx.Timeout(read, connect=min(CONNECT_TIMEOUT_SECONDS, read))

    # -- bodies ---------------------------------------------------------------------------

    def raw_chunks(self, response: httpx.Response, what: str) -> Iterator[bytes]:
        """The body as it arrives on the wire, checked against the deadline piece by piece;
        a transport failure is what :meth:`failure` makes of it. The pieces are the
        transport's reads (at most ``CHUNK_SIZE`` bytes each from the direct transport), not
        joined and cut again: a blob's bytes are copied once on their way to its file."""
        try:
            for chunk in response.iter_raw():
                if self.deadline.expired():
                    raise self.deadline.error(what, "the answer was still arriving")
                yield chunk
        except httpx.TransportError as exc:
            raise self.failure(exc, what) from exc
        stopped = self._stop_error(what)
        if stopped is not None:
            raise stopped  # an end the stop made: the body may be cut short
        if self.deadline.expired():
            # An end the watchdog made, not the server: the body may be cut short.
            raise self.deadline.error(what, "the answer was still arriving")

    def read_document(
        self, response: httpx.Response, what: str, *, limit: int, kind: str = "network"
    ) -> bytes:
        """A document body: at most ``limit`` bytes declared, on the wire and after
        gzip/deflate decoding; ``kind`` past that, in another encoding, or not decoding."""
        return decoded_document(
            self.raw_chunks(response, what),
            response.headers.get("content-encoding", ""),
            what,
            declared=declared_length(response),
            kind=kind,
            limit=limit,
        )

    # -- retries --------------------------------------------------------------------------

    def retry_delay(self, attempt: int, retry_after: float | None = None) -> float | None:
        """The pause before retry ``attempt + 1`` (:func:`backoff_delay`), or ``None`` when
        the request's deadline leaves no time for it."""
        delay = backoff_delay(attempt, self.retry_base_delay, retry_after)
        return None if self.deadline.remaining() <= delay else delay

    def pause(self, seconds: float) -> None:
        self._sleep(seconds)

    def with_retries(self, operation: Callable[[], T]) -> T:
        """Run ``operation`` until it succeeds, at most ``retries`` more times after a
        :class:`Retryable`, within one deadline for the whole request. Raises ``network``
        when the attempts or the deadline run out."""
        deadline = self.begin()
        last: Retryable | None = None
        for attempt in range(self.retries + 1):
            if last is not None:
                delay = backoff_delay(attempt - 1, self.retry_base_delay, last.retry_after)
                self._sleep(min(delay, max(0.0, deadline.remaining())))
                if deadline.expired():
                    raise deadline.error_after(last.message)
            try:
                with self._watch.watchdog(deadline), self.slow_notice(attempt):
                    return operation()
            except Retryable as exc:
                last = exc
            if deadline.expired():
                raise deadline.error_after(last.message)
        message = last.message if last is not None else "no attempt was made"
        raise NexoError(
            f"{message} (gave up after {self.retries + 1} attempts); check the network, "
            f"proxy settings ({self._proxy_variable()}) and {self.hint}",
            kind="network",
        ) from last

    def _proxy_variable(self) -> str:
        """The proxy variable that applies to the request this thread sent last (the hop that
        failed): httpx reads ``HTTP_PROXY`` for a plain http URL, ``HTTPS_PROXY`` for https, so
        the hint names the one the person should look at."""
        url: str = getattr(self._requests, "url", "")
        return "HTTP_PROXY" if urlsplit(url).scheme == "http" else "HTTPS_PROXY"

    @contextmanager
    def slow_notice(self, attempt: int, attempts: int | None = None) -> Iterator[None]:
        """Tell ``notice`` when this attempt (of ``attempts``, default ``retries + 1``) has
        waited :data:`SLOW_NOTICE_SECONDS` (as gh and pip do), so a long wait explains
        itself; silent without a ``notice``. For callers with a retry loop of their own."""
        notice = self._notice
        total = self.retries + 1 if attempts is None else attempts
        if notice is None:
            yield
            return
        deadline = self.deadline

        def say() -> None:
            notice(
                f"waiting for {printable(self.host)}: no answer after {SLOW_NOTICE_SECONDS:g} s "
                f"(attempt {attempt + 1} of {total}; giving up in "
                f"{max(0.0, deadline.remaining()):.0f} s, at the {deadline.seconds:g} s "
                f"deadline for {deadline.scope})"
            )

        with after(SLOW_NOTICE_SECONDS, say):
            yield
