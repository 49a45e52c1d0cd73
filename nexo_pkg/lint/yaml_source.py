"""Parse a YAML config file the way the daemon's ``serde_yaml`` reads it, keeping positions.

PyYAML composes the node tree (every node has its start and end mark); the values are built
here, not by PyYAML's constructor, so that they follow YAML 1.2 as ``serde_yaml`` does:
``yes``/``no``/``on``/``off`` are strings, ``<<`` is an ordinary key, and a key defined twice in
one mapping is an error rather than silently overwritten. The result is plain data plus a key
path -> (key span, value span) map. Never raises: problems become :class:`YamlProblem`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from nexo_pkg.core.diagnostics import Position, Span
from nexo_pkg.core.toml_spans import SpanMap

__all__ = ["KeyPath", "YamlDocument", "YamlProblem", "parse_yaml"]

KeyPath = tuple[str | int, ...]

_NULL = re.compile(r"~|null|Null|NULL|")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"[-+]?[0-9]+")
_OCT = re.compile(r"0o[0-7]+")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_SPECIAL_FLOAT = re.compile(r"[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")
# A plain scalar with one of these tags (those PyYAML's resolver gives) is read as the core
# schema reads it; any other tag leaves its text a string.
_RESOLVED_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}"
    for name in ("null", "bool", "int", "float", "str", "timestamp", "value", "merge")
)
MAX_DEPTH = 64
MAX_NODES = 100_000
"""Aliases can make a small file expand to a huge tree; beyond this many values, stop."""


@dataclass(frozen=True)
class YamlProblem:
    """A syntax error or a duplicate key, at ``span``."""

    message: str
    span: Span
    key_path: KeyPath = ()


@dataclass
class YamlDocument:
    """Plain ``data`` (``None`` for an empty file), spans by key path, and any problems."""

    text: str
    data: Any
    keys: dict[KeyPath, Span] = field(default_factory=dict)
    values: dict[KeyPath, Span] = field(default_factory=dict)
    problems: list[YamlProblem] = field(default_factory=list)

    def locate(self, path: KeyPath, part: str = "value") -> Span:
        """The span of ``path``'s key or value, else of its closest ancestor, else line 1."""
        for length in range(len(path), -1, -1):
            prefix = path[:length]
            first, second = (self.keys, self.values) if part == "key" else (self.values, self.keys)
            found = first.get(prefix) or second.get(prefix)
            if found is not None:
                return found
            part = "key"
        start = Position(1, 1)
        return Span(start, start)


def _span(node: Any) -> Span:
    start, end = node.start_mark, node.end_mark
    begin = Position(start.line + 1, start.column + 1)
    finish = Position(end.line + 1, end.column + 1)
    if finish.line > begin.line:
        # A block value runs over several lines: point at its first character.
        finish = Position(begin.line, begin.column + 1)
    return Span(begin, finish)


def scalar_value(text: str, plain: bool) -> Any:
    """A scalar as YAML 1.2's core schema (``serde_yaml``) reads it; quoted ones are strings."""
    if not plain:
        return text
    if _NULL.fullmatch(text):
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _INT.fullmatch(text):
        return int(text)
    if _OCT.fullmatch(text):
        return int(text[2:], 8)
    if _HEX.fullmatch(text):
        return int(text[2:], 16)
    if _FLOAT.fullmatch(text):
        return float(text)
    if _SPECIAL_FLOAT.fullmatch(text):
        return float(text.lower().replace(".", "", 1))
    return text


class _Builder:
    def __init__(self, document: YamlDocument) -> None:
        self.document = document
        self.count = 0
        self.stopped = False

    def build(self, node: Any, path: KeyPath, depth: int = 0) -> Any:
        import yaml  # noqa: PLC0415 - only config files pay for it

        self.count += 1
        if self.count > MAX_NODES or depth > MAX_DEPTH:
            if not self.stopped:
                self.stopped = True
                self.document.problems.append(
                    YamlProblem("values are nested too deeply or expand too far", _span(node), path)
                )
            return None
        self.document.values[path] = _span(node)
        if isinstance(node, yaml.ScalarNode):
            plain = node.style is None and node.tag in _RESOLVED_TAGS
            return scalar_value(str(node.value), plain)
        if isinstance(node, yaml.SequenceNode):
            return [
                self.build(item, (*path, index), depth + 1) for index, item in enumerate(node.value)
            ]
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                key = str(key_node.value)
            else:
                key = f"<{type(key_node).__name__.removesuffix('Node').lower()} key>"
                self.document.problems.append(
                    YamlProblem(
                        "YAML syntax error: a mapping key must be a string", _span(key_node), path
                    )
                )
            child = (*path, key)
            if key in result:
                self.document.problems.append(
                    YamlProblem(f"key `{key}` is defined more than once", _span(key_node), child)
                )
                continue
            self.document.keys[child] = _span(key_node)
            result[key] = self.build(value_node, child, depth + 1)
        return result


def parse_yaml(text: str) -> YamlDocument:
    """Parse ``text`` (one YAML document). Never raises."""
    import yaml  # noqa: PLC0415 - only config files pay for it

    document = YamlDocument(text, None)
    loader = None
    try:
        loader = yaml.SafeLoader(text)
        node = loader.get_single_node()
    except yaml.reader.ReaderError as error:
        # A character YAML does not allow (a control character), at its position.
        here = SpanMap(text).position(error.position)
        reason = f"the character U+{error.character:04X} is not allowed in YAML"
        document.problems.append(YamlProblem(f"YAML syntax error: {reason}", Span(here, here)))
        return document
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        position = Position(mark.line + 1, mark.column + 1) if mark else Position(1, 1)
        reason = error.problem or error.context or "invalid YAML"
        document.problems.append(
            YamlProblem(f"YAML syntax error: {reason}", Span(position, position))
        )
        return document
    except (yaml.YAMLError, RecursionError) as error:
        start = Position(1, 1)
        reason = str(error).splitlines()[0] if str(error) else "nested too deeply"
        document.problems.append(YamlProblem(f"YAML syntax error: {reason}", Span(start, start)))
        return document
    finally:
        if loader is not None:
            loader.dispose()
    if node is not None:
        try:
            document.data = _Builder(document).build(node, ())
        except RecursionError:
            start = Position(1, 1)
            document.problems.append(
                YamlProblem("values are nested too deeply", Span(start, start))
            )
            document.data = None
    return document
