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
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import TRACEBACK, assert_interrupted_before_any_output, clean_env, nexo
from support.tarballs import write_plugin

from nexo_pkg.cli import SIGNAL_EXIT, Interrupted, hold_signals
from nexo_pkg.core.output import OUTPUT, write_document

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
            assert err.strip().splitlines()[-1] == "error: interrupted [interrupted]", err
    # 0/1/2: finished first; 130: the handler; -2: the signal came once the interpreter had
    # given SIGINT back to the system's default (its last moments).
    assert codes <= {0, 1, 2, 130, -signal.SIGINT}, codes


def _blocked_writing(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/wchan").read_text() in {"pipe_write", "anon_pipe_write"}
    except OSError:
        return False


def _signalled_while_blocked(
    command: list[str], cwd: Path, env: dict[str, str], signals: tuple[int, ...] = (signal.SIGINT,)
) -> tuple[int, bytes, str]:
    """Run the command into a pipe shrunk to 4 KiB, send ``signals`` (SIGINT) once it waits
    on the full pipe, then read everything: exit code, stdout, stderr."""
    reader, writer = os.pipe()
    fcntl.fcntl(writer, fcntl.F_SETPIPE_SZ, 4096)
    process = subprocess.Popen(
        [sys.executable, "-m", "nexo_pkg", *command], cwd=cwd, env=env,
        stdin=subprocess.DEVNULL, stdout=writer, stderr=subprocess.PIPE,
    )  # fmt: skip
    os.close(writer)
    try:
        deadline = time.monotonic() + 60
        while not _blocked_writing(process.pid):
            assert process.poll() is None, "the command finished without filling the pipe"
            assert time.monotonic() < deadline, "the command never waited on its pipe"
            time.sleep(0.02)
        for signum in signals:
            process.send_signal(signum)
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
    return code, out, err


def _whole_and_interrupted(code: int, out: bytes, err: str) -> dict[str, Any]:
    assert TRACEBACK not in err, err
    document = json.loads(out)  # one whole document, the command's own
    assert isinstance(document, dict)
    assert document.get("kind") != "interrupted", out[:200]
    assert code == 130, err
    assert err.strip().splitlines()[-1] == "error: interrupted [interrupted]", err
    return document


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe size and wchan: Linux")
@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["plugin", "rule", "--all", "--json"], id="rule"),
        pytest.param(["plugin", "lint", "--json", "."], id="lint"),
        # The JSON Schema is a document on stdout too (about 50 KB), though without --json.
        pytest.param(["plugin", "schema"], id="schema"),
    ],
)
def test_a_signal_while_the_document_is_written_waits_for_its_end(
    tmp_path: Path, command: list[str]
) -> None:
    env = _many_findings(tmp_path)  # a report far larger than the pipe
    _whole_and_interrupted(*_signalled_while_blocked(command, tmp_path, env))


def _many_findings(tmp_path: Path) -> dict[str, str]:
    """A lint report far larger than the pipe; the environment to run in."""
    for index in range(60):
        (tmp_path / f"p{index}").mkdir()
        (tmp_path / f"p{index}" / "plugin.toml").write_text('[plugin]\nid = "X"\n', "utf-8")
    return clean_env(NEXO_HOME=str(tmp_path / "home"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe size and wchan: Linux")
@pytest.mark.parametrize(
    "signum",
    [signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGQUIT, signal.SIGRTMIN + 2],
    ids=["SIGTERM", "SIGHUP", "SIGUSR1", "SIGQUIT", "SIGRTMIN+2"],
)
def test_every_unwinding_signal_waits_for_the_document(tmp_path: Path, signum: int) -> None:
    # Each signal that unwinds a command is held while the document is written, not only
    # SIGINT: one whole document, then the signal's own line and 128 + its number.
    command = ["plugin", "lint", "--json", "."]
    env = _many_findings(tmp_path)
    code, out, err = _signalled_while_blocked(command, tmp_path, env, (signum,))
    assert TRACEBACK not in err, err
    assert json.loads(out)["summary"]["errors"] >= 60, out[:200]
    assert code == 128 + signum, err
    assert err.strip().splitlines()[-1] == Interrupted(signum).error_line, err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe size and wchan: Linux")
@pytest.mark.parametrize(
    ("first", "second"),
    [(signal.SIGTERM, signal.SIGINT), (signal.SIGUSR1, signal.SIGHUP)],
    ids=["TERM-INT", "USR1-HUP"],
)
def test_a_second_signal_while_the_document_waits_ends_it_with_the_first_ones_code(
    tmp_path: Path, first: int, second: int
) -> None:
    # A reader that takes nothing must not make the command wait forever: a second signal
    # ends it at once, the document cut where the pipe was full (and no second document
    # after it); what is said and the exit code are those of the first signal, the one
    # that stopped the command.
    command = ["plugin", "lint", "--json", "."]
    env = _many_findings(tmp_path)
    code, out, err = _signalled_while_blocked(command, tmp_path, env, (first, second))
    assert TRACEBACK not in err, err
    assert b"interrupted" not in out
    whole = nexo(*command, cwd=tmp_path, env=env).stdout.encode()
    assert 0 < len(out) < len(whole)
    assert whole.startswith(out)
    assert code == 128 + first, err
    assert err.strip().splitlines() == [Interrupted(first).error_line], err


# A finished command about to print its result (`sync`): two signals back to back.
DEFERRED_TWICE = """
import os, signal, sys
from nexo_pkg.cli import defer_signals
from nexo_pkg.cli.main import install_signal_handlers
install_signal_handlers()
defer_signals()
os.kill(os.getpid(), signal.SIGTERM)
os.kill(os.getpid(), signal.SIGINT)
sys.exit(0)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_second_signal_after_a_deferred_one_leaves_with_the_first_ones_code() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", DEFERRED_TWICE], stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert TRACEBACK not in completed.stderr, completed.stderr
    assert completed.stderr.strip() == "error: terminated [interrupted]"
    assert completed.returncode == 143


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe size and wchan: Linux")
def test_a_signal_while_the_sbom_is_written_waits_for_its_end(tmp_path: Path) -> None:
    # `sbom --json` prints the CycloneDX document itself: one document, never cut, and no
    # `interrupted` document after it.
    root = tmp_path / "root"
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    for index in range(12):  # about 1 KB of document each
        tarball = write_plugin(tmp_path / "dist", f"p{index}", "1.0.0")
        done = nexo("plugin", "install", tarball, "--dest", root, "--yes", env=env, in_process=True)
        assert done.code == 0, done.stderr
    command = ["plugin", "sbom", "--all", "--dest", str(root), "--json"]
    document = _whole_and_interrupted(*_signalled_while_blocked(command, tmp_path, env))
    assert document["bomFormat"] == "CycloneDX"
    names = sorted(c["name"] for c in document["components"] if c["type"] == "application")
    assert names == sorted(f"p{index}" for index in range(12))


# Sends the process its own SIGINT the first time a document's writer asks for the signals
# to be held, just before they are: the last moment a signal stops a command that has
# written nothing yet. (Installed on `nexo_pkg.cli` before `nexo_pkg.cli.main` takes it.)
SIGNAL_BEFORE_HOLDING = """
import os
import signal
import sys


class _SignalBeforeHolding:
    def find_spec(self, name, path=None, target=None):
        if name == "nexo_pkg.cli.main":
            sys.meta_path.remove(self)
            cli = sys.modules["nexo_pkg.cli"]
            hold_signals = cli.hold_signals

            def signalled_first():
                cli.hold_signals = hold_signals
                os.kill(os.getpid(), signal.SIGINT)
                return hold_signals()

            cli.hold_signals = signalled_first
        return None


sys.meta_path.insert(0, _SignalBeforeHolding())
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_signal_just_before_the_document_is_begun_still_gets_the_interrupted_one(
    tmp_path: Path,
) -> None:
    # Nothing of the command's own document was written: --json still prints one document,
    # the `interrupted` one (never an empty stdout).
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SIGNAL_BEFORE_HOLDING, encoding="utf-8", newline="\n")
    (tmp_path / "root").mkdir()
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    env["PYTHONPATH"] = os.pathsep.join(
        part for part in (str(hook), os.environ.get("PYTHONPATH", "")) if part
    )
    completed = subprocess.run(
        [sys.executable, "-m", "nexo_pkg", "plugin", "list", "--json", "--dest", "root"],
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert_interrupted_before_any_output(completed, json_output=True)


class _Stopped(BaseException):
    pass


class _SignalledStream(io.StringIO):
    """A stream that is sent SIGTERM while its first piece is written."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        if self.writes == 1:
            os.kill(os.getpid(), signal.SIGTERM)
        return super().write(text)


@pytest.mark.skipif(sys.platform == "win32", reason="a signal sent to this process")
def test_a_held_signal_reaches_the_runs_handler_once_the_document_is_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def stop(signum: int, frame: object) -> None:
        raise _Stopped(signum)

    monkeypatch.setattr(OUTPUT, "hold_signals", hold_signals)
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        stream = _SignalledStream()
        text = "x" * 10_000
        with pytest.raises(_Stopped):
            write_document(stream, text)
        assert stream.getvalue() == text  # every piece, then the run's handler
        assert stream.writes == 5
        assert signal.getsignal(signal.SIGTERM) is stop  # the run's handler is back
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_document_written_outside_the_main_thread_is_written_as_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Signal handlers belong to the main thread (signal.signal raises ValueError elsewhere):
    # a caller that runs a command in another thread gets its document, and the main
    # thread's handlers stay as they were.
    monkeypatch.setattr(OUTPUT, "hold_signals", hold_signals)
    before = {handled: signal.getsignal(handled) for handled in SIGNAL_EXIT}
    stream = io.StringIO()
    failures: list[BaseException] = []

    def write() -> None:
        try:
            write_document(stream, "y" * 5000)
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(error)

    thread = threading.Thread(target=write)
    thread.start()
    thread.join(timeout=30)
    assert failures == []
    assert stream.getvalue() == "y" * 5000
    assert {handled: signal.getsignal(handled) for handled in SIGNAL_EXIT} == before
