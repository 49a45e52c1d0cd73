"""Walk a JSON Schema by TOML key path, for hover text and completion candidates.

Only what editor help needs: local ``$ref`` into ``$defs``/``definitions``, ``properties``,
``patternProperties``, ``additionalProperties``, ``items`` (array of tables), and the branches
of ``anyOf``/``oneOf``/``allOf`` and ``if``/``then``/``else`` (merged, because the cursor cannot
tell which branch the user means). It never validates; the lint engine does that.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from nexo_pkg.core.terminal import toml_string

__all__ = ["KeyInfo", "SchemaNavigator", "TablePath", "packaged_navigator", "toml_literal"]

Node = Mapping[str, Any]
_MAX_DEPTH = 12
_TYPE_ORDER = ("string", "integer", "number", "boolean", "array", "object")


@dataclass(frozen=True)
class KeyInfo:
    """What the schema says about one key."""

    path: tuple[str, ...]
    description: str
    types: tuple[str, ...]
    default: Any
    has_default: bool
    enum: tuple[Any, ...]
    deprecated: bool

    def markdown(self) -> str:
        """Hover text: the key, its type and default, the description, the allowed values."""
        heading = f"**`{'.'.join(self.path)}`**"
        facts = [heading]
        if self.types:
            facts.append(" | ".join(f"`{kind}`" for kind in self.types))
        if self.has_default:
            facts.append(f"default `{toml_literal(self.default)}`")
        lines = [" · ".join(facts)]
        if self.deprecated:
            lines.append("*Deprecated.*")
        if self.description:
            lines.append(self.description)
        if self.enum:
            lines.append("Allowed values: " + ", ".join(f"`{toml_literal(v)}`" for v in self.enum))
        return "\n\n".join(lines)


@dataclass(frozen=True)
class TablePath:
    """A table the schema allows as a header: ``[path]`` or, when ``is_array``, ``[[path]]``."""

    path: tuple[str, ...]
    is_array: bool
    description: str


def toml_literal(value: Any) -> str:
    """Render a JSON value the way it is written in TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{key} = {toml_literal(item)}" for key, item in value.items())
        return "{ " + inner + " }" if inner else "{}"
    return json.dumps(value)


_JSON_TYPES = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
)


def _type_of_value(value: Any) -> str:
    """The JSON Schema type of a JSON value (bool before int: a bool is an int to isinstance)."""
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "object")


class SchemaNavigator:
    """Answers questions about one JSON Schema document by TOML key path."""

    def __init__(self, schema: Node) -> None:
        self.schema = schema
        self._tables: list[TablePath] | None = None

    def _lookup(self, reference: str) -> Node | None:
        if not reference.startswith("#"):
            return None  # Remote references are not followed: editors must work offline.
        node: Any = self.schema
        for token in reference[1:].split("/"):
            if not token:
                continue
            name = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and name in node:
                node = node[name]
            elif isinstance(node, list) and name.isdigit() and int(name) < len(node):
                node = node[int(name)]
            else:
                return None
        return node if isinstance(node, Mapping) else None

    def deref(self, node: Node) -> Node:
        """Follow ``$ref`` chains; sibling keys of a ``$ref`` override the target's."""
        seen: set[str] = set()
        while isinstance(node.get("$ref"), str) and node["$ref"] not in seen:
            seen.add(node["$ref"])
            target = self._lookup(node["$ref"])
            if target is None:
                break
            merged = dict(target)
            merged.update({key: value for key, value in node.items() if key != "$ref"})
            if "$ref" in target and target["$ref"] not in seen:
                merged["$ref"] = target["$ref"]
            else:
                merged.pop("$ref", None)
            node = merged
        return node

    def branches(self, node: Node, depth: int = 0) -> Iterator[Node]:
        """``node`` itself (dereferenced), then every ``anyOf``/``oneOf``/``allOf`` branch and
        the ``then``/``else`` of an ``if`` (the keys one ``kind`` adds; the ``if`` itself is a
        condition, not a branch)."""
        node = self.deref(node)
        yield node
        if depth >= _MAX_DEPTH:
            return
        for keyword in ("allOf", "anyOf", "oneOf"):
            for branch in node.get(keyword, ()):
                if isinstance(branch, Mapping):
                    yield from self.branches(branch, depth + 1)
        for keyword in ("then", "else"):
            branch = node.get(keyword)
            if isinstance(branch, Mapping):
                yield from self.branches(branch, depth + 1)

    def _item_schemas(self, node: Node) -> Iterator[Node]:
        for branch in self.branches(node):
            items = branch.get("items")
            if isinstance(items, Mapping):
                yield items

    def item_schema(self, node: Node) -> Node | None:
        """The ``items`` schema of an array node (first branch that has one), else ``None``."""
        return next(iter(self._item_schemas(node)), None)

    def child(self, node: Node, name: str) -> Node | None:
        """The schema of key ``name`` inside ``node`` (through array items for arrays of
        tables); ``None`` when the schema does not allow that key."""
        named = self.properties(node).get(name)
        if named is not None:
            return named
        for candidate in (node, *self._item_schemas(node)):
            for branch in self.branches(candidate):
                patterns = branch.get("patternProperties")
                if isinstance(patterns, Mapping):
                    for pattern, schema in patterns.items():
                        if isinstance(schema, Mapping) and _search(pattern, name):
                            return schema
                extra = branch.get("additionalProperties")
                if isinstance(extra, Mapping):
                    return extra
        return None

    def resolve(self, path: tuple[str, ...]) -> Node | None:
        """The schema at ``path`` from the root, or ``None`` if some key is not allowed."""
        node: Node | None = self.schema
        for name in path:
            if node is None:
                return None
            node = self.child(node, name)
        return node

    def properties(self, node: Node) -> dict[str, Node]:
        """Every named key allowed directly inside ``node`` (the first branch wins a name)."""
        found: dict[str, Node] = {}
        for candidate in (node, *self._item_schemas(node)):
            for branch in self.branches(candidate):
                properties = branch.get("properties")
                if isinstance(properties, Mapping):
                    for name, schema in properties.items():
                        if isinstance(schema, Mapping):
                            found.setdefault(name, schema)
        return found

    def info(self, path: tuple[str, ...], node: Node) -> KeyInfo:
        """Description, types, default and allowed values of the key at ``path``."""
        description = ""
        types: list[str] = []
        enum: list[Any] = []
        default: Any = None
        has_default = False
        deprecated = False
        for branch in self.branches(node):
            if not description and isinstance(branch.get("description"), str):
                description = branch["description"]
            if not has_default and "default" in branch:
                default, has_default = branch["default"], True
            deprecated = deprecated or branch.get("deprecated") is True
            kind = branch.get("type")
            for name in [kind] if isinstance(kind, str) else kind or []:
                if isinstance(name, str) and name not in types:
                    types.append(name)
            values = list(branch.get("enum", ()))
            if "const" in branch:
                values.append(branch["const"])
            for value in values:
                if value not in enum:
                    enum.append(value)
        if not description:
            described = (
                branch["description"]
                for items in self._item_schemas(node)
                for branch in self.branches(items)
                if isinstance(branch.get("description"), str)
            )
            description = next(described, "")
        if not types:
            types = list(dict.fromkeys(_type_of_value(value) for value in enum))
        types.sort(key=lambda name: _TYPE_ORDER.index(name) if name in _TYPE_ORDER else 99)
        return KeyInfo(
            path, description, tuple(types), default, has_default, tuple(enum), deprecated
        )

    def key_info(self, path: tuple[str, ...]) -> KeyInfo | None:
        """:meth:`info` for ``path``, or ``None`` when the schema does not know the key."""
        node = self.resolve(path)
        return None if node is None else self.info(path, node)

    def is_table(self, node: Node) -> bool:
        """Whether ``node`` is written as a TOML table (an object)."""
        return any(
            branch.get("type") == "object"
            or (isinstance(branch.get("type"), list) and "object" in branch["type"])
            or "properties" in branch
            for branch in self.branches(node)
        )

    def is_array_of_tables(self, node: Node) -> bool:
        """Whether ``node`` is an array whose items are tables (``[[header]]``)."""
        return any(self.is_table(items) for items in self._item_schemas(node))

    def table_paths(self) -> list[TablePath]:
        """Every named table reachable from the root, in schema order, for header completion."""
        if self._tables is not None:
            return self._tables
        found: list[TablePath] = []

        def walk(node: Node, prefix: tuple[str, ...], depth: int) -> None:
            if depth > _MAX_DEPTH:
                return
            for name, schema in self.properties(node).items():
                path = (*prefix, name)
                description = self.info(path, schema).description
                is_array = self.is_array_of_tables(schema)
                if is_array or self.is_table(schema):
                    found.append(TablePath(path, is_array, description))
                    walk(schema, path, depth + 1)

        walk(self.schema, (), 0)
        self._tables = found
        return found


def _search(pattern: str, name: str) -> bool:
    """Whether ``name`` matches ``pattern``; a pattern Python cannot compile matches nothing."""
    try:
        return re.search(pattern, name) is not None
    except re.error:
        return False


@lru_cache(maxsize=8)
def packaged_navigator(file_name: str) -> SchemaNavigator | None:
    """A navigator over ``nexo_pkg/schemas/<file_name>``; ``None`` when it is not shipped or
    is not valid JSON (editor help then stays quiet rather than failing)."""
    try:
        text = resources.files("nexo_pkg").joinpath("schemas", file_name).read_text("utf-8")
        schema = json.loads(text)
    except (OSError, ValueError):
        return None
    return SchemaNavigator(schema) if isinstance(schema, Mapping) else None
