"""Routing: which :class:`~nexo_pkg.sources.base.Source` a source text names, decided once.

A text starting with a registered scheme (``oci://``) goes to that scheme's source; anything
else is ``owner/repo[@tag]`` (a GitHub release) or the path of a local tarball
(:func:`nexo_pkg.sources.spec.parse_source`). A new source registers its scheme in
:data:`SCHEMES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nexo_pkg.sources.base import Source
from nexo_pkg.sources.context import SourceContext
from nexo_pkg.sources.local import LocalTarballSource
from nexo_pkg.sources.oci_reference import parse_reference
from nexo_pkg.sources.releases import GitHubReleaseSource
from nexo_pkg.sources.select import ManifestCheck
from nexo_pkg.sources.spec import GitHubSource, parse_source


@dataclass(frozen=True)
class SourceRequest:
    """What the command asks of a source: the targets it takes (best first), the plugin id
    it must be (``None``: any) and the installer's check of a release's manifest asset."""

    targets: tuple[str, ...]
    manifest_problem: ManifestCheck
    expected_id: str | None = None


SourceFactory = Callable[[str, SourceContext, SourceRequest], Source]


def _oci(text: str, context: SourceContext, request: SourceRequest) -> Source:
    # The registry client (and httpx) is imported only for a registry source.
    from nexo_pkg.sources.oci_source import OciSource  # noqa: PLC0415

    return OciSource(
        parse_reference(text),
        context,
        targets=request.targets,
        expected_id=request.expected_id,
        text=text,
    )


SCHEMES: dict[str, SourceFactory] = {"oci://": _oci}
"""Scheme prefix -> the factory of its source."""


def open_source(text: str, context: SourceContext, request: SourceRequest) -> Source:
    """The source ``text`` names. Raises ``source_invalid`` (exit 2) for a malformed one."""
    for prefix, factory in SCHEMES.items():
        if text.startswith(prefix):
            return factory(text, context, request)
    spec = parse_source(text)
    if isinstance(spec, GitHubSource):
        return GitHubReleaseSource(
            spec,
            context,
            targets=request.targets,
            manifest_problem=request.manifest_problem,
            expected_id=request.expected_id,
        )
    return LocalTarballSource(spec, context, targets=request.targets)
