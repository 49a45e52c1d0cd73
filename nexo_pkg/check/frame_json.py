"""A stdout line read as JSON the way the daemon's ``serde_json`` (1.x, default features)
reads it, so that ``check`` takes exactly the frames the daemon's hosts take.

Python's :func:`json.loads` accepts more than ``serde_json::from_str`` does, and each
difference is a frame the daemon skips (its plugin host logs the line as non-JSON output, its
extension host as an invalid JSON-RPC line) while a plain ``json.loads`` would take it as the
reply:

* ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON (``serde_json`` has no such tokens);
* a number beyond the range of ``f64`` (``1e400``, an integer of 310 digits) is refused
  (``ErrorCode::NumberOutOfRange``, ``de.rs`` ``f64_from_parts``/``parse_long_integer``);
* a ``\\u`` escape that leaves a lone surrogate (``"\\ud800"``) is refused
  (``LoneLeadingSurrogateInHexEscape``, ``InvalidUnicodeCodePoint``);
* nesting is limited: ``Deserializer::new`` starts ``remaining_depth`` at 128 and
  ``check_recursion!`` fails when an array or object brings it to 0, so 127 levels read and
  128 do not;
* an integer is kept as ``u64`` or ``i64`` when it fits, else read as an ``f64``; ``-0`` is
  an ``f64`` too (``parse_number``: "Convert into a float if we underflow, or on `-0`"),
  so it is no id ``as_u64`` accepts.

Duplicate keys are kept as :class:`JsonObject` records them: a ``Value`` map keeps the last
(as :func:`json.loads` does), but a struct the extension host derives ``Deserialize`` for
refuses a repeated field.
"""

from __future__ import annotations

import json
import math
from typing import Any

#: ``serde_json``'s nesting limit: the deepest array or object nesting it reads is one less.
MAX_DEPTH = 128

_U64_MAX = 2**64 - 1
_I64_MIN = -(2**63)


class FrameJsonError(ValueError):
    """A line ``serde_json`` refuses, with the reason in its words."""


class JsonObject(dict[str, Any]):
    """A JSON object; :attr:`repeated` names the keys the text gave more than once."""

    repeated: frozenset[str] = frozenset()


def _object(pairs: list[tuple[str, Any]]) -> JsonObject:
    result = JsonObject(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        repeated: set[str] = set()
        for key, _ in pairs:
            (repeated if key in seen else seen).add(key)
        result.repeated = frozenset(repeated)
    return result


def _constant(name: str) -> float:
    raise FrameJsonError(f"`{name}` is not JSON")


def _integer(digits: str) -> int | float:
    if digits == "-0":
        return -0.0
    if len(digits) <= 21:
        value = int(digits)
        if _I64_MIN <= value <= _U64_MAX:
            return value
    return _finite(float(digits))


def _float(text: str) -> float:
    return _finite(float(text))


def _finite(value: float) -> float:
    if math.isinf(value):
        raise FrameJsonError("number out of range")
    return value


_DECODER = json.JSONDecoder(
    object_pairs_hook=_object, parse_constant=_constant, parse_int=_integer, parse_float=_float
)


def loads(text: str) -> Any:
    """``text`` (one line, already UTF-8 decoded) read as ``serde_json`` reads a ``Value``;
    :class:`FrameJsonError` (a :class:`ValueError`) when ``serde_json`` refuses it."""
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise FrameJsonError("recursion limit exceeded") from None
    _walk(value)
    return value


def _walk(value: Any) -> None:
    """Refuse what ``serde_json`` refuses once the text is read: too deep a nesting, a lone
    surrogate in a string or key."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _text(item)
        elif isinstance(item, dict | list):
            if depth + 1 >= MAX_DEPTH:
                raise FrameJsonError("recursion limit exceeded")
            if isinstance(item, dict):
                for key, member in item.items():
                    _text(key)
                    stack.append((member, depth + 1))
            else:
                stack.extend((member, depth + 1) for member in item)


def _text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise FrameJsonError("lone surrogate in a \\u escape") from None
