"""A small model of serde-derived Rust types, and a checker of parsed data against it.

The daemon's extension manifest and its config files are plain serde structs with
``deny_unknown_fields``; nexo-pkg mirrors each as a :class:`Table` of typed fields. The checker
walks parsed TOML or YAML data (dicts, lists, scalars) and yields one :class:`ShapeProblem`
per missing key, unknown key, wrong type, unknown enum tag or out-of-range integer, with the
key path where it is. It never raises on any input; what it cannot follow it skips.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from nexo_pkg.core.terminal import printable
from nexo_pkg.core.toml_text import format_key_path

__all__ = [
    "BOOL",
    "DURATION",
    "I32",
    "STR",
    "STR_LIST",
    "U32",
    "U64",
    "USIZE",
    "Integer",
    "KeyPath",
    "ListOf",
    "MapOf",
    "Scalar",
    "ShapeProblem",
    "Spec",
    "Table",
    "Tagged",
    "check_shape",
    "to_json_schema",
]

KeyPath = tuple[str | int, ...]
ProblemKind = Literal["missing", "unknown", "type", "variant", "range"]


@dataclass(frozen=True)
class Scalar:
    """A string or a boolean (``type_name`` is ``"string"`` or ``"boolean"``)."""

    type_name: str


@dataclass(frozen=True)
class Integer:
    """A Rust integer type and its range."""

    rust: str
    minimum: int
    maximum: int


@dataclass(frozen=True)
class ListOf:
    item: Spec


@dataclass(frozen=True)
class MapOf:
    """A map with string keys (``BTreeMap<String, V>``); ``value`` ``None`` accepts anything."""

    value: Spec | None


@dataclass(frozen=True)
class Table:
    """A struct with ``deny_unknown_fields``: its fields and which of them are required."""

    fields: Mapping[str, Spec]
    required: frozenset[str] = frozenset()
    hints: Mapping[str, str] = field(default_factory=dict)
    """Unknown keys with a known story (a documented key the daemon lacks): key -> advice."""


@dataclass(frozen=True)
class Tagged:
    """An internally tagged enum (``#[serde(tag = "...")]``): one table per tag value."""

    tag: str
    variants: Mapping[str, Table]


Spec = Scalar | Integer | ListOf | MapOf | Table | Tagged

STR = Scalar("string")
BOOL = Scalar("boolean")
DURATION = Scalar("string")
STR_LIST = ListOf(STR)
I32 = Integer("i32", -(2**31), 2**31 - 1)
U32 = Integer("u32", 0, 2**32 - 1)
U64 = Integer("u64", 0, 2**64 - 1)
USIZE = Integer("usize", 0, 2**64 - 1)


@dataclass(frozen=True)
class ShapeProblem:
    """One place where the data does not fit the model."""

    kind: ProblemKind
    path: KeyPath
    message: str
    help: str = ""


_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (type(None), "null"),
    (bool, "boolean"),  # before int: a bool is an int to isinstance
    (int, "integer"),
    (float, "float"),
    (str, "string"),
    (list, "array"),
    (Mapping, "table"),
)


def type_name(value: Any) -> str:
    """The user-facing name of a parsed value's type."""
    return next(
        (name for kind, name in _TYPE_NAMES if isinstance(value, kind)), type(value).__name__
    )


def _expected(spec: Spec) -> str:
    if isinstance(spec, Scalar):
        return spec.type_name
    if isinstance(spec, Integer):
        return f"integer ({spec.rust})"
    if isinstance(spec, ListOf):
        return "array"
    return "table"


def _fits(spec: Spec, value: Any) -> bool:
    if isinstance(spec, Scalar):
        return isinstance(value, bool) if spec.type_name == "boolean" else isinstance(value, str)
    if isinstance(spec, Integer):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(spec, ListOf):
        return isinstance(value, list)
    return isinstance(value, Mapping)


def _dotted(path: KeyPath) -> str:
    """``path`` as the diagnostics' key path writes it (a key that is no bare key quoted:
    ``entries."a.b"``), or ``the top level``."""
    return format_key_path(path) or "the top level"


def _unknown(table: Table, key: str, path: KeyPath) -> ShapeProblem:
    where = _dotted(path[:-1])
    known = sorted(table.fields)
    hint = table.hints.get(key, "")
    if not hint:
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
        hint = f"did you mean `{close[0]}`?" if close else ""
        allowed = ", ".join(f"`{name}`" for name in known) or "no keys"
        hint = f"{hint} {where} accepts {allowed}".strip()
    shown = printable(key, lines=True)
    return ShapeProblem("unknown", path, f"unknown key `{shown}` in {where}", hint)


def check_shape(
    value: Any,
    spec: Spec,
    path: KeyPath = (),
    *,
    skip: Callable[[Any], bool] = lambda _value: False,
) -> Iterator[ShapeProblem]:
    """Every problem of ``value`` against ``spec``. ``skip(value)`` true means a scalar that
    cannot be judged here (an unresolved ``${VAR}`` placeholder): it is taken as fitting."""
    if skip(value):
        return
    if not _fits(spec, value):
        what = f"`{_dotted(path)}`" if path else "the file"
        expected = _expected(spec)
        yield ShapeProblem(
            "type",
            path,
            f"{what} must be {expected}, not {type_name(value)}",
            f"write {'an' if expected[0] in 'aeiou' else 'a'} {expected} here",
        )
        return
    if isinstance(spec, Integer):
        if not spec.minimum <= value <= spec.maximum:
            yield ShapeProblem(
                "range",
                path,
                f"`{_dotted(path)}` = {value} is outside the range of {spec.rust} "
                f"({spec.minimum} to {spec.maximum})",
                f"use a value from {spec.minimum} to {spec.maximum}",
            )
    elif isinstance(spec, ListOf):
        for index, item in enumerate(value):
            yield from check_shape(item, spec.item, (*path, index), skip=skip)
    elif isinstance(spec, MapOf) and spec.value is not None:
        for key, item in value.items():
            yield from check_shape(item, spec.value, (*path, str(key)), skip=skip)
    elif isinstance(spec, Table):
        yield from _check_table(value, spec, path, skip)
    elif isinstance(spec, Tagged):
        yield from _check_tagged(value, spec, path, skip)


def _check_table(
    value: Mapping[str, Any], spec: Table, path: KeyPath, skip: Callable[[Any], bool]
) -> Iterator[ShapeProblem]:
    for key, item in value.items():
        child = spec.fields.get(str(key))
        if child is None:
            yield _unknown(spec, str(key), (*path, str(key)))
        else:
            yield from check_shape(item, child, (*path, str(key)), skip=skip)
    for key in sorted(spec.required - {str(key) for key in value}):
        yield ShapeProblem("missing", path, f"`{_dotted((*path, key))}` is missing", f"add `{key}`")


def _check_tagged(
    value: Mapping[str, Any], spec: Tagged, path: KeyPath, skip: Callable[[Any], bool]
) -> Iterator[ShapeProblem]:
    tag = value.get(spec.tag)
    choices = ", ".join(f'"{name}"' for name in spec.variants)
    variant = spec.variants.get(tag) if isinstance(tag, str) else None
    if variant is not None:
        fields = {spec.tag: STR, **variant.fields}
        yield from _check_table(value, Table(fields, variant.required, variant.hints), path, skip)
        return
    if spec.tag not in value:
        yield ShapeProblem(
            "missing",
            path,
            f"`{_dotted((*path, spec.tag))}` is missing",
            f"set `{spec.tag}` to one of {choices}",
        )
    else:
        yield ShapeProblem(
            "variant",
            (*path, spec.tag),
            f"`{_dotted((*path, spec.tag))}` must be one of {choices}, not {tag!r}",
            f"use one of {choices} (case matters)",
        )
    # Without a variant, the other keys are still judged against every variant's fields, so
    # a key no variant has shows in this run rather than once the tag is repaired.
    others = {key: item for key, item in value.items() if key != spec.tag}
    yield from _check_table(others, _any_variant(spec), path, skip)


def _any_variant(spec: Tagged) -> Table:
    """The fields of every variant of ``spec`` (the first variant's type for a shared name),
    with their hints, none required: what a key may be whatever the tag turns out to be."""
    fields: dict[str, Spec] = {}
    hints: dict[str, str] = {}
    for variant in spec.variants.values():
        for name, child in variant.fields.items():
            fields.setdefault(name, child)
        for name, hint in variant.hints.items():
            hints.setdefault(name, hint)
    return Table(fields, frozenset(), hints)


def to_json_schema(spec: Spec) -> dict[str, Any]:
    """``spec`` as a JSON Schema (Draft 2020-12) fragment: closed objects, required keys,
    integer ranges, tagged enums as ``oneOf`` by their tag."""
    if isinstance(spec, Scalar):
        return {"type": spec.type_name}
    if isinstance(spec, Integer):
        return {"type": "integer", "minimum": spec.minimum, "maximum": spec.maximum}
    if isinstance(spec, ListOf):
        return {"type": "array", "items": to_json_schema(spec.item)}
    if isinstance(spec, MapOf):
        values: dict[str, Any] = {} if spec.value is None else to_json_schema(spec.value)
        return {"type": "object", "additionalProperties": values}
    if isinstance(spec, Table):
        schema: dict[str, Any] = {
            "type": "object",
            "additionalProperties": False,
            "properties": {name: to_json_schema(child) for name, child in spec.fields.items()},
        }
        if spec.required:
            schema["required"] = sorted(spec.required)
        return schema
    variants = []
    for tag, table in spec.variants.items():
        variant = to_json_schema(Table({spec.tag: STR, **table.fields}, table.required))
        variant["properties"][spec.tag] = {"const": tag}
        variant["required"] = sorted({spec.tag, *table.required})
        variants.append(variant)
    return {"type": "object", "oneOf": variants}
