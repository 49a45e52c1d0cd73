"""Completion candidates: table headers, keys of the current table, enum values of a key."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from nexo_pkg.core.toml_spans import ScannedDocument, scan_tolerant
from nexo_pkg.core.toml_text import BARE_KEY_CHARS
from nexo_pkg.lsp.schema_nav import KeyInfo, SchemaNavigator, toml_literal
from nexo_pkg.lsp.toml_context import Context, resolve

__all__ = ["Candidate", "complete_at"]


@dataclass(frozen=True)
class Candidate:
    """One completion: ``insert`` replaces the text between the offsets in ``replace``."""

    label: str
    kind: Literal["table", "key", "value"]
    insert: str
    replace: tuple[int, int]
    detail: str = ""
    documentation: str = ""
    order: int = 0
    filter_text: str | None = None

    @classmethod
    def value(
        cls, label: str, insert: str, replace: tuple[int, int], info: KeyInfo, order: int
    ) -> Candidate:
        """A value of the key ``info`` describes, matched against what is typed by its label."""
        types = " | ".join(info.types)
        return cls(label, "value", insert, replace, types, info.description, order, label)


def _key_text(name: str) -> str:
    """A key as written in TOML: bare when it can be, quoted otherwise."""
    return name if name and set(name) <= BARE_KEY_CHARS else json.dumps(name, ensure_ascii=False)


def _header_text(path: tuple[str, ...]) -> str:
    """A table's dotted key as written in a header."""
    return ".".join(_key_text(name) for name in path)


def complete_at(navigator: SchemaNavigator, text: str, offset: int) -> list[Candidate]:
    """Candidates for the cursor at ``offset`` in ``text``; empty when nothing fits."""
    document = scan_tolerant(text)
    context = resolve(document, offset)
    if context.kind == "header":
        return _tables(navigator, document, context, offset)
    if context.kind == "key":
        return _keys(navigator, document, context)
    if context.kind == "value":
        return _values(navigator, context, text)
    return []


def _tables(
    navigator: SchemaNavigator, document: ScannedDocument, context: Context, offset: int
) -> list[Candidate]:
    current = document.headers[context.block]
    replace = context.replace if current.parts else (offset, offset)
    tables = navigator.table_paths()
    arrays = {table.path for table in tables if table.is_array}
    addable = _addable_tables(document, context.block, arrays)
    return [
        Candidate(
            _header_text(table.path),
            "table",
            _header_text(table.path),
            replace,
            "array of tables" if table.is_array else "table",
            table.description,
            order,
        )
        for order, table in enumerate(tables)
        if table.is_array == context.is_array_header and addable(table.path, table.is_array)
    ]


def _addable_tables(
    document: ScannedDocument, block: int, arrays: set[tuple[str, ...]]
) -> Callable[[tuple[str, ...], bool], bool]:
    """Whether a header for a path may be added at the header ``block`` (the one being typed)
    without making the document invalid TOML or the wrong shape:

    * a table is defined once: not one that has its header already (``NX002``);
    * nor one a key already defines, as a value or an inline table (``sandbox = {…}``), or by
      dotted keys (``sandbox.network = …``), nor any table inside such a value (``NX002``);
    * a path through an array of tables names a table of its last element, so it needs a
      ``[[…]]`` header of that array above it; else the header would make the array a table
      (``NX012``).
    """
    others = [header for index, header in enumerate(document.headers) if index != block]
    defined = {header.path for header in others if not header.is_array}
    arrays_above = {header.path for header in document.headers[:block] if header.is_array}
    values: set[tuple[str, ...]] = set()
    dotted: set[tuple[str, ...]] = set()
    for entry in document.entries:
        if entry.block == block or not entry.parts:
            continue  # the keys under the header being typed follow whatever it becomes
        values.add(entry.path)
        dotted.update(entry.path[:depth] for depth in range(len(entry.table) + 1, len(entry.path)))

    def addable(path: tuple[str, ...], is_array: bool) -> bool:
        prefixes = [path[:depth] for depth in range(1, len(path))]
        if any(prefix in arrays and prefix not in arrays_above for prefix in prefixes):
            return False
        if any(prefix in values for prefix in (*prefixes, path)):
            return False
        return is_array or (path not in defined and path not in dotted)

    return addable


def _keys(
    navigator: SchemaNavigator, document: ScannedDocument, context: Context
) -> list[Candidate]:
    parent = context.path[:-1]
    node = navigator.resolve(parent)
    if node is None:
        return []
    present = document.present_keys(parent, context.block, exclude=context.entry)
    # A key typed alone on its line (no `=` yet, nothing dotted after it) gets ` = ` too, so
    # value completion can follow; tables do not, they continue with `.` or become headers.
    entry = context.entry
    bare = entry is None or (entry.equals is None and entry.parts[-1].end == context.replace[1])
    found: list[Candidate] = []
    for order, (name, schema) in enumerate(navigator.properties(node).items()):
        if name in present:
            continue
        info = navigator.info((*parent, name), schema)
        kind: Literal["table", "key"] = "table" if navigator.is_table(schema) else "key"
        insert = _key_text(name)
        if bare and kind == "key":
            insert += " = "
        found.append(
            Candidate(
                name, kind, insert, context.replace, " | ".join(info.types), info.markdown(), order
            )
        )
    return found


def _values(navigator: SchemaNavigator, context: Context, text: str) -> list[Candidate]:
    node = navigator.resolve(context.path)
    if node is None:
        return []
    info = navigator.info(context.path, node)
    if not info.enum and "array" in info.types:
        # Inside `[ … ]`: the values allowed are those of the items.
        items = navigator.item_schema(node)
        if items is not None:
            info = navigator.info(context.path, items)
    values: list[Any] = list(info.enum)
    if not values and "boolean" in info.types:
        values = [True, False]
    found: list[Candidate] = []
    for order, value in enumerate(values):
        if context.string is not None:
            if not isinstance(value, str):
                continue
            literal = text[context.string.start] == "'"
            insert = value if literal else json.dumps(value, ensure_ascii=False)[1:-1]
            label = value
        else:
            insert = toml_literal(value)
            label = insert
        found.append(Candidate.value(label, insert, context.replace, info, order))
    return found
