"""Finding a program on PATH the way Go's ``exec.LookPath`` does since Go 1.19 (docker's
credential helpers, gh): only PATH's absolute directories are searched. An empty entry
(``PATH=":/usr/bin"``), ``.`` or any relative one would run a program from the working
directory, which may be a cloned repository nobody has read."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["find_program"]


def find_program(name: str) -> str | None:
    """The absolute path of the program ``name`` in PATH's absolute directories (the
    platform's default search path without PATH), or ``None``."""
    search = os.environ.get("PATH", os.defpath)
    for directory in search.split(os.pathsep):
        if not directory or not Path(directory).is_absolute():
            continue
        found = shutil.which(name, path=directory)
        # Windows' which() looks in the working directory first, whatever the path says.
        if found is not None and Path(found).is_absolute():
            return found
    return None
