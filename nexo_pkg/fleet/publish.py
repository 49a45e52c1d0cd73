"""``push`` (a ``pack`` output directory) and ``mirror`` (a GitHub release) into a registry,
and the newest version a registry holds (``outdated``). Installing from a registry is the
OCI source's (``nexo_pkg.sources.oci_source``), as for any other source."""

from __future__ import annotations

import json
import tarfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nexo_pkg.core.errors import EXIT_USAGE, NexoError, UsageError
from nexo_pkg.core.files import (
    FileTooLargeError,
    NotRegularFileError,
    read_capped_bytes,
    sha256_file,
)
from nexo_pkg.fleet.sources import FleetOptions, Session
from nexo_pkg.install.api import (
    NO_CALLBACKS,
    InstallCallbacks,
    manifest_asset_problem,
    misnamed_manifest,
)
from nexo_pkg.manifest.model import ManifestModelError, manifest_from_text
from nexo_pkg.sources.api import (
    MANIFEST_ASSETS,
    BlobSink,
    GitHubOrigin,
    OciReference,
    TargetFiles,
    created_for,
    created_now,
    parse_reference,
    parse_tarball_name,
    push_version,
    read_sidecar,
    release_material,
    release_sha256,
    release_tarballs,
    source_date,
    tag_contradicts,
    tagged_release,
)
from nexo_pkg.trust import api as trust


@dataclass(frozen=True)
class PushResult:
    reference: str
    digest: str
    plugin_id: str
    version: str
    targets: tuple[str, ...]
    signed: tuple[str, ...]
    origin: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": True,
            "reference": self.reference,
            "digest": self.digest,
            # The repository at the digest (a reference without a tag has no ':TAG' to cut:
            # its last ':' is the registry's port).
            "pinned": str(parse_reference(self.reference).with_digest(self.digest)),
            "id": self.plugin_id,
            "version": self.version,
            "targets": list(self.targets),
            "signed": list(self.signed),
            "github_release": self.origin,
        }


def _files(material: Mapping[str, object]) -> dict[str, Path]:
    """The pieces of signature material that are files (the ones a push can layer)."""
    return {name: item for name, item in material.items() if isinstance(item, Path)}


# Signature material that is JSON (Sigstore and cosign bundles, in-toto attestations, one
# per line): each document must be a JSON object, or no host could ever verify the push.
_JSON_MATERIAL = (".sigstore.json", ".sigstore", ".bundle", ".intoto.jsonl")
_MAX_MATERIAL_BYTES = 16 * 1024 * 1024


def _check_material(signatures: Mapping[str, Path]) -> None:
    """Refuse (``signature_invalid``) a bundle beside a tarball that is not JSON objects:
    install reads every bundle before trusting one, so pushing it would publish a version
    that no host can install."""
    for name, path in sorted(signatures.items()):
        if not name.endswith(_JSON_MATERIAL):
            continue
        try:
            with path.open("rb") as handle:
                raw = handle.read(_MAX_MATERIAL_BYTES + 1)
        except OSError as exc:
            raise NexoError(f"cannot read {path}: {exc.strerror or exc}", kind="io") from exc
        try:
            documents = [json.loads(raw)] if raw.strip() else []
        except (ValueError, RecursionError):
            try:
                documents = [json.loads(line) for line in raw.splitlines() if line.strip()]
            except (ValueError, RecursionError):
                documents = []
        if (
            len(raw) > _MAX_MATERIAL_BYTES
            or not documents
            or not all(isinstance(document, dict) for document in documents)
        ):
            raise NexoError(
                f"{path} is not a Sigstore bundle (JSON objects); a push of it could never be "
                "verified: sign the tarball again, or remove the file to push it unsigned",
                kind="signature_invalid",
            )


def collect_dist(directory: Path) -> tuple[str, str, list[TargetFiles], str | None]:
    """Read what ``pack`` wrote: one version's tarballs with their sidecars and signatures.

    Raises ``source_invalid`` for an empty directory or mixed ids/versions, a tarball,
    sidecar or manifest copy that is no regular file, or a manifest copy that is not the
    manifest inside every tarball,
    ``checksum_mismatch`` when a ``.sha256`` sidecar disagrees with its tarball, and
    ``signature_invalid`` for a bundle that is not JSON objects.
    """
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory (pass what `nexo plugin pack` wrote)")
    found: dict[tuple[str, str], list[TargetFiles]] = {}
    for tarball in sorted(directory.glob("*.tar.gz")):
        parsed = parse_tarball_name(tarball.name)
        if parsed is None or not _present(tarball):
            continue
        sha = sha256_file(tarball)
        sidecar = tarball.with_name(tarball.name + ".sha256")
        if _present(sidecar):
            expected = read_sidecar(sidecar, tarball.name)
            if expected != sha:
                raise NexoError(
                    f"{sidecar.name} says {expected}, {tarball.name} is {sha}",
                    kind="checksum_mismatch",
                )
        signatures = _files(trust.local_material(tarball))
        _check_material(signatures)
        found.setdefault(parsed[:2], []).append(TargetFiles(parsed[2], tarball, sha, signatures))
    if len(found) != 1:
        listed = (
            ", ".join(f"{i} {v}" for i, v in sorted(found)) or "no <id>-<version>-<target>.tar.gz"
        )
        raise NexoError(
            f"{directory} must hold the tarballs of exactly one plugin version (found {listed})",
            kind="source_invalid",
        )
    (plugin_id, version), targets = next(iter(found.items()))
    packed = {files.tarball: _packed_manifests(files.tarball) for files in targets}
    for tarball, members in packed.items():
        _check_named_for(tarball, members, plugin_id, version)
    manifest = next((directory / n for n in MANIFEST_ASSETS if _present(directory / n)), None)
    if manifest is None:
        return plugin_id, version, targets, None
    manifest_bytes = _read_manifest_copy(manifest)
    for files in targets:
        # The copy becomes the version's `dev.nexo.plugin.manifest` annotation, which `lock`
        # decides daemon compatibility by: it must be the manifest the tarballs install.
        if packed[files.tarball].get(manifest.name) != manifest_bytes:
            raise NexoError(
                f"{manifest} is not the {manifest.name} inside {files.tarball.name} (a copy "
                "left by another pack?): pack again into an empty --out directory",
                kind="source_invalid",
                details={"manifest": str(manifest), "tarball": str(files.tarball)},
            )
    return plugin_id, version, targets, manifest_bytes.decode("utf-8", errors="replace")


def _read_manifest_copy(manifest: Path) -> bytes:
    """The bytes of the manifest copy beside the tarballs, read as install reads a release's
    manifest asset: a regular file (a link to one followed; a FIFO put there in the meantime
    is not waited on) of at most :data:`_MAX_PACKED_MANIFEST` bytes, never more read.
    ``source_invalid`` for a larger one (every host's install would refuse the push) or one
    that is no regular file, ``io`` when it cannot be read."""
    try:
        return read_capped_bytes(manifest, _MAX_PACKED_MANIFEST)
    except FileTooLargeError:
        raise NexoError(
            f"{manifest} is larger than {_MAX_PACKED_MANIFEST} bytes, more than install reads "
            "of a manifest: pack again into an empty --out directory",
            kind="source_invalid",
            details={"path": str(manifest)},
        ) from None
    except NotRegularFileError:
        _present(manifest)  # raises for what is there now, naming it
        raise NexoError(
            f"{manifest} is not a regular file; pack again into an empty --out directory",
            kind="source_invalid",
            details={"path": str(manifest)},
        ) from None
    except OSError as exc:
        raise NexoError(f"cannot read {manifest}: {exc.strerror or exc}", kind="io") from exc


def _present(path: Path) -> bool:
    """Whether ``path``, a file push reads, is there: ``True`` for a regular file (a link to
    one followed), ``False`` when nothing is there. Anything else by that name (a directory,
    a FIFO, a device, a dangling link) is ``source_invalid``: passing it over would publish
    less than the directory holds (a target, its checksum or its manifest) without a word."""
    if path.is_file():
        return True
    if not path.is_symlink() and not path.exists():
        return False
    raise NexoError(
        f"{path} is not a regular file; push publishes the files `nexo plugin pack` writes: "
        "remove it, or pack again into an empty --out directory",
        kind="source_invalid",
        details={"path": str(path)},
    )


#: A manifest member larger than this is not read (install refuses one past the same cap).
_MAX_PACKED_MANIFEST = 1024 * 1024


def _packed_manifests(tarball: Path) -> dict[str, bytes]:
    """The bytes of the manifests (:data:`MANIFEST_ASSETS`) at the root of ``tarball`` (one
    that is no regular file, or too large to be a manifest, is left out);
    ``source_invalid`` when it is no gzip tar."""
    found: dict[str, bytes] = {}
    try:
        with tarfile.open(tarball, "r|gz") as archive:
            for member in archive:
                name = member.name.removeprefix("./")
                if name not in MANIFEST_ASSETS or name in found:
                    continue
                if not member.isfile() or member.size > _MAX_PACKED_MANIFEST:
                    continue
                stream = archive.extractfile(member)
                if stream is not None:
                    found[name] = stream.read()
    except (OSError, EOFError, tarfile.TarError, zlib.error) as exc:
        raise NexoError(
            f"{tarball} is not a readable .tar.gz ({exc}); pack it again",
            kind="source_invalid",
        ) from exc
    return found


def _check_named_for(
    tarball: Path, members: Mapping[str, bytes], plugin_id: str, version: str
) -> None:
    """``manifest_mismatch`` when the manifest the daemon would read in ``tarball`` (the
    first of :data:`MANIFEST_ASSETS` it holds) names another id or version than the tarball's
    name, as install refuses it: a registry must not be told a version its bytes are not.
    A manifest that cannot be read is left to install's full check."""
    text = next((members[name] for name in MANIFEST_ASSETS if name in members), None)
    if text is None:
        return
    try:
        model = manifest_from_text(text.decode("utf-8"))
    except (UnicodeDecodeError, ManifestModelError):
        return
    if (model.id, model.version) != (plugin_id, version):
        raise misnamed_manifest(
            (model.id, model.version), (plugin_id, version), archive=tarball.name,
            fix=": pack it again",
        )  # fmt: skip


def version_tagged(reference: OciReference, version: str, *, verb: str = "push") -> OciReference:
    """``reference`` with its tag, else ``version`` as the tag (without its build metadata:
    an OCI tag cannot hold `+`, and a version tag is read build metadata aside);
    ``source_invalid`` (exit 2) when its tag is a version other than ``version`` (install
    would refuse it)."""
    default = version.split("+", 1)[0]
    tag = reference.tag or default
    if tag_contradicts(tag, version):
        raise NexoError(
            f"cannot {verb} version {version} under the tag {tag}: a version tag must name "
            f"the version it holds ({verb} to {reference.base}:{default})",
            kind="source_invalid",
            exit_code=EXIT_USAGE,
            details={"tag": tag, "version": version},
        )
    return reference.with_tag(tag)


def push(
    dist: Path,
    destination: str,
    options: FleetOptions,
    callbacks: InstallCallbacks = NO_CALLBACKS,
) -> PushResult:
    """Publish a ``pack`` output directory as one version (tag: the reference's, else the
    version)."""
    reference = parse_reference(destination)
    if reference.digest:
        raise UsageError("push to a tag (oci://HOST/NS/NAME[:TAG]), not to a digest")
    plugin_id, version, targets, manifest_text = collect_dist(dist)
    with Session(options, callbacks) as session:
        return _push_version(
            session, reference, plugin_id, version, targets=targets,
            manifest_text=manifest_text, origin=None,
            created=created_for([files.tarball for files in targets]),
        )  # fmt: skip


def _push_version(
    session: Session,
    reference: OciReference,
    plugin_id: str,
    version: str,
    *,
    targets: list[TargetFiles],
    manifest_text: str | None,
    origin: GitHubOrigin | None,
    created: str,
) -> PushResult:
    """Push one version's files under ``reference`` tagged by the version (see
    :func:`version_tagged`); what :func:`push` and :func:`mirror` report."""
    tagged = version_tagged(reference, version)
    digest = push_version(
        session.registry(tagged),
        tagged,
        plugin_id=plugin_id,
        version=version,
        targets=targets,
        manifest_text=manifest_text,
        origin=origin,
        created=created,
    )
    return PushResult(
        str(tagged), digest, plugin_id, version,
        tuple(sorted(t.target for t in targets)),
        tuple(sorted(t.target for t in targets if t.signatures)),
        None if origin is None else str(origin),
    )  # fmt: skip


def mirror(
    release_text: str,
    destination: str,
    options: FleetOptions,
    callbacks: InstallCallbacks = NO_CALLBACKS,
) -> PushResult:
    """Copy a GitHub release (every target tarball, checksum-checked, with its signature
    files) into a registry, recording the release so the original signer's policy applies."""
    source = tagged_release(release_text)
    if source is None or source.tag is None:
        raise UsageError(f"mirror needs owner/repo@tag, not {release_text!r}")
    reference = parse_reference(destination)
    if reference.digest:
        raise UsageError("mirror to a tag (oci://HOST/NS/NAME[:TAG]), not to a digest")
    with Session(options, callbacks) as session:
        # The destination's client first: --plain-http for a remote host and unreadable
        # credentials are usage errors, said before the release is fetched (as is a
        # malformed SOURCE_DATE_EPOCH).
        session.registry(reference)
        epoch_date = source_date()
        client = session.github()
        # As install reads a tag: `1.2.3` may be `v1.2.3`; a missing one names the nearest.
        release = client.find_release(source.owner, source.repo, source.tag)
        plugin_id, version, assets = release_tarballs(client, release, manifest_asset_problem)
        directory = session.temp_dir()
        targets: list[TargetFiles] = []
        for target, asset in assets.items():
            expected = release_sha256(client, release, asset)

            def fetch(sink: BlobSink, found: Any = asset) -> None:
                client.download(found, sink, max_bytes=options.install.limits.max_download)

            with session.cache.open_blob(expected, fetch) as blob:
                path = directory / asset.name
                path.write_bytes(blob.read_bytes())
            material = release_material(
                client,
                release,
                asset_name=asset.name,
                sha256=expected,
                repository=(source.owner, source.repo),
                directory=directory,
            )
            # Every piece is a file here (attestations included), so the push can layer it.
            targets.append(TargetFiles(target, path, expected, _files(material)))
        manifest = client.read_manifest_asset(release, MANIFEST_ASSETS, max_bytes=1 << 20)
        manifest_text = manifest[1] if manifest is not None else None
        origin = GitHubOrigin(source.owner, source.repo, release.tag)
        return _push_version(
            session, reference, plugin_id, version, targets=targets,
            manifest_text=manifest_text, origin=origin,
            # The release's own time, not the clock's: mirroring it again (another site's
            # registry) gives the same index, and locks and receipts its GitHub date.
            created=epoch_date or release.published_at or created_now(),
        )  # fmt: skip
