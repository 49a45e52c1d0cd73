"""The face of ``sources``: every name another package may use, and only these.

Callers outside ``nexo_pkg.sources`` import from here (an import contract,
``faces`` in pyproject.toml, keeps it so); the modules behind it are this package's own
business. The face is lazy (:mod:`nexo_pkg.core.faces`): importing it loads nothing of
``sources``, and a name loads its module when first asked for, so ``install PATH`` never loads
the registry and GitHub clients (httpx), and ``sync`` with nothing to install loads neither
them nor the archive reader."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from nexo_pkg.core.faces import homes, lazy_getattr

if TYPE_CHECKING:
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
        check_registry_config,
    )
    from nexo_pkg.sources.download import (
        ProgressBar,
    )
    from nexo_pkg.sources.extract import (
        extract_archive,
        extraction_workers,
        safe_extract,
    )
    from nexo_pkg.sources.github import (
        Release,
        resolve_api_base,
    )
    from nexo_pkg.sources.hosttriple import (
        NOARCH,
        host_candidates,
        requested_target,
    )
    from nexo_pkg.sources.local import (
        read_sidecar,
    )
    from nexo_pkg.sources.mirrors import (
        check_mirror,
        configured,
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
        tarball_date,
    )
    from nexo_pkg.sources.oci_reference import (
        OciReference,
        parse_reference,
    )
    from nexo_pkg.sources.registry import (
        INDEX_MEDIA_TYPE,
        MANIFEST_MEDIA_TYPE,
        Manifest,
        RegistryClient,
        fallback_tag,
    )
    from nexo_pkg.sources.releases import (
        read_release_signer,
        release_material,
        release_sha256,
        release_tarballs,
    )
    from nexo_pkg.sources.route import (
        KINDS,
        UNKNOWN_ORIGIN,
        Kind,
        Prefetched,
        check_copied_from,
        check_locked,
        check_remote,
        copies_as_is,
        first_per_service,
        locked_origin,
        open_source,
        origin_known,
        origin_label,
        origin_place,
        pins_manifests,
        pins_upgrade,
        prefetch_newest,
        reach_flags,
        reads_registry_config,
        reinstall_words,
        reopen,
        stopped_in_order,
        tagged_release,
        upgrades_from,
    )
    from nexo_pkg.sources.select import (
        MANIFEST_ASSETS,
        PLUGIN_ID,
        identity_from_manifest,
        parse_tarball_name,
    )
    from nexo_pkg.sources.spec import (
        parse_owner_repo,
        parse_source,
        timestamp_or_none,
    )

# Where each name lives: the module of ``nexo_pkg.sources`` that ``__getattr__`` loads for it.
_HOMES = homes(
    {
        "archive": (
            "ArchiveLimits ArchiveListing TreeSink check_member_names inspect_archive walk_archive"
        ),
        "artifact": "GitHubOrigin canonical",
        "base": "Admits FetchedArtifact Offered Origin ReleaseCandidate Source SourceRequest",
        "cache": "BlobCache BlobSink",
        "checksum": "parse_sidecar",
        "context": "NetworkChoices SourceContext TrustChoices check_registry_config",
        "download": "ProgressBar",
        "extract": "extract_archive extraction_workers safe_extract",
        "github": "Release resolve_api_base",
        "hosttriple": "NOARCH host_candidates requested_target",
        "local": "read_sidecar",
        "mirrors": "check_mirror configured",
        "oci": (
            "TargetFiles created_for created_now latest_tag plugin_of push_version "
            "source_date tag_contradicts tarball_date"
        ),
        "oci_reference": "OciReference parse_reference",
        "registry": "INDEX_MEDIA_TYPE MANIFEST_MEDIA_TYPE Manifest RegistryClient fallback_tag",
        "releases": "read_release_signer release_material release_sha256 release_tarballs",
        "route": (
            "KINDS UNKNOWN_ORIGIN Kind Prefetched check_copied_from check_locked check_remote "
            "copies_as_is first_per_service locked_origin "
            "open_source origin_known origin_label origin_place pins_manifests pins_upgrade "
            "prefetch_newest reach_flags "
            "reads_registry_config reinstall_words "
            "reopen stopped_in_order tagged_release upgrades_from"
        ),
        "select": "MANIFEST_ASSETS PLUGIN_ID identity_from_manifest parse_tarball_name",
        "spec": "parse_owner_repo parse_source timestamp_or_none",
    }
)

__all__ = [
    "INDEX_MEDIA_TYPE",
    "KINDS",
    "MANIFEST_ASSETS",
    "MANIFEST_MEDIA_TYPE",
    "NOARCH",
    "PLUGIN_ID",
    "UNKNOWN_ORIGIN",
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
    "check_copied_from",
    "check_locked",
    "check_member_names",
    "check_mirror",
    "check_registry_config",
    "check_remote",
    "configured",
    "copies_as_is",
    "created_for",
    "created_now",
    "extract_archive",
    "extraction_workers",
    "fallback_tag",
    "first_per_service",
    "host_candidates",
    "identity_from_manifest",
    "inspect_archive",
    "latest_tag",
    "locked_origin",
    "open_source",
    "origin_known",
    "origin_label",
    "origin_place",
    "parse_owner_repo",
    "parse_reference",
    "parse_sidecar",
    "parse_source",
    "parse_tarball_name",
    "pins_manifests",
    "pins_upgrade",
    "plugin_of",
    "prefetch_newest",
    "push_version",
    "reach_flags",
    "read_release_signer",
    "read_sidecar",
    "reads_registry_config",
    "reinstall_words",
    "release_material",
    "release_sha256",
    "release_tarballs",
    "reopen",
    "requested_target",
    "resolve_api_base",
    "safe_extract",
    "source_date",
    "stopped_in_order",
    "tag_contradicts",
    "tagged_release",
    "tarball_date",
    "timestamp_or_none",
    "upgrades_from",
    "walk_archive",
]


def _load(module: str) -> ModuleType:
    # Plain imports, one per module, so the import contracts see them.
    home: ModuleType
    if module == "archive":
        from nexo_pkg.sources import archive as home  # noqa: PLC0415
    elif module == "artifact":
        from nexo_pkg.sources import artifact as home  # noqa: PLC0415
    elif module == "base":
        from nexo_pkg.sources import base as home  # noqa: PLC0415
    elif module == "cache":
        from nexo_pkg.sources import cache as home  # noqa: PLC0415
    elif module == "checksum":
        from nexo_pkg.sources import checksum as home  # noqa: PLC0415
    elif module == "context":
        from nexo_pkg.sources import context as home  # noqa: PLC0415
    elif module == "download":
        from nexo_pkg.sources import download as home  # noqa: PLC0415
    elif module == "extract":
        from nexo_pkg.sources import extract as home  # noqa: PLC0415
    elif module == "github":
        from nexo_pkg.sources import github as home  # noqa: PLC0415
    elif module == "hosttriple":
        from nexo_pkg.sources import hosttriple as home  # noqa: PLC0415
    elif module == "local":
        from nexo_pkg.sources import local as home  # noqa: PLC0415
    elif module == "mirrors":
        from nexo_pkg.sources import mirrors as home  # noqa: PLC0415
    elif module == "oci":
        from nexo_pkg.sources import oci as home  # noqa: PLC0415
    elif module == "oci_reference":
        from nexo_pkg.sources import oci_reference as home  # noqa: PLC0415
    elif module == "registry":
        from nexo_pkg.sources import registry as home  # noqa: PLC0415
    elif module == "releases":
        from nexo_pkg.sources import releases as home  # noqa: PLC0415
    elif module == "route":
        from nexo_pkg.sources import route as home  # noqa: PLC0415
    elif module == "select":
        from nexo_pkg.sources import select as home  # noqa: PLC0415
    elif module == "spec":
        from nexo_pkg.sources import spec as home  # noqa: PLC0415
    else:
        raise AttributeError(module)
    return home


__getattr__ = lazy_getattr(_HOMES, _load, globals())
