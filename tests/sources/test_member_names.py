"""The member-name rules over the orders archives list their members in: a directory's
members together (its parent checked once), and names that come back to a parent after
others, with a differing case, or below a file. Each refusal is the one ``install`` gives,
word for word; names of plain characters and names that need every rule are read alike."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import pytest

from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources.archive import byte_sum, check_member_names, checked_name, normalise_name


def _outcome(check: Callable[[str], str | None], raw: str) -> tuple[str, str | None]:
    try:
        return "read", check(raw)
    except NexoError as error:
        return error.kind, error.message


def _refusal(members: list[tuple[str, bool]]) -> tuple[str, str] | None:
    try:
        check_member_names(members)
    except NexoError as error:
        return error.kind, error.message
    return None


@pytest.mark.parametrize(
    ("members", "refusal"),
    [
        ([("a/x", False), ("a/y", False), ("a/z/w", False), ("a", True)], None),
        ([("a/b/x", False), ("a/b/y", False), ("c/d", False), ("a/b/z", False)], None),
        (
            [("a/x", False), ("a/y", False), ("A/z", False)],
            "unsafe archive: 'A/z' collides with 'a' (same name once case-folded or "
            "Unicode-normalised)",
        ),
        (
            [("a/x", False), ("a/y", False), ("a/x/z", False)],
            "unsafe archive: 'a/x/z' lies below 'a/x', which is a file",
        ),
        (
            [("lib/m/x", False), ("lib/m/y", False), ("lib/M", False)],
            "unsafe archive: 'lib/M' collides with 'lib/m' (same name once case-folded or "
            "Unicode-normalised)",
        ),
        (
            [("a/x", False), ("a/y", False), ("a/x", False)],
            "unsafe archive: duplicate member name 'a/x'",
        ),
        (
            [("a/\u00e9/x", False), ("a/\u00e9/y", False), ("a/e\u0301/z", False)],
            "unsafe archive: 'a/e\u0301/z' collides with 'a/\u00e9' (same name once "
            "case-folded or Unicode-normalised)",
        ),
        (
            [("a/x", False), ("a/y", False), (".nexo-install.json", False)],
            "unsafe archive: '.nexo-install.json' is a name the installer keeps for itself",
        ),
        (
            [("a/x", False), (".Nexo-Install.json/x", False)],
            "unsafe archive: '.Nexo-Install.json/x' is a name the installer keeps for itself",
        ),
    ],
)
def test_names_after_a_parent_was_checked(
    members: list[tuple[str, bool]], refusal: str | None
) -> None:
    assert _refusal(members) == (None if refusal is None else ("archive_unsafe", refusal))


@pytest.mark.parametrize(
    "raw",
    [
        "lib/pkg/mod.py",
        "a-b_c/d+e@f,g=h/x.y.z",
        "x" * 255,
        "a/" + "x" * 253,
        "lib/.hidden/x",
        "./lib/x",
        "lib/../x",
        "lib/./x",
        "lib//x",
        "lib/x/",
        "/lib/x",
        "C:/x",
        "lib\\x",
        "lib/\x7f",
        "x" * 256,
        "a/" + "x" * 256,
        "/".join(["abcdefghi"] * 103),
        ".",
        "./",
        "",
    ],
)
def test_plain_names_read_as_every_rule_reads_them(raw: str) -> None:
    """A name the quick match takes is one every rule leaves as it is; the rest are read by
    the rules one by one, refused word for word as before."""
    assert _outcome(normalise_name, raw) == _outcome(checked_name, raw)


@pytest.mark.parametrize("seed", range(8))
def test_the_header_sum_is_the_sum_of_its_bytes(seed: int) -> None:
    blocks = [
        bytes(512),
        b"\xff" * 512,
        b"\xff" * 256 + bytes(256),
        hashlib.sha512(bytes([seed])).digest() * 8,
    ]
    for block in blocks:
        assert byte_sum(block) == sum(block)


@pytest.mark.parametrize(
    ("component", "refused"),
    [
        ("\u00e9" * 127 + ".", False),  # 255 bytes
        ("\u00e9" * 128, True),  # 128 characters, 256 bytes
        ("\u4e2d" * 86, True),  # 86 characters, 258 bytes
        ("x" * 255, False),
    ],
)
def test_a_component_is_measured_in_bytes_as_the_file_system_counts_it(
    component: str, refused: bool
) -> None:
    """NAME_MAX is 255 bytes: a component of 128 'é' cannot be created on Linux, so it is
    refused as unsafe before anything is written, not met as an `io` error mid-extraction."""
    for name in (f"lib/{component}", f"lib/{component}/x.py"):
        kind, message = _outcome(normalise_name, name)
        if refused:
            assert kind == "archive_unsafe"
            assert message is not None
            assert message.endswith("has a component longer than 255 bytes")
        else:
            assert (kind, message) == ("read", name)
