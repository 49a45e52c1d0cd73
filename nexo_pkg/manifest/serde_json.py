"""JSON carried in manifest strings, judged as the daemon's ``serde_json`` judges it.

Python's ``json`` accepts inputs ``serde_json::from_str::<Value>`` refuses: ``NaN`` and
``Infinity``, numbers outside the ``f64`` range (``1e400``, or an integer literal too long for
one), lone UTF-16 surrogate escapes (``"\\ud800"``), and arrays or objects nested 128 levels or
more. :func:`json_problem` reports those with serde_json's wording and position (line and byte
column of the offending character, as serde_json counts them), and any other syntax error in
nexo-pkg's own words, without a position: the caller says where the offending character is, as
lint counts positions. Never raises.
"""

from __future__ import annotations

import json
import math
import re
from typing import NamedTuple

__all__ = ["RECURSION_LIMIT", "JsonProblem", "json_problem"]

RECURSION_LIMIT = 128
"""serde_json refuses the array or object that opens the 128th nesting level."""

_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")


def _at(text: str, offset: int, message: str) -> tuple[int, str]:
    """serde_json's ``{message} at line L column C`` for the character at ``offset``."""
    line_start = text.rfind("\n", 0, offset) + 1
    line = text.count("\n", 0, offset) + 1
    column = len(text[line_start : offset + 1].encode("utf-8", "surrogatepass"))
    return offset, f"{message} at line {line} column {column}"


def _escape_problem(text: str, start: int) -> tuple[int, str] | None:
    """serde_json's verdict on the ``\\u`` escape whose backslash is at ``start``.

    A problem comes with the offset it is reported at; a good surrogate pair yields
    ``(end, "")`` so that the caller skips its second half.
    """
    hex_start = start + 2
    if not _HEX4.fullmatch(text, hex_start, hex_start + 4):
        return None  # a malformed escape: Python's parser reports it
    first = int(text[hex_start : hex_start + 4], 16)
    last_digit = hex_start + 3
    if 0xDC00 <= first <= 0xDFFF:
        return _at(text, last_digit, "lone leading surrogate in hex escape")
    if not 0xD800 <= first <= 0xDBFF:
        return None
    after = last_digit + 1
    if text[after : after + 1] != "\\":
        return _at(text, after, "unexpected end of hex escape")
    if text[after + 1 : after + 2] != "u":
        return _at(text, after + 1, "unexpected end of hex escape")
    second_start = after + 2
    if not _HEX4.fullmatch(text, second_start, second_start + 4):
        return None
    second = int(text[second_start : second_start + 4], 16)
    if not 0xDC00 <= second <= 0xDFFF:
        return _at(text, second_start + 3, "lone leading surrogate in hex escape")
    return second_start + 4, ""


def _serde_only_problem(text: str) -> tuple[int, str] | None:
    """The first problem serde_json has that Python's ``json`` does not, with its offset."""
    depth = 0
    index = 0
    length = len(text)
    while index < length:
        char = text[index]
        if char == '"':
            index += 1
            while index < length and text[index] != '"':
                if text[index] == "\\":
                    if text[index + 1 : index + 2] == "u":
                        problem = _escape_problem(text, index)
                        if problem is not None and problem[1]:
                            return problem
                        if problem is not None:
                            index = problem[0]
                            continue
                    index += 2
                    continue
                index += 1
            index += 1
            continue
        if char in "[{":
            depth += 1
            if depth >= RECURSION_LIMIT:
                return _at(text, index, "recursion limit exceeded")
        elif char in "]}":
            depth -= 1
        elif char in "NI":
            # `NaN`, `Infinity`: no JSON value starts so (src/de.rs `ExpectedSomeValue`).
            return _at(text, index, "expected value")
        elif char == "-" or char.isdigit():
            match = _NUMBER.match(text, index)
            if match is None:
                if text[index + 1 : index + 2] == "I":
                    # `-Infinity`: a minus sign before no digit (src/de.rs `InvalidNumber`).
                    return _at(text, index + 1, "invalid number")
                index += 1
                continue
            token = match.group()
            if math.isinf(float(token)):
                return _at(text, match.end() - 1, "number out of range")
            index = match.end()
            continue
        index += 1
    return None


# Python's `json` messages (3.11-3.13) in nexo-pkg's words; the position is added by the caller.
_OWN_WORDS = {
    "Expecting value": "expected a JSON value",
    "Expecting property name enclosed in double quotes": "expected a key in double quotes",
    "Expecting ':' delimiter": "expected `:` after the key",
    "Expecting ',' delimiter": "expected `,` or the closing bracket",
    "Unterminated string starting at": "an unclosed string",
    "Invalid control character at": "an unescaped control character in a string",
    "Invalid \\escape": "an invalid escape in a string",
    "Invalid \\uXXXX escape": "an invalid `\\u` escape (four hex digits expected)",
    "Extra data": "more text after the JSON value",
    "Illegal trailing comma before end of object": "a trailing comma before `}`",
    "Illegal trailing comma before end of array": "a trailing comma before `]`",
}


def _own_words(message: str) -> str:
    """Python's ``JSONDecodeError.msg`` in nexo-pkg's words."""
    known = _OWN_WORDS.get(message)
    if known is not None:
        return known
    return message[:1].lower() + message[1:]


def _refuse_constant(name: str) -> object:
    raise ValueError(f"`{name}` is not JSON")


class JsonProblem(NamedTuple):
    """What :func:`json_problem` found: ``reason`` is empty when the text parses (``value``)."""

    reason: str
    value: object
    offset: int | None
    """The offset in the text of the character the reason is about, when known."""
    located: bool
    """Whether ``reason`` already says where (serde_json's ``at line L column C``)."""


def json_problem(text: str) -> JsonProblem:
    """How serde_json judges ``text``: no reason and its value when it parses, else the reason
    and the offset in ``text`` of the character the reason is about, when known.

    The reason is serde_json's own message (with its position) for what only it refuses;
    otherwise nexo-pkg's words for the syntax error, without a position (the offset says
    where), whichever problem comes first in the text.
    """
    serde = _serde_only_problem(text)
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        if serde is not None and serde[0] < exc.pos:
            return JsonProblem(serde[1], None, serde[0], located=True)
        return JsonProblem(_own_words(exc.msg), None, exc.pos, located=False)
    except ValueError as exc:
        if serde is not None:
            return JsonProblem(serde[1], None, serde[0], located=True)
        return JsonProblem(str(exc), None, None, located=False)
    except RecursionError:
        if serde is not None:
            return JsonProblem(serde[1], None, serde[0], located=True)
        return JsonProblem("recursion limit exceeded", None, None, located=False)
    if serde is not None:
        return JsonProblem(serde[1], None, serde[0], located=True)
    return JsonProblem("", value, None, located=False)
