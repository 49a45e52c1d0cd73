"""A launcher whose ``#!`` interpreter this host lacks: why a plugin did not start.

The launcher ``pack`` writes starts with ``#!/usr/bin/env bash``, and Alpine ships only
BusyBox ``sh``: there the kernel runs ``env``, which exits 127 (``env: 'bash': No such file or
directory``), or, for ``#!/bin/bash``, the spawn itself fails with ``ENOENT``. ``check`` shows
the exit or the error; this module says which interpreter is missing and what to install.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from nexo_pkg.core.files import open_regular

# The kernel reads no more of a script's first line (BINPRM_BUF_SIZE is 256 bytes).
_FIRST_LINE_BYTES = 256

# What docs/install.md ("Alpine and other musl hosts") says to install for the packed launcher.
_ALPINE_PACKAGES = {"bash": "bash", "python3": "python3"}


def missing_interpreter(command: str, *, cwd: Path, env: Mapping[str, str]) -> str | None:
    """Why ``command`` (a plugin's entrypoint, run in ``cwd`` with ``env``) cannot start on
    this host: its first line is ``#!INTERPRETER`` and the interpreter does not exist here, or
    it is ``env`` (``#!/usr/bin/env [-S] NAME``) and ``NAME`` is on no directory of ``env``'s
    ``PATH``. ``None`` when the command is no such script or its interpreter is here."""
    program = _program(command, cwd, env)
    if program is None:
        return None
    try:
        with open_regular(program, follow_links=True) as handle:
            head = handle.read(_FIRST_LINE_BYTES)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    line = head[2:].split(b"\n", 1)[0].decode("utf-8", errors="replace").strip()
    words = line.split()
    if not words:
        return None
    shown = f"`#!{line}`"
    interpreter = words[0]
    if not Path(interpreter).is_file():
        return _hint(shown, Path(interpreter).name, f"{interpreter} does not exist")
    if Path(interpreter).name != "env":
        return None
    name = next((word for word in words[1:] if not word.startswith("-") and "=" not in word), None)
    # `env` looks NAME up on its PATH (the default path when it has none); a NAME with a
    # slash is run as it is, which shutil.which checks the same way.
    if name is None or shutil.which(name, path=env.get("PATH", os.defpath)) is not None:
        return None
    missing = f"{name} does not exist" if "/" in name else f"`env` finds no `{name}` on PATH"
    return _hint(shown, Path(name).name, missing)


def _program(command: str, cwd: Path, env: Mapping[str, str]) -> Path | None:
    """The file ``command`` names: a path with a slash (relative to ``cwd``), or a bare name
    looked up on the ``PATH`` of ``env``."""
    if "/" in command:
        return cwd / command  # an absolute path stays as it is
    found = shutil.which(command, path=env.get("PATH", os.defpath))
    return Path(found) if found is not None else None


def _hint(shown: str, name: str, missing: str) -> str:
    package = _ALPINE_PACKAGES.get(name)
    remedy = (
        f"install it (on Alpine, which ships only BusyBox `sh`: `apk add {package}`)"
        if package is not None
        else f"install `{name}` on this host or change the launcher's first line"
    )
    return f"the launcher's {shown} names an interpreter this host lacks ({missing}): {remedy}"
