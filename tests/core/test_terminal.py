"""The one escaper of untrusted text for terminals, and the one TOML string writer."""

from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from nexo_pkg.core.terminal import (
    cells,
    escaping_encoding,
    printable,
    shell_command,
    shown,
    toml_string,
)

PACKAGE = Path(__file__).resolve().parents[2] / "nexo_pkg"


def test_printable_escapes_control_characters_on_one_line() -> None:
    text = "a\x1b[2Jb\tc\nd\x9b31m\u2028\u202e\u2066é🙂"
    assert printable(text) == ("a\\u001b[2Jb\\u0009c\\u000ad\\u009b31m\\u2028\\u202e\\u2066é🙂")


def test_printable_keeps_tab_and_line_feed_for_lines() -> None:
    assert printable("a\tb\nc\x1b\x07\r", lines=True) == "a\tb\nc\\u001b\\u0007\\u000d"


def test_shown_quotes_and_caps() -> None:
    assert shown("x\x1by") == "'x\\u001by'"
    assert shown("a" * 10, limit=4) == "'aaaa...'"


@pytest.mark.parametrize(
    "value",
    [
        "plain",
        'quote " and \\ backslash',
        "esc\x1b[2J",
        "line\nfeed\ttab",
        "\u202eabc",
        "\U0001f642",
    ],
)
def test_toml_string_round_trips_and_is_printable(value: str) -> None:
    written = toml_string(value)
    assert tomllib.loads(f"key = {written}")["key"] == value
    assert printable(written) == written


def test_toml_string_escapes_as_printable_does() -> None:
    assert toml_string("a\x1b\u2028") == '"a\\u001b\\u2028"'


def test_no_second_escaper_in_the_package() -> None:
    """Terminal escaping and TOML quoting live in core/terminal.py only. (version.py quotes
    one character the way the ``semver`` crate's messages do, which is not an escaper.)"""
    patterns = re.compile(
        r"unicode_escape|def [a-z_]*toml_(string|escape|quote)|def escape_control|"
        r"isprintable\(\) else"
    )
    found = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name not in {"terminal.py", "version.py"}
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if patterns.search(line)
    ]
    assert found == []


@pytest.mark.parametrize(
    ("encoding", "errors", "expected"),
    [
        ("ascii", "backslashreplace", "ascii"),
        ("latin-1", "backslashreplace", "latin-1"),
        ("UTF8", "backslashreplace", None),
        ("ascii", "strict", None),
    ],
)
def test_escaping_encoding_names_a_stream_that_escapes(
    encoding: str, errors: str, expected: str | None
) -> None:
    stream = io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors=errors)
    assert escaping_encoding(stream) == expected
    assert escaping_encoding(object()) is None


def test_cells_measure_text_as_an_escaping_stream_shows_it() -> None:
    """`é` is one cell where it can be encoded, `\\xe9` (four) where not; a wide character
    an encoding lacks is its escape (`\\u65e5`, six), not two cells."""
    assert cells("café") == 4
    assert cells("café", "latin-1") == 4
    assert cells("café", "ascii") == 3 + 4
    assert cells("日", "latin-1") == 6
    assert cells("日", "utf-8") == 2


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize(
    "word",
    ["plain", "a b", "it's", "line\nfeed\ttab", "esc\x1b[2J\\x41", "\u202eabc", "bad\udcffbyte"],
)
def test_shell_command_is_read_back_by_bash_as_the_same_bytes(word: str) -> None:
    command = shell_command("printf", "%s", word)
    assert printable(command) == command
    if word.isprintable():
        assert command == shlex.join(["printf", "%s", word])  # ordinary words: as before
    echoed = subprocess.run(["bash", "-c", command], capture_output=True, check=True)
    assert echoed.stdout == os.fsencode(word)
