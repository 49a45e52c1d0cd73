"""What a release offers as signature material for one asset, and how it is picked.

A release (or the directory of a local tarball) may carry, for an asset ``A``:

* a Sigstore bundle ``A.sigstore.json`` / ``A.sigstore`` / ``A.bundle`` (a signature over the
  file, a DSSE attestation, or a legacy cosign bundle — told apart by content);
* attestations ``A.intoto.jsonl`` (one bundle per line, as ``gh attestation download`` writes);
* GitHub artifact attestations, fetched from the API by the file's digest
  (:func:`fetch_attestations`), offered under :func:`attestations_name`;
* a signed checksums file (``checksums.txt``, ``SHA256SUMS``, ``<name>_checksums.txt``) with
  its own bundle or attestations, beside it or from the API by the checksums file's digest
  (offered under :func:`checksums_attestations_name`);
* a detached cosign ``A.sig`` with ``A.pem`` / ``A.cert``.

Material values are local paths, or bytes already in memory (attestations from the API).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from nexo_pkg.core.errors import NexoError, exception_line
from nexo_pkg.trust.base import SignatureInvalidError, SignatureMaterial

# Suffixes appended to an asset name under which signature material is looked up, in order:
# Sigstore bundles first, then a (Sigstore or legacy cosign) `.bundle`, then a detached
# cosign signature with its certificate.
SIGNATURE_SUFFIXES: tuple[str, ...] = (
    ".sigstore.json",
    ".sigstore",
    ".bundle",
    ".sig",
    ".pem",
    ".cert",
)
BUNDLE_SUFFIXES: tuple[str, ...] = (".sigstore.json", ".sigstore", ".bundle")
ATTESTATION_SUFFIX = ".intoto.jsonl"
_CERTIFICATE_SUFFIXES = (".pem", ".cert")

# GoReleaser's `checksums.txt` / `<project>_<version>_checksums.txt`, and `SHA256SUMS`.
CHECKSUMS_FILE = re.compile(
    r"^(?:checksums\.txt|SHA256SUMS(?:\.txt)?|sha256sums(?:\.txt)?|[A-Za-z0-9._-]+_checksums\.txt)$"
)

# Caps on what is read: a Sigstore bundle is a few kilobytes, a checksums file lists a
# release's assets; anything larger is refused before it is parsed.
MAX_BUNDLE_BYTES = 4 * 1024 * 1024
MAX_ATTESTATION_BYTES = 16 * 1024 * 1024
MAX_CHECKSUMS_BYTES = 1024 * 1024
MAX_ATTESTATION_PAGES = 10
# Attestations read from a bundle_url, each one more request: GitHub CLI's default limit.
MAX_BUNDLE_URLS = 30
# Answers of the attestations endpoint that mean "none here" rather than a failure.
_NO_ATTESTATIONS_STATUSES = frozenset({403, 404, 410, 422})

Material = Mapping[str, "Path | bytes"]


def attestations_name(digest: str) -> str:
    """The name under which the API's attestations for ``sha256:digest`` are offered."""
    return f"GitHub attestations of sha256:{digest}"


def checksums_attestations_name(checksums_name: str, digest: str) -> str:
    """The name under which the API's attestations of a checksums file are offered."""
    return f"GitHub attestations of {checksums_name} (sha256:{digest})"


def is_checksums_file(name: str) -> bool:
    return CHECKSUMS_FILE.match(name) is not None


def listed_sha256(asset_name: str, checksums: Mapping[str, bytes]) -> dict[str, list[str]]:
    """Every SHA-256 the checksums files ``checksums`` (name -> bytes, in ``sha256sum``
    format) list for ``asset_name``, each with the names of the files that list it: what a
    release without a ``.sha256`` sidecar or an asset digest says its tarball hashes to. The
    files' signatures are checked later, by :func:`~nexo_pkg.trust.entry.verify_asset_signature`."""
    from nexo_pkg.trust.verifiers.checksums import listed_digests  # noqa: PLC0415

    found: dict[str, list[str]] = {}
    for name in sorted(checksums):
        text = checksums[name].decode("utf-8", errors="replace")
        for digest in sorted(listed_digests(text, asset_name)):
            found.setdefault(digest, []).append(name)
    return found


def material_names(asset_name: str, available: Iterable[str]) -> tuple[str, ...]:
    """The names among ``available`` (release assets, or files beside a tarball) that are
    signature material for ``asset_name``: its own, and signed checksums files with theirs."""
    present = set(available)
    own = [asset_name + suffix for suffix in (*SIGNATURE_SUFFIXES, ATTESTATION_SUFFIX)]
    checksums = sorted(name for name in present if is_checksums_file(name))
    for checksums_name in checksums:
        own.append(checksums_name)
        own.extend(checksums_name + suffix for suffix in (*BUNDLE_SUFFIXES, ATTESTATION_SUFFIX))
    return tuple(name for name in own if name in present)


def local_material(tarball: Path) -> dict[str, Path | bytes]:
    """The signature material beside a local ``tarball`` (see :func:`material_names`).

    A name of its material that is no regular file (a directory, a FIFO, a dangling link)
    is ``signature_invalid``, never taken for no signature: under ``warn`` that would
    install the tarball unsigned without a word about what is there."""
    try:
        with os.scandir(tarball.parent) as entries:
            regular = {entry.name: entry.is_file() for entry in entries}
    except OSError:
        return {}
    names = material_names(tarball.name, regular)
    for name in names:
        if not regular[name]:
            raise SignatureInvalidError(
                f"{tarball.with_name(name)} is not a regular file; signature material beside "
                f"{tarball.name} must be one (remove it, or put the file there)"
            )
    return {name: tarball.with_name(name) for name in names}


def has_own_bundle(asset_name: str, material: Material) -> bool:
    """True when the asset has its own Sigstore bundle (the API need not be asked)."""
    return any(asset_name + suffix in material for suffix in BUNDLE_SUFFIXES)


def find_signature_material(asset_name: str, material: Material) -> SignatureMaterial | None:
    """Pick the asset's own bundle (in :data:`SIGNATURE_SUFFIXES` order) or else detached
    cosign signature (``.sig`` with its ``.pem`` or ``.cert``) out of ``material``, or
    ``None``; files named for other assets are ignored."""
    for suffix in BUNDLE_SUFFIXES:
        name = asset_name + suffix
        value = material.get(name)
        if isinstance(value, Path):
            return SignatureMaterial(name=name, bundle=value)
    signature_name = asset_name + ".sig"
    signature = material.get(signature_name)
    certificate_name = next(
        (asset_name + s for s in _CERTIFICATE_SUFFIXES if asset_name + s in material), None
    )
    certificate = material.get(certificate_name) if certificate_name else None
    signature = signature if isinstance(signature, Path) else None
    certificate = certificate if isinstance(certificate, Path) else None
    if signature is None and certificate is None:
        return None
    return SignatureMaterial(
        name=signature_name if signature is not None else str(certificate_name),
        signature=signature,
        certificate=certificate,
    )


def read_material(value: Path | bytes, name: str, *, limit: int) -> bytes:
    """The bytes of one piece of material, refused when larger than ``limit``.

    Only a regular file is read (never a FIFO or device that could block or never end).
    """
    if isinstance(value, bytes):
        data = value
    else:
        try:
            if not value.is_file():
                raise SignatureInvalidError(f"{name} is not a regular file")
            with value.open("rb") as handle:
                data = handle.read(limit + 1)
        except OSError as exc:
            raise SignatureInvalidError(f"{name} cannot be read: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise SignatureInvalidError(f"{name} is larger than {limit} bytes; refusing to parse it")
    return data


def parse_json_document(raw: bytes, name: str) -> Any:
    """``raw`` as JSON; any failure (syntax, encoding, nesting too deep) is
    ``signature_invalid`` naming the file."""
    try:
        return json.loads(raw)
    except RecursionError as exc:
        raise SignatureInvalidError(f"{name} is nested too deeply to be a Sigstore bundle") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise SignatureInvalidError(f"{name} is not JSON: {exception_line(exc)}") from exc


def split_bundles(raw: bytes, name: str) -> list[tuple[str, bytes]]:
    """The bundles of a JSON-lines file (``gh attestation download``), each named
    ``name#N``; a file holding one JSON document (pretty-printed or not) is one bundle."""
    lines = [line for line in raw.splitlines() if line.strip()]
    if len(lines) <= 1:
        return [(name, raw)]
    try:
        json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        pass  # not one document: one bundle per line
    else:
        return [(name, raw)]
    return [(f"{name}#{index}", line) for index, line in enumerate(lines, start=1)]


class AttestationClient(Protocol):
    """What :func:`fetch_attestations` needs of the GitHub client."""

    api_base: str

    def get_json(self, url: str, *, what: str) -> tuple[Any, str | None]:
        """The JSON document at ``url`` (``None`` on 404) and the next page's URL; the client
        caps what it reads."""
        ...

    def fetch_url(self, url: str, *, what: str, max_bytes: int) -> bytes:
        """The bytes at ``url`` under the rules of an asset download (schemes, redirects,
        token only to the API's origin, size cap, deadline)."""
        ...


def _bundle_from_url(client: AttestationClient, url: object, what: str) -> bytes:
    """The bundle an attestation names by ``bundle_url`` (GitHub stores it Snappy-compressed;
    plain JSON is taken too), as one compact JSON line."""
    from nexo_pkg.trust.snappy import SnappyError, decompress  # noqa: PLC0415 (rarely needed)

    if not isinstance(url, str) or not url:
        raise SignatureInvalidError(f"{what}: an attestation has neither a bundle nor a bundle_url")
    body = client.fetch_url(url, what=what, max_bytes=MAX_BUNDLE_BYTES)
    if body.lstrip()[:1] != b"{":
        try:
            body = decompress(body, max_size=MAX_BUNDLE_BYTES)
        except SnappyError as exc:
            raise SignatureInvalidError(
                f"{what}: the bundle at its bundle_url is neither JSON nor Snappy-compressed "
                f"JSON ({exc})"
            ) from exc
    document = parse_json_document(body, what)
    if not isinstance(document, dict):
        raise SignatureInvalidError(f"{what}: the bundle at its bundle_url is not a JSON object")
    return json.dumps(document, separators=(",", ":")).encode()


def fetch_attestations(
    client: AttestationClient, owner: str, repo: str, digest: str
) -> bytes | None:
    """GitHub's artifact attestations of ``sha256:digest`` in ``owner/repo`` as JSON lines
    (one Sigstore bundle per line), or ``None`` when there are none (a 404 too): ``GET
    {api}/repos/{owner}/{repo}/attestations/sha256:{digest}`` under the client's rules, at
    most :data:`MAX_ATTESTATION_PAGES` pages. An attestation without an inline ``bundle`` is
    read from its ``bundle_url`` (at most :data:`MAX_BUNDLE_URLS`), as an asset download."""
    url: str | None = (
        f"{client.api_base}/repos/{quote(owner, safe='')}/{quote(repo, safe='')}"
        f"/attestations/sha256:{digest}?per_page=100"
    )
    what = f"attestations of {owner}/{repo} sha256:{digest[:12]}…"
    lines: list[bytes] = []
    total = 0
    pages = 0
    followed = 0
    while url is not None and pages < MAX_ATTESTATION_PAGES:
        pages += 1
        try:
            document, url = client.get_json(url, what=what)
        except NexoError as error:
            # A server without the endpoint, or a token not allowed to read attestations,
            # offers none: the other material (or its absence) decides, as without them.
            if error.details.get("http_status") in _NO_ATTESTATIONS_STATUSES:
                break
            raise
        if document is None:
            break
        entries = document.get("attestations") if isinstance(document, dict) else None
        if not isinstance(entries, list):
            break
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            bundle = entry.get("bundle")
            if isinstance(bundle, dict):
                line = json.dumps(bundle, separators=(",", ":")).encode()
            elif followed < MAX_BUNDLE_URLS:
                followed += 1
                line = _bundle_from_url(
                    client, entry.get("bundle_url"), f"{what} (bundle {followed})"
                )
            else:
                continue
            total += len(line)
            if total > MAX_ATTESTATION_BYTES:
                raise SignatureInvalidError(
                    f"{what}: more than {MAX_ATTESTATION_BYTES} bytes of attestations"
                )
            lines.append(line)
    return b"\n".join(lines) if lines else None


@dataclass(frozen=True)
class FetchedAttestations:
    """Attestations the API holds for one file of a release: the asset itself, or a
    checksums file that lists it."""

    subject: str
    digest: str
    data: bytes
    name: str

    @property
    def file_name(self) -> str:
        """The name they take as a file beside the release (what ``gh attestation download``
        writes and a mirror keeps): ``<subject>.intoto.jsonl``."""
        return self.subject + ATTESTATION_SUFFIX


def release_attestations(
    client: AttestationClient,
    owner: str,
    repo: str,
    *,
    asset_name: str,
    digest: str,
    material: Material,
) -> FetchedAttestations | None:
    """The API's attestations that ``material`` (what the release offers beside the asset)
    lacks, or ``None``. Nothing is asked when the asset has its own bundle or attestations
    file; else the asset's own are asked for, then those of each checksums file without a
    signature of its own (GoReleaser projects often attest ``checksums.txt`` rather than each
    archive), by that file's digest."""
    if has_own_bundle(asset_name, material) or asset_name + ATTESTATION_SUFFIX in material:
        return None
    own = fetch_attestations(client, owner, repo, digest)
    if own is not None:
        return FetchedAttestations(asset_name, digest, own, attestations_name(digest))
    for checksums_name in sorted(name for name in material if is_checksums_file(name)):
        if any(checksums_name + s in material for s in (*BUNDLE_SUFFIXES, ATTESTATION_SUFFIX)):
            continue
        raw = read_material(material[checksums_name], checksums_name, limit=MAX_CHECKSUMS_BYTES)
        checksums_digest = hashlib.sha256(raw).hexdigest()
        found = fetch_attestations(client, owner, repo, checksums_digest)
        if found is not None:
            return FetchedAttestations(
                checksums_name,
                checksums_digest,
                found,
                checksums_attestations_name(checksums_name, checksums_digest),
            )
    return None
