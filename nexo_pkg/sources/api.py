"""The face of ``sources``: every name another package may use, and only these.

Callers outside ``nexo_pkg.sources`` import from here (an import contract,
``faces`` in pyproject.toml, keeps it so); the modules behind it are this package's own
business. The names of the registry and GitHub clients, which bring httpx, are imported
when first asked for, so ``install PATH`` never loads them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nexo_pkg.sources.archive import (
    ArchiveLimits,
    ArchiveListing,
    TreeSink,
    check_member_names,
    inspect_archive,
    walk_archive,
)
from nexo_pkg.sources.artifact import (
    GitHubOrigin,
    canonical,
)
from nexo_pkg.sources.base import (
    Admits,
    FetchedArtifact,
    Offered,
    Origin,
    ReleaseCandidate,
    Source,
    SourceRequest,
)
from nexo_pkg.sources.cache import (
    BlobCache,
    BlobSink,
)
from nexo_pkg.sources.checksum import (
    parse_sidecar,
)
from nexo_pkg.sources.context import (
    NetworkChoices,
    SourceContext,
    TrustChoices,
)
from nexo_pkg.sources.download import (
    ProgressBar,
)
from nexo_pkg.sources.extract import (
    extract_archive,
    extraction_workers,
    safe_extract,
)
from nexo_pkg.sources.hosttriple import (
    NOARCH,
    host_candidates,
    requested_target,
)
from nexo_pkg.sources.mirrors import (
    check_mirror,
    configured,
)
from nexo_pkg.sources.oci_reference import (
    OciReference,
    parse_reference,
)
from nexo_pkg.sources.releases import (
    read_release_signer,
    release_material,
    release_sha256,
    release_tarballs,
)
from nexo_pkg.sources.route import (
    KINDS,
    Kind,
    Prefetched,
    check_remote,
    copies_as_is,
    follows,
    locked_origin,
    open_source,
    origin_label,
    prefetch_newest,
    reopen,
    tag_pins,
    tagged_release,
)
from nexo_pkg.sources.select import (
    MANIFEST_ASSETS,
    PLUGIN_ID,
    identity_from_manifest,
    parse_tarball_name,
)
from nexo_pkg.sources.spec import (
    parse_source,
    timestamp_or_none,
)

if TYPE_CHECKING:
    from nexo_pkg.sources.github import (
        Release,
    )
    from nexo_pkg.sources.oci import (
        TargetFiles,
        created_for,
        created_now,
        latest_tag,
        plugin_of,
        push_version,
        source_date,
        tag_contradicts,
    )
    from nexo_pkg.sources.registry import (
        INDEX_MEDIA_TYPE,
        MANIFEST_MEDIA_TYPE,
        Manifest,
        RegistryClient,
        fallback_tag,
    )

_GITHUB = frozenset({"Release"})
_OCI = frozenset(
    {
        "TargetFiles",
        "created_for",
        "created_now",
        "latest_tag",
        "plugin_of",
        "push_version",
        "source_date",
        "tag_contradicts",
    }
)
_REGISTRY = frozenset(
    {"INDEX_MEDIA_TYPE", "MANIFEST_MEDIA_TYPE", "Manifest", "RegistryClient", "fallback_tag"}
)

__all__ = [
    "INDEX_MEDIA_TYPE",
    "KINDS",
    "MANIFEST_ASSETS",
    "MANIFEST_MEDIA_TYPE",
    "NOARCH",
    "PLUGIN_ID",
    "Admits",
    "ArchiveLimits",
    "ArchiveListing",
    "BlobCache",
    "BlobSink",
    "FetchedArtifact",
    "GitHubOrigin",
    "Kind",
    "Manifest",
    "NetworkChoices",
    "OciReference",
    "Offered",
    "Origin",
    "Prefetched",
    "ProgressBar",
    "RegistryClient",
    "Release",
    "ReleaseCandidate",
    "Source",
    "SourceContext",
    "SourceRequest",
    "TargetFiles",
    "TreeSink",
    "TrustChoices",
    "canonical",
    "check_member_names",
    "check_mirror",
    "check_remote",
    "configured",
    "copies_as_is",
    "created_for",
    "created_now",
    "extract_archive",
    "extraction_workers",
    "fallback_tag",
    "follows",
    "host_candidates",
    "identity_from_manifest",
    "inspect_archive",
    "latest_tag",
    "locked_origin",
    "open_source",
    "origin_label",
    "parse_reference",
    "parse_sidecar",
    "parse_source",
    "parse_tarball_name",
    "plugin_of",
    "prefetch_newest",
    "push_version",
    "read_release_signer",
    "release_material",
    "release_sha256",
    "release_tarballs",
    "reopen",
    "requested_target",
    "safe_extract",
    "source_date",
    "tag_contradicts",
    "tag_pins",
    "tagged_release",
    "timestamp_or_none",
    "walk_archive",
]


def __getattr__(name: str) -> object:
    # The registry and GitHub clients bring httpx: loaded when one of their names is asked for.
    if name in _GITHUB:
        from nexo_pkg.sources import github  # noqa: PLC0415

        return getattr(github, name)
    if name in _OCI:
        from nexo_pkg.sources import oci  # noqa: PLC0415

        return getattr(oci, name)
    if name in _REGISTRY:
        from nexo_pkg.sources import registry  # noqa: PLC0415

        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
