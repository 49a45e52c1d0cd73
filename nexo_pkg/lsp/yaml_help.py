"""Hover and completion in the daemon's YAML files (``extensions.yaml``, ``agents.yaml``), as the
manifests get them from their schema.

The cursor's place is read from the block structure YAML configuration is written in: a key
is ``name:`` at some indentation, its parents the nearest lines above with less indentation
and nothing after their colon, a ``- `` item passing through to its sequence's key (the
schema navigator looks through ``items``). Flow collections (``{…}``, ``[…]``) get no help.
``extensions.yaml`` is described by its published schema; ``agents.yaml`` by the few keys the
daemon's microapp host reads (the rest of an agent is the daemon's business, not checked).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from nexo_pkg.lsp.completion import Candidate
from nexo_pkg.lsp.schema_nav import SchemaNavigator, packaged_navigator
from nexo_pkg.manifest.daemon_config import PLACEHOLDER_SCHEMA_PATTERN

__all__ = ["complete_yaml", "hover_yaml", "yaml_navigator"]

# `  - - name: value`: the indentation, the item dashes, the key, what follows the colon.
_LINE = re.compile(r"^(?P<indent> *)(?P<dashes>(?:- +)*)(?P<key>[A-Za-z0-9_][A-Za-z0-9_.-]*)?")
_AFTER_KEY = re.compile(r" *:(?= |$)")
# Where YAML, and an LSP client, end a line.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

#: What the daemon's microapp host reads of ``agents.yaml`` (and ``agents.d/*.yaml``).
AGENTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "agents": {
            "type": "array",
            "description": "The daemon's agents. Only the keys about microapps are described "
            "here; `nexo plugin lint` checks them (NX220, NX229, NX230).",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "The agent's id."},
                    "extensions_config": {
                        "type": "object",
                        "description": "Per-microapp settings, keyed by microapp id. The "
                        "daemon parses them but never sends them to the microapp (NX230); "
                        "every id must name a discovered microapp (NX229).",
                        "additionalProperties": {"type": "object"},
                    },
                    "extensions": {
                        "deprecated": True,
                        "description": "Not a key of the daemon's agents: the loader refuses "
                        "the file and the daemon does not start (NX220). Every agent gets the "
                        "tools of every loaded microapp; use `extensions.yaml`'s `disabled` "
                        "or `allowlist` to choose which microapps load.",
                    },
                },
            },
        }
    },
}


def yaml_navigator(kind: Literal["extensions", "agents"]) -> SchemaNavigator | None:
    """The schema navigator for a daemon YAML file of ``kind``."""
    if kind == "extensions":
        return _typed_navigator()
    return SchemaNavigator(AGENTS_SCHEMA)


@cache
def _typed_navigator() -> SchemaNavigator | None:
    """``extensions.schema.json`` with each key's type as the daemon declares it: the
    published schema also lets a list, map or struct be null and any other value be a
    ``${VAR}`` placeholder (what the loader accepts before the types apply), which hover and
    completion would otherwise show as ``string`` and ``null`` types of every key."""
    published = packaged_navigator("extensions.schema.json")
    return None if published is None else SchemaNavigator(_declared(published.schema))


def _declared(node: Any) -> Any:
    if isinstance(node, list):
        return [_declared(item) for item in node]
    if not isinstance(node, dict):
        return node
    typed = {key: _declared(value) for key, value in node.items()}
    if typed.get("pattern") == PLACEHOLDER_SCHEMA_PATTERN and isinstance(typed.get("type"), list):
        del typed["pattern"]
        typed["type"] = typed["type"][0]
    return typed


@dataclass(frozen=True)
class _Line:
    start: int
    text: str
    indent: int  # where the key (or the first non-blank character) starts
    dash: int | None  # where the first `- ` of an item starts
    key: str | None
    key_end: int  # column after the key
    colon_end: int | None  # column after `:` when the line is `key:`
    opens: bool  # `key:` with nothing after it (a mapping or sequence follows)


def _read_line(start: int, raw: str) -> _Line:
    text = raw.split(" #", 1)[0] if not raw.lstrip().startswith("#") else ""
    match = _LINE.match(text)
    assert match is not None  # noqa: S101 (every group is optional)
    indent = len(match["indent"]) + len(match["dashes"])
    dash = len(match["indent"]) if match["dashes"] else None
    key = match["key"]
    key_end = match.end()
    colon = _AFTER_KEY.match(text, key_end) if key else None
    if colon is None:
        return _Line(start, raw, indent, dash, key or None, key_end, None, False)
    opens = not text[colon.end() :].strip()
    return _Line(start, raw, indent, dash, key, key_end, colon.end(), opens)


def _lines(text: str) -> list[_Line]:
    starts = [0, *(found.end() for found in _LINE_BREAK.finditer(text))]
    ends = [*(found.start() for found in _LINE_BREAK.finditer(text)), len(text)]
    return [_read_line(start, text[start:end]) for start, end in zip(starts, ends, strict=True)]


def _parents(lines: list[_Line], row: int, column: int) -> tuple[str, ...] | None:
    """The key path of the mapping a key at ``column`` on line ``row`` belongs to; ``None``
    when a line above is not block YAML the walk understands."""
    path: list[str] = []
    limit = column
    current = lines[row]
    if current.dash is not None and current.dash < limit:
        limit = current.dash
    for line in reversed(lines[:row]):
        if not line.text.strip() or (line.key is None and line.dash is None):
            continue
        if line.indent < limit and line.key is not None and line.colon_end is not None:
            if not line.opens:
                return None
            path.insert(0, line.key)
            limit = line.indent
        if line.dash is not None and line.dash < limit:
            limit = line.dash
        if limit == 0:
            break
    return tuple(path)


def _locate(text: str, offset: int) -> tuple[list[_Line], int, int]:
    lines = _lines(text)
    row = max(0, bisect_right([line.start for line in lines], offset) - 1)
    return lines, row, offset - lines[row].start


def hover_yaml(
    navigator: SchemaNavigator, text: str, offset: int
) -> tuple[str, tuple[int, int]] | None:
    """Markdown for the key at ``offset`` (on the key or its value) and the key's range;
    ``None`` elsewhere or for a key the schema does not know."""
    lines, row, column = _locate(text, offset)
    line = lines[row]
    if line.key is None or line.colon_end is None or column < line.indent:
        return None
    parents = _parents(lines, row, line.indent)
    if parents is None:
        return None
    info = navigator.key_info((*parents, line.key))
    if info is None:
        return None
    return info.markdown(), (line.start + line.indent, line.start + line.key_end)


def complete_yaml(navigator: SchemaNavigator, text: str, offset: int) -> list[Candidate]:
    """Keys of the mapping the cursor is in (those not written yet), or the values allowed
    after ``key:`` (enum members, booleans)."""
    lines, row, column = _locate(text, offset)
    line = lines[row]
    if line.colon_end is not None and column >= line.colon_end and line.key is not None:
        return _values(navigator, lines, row, column)
    if line.key is not None and column > line.key_end:
        return []
    key_column = line.indent if line.key is not None or line.dash is not None else column
    parents = _parents(lines, row, key_column)
    if parents is None:
        return []
    node = navigator.resolve(parents)
    if node is None:
        return []
    present = _siblings(lines, row, key_column)
    replace = (line.start + key_column, line.start + max(column, line.key_end))
    found: list[Candidate] = []
    for order, (name, schema) in enumerate(navigator.properties(node).items()):
        if name in present:
            continue
        info = navigator.info((*parents, name), schema)
        kind: Literal["table", "key"] = "table" if navigator.is_table(schema) else "key"
        found.append(
            Candidate(
                name, kind, f"{name}: ", replace, " | ".join(info.types), info.markdown(), order
            )
        )
    return found


def _siblings(lines: list[_Line], row: int, column: int) -> set[str]:
    """Keys already written at ``column`` in the block around line ``row``."""
    present: set[str] = set()
    for step in (-1, 1):
        index = row + step
        while 0 <= index < len(lines):
            line = lines[index]
            if line.text.strip():
                if line.indent < column or (line.dash is not None and line.dash < column):
                    if line.indent == column and line.key is not None and step == -1:
                        present.add(line.key)  # `- key:` opens the item the cursor is in
                    break
                if line.indent == column and line.key is not None:
                    present.add(line.key)
            index += step
    return present


def _values(
    navigator: SchemaNavigator, lines: list[_Line], row: int, column: int
) -> list[Candidate]:
    line = lines[row]
    if line.key is None or line.colon_end is None:
        return []
    parents = _parents(lines, row, line.indent)
    if parents is None:
        return []
    path = (*parents, line.key)
    info = navigator.key_info(path)
    if info is None:
        return []
    values: list[Any] = list(info.enum) or ([True, False] if "boolean" in info.types else [])
    typed_from = (
        line.colon_end
        + len(line.text[line.colon_end :])
        - len(line.text[line.colon_end :].lstrip())
    )
    replace = (line.start + min(typed_from, column), line.start + column)
    found: list[Candidate] = []
    for order, value in enumerate(values):
        label = ("true" if value else "false") if isinstance(value, bool) else str(value)
        found.append(Candidate.value(label, label, replace, info, order))
    return found
