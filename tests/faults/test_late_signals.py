"""A signal that comes while or after a command prints its ``--json`` document (SPEC §1:
exactly one JSON document on stdout) adds no second document, and never a traceback.

The reader takes the document as soon as it parses, then sends SIGINT while the command is
still on its way out (returning through its layers, winding the interpreter down): the window
an operator's Ctrl-C or a supervisor's SIGTERM meets when the output is fast and the exit is
not. The timing varies from run to run, so each command is stopped several times at slightly
different moments; before the fix most runs printed ``{…}`` followed by
``{"ok": false, "kind": "interrupted", …}``, and a few a traceback from the unwinding handler
raised while the interpreter shut down.

A signal while the document is being written (a reader slower than the command: its pipe is
full) waits until the document is out: before the fix the write was cut where the pipe was
full and the ``interrupted`` document followed the cut one.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.cli import TRACEBACK, clean_env

RUNS = 8


def _stopped_after_document(
    args: list[str], cwd: Path, env: dict[str, str], delay: float
) -> tuple[int, str, str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "nexo_pkg", *args], cwd=cwd, env=env,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None
    taken = b""
    try:
        while True:
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                break
            taken += chunk
            try:
                json.loads(taken)
            except ValueError:
                continue
            break
        time.sleep(delay)
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        rest, err = process.communicate(timeout=60)
        process.stdout.close()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, (taken + rest).decode("utf-8"), err.decode("utf-8", "replace")


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["plugin", "list", "--json", "--dest", "root"], id="list"),
        pytest.param(["plugin", "lint", "plugin.toml", "--json"], id="lint"),
        pytest.param(["plugin", "rule", "--all", "--json"], id="rule"),
        pytest.param(["plugin", "remove", "absent", "--dest", "root", "--json"], id="refusal"),
    ],
)
def test_a_signal_after_the_document_adds_no_second_one(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "plugin.toml").write_text('[plugin]\nid = "x"\n', encoding="utf-8")
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    codes = set()
    for run in range(RUNS):
        code, out, err = _stopped_after_document(command, tmp_path, env, 0.002 * run)
        assert TRACEBACK not in err, err
        document = json.loads(out)  # exactly one document: a second one fails to parse
        assert document.get("kind") != "interrupted", out
        codes.add(code)
        if code == 130:  # stopped on its way out: said so once on stderr
            assert err.strip().splitlines()[-1] == "interrupted", err
    # 0/1/2: finished first; 130: the handler; -2: the signal came once the interpreter had
    # given SIGINT back to the system's default (its last moments).
    assert codes <= {0, 1, 2, 130, -signal.SIGINT}, codes


def _blocked_writing(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/wchan").read_text() in {"pipe_write", "anon_pipe_write"}
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe size and wchan: Linux")
@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["plugin", "rule", "--all", "--json"], id="rule"),
        pytest.param(["plugin", "lint", "--json", "."], id="lint"),
    ],
)
def test_a_signal_while_the_document_is_written_waits_for_its_end(
    tmp_path: Path, command: list[str]
) -> None:
    # Enough findings for a report far larger than the pipe.
    for index in range(60):
        (tmp_path / f"p{index}").mkdir()
        (tmp_path / f"p{index}" / "plugin.toml").write_text('[plugin]\nid = "X"\n', "utf-8")
    reader, writer = os.pipe()
    fcntl.fcntl(writer, fcntl.F_SETPIPE_SZ, 4096)
    process = subprocess.Popen(
        [sys.executable, "-m", "nexo_pkg", *command], cwd=tmp_path,
        env=clean_env(NEXO_HOME=str(tmp_path / "home")),
        stdin=subprocess.DEVNULL, stdout=writer, stderr=subprocess.PIPE,
    )  # fmt: skip
    os.close(writer)
    try:
        deadline = time.monotonic() + 60
        while not _blocked_writing(process.pid):
            assert process.poll() is None, "the command finished without filling the pipe"
            assert time.monotonic() < deadline, "the command never waited on its pipe"
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        time.sleep(0.2)  # the signal is taken while the write still waits
        out = b""
        while chunk := os.read(reader, 65536):
            out += chunk
        assert process.stderr is not None
        with process.stderr:
            err = process.stderr.read().decode("utf-8", "replace")
        code = process.wait(timeout=60)
    finally:
        os.close(reader)
        if process.poll() is None:
            process.kill()
            process.wait()
    assert TRACEBACK not in err, err
    document = json.loads(out)  # one whole document, the command's own
    assert "kind" not in document or document["kind"] != "interrupted"
    assert code == 130, err
    assert err.strip().splitlines()[-1] == "interrupted", err
