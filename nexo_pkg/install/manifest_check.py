"""The check a release's manifest asset must pass before its id and version are believed:
the reference installer parses it into its typed manifest, so what that parser refuses
refuses the release. It is lint's check, passed down to ``sources.select`` as a callable."""

from __future__ import annotations

from nexo_pkg.core.errors import NexoError

DESERIALISATION_CODES = frozenset(
    {*(f"NX{number:03d}" for number in (1, 2, 3, 5, 10, 11, 12, 13, 14, 15)), "NX101", "NX104"}
)
"""Lint errors that mean the daemon's typed manifest cannot be deserialised at all: TOML
syntax, unknown keys (``deny_unknown_fields``), missing keys, types, enums, integer ranges,
and ``version``/``min_nexo_version`` that ``semver`` does not parse."""


def manifest_asset_problem(text: str) -> str | None:
    """Why the reference installer could not parse manifest ``text`` (the first lint error of
    :data:`DESERIALISATION_CODES`, with its line and column), or ``None``. The daemon's later
    checks (ids, namespaces, sandbox) are the archive manifest's (:mod:`~.payload`)."""
    from nexo_pkg.lint.engine import lint_source  # noqa: PLC0415 - only for releases with one

    result = lint_source(text)
    for diagnostic in result.errors:
        if diagnostic.code in DESERIALISATION_CODES:
            where = diagnostic.span.start
            return f"{diagnostic.message} (line {where.line}, column {where.column})"
    return None


def misnamed_manifest(
    found: tuple[str, str], named: tuple[str, str], *, archive: str, fix: str = ""
) -> NexoError:
    """``manifest_mismatch``: the manifest in ``archive`` names ``found`` (id, version), its
    file name ``named``. Install refuses such a tarball, and push will not publish it."""
    return NexoError(
        f"{archive}'s manifest is {found[0]} {found[1]}, but it is named for "
        f"{named[0]} {named[1]}{fix}",
        kind="manifest_mismatch",
        details={
            "manifest": {"id": found[0], "version": found[1]},
            "asset": {"id": named[0], "version": named[1]},
        },
    )
