"""Cargo version requirements, with the semantics of Rust's ``semver`` 1.x.

The daemon parses ``min_nexo_version`` as ``semver::VersionReq`` and matches it against its
own version (a :class:`~nexo_pkg.core.version.Version`, the one version model). This module
reproduces the parser (same accepted language, same error wording) and the matcher, so
``lint`` accepts exactly what the daemon accepts and ``--nexo-version`` answers as it would:

- comparators ``=``, ``>``, ``>=``, ``<``, ``<=``, ``~``, ``^``; no operator means ``^``;
- partial versions (``1``, ``0.2``) and wildcards ``*``, ``x``, ``X`` (``0.3.*``, ``*``);
- comma-separated comparators, all of which must match; only spaces are skipped;
- a pre-release version matches only if some comparator has the same ``major.minor.patch``
  and a pre-release of its own (Cargo's rule).

Parse failures raise :class:`VersionError` whose message follows the crate's wording.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from nexo_pkg.core.version import (
    _POSITION_NAMES,
    Prerelease,
    Version,
    VersionError,
    _numeric,
    _pre_and_build,
    _quoted,
)

# The crate refuses requirements with more comparators than this.
_MAX_COMPARATORS = 32


class Op(Enum):
    """A comparator's operator; ``WILDCARD`` is a bare ``1.*`` / ``1.2.x``."""

    EXACT = "="
    GREATER = ">"
    GREATER_EQ = ">="
    LESS = "<"
    LESS_EQ = "<="
    TILDE = "~"
    CARET = "^"
    WILDCARD = ""


@dataclass(frozen=True)
class Comparator:
    """One comparator of a requirement; ``minor``/``patch`` are None when left out."""

    op: Op
    major: int
    minor: int | None = None
    patch: int | None = None
    pre: Prerelease = Prerelease()  # noqa: RUF009 (a frozen dataclass)

    def __str__(self) -> str:
        # The parser sets ``patch`` only after ``minor``, and ``pre`` only after ``patch``.
        numbers = ".".join(
            str(part) for part in (self.major, self.minor, self.patch) if part is not None
        )
        wildcard = ".*" if self.op is Op.WILDCARD and self.patch is None else ""
        pre = f"-{self.pre.text}" if self.pre.text else ""
        return f"{self.op.value}{numbers}{wildcard}{pre}"


@dataclass(frozen=True)
class VersionReq:
    """A parsed requirement: all comparators must match; no comparator is ``*``."""

    comparators: tuple[Comparator, ...]

    def matches(self, version: Version) -> bool:
        """Whether ``version`` satisfies the requirement, following Cargo's pre-release rule."""
        # A pre-release only satisfies a requirement that opts into pre-releases of the
        # same major.minor.patch, so `>=1.0.0` never pulls in `2.0.0-alpha`.
        return all(_matches_operator(comparator, version) for comparator in self.comparators) and (
            version.pre.is_empty
            or any(_prerelease_compatible(comparator, version) for comparator in self.comparators)
        )

    def __str__(self) -> str:
        if not self.comparators:
            return "*"
        return ", ".join(str(comparator) for comparator in self.comparators)


def _matches_operator(comparator: Comparator, version: Version) -> bool:
    op = comparator.op
    if op in (Op.EXACT, Op.WILDCARD):
        return _matches_exact(comparator, version)
    if op is Op.GREATER:
        return _order(comparator, version) > 0
    if op is Op.GREATER_EQ:
        return _matches_exact(comparator, version) or _order(comparator, version) > 0
    if op is Op.LESS:
        return _order(comparator, version) < 0
    if op is Op.LESS_EQ:
        return _matches_exact(comparator, version) or _order(comparator, version) < 0
    if op is Op.TILDE:
        return _matches_tilde(comparator, version)
    return _matches_caret(comparator, version)


def _same_major_minor(comparator: Comparator, version: Version) -> bool:
    return version.major == comparator.major and comparator.minor in (None, version.minor)


def _matches_exact(comparator: Comparator, version: Version) -> bool:
    return (
        _same_major_minor(comparator, version)
        and comparator.patch in (None, version.patch)
        and version.pre == comparator.pre
    )


def _order(comparator: Comparator, version: Version) -> int:
    """1 when ``version`` is above ``comparator``, -1 below, 0 when neither: equal on every
    part the comparator names (a part it leaves out ends the comparison)."""
    for mine, theirs in (
        (version.major, comparator.major),
        (version.minor, comparator.minor),
        (version.patch, comparator.patch),
    ):
        if theirs is None:
            return 0
        if mine != theirs:
            return 1 if mine > theirs else -1
    return 1 if version.pre > comparator.pre else -1 if version.pre < comparator.pre else 0


def _matches_tilde(comparator: Comparator, version: Version) -> bool:
    if not _same_major_minor(comparator, version):
        return False
    if comparator.patch is not None and version.patch != comparator.patch:
        return version.patch > comparator.patch
    return version.pre >= comparator.pre


def _matches_caret(comparator: Comparator, version: Version) -> bool:
    if version.major != comparator.major:
        return False
    minor = comparator.minor
    if minor is None:
        return True
    patch = comparator.patch
    if patch is None:
        return version.minor >= minor if comparator.major > 0 else version.minor == minor
    if version.minor != minor:
        return comparator.major > 0 and version.minor > minor
    if version.patch != patch:
        # ``^0.0.3`` admits only 0.0.3; ``^0.2.3`` and ``^1.2.3`` admit later patches.
        return (comparator.major > 0 or minor > 0) and version.patch > patch
    return version.pre >= comparator.pre


def _prerelease_compatible(comparator: Comparator, version: Version) -> bool:
    return (
        comparator.major == version.major
        and comparator.minor == version.minor
        and comparator.patch == version.patch
        and not comparator.pre.is_empty
    )


def _lone_wildcard(char: str) -> VersionError:
    return VersionError(f"wildcard req ({char}) must be the only comparator in the version req")


def _wildcard(text: str) -> tuple[str, str] | None:
    if text[:1] in ("*", "x", "X"):
        return text[0], text[1:]
    return None


_OPERATORS = (
    (">=", Op.GREATER_EQ),
    ("<=", Op.LESS_EQ),
    ("=", Op.EXACT),
    (">", Op.GREATER),
    ("<", Op.LESS),
    ("~", Op.TILDE),
    ("^", Op.CARET),
)


def _comparator(text: str) -> tuple[Comparator, str, str]:
    """Parse one comparator; return it, the last position parsed, and the remaining text."""
    spelling, op = next(
        ((spelling, op) for spelling, op in _OPERATORS if text.startswith(spelling)),
        ("", Op.CARET),
    )
    text = text[len(spelling) :].lstrip(" ")
    position = "major"
    major, text = _numeric(text, position)
    parts: dict[str, int | None] = {"minor": None, "patch": None}
    has_wildcard = False
    for part in parts:
        if not text.startswith("."):
            break
        position = part
        wildcard = _wildcard(text[1:])
        if wildcard is not None:
            has_wildcard = True
            op = op if spelling else Op.WILDCARD
            text = wildcard[1]
        elif has_wildcard:
            raise VersionError("unexpected character after wildcard in version req")
        else:
            parts[part], text = _numeric(text[1:], part)
    minor, patch = parts["minor"], parts["patch"]
    pre = ""
    if patch is not None:
        pre, _, position, text = _pre_and_build(text, position)
    return Comparator(op, major, minor, patch, Prerelease(pre)), position, text.lstrip(" ")


def parse_version_req(text: str) -> VersionReq:
    """Parse a Cargo-style version requirement (``>=0.1, <0.5``, ``^0.2``, ``0.3.*``, ``*``).

    Raises :class:`VersionError` for anything ``semver::VersionReq::from_str`` refuses: an
    empty string, a ``v`` prefix, a missing comma between comparators, a wildcard mixed with
    other comparators, more than 32 comparators, leading zeros, non-space whitespace.
    """
    text = text.lstrip(" ")
    wildcard = _wildcard(text)
    if wildcard is not None:
        char, rest = wildcard
        rest = rest.lstrip(" ")
        if not rest:
            return VersionReq(())
        if rest.startswith(","):
            raise _lone_wildcard(char)
        raise VersionError("unexpected character after wildcard in version req")

    comparators: list[Comparator] = []
    while True:
        try:
            comparator, position, text = _comparator(text)
        except VersionError:
            wildcard = _wildcard(text)
            if wildcard is not None:
                rest = wildcard[1].lstrip(" ")
                if not rest or rest.startswith(","):
                    raise _lone_wildcard(wildcard[0]) from None
            raise
        comparators.append(comparator)
        if not text:
            return VersionReq(tuple(comparators))
        if not text.startswith(","):
            raise VersionError(
                f"expected comma after {_POSITION_NAMES[position]}, found {_quoted(text[0])}"
            )
        if len(comparators) == _MAX_COMPARATORS:
            raise VersionError("excessive number of version comparators")
        text = text[1:].lstrip(" ")
