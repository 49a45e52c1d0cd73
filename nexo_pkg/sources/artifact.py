"""How one plugin version is laid out in a registry, and how it is read back (docs/fleet.md,
"Layout of a plugin version").

One version is an OCI image index (``artifactType`` :data:`ARTIFACT_TYPE`) with one image
manifest per target, its tarball the one layer; signature material hangs off each target's
manifest as referrers. Writing is strict, reading is tolerant: an index or manifest a copy
tool re-serialised without ``artifactType`` is a plugin by its ``dev.nexo.plugin.*``
annotations, a referrer is a signature by its own manifest's ``artifactType``, and a single
manifest (``oras push``, one target's manifest by digest) is a one-target version.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.version import VersionError, parse_version
from nexo_pkg.sources.hosttriple import NOARCH
from nexo_pkg.sources.select import PLUGIN_ID as PLUGIN_ID_PATTERN
from nexo_pkg.sources.select import parse_tarball_name
from nexo_pkg.sources.spec import (
    MAX_OWNER_LENGTH,
    MAX_REPO_LENGTH,
    validate_name,
    validate_tag,
)

ARTIFACT_TYPE = "application/vnd.nexo.plugin.v1"
SIGNATURE_ARTIFACT_TYPE = "application/vnd.nexo.plugin.signature.v1"
# Every Sigstore bundle media type (``…bundle.v0.3+json``, ``…bundle+json;version=0.2``).
BUNDLE_TYPE_PREFIX = "application/vnd.dev.sigstore.bundle"
LAYER_MEDIA_TYPE = "application/vnd.nexo.plugin.layer.v1.tar+gzip"
#: The ``artifactType`` oras writes when none is given (oras-go's ``MediaTypeUnknownArtifact``):
#: it says no type, so it reads as a missing one.
UNKNOWN_ARTIFACT_TYPE = "application/vnd.unknown.artifact.v1"
EMPTY_MEDIA_TYPE = "application/vnd.oci.empty.v1+json"
EMPTY_DATA = b"{}"
BUNDLE_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"
OCTET_STREAM = "application/octet-stream"

TITLE = "org.opencontainers.image.title"
CREATED = "org.opencontainers.image.created"
IMAGE_VERSION = "org.opencontainers.image.version"
IMAGE_SOURCE = "org.opencontainers.image.source"
PLUGIN_ID = "dev.nexo.plugin.id"
PLUGIN_VERSION = "dev.nexo.plugin.version"
PLUGIN_TARGET = "dev.nexo.plugin.target"
PLUGIN_ASSET = "dev.nexo.plugin.asset"
PLUGIN_SHA256 = "dev.nexo.plugin.sha256"
PLUGIN_MANIFEST = "dev.nexo.plugin.manifest"
GITHUB_RELEASE = "dev.nexo.plugin.github-release"
# What cosign's bundle spec puts on a bundle referrer.
BUNDLE_CONTENT = "dev.sigstore.bundle.content"
BUNDLE_PREDICATE_TYPE = "dev.sigstore.bundle.predicateType"
COSIGN_SIGN_PREDICATE = "https://sigstore.dev/cosign/sign/v1"

_ARCHITECTURES = {
    "x86_64": ("amd64", None),
    "aarch64": ("arm64", None),
    "i686": ("386", None),
    "i586": ("386", None),
    "armv7": ("arm", "v7"),
    "arm": ("arm", "v6"),
    "riscv64gc": ("riscv64", None),
    "powerpc64le": ("ppc64le", None),
    "s390x": ("s390x", None),
}


def platform_of(target: str) -> dict[str, str] | None:
    """The OCI platform of a target triple; ``None`` for ``noarch``."""
    if target == NOARCH:
        return None
    arch, _, rest = target.partition("-")
    architecture, variant = _ARCHITECTURES.get(arch, (arch, None))
    known = (name for name in ("linux", "darwin", "windows") if name in rest)
    system = next(known, None) or rest.rsplit("-", 1)[-1] or "unknown"
    platform = {"architecture": architecture, "os": system}
    if variant:
        platform["variant"] = variant
    return platform


@dataclass(frozen=True)
class GitHubOrigin:
    """The GitHub release a mirrored version was copied from."""

    owner: str
    repo: str
    tag: str

    def __str__(self) -> str:
        return f"{self.owner}/{self.repo}@{self.tag}"

    @classmethod
    def parse(cls, text: str) -> GitHubOrigin | None:
        """``owner/repo@tag`` under the grammar of a CLI source (GitHub's alphabet for names,
        the semver alphabet for the tag, no ``..``); ``None`` for anything else."""
        name, at, tag = text.partition("@")
        owner, slash, repo = name.partition("/")
        if not (at and slash):
            return None
        try:
            validate_name(owner, what="owner", max_length=MAX_OWNER_LENGTH, text=text)
            validate_name(repo, what="repo", max_length=MAX_REPO_LENGTH, text=text)
            validate_tag(tag, text=text)
        except NexoError:
            return None
        return cls(owner, repo, tag)


@dataclass(frozen=True)
class TargetEntry:
    """One target of a version: where its manifest is in the index."""

    target: str
    manifest_digest: str


@dataclass(frozen=True)
class TargetAsset:
    """One target's tarball as its manifest describes it."""

    target: str
    manifest_digest: str
    asset_name: str
    digest: str
    size: int
    #: The plugin manifest ``push`` copies into an annotation, when the manifest has one: read
    #: to choose among versions before any download, never trusted for what is installed.
    manifest_text: str | None = None

    @property
    def sha256(self) -> str:
        return self.digest.removeprefix("sha256:")


@dataclass(frozen=True)
class PluginVersion:
    """A version read from its index: id, version, targets and where it came from."""

    plugin_id: str
    version: str
    index_digest: str
    targets: dict[str, TargetEntry]
    created: str | None = None
    origin: GitHubOrigin | None = None
    annotations: dict[str, str] = field(default_factory=dict)


def _invalid(message: str) -> NexoError:
    return NexoError(message, kind="registry_invalid")


_SHA256_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def followed_digest(value: object, where: str) -> str:
    """A descriptor's ``digest`` we may follow: ``sha256:`` and 64 lower-case hex digits, the
    one algorithm whose bytes are checked on arrival. Anything else (``sha512:``, a tag, a
    path) is ``registry_invalid``: what the registry answered for it would go unchecked."""
    if isinstance(value, str) and _SHA256_DIGEST.fullmatch(value):
        return value
    shown = value[:100] if isinstance(value, str) else type(value).__name__
    raise _invalid(f"{where} names {shown!r}, which is not a sha256 digest")


def _annotations(document: dict[str, Any]) -> dict[str, str]:
    found = document.get("annotations")
    if not isinstance(found, dict):
        return {}
    return {str(k): v for k, v in found.items() if isinstance(v, str)}


def _plugin_identity(
    annotations: dict[str, str], artifact_type: object, where: str, *, layer_type: object = None
) -> tuple[str, str]:
    """The plugin id and version of an index or manifest; ``registry_invalid`` unless it is a
    nexo plugin: ``artifactType`` :data:`ARTIFACT_TYPE`, or (a copy tool dropped it, or oras
    wrote :data:`UNKNOWN_ARTIFACT_TYPE`) none with the id and version annotations and, for a
    manifest, the plugin layer media type."""
    plugin_id = annotations.get(PLUGIN_ID)
    version = annotations.get(PLUGIN_VERSION)
    if artifact_type == UNKNOWN_ARTIFACT_TYPE:
        artifact_type = None
    typed = artifact_type == ARTIFACT_TYPE or (
        artifact_type is None and layer_type in {None, LAYER_MEDIA_TYPE}
    )
    if not typed or not plugin_id or not version:
        raise _invalid(
            f"{where} is not a nexo plugin (artifactType {ARTIFACT_TYPE}, or the "
            f"{PLUGIN_ID} and {PLUGIN_VERSION} annotations with {LAYER_MEDIA_TYPE} layers)"
        )
    if not PLUGIN_ID_PATTERN.match(plugin_id):
        raise _invalid(f"{where} names the plugin {plugin_id!r}, which is not a plugin id")
    try:
        parse_version(version)
    except VersionError as error:
        raise _invalid(
            f"{where} says version {version!r}, which is not a semver version ({error})"
        ) from error
    return plugin_id, version


def _origin(annotations: dict[str, str], where: str) -> GitHubOrigin | None:
    """The release a version was copied from (its ``dev.nexo.plugin.github-release``), held
    to the grammar of an owner/repo@tag source: it picks the owner whose trust-policy entry
    applies and lands in the lock and the receipts. ``registry_invalid`` for anything else."""
    text = annotations.get(GITHUB_RELEASE)
    if text is None:
        return None
    origin = GitHubOrigin.parse(text)
    if origin is None:
        raise _invalid(
            f"{where} says it was copied from {text[:200]!r} ({GITHUB_RELEASE}), which is "
            "not owner/repo@tag"
        )
    return origin


def parse_index(document: dict[str, Any], digest: str, where: str) -> PluginVersion:
    """Read a plugin version's index; ``registry_invalid`` when it is not one."""
    if not isinstance(document.get("manifests"), list):
        raise _invalid(f"{where} is not an image index (no manifests list)")
    annotations = _annotations(document)
    plugin_id, version = _plugin_identity(annotations, document.get("artifactType"), where)
    targets: dict[str, TargetEntry] = {}
    for item in document["manifests"]:
        if not isinstance(item, dict):
            continue
        target = _annotations(item).get(PLUGIN_TARGET)
        size = item.get("size")
        if not target or not isinstance(size, int):
            continue
        entry_digest = followed_digest(item.get("digest"), f"the {target} entry of {where}")
        targets[target] = TargetEntry(target, entry_digest)
    targets = dict(sorted(targets.items()))
    return _version(plugin_id, version, digest, targets, annotations, where=where)


def _version(
    plugin_id: str,
    version: str,
    digest: str,
    targets: dict[str, TargetEntry],
    annotations: dict[str, str],
    *,
    where: str,
) -> PluginVersion:
    """The version record, its creation time and origin read from its ``annotations``."""
    origin = _origin(annotations, where)
    created = annotations.get(CREATED)
    return PluginVersion(plugin_id, version, digest, targets, created, origin, annotations)


def _tarball_layer(layers: object) -> dict[str, Any] | None:
    """The layer carrying the tarball: the only one, or, among several (``oras push`` of a
    whole ``dist/``, as Helm pushes a chart with its provenance file), the only one of
    :data:`LAYER_MEDIA_TYPE`; ``None`` when there is no such single layer."""
    if not isinstance(layers, list) or not all(isinstance(layer, dict) for layer in layers):
        return None
    if len(layers) == 1:
        return layers[0]  # type: ignore[no-any-return]
    typed = [layer for layer in layers if layer.get("mediaType") == LAYER_MEDIA_TYPE]
    return typed[0] if len(typed) == 1 else None


def parse_single_manifest(document: dict[str, Any], digest: str, where: str) -> PluginVersion:
    """A version made of one image manifest (``oras push``, Helm-style, or one target's
    manifest by digest): id and version from its annotations, the target from
    ``dev.nexo.plugin.target``, else from the tarball's name, else ``noarch``.
    ``registry_invalid`` when it is not a nexo plugin.

    Without ``artifactType``, a config of media type :data:`ARTIFACT_TYPE` types it (the
    OCI 1.0 way, which image-spec 1.1 keeps: the config's media type is then the artifact
    type). A manifest typed so, or whose tarball layer has the plugin layer media type, and
    that has neither id nor version annotation, takes both from the tarball's name."""
    first = _tarball_layer(document.get("layers"))
    layer_type = first.get("mediaType") if isinstance(first, dict) else "none"
    annotations = _annotations(document)
    title = _annotations(first).get(TITLE) if isinstance(first, dict) else None
    parsed = parse_tarball_name(title) if title else None
    artifact_type = document.get("artifactType")
    if artifact_type == UNKNOWN_ARTIFACT_TYPE:
        artifact_type = None
    config = document.get("config")
    if artifact_type is None and isinstance(config, dict):
        artifact_type = ARTIFACT_TYPE if config.get("mediaType") == ARTIFACT_TYPE else None
    named = annotations
    if (
        parsed is not None
        and (artifact_type == ARTIFACT_TYPE or layer_type == LAYER_MEDIA_TYPE)
        and PLUGIN_ID not in annotations
        and PLUGIN_VERSION not in annotations
    ):
        named = {**annotations, PLUGIN_ID: parsed[0], PLUGIN_VERSION: parsed[1]}
    plugin_id, version = _plugin_identity(named, artifact_type, where, layer_type=layer_type)
    target = annotations.get(PLUGIN_TARGET)
    if not target:
        target = parsed[2] if parsed is not None and parsed[:2] == (plugin_id, version) else NOARCH
    targets = {target: TargetEntry(target, digest)}
    return _version(plugin_id, version, digest, targets, annotations, where=where)


def is_signature_type(artifact_type: object) -> bool:
    """Whether a referrer's ``artifactType`` is signature material nexo reads: a Sigstore
    bundle (cosign's bundle spec) or nexo's own earlier signature type."""
    return isinstance(artifact_type, str) and (
        artifact_type == SIGNATURE_ARTIFACT_TYPE or artifact_type.startswith(BUNDLE_TYPE_PREFIX)
    )


def parse_target_manifest(
    document: dict[str, Any], entry: TargetEntry, plugin_id: str, version: str
) -> TargetAsset:
    """The tarball layer of one target's manifest, cross-checked with its annotations."""
    where = f"the {entry.target} manifest {entry.manifest_digest}"
    layer = _tarball_layer(document.get("layers"))
    if layer is None:
        raise _invalid(
            f"{where} must have exactly one tarball layer (one layer, or one of media type "
            f"{LAYER_MEDIA_TYPE})"
        )
    digest, size = layer.get("digest"), layer.get("size")
    name = _annotations(layer).get(TITLE) or _annotations(document).get(PLUGIN_ASSET)
    if not isinstance(size, int):
        raise _invalid(f"{where} has a layer without a size")
    digest = followed_digest(digest, f"the layer of {where}")
    if not name:
        raise _invalid(f"{where} does not name its tarball ({TITLE})")
    parsed = parse_tarball_name(name)
    if parsed != (plugin_id, version, entry.target):
        raise _invalid(f"{where} carries {name!r}, not {plugin_id}-{version}-{entry.target}.tar.gz")
    declared = _annotations(document).get(PLUGIN_SHA256)
    if declared is not None and declared != digest.removeprefix("sha256:"):
        raise _invalid(f"{where} says sha256 {declared} but its layer is {digest}")
    manifest_text = _annotations(document).get(PLUGIN_MANIFEST)
    return TargetAsset(entry.target, entry.manifest_digest, name, digest, size, manifest_text)


def descriptor(media_type: str, digest: str, size: int, **extra: Any) -> dict[str, Any]:
    document: dict[str, Any] = {"mediaType": media_type, "digest": digest, "size": size}
    document.update({key: value for key, value in extra.items() if value is not None})
    return document


def canonical(document: dict[str, Any]) -> bytes:
    """Manifest bytes: sorted keys, no spaces, so the same content has the same digest."""
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode("utf-8")


def signature_media_type(file_name: str) -> str:
    if file_name.endswith((".sigstore.json", ".sigstore")):
        return BUNDLE_MEDIA_TYPE
    return OCTET_STREAM
