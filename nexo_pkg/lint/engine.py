"""Lint entry points used by the CLI, ``pack``, ``install``, ``check`` and the language server.

Provisional implementation: parses with ``tomllib`` and checks the required keys only. The
full engine (positions, JSON Schema, every rule) replaces the body, keeping these signatures.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from nexo_pkg.lint.diagnostic import Diagnostic, FileResult, Position, Span
from nexo_pkg.lint.options import LintOptions

__all__ = ["LintOptions", "lint_file", "lint_source"]

_ID = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


def _at_start(code: str, name: str, message: str, key_path: str) -> Diagnostic:
    here = Position(1, 1)
    return Diagnostic(code, name, "error", message, key_path, Span(here, Position(1, 2)))


def lint_source(
    text: str, *, path: str = "nexo-plugin.toml", options: LintOptions | None = None
) -> FileResult:
    """Lint manifest ``text``; never raises for bad input."""
    del options
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return FileResult(path, (_at_start("NX001", "toml-syntax", str(exc), ""),), text)
    found: list[Diagnostic] = []
    plugin = data.get("plugin")
    if not isinstance(plugin, dict):
        found.append(_at_start("NX002", "schema", "missing table [plugin]", "plugin"))
    else:
        for key in ("id", "version", "name", "description", "min_nexo_version"):
            if key not in plugin:
                found.append(_at_start("NX002", "schema", f"missing key `{key}`", f"plugin.{key}"))
        plugin_id = plugin.get("id")
        if isinstance(plugin_id, str) and not _ID.match(plugin_id):
            found.append(_at_start("NX003", "invalid-plugin-id", "bad id", "plugin.id"))
    return FileResult(path, tuple(found), text)


def lint_file(path: Path, *, options: LintOptions | None = None) -> FileResult:
    """Lint the manifest at ``path``; unreadable files raise :class:`OSError`."""
    raw = path.read_bytes()
    return lint_source(raw.decode("utf-8", errors="replace"), path=str(path), options=options)
