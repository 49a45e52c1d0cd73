"""A yes/no check of a manifest against the JSON Schema, without importing ``jsonschema``.

Most manifests linted are valid, and importing ``jsonschema`` costs more than the whole rest of
a cold ``nexo plugin lint``. :func:`conforms` implements the Draft 2020-12 keywords the shipped
schema uses, with TOML typing (a float is never an integer); when it says a document does not
conform, the engine asks ``jsonschema`` for the detailed errors. Any keyword it does not know
raises :class:`UnsupportedKeywordError`, and the caller falls back to ``jsonschema`` for everything,
so a schema change can make the check slower but never wrong. Tests hold the two to the same
answers on the corpus and on generated documents.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["UnsupportedKeywordError", "conforms"]

_ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "title",
        "description",
        "default",
        "examples",
        "contentMediaType",
    }
)
_PATTERNS: dict[str, re.Pattern[str]] = {}
_STRIPPED: dict[int, tuple[Mapping[str, Any], Any]] = {}


class UnsupportedKeywordError(Exception):
    """The schema uses a keyword :func:`conforms` does not implement."""


def _is_type(value: object, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "null":
        return value is None
    raise UnsupportedKeywordError(f"type {name}")


def _equal(first: object, second: object) -> bool:
    """JSON Schema equality: booleans never equal numbers; 1 equals 1.0."""
    if isinstance(first, bool) != isinstance(second, bool):
        return False
    return first == second


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _valid(value: Any, schema: Any, root: Mapping[str, Any]) -> bool:
    if schema is True:
        return True
    if schema is False:
        return False
    for keyword, rule in schema.items():
        if keyword == "type":
            names = [rule] if isinstance(rule, str) else rule
            if not any(_is_type(value, name) for name in names):
                return False
        elif keyword == "properties":
            if isinstance(value, dict):
                for key, sub in rule.items():
                    if key in value and not _valid(value[key], sub, root):
                        return False
        elif keyword == "additionalProperties":
            if isinstance(value, dict):
                known = schema.get("properties", {})
                for key, item in value.items():
                    if key not in known and not _valid(item, rule, root):
                        return False
        elif keyword == "required":
            if isinstance(value, dict) and any(key not in value for key in rule):
                return False
        elif keyword == "enum":
            if not any(_equal(value, choice) for choice in rule):
                return False
        elif keyword == "const":
            if not _equal(value, rule):
                return False
        elif keyword == "items":
            if isinstance(value, list) and not all(_valid(item, rule, root) for item in value):
                return False
        elif keyword == "pattern":
            if isinstance(value, str):
                compiled = _PATTERNS.get(rule)
                if compiled is None:
                    compiled = _PATTERNS[rule] = re.compile(rule)
                if compiled.search(value) is None:
                    return False
        elif keyword == "minimum":
            if _is_number(value) and value < rule:
                return False
        elif keyword == "maximum":
            if _is_number(value) and value > rule:
                return False
        elif keyword == "minLength":
            if isinstance(value, str) and len(value) < rule:
                return False
        elif keyword == "maxLength":
            if isinstance(value, str) and len(value) > rule:
                return False
        elif keyword == "minItems":
            if isinstance(value, list) and len(value) < rule:
                return False
        elif keyword == "$ref":
            if not rule.startswith("#/$defs/"):
                raise UnsupportedKeywordError(f"$ref {rule}")
            if not _valid(value, root["$defs"][rule.removeprefix("#/$defs/")], root):
                return False
        elif keyword == "allOf":
            if not all(_valid(value, sub, root) for sub in rule):
                return False
        elif keyword == "if":
            branch = "then" if _valid(value, rule, root) else "else"
            if branch in schema and not _valid(value, schema[branch], root):
                return False
        elif keyword not in {"then", "else", "$defs"}:
            raise UnsupportedKeywordError(keyword)
    return True


def _strip(schema: Any) -> Any:
    """The schema without annotations (descriptions, defaults...), which only slow the walk."""
    if isinstance(schema, dict):
        return {
            key: (
                {name: _strip(sub) for name, sub in value.items()}
                if key in {"properties", "$defs"}
                else _strip(value)
            )
            for key, value in schema.items()
            if key not in _ANNOTATIONS
        }
    if isinstance(schema, list):
        return [_strip(item) for item in schema]
    return schema


def conforms(document: Any, schema: Mapping[str, Any]) -> bool:
    """Whether ``document`` is valid against ``schema`` (TOML typing).

    Raises :class:`UnsupportedKeywordError` when the schema uses a keyword not implemented here.
    """
    cached = _STRIPPED.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = _STRIPPED[id(schema)] = (schema, _strip(schema))
    stripped = cached[1]
    return _valid(document, stripped, stripped)
