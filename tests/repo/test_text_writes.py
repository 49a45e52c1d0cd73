"""Every file nexo-pkg writes as text is written with ``\\n`` line ends on every OS.

Python's text mode writes ``os.linesep`` for each ``\\n`` unless told ``newline=``: on
Windows a scaffolded project would get a ``bin/<id>`` launcher whose ``#!/usr/bin/env bash\\r``
line no Linux host runs, and ``new`` would write other bytes than on Linux and macOS. The
translation happens in CPython's C ``io`` layer, which no test on Linux can switch to
Windows's, so this reads the package's source: a text-mode write (``Path.write_text``, an
``open``/``fdopen`` with a ``w``, ``a``, ``x`` or ``+`` mode and no ``b``, a
``TextIOWrapper``) must say ``newline=``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "nexo_pkg"

_OPENERS = {"open", "fdopen"}


def _mode(call: ast.Call, position: int) -> str | None:
    for keyword in call.keywords:
        if keyword.arg == "mode":
            value = keyword.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return value.value
            return None
    if len(call.args) > position:
        argument = call.args[position]
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            return argument.value
    return None


def _name(function: ast.expr) -> str | None:
    if isinstance(function, ast.Name):
        return function.id
    if isinstance(function, ast.Attribute):
        return function.attr
    return None


def text_writes_without_newline(source: str) -> list[int]:
    """The lines of ``source`` holding a text-mode write that does not pass ``newline=``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        if any(keyword.arg == "newline" for keyword in node.keywords):
            continue
        name = _name(node.func)
        if name in ("write_text", "TextIOWrapper"):
            found.append(node.lineno)
        elif name in _OPENERS:
            # open(path, mode), os.fdopen(fd, mode), path.open(mode)
            plain = isinstance(node.func, ast.Name) or (
                isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("os", "io", "builtins")
            )
            mode = _mode(node, 1 if plain else 0)
            if mode is not None and "b" not in mode and set(mode) & set("wax+"):
                found.append(node.lineno)
    return found


def test_the_check_finds_each_form_of_a_text_write() -> None:
    source = "\n".join(
        [
            "path.write_text(text, encoding='utf-8')",
            "open(path, 'w', encoding='utf-8')",
            "os.fdopen(fd, mode='a')",
            "path.open('x')",
            "io.TextIOWrapper(raw, encoding='utf-8')",
            "path.write_text(text, encoding='utf-8', newline='\\n')",
            "open(path, 'wb')",
            "open(path, 'r', encoding='utf-8')",
            "path.open('rb')",
            "open(path, 'w', newline='\\n')",
        ]
    )
    assert text_writes_without_newline(source) == [1, 2, 3, 4, 5]


def test_every_text_write_of_the_package_sets_its_line_ends() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent).as_posix()}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in text_writes_without_newline(path.read_text("utf-8"))
    ]
    assert offenders == []
