"""A signal that lands while the command line is still starting up ends as every other one:
one line, the signal's exit code, and the ``--json`` document; never a Python traceback.

The moment is made exact, not raced: a ``sitecustomize`` on ``PYTHONPATH`` installs an import
hook that sends the process its own SIGINT when start-up imports ``nexo_pkg.core.leaving``
(the guard for readers that leave, loaded after the signal handlers are in place and before
the command runs).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import assert_interrupted_before_any_output, nexo_with_sitecustomize

SITECUSTOMIZE = '''
import os
import signal
import sys


class _InterruptOnImport:
    """Sends this process SIGINT when start-up imports nexo_pkg.core.leaving."""

    def find_spec(self, name, path=None, target=None):
        if name == "nexo_pkg.core.leaving":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None


sys.meta_path.insert(0, _InterruptOnImport())
'''


def _run_interrupted_at_start_up(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return nexo_with_sitecustomize(tmp_path, SITECUSTOMIZE, "plugin", "list", *args)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_ctrl_c_during_start_up_prints_one_line_and_exits_130(tmp_path: Path) -> None:
    completed = _run_interrupted_at_start_up(tmp_path)
    assert_interrupted_before_any_output(completed, json_output=False)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_ctrl_c_during_start_up_still_prints_the_json_document(tmp_path: Path) -> None:
    completed = _run_interrupted_at_start_up(tmp_path, "--json")
    assert_interrupted_before_any_output(completed, json_output=True)
