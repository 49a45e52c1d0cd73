"""Third-party command-line tools the interoperability tests run (skopeo, gh …)."""

from __future__ import annotations

import os
import shutil

import pytest


def require_tool(name: str, install: str) -> str:
    """The path of ``name``; skip saying how to ``install`` it when it is missing, except
    under CI (``CI=true``), where ``scripts/test.sh`` installs it and a missing tool fails."""
    found = shutil.which(name)
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is not installed ({install})")
        pytest.skip(f"{name} is not installed: {install}")
    return found
