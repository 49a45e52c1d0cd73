"""Turns the Windows shim (``tests/support/windows_shim.py``) on in a child interpreter."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

if os.environ.get("NEXO_TEST_WINDOWS_SHIM") == "1":
    _spec = importlib.util.spec_from_file_location(
        "nexo_test_windows_shim", Path(__file__).resolve().parent.parent / "windows_shim.py"
    )
    if _spec is not None and _spec.loader is not None:
        _shim = importlib.util.module_from_spec(_spec)
        sys.modules[_spec.name] = _shim
        _spec.loader.exec_module(_shim)
        _shim.install()
