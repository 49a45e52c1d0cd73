"""RE2's pattern dialect in pure Python: the engine of identity patterns where google-re2
has no wheel (musllinux, Alpine), with RE2's verdicts.

The parser follows RE2's own (``re2/parse.cc``: Perl-like flags, the options nexo-pkg
compiles with) token by token, so a pattern RE2 refuses is refused here with RE2's error
kind (``missing ]``, ``invalid escape sequence``, ``bad repetition operator``, ...) and a
pattern RE2 accepts means the same thing: ASCII ``\\d \\w \\s \\b`` (RE2's ``\\s`` is
``[\\t\\n\\f\\r ]``), ``$`` at the very end only (``\\z``) unless ``(?m)``, POSIX classes,
``\\pL``/``\\p{Lu}``/``\\PN``/``\\p{^L}``/``\\p{Greek}`` classes, ``\\Q...\\E``,
no look-arounds, no back-references, counted repetitions of at most 1000 copies in all.

Matching is a Thompson NFA simulation (a Pike VM without captures: only whether the whole
text matches is asked), never backtracking: its time is at most proportional to the length
of the text times the size of the compiled pattern, which is capped at
:data:`MAX_PROGRAM_SIZE` instructions. A hostile pattern or identity cannot make it slow.

``\\p{…}`` (general categories and scripts) and ``(?i)`` (simple case folding) answer from
RE2's own Unicode tables (:mod:`nexo_pkg.trust.re2_tables`, read off google-re2), not from
the running Python's ``unicodedata``: the verdicts do not depend on the Python version. The
one thing RE2 knows and this module does not, ``\\C`` (one byte of the UTF-8 text), is
refused with kind ``unsupported`` rather than read differently.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from nexo_pkg.trust import re2_tables

# RE2 counts repetitions ({n,m}) nested inside one another: their product may not exceed this.
MAX_REPEAT = 1000
# The compiled program's size bound (RE2 bounds its own by memory): the NFA simulation costs at
# most this many steps per character of the text.
MAX_PROGRAM_SIZE = 20_000

# RE2's error texts (re2/regexp.cc CodeText), the kinds a refusal is compared by.
MISSING_BRACKET = "missing ]"
MISSING_PAREN = "missing )"
UNEXPECTED_PAREN = "unexpected )"
TRAILING_BACKSLASH = "trailing \\"
BAD_ESCAPE = "invalid escape sequence"
BAD_CHAR_RANGE = "invalid character class range"
REPEAT_ARGUMENT = "no argument for repetition operator"
REPEAT_SIZE = "invalid repetition size"
REPEAT_OP = "bad repetition operator"
BAD_PERL_OP = "invalid perl operator"
BAD_NAMED_CAPTURE = "invalid named capture group"
BAD_UTF8 = "invalid UTF-8"
PATTERN_TOO_LARGE = "pattern too large - compile failed"
# Not RE2's: what RE2 accepts and this engine cannot implement exactly.
UNSUPPORTED = "unsupported"


class Re2SyntaxError(ValueError):
    """A pattern RE2's parser refuses (or that only RE2 itself can run): ``kind`` is RE2's
    error text, the message ``kind: fragment`` as RE2 words it."""

    def __init__(self, kind: str, fragment: str = "", hint: str = "") -> None:
        message = f"{kind}: {fragment}" if fragment else kind
        super().__init__(f"{message} ({hint})" if hint else message)
        self.kind = kind


# --- character sets -------------------------------------------------------------------------

Predicate = Callable[[str], bool]


def _ascii(*ranges: tuple[str, str]) -> Predicate:
    members = frozenset(chr(c) for lo, hi in ranges for c in range(ord(lo), ord(hi) + 1))
    return members.__contains__


# RE2's Perl classes (re2/perl_groups.cc): ASCII only; \s has no \v.
_DIGIT = _ascii(("0", "9"))
_SPACE = _ascii(("\t", "\n"), ("\f", "\r"), (" ", " "))
_WORD = _ascii(("0", "9"), ("A", "Z"), ("a", "z"), ("_", "_"))
_PERL_GROUPS: dict[str, tuple[Predicate, bool]] = {
    "d": (_DIGIT, True),
    "D": (_DIGIT, False),
    "s": (_SPACE, True),
    "S": (_SPACE, False),
    "w": (_WORD, True),
    "W": (_WORD, False),
}
_POSIX_GROUPS: dict[str, Predicate] = {
    "alnum": _ascii(("0", "9"), ("A", "Z"), ("a", "z")),
    "alpha": _ascii(("A", "Z"), ("a", "z")),
    "ascii": _ascii(("\x00", "\x7f")),
    "blank": _ascii(("\t", "\t"), (" ", " ")),
    "cntrl": _ascii(("\x00", "\x1f"), ("\x7f", "\x7f")),
    "digit": _DIGIT,
    "graph": _ascii(("!", "~")),
    "lower": _ascii(("a", "z")),
    "print": _ascii((" ", "~")),
    "punct": _ascii(("!", "/"), (":", "@"), ("[", "`"), ("{", "~")),
    "space": _ascii(("\t", "\r"), (" ", " ")),
    "upper": _ascii(("A", "Z")),
    "word": _WORD,
    "xdigit": _ascii(("0", "9"), ("A", "F"), ("a", "f")),
}
# Capture group names are made of these categories (RE2's IsValidCaptureName, Python 3's rule).
_NAME_CATEGORIES = ("Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Mn", "Mc", "Nd", "Pc")


@functools.cache
def _table(text: str) -> tuple[list[int], list[int]]:
    """The ranges of one of :mod:`nexo_pkg.trust.re2_tables`'s tables: starts and ends."""
    starts: list[int] = []
    ends: list[int] = []
    for item in text.split():
        lo, _, hi = item.partition("-")
        starts.append(int(lo, 16))
        ends.append(int(hi or lo, 16))
    return starts, ends


def _in_table(text: str, char: str) -> bool:
    starts, ends = _table(text)
    code = ord(char)
    index = bisect.bisect_right(starts, code) - 1
    return index >= 0 and code <= ends[index]


@functools.cache
def _group_predicate(name: str) -> Predicate | None:
    """``\\p{name}``: a general category or script of RE2's tables, or ``Any``."""
    if name == "Any":
        return lambda _c: True
    text = re2_tables.CATEGORIES.get(name, re2_tables.SCRIPTS.get(name))
    if text is None:
        return None
    return functools.partial(_in_table, text)


def _valid_capture_name(name: str) -> bool:
    return bool(name) and all(
        any(_in_table(re2_tables.CATEGORIES[cat], c) for cat in _NAME_CATEGORIES) for c in name
    )


@functools.cache
def _fold_orbits() -> dict[str, frozenset[str]]:
    """Every character that has case variants in RE2, with its orbit (the characters that fold
    to one another, RE2's simple case folding)."""
    orbits: dict[str, frozenset[str]] = {}
    for item in re2_tables.FOLDING["orbits"].split(","):
        orbit = frozenset(chr(int(code, 16)) for code in item.split())
        for member in orbit:
            orbits[member] = orbit
    return orbits


def _orbit(char: str) -> frozenset[str]:
    return _fold_orbits().get(char) or frozenset((char,))


@dataclass
class _CharClass:
    """A bracketed class (or ``\\d``, ``\\pL``, ``.``) as RE2 builds it: ranges and groups,
    each folded when ``(?i)`` was in force as it was added, the whole negated at the end."""

    ranges: list[tuple[int, int]] = field(default_factory=list)
    groups: list[tuple[Predicate, bool, bool]] = field(default_factory=list)  # (g, sign, fold)
    folded_ranges: list[tuple[int, int]] = field(default_factory=list)
    negated: bool = False

    def add_range(self, lo: int, hi: int, fold: bool) -> None:
        (self.folded_ranges if fold else self.ranges).append((lo, hi))

    def add_group(self, group: Predicate, positive: bool, fold: bool) -> None:
        self.groups.append((group, positive, fold))

    def _in_ranges(self, ranges: list[tuple[int, int]], chars: frozenset[str]) -> bool:
        return any(lo <= ord(c) <= hi for c in chars for lo, hi in ranges)

    def contains(self, char: str) -> bool:
        single = frozenset((char,))
        orbit = _orbit(char) if self.folded_ranges or any(f for _, _, f in self.groups) else single
        found = self._in_ranges(self.ranges, single) or self._in_ranges(self.folded_ranges, orbit)
        if not found:
            for group, positive, fold in self.groups:
                # A negated group under (?i) is the negation of the group's fold closure.
                hit = any(group(c) for c in (orbit if fold else single))
                if hit == positive:
                    found = True
                    break
        return found != self.negated


# --- syntax tree ----------------------------------------------------------------------------


@dataclass
class _Node:
    op: str  # "char", "assert", "cat", "alt", "repeat"
    test: Predicate | None = None
    assertion: str = ""
    subs: list[_Node] = field(default_factory=list)
    lo: int = 0
    hi: int = -1  # -1: unbounded
    counted: bool = False  # written {n,m} (RE2 bounds their nesting), not * + ?


def _literal(char: str, fold: bool) -> _Node:
    if fold and _orbit(char) != frozenset((char,)):
        orbit = _orbit(char)
        return _Node("char", test=orbit.__contains__)
    return _Node("char", test=char.__eq__)


def _class_node(cls: _CharClass) -> _Node:
    return _Node("char", test=cls.contains)


def _repetition_budget(node: _Node, budget: int) -> int:
    """RE2's RepetitionWalker: 1000 divided by every counted repetition on the way down."""
    if node.op == "repeat" and node.counted:
        copies = node.hi if node.hi >= 0 else node.lo
        if copies > 0:
            budget //= copies
    least = budget
    for sub in node.subs:
        least = min(least, _repetition_budget(sub, budget))
    return least


_FOLD, _MULTILINE, _DOTALL = "i", "m", "s"


class _Parser:
    """RE2's parse loop (Perl mode) over a Python string, one token at a time."""

    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.pos = 0
        self.flags: set[str] = set()
        # Each open group: (saved flags, alternatives so far, current concatenation).
        self.stack: list[tuple[set[str], list[_Node], list[_Node]]] = []
        self.alternatives: list[_Node] = []
        self.sequence: list[_Node] = []

    def error(self, kind: str, start: int, end: int | None = None, hint: str = "") -> None:
        raise Re2SyntaxError(kind, self.text[start : self.pos if end is None else end], hint)

    def parse(self) -> _Node:
        if any(0xD800 <= ord(c) <= 0xDFFF for c in self.text):
            raise Re2SyntaxError(BAD_UTF8)
        last_repeat_start = -1
        while self.pos < len(self.text):
            start = self.pos
            repeat = False
            char = self.text[start]
            if char == "(":
                self.open_paren()
            elif char == "|":
                self.pos += 1
                self.alternatives.append(_Node("cat", subs=self.sequence))
                self.sequence = []
            elif char == ")":
                self.close_paren()
            elif char == "^":
                self.pos += 1
                self.push_assert("bol" if _MULTILINE in self.flags else "bot")
            elif char == "$":
                self.pos += 1
                self.push_assert("eol" if _MULTILINE in self.flags else "eot")
            elif char == ".":
                self.pos += 1
                if _DOTALL in self.flags:
                    self.sequence.append(_Node("char", test=lambda _c: True))
                else:
                    self.sequence.append(_Node("char", test="\n".__ne__))
            elif char == "[":
                self.sequence.append(_class_node(self.parse_class()))
            elif char in "*+?":
                self.pos += 1
                lo, hi = {"*": (0, -1), "+": (1, -1), "?": (0, 1)}[char]
                self.repeat_op(start, last_repeat_start, lo, hi, counted=False)
                repeat = True
            elif char == "{" and (bounds := self.maybe_repetition()) is not None:
                self.repeat_op(start, last_repeat_start, *bounds, counted=True)
                repeat = True
            elif char == "\\":
                self.escape()
            else:
                self.pos += 1
                self.push_literal(char)
            last_repeat_start = start if repeat else -1
        if self.stack:
            raise Re2SyntaxError(MISSING_PAREN, self.text)
        return self.finish_alternation()

    def push_assert(self, kind: str) -> None:
        self.sequence.append(_Node("assert", assertion=kind))

    def push_literal(self, char: str) -> None:
        self.sequence.append(_literal(char, _FOLD in self.flags))

    def finish_alternation(self) -> _Node:
        branches = [*self.alternatives, _Node("cat", subs=self.sequence)]
        return branches[0] if len(branches) == 1 else _Node("alt", subs=branches)

    def open_paren(self) -> None:
        if self.text.startswith("(?", self.pos):
            self.perl_flags()
            return
        self.pos += 1
        self.open_group()

    def open_group(self) -> None:
        self.stack.append((set(self.flags), self.alternatives, self.sequence))
        self.alternatives, self.sequence = [], []

    def close_paren(self) -> None:
        if not self.stack:
            raise Re2SyntaxError(UNEXPECTED_PAREN, self.text)
        self.pos += 1
        group = self.finish_alternation()
        self.flags, self.alternatives, self.sequence = self.stack.pop()
        self.sequence.append(group)

    def perl_flags(self) -> None:
        start = self.pos
        rest = self.text[start + 2 :]
        if (len(rest) > 2 and rest[0] == "P" and rest[1] == "<") or (
            len(rest) > 1 and rest[0] == "<" and rest[1] not in "=!"
        ):
            begin = start + (4 if rest[0] == "P" else 3)
            end = self.text.find(">", begin)
            if end < 0:
                raise Re2SyntaxError(BAD_NAMED_CAPTURE, self.text[start:])
            name = self.text[begin:end]
            if not _valid_capture_name(name):
                self.error(BAD_NAMED_CAPTURE, start, end + 1)
            self.pos = end + 1
            self.open_group()
            return
        self.pos = start + 2
        flags = set(self.flags)
        negated = saw_flag = False
        while True:
            if self.pos >= len(self.text):
                self.error(BAD_PERL_OP, start)
            char = self.text[self.pos]
            self.pos += 1
            if char in "imsU":
                saw_flag = True
                if negated:
                    flags.discard(char)
                else:
                    flags.add(char)
            elif char == "-" and not negated:
                negated, saw_flag = True, False
            elif char in ":)":
                break
            else:
                self.error(BAD_PERL_OP, start)
        if negated and not saw_flag:
            self.error(BAD_PERL_OP, start)
        if char == ":":
            self.open_group()
        self.flags = flags

    def maybe_repetition(self) -> tuple[int, int] | None:
        """``{n}``, ``{n,}``, ``{n,m}`` (no leading zeros); anything else is a literal ``{``."""
        pos = self.pos + 1
        lo, pos = self.integer(pos)
        if lo is None or pos >= len(self.text):
            return None
        hi = lo
        if self.text[pos] == ",":
            pos += 1
            if pos >= len(self.text):
                return None
            if self.text[pos] == "}":
                hi = -1
            else:
                upper, pos = self.integer(pos)
                if upper is None:
                    return None
                hi = upper
        if pos >= len(self.text) or self.text[pos] != "}":
            return None
        self.pos = pos + 1
        return lo, hi

    def integer(self, pos: int) -> tuple[int | None, int]:
        digits = "0123456789"
        if pos >= len(self.text) or self.text[pos] not in digits:
            return None, pos
        if self.text[pos] == "0" and pos + 1 < len(self.text) and self.text[pos + 1] in digits:
            return None, pos
        value = 0
        while pos < len(self.text) and self.text[pos] in digits:
            if value >= 100_000_000:
                return None, pos
            value = value * 10 + int(self.text[pos])
            pos += 1
        return value, pos

    def repeat_op(self, start: int, last_repeat: int, lo: int, hi: int, *, counted: bool) -> None:
        if self.pos < len(self.text) and self.text[self.pos] == "?":
            self.pos += 1  # non-greedy: the same whole-text verdict
        if last_repeat >= 0:
            self.error(REPEAT_OP, last_repeat)
        if counted and ((hi != -1 and hi < lo) or lo > MAX_REPEAT or hi > MAX_REPEAT):
            self.error(REPEAT_SIZE, start)
        if not self.sequence:
            self.error(REPEAT_ARGUMENT, start)
        node = _Node("repeat", subs=[self.sequence.pop()], lo=lo, hi=hi, counted=counted)
        self.sequence.append(node)
        if counted and (lo >= 2 or hi >= 2) and _repetition_budget(node, MAX_REPEAT) == 0:
            self.error(REPEAT_SIZE, start)

    def escape(self) -> None:
        start = self.pos
        nxt = self.text[start + 1] if start + 1 < len(self.text) else ""
        if nxt in ("b", "B"):
            self.pos += 2
            self.push_assert("word" if nxt == "b" else "nonword")
        elif nxt in ("A", "z"):
            self.pos += 2
            self.push_assert("bot" if nxt == "A" else "eot")
        elif nxt == "C":
            self.pos += 2
            self.error(UNSUPPORTED, start, hint="\\C matches single bytes; use . instead")
        elif nxt == "Q":
            self.pos += 2
            end = self.text.find("\\E", self.pos)
            end = len(self.text) if end < 0 else end
            for char in self.text[self.pos : end]:
                self.push_literal(char)
            self.pos = min(end + 2, len(self.text))
        elif nxt in ("p", "P"):
            cls = _CharClass()
            self.unicode_group(cls)
            self.sequence.append(_Node("char", test=cls.contains))
        elif nxt in _PERL_GROUPS:
            self.pos += 2
            cls = _CharClass()
            cls.add_group(*_PERL_GROUPS[nxt], fold=_FOLD in self.flags)
            self.sequence.append(_Node("char", test=cls.contains))
        else:
            self.push_literal(self.escaped_char())

    def escaped_char(self) -> str:
        """RE2's ParseEscape: octal, ``\\x``, C escapes and escaped punctuation."""
        start = self.pos
        if start + 1 >= len(self.text):
            raise Re2SyntaxError(TRAILING_BACKSLASH)
        char = self.text[start + 1]
        self.pos = start + 2
        octal = "01234567"
        if char in "1234567" and (self.pos >= len(self.text) or self.text[self.pos] not in octal):
            self.error(BAD_ESCAPE, start)
        if char in octal:
            code = int(char)
            for _ in range(2):
                if self.pos < len(self.text) and self.text[self.pos] in octal:
                    code = code * 8 + int(self.text[self.pos])
                    self.pos += 1
            return chr(code)
        if char == "x":
            return self.hex_escape(start)
        simple = {"n": "\n", "r": "\r", "t": "\t", "a": "\a", "f": "\f", "v": "\v"}
        if char in simple:
            return simple[char]
        if char < "\x80" and not char.isalnum():
            return char
        self.error(BAD_ESCAPE, start)
        raise AssertionError  # pragma: no cover - error() raises

    def hex_escape(self, start: int) -> str:
        hexdigits = "0123456789abcdefABCDEF"
        if self.pos >= len(self.text):
            self.error(BAD_ESCAPE, start)
        char = self.text[self.pos]
        self.pos += 1
        if char == "{":
            digits = 0
            code = 0
            while True:
                if self.pos >= len(self.text):
                    self.error(BAD_ESCAPE, start)
                char = self.text[self.pos]
                self.pos += 1
                if char not in hexdigits:
                    break
                digits += 1
                code = code * 16 + int(char, 16)
                if code > 0x10FFFF:
                    self.error(BAD_ESCAPE, start)
            if char != "}" or digits == 0:
                self.error(BAD_ESCAPE, start)
        else:
            if self.pos >= len(self.text):
                self.error(BAD_ESCAPE, start)
            second = self.text[self.pos]
            self.pos += 1
            if char not in hexdigits or second not in hexdigits:
                self.error(BAD_ESCAPE, start)
            code = int(char + second, 16)
        return chr(code)

    def unicode_group(self, cls: _CharClass) -> None:
        """``\\pL``, ``\\p{Lu}``, ``\\PL``, ``\\p{^L}``; the caller saw ``\\p`` or ``\\P``."""
        start = self.pos
        positive = self.text[start + 1] == "p"
        self.pos = start + 2
        if self.pos >= len(self.text):
            self.error(BAD_CHAR_RANGE, start)
        if self.text[self.pos] != "{":
            name = self.text[self.pos]
            self.pos += 1
        else:
            end = self.text.find("}", self.pos)
            if end < 0:
                self.error(BAD_CHAR_RANGE, start, len(self.text))
            name = self.text[self.pos + 1 : end]
            self.pos = end + 1
        if name.startswith("^"):
            positive, name = not positive, name[1:]
        group = _group_predicate(name)
        if group is None:
            self.error(BAD_CHAR_RANGE, start)
            raise AssertionError  # pragma: no cover - error() raises
        cls.add_group(group, positive, fold=_FOLD in self.flags)

    def parse_class(self) -> _CharClass:
        whole = self.pos
        self.pos += 1
        cls = _CharClass()
        fold = _FOLD in self.flags
        if self.pos < len(self.text) and self.text[self.pos] == "^":
            self.pos += 1
            cls.negated = True
        first = True
        while self.pos < len(self.text) and (self.text[self.pos] != "]" or first):
            first = False
            if self.text.startswith("[:", self.pos) and len(self.text) - self.pos > 2:
                close = self.text.find(":]", self.pos + 2)
                if close >= 0:
                    name = self.text[self.pos + 2 : close]
                    positive = not name.startswith("^")
                    group = _POSIX_GROUPS.get(name if positive else name[1:])
                    if group is None:
                        self.error(BAD_CHAR_RANGE, self.pos, close + 2)
                        raise AssertionError  # pragma: no cover - error() raises
                    self.pos = close + 2
                    cls.add_group(group, positive, fold)
                    continue
            rest = self.text[self.pos : self.pos + 2]
            if len(self.text) - self.pos > 2 and rest in ("\\p", "\\P"):
                self.unicode_group(cls)
                continue
            if len(rest) == 2 and rest[0] == "\\" and rest[1] in _PERL_GROUPS:
                self.pos += 2
                cls.add_group(*_PERL_GROUPS[rest[1]], fold=fold)
                continue
            range_start = self.pos
            lo = self.class_char(whole)
            hi = lo
            if (
                len(self.text) - self.pos >= 2
                and self.text[self.pos] == "-"
                and self.text[self.pos + 1] != "]"
            ):
                self.pos += 1
                hi = self.class_char(whole)
                if hi < lo:
                    self.error(BAD_CHAR_RANGE, range_start)
            cls.add_range(ord(lo), ord(hi), fold)
        if self.pos >= len(self.text):
            self.error(MISSING_BRACKET, whole, len(self.text))
        self.pos += 1
        return cls

    def class_char(self, whole: int) -> str:
        if self.pos >= len(self.text):
            self.error(MISSING_BRACKET, whole, len(self.text))
        if self.text[self.pos] == "\\":
            return self.escaped_char()
        char = self.text[self.pos]
        self.pos += 1
        return char


# --- compiled program and matching ----------------------------------------------------------


def _is_word(text: str, index: int) -> bool:
    return 0 <= index < len(text) and _WORD(text[index])


def _assertion_holds(kind: str, text: str, pos: int) -> bool:
    if kind == "bot":
        return pos == 0
    if kind == "eot":
        return pos == len(text)
    if kind == "bol":
        return pos == 0 or text[pos - 1] == "\n"
    if kind == "eol":
        return pos == len(text) or text[pos] == "\n"
    boundary = _is_word(text, pos - 1) != _is_word(text, pos)
    return boundary if kind == "word" else not boundary


# Instructions: ("char", test, next), ("split", a, b), ("jump", a), ("assert", kind, next),
# ("match",).
_Inst = tuple[object, ...]


class _Compiler:
    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.prog: list[list[object]] = []

    def emit(self, *inst: object) -> int:
        if len(self.prog) >= MAX_PROGRAM_SIZE:
            raise Re2SyntaxError(PATTERN_TOO_LARGE)
        self.prog.append(list(inst))
        return len(self.prog) - 1

    def compile(self, node: _Node, nxt: int) -> int:
        """Instructions for ``node`` that continue at ``nxt``; returns their entry."""
        if node.op == "char":
            return self.emit("char", node.test, nxt)
        if node.op == "assert":
            return self.emit("assert", node.assertion, nxt)
        if node.op == "cat":
            for sub in reversed(node.subs):
                nxt = self.compile(sub, nxt)
            return nxt
        if node.op == "alt":
            entries = [self.compile(sub, nxt) for sub in node.subs]
            entry = entries[-1]
            for other in reversed(entries[:-1]):
                entry = self.emit("split", other, entry)
            return entry
        return self.compile_repeat(node, nxt)

    def compile_repeat(self, node: _Node, nxt: int) -> int:
        (sub,) = node.subs
        if node.hi == -1:
            # x{n,}: n copies then a loop of x*.
            loop = self.emit("split", -1, nxt)
            body = self.compile(sub, loop)
            self.prog[loop][1] = body
            entry = loop
            for _ in range(node.lo):
                entry = self.compile(sub, entry)
            return entry
        entry = nxt
        for _ in range(node.hi - node.lo):
            entry = self.emit("split", self.compile(sub, entry), nxt)
        for _ in range(node.lo):
            entry = self.compile(sub, entry)
        return entry


@dataclass(frozen=True)
class Re2Pattern:
    """A compiled pattern: :meth:`fullmatch` says whether it matches a whole text."""

    pattern: str
    program: tuple[tuple[object, ...], ...]
    start: int

    def fullmatch(self, text: str) -> bool:
        program = self.program
        marks = [-1] * len(program)
        current = self._closure([self.start], 0, text, marks)
        for pos, char in enumerate(text):
            following: list[int] = []
            for pc in current:
                inst = program[pc]
                if inst[0] == "char" and inst[1](char):  # type: ignore[operator]
                    following.append(inst[2])  # type: ignore[arg-type]
            if not following:
                return False
            current = self._closure(following, pos + 1, text, marks)
        return any(program[pc][0] == "match" for pc in current)

    def _closure(self, entries: list[int], pos: int, text: str, marks: list[int]) -> list[int]:
        """The ``char`` and ``match`` states reachable from ``entries`` without reading."""
        program = self.program
        found: list[int] = []
        stack = list(reversed(entries))
        while stack:
            pc = stack.pop()
            if marks[pc] == pos:
                continue
            marks[pc] = pos
            inst = program[pc]
            kind = inst[0]
            if kind == "split":
                stack.append(inst[2])  # type: ignore[arg-type]
                stack.append(inst[1])  # type: ignore[arg-type]
            elif kind == "assert":
                if _assertion_holds(inst[1], text, pos):  # type: ignore[arg-type]
                    stack.append(inst[2])  # type: ignore[arg-type]
            else:
                found.append(pc)
        return found


@functools.lru_cache(maxsize=256)
def compile_re2(pattern: str) -> Re2Pattern:
    """Parse ``pattern`` as RE2 would and compile it; :class:`Re2SyntaxError` (a
    :class:`ValueError`) with RE2's error kind where RE2 refuses it."""
    tree = _Parser(pattern).parse()
    compiler = _Compiler(pattern)
    match = compiler.emit("match")
    start = compiler.compile(tree, match)
    return Re2Pattern(pattern, tuple(tuple(inst) for inst in compiler.prog), start)
