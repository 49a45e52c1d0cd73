"""What every source of plugin tarballs is: the :class:`Source` protocol and its two records.

A source (a GitHub release, an OCI reference, a tarball on disk) first *resolves* what it
offers into :class:`ReleaseCandidate` records — id, version, target, asset name and what is
known before any download (the sha256 something vouches for, the manifest asset) — and then
*fetches* one of them into one :class:`FetchedArtifact`: the bytes in the content-addressed
blob cache (``sources.cache``), their sha256 and size, and the signature material beside
them. The installer consumes a :class:`FetchedArtifact` whatever its source; a fleet builds
candidates from its lock and fetches them through the same sources.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from nexo_pkg.core.errors import NexoError

if TYPE_CHECKING:
    from nexo_pkg.core.version import Version
    from nexo_pkg.core.versionreq import VersionReq
    from nexo_pkg.sources.select import ManifestCheck

MAX_OLDER_RELEASES = 20
"""How many versions older than a refused newest one a source looks at (2 requests each)."""


class Admits(Protocol):
    """Whether a manifest's text admits the daemon a command is for: install's check, passed
    in (``sources`` knows no daemon); ``daemon`` names it in a note (``0.2.1 (--nexo-version)``)."""

    @property
    def daemon(self) -> str: ...

    def __call__(self, manifest_text: str) -> bool: ...


def note(text: str) -> None:
    """Say which older version a source chose in place of its newest (a ``note:`` line)."""
    from nexo_pkg.core.output import say  # noqa: PLC0415 - only when one is chosen
    from nexo_pkg.core.terminal import printable  # noqa: PLC0415

    say(printable(f"note: {text}"))


@dataclass(frozen=True)
class SourceRequest:
    """What the command asks of a source: the targets it takes (best first; ``None``: every
    target a version ships, as a lock asks), the installer's check of a release's manifest
    asset, the plugin id it must be (``None``: any), and the version installed (``upgrade``,
    ``outdated``). A source may answer that its newest version is the one ``installed`` from
    less than the whole judgement of a version (nothing is installed then), as
    :class:`~nexo_pkg.sources.releases.GitHubReleaseSource` does from its tarball names;
    with ``compares_only`` (the command only compares what the source offers with the
    version installed: ``outdated``), it may answer any version so. A version that is
    installed is always judged whole."""

    targets: tuple[str, ...] | None
    manifest_problem: ManifestCheck
    expected_id: str | None = None
    installed: str | None = None
    compares_only: bool = False


@dataclass(frozen=True)
class Origin:
    """Where a candidate comes from.

    ``source`` is the ``--json``/receipt source object (its ``type`` names the source:
    ``github-releases``, ``oci-registry``, ``local-file``); ``display`` is how a person reads
    it. ``owner``/``repo``/``tag`` name the GitHub release a signature must be bound to, whose
    trust-policy entries apply (``None``: every author entry is a candidate, as for a local
    tarball). ``requested_tag`` is what the user asked for (``latest`` or an explicit tag),
    recorded as the receipt's ``tag``; ``None``: ``tag``. ``published`` fixes the receipt's
    install time (reproducible fleets); ``None``: now. ``signatures_at`` says where signatures
    are looked for when not beside the asset (a registry's referrers), for a refusal's words.
    """

    source: Mapping[str, Any]
    display: str
    owner: str | None = None
    repo: str | None = None
    tag: str | None = None
    requested_tag: str | None = None
    published: str | None = None
    signatures_at: str | None = None

    @property
    def type(self) -> str:
        return str(self.source["type"])

    @property
    def registry(self) -> str | None:
        """The pinned ``oci://…@sha256:…`` reference of a registry version, else ``None``."""
        value = self.source.get("registry")
        return value if isinstance(value, str) else None


@dataclass(frozen=True)
class ReleaseCandidate:
    """One target of one version a source offers, as known before its bytes are fetched.

    ``sha256`` is the digest something trustworthy vouches for beforehand (a lock file, a
    registry descriptor), ``None`` when only the fetch learns it (a release's sidecar is read
    then). ``manifest`` is the release's manifest asset as ``(name, text)`` when the source
    has one. ``locator`` is the source's own handle on the bytes (a release asset, a
    registry reference); only the source that made the candidate reads it.
    """

    plugin_id: str
    version: str
    target: str
    asset_name: str
    origin: Origin
    sha256: str | None = None
    size: int | None = None
    manifest: tuple[str, str] | None = None
    manifest_digest: str | None = None
    locator: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class FetchedArtifact:
    """A fetched, checksummed tarball: the one record the installer takes.

    ``path`` is the blob in the one content-addressed cache (read in place, never copied; it
    stays while the command's context is open). ``checksums`` names what its sha256 was
    checked against (``sidecar``, ``digest``). ``material`` is the signature material for
    the trust step (file name -> file or bytes).
    """

    path: Path
    sha256: str
    size: int
    asset_name: str
    plugin_id: str
    version: str
    target: str
    origin: Origin
    checksums: tuple[str, ...]
    material: Mapping[str, Path | bytes]
    manifest: tuple[str, str] | None = None


def fetched_artifact(
    candidate: ReleaseCandidate,
    blob: Path,
    sha256: str,
    checked: tuple[str, ...],
    material: dict[str, Path | bytes],
) -> FetchedArtifact:
    """The record of ``candidate`` fetched as ``blob`` (its size read from disk; ``io`` when
    it cannot be)."""
    try:
        size = blob.stat().st_size
    except OSError as exc:
        raise NexoError(f"cannot read {blob}: {exc.strerror or exc}", kind="io") from exc
    return FetchedArtifact(
        path=blob,
        sha256=sha256,
        size=size,
        asset_name=candidate.asset_name,
        plugin_id=candidate.plugin_id,
        version=candidate.version,
        target=candidate.target,
        origin=candidate.origin,
        checksums=checked,
        material=material,
        manifest=candidate.manifest,
    )


@dataclass(frozen=True)
class Offered:
    """A version a source offers, read without downloading any tarball.

    ``label`` is where it was read (a release tag, a registry index digest, a file name);
    ``tag`` the release tag when the source has one. ``where`` names the version in a
    message (``owner/repo@tag``, ``host/repo id version``), ``said`` says it is the newest
    the source offers (``the latest release of owner/repo (v1.2.0) carries weather 1.2.0``),
    ``unit`` is what the source calls a version (``release``, ``version``) and ``pin`` how a
    fleet names one (``owner/repo@tag``, ``a tag``); ``pinned`` is the source text that names
    exactly this version (``owner/repo@v1.2.0``, ``oci://…@sha256:…``, what a lock records),
    ``copied_from`` the GitHub release a registry copy was mirrored from (``owner/repo@tag``).
    :attr:`manifest` is read on demand (a registry asks for a target manifest).
    """

    plugin_id: str
    version: str
    label: str
    where: str
    said: str
    unit: str
    pin: str
    pinned: str
    tag: str | None = None
    copied_from: str | None = None
    published: str | None = None
    read_manifest: Callable[[], str | None] = field(default=lambda: None, compare=False, repr=False)

    @property
    def manifest(self) -> str | None:
        """The plugin manifest the version carries beside its tarballs (a release's manifest
        asset, a registry annotation), read when first asked; ``None`` without one."""
        return self.read_manifest()


class Source(Protocol):
    """A place plugin tarballs come from. Every failure is a :class:`NexoError` with a kind
    of ``core.kinds`` (``release_not_found``, ``asset_not_found``, ``checksum_mismatch``,
    ``network``, ``io`` …); nothing is left in the cache but whole blobs."""

    def resolve(self) -> list[ReleaseCandidate]:
        """The candidates this source offers for the asked targets, best first; raises
        ``asset_not_found`` when it offers none."""
        ...

    def fetch(self, candidate: ReleaseCandidate, *, material: bool = True) -> FetchedArtifact:
        """``candidate``'s bytes in the blob cache, checked against every digest known for
        them, with its signature material (none asked for when ``material`` is false: the
        trust mode is ``ignore``)."""
        ...

    def newest(self) -> Offered:
        """The version this source names (a tag, a digest, a file), or, naming none, the
        newest it offers; read once, without any tarball. Raises ``release_not_found``,
        ``asset_not_found`` (another plugin than the one expected), ``network`` …"""
        ...

    def compatible(
        self, admits: Admits, *, above: str | None = None, doing: str = "installing"
    ) -> Source | None:
        """When this source names no version and its newest carries a manifest ``admits``
        refuses: the source of the newest older version whose manifest it accepts (newer
        than ``above`` when given: an upgrade's installed version), said in a ``note:``
        naming what is ``doing`` with it. ``None`` otherwise, or when no older version is
        known to be accepted (the caller's check then refuses the newest)."""
        ...

    def matching(self, requirement: VersionReq, admits: Admits | None = None) -> Source:
        """The source of the newest version matching ``requirement`` (and accepted by
        ``admits`` when given), as a lock chooses (itself when it names a version). Raises
        ``release_not_found`` when the version chosen does not match."""
        ...

    def every_target(self, *, vouched: bool = False) -> list[ReleaseCandidate]:
        """Every target of :meth:`newest`'s version, without a download; with ``vouched``,
        each with the sha256 the source vouches for (what a lock pins)."""
        ...

    def version_tags(self) -> list[tuple[Version, str]] | None:
        """Every semver tag naming a version of the source, with its version, highest first,
        for a source whose versions are tags an operator picks from (a registry); ``None``
        for one whose releases are not listed (a GitHub release, a file)."""
        ...
