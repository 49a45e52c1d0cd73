"""A signal that lands while the process winds down, after the command ended by any path (a
refusal, a usage error, a finished run), ends it at once with the signal's line and code:
never a Python traceback from the unwinding handler raised where nothing catches it, and
never a second ``--json`` document.

The moment is made exact, not raced: a ``sitecustomize`` on ``PYTHONPATH`` registers an
``atexit`` function (run by the interpreter after the command has returned and its threads
were joined) that sends the process its own SIGINT.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import TRACEBACK, nexo_with_sitecustomize

SITECUSTOMIZE = """
import atexit
import os
import signal


def _interrupt_on_the_way_out():
    os.kill(os.getpid(), signal.SIGINT)


atexit.register(_interrupt_on_the_way_out)
"""


def _run_interrupted_on_exit(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "root").mkdir()
    return nexo_with_sitecustomize(tmp_path, SITECUSTOMIZE, "plugin", *args)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("remove", "absent", "--dest", "root", "--json"), id="refusal"),
        pytest.param(("list", "--dest", "root", "--json"), id="finished"),
        pytest.param(("install", "--bogus", "--json"), id="usage"),
        pytest.param(("remove", "absent", "--dest", "root"), id="refusal-text"),
    ],
)
def test_a_signal_while_the_process_winds_down_ends_it_with_one_line(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    completed = _run_interrupted_on_exit(tmp_path, *args)
    assert TRACEBACK not in completed.stderr, completed.stderr
    assert "Exception ignored" not in completed.stderr, completed.stderr
    assert completed.returncode == 130, (completed.returncode, completed.stderr)
    assert completed.stderr.strip().splitlines()[-1] == "error: interrupted [interrupted]", (
        completed.stderr
    )
    if "--json" in args:
        document = json.loads(completed.stdout)  # one document: a second would not parse
        assert document.get("kind") != "interrupted", completed.stdout
