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
# The tagged form `sha256sum --tag` (and BSD `sha256`, `shasum -a 256 --tag`, `openssl dgst`)
# writes: `SHA256 (name) = hex`, or `SHA256(name)= hex`. Only the SHA256 tag: another
# algorithm's line holds no sha256.
_TAG = re.compile(r"[ \t]*SHA256 ?\(")
_TAGGED_DIGEST = re.compile(r"[ \t]*=[ \t]*([0-9a-fA-F]{64})")


def listed_line(line: str) -> tuple[str, str] | None:
    """The sha256 (lower-case hex) and the name one line of a checksums file lists, as
    ``sha256sum -c`` splits it (coreutils src/cksum.c ``split_3``, ``bsd_split_3``); ``None``
    for any other line. Two forms: ``<hex>  <name>`` / ``<hex> *<name>``, and the tagged
    ``SHA256 (<name>) = <hex>`` (blanks before the tag; one space or none before ``(``; the
    name runs to the line's *last* ``)``; blanks around ``=``; the digest ends the line). A
    ``\\``-escaped line (a name with a line break or a backslash) is not read."""
    tag = _TAG.match(line)
    if tag is not None:
        close = line.rfind(")")
        found = _TAGGED_DIGEST.fullmatch(line, close + 1) if close >= tag.end() else None
        return None if found is None else (found.group(1).lower(), line[tag.end() : close])
    match = _LINE.fullmatch(line)
    if match is None:
        return None
    return match.group(1).lower(), match.group(2).rstrip(" \t")


def names_asset(listed: str, asset_name: str) -> bool:
    """Whether the name a checksums line lists, ``listed``, is ``asset_name``: its last
    ``/``-separated component is exactly the asset's name (``name``, ``./name``, ``dist/name``,
    which ``sha256sum dist/*`` writes). The rule is the same for every path, ``..`` or absolute
    ones included: nothing is normalised, so ``dist/../name`` names ``name`` (its last
    component) and ``name/..`` or ``name/`` names nothing; a file that lists the asset under
    two paths with different hashes lists it ambiguously, which the caller refuses."""
    return listed.rsplit("/", 1)[-1] == asset_name


def listed_digests(text: str, asset_name: str) -> set[str]:
    """Every SHA-256 the checksums ``text`` lists for ``asset_name`` (see :func:`listed_line`
    and :func:`names_asset`)."""
    found: set[str] = set()
    # Lines end at "\n" only (a "\r" before it dropped), as `sha256sum -c` reads them, never
    # at the other breaks str.splitlines() knows ("\x85", U+2028 …), so that one line cannot
    # hide a second listing inside its file name.
    for line in (raw.removesuffix("\r") for raw in text.split("\n")):
        listed = listed_line(line)
        if listed is not None and names_asset(listed[1], asset_name):
            found.add(listed[0])
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
