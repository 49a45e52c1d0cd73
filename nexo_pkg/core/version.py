"""SemVer versions as Rust's ``semver`` 1.x crate parses and orders them: the one version
model of the package.

The daemon parses ``plugin.version`` with ``semver::Version`` and orders versions (a
microapp's ``min_agent_version`` against its own) with the crate's ``Ord``. Every question
about versions here (lint, install, upgrade, outdated, rollback, a release's tarball names)
asks this module, so they all answer as the daemon would:

- the accepted language is the crate's (no ``v`` prefix, no leading zeros, no whitespace,
  ASCII identifiers), with its error wording;
- the order is the crate's, build metadata included: ``0.1.5 < 0.1.5+build.1`` and
  ``1.0.0+b1 < 1.0.0+b2`` (SemVer 2.0 itself leaves build metadata out of precedence; the
  crate gives it a total order so that ``Ord`` agrees with ``Eq``). Two versions are equal
  only when they are written the same.

Version requirements (``semver::VersionReq``) live in :mod:`nexo_pkg.core.versionreq`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

_U64_MAX = 2**64 - 1

# What an identifier list of a pre-release or build metadata is made of (ASCII only).
_IDENTIFIER_CHARS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-."
_ASCII_DIGITS = frozenset("0123456789")

_POSITION_NAMES = {
    "major": "major version number",
    "minor": "minor version number",
    "patch": "patch version number",
    "pre": "pre-release identifier",
    "build": "build metadata",
}


class VersionError(ValueError):
    """A version or version requirement that ``semver`` 1.x would refuse to parse."""


_CHAR_ESCAPES = {"\0": "\\0", "\t": "\\t", "\n": "\\n", "\r": "\\r", "'": "\\'", "\\": "\\\\"}


def _quoted(char: str) -> str:
    """``char`` as the crate prints it, Debug-quoted the Rust way: ``'v'``, ``'\\t'``,
    ``'\\u{a0}'`` (Rust's ``char::escape_debug``; Python's ``repr`` would say ``'\\xa0'``)."""
    escaped = _CHAR_ESCAPES.get(char)
    if escaped is None:
        escaped = char if char.isprintable() else f"\\u{{{ord(char):x}}}"
    return f"'{escaped}'"


def _unexpected_char(position: str, char: str) -> VersionError:
    return VersionError(f"unexpected character {_quoted(char)} while parsing {position}")


def _is_numeric(identifier: str) -> bool:
    # The crate's `bytes().all(is_ascii_digit)`: ASCII digits only (`str.isdigit` is wider).
    return all(char in _ASCII_DIGITS for char in identifier)


@functools.total_ordering
@dataclass(frozen=True)
class Prerelease:
    """A pre-release tag (``alpha.1``), ordered by SemVer precedence; empty means a release.

    A release (no tag) sorts after every pre-release of the same ``major.minor.patch``;
    numeric identifiers compare numerically and before alphanumeric ones; a longer list
    wins when one is a prefix of the other (``impl Ord for Prerelease``, semver's
    ``src/impls.rs``).
    """

    text: str = ""

    @property
    def is_empty(self) -> bool:
        return not self.text

    def _key(self) -> tuple[int, tuple[tuple[int, int, str], ...]]:
        if not self.text:
            return (1, ())
        return (
            0,
            tuple(
                (0, int(part), "") if _is_numeric(part) else (1, 0, part)
                for part in self.text.split(".")
            ),
        )

    def __lt__(self, other: Prerelease) -> bool:
        return self._key() < other._key()


@functools.total_ordering
@dataclass(frozen=True)
class BuildMetadata:
    """Build metadata (``build.1``), ordered as the crate's ``impl Ord for BuildMetadata``
    (semver's ``src/impls.rs``): no metadata sorts first; identifier by identifier, numeric
    ones compare by value, then the shorter spelling first (``0 < 00 < 1 < 01 < 2 < 10``),
    and before alphanumeric ones, which compare in ASCII order; a longer list wins when one
    is a prefix of the other."""

    text: str = ""

    def _key(self) -> tuple[tuple[int, int, str, int], ...]:
        if not self.text:
            return ()
        key: list[tuple[int, int, str, int]] = []
        for part in self.text.split("."):
            if _is_numeric(part):
                value = part.lstrip("0")
                key.append((0, len(value), value, len(part)))
            else:
                key.append((1, 0, part, 0))
        return tuple(key)

    def __lt__(self, other: BuildMetadata) -> bool:
        return self._key() < other._key()


@functools.total_ordering
@dataclass(frozen=True)
class Version:
    """A SemVer 2.0 version, ordered as ``semver::Version`` is: by major, minor, patch,
    pre-release, then build metadata (the crate's derived ``Ord``). Build metadata never
    affects requirement matching."""

    major: int
    minor: int
    patch: int
    pre: Prerelease = Prerelease()
    build: str = ""

    @classmethod
    def parse(cls, text: str) -> Version:
        """Parse ``text`` strictly; raise :class:`VersionError` as ``semver::Version`` would."""
        return parse_version(text)

    @classmethod
    def is_valid(cls, text: str) -> bool:
        """Whether ``semver::Version`` parses ``text``."""
        try:
            parse_version(text)
        except VersionError:
            return False
        return True

    def without_prerelease(self) -> Version:
        """This version with its pre-release tag removed (``0.1.6-rc3`` -> ``0.1.6``)."""
        return Version(self.major, self.minor, self.patch, Prerelease(), self.build)

    def without_build(self) -> Version:
        """This version with its build metadata removed (``1.0.0+b1`` -> ``1.0.0``): what a
        registry tag, which cannot carry ``+``, can name."""
        return Version(self.major, self.minor, self.patch, self.pre)

    def _key(self) -> tuple[int, int, int, Prerelease, BuildMetadata]:
        return (self.major, self.minor, self.patch, self.pre, BuildMetadata(self.build))

    def __lt__(self, other: Version) -> bool:
        return self._key() < other._key()

    def __str__(self) -> str:
        pre = f"-{self.pre.text}" if self.pre.text else ""
        build = f"+{self.build}" if self.build else ""
        return f"{self.major}.{self.minor}.{self.patch}{pre}{build}"


def compare_versions(left: str, right: str) -> int:
    """-1, 0 or 1 as ``left`` is below, equal to or above ``right`` in the crate's order.
    Raises :class:`VersionError` when either is not a version."""
    first, second = parse_version(left), parse_version(right)
    return (first > second) - (first < second)


def _numeric(text: str, position: str) -> tuple[int, str]:
    name = _POSITION_NAMES[position]
    rest = text.lstrip("0123456789")
    digits = text[: len(text) - len(rest)]
    if not digits:
        if text:
            raise _unexpected_char(name, text[0])
        raise VersionError(f"unexpected end of input while parsing {name}")
    if len(digits) > 1 and digits[0] == "0":
        raise VersionError(f"invalid leading zero in {name}")
    if len(digits) > len(str(_U64_MAX)) or int(digits) > _U64_MAX:
        raise VersionError(f"value of {name} exceeds u64::MAX")
    return int(digits), rest


def _identifier(text: str, position: str) -> tuple[str, str]:
    """Split off a dot-separated identifier list; the crate's rules on empty segments."""
    rest = text.lstrip(_IDENTIFIER_CHARS)
    identifier = text[: len(text) - len(rest)]
    if not identifier:
        return "", text
    for segment in identifier.split("."):
        if not segment:
            raise VersionError(f"empty identifier segment in {_POSITION_NAMES[position]}")
        if position == "pre" and len(segment) > 1 and segment[0] == "0" and segment.isdigit():
            raise VersionError(f"invalid leading zero in {_POSITION_NAMES[position]}")
    return identifier, rest


def _dot(text: str, position: str) -> str:
    if text.startswith("."):
        return text[1:]
    if text:
        return _raise_after(position, text[0])
    raise VersionError(f"unexpected end of input while parsing {_POSITION_NAMES[position]}")


def _raise_after(position: str, char: str) -> str:
    raise VersionError(f"unexpected character {_quoted(char)} after {_POSITION_NAMES[position]}")


def _pre_and_build(text: str, position: str) -> tuple[str, str, str, str]:
    """Split off ``-pre`` and ``+build`` after a patch number: both (empty when absent), the
    last position parsed and the rest."""
    parts = {"pre": "", "build": ""}
    for sign, part in (("-", "pre"), ("+", "build")):
        if text.startswith(sign):
            position = part
            parts[part], text = _identifier(text[1:], position)
            if not parts[part]:
                raise VersionError(f"empty identifier segment in {_POSITION_NAMES[part]}")
    return parts["pre"], parts["build"], position, text


def parse_version(text: str) -> Version:
    """Parse a strict SemVer 2.0 version (``1.2.3-rc.1+build``).

    Raises :class:`VersionError` for anything ``semver::Version::from_str`` refuses: an empty
    string, a ``v`` prefix, leading zeros, missing parts, surrounding whitespace.
    """
    if not text:
        raise VersionError("empty string, expected a semver version")
    major, rest = _numeric(text, "major")
    minor, rest = _numeric(_dot(rest, "major"), "minor")
    patch, rest = _numeric(_dot(rest, "minor"), "patch")
    pre, build, position, rest = _pre_and_build(rest, "patch")
    if rest:
        _raise_after(position, rest[0])
    return Version(major, minor, patch, Prerelease(pre), build)
