"""The face of ``sources``: every name another package may use, and only these.

Callers outside ``nexo_pkg.sources`` import from here (an import contract,
``faces`` in pyproject.toml, keeps it so); the modules behind it are this package's own
business. A name is imported from its module when it is first asked for, so importing the
face costs nothing and ``install PATH`` never loads the registry client or httpx."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

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
    from nexo_pkg.sources.github import (
        Release,
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
    from nexo_pkg.sources.oci_reference import (
        OciReference,
        is_oci,
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
        Kind,
        SourceRequest,
        check_remote,
        follows,
        locked_origin,
        open_source,
        reopen,
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

_HOMES: dict[str, str] = {
    "ArchiveLimits": "nexo_pkg.sources.archive",
    "ArchiveListing": "nexo_pkg.sources.archive",
    "TreeSink": "nexo_pkg.sources.archive",
    "check_member_names": "nexo_pkg.sources.archive",
    "inspect_archive": "nexo_pkg.sources.archive",
    "walk_archive": "nexo_pkg.sources.archive",
    "GitHubOrigin": "nexo_pkg.sources.artifact",
    "canonical": "nexo_pkg.sources.artifact",
    "Admits": "nexo_pkg.sources.base",
    "FetchedArtifact": "nexo_pkg.sources.base",
    "Offered": "nexo_pkg.sources.base",
    "Origin": "nexo_pkg.sources.base",
    "ReleaseCandidate": "nexo_pkg.sources.base",
    "Source": "nexo_pkg.sources.base",
    "BlobCache": "nexo_pkg.sources.cache",
    "BlobSink": "nexo_pkg.sources.cache",
    "parse_sidecar": "nexo_pkg.sources.checksum",
    "NetworkChoices": "nexo_pkg.sources.context",
    "SourceContext": "nexo_pkg.sources.context",
    "TrustChoices": "nexo_pkg.sources.context",
    "ProgressBar": "nexo_pkg.sources.download",
    "extract_archive": "nexo_pkg.sources.extract",
    "extraction_workers": "nexo_pkg.sources.extract",
    "safe_extract": "nexo_pkg.sources.extract",
    "Release": "nexo_pkg.sources.github",
    "NOARCH": "nexo_pkg.sources.hosttriple",
    "host_candidates": "nexo_pkg.sources.hosttriple",
    "requested_target": "nexo_pkg.sources.hosttriple",
    "check_mirror": "nexo_pkg.sources.mirrors",
    "configured": "nexo_pkg.sources.mirrors",
    "TargetFiles": "nexo_pkg.sources.oci",
    "created_for": "nexo_pkg.sources.oci",
    "created_now": "nexo_pkg.sources.oci",
    "latest_tag": "nexo_pkg.sources.oci",
    "plugin_of": "nexo_pkg.sources.oci",
    "push_version": "nexo_pkg.sources.oci",
    "source_date": "nexo_pkg.sources.oci",
    "tag_contradicts": "nexo_pkg.sources.oci",
    "OciReference": "nexo_pkg.sources.oci_reference",
    "is_oci": "nexo_pkg.sources.oci_reference",
    "parse_reference": "nexo_pkg.sources.oci_reference",
    "INDEX_MEDIA_TYPE": "nexo_pkg.sources.registry",
    "MANIFEST_MEDIA_TYPE": "nexo_pkg.sources.registry",
    "Manifest": "nexo_pkg.sources.registry",
    "RegistryClient": "nexo_pkg.sources.registry",
    "fallback_tag": "nexo_pkg.sources.registry",
    "read_release_signer": "nexo_pkg.sources.releases",
    "release_material": "nexo_pkg.sources.releases",
    "release_sha256": "nexo_pkg.sources.releases",
    "release_tarballs": "nexo_pkg.sources.releases",
    "KINDS": "nexo_pkg.sources.route",
    "Kind": "nexo_pkg.sources.route",
    "SourceRequest": "nexo_pkg.sources.route",
    "check_remote": "nexo_pkg.sources.route",
    "follows": "nexo_pkg.sources.route",
    "locked_origin": "nexo_pkg.sources.route",
    "open_source": "nexo_pkg.sources.route",
    "reopen": "nexo_pkg.sources.route",
    "tagged_release": "nexo_pkg.sources.route",
    "MANIFEST_ASSETS": "nexo_pkg.sources.select",
    "PLUGIN_ID": "nexo_pkg.sources.select",
    "identity_from_manifest": "nexo_pkg.sources.select",
    "parse_tarball_name": "nexo_pkg.sources.select",
    "parse_source": "nexo_pkg.sources.spec",
    "timestamp_or_none": "nexo_pkg.sources.spec",
}
"""Each public name -> the module it lives in (imported when the name is first asked for)."""

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
    "created_for",
    "created_now",
    "extract_archive",
    "extraction_workers",
    "fallback_tag",
    "follows",
    "host_candidates",
    "identity_from_manifest",
    "inspect_archive",
    "is_oci",
    "latest_tag",
    "locked_origin",
    "open_source",
    "parse_reference",
    "parse_sidecar",
    "parse_source",
    "parse_tarball_name",
    "plugin_of",
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
    "tagged_release",
    "timestamp_or_none",
    "walk_archive",
]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
