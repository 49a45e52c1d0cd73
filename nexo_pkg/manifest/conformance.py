"""A yes/no check of a manifest against the JSON Schema, without importing ``jsonschema``.

Importing ``jsonschema`` costs more than the rest of a cold ``nexo plugin lint``, and most
manifests are valid. :func:`conforms` implements the Draft 2020-12 keywords the shipped schema
uses, with TOML typing; any other keyword a document reaches raises
:class:`UnsupportedKeywordError` and the caller falls back to ``jsonschema``, so a schema change
can make the check slower but never wrong. The
schema is compiled into a tree of small closures, one per keyword; a property's schema is
compiled when a document first has the property, so a manifest pays for the parts it uses.
"""

from __future__ import annotations

import re

# The lock type without the threading module, which a lint otherwise never loads.
from _thread import RLock
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["UnsupportedKeywordError", "conforms"]

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "$defs",
        "title",
        "description",
        "default",
        "examples",
        "contentMediaType",
        "x-rust-type",
        "then",
        "else",
    }
)
_COMPILED: dict[int, tuple[Mapping[str, Any], Check]] = {}


class UnsupportedKeywordError(Exception):
    """The schema uses a keyword :func:`conforms` does not implement."""


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_TYPE_CHECKS: dict[str, Check] = {
    "string": lambda value: isinstance(value, str),
    "integer": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "number": _is_number,
    "boolean": lambda value: isinstance(value, bool),
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list),
    "null": lambda value: value is None,
}


def _type_check(name: str) -> Check:
    if name not in _TYPE_CHECKS:
        raise UnsupportedKeywordError(f"type {name}")
    return _TYPE_CHECKS[name]


def _equal(first: object, second: object) -> bool:
    """JSON Schema equality: booleans never equal numbers; 1 equals 1.0."""
    return isinstance(first, bool) == isinstance(second, bool) and first == second


class _Compiler:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.references: dict[str, Check] = {}
        # Held while compiling: threads checking documents at once compile lazily into the
        # same tree, and a recursive definition's placeholder is only seen once filled.
        self.compiling = RLock()

    def deferred(self, schema: Any) -> Check:
        """The check of ``schema``, compiled on its first call."""
        cell: list[Check] = []

        def check(value: Any) -> bool:
            if not cell:
                with self.compiling:
                    if not cell:
                        cell.append(self.compile_whole(schema))
            return cell[0](value)

        return check

    def compile_whole(self, schema: Any) -> Check:
        """:meth:`compile`, leaving no definition half compiled when it raises."""
        with self.compiling:
            references = dict(self.references)
            try:
                return self.compile(schema)
            except BaseException:
                self.references = references
                raise

    def reference(self, target: str) -> Check:
        if not target.startswith("#/$defs/"):
            raise UnsupportedKeywordError(f"$ref {target}")
        if target not in self.references:
            # A placeholder first, so that a recursive definition compiles to a finite tree.
            cell: list[Check] = []
            self.references[target] = lambda value: cell[0](value)  # noqa: PLW0108 - late bound
            cell.append(self.compile(self.root["$defs"][target.removeprefix("#/$defs/")]))
        return self.references[target]

    def compile(self, schema: Any) -> Check:
        if isinstance(schema, bool):
            return lambda _value: schema
        checks = [
            self.keyword(keyword, rule, schema)
            for keyword, rule in schema.items()
            if keyword not in _ANNOTATIONS
        ]
        if len(checks) == 1:
            return checks[0]
        return lambda value: all(check(value) for check in checks)

    def combination(self, keyword: str, rule: Any) -> Check:
        """``not`` (the subschema fails) or ``allOf`` (every subschema holds)."""
        if keyword == "not":
            negated = self.compile(rule)
            return lambda value: not negated(value)
        parts = [self.compile(sub) for sub in rule]
        return lambda value: all(part(value) for part in parts)

    def keyword(self, keyword: str, rule: Any, schema: Mapping[str, Any]) -> Check:
        if keyword == "type":
            names = [rule] if isinstance(rule, str) else list(rule)
            types = [_type_check(name) for name in names]
            if len(types) == 1:
                return types[0]
            return lambda value: any(check(value) for check in types)
        if keyword == "properties":
            children = [(key, self.deferred(sub)) for key, sub in rule.items()]
            return lambda value: (
                not isinstance(value, dict)
                or all(check(value[key]) for key, check in children if key in value)
            )
        if keyword == "additionalProperties":
            known = frozenset(schema.get("properties", {}))
            if rule is False:
                return lambda value: not isinstance(value, dict) or known.issuperset(value)
            extra = self.compile(rule)
            return lambda value: (
                not isinstance(value, dict)
                or all(extra(item) for key, item in value.items() if key not in known)
            )
        if keyword == "required":
            required = tuple(rule)
            return lambda value: (
                not isinstance(value, dict) or all(key in value for key in required)
            )
        if keyword == "enum":
            choices = list(rule)
            return lambda value: any(_equal(value, choice) for choice in choices)
        if keyword == "const":
            return lambda value: _equal(value, rule)
        if keyword == "items":
            item_check = self.compile(rule)
            return lambda value: (
                not isinstance(value, list) or all(item_check(item) for item in value)
            )
        if keyword == "pattern":
            search = re.compile(rule).search
            return lambda value: not isinstance(value, str) or search(value) is not None
        if keyword == "minimum":
            return lambda value: not _is_number(value) or value >= rule
        if keyword == "maximum":
            return lambda value: not _is_number(value) or value <= rule
        if keyword == "minLength":
            return lambda value: not isinstance(value, str) or len(value) >= rule
        if keyword == "maxLength":
            return lambda value: not isinstance(value, str) or len(value) <= rule
        if keyword == "minItems":
            return lambda value: not isinstance(value, list) or len(value) >= rule
        if keyword == "$ref":
            return self.reference(rule)
        if keyword in {"not", "allOf"}:
            return self.combination(keyword, rule)
        if keyword == "if":
            condition = self.compile(rule)
            then = self.compile(schema["then"]) if "then" in schema else None
            otherwise = self.compile(schema["else"]) if "else" in schema else None

            def conditional(value: Any) -> bool:
                branch = then if condition(value) else otherwise
                return branch is None or branch(value)

            return conditional
        raise UnsupportedKeywordError(keyword)


def conforms(document: Any, schema: Mapping[str, Any]) -> bool:
    """Whether ``document`` is valid against ``schema`` (TOML typing).

    Raises :class:`UnsupportedKeywordError` when the schema uses a keyword not implemented
    here. The compiled form of ``schema`` is cached for as long as the object lives.
    """
    cached = _COMPILED.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = _COMPILED[id(schema)] = (schema, _Compiler(schema).compile_whole(schema))
    return cached[1](document)
