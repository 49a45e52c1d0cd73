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

A repeated key keeps its last value, as a ``Value`` map does (and :func:`json.loads`); a
struct the extension host derives ``Deserialize`` for refuses a repeated field instead, so
``loads(..., repeated_keys=True)`` returns :class:`JsonObject` maps naming them.
"""

from __future__ import annotations

import json
import math
import re
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


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")

#: Integers Python reads otherwise than serde_json: `-0` (a float there) and any run of 20
#: digits or more (past u64 serde_json reads a float, or refuses one past f64's range).
_MINUS_ZERO = re.compile(r"-0(?![0-9.eE])")
_LONG_DIGITS = re.compile(r"[0-9]{10}[0-9]{10}")


def _decoder(*, integers: bool, pairs: bool) -> json.JSONDecoder:
    """A decoder refusing ``NaN`` and out-of-range floats; ``integers`` reads every integer
    through :func:`_integer` (slower: only when the text has an odd one), ``pairs`` records
    repeated keys in :class:`JsonObject` (slower: only where a struct is decoded)."""
    return json.JSONDecoder(
        object_pairs_hook=_object if pairs else None,
        parse_constant=_constant,
        parse_float=_float,
        parse_int=_integer if integers else None,
    )


_DECODERS = {
    (integers, pairs): _decoder(integers=integers, pairs=pairs)
    for integers in (False, True)
    for pairs in (False, True)
}


def loads(text: str, *, repeated_keys: bool = False) -> Any:
    """``text`` (one line, already UTF-8 decoded) read as ``serde_json`` reads a ``Value``;
    :class:`FrameJsonError` (a :class:`ValueError`) when ``serde_json`` refuses it. With
    ``repeated_keys`` every object is a :class:`JsonObject` naming the keys given twice."""
    integers = ("-0" in text and _MINUS_ZERO.search(text) is not None) or (
        _LONG_DIGITS.search(text) is not None
    )
    try:
        value = _DECODERS[integers, repeated_keys].decode(text)
    except RecursionError:
        raise FrameJsonError("recursion limit exceeded") from None
    # Only a `\u` escape can leave a lone surrogate in text that was valid UTF-8, and only a
    # line with 128 brackets can nest 128 deep: most frames need no second look.
    surrogates = _SURROGATE_ESCAPE.search(text) is not None
    if surrogates or text.count("[") + text.count("{") >= MAX_DEPTH:
        _walk(value, surrogates=surrogates)
    return value


def _walk(value: Any, *, surrogates: bool) -> None:
    """Refuse what ``serde_json`` refuses once the text is read: too deep a nesting, a lone
    surrogate in a string or key (looked for only when ``surrogates``)."""
    if surrogates and isinstance(value, str):
        _text(value)
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        item, depth = stack.pop()
        if depth >= MAX_DEPTH:
            raise FrameJsonError("recursion limit exceeded")
        members = item.values() if isinstance(item, dict) else item
        if surrogates and isinstance(item, dict):
            for key in item:
                _text(key)
        for member in members:
            if isinstance(member, dict | list):
                stack.append((member, depth + 1))
            elif surrogates and isinstance(member, str):
                _text(member)


def _text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise FrameJsonError("lone surrogate in a \\u escape") from None
