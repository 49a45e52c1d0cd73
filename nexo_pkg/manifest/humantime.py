"""Durations as the daemon reads them: ``humantime::parse_duration`` (through
``humantime_serde``), which the daemon's config types use for ``call_timeout`` and friends.

A port of ``src/duration.rs`` of the ``humantime`` crate at the version the daemon's
``Cargo.lock`` pins (2.3.0, chronotope/humantime tag ``v2.3.0``): numbers, each followed by a
unit (``30s``, ``1h 30min``, ``2days``, ``163µs``, ``100wk``), a decimal fraction allowed
(``1.5s``, ``0.5h``) as long as it comes out in whole nanoseconds (seconds for units of an
hour and more), whitespace allowed between them and even inside a number; a number without
a unit, an unknown unit, any other character, or an overflow of 64-bit seconds is refused,
with the crate's message.
"""

from __future__ import annotations

__all__ = ["DurationError", "parse_duration"]

_U64 = 2**64
_NANOS_PER_SECOND = 1_000_000_000

# Per unit, by every spelling the crate takes (`Unit::from_str`): the seconds of one unit of
# a minute or more, else the nanoseconds of one. A fraction is added in nanoseconds for units
# up to the minute and in whole seconds from the hour on (`parse_unit`).
_SECONDS = {
    **dict.fromkeys(("seconds", "second", "secs", "sec", "s"), 1),
    **dict.fromkeys(("minutes", "minute", "min", "mins", "m"), 60),
    **dict.fromkeys(("hours", "hour", "hr", "hrs", "h"), 3600),
    **dict.fromkeys(("days", "day", "d"), 86400),
    **dict.fromkeys(("weeks", "week", "wk", "wks", "w"), 86400 * 7),
    **dict.fromkeys(("months", "month", "M"), 2_630_016),
    **dict.fromkeys(("years", "year", "yr", "yrs", "y"), 31_557_600),
}
_NANOSECONDS = {
    **dict.fromkeys(("nanos", "nsec", "ns"), 1),
    **dict.fromkeys(("usec", "us", "\u00b5s"), 1000),
    **dict.fromkeys(("millis", "msec", "ms"), 1_000_000),
}
# Unit characters: ASCII letters and the micro sign (U+00B5) of `µs`.
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ\u00b5")
_DIGITS = frozenset("0123456789")
# Rust's `char::is_whitespace` (Unicode White_Space).
_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
    + "".join(chr(code) for code in range(0x2000, 0x200B))
)
_UNITS_HELP = (
    "supported units: ns, us/µs, ms, sec, min, hours, days, weeks, months, years "
    "(and few variations)"
)
_OVERFLOW = (
    "number is too large or cannot be represented without a lack of precision (values below "
    "1ns are not supported)"
)


class DurationError(ValueError):
    """A text ``humantime::parse_duration`` refuses; the message is the crate's."""


def _check(value: int) -> int:
    """A ``u64`` result (``checked_mul`` / ``checked_add``), else the crate's overflow."""
    if value >= _U64:
        raise DurationError(_OVERFLOW)
    return value


def _divide(numerator: int, denominator: int) -> int:
    """The crate's ``OverflowOp::div``: exact, or the overflow error (lost precision)."""
    if numerator % denominator:
        raise DurationError(_OVERFLOW)
    return numerator // denominator


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.index = 0  # in characters; offsets in messages are UTF-8 bytes, as Rust's
        self.seconds = 0
        self.nanos = 0

    def offset(self) -> int:
        return len(self.text[: self.index].encode("utf-8"))

    def next_char(self) -> str | None:
        if self.index >= len(self.text):
            return None
        char = self.text[self.index]
        self.index += 1
        return char

    def first_digit(self) -> int | None:
        start = self.offset()
        while (char := self.next_char()) is not None:
            if char in _DIGITS:
                return int(char)
            if char not in _WHITESPACE:
                raise DurationError(f"expected number at {start}")
        return None

    def fraction(self, mark: int) -> tuple[int, int, int]:
        """``parse_fractional_part``: ``(numerator, denominator, offset)`` of the digits
        after a ``.``; the offset is where the unit starts."""
        numerator, denominator, zeros = 0, 1, True
        while (char := self.next_char()) is not None:
            if char in _DIGITS:
                denominator = _check(denominator * 10)
                if char != "0":
                    zeros = False
                if not zeros:
                    numerator = _check(numerator * 10 + int(char))
            elif char in _LETTERS:
                break
            elif char not in _WHITESPACE:
                raise DurationError(f"invalid character at {mark}")
            mark = self.offset()
        if denominator == 1:
            raise DurationError(f"invalid character at {mark}")  # `1.` and no digit after
        return numerator, denominator, mark

    def add(self, seconds: int, nanos: int) -> None:
        """``add_current``: carry whole seconds out of the nanoseconds (only above one
        second: exactly one is left to ``Duration::new``, which carries it itself)."""
        nanos = _check(self.nanos + nanos)
        if nanos > _NANOS_PER_SECOND:
            seconds = _check(seconds + nanos // _NANOS_PER_SECOND)
            nanos %= _NANOS_PER_SECOND
        seconds = _check(self.seconds + seconds)
        if nanos == _NANOS_PER_SECOND:
            if seconds + 1 >= _U64:
                raise DurationError("overflow in Duration::new (the daemon panics)")
            seconds, nanos = seconds + 1, 0
        self.seconds, self.nanos = seconds, nanos

    def unit(self, number: int, fraction: tuple[int, int] | None, start: int, end: int) -> None:
        name = self.text[start:end]
        if name in _SECONDS:
            self.add(_check(number * _SECONDS[name]), 0)
        elif name in _NANOSECONDS:
            self.add(0, _check(number * _NANOSECONDS[name]))
        elif not name:
            raise DurationError(f"time unit needed, for example {number}sec or {number}ms")
        else:
            raise DurationError(f"unknown time unit {_rust_debug(name)}, {_UNITS_HELP}")
        if fraction is None:
            return
        numerator, denominator = fraction
        if name in _NANOSECONDS:
            if _NANOSECONDS[name] == 1:
                raise DurationError(_OVERFLOW)  # below one nanosecond
            self.add(0, _divide(_check(numerator * _NANOSECONDS[name]), denominator))
        elif _SECONDS[name] <= 60:
            per_unit = _SECONDS[name] * _NANOS_PER_SECOND
            self.add(0, _divide(_check(numerator * per_unit), denominator))
        else:
            self.add(_divide(_check(numerator * _SECONDS[name]), denominator), 0)

    def parse(self) -> tuple[int, int]:
        number = self.first_digit()
        if number is None:
            raise DurationError("value was empty")
        while True:
            fraction: tuple[int, int] | None = None
            mark = self.offset()
            start: int | None = None
            while (char := self.next_char()) is not None:
                if char in _DIGITS:
                    number = _check(number * 10 + int(char))
                elif char in _LETTERS:
                    break
                elif char == ".":
                    numerator, denominator, mark = self.fraction(mark)
                    fraction = (numerator, denominator)
                    break
                elif char not in _WHITESPACE:
                    raise DurationError(f"invalid character at {mark}")
                mark = self.offset()
            # `start` is the unit's first character, as a character index.
            start = _char_index(self.text, mark)
            end = self.index
            restart = False
            while (char := self.next_char()) is not None:
                if char in _DIGITS:
                    self.unit(number, fraction, start, end)
                    number = int(char)
                    restart = True
                    break
                if char in _WHITESPACE:
                    break
                if char not in _LETTERS:
                    raise DurationError(f"invalid character at {self.offset_of(end)}")
                end = self.index
            if restart:
                continue
            self.unit(number, fraction, start, end)
            following = self.first_digit()
            if following is None:
                return self.seconds, self.nanos
            number = following

    def offset_of(self, index: int) -> int:
        return len(self.text[:index].encode("utf-8"))


def _char_index(text: str, offset: int) -> int:
    """The character index of UTF-8 byte ``offset`` of ``text``."""
    return len(text.encode("utf-8")[:offset].decode("utf-8", errors="ignore"))


def _rust_debug(text: str) -> str:
    """``{:?}`` of a Rust string: quoted, with ``"`` and ``\\`` escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_duration(text: str) -> tuple[int, int]:
    """``(seconds, nanoseconds)`` of ``text``; raises :class:`DurationError` with the
    crate's message (``time unit needed, for example 30sec or 30ms``) where it refuses it."""
    return _Parser(text).parse()
