"""Failures of ``pack`` and ``new``: one :class:`NexoError` per kind of problem.

Exit codes follow the SPEC: 2 when the input cannot be used at all (bad flags, a missing
manifest, an unreadable file, an output path that is a file), 1 when the project was read and
the answer is "no" (lint errors, a bad layout, native code, requirements that do not install).
"""

from __future__ import annotations

from typing import Any

from nexo_pkg.core.diagnostics import FileResult
from nexo_pkg.core.errors import EXIT_FAILURE, EXIT_USAGE, NexoError


class PackError(NexoError):
    """A pack that could not produce a tarball (exit 1 unless stated otherwise)."""

    kind = "pack_failed"
    exit_code = EXIT_FAILURE


def usage_error(message: str) -> PackError:
    """Bad flags or arguments (exit 2)."""
    return PackError(message, kind="usage", exit_code=EXIT_USAGE)


def io_error(message: str) -> PackError:
    """An input file or directory that cannot be read, or an output that cannot be written."""
    return PackError(message, kind="io", exit_code=EXIT_USAGE)


def layout_error(message: str, **details: Any) -> PackError:
    """The project does not have the shape a plugin tarball needs (exit 1)."""
    return PackError(message, kind="layout_invalid", details=details)


def manifest_error(message: str) -> PackError:
    """The manifest lints but its values cannot be used (exit 1)."""
    return PackError(message, kind="manifest_invalid")


class ManifestLintError(PackError):
    """The manifest has lint errors; the diagnostics travel with the error for the CLI."""

    kind = "manifest_invalid"
    exit_code = EXIT_FAILURE

    def __init__(self, result: FileResult) -> None:
        count = len(result.errors)
        noun = "error" if count == 1 else "errors"
        super().__init__(
            f"{result.path} has {count} lint {noun}; fix the manifest (see `nexo plugin lint`) "
            "and pack again",
            details={"diagnostics": [d.to_json() for d in result.diagnostics]},
        )
        self.result = result
