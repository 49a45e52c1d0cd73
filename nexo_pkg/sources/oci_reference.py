"""``oci://HOST[:PORT]/NAMESPACE/NAME[:TAG|@sha256:DIGEST]`` references.

The grammar follows the distribution spec's (repository path components ``[a-z0-9]+`` joined
by ``.``, ``_``, ``__`` or ``-``; tags ``[A-Za-z0-9_][A-Za-z0-9._-]{0,127}``), so nothing that
reaches a URL path needs quoting. Anything else is ``source_invalid``.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from nexo_pkg.core.credentials import without_credentials
from nexo_pkg.core.errors import EXIT_USAGE, NexoError

SCHEME = "oci://"


_HOST = re.compile(
    r"^(?:[A-Za-z0-9][A-Za-z0-9-]{0,62}(?:\.[A-Za-z0-9-]{1,63})*|\[[0-9a-fA-F:]+\])(?::[0-9]{1,5})?$"
)
_COMPONENT = re.compile(r"^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
MAX_REPOSITORY_LENGTH = 255


@dataclass(frozen=True)
class OciReference:
    """A parsed ``oci://`` reference; ``tag`` and ``digest`` may both be ``None`` (latest)."""

    host: str
    repository: str
    tag: str | None = None
    digest: str | None = None

    @property
    def base(self) -> str:
        """``oci://host/repository`` without tag or digest."""
        return f"{SCHEME}{self.host}/{self.repository}"

    def with_tag(self, tag: str) -> OciReference:
        return replace(self, tag=tag, digest=None)

    def with_digest(self, digest: str) -> OciReference:
        return replace(self, tag=None, digest=digest)

    @property
    def reference(self) -> str | None:
        """What goes into ``/manifests/<reference>``: the digest wins over the tag."""
        return self.digest or self.tag

    def __str__(self) -> str:
        if self.digest:
            return f"{self.base}@{self.digest}"
        if self.tag:
            return f"{self.base}:{self.tag}"
        return self.base

    @property
    def is_loopback(self) -> bool:
        """Whether the host is this machine (the only place ``--plain-http`` is allowed)."""
        if self.host.startswith("["):
            name = self.host[1 : self.host.index("]")]
        else:
            name = self.host.split(":", 1)[0]
        return is_loopback_name(name)


def is_loopback_name(name: str) -> bool:
    """Whether a host name or address (no port, no brackets) is this machine: ``localhost``
    or a loopback address."""
    if name.lower() == "localhost":  # host names are case-insensitive
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def registry_label(origin: Mapping[str, Any], *, exact: bool) -> str | None:
    """How a person reads a registry origin (a receipt's source object): the repository of
    its pinned reference, or ``exact``, the pinned reference itself; ``None`` without one."""
    registry = origin.get("registry")
    if not isinstance(registry, str):
        return None
    return registry if exact else registry.split("@", 1)[0]


def _user_info(text: str) -> str | None:
    """What stands before an ``@`` in the host part of an ``oci://`` reference (a user name
    and password written into it, ``oci://USER:PASSWORD@HOST/…``), ``None`` without one."""
    if not text.startswith(SCHEME):
        return None
    host = text[len(SCHEME) :].partition("/")[0]
    return host.rpartition("@")[0] if "@" in host else None


def masked(text: str) -> str:
    """``text`` as it may be shown: credentials written into an ``oci://`` reference's host
    part become ``***`` (never printed, never in a ``--json`` document)."""
    return without_credentials(text) if _user_info(text) is not None else text


def _invalid(text: str, why: str) -> NexoError:
    """``source_invalid``: a usage error (exit 2), as for a malformed GitHub source."""
    shown = masked(text)
    return NexoError(
        f"invalid registry reference {shown!r}: {why}; expected "
        "oci://HOST/NAMESPACE/NAME[:TAG] or oci://HOST/NAMESPACE/NAME@sha256:DIGEST",
        kind="source_invalid",
        exit_code=EXIT_USAGE,
        details={"source": shown},
    )


def _valid_literal(host: str) -> bool:
    """Whether a bracketed host is an IPv6 address (``[1::2::3]`` and ``[::::]`` are not), a
    name that begins ``xn--`` decodes as IDNA, and a port, when given, is one (1-65535);
    other names are left to the host pattern."""
    name, port = (host, "") if host.endswith("]") or ":" not in host else host.rsplit(":", 1)
    if port and not 0 < int(port) < 65536:
        return False
    if not name.startswith("["):
        if not name.lower().startswith("xn--"):
            return True
        # A label "xn--" begins must be Punycode: the HTTP client decodes it before it
        # connects (``xn--zz`` is no host name).
        from nexo_pkg.net.api import is_http_url  # noqa: PLC0415 (only for such a name)

        return is_http_url(f"https://{name}/")
    try:
        ipaddress.IPv6Address(name[1:-1])
    except ValueError:
        return False
    return True


def parse_reference(text: str) -> OciReference:
    """Parse an ``oci://`` reference; raise ``source_invalid`` for anything malformed."""
    if not text.startswith(SCHEME):
        raise _invalid(text, "it does not start with oci://")
    if _user_info(text) is not None:
        raise _invalid(
            text,
            "credentials do not go in the reference (it is printed, logged and written to "
            "locks and receipts); put them in the registry config (docker login, "
            "REGISTRY_AUTH_FILE or --registry-config)",
        )
    if any(ord(char) <= 0x20 or ord(char) == 0x7F for char in text) or "%" in text:
        raise _invalid(text, "it contains whitespace, control characters or percent-escapes")
    rest = text[len(SCHEME) :]
    host, slash, path = rest.partition("/")
    if not slash or not path:
        raise _invalid(text, "a repository path must follow the host")
    if not _HOST.match(host) or not _valid_literal(host):
        raise _invalid(text, f"{host!r} is not a registry host[:port]")
    digest: str | None = None
    tag: str | None = None
    if "@" in path:
        path, _, digest = path.partition("@")
        if not _DIGEST.fullmatch(digest):
            raise _invalid(text, "the digest must be sha256: followed by 64 lower-case hex digits")
    last = path.rsplit("/", 1)[-1]
    if ":" in last:
        path, _, tag = path.rpartition(":")
        if not _TAG.fullmatch(tag):
            raise _invalid(text, "the tag may use letters, digits, '.', '_' and '-' (128 at most)")
    if len(path) > MAX_REPOSITORY_LENGTH:
        raise _invalid(text, f"the repository path is longer than {MAX_REPOSITORY_LENGTH}")
    components = path.split("/")
    if not all(_COMPONENT.fullmatch(component) for component in components):
        raise _invalid(
            text, "repository path components are lower-case letters and digits joined by . _ -"
        )
    return OciReference(host=host, repository=path, tag=tag, digest=digest)
