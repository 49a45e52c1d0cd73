"""Durations as the daemon reads them: ``humantime::parse_duration`` (through
``humantime_serde``), which the daemon's config types use for ``call_timeout`` and friends.

A port of ``src/duration.rs`` of the ``humantime`` crate (tailhook/humantime, 2.x): numbers,
each followed by a unit (``30s``, ``1h 30min``, ``2days``), whitespace allowed between them
and even inside a number; a number without a unit, an unknown unit, any other character,
or an overflow of 64-bit seconds is refused, with the crate's message.
"""

from __future__ import annotations

__all__ = ["DurationError", "parse_duration"]

_U64 = 2**64

# Seconds (or, below one second, nanoseconds) per unit, by every spelling the crate takes.
_SECONDS = {
    **dict.fromkeys(("seconds", "second", "secs", "sec", "s"), 1),
    **dict.fromkeys(("minutes", "minute", "min", "mins", "m"), 60),
    **dict.fromkeys(("hours", "hour", "hr", "hrs", "h"), 3600),
    **dict.fromkeys(("days", "day", "d"), 86400),
    **dict.fromkeys(("weeks", "week", "w"), 86400 * 7),
    **dict.fromkeys(("months", "month", "M"), 2_630_016),
    **dict.fromkeys(("years", "year", "y"), 31_557_600),
}
_NANOSECONDS = {
    **dict.fromkeys(("nanos", "nsec", "ns"), 1),
    **dict.fromkeys(("usec", "us"), 1000),
    **dict.fromkeys(("millis", "msec", "ms"), 1_000_000),
}
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGITS = frozenset("0123456789")
# Rust's `char::is_whitespace` (Unicode White_Space).
_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
    + "".join(chr(code) for code in range(0x2000, 0x200B))
)
_UNITS_HELP = (
    "supported units: ns, us, ms, sec, min, hours, days, weeks, months, years (and few variations)"
)


class DurationError(ValueError):
    """A text ``humantime::parse_duration`` refuses; the message is the crate's."""


def _check(value: int) -> int:
    if value >= _U64:
        raise DurationError("number is too large")
    return value


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.index = 0  # in characters; offsets in messages are UTF-8 bytes, as Rust's
        self.seconds = 0
        self.nanos = 0

    def offset(self, index: int | None = None) -> int:
        return len(self.text[: self.index if index is None else index].encode("utf-8"))

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

    def unit(self, number: int, start: int, end: int) -> None:
        name = self.text[start:end]
        if name in _SECONDS:
            seconds, nanos = _check(number * _SECONDS[name]), 0
        elif name in _NANOSECONDS:
            seconds, nanos = 0, _check(number * _NANOSECONDS[name])
        elif not name:
            raise DurationError(f"time unit needed, for example {number}sec or {number}ms")
        else:
            raise DurationError(f'unknown time unit "{name}", {_UNITS_HELP}')
        nanos = _check(self.nanos + nanos)
        if nanos > 1_000_000_000:
            seconds = _check(seconds + nanos // 1_000_000_000)
            nanos %= 1_000_000_000
        self.seconds = _check(self.seconds + seconds)
        self.nanos = nanos

    def parse(self) -> tuple[int, int]:
        number = self.first_digit()
        if number is None:
            raise DurationError("value was empty")
        while True:
            mark = self.index
            start: int | None = None
            while (char := self.next_char()) is not None:
                if char in _DIGITS:
                    number = _check(number * 10 + int(char))
                elif char in _ASCII_LETTERS:
                    start = self.index - 1
                    break
                elif char not in _WHITESPACE:
                    raise DurationError(f"invalid character at {self.offset(mark)}")
                mark = self.index
            if start is None:
                start = self.index
            end = self.index
            restart = False
            while (char := self.next_char()) is not None:
                if char in _DIGITS:
                    self.unit(number, start, end)
                    number = int(char)
                    restart = True
                    break
                if char in _WHITESPACE:
                    break
                if char not in _ASCII_LETTERS:
                    raise DurationError(f"invalid character at {self.offset(end)}")
                end = self.index
            if restart:
                continue
            self.unit(number, start, end)
            following = self.first_digit()
            if following is None:
                return self.seconds, self.nanos
            number = following


def parse_duration(text: str) -> tuple[int, int]:
    """``(seconds, nanoseconds)`` of ``text``; raises :class:`DurationError` with the
    crate's message (``time unit needed, for example 30sec or 30ms``) where it refuses it."""
    return _Parser(text).parse()
