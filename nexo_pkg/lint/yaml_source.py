"""Parse a YAML config file the way the daemon's ``serde_yaml`` reads it, keeping positions.

PyYAML composes the node tree (every node has its start and end mark); the values are built
here, not by PyYAML's constructor, so that they follow YAML 1.2 as ``serde_yaml`` does:
``yes``/``no``/``on``/``off`` are strings, ``<<`` is an ordinary key, and a key defined twice in
one mapping is an error rather than silently overwritten. The result is plain data plus a key
path -> (key span, value span) map. Never raises: problems become :class:`YamlProblem`.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Literal

from nexo_pkg.core.diagnostics import Position, Span

__all__ = [
    "Edit",
    "KeyPath",
    "ProblemKind",
    "YamlDocument",
    "YamlProblem",
    "moved_back",
    "parse_yaml",
    "spans_in",
]

KeyPath = tuple[str | int, ...]
ProblemKind = Literal[
    "syntax",
    "tag",
    "empty-tag",
    "wide-int",
    "key-type",
    "duplicate",
    "duplicate-value",
    "duplicate-text",
    "depth",
]

_NULL = frozenset({"", "~", "null", "Null", "NULL"})
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
# Rust's `str::parse::<f64>` grammar (no `_`, no surrounding whitespace; `inf`/`nan` spellings
# are refused afterwards as not finite).
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_RUST_INFINITE = re.compile(r"[-+]?(?:inf|infinity|nan)", re.IGNORECASE)
_BREAKS = "\r\n\x85\u2028\u2029"
_LINE_BREAK = re.compile("\r\n|\r|\n")
"""Where an editor and LSP end a line."""
_BREAKZ = "\0" + _BREAKS
_BLANKZ = " \t" + _BREAKZ
_SURROGATE = re.compile("[\ud800-\udfff]")
_RADIX_DIGITS = {16: "0123456789abcdefABCDEF", 8: "01234567", 2: "01", 10: "0123456789"}
_I128 = 2**127
_U128 = 2**128
_I64_MIN = -(2**63)
_U64 = 2**64
_CORE = "tag:yaml.org,2002:"
"""What libyaml expands the ``!!`` handle to: ``!!bool`` is ``tag:yaml.org,2002:bool``."""
MAX_DEPTH = 128
"""serde_yaml's recursion limit (``remaining_depth: 128`` in 0.9.34 ``src/de.rs``): one more
nested sequence or mapping and it refuses the file."""
MAX_NODES = 100_000
"""Aliases can make a small file expand to a huge tree; beyond this many values more than the
file writes out, stop (the values written are bounded by the size cap)."""
REPETITIONS_PER_EVENT = 100
"""serde_yaml's alias budget (0.9.34 ``src/de.rs`` ``jump``): it refuses the file once it has
followed more than this many aliases per parse event of the document."""


@dataclass(frozen=True)
class YamlProblem:
    """A syntax error or a duplicate key, at ``span``."""

    message: str
    span: Span
    key_path: KeyPath = ()
    kind: ProblemKind = "syntax"
    """``syntax``, ``tag`` and ``wide-int``: the file cannot be read into a ``Value`` at all
    (``wide-int``: a 128-bit integer); ``key-type``: a key that is not
    a string (fine where the daemon keeps an opaque ``Value``); ``duplicate``: a key written
    twice; ``duplicate-value``: a key equal as a YAML value to an earlier one written otherwise
    (``0x1`` after ``1``), refused where the keys are read into a ``Value``;
    ``duplicate-text``: a key spelling an earlier one as another value (``"1"`` after ``1``),
    refused where the keys are read as text; ``depth``."""
    at_key: bool = False
    """Whether the problem is the key at ``key_path`` itself, not the value written there."""
    within: tuple[YamlProblem, ...] = ()
    """For a key written again (``duplicate``, ``duplicate-text``): the problems of the value
    written after it, which is read only where a later definition replaces an earlier one."""


@dataclass
class YamlDocument:
    """Plain ``data`` (``None`` for an empty file), spans by key path, and any problems."""

    text: str
    data: Any
    keys: dict[KeyPath, Span] = field(default_factory=dict)
    values: dict[KeyPath, Span] = field(default_factory=dict)
    problems: list[YamlProblem] = field(default_factory=list)
    plain: set[KeyPath] = field(default_factory=set)
    """Paths of plain (unquoted, untagged) scalars: after ``${VAR}`` substitution their text
    is read again as a scalar, as the daemon substitutes before parsing."""
    empty: set[KeyPath] = field(default_factory=set)
    """Paths of empty plain scalars (``key:`` with nothing after it, tagged or not), which
    serde_yaml reads as an empty sequence or mapping even outside a ``Value`` (``~`` it does
    not)."""
    tagged_keys: set[KeyPath] = field(default_factory=set)
    """Paths of keys written with a local tag (``!x schema_version``): a ``Value::Tagged``,
    which no lookup by a string key finds (serde_yaml 0.9.34 ``src/de.rs`` ``parse_tag``)."""

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


class _Locator:
    """Positions of offsets into the text as an editor (and LSP) counts them: lines end at a
    line feed, a carriage return and line feed, or a lone carriage return; columns count code
    points; a leading byte-order mark is no column (as for a manifest). PyYAML's marks also
    break lines at U+0085, U+2028 and U+2029, as libyaml does, and never count a U+FEFF: their
    offset is used, not their line and column."""

    def __init__(self, text: str) -> None:
        self.lead = 1 if text.startswith("\ufeff") else 0
        self.starts = [0, *(found.end() for found in _LINE_BREAK.finditer(text, self.lead))]

    def position(self, index: int) -> Position:
        index = max(index, self.lead)
        line = bisect.bisect_right(self.starts, index)
        start = self.starts[line - 1] if line > 1 else self.lead
        return Position(line, index - start + 1)

    def offset(self, position: Position) -> int:
        """The offset of ``position`` (the inverse of :meth:`position`)."""
        line = min(max(position.line, 1), len(self.starts))
        start = self.starts[line - 1] if line > 1 else self.lead
        return start + position.column - 1


Edit = tuple[int, int, int, int]
"""One replacement of a text: ``(start, end)`` in the original, ``(start, end)`` in the
result."""


def moved_back(document: YamlDocument, original: str, edits: list[Edit]) -> YamlDocument:
    """``document``, parsed from ``original`` with ``edits`` made (``${...}`` substituted),
    with every span of its keys, values and problems moved back onto ``original``: a finding
    after a placeholder on the same line, or after one whose value holds line breaks, is
    where it is in the file, and one inside a substituted value is on its placeholder."""
    if not edits:
        return document
    edited, written = _Locator(document.text), _Locator(original)

    def back(position: Position) -> Position:
        offset = edited.offset(position)
        shift = 0
        for start, end, new_start, new_end in edits:
            if offset < new_start:
                break
            if offset < new_end:
                return written.position(start + min(offset - new_start, end - start))
            shift = end - new_end
        return written.position(offset + shift)

    def moved(span: Span) -> Span:
        return Span(back(span.start), back(span.end))

    document.keys = {path: moved(span) for path, span in document.keys.items()}
    document.values = {path: moved(span) for path, span in document.values.items()}
    document.problems = [
        dataclasses.replace(problem, span=moved(problem.span)) for problem in document.problems
    ]
    return document


def spans_in(text: str) -> Callable[[int, int], Span]:
    """The span of ``text[start:end]`` for offsets ``start, end``: lines and columns counted
    as for the values of the file."""
    locator = _Locator(text)
    return lambda start, end: Span(locator.position(start), locator.position(end))


def _span(node: Any, locator: _Locator) -> Span:
    begin = locator.position(node.start_mark.index)
    finish = locator.position(node.end_mark.index)
    if finish.line > begin.line:
        # A block value runs over several lines: point at its first character.
        finish = Position(begin.line, begin.column + 1)
    return Span(begin, finish)


def _from_str_radix(text: str, radix: int, *, signed: bool) -> int | None:
    """Rust's ``from_str_radix``: an optional sign (``-`` only for signed types), then at least
    one digit of ``radix``; ``None`` where it errs. Range is the caller's business."""
    sign, digits = (text[0], text[1:]) if text[:1] in ("+", "-") else ("", text)
    if sign == "-" and not signed:
        return None
    if not digits or any(char not in _RADIX_DIGITS[radix] for char in digits):
        return None
    # Past 39 decimal digits a value is beyond 128 bits, the widest any caller takes; it is
    # not converted (Python's `int` refuses a string of more than 4300 digits).
    value = 10**39 if radix == 10 and len(digits.lstrip("0")) > 39 else int(digits, radix)
    return -value if sign == "-" else value


def _digits_but_not_number(text: str) -> bool:
    """A leading zero before more digits makes a string (YAML 1.2): ``010``, ``-007``."""
    rest = text[1:] if text[:1] in ("+", "-") else text
    return len(rest) > 1 and rest[0] == "0" and all(char in "0123456789" for char in rest[1:])


def _unsigned_int(text: str) -> int | None:
    """serde_yaml's ``parse_unsigned_int`` (``src/de.rs``, 0.9.34), range aside."""
    unpositive = text.removeprefix("+")
    for prefix, radix in (("0x", 16), ("0o", 8), ("0b", 2)):
        if unpositive.startswith(prefix):
            rest = unpositive[2:]
            if rest[:1] in ("+", "-"):
                return None
            value = _from_str_radix(rest, radix, signed=False)
            if value is not None:
                return value
    if unpositive[:1] in ("+", "-") or _digits_but_not_number(text):
        return None
    return _from_str_radix(unpositive, 10, signed=False)


def _negative_int(text: str) -> int | None:
    """serde_yaml's ``parse_negative_int`` (``src/de.rs``, 0.9.34), range aside."""
    for prefix, radix in (("-0x", 16), ("-0o", 8), ("-0b", 2)):
        if text.startswith(prefix):
            value = _from_str_radix("-" + text[3:], radix, signed=True)
            if value is not None:
                return value
    if _digits_but_not_number(text):
        return None
    return _from_str_radix(text, 10, signed=True)


def _int(text: str) -> int | None:
    """serde_yaml's ``visit_int``: u64, then i64, then u128, then i128."""
    unsigned = _unsigned_int(text)
    if unsigned is not None and unsigned < _U128:
        return unsigned
    negative = _negative_int(text)
    if negative is not None and -_I128 <= negative < _I128:
        return negative
    return None


def _float(text: str) -> float | None:
    """serde_yaml's ``parse_f64``: ``.inf`` spellings, else a finite Rust ``f64``."""
    unpositive = text
    if text.startswith("+"):
        unpositive = text[1:]
        if unpositive[:1] in ("+", "-"):
            return None
    if unpositive in (".inf", ".Inf", ".INF"):
        return float("inf")
    if text in ("-.inf", "-.Inf", "-.INF"):
        return float("-inf")
    if text in (".nan", ".NaN", ".NAN"):
        return float("nan")
    if _RUST_INFINITE.fullmatch(unpositive) or not _FLOAT.fullmatch(unpositive):
        return None
    value = float(unpositive)
    return value if math.isfinite(value) else None


def scalar_value(text: str, plain: bool) -> Any:
    """A scalar as serde_yaml 0.9.34 reads it into a ``Value`` (``visit_untagged_scalar`` in
    ``src/de.rs``); quoted ones are strings. Null: empty, ``~``, ``null``; booleans
    ``true``/``false`` (three spellings each); integers in decimal, ``0x``, ``0o`` or ``0b``
    (signed, up to 128 bits), but a leading zero before digits makes a string (``010``);
    finite floats and the ``.inf``/``.nan`` spellings; anything else a string."""
    if not plain:
        return text
    if text in _NULL:
        return None
    if text in _BOOL:
        return _BOOL[text]
    number = _int(text)
    if number is not None:
        return number
    if not _digits_but_not_number(text):
        real = _float(text)
        if real is not None:
            return real
    return text


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "an integer" if isinstance(value, int) else "a number"


def _loader_class() -> Any:
    """PyYAML's ``SafeLoader``, composing only, that keeps each scalar's explicit tag (as
    ``explicit_tag``; PyYAML resolves an untagged scalar's tag in place, libyaml does not),
    takes an anchor defined again as serde_yaml does (its ``src/loader.rs`` maps the name to
    the newest definition; PyYAML refuses the file), and records for the builder which
    children are aliases and how many parse events the document has."""
    global _LOADER  # noqa: PLW0603 - built once, on first use
    if _LOADER is None:
        import yaml  # noqa: PLC0415 - only config files pay for it

        class _TagKeepingLoader(yaml.SafeLoader):
            def __init__(self, stream: str) -> None:
                super().__init__(stream)
                self.event_count = 0
                self.alias_children: dict[int, list[Any]] = {}
                self.depth = 0
                self.cut: Any = None  # where reading stopped, past serde_yaml's depth

            def process_directives(self) -> Any:
                # libyaml (unsafe-libyaml 0.2.11 src/parser.rs) takes `%YAML 1.1` and `1.2`
                # only; PyYAML any 1.x, with a warning.
                untyped: Any = self
                parent: Any = yaml.SafeLoader  # PyYAML's stubs leave the parser untyped
                seen: list[Any] = []
                take = untyped.get_token

                def recording() -> Any:
                    seen.append(take())
                    return seen[-1]

                untyped.get_token = recording
                try:
                    result = parent.process_directives(untyped)
                finally:
                    del untyped.get_token
                for token in seen:
                    directive = isinstance(token, yaml.DirectiveToken) and token.name == "YAML"
                    if directive and tuple(token.value) not in ((1, 1), (1, 2)):
                        raise yaml.parser.ParserError(
                            None, None, "found incompatible YAML document", token.start_mark
                        )
                return result

            scan_to_next_token = _scan_to_next_token

            scan_plain = _scan_plain

            scan_tag = _scan_tag

            scan_directive_name = _scan_directive_name

            scan_plain_spaces = _scan_plain_spaces

            scan_flow_scalar_non_spaces = _scan_flow_scalar_non_spaces

            scan_block_scalar_indicators = _scan_block_scalar_indicators

            scan_block_scalar_ignored_line = _scan_block_scalar_ignored_line

            scan_block_scalar_indentation = _scan_block_scalar_indentation

            scan_block_scalar_breaks = _scan_block_scalar_breaks

            def compose_node(self, parent: Any, index: Any) -> Any:
                untyped: Any = self  # PyYAML's stubs leave the composer untyped
                if self.cut is not None:  # a mapping's value after its key was cut
                    return _empty_node(None, self.cut)
                event = untyped.peek_event()
                alias = isinstance(event, yaml.AliasEvent)
                if parent is not None:
                    self.alias_children.setdefault(id(parent), []).append(event if alias else None)
                scalar = alias or isinstance(event, yaml.ScalarEvent)
                self.event_count += 1 if scalar else 2  # a collection's start and end
                if not alias and event.anchor is not None:
                    # Defined again: later aliases name this node, earlier ones keep theirs.
                    untyped.anchors.pop(event.anchor, None)
                if not scalar and self.depth > MAX_DEPTH:
                    # Deeper than serde_yaml goes (the builder reports the level it stops
                    # at, above this one): stop reading here, as serde_yaml stops at that
                    # error before it looks at what follows (a parse error later in the
                    # file, another document). Reading on would exhaust Python's stack, and
                    # scanning millions of levels takes minutes.
                    self.cut = untyped.get_event().start_mark
                    return _empty_node(event, self.cut)
                self.depth += 1
                try:
                    return super().compose_node(parent, index)
                finally:
                    self.depth -= 1

            # Once cut, every collection and the document end where the reading stopped.
            def check_event(self, *choices: Any) -> bool:
                parser: Any = yaml.SafeLoader  # PyYAML's stubs leave the parser untyped
                return self.cut is not None or bool(parser.check_event(self, *choices))

            def peek_event(self) -> Any:
                parser: Any = yaml.SafeLoader
                return _cut_event(self.cut) if self.cut is not None else parser.peek_event(self)

            def get_event(self) -> Any:
                parser: Any = yaml.SafeLoader
                return _cut_event(self.cut) if self.cut is not None else parser.get_event(self)

            def compose_scalar_node(self, anchor: Any) -> Any:
                untyped: Any = self  # PyYAML's stubs leave `peek_event` untyped
                explicit = untyped.peek_event().tag
                node: Any = super().compose_scalar_node(anchor)
                node.explicit_tag = explicit
                return node

        _LOADER = _TagKeepingLoader
    return _LOADER


_LOADER: Any = None


def _empty_node(start: Any, mark: Any) -> Any:
    """The collection ``start`` opens, left empty (it is never looked into), or, with no
    ``start``, an empty scalar."""
    import yaml  # noqa: PLC0415 - loaded with the loader

    if start is None:
        node: Any = yaml.ScalarNode(f"{_CORE}null", "", mark, mark)
        node.explicit_tag = None
        return node
    kind = yaml.SequenceNode if isinstance(start, yaml.SequenceStartEvent) else yaml.MappingNode
    return kind(start.tag or "", [], mark, mark)


def _cut_event(mark: Any) -> Any:
    """What the composer reads once reading stopped: the end of whatever it is in."""
    import yaml  # noqa: PLC0415 - loaded with the loader

    return yaml.events.Event(mark, mark)


def _scan_to_next_token(untyped: Any) -> None:
    """unsafe-libyaml 0.2.11 ``src/scanner.rs`` ``yaml_parser_scan_to_next_token``: a byte-order
    mark at the start of any line is skipped, and a tab separates tokens in flow context and
    where no simple key may start (after a quoted scalar, or `key:`); PyYAML skips spaces
    only. The skipped mark is a column (libyaml's `SKIP`; PyYAML's reader counts none), even
    the file's first: serde_yaml 0.9.34 (``src/libyaml/parser.rs`` ``Parser::new``) sets the
    encoding to UTF-8, so libyaml's reader never looks for a byte-order mark
    (``src/reader.rs``: ``yaml_parser_determine_encoding`` only for ``YAML_ANY_ENCODING``).
    A file that starts with one has its first line one column in: a second key at column 0
    ends the document there."""
    while True:
        if untyped.column == 0 and untyped.peek() == "\ufeff":
            untyped.forward()
            untyped.column = 1
        while untyped.peek() == " " or (
            untyped.peek() == "\t" and (untyped.flow_level or not untyped.allow_simple_key)
        ):
            untyped.forward()
        if untyped.peek() == "#":
            while untyped.peek() not in _BREAKZ:
                untyped.forward()
        if not untyped.scan_line_break():
            return
        if not untyped.flow_level:
            untyped.allow_simple_key = True


_URI_CHARS = frozenset(
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-;/?:@&=+$.%!~*'()"
)


def _scan_tag_uri(untyped: Any, verbatim: bool, head: str, start_mark: Any) -> str:
    """``yaml_parser_scan_tag_uri``: ``,``, ``[`` and ``]`` belong to a verbatim tag
    (``!<...>``) only, not to a shorthand's suffix (PyYAML takes them everywhere). ``head`` is
    a handle read as the suffix's start (``!foo``), its ``!`` left out."""
    import yaml  # noqa: PLC0415 - loaded with the loader

    chunks = [head[1:]]
    while (char := untyped.peek()) in _URI_CHARS or (verbatim and char in ",[]"):
        if char == "%":
            chunks.append(untyped.scan_uri_escapes("tag", start_mark))
        else:
            chunks.append(char)
            untyped.forward()
    if not head and len(chunks) == 1:
        raise yaml.scanner.ScannerError(
            "while parsing a tag", start_mark, "did not find expected tag URI", untyped.get_mark()
        )
    return "".join(chunks)


def _scan_tag(untyped: Any) -> Any:
    """``yaml_parser_scan_tag`` (unsafe-libyaml 0.2.11 ``src/scanner.rs``): a verbatim tag, or
    a handle (``!``, ``!!``, ``!name!``) and a suffix, or ``!`` alone; then a blank or a line
    end, or, in flow context, ``,``. PyYAML ends a tag at a space only."""
    import yaml  # noqa: PLC0415 - loaded with the loader

    start_mark = untyped.get_mark()
    handle: str | None
    if untyped.peek(1) == "<":
        untyped.forward(2)
        handle, suffix = None, _scan_tag_uri(untyped, True, "", start_mark)
        if untyped.peek() != ">":
            raise yaml.scanner.ScannerError(
                "while scanning a tag",
                start_mark,
                "did not find the expected '>'",
                untyped.get_mark(),
            )
        untyped.forward()
    else:
        length = 1  # yaml_parser_scan_tag_handle: `!`, then [0-9A-Za-z_-]*, then `!` or not
        while untyped.peek(length).isascii() and (
            untyped.peek(length).isalnum() or untyped.peek(length) in "_-"
        ):
            length += 1
        if untyped.peek(length) == "!":
            length += 1
        handle = untyped.prefix(length)
        untyped.forward(length)
        if len(handle) > 1 and handle.endswith("!"):
            suffix = _scan_tag_uri(untyped, False, "", start_mark)
        else:
            handle, suffix = "!", _scan_tag_uri(untyped, False, handle, start_mark)
            if not suffix:  # `!` alone: the non-specific tag
                handle, suffix = None, "!"
    char = untyped.peek()
    if char not in _BLANKZ and not (untyped.flow_level and char == ","):
        raise yaml.scanner.ScannerError(
            "while scanning a tag",
            start_mark,
            "did not find expected whitespace or line break",
            untyped.get_mark(),
        )
    return yaml.tokens.TagToken((handle, suffix), start_mark, untyped.get_mark())


def _scan_directive_name(untyped: Any, start_mark: Any) -> str:
    """``yaml_parser_scan_directive``: a directive other than ``%YAML`` and ``%TAG`` is an
    error (PyYAML skips it)."""
    import yaml  # noqa: PLC0415 - loaded with the loader

    parent: Any = yaml.SafeLoader  # PyYAML's stubs leave the scanner untyped
    name: str = parent.scan_directive_name(untyped, start_mark)
    if name not in ("YAML", "TAG"):
        raise yaml.scanner.ScannerError(
            "while scanning a directive",
            start_mark,
            "found unknown directive name",
            untyped.get_mark(),
        )
    return name


def _scan_plain(untyped: Any) -> Any:
    """``yaml_parser_scan_plain_scalar``: in flow context only ``,[]{}`` and ``: `` end a plain
    scalar (``[x?]`` is "x?"), and a ``:`` before one of ``,?[]{}`` is an error there."""
    import yaml  # noqa: PLC0415 - loaded with the loader

    chunks: list[str] = []
    start_mark = untyped.get_mark()
    end_mark = start_mark
    indent = untyped.indent + 1
    spaces: list[str] | None = []
    while untyped.peek() != "#":
        length = 0
        while (char := untyped.peek(length)) not in _BLANKZ:
            after = untyped.peek(length + 1)
            if untyped.flow_level and char == ":" and after in ",?[]{}":
                raise yaml.scanner.ScannerError(
                    "while scanning a plain scalar",
                    start_mark,
                    "found unexpected ':'",
                    untyped.get_mark(),
                )
            if (char == ":" and after in _BLANKZ) or (untyped.flow_level and char in ",[]{}"):
                break
            length += 1
        if length == 0:
            break
        untyped.allow_simple_key = False
        chunks.extend(spaces or [])
        chunks.append(untyped.prefix(length))
        untyped.forward(length)
        end_mark = untyped.get_mark()
        spaces = untyped.scan_plain_spaces(indent, start_mark)
        if (
            not spaces
            or untyped.peek() == "#"
            or (not untyped.flow_level and untyped.column < indent)
        ):
            break
    return yaml.tokens.ScalarToken("".join(chunks), True, start_mark, end_mark)


def _scan_plain_spaces(untyped: Any, indent: int, start_mark: Any) -> Any:
    """The blanks inside and after a plain scalar, as ``yaml_parser_scan_plain_scalar`` takes
    them: spaces and tabs alike (PyYAML: spaces only); a tab left of the indentation on a
    continuation line is an error; a document marker at the start of a line ends it."""
    import yaml  # noqa: PLC0415 - loaded with the loader

    length = 0
    while untyped.peek(length) in " \t":
        length += 1
    whitespaces = untyped.prefix(length)
    untyped.forward(length)
    if untyped.peek() not in _BREAKS:
        return [whitespaces] if whitespaces else []
    line_break = untyped.scan_line_break()
    untyped.allow_simple_key = True
    breaks: list[str] = []
    while True:
        at_start = untyped.column == 0
        if at_start and untyped.prefix(3) in ("---", "...") and untyped.peek(3) in _BLANKZ:
            return None
        char = untyped.peek()
        if char == "\t" and untyped.column < indent:
            raise yaml.scanner.ScannerError(
                "while scanning a plain scalar",
                start_mark,
                "found a tab character that violates indentation",
                untyped.get_mark(),
            )
        if char in " \t":
            untyped.forward()
        elif char in _BREAKS:
            breaks.append(untyped.scan_line_break())
        else:
            break
    chunks = [line_break] if line_break != "\n" else [] if breaks else [" "]
    return chunks + breaks


def _scan_flow_scalar_non_spaces(untyped: Any, double: bool, start_mark: Any) -> Any:
    """libyaml (unsafe-libyaml 0.2.11 ``src/scanner.rs``) refuses an escape naming a surrogate
    or a code point past U+10FFFF; PyYAML keeps the first and fails on the second in ``chr``."""
    import yaml  # noqa: PLC0415 - loaded with the loader

    parent: Any = yaml.SafeLoader
    try:
        chunks = parent.scan_flow_scalar_non_spaces(untyped, double, start_mark)
    except ValueError:
        chunks = None
    if chunks is None or any(_SURROGATE.search(chunk) for chunk in chunks):
        raise yaml.scanner.ScannerError(
            None, None, "found invalid Unicode character escape code", start_mark
        )
    return chunks


def _scan_block_scalar_indicators(untyped: Any, start_mark: Any) -> tuple[bool | None, int | None]:
    """A block scalar's header as ``yaml_parser_scan_block_scalar`` reads it: a chomping and an
    indentation indicator in either order, then blanks (tabs too) or a comment right away
    (``|#`` is a comment; PyYAML wants a space)."""
    import yaml  # noqa: PLC0415 - loaded with the loader

    chomping: bool | None = None
    increment: int | None = None
    for _ in range(2):
        char = untyped.peek()
        if char in "+-" and chomping is None:
            chomping = char == "+"
        elif char in "0123456789" and increment is None:
            if char == "0":
                raise yaml.scanner.ScannerError(
                    "while scanning a block scalar",
                    start_mark,
                    "found an indentation indicator equal to 0",
                    untyped.get_mark(),
                )
            increment = int(char)
        else:
            break
        untyped.forward()
    if untyped.peek() not in _BLANKZ and untyped.peek() != "#":
        raise yaml.scanner.ScannerError(
            "while scanning a block scalar",
            start_mark,
            "did not find expected comment or line break",
            untyped.get_mark(),
        )
    return chomping, increment


def _scan_block_scalar_ignored_line(untyped: Any, start_mark: Any) -> None:
    """The rest of a block scalar's header line: blanks (tabs too), a comment, a break."""
    import yaml  # noqa: PLC0415 - loaded with the loader

    while untyped.peek() in " \t":
        untyped.forward()
    if untyped.peek() == "#":
        while untyped.peek() not in _BREAKZ:
            untyped.forward()
    if untyped.peek() not in _BREAKZ:
        raise yaml.scanner.ScannerError(
            "while scanning a block scalar",
            start_mark,
            "did not find expected comment or line break",
            untyped.get_mark(),
        )
    untyped.scan_line_break()


def _indentation_tab(untyped: Any, indent: int | None) -> None:
    """``yaml_parser_scan_block_scalar_breaks``: a tab where an indentation space is expected
    (before the indentation is known, or left of it) refuses the file."""
    import yaml  # noqa: PLC0415 - loaded with the loader

    if untyped.peek() == "\t" and (indent is None or untyped.column < indent):
        raise yaml.scanner.ScannerError(
            "while scanning a block scalar",
            None,
            "found a tab character where an indentation space is expected",
            untyped.get_mark(),
        )


def _scan_block_scalar_indentation(untyped: Any) -> Any:
    """PyYAML's scan of a block scalar's leading lines, with libyaml's tab check."""
    import yaml  # noqa: PLC0415 - loaded with the loader

    parent: Any = yaml.SafeLoader
    found = parent.scan_block_scalar_indentation(untyped)
    _indentation_tab(untyped, None)
    return found


def _scan_block_scalar_breaks(untyped: Any, indent: int) -> Any:
    """PyYAML's scan of the line breaks inside a block scalar, with libyaml's tab check."""
    chunks: list[str] = []
    end_mark = untyped.get_mark()
    while untyped.column < indent and untyped.peek() == " ":
        untyped.forward()
    _indentation_tab(untyped, indent)
    while untyped.peek() in _BREAKS:
        chunks.append(untyped.scan_line_break())
        end_mark = untyped.get_mark()
        while untyped.column < indent and untyped.peek() == " ":
            untyped.forward()
        _indentation_tab(untyped, indent)
    return chunks, end_mark


def _explicit_tag(node: Any) -> str | None:
    tag = getattr(node, "explicit_tag", None)
    return tag if isinstance(tag, str) else None


def _plain(node: Any) -> bool:
    """Whether serde_yaml reads ``node`` by the untagged scalar grammar: a plain scalar
    without a tag, or with a local one (``!foo 5``: a ``Value::Tagged`` that
    ``Value::untag`` unwraps wherever a struct field is read)."""
    tag = _explicit_tag(node)
    return node.style is None and (tag is None or tag.startswith("!"))


_TAGGED_KINDS = {"bool": "a boolean", "int": "an integer", "float": "a float", "null": "null"}


def _core_tag(node: Any) -> str | None:
    """``bool``, ``int``, ``float`` or ``null`` for a scalar tagged ``!!bool`` etc."""
    tag = _explicit_tag(node)
    if tag is None or not tag.startswith(_CORE):
        return None
    kind = tag.removeprefix(_CORE)
    return kind if kind in _TAGGED_KINDS else None


def _tagged_value(kind: str, text: str) -> tuple[bool, Any]:
    """serde_yaml's ``visit_scalar`` for a core tag, whatever the scalar's style: the text
    read as that type, or ``(False, None)`` where serde_yaml refuses it."""
    if kind == "bool":
        return (True, _BOOL[text]) if text in _BOOL else (False, None)
    if kind == "int":
        number = _int(text)
        return (number is not None, number)
    if kind == "float":
        real = _float(text)
        return (real is not None, real)
    return (True, None) if text in _NULL - {""} else (False, None)


def _refused_by_tag(node: Any) -> bool:
    kind = _core_tag(node)
    return kind is not None and not _tagged_value(kind, str(node.value))[0]


class _Identities:
    """What a mapping key is as a serde_yaml 0.9.34 ``Value``, for telling two keys apart as
    its ``Mapping`` does (``src/mapping.rs``: a key equal to an earlier one is a
    ``DuplicateKeyError``): ``1`` and ``0x1`` are the same number, ``~`` and ``null`` both
    null, ``0.0`` and ``-0.0`` equal, every NaN one (``src/number.rs`` ``PartialEq for N``),
    a local tag part of the value (``!a 1`` is no ``1``; ``Tag`` compares without its ``!``),
    a mapping equal to another with the same entries in any order (``IndexMap``); while ``1``
    and ``"1"`` differ (a number and a string).

    A collection's identity is a number given to each distinct shape, computed once per node:
    aliases make a key a graph that would take exponential time to walk as a tree."""

    def __init__(self) -> None:
        self.by_node: dict[int, Hashable] = {}
        self.shapes: dict[Hashable, int] = {}

    def of(self, node: Any) -> Hashable:
        import yaml  # noqa: PLC0415 - only config files pay for it

        found = self.by_node.get(id(node))
        if found is not None:
            return found
        if isinstance(node, yaml.SequenceNode):
            shape: Hashable = ("seq", tuple(self.of(item) for item in node.value))
        elif isinstance(node, yaml.MappingNode):
            shape = ("map", frozenset((self.of(key), self.of(value)) for key, value in node.value))
        else:
            shape = None
        if shape is not None:
            found = self.shapes.setdefault(shape, len(self.shapes))
        else:
            text = str(node.value)
            kind = _core_tag(node)
            value = (
                scalar_value(text, _plain(node)) if kind is None else _tagged_value(kind, text)[1]
            )
            if isinstance(value, float):
                value = "nan" if math.isnan(value) else value + 0.0  # -0.0 + 0.0 is 0.0
            found = (type(value).__name__, value)
            tag = _explicit_tag(node)
            if tag is not None and tag.startswith("!"):
                found = ("tagged", tag[1:] or tag, found)
        self.by_node[id(node)] = found
        return found


class _Builder:
    def __init__(
        self,
        document: YamlDocument,
        aliases: dict[int, list[Any]] | None = None,
        events: int = 0,
    ) -> None:
        self.document = document
        self.locator = _Locator(document.text)
        self.identities = _Identities()
        self.replayed: dict[int, int] = {}
        self.count = 0
        self.stopped = False
        self.aliases = aliases or {}
        """Per collection node (by ``id``), the alias event of each child written as an alias
        (``None`` for the others; keys and values in turn for a mapping)."""
        self.jumps = 0
        self.budget = events * REPETITIONS_PER_EVENT
        self.most = MAX_NODES + events
        self.outermost: Any = None
        """The alias written in the file whose value is being built, if any: where a problem
        found while repeating it is reported."""

    def follow(self, path: KeyPath, alias: Any, count: int = 1) -> bool:
        """Count one alias followed (``alias``: its event, or ``None`` for a child written out),
        or ``count`` of them met inside ``alias`` (a mapping key), as serde_yaml's ``jump``
        does; ``False`` (and a problem) once the file has used up its budget."""
        if alias is None:
            return True
        self.jumps += count
        if self.jumps <= self.budget:
            return True
        if not self.stopped:
            self.stopped = True
            self.document.problems.append(
                YamlProblem(
                    f"aliases are followed more than {REPETITIONS_PER_EVENT} times per value "
                    "written (the daemon's YAML reader stops there: repetition limit exceeded)",
                    _span(self.outermost or alias, self.locator),
                    path,
                    "depth",
                )
            )
        return False

    def scalar(self, node: Any, path: KeyPath) -> Any:
        """A scalar node as serde_yaml 0.9.34 reads it into a ``Value`` (``src/de.rs``
        ``visit_scalar``): ``!!bool``/``!!int``/``!!float``/``!!null`` read the text as that
        type whatever its quoting (and refuse the file when it is not one: ``!!bool yes``);
        any other ``!!`` tag (``!!str 5``) makes a string; untagged or locally tagged
        (``!foo``) scalars follow the untagged grammar when plain, else are strings."""
        text = str(node.value)
        kind = _core_tag(node)
        if kind is None:
            value = scalar_value(text, _plain(node))
        else:
            accepted, value = _tagged_value(kind, text)
            if not accepted:
                self.document.problems.append(
                    YamlProblem(
                        f"`{text}` is tagged `!!{kind}` but is not {_TAGGED_KINDS[kind]} to the "
                        "daemon's YAML reader: it refuses the file",
                        _span(node, self.locator),
                        path,
                        # Read straight into a list or map, an empty plain one is empty first.
                        "empty-tag" if node.style is None and not text else "tag",
                    )
                )
                return text
        if isinstance(value, int) and not isinstance(value, bool) and not _I64_MIN <= value < _U64:
            # `visit_int` hands it over as a u128/i128, which serde_yaml's `Value` has no
            # visitor for (`src/value/de.rs`): "invalid type: integer `...` as u128".
            self.document.problems.append(
                YamlProblem(
                    f"the integer `{text}` does not fit in 64 bits: the daemon's YAML reader "
                    "takes it as a 128-bit integer, which a YAML value cannot hold, and refuses "
                    "the file",
                    _span(node, self.locator),
                    path,
                    "wide-int",
                )
            )
        return value

    def build(self, node: Any, path: KeyPath, depth: int = 0) -> Any:
        import yaml  # noqa: PLC0415 - only config files pay for it

        self.count += 1
        container = not isinstance(node, yaml.ScalarNode)
        if self.count > self.most or (container and depth >= MAX_DEPTH):
            if not self.stopped:
                self.stopped = True
                reason = (
                    f"aliases expand to more than {MAX_NODES:,} values beyond those written: "
                    "nexo-pkg stops reading the file there"
                    if self.count > self.most
                    else f"values are nested more than {MAX_DEPTH} levels deep (the daemon's "
                    "YAML reader stops there: recursion limit exceeded)"
                )
                where = _span(self.outermost or node, self.locator)
                self.document.problems.append(YamlProblem(reason, where, path, "depth"))
            return None
        self.document.values[path] = _span(node, self.locator)
        if isinstance(node, yaml.ScalarNode):
            if _plain(node):
                self.document.plain.add(path)
            if node.style is None and not node.value:
                # serde_yaml 0.9.34 src/de.rs `deserialize_map`/`deserialize_seq` test the
                # value and the style only: a tagged one (`!!null`, `!!str`) is empty too.
                self.document.empty.add(path)
            return self.scalar(node, path)
        flags = self.aliases.get(id(node), [])
        if isinstance(node, yaml.SequenceNode):
            items: list[Any] = []
            for index, item in enumerate(node.value):
                alias = flags[index] if index < len(flags) else None
                followed = self.follow((*path, index), alias)
                items.append(self.child(item, (*path, index), depth, alias) if followed else None)
            return items
        result: dict[str, Any] = {}
        written: dict[Hashable, str] = {}
        for position, (key_node, value_node) in enumerate(node.value):
            key_alias, value_alias = [*flags[2 * position : 2 * position + 2], None, None][:2]
            if not self.follow(path, key_alias):
                return result
            if isinstance(key_node, yaml.ScalarNode):
                key = str(key_node.value)
                before = len(self.document.problems)
                resolved = self.scalar(key_node, (*path, key))
                self.document.problems[before:] = [
                    dataclasses.replace(problem, at_key=True)
                    for problem in self.document.problems[before:]
                ]
                if not isinstance(resolved, str) and not _refused_by_tag(key_node):
                    self.document.problems.append(
                        YamlProblem(
                            f"the key `{key}` is {_kind(resolved)}, not a string: the daemon "
                            "reads only string keys here and refuses the file ("
                            + (
                                f"drop its `!!{_core_tag(key_node)}` tag)"
                                if _core_tag(key_node)
                                else f'quote it: `"{key}":`)'
                            ),
                            _span(key_node, self.locator),
                            (*path, key),
                            "key-type",
                        )
                    )
            else:
                # A key is read into a `Value` too, following every alias inside it.
                if not self.follow(path, key_node, self.replays(key_node)):
                    return result
                key = f"<{type(key_node).__name__.removesuffix('Node').lower()} key>"
                self.document.problems.append(
                    YamlProblem(
                        "a mapping key must be a string: the daemon refuses the file",
                        _span(key_node, self.locator),
                        (*path, key),
                        "key-type",
                    )
                )
            child = (*path, key)
            identity = self.identities.of(key_node)
            same = written.get(identity)
            # Every key is a value of the mapping, repeated or not: `'x'` after `!x x` and `x`
            # repeats `x`.
            written.setdefault(identity, key)
            if key in result or same is not None:
                # "duplicate-value": `0x1` after `1`, the same YAML value written otherwise;
                # "duplicate-text": `"1"` after `1`, the same text but another value. Which of
                # them the daemon refuses depends on how it reads the keys there.
                kind: ProblemKind = "duplicate"
                message = f"key `{key}` is defined more than once"
                if same is None:
                    kind = "duplicate-text"
                elif key not in result:
                    kind = "duplicate-value"
                    message += f": it is the same YAML value as `{same}`"
                self.document.problems.append(
                    YamlProblem(message, _span(key_node, self.locator), child, kind)
                )
                if key in result:
                    # Read aside: serde's map visitor, where a map read straight from the text
                    # keeps the last definition, reads this value as well (a `Value` stops at
                    # the key), so its problems ride on the duplicate's.
                    within = self.aside(value_node, child, depth, value_alias)
                    duplicate = self.document.problems.pop()
                    self.document.problems.append(dataclasses.replace(duplicate, within=within))
                    continue
            if (_explicit_tag(key_node) or "").startswith("!"):
                self.document.tagged_keys.add(child)
            self.document.keys[child] = _span(key_node, self.locator)
            if not self.follow(child, value_alias):
                return result
            result[key] = self.child(value_node, child, depth, value_alias)
        return result

    def aside(self, node: Any, path: KeyPath, depth: int, alias: Any) -> tuple[YamlProblem, ...]:
        """The problems of reading ``node`` (a value written after a duplicate key) without
        recording its values, spans or problems in the document."""
        kept = self.document
        self.document = YamlDocument(kept.text, None)
        try:
            if self.follow(path, alias):
                self.child(node, path, depth, alias)
            return tuple(self.document.problems)
        finally:
            self.document = kept

    def replays(self, node: Any) -> int:
        """How many aliases serde_yaml follows to read ``node``: each child written as an
        alias, and what reading each child follows in turn; counted once per node."""
        import yaml  # noqa: PLC0415 - only config files pay for it

        if isinstance(node, yaml.ScalarNode):
            return 0
        found = self.replayed.get(id(node))
        if found is None:
            children = (
                node.value
                if isinstance(node, yaml.SequenceNode)
                else [part for pair in node.value for part in pair]
            )
            flags = self.aliases.get(id(node), [])
            found = sum(
                (index < len(flags) and flags[index] is not None) + self.replays(child)
                for index, child in enumerate(children)
            )
            self.replayed[id(node)] = found
        return found

    def child(self, node: Any, path: KeyPath, depth: int, alias: Any) -> Any:
        """:meth:`build` of a child, remembering the outermost alias it was reached through."""
        if alias is None or self.outermost is not None:
            return self.build(node, path, depth + 1)
        self.outermost = alias
        try:
            return self.build(node, path, depth + 1)
        finally:
            self.outermost = None


def parse_yaml(text: str) -> YamlDocument:
    """Parse ``text`` (one YAML document). Never raises."""
    import yaml  # noqa: PLC0415 - only config files pay for it

    document = YamlDocument(text, None)
    loader = None
    try:
        loader = _loader_class()(text)
        node = loader.get_single_node()
    except yaml.reader.ReaderError as error:
        # A character YAML does not allow (a control character), at its position.
        here = _Locator(text).position(error.position)
        reason = f"the character U+{error.character:04X} is not allowed in YAML"
        document.problems.append(YamlProblem(f"YAML syntax error: {reason}", Span(here, here)))
        return document
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        position = _Locator(text).position(mark.index) if mark else Position(1, 1)
        reason = error.problem or error.context or "invalid YAML"
        if reason == "but found another document":
            # PyYAML's half sentence (its context says "expected a single document"); the
            # daemon's reader: "deserializing from YAML containing more than one document
            # is not supported" (serde_yaml 0.9.34 src/error.rs `MoreThanOneDocument`).
            reason = "the file holds more than one YAML document (`---`); the daemon reads one"
        if text.startswith("\ufeff") and not text.startswith("\ufeff", 1):
            without = parse_yaml(text[1:])
            if not any(problem.kind == "syntax" for problem in without.problems):
                reason += (
                    " (the byte-order mark that starts the file counts as a column to the "
                    "daemon's YAML reader, so the first line sits one column right of the "
                    "next ones: remove the mark)"
                )
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
            builder = _Builder(document, loader.alias_children, loader.event_count)
            document.data = builder.build(node, ())
        except RecursionError:
            start = Position(1, 1)
            document.problems.append(
                YamlProblem("values are nested too deeply", Span(start, start))
            )
            document.data = None
    return document
