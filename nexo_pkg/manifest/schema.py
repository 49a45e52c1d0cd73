"""The JSON Schema of ``nexo-plugin.toml`` and the translation of its errors into TOML words.

``jsonschema`` is imported on first use and its compiled validator cached for the process; it
types values as TOML does (docs/lint.md, "How it works").
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexo_pkg.core.diagnostics import Diagnostic, Rule
from nexo_pkg.core.toml_text import KeyPath, format_key_path, toml_type_name
from nexo_pkg.manifest import core_rules

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

    from nexo_pkg.core.toml_spans import SpanMap

__all__ = [
    "VALUE_CONSTRAINT_KEYWORDS",
    "expected_types",
    "load_schema",
    "schema_diagnostics",
    "schema_text",
]

# Unsigned Rust integer types of manifest fields (``x-rust-type`` in the schema) -> bits.
_UNSIGNED_BITS = {"u8": 8, "u16": 16, "u32": 32, "u64": 64, "usize": 64}

MANIFEST_SCHEMA_FILE = (
    Path(__file__).resolve().parent.parent / "schemas" / "nexo-plugin.schema.json"
)

VALUE_CONSTRAINT_KEYWORDS = frozenset(
    {
        "pattern",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
        "not",
        "minimum",
        "maximum",
        "const",
    }
)
"""Schema keywords that restate a semantic rule; the semantic diagnostic wins over them."""

_TYPE_WORDS = {
    "object": "a table",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


def schema_text() -> str:
    """The manifest JSON Schema as shipped (``nexo plugin schema`` prints it)."""
    return MANIFEST_SCHEMA_FILE.read_text(encoding="utf-8")


@cache
def load_schema() -> dict[str, Any]:
    """The manifest JSON Schema as a dict (parsed once per process)."""
    loaded: dict[str, Any] = json.loads(schema_text())
    return loaded


@cache
def _validator() -> Validator:
    """The compiled Draft 2020-12 validator with TOML typing (built once per process)."""
    from jsonschema import Draft202012Validator, validators  # noqa: PLC0415 - cold-path cost

    type_checker = Draft202012Validator.TYPE_CHECKER.redefine_many(
        {
            "integer": lambda _, value: isinstance(value, int) and not isinstance(value, bool),
            "string": lambda _, value: isinstance(value, str),
        }
    )
    toml_validator = validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator, type_checker=type_checker
    )
    validator: Validator = toml_validator(load_schema())
    return validator


def expected_types(expected: object) -> str:
    names = [expected] if isinstance(expected, str) else list(expected)  # type: ignore[call-overload]
    words = [_TYPE_WORDS.get(str(name), str(name)) for name in names]
    return " or ".join(words)


def _show(value: object) -> str:
    """A short TOML rendering of a scalar value for messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:37] + "..."
        return json.dumps(text, ensure_ascii=False)
    if isinstance(value, int | float):
        return repr(value)
    return toml_type_name(value)


def describe_table(path: KeyPath) -> str:
    """How a table is named in messages: ``table [plugin.sandbox]``, ``the top level``, or
    ``entry 2 of [[plugin.channels.register]]`` for an element of an array of tables."""
    if not path:
        return "the top level of the manifest"
    if isinstance(path[-1], int):
        return f"entry {path[-1] + 1} of [[{format_key_path(path[:-1])}]]"
    return f"table [{format_key_path(path)}]"


def _suggest(word: str, choices: Iterable[str]) -> str | None:
    from difflib import get_close_matches  # noqa: PLC0415 - only needed for typos

    options = list(choices)
    lowered = {choice.lower(): choice for choice in options}
    if word.lower() in lowered:
        return lowered[word.lower()]
    matches = get_close_matches(word, options, n=1, cutoff=0.6)
    return matches[0] if matches else None


def _required(error: ValidationError, spans: SpanMap) -> list[Diagnostic]:
    path: KeyPath = tuple(error.absolute_path)
    instance = error.instance
    properties = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
    found: list[Diagnostic] = []
    required: list[str] = list(error.validator_value)  # type: ignore[arg-type]
    for key in required:
        if not isinstance(instance, dict) or key in instance:
            continue
        wanted = properties.get(key, {}) if isinstance(properties, dict) else {}
        is_table = isinstance(wanted, dict) and wanted.get("type") == "object"
        child = (*path, key)
        if is_table:
            message = f"missing required table [{format_key_path(child)}]"
        else:
            message = f"{describe_table(path)} is missing required key `{key}`"
        described = wanted.get("description", "") if isinstance(wanted, dict) else ""
        hint = f"add `{key}`: {described}" if described else f"add `{key}`"
        found.append(
            core_rules.MISSING_KEY.diagnostic(
                message, format_key_path(child), spans.nearest(path), str(hint)
            )
        )
    return found


_MAX_LISTED_KEYS = 8

# Keys people carry over from the legacy v1 format or put in the wrong table.
_MISPLACED_KEY_HINTS: dict[KeyPath, str] = {
    ("plugin", "priority"): "`priority` belongs to the legacy v1 format; v2 has no such key",
    ("plugin", "min_agent_version"): "v2 calls it `min_nexo_version`",
    ("plugin", "transport"): "v2 declares how to start the plugin in [plugin.entrypoint]",
    ("plugin", "mcp_servers"): "v2 has no [plugin.mcp_servers] table",
    ("plugin", "author"): "move it to [plugin.meta]",
    ("plugin", "license"): "move it to [plugin.meta]",
    ("plugin", "homepage"): "move it to [plugin.meta]",
    ("plugin", "repository"): "move it to [plugin.meta]",
    ("plugin", "capability_gates", "gates"): "the array of tables is named `gate`: "
    "[[plugin.capability_gates.gate]]",
    ("plugin", "http", "route"): "[plugin.http] only takes `mount_prefix` and `timeout_seconds`",
}


def _unknown_key_hint(path: KeyPath, key: str, known: list[str]) -> str:
    misplaced = _MISPLACED_KEY_HINTS.get((*path, key))
    plugin_keys = load_schema()["properties"]["plugin"]["properties"]
    if misplaced is not None:
        hint = misplaced
    elif not path and key in plugin_keys:
        # `[tools]` for `[plugin.tools]`, `id = …` above `[plugin]`: the v2 shape nests
        # everything under [plugin].
        where = f"[plugin.{key}]" if plugin_keys[key].get("type") == "object" else "[plugin]"
        hint = f"`{key}` belongs under [plugin]: write it in {where}"
    elif (suggestion := _suggest(key, known)) is not None:
        hint = f"did you mean `{suggestion}`?"
    elif not known:
        hint = "this table takes no keys"
    elif len(known) > _MAX_LISTED_KEYS:
        hint = "`nexo plugin schema` lists the keys this table accepts"
    else:
        hint = "known keys: " + ", ".join(f"`{name}`" for name in known)
    if path[:3] == ("plugin", "ui", "fields"):
        hint += '; quote dotted configuration keys: [plugin.ui.fields."a.b"]'
    return hint


def _unknown(error: ValidationError, spans: SpanMap) -> list[Diagnostic]:
    path: KeyPath = tuple(error.absolute_path)
    properties = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
    known = sorted(properties) if isinstance(properties, dict) else []
    return [
        core_rules.UNKNOWN_KEY.diagnostic(
            f"unknown key `{key}` in {describe_table(path)}",
            format_key_path((*path, key)),
            spans.locate((*path, key), "key"),
            _unknown_key_hint(path, key, known),
        )
        for key in (error.instance if isinstance(error.instance, dict) else ())
        if key not in known
    ]


def _translate_alternatives(error: ValidationError, spans: SpanMap) -> list[Diagnostic]:
    """One diagnostic for a failed ``oneOf``/``anyOf``: the best match, not every branch.

    Branches that fail only because the value has another TOML type are set aside when a
    branch of the right type explains more; if every branch is a type mismatch, the message
    lists the types that would do.
    """
    from jsonschema.exceptions import best_match  # noqa: PLC0415 - rare path

    depth = len(error.absolute_path)
    context = list(error.context or [])
    mismatches = [
        sub for sub in context if sub.validator == "type" and len(sub.absolute_path) == depth
    ]
    others = [sub for sub in context if sub not in mismatches]
    if others:
        best = best_match(others)
        if best is not None:
            return _translate(best, spans)
    path: KeyPath = tuple(error.absolute_path)
    dotted = format_key_path(path) or "the manifest"
    wanted = " or ".join(expected_types(sub.validator_value) for sub in mismatches)
    return [
        core_rules.WRONG_TYPE.diagnostic(
            f"`{dotted}` must be {wanted}, found {toml_type_name(error.instance)}",
            dotted,
            spans.locate(path, "value"),
            f"write {wanted} here",
        )
    ]


def _translate(error: ValidationError, spans: SpanMap) -> list[Diagnostic]:
    """One or more diagnostics (one per offending key) for one schema error."""
    keyword = error.validator
    if keyword in {"oneOf", "anyOf"} and error.context:
        return _translate_alternatives(error, spans)
    if keyword == "required":
        return _required(error, spans)
    if keyword == "additionalProperties" and error.validator_value is False:
        return _unknown(error, spans)
    path: KeyPath = tuple(error.absolute_path)
    dotted = format_key_path(path) or "the manifest"
    rule, message, hint = _value_problem(error, dotted)
    return [rule.diagnostic(message, dotted, spans.locate(path, "value"), hint)]


def _value_problem(error: ValidationError, dotted: str) -> tuple[Rule, str, str]:
    """The rule, message and hint for a schema error about the value at ``dotted``."""
    keyword, bound, value = error.validator, error.validator_value, error.instance
    if keyword == "type":
        expected = expected_types(bound)
        hint = ""
        if isinstance(value, float) and "integer" in str(bound):
            hint = "integers are written without a decimal point"
            if value.is_integer() and _fits(error.schema, int(value)):
                hint += f": `{int(value)}`"
        elif isinstance(value, datetime.date | datetime.time) and expected == "a string":
            hint = "quote the value to make it a string"
        else:
            hint = _type_help(bound, value, expected, error.schema)
        message = f"`{dotted}` must be {expected}, found {toml_type_name(value)}"
        return core_rules.WRONG_TYPE, message, hint
    if keyword in {"enum", "const"}:
        allowed: list[Any] = list(bound) if keyword == "enum" else [bound]  # type: ignore[arg-type]
        choices = ", ".join(_show(item) for item in allowed)
        if len(allowed) == 1:
            message = f"`{dotted}` must be {choices}, found {_show(value)}"
        else:
            message = f"`{dotted}` must be one of {choices}; found {_show(value)}"
        suggestion = (
            _suggest(value, [str(item) for item in allowed]) if isinstance(value, str) else None
        )
        if suggestion is not None:
            hint = f'did you mean "{suggestion}"?'
        else:
            hint = f"use {'one of ' if len(allowed) > 1 else ''}{choices}"
            if any(isinstance(item, str) for item in allowed):
                hint += " (case matters)"
        return core_rules.INVALID_VALUE, message, hint
    if keyword in _RELATIONS:
        message = f"`{dotted}` must be {_RELATIONS[str(keyword)]} {bound}, found {_show(value)}"
        rust_type = error.schema.get("x-rust-type") if isinstance(error.schema, dict) else None
        bits = _UNSIGNED_BITS.get(rust_type) if isinstance(rust_type, str) else None
        if bits is not None and isinstance(value, int) and not 0 <= value < 2**bits:
            # The daemon's serde error for a value outside the field's Rust integer type.
            message += f" (invalid value: integer `{value}`, expected {rust_type})"
        return core_rules.OUT_OF_RANGE, message, _range_help(error.schema, str(keyword), bound)
    if keyword == "minItems":
        items = f"{bound} item{'s' if bound != 1 else ''}"
        message = f"array `{dotted}` must have at least {items}"
        hint = f"list at least {items} in the array"
    elif keyword == "minLength" and bound == 1:
        message = f"`{dotted}` must not be empty"
        hint = "write a value that is not empty"
    elif keyword == "pattern":
        message = f"`{dotted}` value {_show(value)} does not match the pattern {bound}"
        hint = f"write a value that matches {bound}"
    elif keyword == "maxLength" and isinstance(value, str):
        message = f"`{dotted}` must be at most {bound} characters, found {len(value)}"
        hint = f"shorten the value to {bound} characters or fewer"
    else:
        # Anything else: name the constraint rather than echo jsonschema's repr of the value.
        message = (
            f"`{dotted}` breaks the schema's `{keyword}` constraint "
            f"({json.dumps(bound, default=str)[:80]})"
        )
        hint = f"change the value to meet the `{keyword}` constraint of the schema"
    return core_rules.SCHEMA_VIOLATION, message, hint


def _type_help(bound: object, value: object, expected: str, schema: object) -> str:
    """The help of a value of the wrong TOML type: the value rewritten when it plainly is one
    of the expected type written in the wrong form (``8080`` for a string, ``"true"`` for a
    boolean) and the rewritten value is one the key takes (``schema``), else the type to
    write."""
    names = {bound} if isinstance(bound, str) else {str(name) for name in bound}  # type: ignore[attr-defined]
    quoted = isinstance(value, bool | int | float) and _fits(schema, _show(value))
    if "string" in names and quoted:
        return f'quote the value to make it a string: `"{_show(value)}"`'
    if "boolean" in names and value in ("true", "false"):
        return f"write the boolean without quotes: `{value}`"
    digits = isinstance(value, str) and _INTEGER_TEXT.fullmatch(value) is not None
    if "integer" in names and digits and _fits(schema, int(str(value))):
        return f"write the integer without quotes: `{int(str(value))}`"
    return f"write {expected} here"


def _fits(schema: object, value: object) -> bool:
    """Whether ``value``, a rewrite a help would offer, is one the key whose ``schema`` this
    is takes (its pattern, its range, its Rust integer type) and TOML can write: a help never
    offers a fix that lint then refuses."""
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        return False  # beyond TOML's 64-bit integers
    if not isinstance(schema, dict):
        return False
    rust_type = schema.get("x-rust-type")
    bits = _UNSIGNED_BITS.get(rust_type) if isinstance(rust_type, str) else None
    if bits is not None and isinstance(value, int) and not 0 <= value < 2**bits:
        return False
    try:
        return bool(_validator().evolve(schema=schema).is_valid(value))  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - a reference the part cannot resolve: offer no rewrite
        return False


def _range_help(schema: object, keyword: str, bound: object) -> str:
    """The help of a number out of range: the whole range when the schema states both ends."""
    low = schema.get("minimum") if isinstance(schema, dict) else None
    high = schema.get("maximum") if isinstance(schema, dict) else None
    if isinstance(low, int) and isinstance(high, int):
        return f"use a value from {low} to {high}"
    return f"use a value that is {_RELATIONS[keyword]} {bound}"


_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")


_RELATIONS = {
    "minimum": "at least",
    "maximum": "at most",
    "exclusiveMinimum": "more than",
    "exclusiveMaximum": "less than",
}


def schema_errors(data: dict[str, Any]) -> list[ValidationError]:
    """The raw schema errors of ``data`` (no translation); empty for a valid manifest.

    A valid manifest is recognised without importing ``jsonschema`` (see
    :mod:`nexo_pkg.manifest.conformance`); only an invalid one pays for the detailed errors.
    """
    from nexo_pkg.manifest.conformance import UnsupportedKeywordError, conforms  # noqa: PLC0415

    try:
        if conforms(data, load_schema()):
            return []
    except UnsupportedKeywordError:
        pass  # the detailed validator below implements every keyword
    return list(_validator().iter_errors(data))


def schema_diagnostics(
    data: dict[str, Any], spans: SpanMap | Callable[[], SpanMap]
) -> list[tuple[str, Diagnostic]]:
    """Validate ``data`` against the schema; return ``(keyword, diagnostic)`` pairs.

    ``spans`` may be a callable so that the span map is only built when there is an error.
    The keyword lets the engine drop value constraints a semantic rule reports better.
    """
    errors = schema_errors(data)
    if not errors:
        return []
    span_map = spans() if callable(spans) else spans
    # A value of the wrong type is one problem: its enum, range or pattern errors are noise.
    mistyped = {tuple(error.absolute_path) for error in errors if error.validator == "type"}
    found: list[tuple[str, Diagnostic]] = []
    seen: set[tuple[str, str, str]] = set()
    for error in errors:
        if error.validator != "type" and tuple(error.absolute_path) in mistyped:
            continue
        for diagnostic in _translate(error, span_map):
            identity = (diagnostic.code, diagnostic.key_path, diagnostic.message)
            if identity in seen:
                continue
            seen.add(identity)
            found.append((str(error.validator), diagnostic))
    return found
