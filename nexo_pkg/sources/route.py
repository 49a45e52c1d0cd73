"""Routing: the one place that knows the kinds of source.

Every question a command asks about where a plugin comes from goes through here or through
the :class:`~nexo_pkg.sources.base.Source` a function here opens: a source text
(:func:`open_source`: ``oci://…``, ``owner/repo[@tag]``, a local tarball), a receipt's or an
install plan's origin (:func:`reopen`), a lock file's row (:func:`locked_origin`), a fleet
file's source (:func:`check_remote`), what many lookups read at once
(:func:`prefetch_newest`), how an origin is named (:func:`origin_label`; whether it names
a place at all: :func:`origin_place`; whether it names anything known:
:func:`origin_known`), whether ``mirror``
copies a version as it is (:func:`copies_as_is`), whether a source reads the registry
credentials (:func:`reads_registry_config`), the words of an ``install`` command that
reaches an origin again (:func:`reinstall_words`). :data:`KINDS` lists the kinds: the ``type``
their origins record, the module that implements them (imported on first use, so ``install
PATH`` never loads the registry's client and ``list`` no kind's module), the scheme of their
source texts and how their origins are named. A new source is one entry there and the module
it names (see docs/architecture.md, "How to add a new source").
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources.oci_reference import parse_reference, registry_label
from nexo_pkg.sources.spec import (
    MAX_OWNER_LENGTH,
    MAX_REPO_LENGTH,
    GitHubSource,
    parse_source,
    release_label,
    validate_name,
    validate_tag,
)

if TYPE_CHECKING:
    from nexo_pkg.sources.base import Origin, Source, SourceRequest
    from nexo_pkg.sources.context import SourceContext
    from nexo_pkg.trust.api import TrustPolicy

__all__ = [
    "KINDS",
    "UNKNOWN_ORIGIN",
    "Kind",
    "Prefetched",
    "check_copied_from",
    "check_locked",
    "check_remote",
    "copies_as_is",
    "locked_origin",
    "open_source",
    "origin_known",
    "origin_label",
    "origin_place",
    "pins_manifests",
    "pins_upgrade",
    "prefetch_newest",
    "reach_flags",
    "reads_registry_config",
    "reinstall_words",
    "reopen",
    "tagged_release",
    "upgrades_from",
]


class KindModule(Protocol):
    """What the module of a kind provides beside its :class:`Source` class."""

    def open_text(self, text: str, context: SourceContext, request: SourceRequest) -> Source:
        """The source a text with the kind's scheme names (scheme kinds only)."""
        ...

    def check_text(self, text: str) -> None:
        """Raise ``source_invalid`` for a malformed text with the kind's scheme."""
        ...

    def reopen(
        self,
        origin: Mapping[str, Any],
        context: SourceContext,
        request: SourceRequest,
        *,
        follow: bool,
        tag: str | None = None,
        known: Any = None,
    ) -> Source | None:
        """The version ``origin`` names, or with ``follow`` the newest of where it came
        from (``tag``: that tag's); ``None`` when the origin cannot be asked again."""
        ...

    def prefetch_newest(
        self, origins: Sequence[Mapping[str, Any]], context: SourceContext, *, jobs: int = 0
    ) -> Any:
        """What the kind reads at once of the newest versions where ``origins`` came from,
        as its ``reopen`` takes it in ``known`` (``None``: nothing; ``jobs``: also those a
        batch leaves out, one by one). Raises ``rate_limited`` when its service says so."""
        ...

    def locked_origin(
        self,
        resolved: str,
        *,
        asset_name: str,
        manifest_digest: str | None,
        github: str | None,
        published: str | None,
        policy: TrustPolicy,
    ) -> Origin:
        """The origin of one target a lock pins from the version ``resolved``."""
        ...


class Label(Protocol):
    """How a kind names one of its origins (a receipt's source object) to a person."""

    def __call__(self, origin: Mapping[str, Any], *, exact: bool) -> str | None: ...


@dataclass(frozen=True)
class Kind:
    """One kind of source: the ``type`` its origins (receipts, ``--json``) record, ``load``
    giving the module implementing it (a :class:`KindModule`), and the prefix of its source
    texts (``None``: the ``owner/repo[@tag]`` or path grammar of
    :mod:`nexo_pkg.sources.spec`). ``follows``: whether an install from it is upgraded from
    it (a file is not: it is what it is). ``copied``: whether ``mirror`` copies a version
    of it as it is, every tag and referrer with its bytes unchanged (a registry's), rather
    than building a registry artifact from it (a release's). ``tag_pins``: whether the tag an
    install from it recorded is a pin its upgrade stays on, and its target one the upgrade
    keeps (a release's); a registry's tag is the release it was mirrored from, and its
    upgrade takes the host's targets. ``label``: how a person reads
    one of its origins (``exact``: with the version installed; ``None``: it names no place),
    from the kind's grammar, so that ``list`` loads no kind's module. ``check``: the check of
    a source text of the kind, when its grammar is all it takes (a registry reference), so
    that reading a lock loads no kind's client; ``None``: the module's ``check_text``.
    ``registry``: whether its sources are reached with the registry credentials
    (``--registry-config``) and ``--plain-http``; ``github``: whether through the GitHub API
    (``--github-api-url``). ``pin``: why a version a lock pinned from a source text of the
    kind (both well-formed) is no pin of that source (``None``: it is one), from the kind's
    grammar, so that reading a lock loads no kind's client."""

    type: str
    load: Callable[[], KindModule]
    scheme: str | None = None
    follows: bool = True
    copied: bool = False
    tag_pins: bool = True
    label: Label | None = None
    check: Callable[[str], object] | None = None
    registry: bool = False
    github: bool = False
    pin: Callable[[str, str], str | None] | None = None


# Each kind's module is imported on first use: the registry's brings its client (and
# httpx), and ``list``, which asks only how to name an origin, loads none.
def _oci_source() -> KindModule:
    from nexo_pkg.sources import oci_source  # noqa: PLC0415

    return oci_source


def _releases() -> KindModule:
    from nexo_pkg.sources import releases  # noqa: PLC0415

    return releases


def _local() -> KindModule:
    from nexo_pkg.sources import local  # noqa: PLC0415

    return local


def _registry_pin(text: str, resolved: str) -> str | None:
    """Why ``resolved`` is no version pinned from the registry source ``text``: a lock pins
    the index digest in the source's repository (a tag moves; mirrors are the wanted set's
    ``[registries]``, never the lock's)."""
    source, pinned = parse_reference(text), parse_reference(resolved)
    if pinned.digest is None:
        return "it names no index digest (oci://HOST/NAME@sha256:…), and a tag moves"
    if pinned.base.casefold() != source.base.casefold():
        return f"it is not in {source.base}, the entry's source"
    return None


def _release_pin(text: str, resolved: str) -> str | None:
    """Why ``resolved`` is no release pinned from the release source ``text``: a lock pins a
    tag of the source's repository (without one, the latest release, which moves)."""
    source, pinned = parse_source(text), parse_source(resolved)
    if not isinstance(source, GitHubSource) or not isinstance(pinned, GitHubSource):
        return None  # refused by the kind's check before
    if pinned.tag is None:
        return "it names no tag (owner/repo@tag), and the latest release moves"
    named = f"{source.owner}/{source.repo}"
    if f"{pinned.owner}/{pinned.repo}".casefold() != named.casefold():
        return f"it is not a release of {named}, the entry's source"
    return None


_RELEASES = Kind("github-releases", _releases, label=release_label, github=True, pin=_release_pin)
_LOCAL = Kind("local-file", _local, follows=False)

KINDS: tuple[Kind, ...] = (
    Kind(
        "oci-registry",
        _oci_source,
        scheme="oci://",
        copied=True,
        tag_pins=False,
        label=registry_label,
        check=parse_reference,
        registry=True,
        pin=_registry_pin,
    ),
    _RELEASES,
    _LOCAL,
)
"""Every kind of source, one line each. A text without a scheme is ``owner/repo[@tag]`` or
the path of a local tarball (:func:`~nexo_pkg.sources.spec.parse_source`)."""


def _scheme_kind(text: str) -> Kind | None:
    return next((k for k in KINDS if k.scheme is not None and text.startswith(k.scheme)), None)


def _kind_of_type(source_type: object) -> Kind | None:
    return next((kind for kind in KINDS if kind.type == source_type), None)


def upgrades_from(origin: Mapping[str, Any]) -> bool:
    """Whether an install whose ``origin`` (a receipt's or a plan's source object) is has a
    source its upgrade asks again: a local file has none, it is what it is (an unknown
    ``type`` is tried, and its upgrade says why it cannot be)."""
    kind = _kind_of_type(origin.get("type"))
    return kind is None or kind.follows


def origin_known(origin: Mapping[str, Any]) -> bool:
    """Whether an install whose ``origin`` (a receipt's or a plan's source object) is names
    where it came from as its kind records it: a local file (it is what it is), or a kind's
    place its upgrade asks again (a release's ``owner/repo``, a registry's pinned reference).
    False for a ``type`` no kind records (empty, or written by hand) and for a kind's origin
    without its coordinates: nothing can be asked again, and only an install that records
    where the plugin comes from makes it known (``install SOURCE --force``)."""
    kind = _kind_of_type(origin.get("type"))
    if kind is None:
        return False
    if not kind.follows:
        return True
    return kind.label is not None and kind.label(origin, exact=False) is not None


def pins_upgrade(origin: Mapping[str, Any]) -> bool:
    """Whether the tag and target an install whose ``origin`` is recorded bind its upgrade
    (a release's do; a registry's tag is the release it was mirrored from, and its upgrade
    takes the host's targets; see :class:`Kind`; an unknown ``type``: they do)."""
    kind = _kind_of_type(origin.get("type"))
    return kind is None or kind.tag_pins


def open_source(text: str, context: SourceContext, request: SourceRequest) -> Source:
    """The source ``text`` names. Raises ``source_invalid`` (exit 2) for a malformed one."""
    kind = _scheme_kind(text)
    if kind is None:
        kind = _RELEASES if isinstance(parse_source(text), GitHubSource) else _LOCAL
    return kind.load().open_text(text, context, request)


@dataclass(frozen=True)
class Prefetched:
    """What :func:`prefetch_newest` read at once of the newest versions where many origins
    came from: ``found`` what each kind (by ``type``) read, as :func:`reopen` passes it on;
    ``stopped`` the answer of a kind whose service said its rate limit is spent (nothing
    more is to be asked of it in the command)."""

    found: Mapping[str, Any] = field(default_factory=dict)
    stopped: dict[str, NexoError] = field(default_factory=dict)
    _guard: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def stopped_for(self, origin: Mapping[str, Any]) -> NexoError | None:
        """The answer of the service ``origin`` (a receipt's source object) is asked of,
        when it said its rate limit is spent; ``None``: it may be asked."""
        with self._guard:
            return self.stopped.get(_service(origin))

    def stop(self, origin: Mapping[str, Any], error: NexoError) -> NexoError:
        """Record ``error``, a rate-limit answer to a lookup of ``origin``, as the service's:
        nothing more is asked of it (:meth:`stopped_for`). Returns the answer kept, the
        first one the service gave (lookups side by side may each get one)."""
        with self._guard:
            return self.stopped.setdefault(_service(origin), error)


def first_per_service(answers: Sequence[tuple[Mapping[str, Any], NexoError]]) -> list[NexoError]:
    """Each of ``answers`` (an origin and the rate-limit answer its lookup got) replaced by
    the first one in their order that the same service gave: a spent rate limit is the
    service's, not one plugin's, and a report in a stable order names it once."""
    first: dict[str, NexoError] = {}
    return [first.setdefault(_service(origin), error) for origin, error in answers]


def stopped_in_order(
    lookups: Sequence[tuple[Mapping[str, Any] | None, NexoError | None]],
) -> list[NexoError | None]:
    """For lookups in their order (each the origin it asked about, ``None`` for one that asked
    no service, and the rate-limit answer it got, ``None`` for any other outcome), the answer
    each ends with when they run one at a time: from the first lookup its service answered
    so, every lookup of that service fails with that answer (one at a time, those after it
    ask nothing; side by side, some were answered before the answer came). ``None``: the
    lookup keeps its outcome."""
    first: dict[str, NexoError] = {}
    ended: list[NexoError | None] = []
    for origin, limited in lookups:
        if origin is None:
            ended.append(None)
            continue
        service = _service(origin)
        if limited is not None:
            first.setdefault(service, limited)
        ended.append(first.get(service))
    return ended


def _service(origin: Mapping[str, Any]) -> str:
    """The service a lookup of ``origin`` asks, as a key: its kind (one API a command), and
    for a registry version its host (each registry has limits of its own)."""
    kind = str(origin.get("type"))
    registry = origin.get("registry")
    if not isinstance(registry, str):
        return kind
    host = registry.removeprefix("oci://").partition("/")[0].lower()
    return f"{kind} {host}"


def prefetch_newest(
    origins: Sequence[Mapping[str, Any]], context: SourceContext, *, jobs: int = 0
) -> Prefetched:
    """Read at once what each kind can of the newest versions where ``origins`` (receipts'
    source objects) came from, before their lookups (GitHub: the latest releases, with a
    token many to a GraphQL request; ``jobs``: those still missing one by one, ``jobs`` at
    a time). A kind that answers ``rate_limited`` is in :attr:`Prefetched.stopped`; other
    failures are raised."""
    found: dict[str, Any] = {}
    stopped: dict[str, NexoError] = {}
    for kind in KINDS:
        mine = [origin for origin in origins if origin.get("type") == kind.type]
        if not mine:
            continue
        try:
            read = kind.load().prefetch_newest(mine, context, jobs=jobs)
        except NexoError as error:
            if error.kind != "rate_limited":
                raise
            stopped[kind.type] = error
            continue
        if read is not None:
            found[kind.type] = read
    return Prefetched(found, stopped)


def reopen(
    origin: Mapping[str, Any],
    context: SourceContext,
    request: SourceRequest,
    *,
    follow: bool = False,
    tag: str | None = None,
    known: Prefetched | None = None,
) -> Source | None:
    """The source of the version a receipt's or an install plan's ``origin`` (its source
    object: ``type`` and the kind's fields) names; with ``follow``, of the newest version
    where it came from (``tag``: that one; ``known``: what :func:`prefetch_newest` already
    read). ``None`` for an origin that cannot be asked again (a local file, a receipt
    without its coordinates)."""
    kind = _kind_of_type(origin.get("type"))
    if kind is None:
        return None
    read = None if known is None else known.found.get(kind.type)
    return kind.load().reopen(origin, context, request, follow=follow, tag=tag, known=read)


NAMELESS = "local file"
"""How an origin that names no place to ask again is read (a local tarball's)."""

UNKNOWN_ORIGIN = "origin unknown"
"""How an origin that names nothing known is read (:func:`origin_known`: an unknown or empty
``type``, a kind's origin without its coordinates)."""


def origin_place(origin: Mapping[str, Any], *, exact: bool = False) -> str | None:
    """The place an install whose ``origin`` (a receipt's source object) came from names,
    as :func:`origin_label` reads it; ``None`` for an origin that names no place to ask
    again (a local file, a receipt without its coordinates)."""
    kind = _kind_of_type(origin.get("type"))
    return None if kind is None or kind.label is None else kind.label(origin, exact=exact)


def origin_label(origin: Mapping[str, Any], *, exact: bool = False) -> str:
    """Where an install whose ``origin`` (a receipt's source object) is came from, as a
    person reads it: ``owner/repo``, a registry repository (``exact``: with the version
    installed, ``owner/repo@tag`` or the pinned reference), ``local file`` for a local
    file's origin, ``origin unknown`` for one that names nothing known (:func:`origin_known`)."""
    named = origin_place(origin, exact=exact)
    if named is not None:
        return named
    return NAMELESS if origin_known(origin) else UNKNOWN_ORIGIN


def copies_as_is(text: str) -> bool:
    """Whether ``mirror`` copies the version ``text`` names as it is, every tag and referrer
    with its bytes unchanged (a registry version), rather than building a registry artifact
    from a release (``owner/repo@tag``, see :func:`tagged_release`)."""
    kind = _scheme_kind(text)
    return kind is not None and kind.copied


def pins_manifests(text: str) -> bool:
    """Whether a lock pins each target of a version of the source ``text`` (a lock's
    ``source``) by its manifest digest as well as its tarball's: a registry's does."""
    kind = _scheme_kind(text)
    return kind is not None and kind.registry


def reads_registry_config(text: str) -> bool:
    """Whether the source ``text`` names (a lock's ``source``) is reached with the registry
    credentials, so that a named ``--registry-config`` must be readable before it is asked."""
    kind = _scheme_kind(text)
    return kind is not None and kind.registry


def reach_flags(text: str) -> tuple[str, ...]:
    """The flags a command naming the source ``text`` needs to reach it as its install did:
    ``--plain-http`` for a registry on this machine (the only host plain HTTP may reach, and
    how a local registry or mirror is served: a receipt does not record how it was
    reached); nothing for any other text."""
    kind = _scheme_kind(text)
    if kind is None or not kind.registry:
        return ()
    try:
        loopback = parse_reference(text).is_loopback
    except NexoError:
        return ()
    return ("--plain-http",) if loopback else ()


def reinstall_words(
    origin: Origin, *, plain_http: bool, github_api_url: str | None
) -> tuple[str, tuple[str, ...]]:
    """The source an ``install`` command takes to install the version ``origin`` names
    again (the release, the pinned registry reference, a file's path; ``SOURCE`` for an
    origin that records none), and the flags its source was reached with that the command
    must carry: ``--plain-http`` to a registry, ``--github-api-url`` to a GitHub release."""
    named = origin_place(origin.source, exact=True)
    kind = _kind_of_type(origin.type)
    if kind is None or named is None:
        path = origin.source.get("path")
        return (path if isinstance(path, str) else "SOURCE"), ()
    flags: list[str] = []
    if kind.registry and plain_http:
        flags.append("--plain-http")
    if kind.github and github_api_url:
        flags += ["--github-api-url", github_api_url]
    return named, tuple(flags)


def locked_origin(
    source_text: str,
    resolved: str,
    *,
    asset_name: str,
    manifest_digest: str | None,
    github: str | None,
    published: str | None,
    policy: TrustPolicy,
) -> Origin:
    """The origin of one target a lock entry pins: ``source_text`` is the entry's source,
    ``resolved`` the version it pinned; the receipt and the signature check name it."""
    kind = _scheme_kind(source_text) or _RELEASES
    return kind.load().locked_origin(
        resolved,
        asset_name=asset_name,
        manifest_digest=manifest_digest,
        github=github,
        published=published,
        policy=policy,
    )


def tagged_release(text: str) -> GitHubSource | None:
    """The GitHub release ``owner/repo@tag`` names (what ``mirror`` copies), ``None`` for
    any other source text; ``source_invalid`` for a malformed one."""
    spec = parse_source(text)
    return spec if isinstance(spec, GitHubSource) and spec.tag is not None else None


def check_remote(text: str) -> None:
    """Raise ``source_invalid`` unless ``text`` names a source a fleet can lock: one with a
    scheme (well-formed) or ``owner/repo[@tag]``, not a local path."""
    kind = _scheme_kind(text) or _RELEASES
    (kind.check or kind.load().check_text)(text)


def check_locked(text: str, resolved: str) -> None:
    """Raise ``source_invalid`` unless ``resolved``, the version a lock pinned from the source
    ``text``, is a well-formed pin of it (a release's ``owner/repo@tag`` of its repository, a
    registry's ``…@sha256:…`` in its repository): what ``sync`` reopens the version with."""
    kind = _scheme_kind(text) or _RELEASES
    if (_scheme_kind(resolved) or _RELEASES) is not kind:
        raise NexoError(f"{resolved!r} names no version of {text!r}", kind="source_invalid")
    (kind.check or kind.load().check_text)(resolved)
    why = kind.pin(text, resolved) if kind.pin is not None else None
    if why is not None:
        raise NexoError(
            f"{resolved!r} is no pinned version of {text!r}: {why}", kind="source_invalid"
        )


def check_copied_from(text: str, github: str) -> None:
    """Raise ``source_invalid`` unless ``github``, the GitHub release a lock entry of the
    source ``text`` says its version was copied from, is ``owner/repo@tag`` and the source a
    registry: a copy's origin picks the trust-policy entries that judge it, and a release is
    its own origin."""
    kind = _scheme_kind(text) or _RELEASES
    if not kind.registry:
        raise NexoError(
            f"{text!r} is no registry: only a registry copy names the release it was copied from",
            kind="source_invalid",
        )
    # The grammar a registry copy's origin annotation is read with (artifact.GitHubOrigin),
    # without reading the file system as a source text may.
    hint = "expected the owner/repo@tag of a GitHub release"
    name, at, tag = github.partition("@")
    owner, slash, repo = name.partition("/")
    if not (at and slash):
        raise NexoError(
            f"invalid release {github!r}: it is not owner/repo@tag; {hint}", kind="source_invalid"
        )
    for what, value, longest in (
        ("owner", owner, MAX_OWNER_LENGTH),
        ("repo", repo, MAX_REPO_LENGTH),
    ):
        validate_name(value, what=what, max_length=longest, text=github, label="release", hint=hint)
    validate_tag(tag, text=github, label="release", hint=hint)
