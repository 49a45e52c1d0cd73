"""Checksum step: the ``<asset>.sha256`` sidecar and the API's asset ``digest``."""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.terminal import printable

_HEX = re.compile(r"[0-9a-fA-F]{64}")


# What Rust's `char::is_whitespace` (the Unicode White_Space property) calls whitespace, which
# `str::split_whitespace` splits at: wider than ASCII (U+0085, U+00A0, U+2000..U+200A ...),
# narrower than Python's `str.isspace` (which adds U+001C..U+001F).
_RUST_WHITESPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_TOKEN = re.compile(f"[^{_RUST_WHITESPACE}]+")

# The byte-order marks reqwest's `Response::text` sniffs (encoding_rs `Encoding::decode`):
# the mark picks the encoding and is removed; without one the body is UTF-8, read lossily.
_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def sidecar_text(raw: bytes) -> str:
    """``raw`` decoded as the daemon's HTTP client decodes a body: a byte-order mark (UTF-8,
    UTF-16LE/BE) picks the encoding and is dropped; otherwise UTF-8, invalid bytes replaced."""
    for mark, encoding in _BOMS:
        if raw.startswith(mark):
            return raw[len(mark) :].decode(encoding, errors="replace")
    return raw.decode("utf-8", errors="replace")


def parse_sidecar(raw: bytes, asset_name: str) -> str:
    """The sha256 a ``.sha256`` sidecar gives for ``asset_name`` (lower-case hex), read as
    the daemon's installer reads it (``ext-installer`` ``download_and_verify``): the body
    decoded (:func:`sidecar_text`), its *first* whitespace-separated token, lower-cased, which
    must be 64 hex digits. What follows it (a file name, other lines) is not read, so a wrong
    first digest is a mismatch whatever later lines say; a first token that is no digest is a
    ``checksum_mismatch`` too, since a sidecar that cannot be read cannot vouch for the file.

    Beyond the daemon, as ``sha256sum -c`` reads the file: a later line for the asset (a bare
    digest, or ``<hex>  <name>`` naming it) that gives another digest makes the sidecar
    contradict itself, and it vouches for nothing (``checksum_mismatch``).
    """
    text = sidecar_text(raw)
    first = _TOKEN.search(text)
    token = first.group().lower() if first is not None else ""
    if not _HEX.fullmatch(token):
        shown = printable(token[:80]) if token else "nothing"
        raise NexoError(
            f"{asset_name}.sha256 does not start with a sha256 checksum (its first word is "
            f"{shown}, not 64 hex digits)",
            kind="checksum_mismatch",
            details={"sidecar_token": token[:80]},
        )
    others = sorted({digest for digest in _digests_for(text, asset_name) if digest != token})
    if others:
        listed = ", ".join([token, *others])
        raise NexoError(
            f"{asset_name}.sha256 holds checksums for {asset_name} that disagree ({listed}); "
            "it cannot vouch for the download",
            kind="checksum_mismatch",
            details={"sidecar_digests": [token, *others], "checked_against": "sidecar"},
        )
    return token


def _digests_for(text: str, asset_name: str) -> list[str]:
    """The digests the lines of ``text`` give for ``asset_name`` as ``sha256sum -c`` reads
    them: split at ``\n`` only (a ``\r`` before it dropped); a line is a bare digest or
    ``<hex>  <name>`` / ``<hex> *<name>``, and counts when it names no file or the asset."""
    found: list[str] = []
    for line in text.split("\n"):
        digest, _, name = line.removesuffix("\r").strip(" \t").partition(" ")
        name = name.strip(" \t").removeprefix("*")
        if _HEX.fullmatch(digest) and (not name or name.rsplit("/", 1)[-1] == asset_name):
            found.append(digest.lower())
    return found


def parse_digest(digest: str | None) -> str | None:
    """The hex of an API ``sha256:<hex>`` digest; other algorithms are not usable here."""
    algorithm, _, value = (digest or "").partition(":")
    if algorithm.lower() == "sha256" and _HEX.fullmatch(value):
        return value.lower()
    return None


def no_checksum(asset_name: str, listed_digest: str | None = None) -> NexoError:
    """``checksum_missing`` for a release asset with no ``.sha256`` sidecar and no usable
    digest (``listed_digest``, when the release lists one, is not ``sha256:<64 hex>``)."""
    if listed_digest:
        shown = printable(listed_digest[:80]) + ("…" if len(listed_digest) > 80 else "")
        return NexoError(
            f"no checksum for {asset_name}: the release has no {asset_name}.sha256, and its "
            f"asset digest '{shown}' is not a sha256 digest (sha256:<64 hex digits>), so the "
            "download cannot be verified",
            kind="checksum_missing",
        )
    return NexoError(
        f"no checksum for {asset_name}: the release has neither {asset_name}.sha256 nor an "
        "asset digest, so the download cannot be verified",
        kind="checksum_missing",
    )


def one_listed(asset_name: str, listed: Mapping[str, Sequence[str]]) -> tuple[str, str] | None:
    """The sha256 checksums files list for ``asset_name`` (``listed``: each sha256 with the
    files that list it) and the first file that lists it; ``None`` when none does. Files that
    list it with different hashes, or one file that lists it twice with two (under two paths, see
    :func:`~nexo_pkg.trust.verifiers.checksums.names_asset`), are ``checksum_mismatch``: no
    download could match them all."""
    if not listed:
        return None
    if len(listed) > 1:
        files = {name for names in listed.values() for name in names}
        if len(files) == 1:
            # One file names it twice (`name` and `dist/name`, say): ambiguous on its own.
            raise NexoError(
                f"checksum mismatch for {asset_name}: {files.pop()} lists it with different "
                f"hashes ({', '.join(listed)}), so it vouches for neither",
                kind="checksum_mismatch",
            )
        named = "; ".join(f"{', '.join(names)}: {digest}" for digest, names in listed.items())
        raise NexoError(
            f"checksum mismatch for {asset_name}: its checksums files list it with different "
            f"hashes ({named})",
            kind="checksum_mismatch",
        )
    digest, names = next(iter(listed.items()))
    return digest, names[0]


def verify_checksums(
    actual: str,
    asset_name: str,
    *,
    sidecar: str | None,
    digest: str | None,
    local_dir: Path | None = None,
    listed_digest: str | None = None,
    sidecar_name: str | None = None,
) -> tuple[str, ...]:
    """Compare ``actual`` with every expected value present; return which ones were checked.

    ``local_dir`` is the directory of a local tarball (its messages then speak of files beside
    it, not of a release); ``listed_digest`` the digest the release lists as it stands, named
    when ``digest`` (its usable sha256) is ``None``; ``sidecar_name`` the checksums file
    ``sidecar`` was read from when it is not ``<asset>.sha256`` (see :func:`one_listed`).
    Raises ``checksum_missing`` when there is none at all, ``checksum_mismatch`` when any
    differs.
    """
    listed_in = "sidecar" if sidecar_name is None else "checksums-file"
    expected = ((listed_in, sidecar), ("digest", digest))
    present = [(source, value) for source, value in expected if value is not None]
    if not present and local_dir is not None:
        sidecar_path = local_dir / f"{asset_name}.sha256"
        there = (
            f"{sidecar_path.name} beside it in {local_dir} is not a regular file"
            if sidecar_path.is_symlink() or sidecar_path.exists()
            else f"there is no {sidecar_path.name} beside it in {local_dir}"
        )
        raise NexoError(
            f"no checksum for {asset_name}: {there}, so the tarball cannot be verified "
            "(`nexo plugin pack` writes one next to the tarball; copy both)",
            kind="checksum_missing",
        )
    if not present:
        raise no_checksum(asset_name, listed_digest)
    for source, value in present:
        if not hmac.compare_digest(actual, value):
            label = "the release asset digest" if source == "digest" else f"{asset_name}.sha256"
            if source == "checksums-file":
                label = str(sidecar_name)
            if source != "digest" and local_dir is not None:
                label += " beside it"
            # A tarball on disk was not downloaded: its words are the file's, not a release's.
            hashed = "the download" if local_dir is None else "the tarball"
            raise NexoError(
                f"checksum mismatch for {asset_name}: {label} says {value}, {hashed} is {actual}",
                kind="checksum_mismatch",
                details={"expected": value, "actual": actual, "checked_against": source},
            )
    return tuple(source for source, _ in present)
