"""Signed checksum files (GoReleaser's ``checksums.txt``, ``SHA256SUMS``).

Once the checksums file's own signature verified (any scheme the entry knows), the asset is
trusted only if the file lists it, once or always with the same SHA-256, and that hash is the
asset's.
"""

from __future__ import annotations

import re

from nexo_pkg.trust.base import SignatureInvalidError

# The name is the rest of the line with its trailing blanks dropped (by rstrip, not by the
# pattern: a lazy name before `[ \t]*$` backtracks quadratically over a long run of blanks).
_LINE = re.compile(r"([0-9a-fA-F]{64})[ \t]+\*?(.*)")


def listed_digests(text: str, asset_name: str) -> set[str]:
    """Every SHA-256 the ``sha256sum``-format ``text`` lists for ``asset_name``."""
    found: set[str] = set()
    # Lines end at "\n" only (a "\r" before it dropped), as `sha256sum -c` reads them, never
    # at the other breaks str.splitlines() knows ("\x85", U+2028 …), so that one line cannot
    # hide a second listing inside its file name.
    for line in (raw.removesuffix("\r") for raw in text.split("\n")):
        match = _LINE.fullmatch(line)
        if match is None:
            continue
        listed = match.group(2).rstrip(" \t").removeprefix("./")
        if listed == asset_name:
            found.add(match.group(1).lower())
    return found


def check_listed(text: str, *, checksums_name: str, asset_name: str, digest: str) -> None:
    """Raise :class:`SignatureInvalidError` unless the signed checksums ``text`` lists
    ``asset_name`` with ``digest`` and with no other hash."""
    digests = listed_digests(text, asset_name)
    if not digests:
        raise SignatureInvalidError(
            f"the signed {checksums_name} does not list {asset_name}, so it vouches nothing "
            "about it"
        )
    if len(digests) > 1:
        raise SignatureInvalidError(
            f"the signed {checksums_name} lists {asset_name} with different hashes "
            f"({', '.join(sorted(digests))})"
        )
    if digest.lower() not in digests:
        raise SignatureInvalidError(
            f"the signed {checksums_name} lists sha256 {next(iter(digests))} for {asset_name}, "
            f"but the file's is {digest}"
        )
