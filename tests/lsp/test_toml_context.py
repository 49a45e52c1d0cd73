"""The cursor -> TOML key path resolver, on complete and half-typed documents."""

from __future__ import annotations

import pytest

from nexo_pkg.lsp.toml_context import resolve, scan

DOCUMENT = """\
manifest_version = 2
[plugin]
id = "demo"  # comment
name = "D🙂mo"
sandbox.ne
[plugin.sandbox]
enabled = true
network = "
fs_read_paths = ["/a",
  "/b"
[[plugin.channels.register]]
kind = "x"
entry = { command = "x", env = { A = "1" } }
[[plugin.channels.register]]
adapter = "y"
"""


def _at(marker: str, shift: int = 0, occurrence: int = 0) -> int:
    """Offset just after the ``occurrence``-th ``marker``, moved by ``shift``."""
    offset = -1
    for _ in range(occurrence + 1):
        offset = DOCUMENT.index(marker, offset + 1)
    return offset + len(marker) + shift


@pytest.mark.parametrize(
    ("marker", "shift", "kind", "path"),
    [
        ("[plugin", -2, "header", ("plugin",)),
        ("[plugin.sand", 0, "header", ("plugin", "sandbox")),
        ("[plugin.sandbox", -9, "header", ("plugin",)),
        ("[[plugin.chan", 0, "header", ("plugin", "channels")),
        ("\nid", 0, "key", ("plugin", "id")),
        ('id = "de', 0, "value", ("plugin", "id")),
        ("sandbox.ne", 0, "key", ("plugin", "sandbox", "ne")),
        ("sandbox.ne", -3, "key", ("plugin", "sandbox")),
        ("enabled = ", 0, "value", ("plugin", "sandbox", "enabled")),
        ('network = "', 0, "value", ("plugin", "sandbox", "network")),
        ('"/b"', 0, "value", ("plugin", "sandbox", "fs_read_paths")),
        ("\nkind", 0, "key", ("plugin", "channels", "register", "kind")),
        ("{ command", 0, "key", ("plugin", "channels", "register", "entry", "command")),
        ('{ A = "', 0, "value", ("plugin", "channels", "register", "entry", "env", "A")),
        ('command = "x",', 0, "key", ("plugin", "channels", "register", "entry", "")),
        ("# comm", 0, "none", ()),
    ],
)
def test_resolve(marker: str, shift: int, kind: str, path: tuple[str, ...]) -> None:
    context = resolve(scan(DOCUMENT), _at(marker, shift))
    assert context.kind == kind
    assert context.path == path


def test_string_context_covers_the_string_content() -> None:
    context = resolve(scan(DOCUMENT), _at('id = "de'))
    assert context.string is not None
    assert DOCUMENT[context.replace[0] : context.replace[1]] == "demo"


def test_unclosed_string_and_array_do_not_swallow_the_next_statement() -> None:
    document = scan(DOCUMENT)
    paths = [entry.path for entry in document.entries]
    assert ("plugin", "sandbox", "fs_read_paths") in paths
    assert [header.path for header in document.headers][-1] == ("plugin", "channels", "register")
    assert len(document.headers) == 4


def test_blank_line_is_a_new_key_of_the_current_table() -> None:
    text = "[plugin.sandbox]\nenabled = true\n\n[plugin]\n"
    context = resolve(scan(text), text.index("\n\n") + 1)
    assert context.kind == "key"
    assert context.path == ("plugin", "sandbox", "")


def test_present_keys_are_per_array_of_tables_instance() -> None:
    document = scan(DOCUMENT)
    register = ("plugin", "channels", "register")
    second = len(document.headers) - 1
    assert document.present_keys(register, second) == {"adapter"}
    assert document.present_keys(register, second - 1) == {"kind", "entry"}
    assert document.present_keys(("plugin",), 1) >= {"id", "name", "sandbox", "channels"}


def test_quoted_keys_are_unquoted() -> None:
    text = '[plugin."a.b"]\n"x\\"y" = 1\n\'lit\' = 2\n'
    document = scan(text)
    assert document.headers[0].path == ("plugin", "a.b")
    assert [entry.path[-1] for entry in document.entries] == ['x"y', "lit"]


def test_multiline_strings_hide_brackets_and_equals() -> None:
    text = '[plugin]\ndescription = """\n[not.a.header]\nkey = 1\n"""\nid = "x"\n'
    document = scan(text)
    assert [header.path for header in document.headers] == [("plugin",)]
    assert [entry.path for entry in document.entries] == [
        ("plugin", "description"),
        ("plugin", "id"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[",
        "[[",
        "[a.",
        "a.",
        "=",
        '= "',
        "a = [",
        "a = {",
        'a = """',
        "a = { b = [",
        "\x00\ud7ff",
        "a = ]]]}}}",
    ],
)
def test_half_typed_documents_never_raise(text: str) -> None:
    document = scan(text)
    for offset in range(len(text) + 1):
        resolve(document, offset)
