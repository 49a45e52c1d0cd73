"""Checksum step: the ``<asset>.sha256`` sidecar and the API's asset ``digest``."""

from __future__ import annotations

import hmac
import re
from pathlib import Path

from nexo_pkg.core.errors import NexoError

_HEX = re.compile(r"^[0-9a-fA-F]{64}$")


def checksum_lines(text: str) -> list[str]:
    """The lines of a ``sha256sum``-format file as ``sha256sum -c`` reads them: split at
    ``\n`` only (a ``\r`` before it dropped), never at the other characters
    :meth:`str.splitlines` breaks at (``\x0b``, ``\x1c``, ``\x85``, U+2028 …), so that
    one line cannot hide a second listing inside its file name."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def parse_sidecar(text: str, asset_name: str) -> str:
    """The sha256 a ``.sha256`` sidecar gives for ``asset_name`` (lower-case hex).

    Accepts a bare hex digest or ``sha256sum`` lines (``<hex>  <name>`` / ``<hex> *<name>``);
    a named line must name the asset, and lines for other files are skipped. As with
    ``sha256sum -c``, every line for the asset must hold: lines that disagree are a
    ``checksum_mismatch``, as is a sidecar with no line for the asset at all, since a sidecar
    that cannot be read cannot vouch for the file.
    """
    found: list[str] = []
    for line in checksum_lines(text):
        digest, _, name = line.strip(" \t").partition(" ")
        if not _HEX.fullmatch(digest):
            continue
        name = name.strip(" \t").lstrip("*")
        if not name or name.rsplit("/", 1)[-1] == asset_name:
            found.append(digest.lower())
    if not found:
        raise NexoError(
            f"{asset_name}.sha256 does not hold a sha256 checksum for {asset_name}",
            kind="checksum_mismatch",
        )
    if len(set(found)) > 1:
        listed = ", ".join(sorted(set(found)))
        raise NexoError(
            f"{asset_name}.sha256 holds checksums for {asset_name} that disagree ({listed}); "
            "it cannot vouch for the download",
            kind="checksum_mismatch",
            details={"sidecar_digests": sorted(set(found))},
        )
    return found[0]


def parse_digest(digest: str | None) -> str | None:
    """The hex of an API ``sha256:<hex>`` digest; other algorithms are not usable here."""
    if not digest:
        return None
    algorithm, _, value = digest.partition(":")
    if algorithm.lower() == "sha256" and _HEX.fullmatch(value):
        return value.lower()
    return None


def verify_checksums(
    actual: str,
    asset_name: str,
    *,
    sidecar: str | None,
    digest: str | None,
    local_dir: Path | None = None,
) -> tuple[str, ...]:
    """Compare ``actual`` with every expected value present; return which ones were checked.

    ``local_dir`` is the directory of a local tarball (its messages then speak of files beside
    it, not of a release). Raises ``checksum_missing`` when there is none at all,
    ``checksum_mismatch`` when any differs.
    """
    expected = (("sidecar", sidecar), ("digest", digest))
    present = [(source, value) for source, value in expected if value is not None]
    if not present and local_dir is not None:
        raise NexoError(
            f"no checksum for {asset_name}: there is no {asset_name}.sha256 beside it in "
            f"{local_dir}, so the tarball cannot be verified (`nexo plugin pack` writes one "
            "next to the tarball; copy both)",
            kind="checksum_missing",
        )
    if not present:
        raise NexoError(
            f"no checksum for {asset_name}: the release has neither {asset_name}.sha256 nor an "
            "asset digest, so the download cannot be verified",
            kind="checksum_missing",
        )
    for source, value in present:
        if not hmac.compare_digest(actual, value):
            label = "the release asset digest" if source == "digest" else f"{asset_name}.sha256"
            if source == "sidecar" and local_dir is not None:
                label += " beside it"
            raise NexoError(
                f"checksum mismatch for {asset_name}: {label} says {value}, the download is "
                f"{actual}",
                kind="checksum_mismatch",
                details={"expected": value, "actual": actual, "checked_against": source},
            )
    return tuple(source for source, _ in present)
