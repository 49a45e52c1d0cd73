"""The cursor -> TOML key path resolver, on complete and half-typed documents (the tolerant
scan itself is tested in tests/core/test_toml_spans.py)."""

from __future__ import annotations

import pytest
from support.toml_texts import HALF_TYPED

from nexo_pkg.core.toml_spans import scan_tolerant as scan
from nexo_pkg.lsp.toml_context import resolve

DOCUMENT = HALF_TYPED


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


def test_blank_line_is_a_new_key_of_the_current_table() -> None:
    text = "[plugin.sandbox]\nenabled = true\n\n[plugin]\n"
    context = resolve(scan(text), text.index("\n\n") + 1)
    assert context.kind == "key"
    assert context.path == ("plugin", "sandbox", "")


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
