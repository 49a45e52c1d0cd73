"""TOML positions: the strict key path -> span map (every header, key, value, array item, inline
and dotted key) and the tolerant scan of half-typed text."""

from __future__ import annotations

import datetime
import tomllib

import pytest
import tomlkit
from hypothesis import given
from hypothesis import strategies as st
from support.toml_texts import HALF_TYPED

from nexo_pkg.core.diagnostics import Position, Span
from nexo_pkg.core.toml_spans import MAX_NESTING, SpanMap, scan_spans, scan_tolerant
from nexo_pkg.core.toml_text import KeyPath, format_key_path, long_dotted_key, nested_value_offset

DOCUMENT = """\
# comment
[plugin]
id = "weather" # trailing comment
"quoted.key" = 'literal'
a.b . c = [1, [2, 3], { x = "y", z.w = [] }, ]
text = \"\"\"multi
line \\\"\"\" \"\"\"
when = 1979-05-27 07:32:00Z
[[plugin.channels.register]]
kind = "first"
[[plugin.channels.register]]
kind = "second"
[plugin.channels.register.extra]
q = 1
[plugin.entrypoint]
args = [
  "--stdio", # comment
  "-v",
]
"""


def text_of(spans: SpanMap, span: Span) -> str:
    lines = spans.text.split("\n")
    if span.start.line == span.end.line:
        return lines[span.start.line - 1][span.start.column - 1 : span.end.column - 1]
    head = lines[span.start.line - 1][span.start.column - 1 :]
    middle = lines[span.start.line : span.end.line - 1]
    tail = lines[span.end.line - 1][: span.end.column - 1]
    return "\n".join([head, *middle, tail])


@pytest.fixture(scope="module")
def spans() -> SpanMap:
    span_map, duplicates = scan_spans(DOCUMENT)
    assert duplicates == []
    return span_map


@pytest.mark.parametrize(
    ("path", "key", "value"),
    [
        (("plugin",), "[plugin]", "[plugin]"),
        (("plugin", "id"), "id", '"weather"'),
        (("plugin", "quoted.key"), '"quoted.key"', "'literal'"),
        (("plugin", "a", "b", "c"), "a.b . c", '[1, [2, 3], { x = "y", z.w = [] }, ]'),
        (("plugin", "a", "b", "c", 0), "1", "1"),
        (("plugin", "a", "b", "c", 1), "[2, 3]", "[2, 3]"),
        (("plugin", "a", "b", "c", 1, 1), "3", "3"),
        (("plugin", "a", "b", "c", 2, "x"), "x", '"y"'),
        (("plugin", "a", "b", "c", 2, "z", "w"), "z.w", "[]"),
        (("plugin", "text"), "text", '"""multi\nline \\""" """'),
        (("plugin", "when"), "when", "1979-05-27 07:32:00Z"),
        (("plugin", "channels", "register", 0), "[[plugin.channels.register]]", None),
        (("plugin", "channels", "register", 1, "kind"), "kind", '"second"'),
        (("plugin", "channels", "register", 1, "extra"), "[plugin.channels.register.extra]", None),
        (("plugin", "channels", "register", 1, "extra", "q"), "q", "1"),
        (("plugin", "entrypoint", "args", 1), '"-v"', '"-v"'),
    ],
)
def test_key_and_value_spans(spans: SpanMap, path: KeyPath, key: str, value: str | None) -> None:
    assert text_of(spans, spans.key_span(path)) == key
    if value is not None:
        assert text_of(spans, spans.value_span(path)) == value


def test_positions_are_one_based_code_points() -> None:
    spans, _ = scan_spans('[plugin]\nname = "Zoë 日本"\nid = 1\n')
    assert spans.key_span(("plugin", "id")) == Span(Position(3, 1), Position(3, 3))
    assert spans.value_span(("plugin", "name")) == Span(Position(2, 8), Position(2, 16))


def test_crlf_line_endings() -> None:
    spans, _ = scan_spans('[plugin]\r\nid = "x"\r\nname = "y"\r\n')
    assert spans.value_span(("plugin", "name")) == Span(Position(3, 8), Position(3, 11))


def test_nearest_falls_back_to_the_table_header_then_the_file_start(spans: SpanMap) -> None:
    assert text_of(spans, spans.nearest(("plugin", "missing"))) == "[plugin]"
    assert spans.nearest(("nothing", "here")).start == Position(1, 1)
    assert spans.locate(("plugin", "entrypoint", "env"), "value") == spans.key_span(
        ("plugin", "entrypoint")
    )


def test_missing_path_raises_key_error(spans: SpanMap) -> None:
    with pytest.raises(KeyError):
        spans.key_span(("plugin", "nope"))


@pytest.mark.parametrize(
    ("path", "rendered"),
    [
        (("plugin", "extends", "tools", 1), "plugin.extends.tools[1]"),
        (("plugin", "ui", "fields", "a.b", "label"), 'plugin.ui.fields."a.b".label'),
        (("plugin", "channels", "register", 0, "kind"), "plugin.channels.register[0].kind"),
        ((), ""),
        (("with space",), '"with space"'),
    ],
)
def test_format_key_path(path: KeyPath, rendered: str) -> None:
    assert format_key_path(path) == rendered


def test_duplicates_are_found_at_the_second_definition() -> None:
    _, duplicates = scan_spans("[t]\nb = 1\nb = 2\n[t]\n")
    assert [(d.path, d.is_table) for d in duplicates] == [(("t", "b"), False), (("t",), True)]
    assert duplicates[0].start == len("[t]\nb = 1\n")


_NAMES = st.sampled_from(["a", "b", "c"])
_PATHS = st.lists(_NAMES, min_size=1, max_size=3).map(".".join)
_STATEMENTS = st.one_of(
    _PATHS.map(lambda path: f"[{path}]"),
    _PATHS.map(lambda path: f"[[{path}]]"),
    _PATHS.map(lambda path: f"{path} = 1"),
    _PATHS.map(lambda path: f"{path} = {{ c = 1 }}"),
    _PATHS.map(lambda path: f"{path} = []"),
)
_REDEFINITION = ("Cannot overwrite", "Cannot declare", "Cannot mutate", "Cannot redefine")


@given(st.lists(_STATEMENTS, min_size=1, max_size=6))
def test_duplicates_are_found_exactly_when_the_parser_refuses_a_redefinition(
    statements: list[str],
) -> None:
    # Headers, dotted keys, inline tables and arrays of tables over three names: the scanner
    # names a second definition whenever TOML 1.0 (tomllib) refuses one, and never otherwise.
    text = "\n".join(statements) + "\n"
    _, duplicates = scan_spans(text)
    refusal = ""
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        refusal = str(error)
    if refusal:
        assert refusal.startswith(_REDEFINITION), refusal
        assert duplicates, (text, refusal)
    else:
        assert duplicates == [], text


def test_nesting_up_to_the_limit_is_mapped_without_recursion() -> None:
    depth = MAX_NESTING
    spans, _ = scan_spans("x = " + "[" * depth + "]" * depth + "\ny = 1\n")
    assert spans.value_span(("x",)).end == Position(1, 5 + 2 * depth)
    assert spans.has(("x",) + (0,) * (depth - 1))
    assert spans.has(("y",))


def test_deeper_nesting_stops_the_scan_without_error() -> None:
    depth = 10_000
    spans, _ = scan_spans("a = 1\nx = " + "[" * depth + "]" * depth + "\n")
    assert spans.has(("a",))
    assert not spans.has(("x",) + (0,) * MAX_NESTING)


def test_unscannable_text_keeps_what_was_found() -> None:
    spans, _ = scan_spans('[plugin]\nid = "x"\nname = \n')
    assert spans.has(("plugin", "id"))


# -- property: on any valid document, every value span holds exactly that value ----------

_KEYS = st.text(alphabet=st.sampled_from("abz_-09 .\"'é日"), min_size=1, max_size=6)
_SCALARS = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(
        alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
        max_size=8,
    ),
    st.datetimes(min_value=datetime.datetime(1, 1, 1)),
    st.dates(),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(_KEYS, children, max_size=3),
    ),
    max_leaves=12,
)
_DOCUMENTS = st.dictionaries(_KEYS, _VALUES, max_size=4)


def _leaves(value: object, path: KeyPath = ()) -> list[tuple[KeyPath, object]]:
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in _leaves(item, (*path, key))]
    if isinstance(value, list):
        return [leaf for index, item in enumerate(value) for leaf in _leaves(item, (*path, index))]
    return [(path, value)]


def _slice(spans: SpanMap, start_end: tuple[int, int]) -> str:
    return spans.text[start_end[0] : start_end[1]]


@given(_DOCUMENTS)
def test_value_spans_hold_the_values(document: dict[str, object]) -> None:
    text = tomlkit.dumps(document)
    parsed = tomllib.loads(text)
    spans, duplicates = scan_spans(text)
    assert duplicates == []
    for path, value in _leaves(parsed):
        if not path:
            continue
        raw = _slice(spans, spans.values[path])
        assert tomllib.loads(f"v = {raw}")["v"] == value, (path, raw)
        if isinstance(path[-1], str):
            key_text = _slice(spans, spans.keys[path])
            assert not key_text.startswith("[")  # scalars are never table headers
            nested: object = tomllib.loads(f"{key_text} = 1")
            while isinstance(nested, dict) and len(nested) == 1:
                [(innermost, nested)] = nested.items()
            assert innermost == path[-1], (path, key_text)


def test_unclosed_string_and_array_do_not_swallow_the_next_statement() -> None:
    document = scan_tolerant(HALF_TYPED)
    paths = [entry.path for entry in document.entries]
    assert ("plugin", "sandbox", "fs_read_paths") in paths
    assert [header.path for header in document.headers][-1] == ("plugin", "channels", "register")
    assert len(document.headers) == 4


def test_present_keys_are_per_array_of_tables_instance() -> None:
    document = scan_tolerant(HALF_TYPED)
    register = ("plugin", "channels", "register")
    second = len(document.headers) - 1
    assert document.present_keys(register, second) == {"adapter"}
    assert document.present_keys(register, second - 1) == {"kind", "entry"}
    assert document.present_keys(("plugin",), 1) >= {"id", "name", "sandbox", "channels"}


def test_quoted_keys_are_unquoted() -> None:
    text = '[plugin."a.b"]\n"x\\"y" = 1\n\'lit\' = 2\n'
    document = scan_tolerant(text)
    assert document.headers[0].path == ("plugin", "a.b")
    assert [entry.path[-1] for entry in document.entries] == ['x"y', "lit"]


def test_multiline_strings_hide_brackets_and_equals() -> None:
    text = '[plugin]\ndescription = """\n[not.a.header]\nkey = 1\n"""\nid = "x"\n'
    document = scan_tolerant(text)
    assert [header.path for header in document.headers] == [("plugin",)]
    assert [entry.path for entry in document.entries] == [
        ("plugin", "description"),
        ("plugin", "id"),
    ]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("x = 1\n a . b.c = 1\n", (7, 3)),
        ("[ a.b.c ]\n", (2, 3)),
        ("t = { x = 1, a.b.c = 2 }\n", (13, 3)),
        ("a.b = 'c.d.e'  # f.g.h\n\"a.b.c\" = 1\n", None),
        ('a = """\nb.c.d = 1\n"""\n', None),
    ],
)
def test_long_dotted_key_counts_key_parts_only(text: str, found: tuple[int, int] | None) -> None:
    assert long_dotted_key(text, 3) == found


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("a = [[1]]\n", 5),
        ("a = [{ b = [1] }]\n", 5),
        ("[t]\n[[u]]\na = [1]\n", None),
        ("a = '[[[' # [[[\nb = \"[[\"\n", None),
    ],
)
def test_nested_value_offset_counts_values_not_headers(text: str, found: int | None) -> None:
    assert nested_value_offset(text, 2) == found
