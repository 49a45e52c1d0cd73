"""Lint any TOML file against a JSON Schema shipped in ``nexo_pkg/schemas/``.

For files that have a schema but no rules of their own, such as a fleet's
``nexo-plugins.toml`` and ``nexo-plugins.lock``: TOML syntax errors first (``NX001``,
``NX002``, as for a manifest), then every schema error at the span of the key it is about —
an unknown key (``NX011``) at that key, a missing one (``NX010``) at its table, a value of the
wrong type (``NX012``) or outside what the schema allows (``NX013``) at the value, anything
else (``NX015``) at the nearest key. The same TOML span map serves every file.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from nexo_pkg.core.diagnostics import Diagnostic, FileResult, Rule
from nexo_pkg.core.toml_spans import SpanMap, scan_spans
from nexo_pkg.core.toml_text import KeyPath, format_key_path
from nexo_pkg.manifest import core_rules
from nexo_pkg.manifest.document import parse_manifest
from nexo_pkg.manifest.schema import expected_types

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

_VALUE_KEYWORDS = {"enum", "const", "pattern", "minimum", "maximum", "minItems", "uniqueItems"}


@cache
def packaged_schema(file_name: str) -> dict[str, Any]:
    """``nexo_pkg/schemas/<file_name>`` as a dict (read once per process)."""
    text = resources.files("nexo_pkg").joinpath("schemas", file_name).read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _diagnostics(error: ValidationError, spans: SpanMap, schema_file: str) -> list[Diagnostic]:
    path: KeyPath = tuple(error.absolute_path)
    dotted = format_key_path(path)
    where = f"`{dotted}`" if dotted else "the top level"
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        return [
            core_rules.UNKNOWN_KEY.diagnostic(
                f"unknown key `{format_key_path((*path, key))}`",
                format_key_path((*path, key)),
                spans.locate((*path, key), "key"),
                f"{where} takes: {', '.join(sorted(known)) or 'no keys'}",
            )
            for key in sorted(set(error.instance) - set(known))
        ]
    rule: Rule
    # Where the whole shape is written down, for the help of a value the schema refuses.
    described = f"`nexo plugin schema --kind {_KINDS.get(schema_file, 'plugin')}` describes it"
    if error.validator == "required":
        rule, span = core_rules.MISSING_KEY, spans.nearest(path)
        given = error.instance if isinstance(error.instance, dict) else {}
        wanted = error.validator_value if isinstance(error.validator_value, list) else []
        missing = [f"`{key}`" for key in wanted if key not in given]
        help_text = f"add {', '.join(missing)}" if missing else described
    elif error.validator == "type":
        rule, span = core_rules.WRONG_TYPE, spans.locate(path)
        help_text = f"write {expected_types(error.validator_value)} here"
    elif error.validator in _VALUE_KEYWORDS:
        rule, span = core_rules.INVALID_VALUE, spans.locate(path)
        help_text = described
    else:
        rule, span = core_rules.SCHEMA_VIOLATION, spans.nearest(path)
        help_text = described
    return [rule.diagnostic(f"{where}: {error.message}", dotted, span, help_text)]


# The schema files linted here -> their `nexo plugin schema --kind`.
_KINDS = {"nexo-plugins.schema.json": "wanted", "nexo-plugins.lock.schema.json": "lock"}


def lint_against_schema(text: str, schema_file: str, *, path: str) -> FileResult:
    """Lint TOML ``text`` (from ``path``) against the packaged schema; never raises."""
    from jsonschema import Draft202012Validator  # noqa: PLC0415 - only when a file is linted

    parsed = parse_manifest(text)
    if parsed.syntax_errors:
        return FileResult(path, tuple(parsed.syntax_errors), text)
    validator = Draft202012Validator(packaged_schema(schema_file))
    errors = sorted(validator.iter_errors(parsed.data), key=lambda e: list(map(str, e.path)))
    if not errors:
        return FileResult(path, (), text)
    spans, _ = scan_spans(text)
    found = [item for error in errors for item in _diagnostics(error, spans, schema_file)]
    found.sort(key=lambda item: (item.span.start, item.code))
    return FileResult(path, tuple(found), text)
