"""The local-tarball source: ``<id>-<version>-<target>.tar.gz`` on disk, with its ``.sha256``
sidecar and signature files beside it.

:class:`LocalTarballSource` reads the id, version and target from the file name, hashes the
file, checks the sidecar, and stores the bytes in the blob cache once (the copy is hashed
again on the way in, so a file changed meanwhile is a ``checksum_mismatch``): the installer
reads the cached blob, never the user's file.
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Any

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.files import read_regular_bytes
from nexo_pkg.sources.base import (
    Admits,
    FetchedArtifact,
    Offered,
    Origin,
    ReleaseCandidate,
    SourceRequest,
    fetched_artifact,
)
from nexo_pkg.sources.cache import CHUNK, over_download_limit, over_size_cap
from nexo_pkg.sources.checksum import one_listed, parse_sidecar, verify_checksums
from nexo_pkg.sources.hosttriple import NOARCH
from nexo_pkg.sources.select import parse_tarball_name
from nexo_pkg.sources.spec import LocalSource, parse_source
from nexo_pkg.trust import api as trust

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

    from nexo_pkg.core.versionreq import VersionReq
    from nexo_pkg.sources.context import SourceContext

SOURCE_TYPE = "local-file"
MAX_SIDECAR_BYTES = 64 * 1024


def open_text(text: str, context: SourceContext, request: SourceRequest) -> LocalTarballSource:
    """The local source of the tarball at ``text``; ``source_invalid`` for anything else."""
    spec = parse_source(text)
    if not isinstance(spec, LocalSource):
        raise NexoError(f"{text!r} is no local tarball", kind="source_invalid")
    return LocalTarballSource(spec, context, targets=request.targets or ())


def check_text(text: str) -> None:
    """A fleet names no local file: ``source_invalid``."""
    raise NexoError(
        f"source {text!r} is a local path; a fleet names owner/repo or oci:// sources",
        kind="source_invalid",
    )


def reopen(
    origin: Mapping[str, Any],
    context: SourceContext,
    request: SourceRequest,
    *,
    follow: bool,
    tag: str | None = None,
    known: object = None,
) -> None:
    """A file is not asked again: whoever installed it installs the next one."""
    del origin, context, request, follow, tag, known


def prefetch_newest(
    origins: Sequence[Mapping[str, Any]], context: SourceContext, *, jobs: int = 0
) -> None:
    """A file has no newer version to read."""
    del origins, context, jobs


def locked_origin(
    resolved: str,
    *,
    asset_name: str,
    manifest_digest: str | None,
    github: str | None,
    published: str | None,
    policy: object,
) -> Origin:
    """A lock names no local file (``fleet.lockfile`` refuses one): ``lock_invalid``."""
    del asset_name, manifest_digest, github, published, policy
    raise NexoError(
        f"a lock cannot pin the local file {resolved!r}", kind="lock_invalid", exit_code=2
    )


class LocalTarballSource:
    """A tarball on disk, for the ``targets`` asked (the host's triples; ``noarch`` always
    fits)."""

    def __init__(
        self, spec: LocalSource, context: SourceContext, *, targets: tuple[str, ...]
    ) -> None:
        self.spec = spec
        self.context = context
        self.targets = targets

    def resolve(self) -> list[ReleaseCandidate]:
        """The one candidate the file name describes. Raises ``source_invalid`` for a name
        that is not ``<id>-<version>-<target>.tar.gz``, ``asset_not_found`` for a target this
        host does not run."""
        path = self.spec.path
        parsed = parse_tarball_name(path.name)
        if parsed is None:
            raise NexoError(
                f"{path.name} is not named <id>-<version>-<target>.tar.gz; rename it as "
                "`nexo plugin pack` names a release tarball (e.g. hello-1.0.0-noarch.tar.gz, "
                "from its manifest's id and version), its .sha256 and signature files with it",
                kind="source_invalid",
                details={"source": str(path)},
            )
        plugin_id, version, target = parsed
        if target != NOARCH and target not in self.targets:
            host = ", ".join(self.targets) or "noarch only"
            raise NexoError(
                f"{path.name} is built for {target}, but this host runs {host}; pass "
                f"--target {target} to install it anyway",
                kind="asset_not_found",
                details={"target": target, "host": list(self.targets)},
            )
        origin = Origin(source={"type": SOURCE_TYPE, "path": str(path)}, display=str(path))
        return [ReleaseCandidate(plugin_id, version, target, path.name, origin)]

    def newest(self) -> Offered:
        """The version the file name carries (a file is what it is)."""
        candidate = self.resolve()[0]
        where = str(self.spec.path)
        return Offered(
            plugin_id=candidate.plugin_id,
            version=candidate.version,
            label=candidate.asset_name,
            where=where,
            said=f"{where} carries {candidate.plugin_id} {candidate.version}",
            unit="file",
            pin="a path",
            pinned=where,
        )

    def compatible(
        self, admits: Admits, *, above: str | None = None, doing: str = "installing"
    ) -> None:
        """A file has no other version: ``None``."""
        del admits, above, doing

    def matching(self, requirement: VersionReq, admits: Admits | None = None) -> LocalTarballSource:
        """A file has no other version: itself."""
        del requirement, admits
        return self

    def every_target(self, *, vouched: bool = False) -> list[ReleaseCandidate]:
        """The file's one target (its sha256 is learned by fetching it)."""
        del vouched
        return self.resolve()

    def version_tags(self) -> None:
        """A file has no tags: ``None``."""

    def fetch(self, candidate: ReleaseCandidate, *, material: bool = True) -> FetchedArtifact:
        """The file in the blob cache, checked against its sidecar, with the signature files
        beside it. Raises ``archive_unsafe`` over the download limit, ``checksum_missing``
        (no sidecar), ``checksum_mismatch``, ``io``."""
        path = self.spec.path
        limit = self.context.max_download
        hasher = hashlib.sha256()
        _read(path, limit, hasher.update)
        sha256 = hasher.hexdigest()
        sidecar_path = path.with_name(path.name + ".sha256")
        sidecar = read_sidecar(sidecar_path, path.name) if sidecar_path.is_file() else None
        listed_in = None
        if sidecar is None and not (sidecar_path.is_symlink() or sidecar_path.exists()):
            # Downloaded from a GoReleaser-shaped release: a checksums file beside it. Only
            # when nothing is in the sidecar's place: one that is not a regular file (a FIFO,
            # a directory, a dangling link) is refused as before, as a release's sidecar
            # asset is never passed over for its checksums file.
            listed = _listed_beside(path)
            if listed is not None:
                sidecar, listed_in = listed
        checked = verify_checksums(
            sha256,
            path.name,
            sidecar=sidecar,
            digest=None,
            local_dir=path.parent,
            sidecar_name=listed_in,
        )
        blob = self.context.hold(
            self.context.cache.open_blob(
                sha256, lambda sink: _read(path, limit, sink.write), durable=False
            )
        )
        found = trust.local_material(path) if material else {}
        return fetched_artifact(candidate, blob, sha256, checked, dict(found))


def read_sidecar(sidecar_path: Path, tarball_name: str) -> str:
    """The sha256 the ``.sha256`` file ``sidecar_path`` names for ``tarball_name`` (see
    :func:`~nexo_pkg.sources.checksum.parse_sidecar`), read as a regular file (never a FIFO
    swapped in) of at most :data:`MAX_SIDECAR_BYTES`: one over it is ``checksum_mismatch``, as
    a release's is, since lines past a cap would go unread (one contradicting the first, say);
    ``io`` when it cannot be read."""
    try:
        raw = read_regular_bytes(sidecar_path, MAX_SIDECAR_BYTES, follow_links=True)
    except OSError as exc:
        raise NexoError(f"cannot read {sidecar_path}: {exc.strerror}", kind="io") from exc
    if len(raw) > MAX_SIDECAR_BYTES:
        raise over_size_cap(
            sidecar_path.name,
            MAX_SIDECAR_BYTES,
            holds="a checksum file (one line: the sha256 and the tarball's name)",
            kind="checksum_mismatch",
        )
    return parse_sidecar(raw, tarball_name)


def _listed_beside(path: Path) -> tuple[str, str] | None:
    """The sha256 the checksums files beside ``path`` (``checksums.txt``, ``SHA256SUMS``,
    ``<name>_checksums.txt``) list for it, and the first that lists it (see
    :func:`~nexo_pkg.sources.checksum.one_listed`); ``None`` when none does."""
    try:
        with os.scandir(path.parent) as entries:
            names = sorted(
                entry.name
                for entry in entries
                if trust.is_checksums_file(entry.name) and entry.is_file()
            )
    except OSError:
        return None
    files: dict[str, bytes] = {}
    for name in names:
        beside = path.with_name(name)
        try:
            raw = read_regular_bytes(beside, trust.MAX_CHECKSUMS_BYTES, follow_links=True)
        except OSError as exc:
            raise NexoError(f"cannot read {beside}: {exc.strerror}", kind="io") from exc
        if len(raw) > trust.MAX_CHECKSUMS_BYTES:
            raise over_size_cap(
                name,
                trust.MAX_CHECKSUMS_BYTES,
                holds="a checksums file (a line per release asset)",
                kind="checksum_mismatch",
            )
        files[name] = raw
    return one_listed(path.name, trust.listed_sha256(path.name, files))


def _read(path: Path, limit: int, use: Callable[[bytes], object]) -> None:
    """Hand the file to ``use`` chunk by chunk; ``archive_unsafe`` past ``limit`` bytes,
    ``io`` when it cannot be read."""
    size = 0
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK):
                size += len(chunk)
                if size > limit:
                    raise over_download_limit(path.name, limit)
                use(chunk)
    except OSError as exc:
        raise NexoError(f"cannot read {path}: {exc.strerror or exc}", kind="io") from exc
