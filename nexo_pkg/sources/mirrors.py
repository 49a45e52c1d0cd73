"""Registry mirrors: where the bytes a lock names may be fetched from besides their registry
(docs/fleet.md, "Registry mirrors").

Per registry host, in order: ``--registry-mirror HOST=MIRROR`` flags, then
:data:`ENVIRONMENT`, then the wanted set's ``[registries."HOST"] mirrors``. ``MIRROR`` is
``HOST[:PORT][/PATH]``: the repository ``NS/NAME`` is looked up as ``PATH/NS/NAME``. A mirror
is trusted for bytes only: everything fetched from it is checked against the lock's digests
and the trust policy, and what to fetch (tags, versions) is never asked of it. A malformed
``HOST=MIRROR`` is a usage error (exit 2, kind ``usage``).
"""

from __future__ import annotations

import os
from dataclasses import replace

from nexo_pkg.core.errors import NexoError, UsageError
from nexo_pkg.sources.oci_reference import SCHEME, OciReference, masked, parse_reference

ENVIRONMENT = "NEXO_REGISTRY_MIRRORS"

Mirrors = dict[str, tuple[str, ...]]


def check_mirror(host: str, mirror: str, where: str) -> tuple[str, str]:
    """``(host, mirror)`` validated as registry host and ``HOST[:PORT][/PATH]``; a
    :class:`UsageError` naming ``where`` otherwise."""
    mirror = mirror.strip().removeprefix("oci://").rstrip("/")
    for role, value in (("host", host), ("mirror", mirror)):
        why = _problem(value, with_path=role == "mirror")
        if why is not None:
            raise UsageError(
                f"{where}: {_shown(host)}={_shown(mirror)} is not HOST=MIRROR (registry hosts, "
                f"the mirror optionally with a /PATH prefix): the {role} {_shown(value)!r} {why}"
            )
    return host, mirror


def _problem(value: str, *, with_path: bool) -> str | None:
    """Why ``value`` is not a registry ``HOST[:PORT]`` (``[/PATH]`` when ``with_path``), in
    words about ``value`` itself (not about the reference it is checked as), else ``None``."""
    form = "HOST[:PORT][/PATH]" if with_path else "HOST[:PORT]"
    if "://" in value:
        return f"has a URL scheme; write it as {form}"
    if not with_path and "/" in value:
        return f"has a path, so no reference would ever match it; write it as {form}"
    probe = f"{SCHEME}{value}/x"
    try:
        parse_reference(probe)
    except NexoError as error:
        reason = error.message.removeprefix(f"invalid registry reference {masked(probe)!r}: ")
        return "is refused: " + reason.split("; expected oci://", 1)[0]
    return None


def _shown(text: str) -> str:
    """A host or mirror as it may be printed: a user name and password in it masked."""
    return masked(SCHEME + text.removeprefix(SCHEME))[len(SCHEME) :]


def parse_pairs(pairs: list[str], where: str) -> Mirrors:
    """``HOST=MIRROR`` pairs in order; one host may have several mirrors."""
    found: dict[str, list[str]] = {}
    for pair in pairs:
        host, equals, mirror = pair.partition("=")
        if not equals or not host or not mirror:
            raise UsageError(f"{where}: {_shown(pair)!r} is not HOST=MIRROR")
        host, mirror = check_mirror(host.strip(), mirror, where)
        found.setdefault(host, []).append(mirror)
    return {host: tuple(items) for host, items in found.items()}


def merged(*sources: Mirrors) -> Mirrors:
    """The mirrors of every source, in order, each mirror once per host."""
    combined: dict[str, list[str]] = {}
    for source in sources:
        for host, items in source.items():
            known = combined.setdefault(host, [])
            known.extend(item for item in items if item not in known)
    return {host: tuple(items) for host, items in sorted(combined.items())}


def configured(flags: list[str] | None, wanted: Mirrors | None = None) -> Mirrors:
    """Flags first, then :data:`ENVIRONMENT`, then the wanted set's ``[registries]``."""
    from_flags = parse_pairs(flags or [], "--registry-mirror")
    text = os.environ.get(ENVIRONMENT, "")
    from_env = parse_pairs(text.replace(",", " ").split(), ENVIRONMENT)
    return merged(from_flags, from_env, wanted or {})


def candidates(reference: OciReference, mirrors: Mirrors) -> list[OciReference]:
    """Where to fetch ``reference``'s bytes from, in order: its mirrors, then itself."""
    found = []
    for mirror in mirrors.get(reference.host, ()):
        host, _, prefix = mirror.partition("/")
        repository = f"{prefix}/{reference.repository}" if prefix else reference.repository
        found.append(replace(reference, host=host, repository=repository))
    return [*found, reference]
