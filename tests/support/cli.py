"""Run the real ``nexo`` command line from a test: one call, one result shape.

:func:`nexo` runs ``python -m nexo_pkg ARGS`` in a subprocess (the user's experience, standard
input closed unless given) or, with ``in_process=True``, the same entry point
(:func:`nexo_pkg.cli.main.main`) in this process under Click's :class:`~typer.testing.CliRunner`
isolation: its streams, its environment (exactly ``env``), its working directory, its own
``--quiet``/``--color`` settings, its signal handlers restored afterwards. Both give a
:class:`CliResult` with the same exit code and streams (decoded as UTF-8 with line endings
translated, as a text-mode pipe reads them); the in-process run saves the interpreter
start-up, about a second a call.

An in-process run is not a process: a test about signals, a terminal, what a fresh interpreter
imports or checks at start-up, ``--verbose`` logging (pytest owns the root logger), a prompt
answered on standard input (the runner echoes the answer to stdout), or locks held by another
process runs in a subprocess.

:func:`clean_env` is the environment every run starts from: the caller's, without anything
that would point a command at the real GitHub, a proxy or a gh login, with ``NO_COLOR``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import pytest

# Variables that would point a command at the real GitHub, a proxy, or the user's home, or
# widen what an installed plugin's sandbox allows.
ENV_TO_CLEAR = (
    "NEXO_GITHUB_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "GH_HOST",
    "NEXO_GITHUB_API_BASE",
    "GITHUB_API_URL",
    "NEXO_HTTP_TIMEOUT",
    "NEXO_INSTALL_TARGET",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "ALL_PROXY",
    "https_proxy",
    "http_proxy",
    "all_proxy",
    "NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW",
)

# A gh configuration directory that does not exist: gh, when installed, is logged in nowhere.
NO_GH_LOGIN = "/nonexistent/nexo-tests/gh-config"

# What a Python traceback starts with; no run of the command line may print one.
TRACEBACK = "Traceback (most recent call last)"


class CliResult(NamedTuple):
    """Exit code and output of one ``nexo`` run (``code, stdout, stderr = nexo(...)``)."""

    code: int
    stdout: str
    stderr: str

    @property
    def exit_code(self) -> int:
        """The exit code under Click's name for it."""
        return self.code

    @property
    def document(self) -> dict[str, Any]:
        """The ``--json`` document on stdout (fails the test when stdout is not one)."""
        parsed = json.loads(self.stdout)
        assert isinstance(parsed, dict), self.stdout
        return parsed

    @property
    def error_line(self) -> str:
        """The last ``error: …`` line on stderr (fails the test when there is none)."""
        lines = [line for line in self.stderr.splitlines() if line.startswith("error: ")]
        assert lines, f"no error line on stderr: {self.stderr!r}"
        return lines[-1]


def assert_interrupted_before_any_output(
    completed: subprocess.CompletedProcess[str], *, json_output: bool
) -> None:
    """A run SIGINT stopped before it wrote anything of its own: one ``interrupted`` line on
    stderr, exit 130, and with ``--json`` the ``interrupted`` document (nothing otherwise)."""
    assert TRACEBACK not in completed.stderr, completed.stderr
    if json_output:
        assert json.loads(completed.stdout) == {
            "ok": False,
            "kind": "interrupted",
            "error": "interrupted",
        }
    else:
        assert completed.stdout == ""
    assert completed.stderr.strip().splitlines() == ["error: interrupted [interrupted]"], (
        completed.stderr
    )
    assert completed.returncode == 130


def clean_env(**extra: str) -> dict[str, str]:
    """The current environment without GitHub/proxy settings or a gh login, plus ``extra``."""
    env = {key: value for key, value in os.environ.items() if key not in ENV_TO_CLEAR}
    env["NO_COLOR"] = "1"
    env["GH_CONFIG_DIR"] = NO_GH_LOGIN
    env.update(extra)
    return env


def nexo_with_sitecustomize(
    tmp_path: Path, sitecustomize: str, *args: str
) -> subprocess.CompletedProcess[str]:
    """Run the ``nexo`` console script with ``sitecustomize`` (Python source) first on
    ``PYTHONPATH``: a hook that acts at an exact moment of the process's life (an import, the
    way out), so a test need not race it. NEXO_HOME and HOME are under ``tmp_path``."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(sitecustomize, encoding="utf-8", newline="\n")
    env = clean_env(NEXO_HOME=str(tmp_path / "nexo"), HOME=str(tmp_path))
    env["PYTHONPATH"] = os.pathsep.join(
        part for part in (str(hook), os.environ.get("PYTHONPATH", "")) if part
    )
    return subprocess.run(
        [str(Path(sys.executable).with_name("nexo")), *args],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def stand_in_env(home: Path, api_url: str, **extra: str) -> dict[str, str]:
    """:func:`clean_env` for commands that talk to the loopback GitHub stand-in at
    ``api_url``, with ``NEXO_HOME`` at ``home``: no proxy for loopback, retries at once."""
    return clean_env(NEXO_HOME=str(home), NEXO_GITHUB_API_BASE=api_url,
                     NEXO_HTTP_RETRY_BASE_MS="1", NO_PROXY="127.0.0.1,localhost",
                     **extra)  # fmt: skip


def nexo(
    *args: str | Path,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stdin: str | bytes | None = None,
    timeout: float = 120.0,
    in_process: bool = False,
    prefix: Sequence[str] = (),
) -> CliResult:
    """Run ``nexo ARGS`` with exactly ``env`` (this process's environment when ``None``; a
    test that does not set its own passes :func:`clean_env`) in ``cwd``.

    ``stdin`` is what standard input holds (closed when ``None``). ``prefix`` is a command the
    subprocess runs under (``setpriv …`` to drop a capability); it has no in-process meaning.
    A subprocess that outlives ``timeout`` seconds raises :class:`subprocess.TimeoutExpired`.
    Fails the test when the run printed a Python traceback.
    """
    arguments = [str(arg) for arg in args]
    environment = dict(env if env is not None else os.environ)
    data = stdin.encode("utf-8", "surrogateescape") if isinstance(stdin, str) else stdin
    if in_process:
        assert not prefix, "a command prefix needs a subprocess"
        code, out, err = _in_process(arguments, environment, cwd, data)
    else:
        completed = subprocess.run(
            [*prefix, sys.executable, "-m", "nexo_pkg", *arguments],
            env=environment,
            cwd=cwd,
            capture_output=True,
            timeout=timeout,
            check=False,
            input=data,
            stdin=subprocess.DEVNULL if data is None else None,
        )
        code, out, err = completed.returncode, completed.stdout, completed.stderr
    result = CliResult(code, _text(out), _text(err))
    assert TRACEBACK not in result.stderr, result.stderr
    return result


def nexo_reader_left(
    *args: str | Path, closed: str, env: Mapping[str, str], cwd: Path
) -> CliResult:
    """Run ``nexo ARGS`` in a subprocess with ``closed`` ("stdout" or "stderr") a pipe whose
    reader has already left (``| head -1`` once ``head`` is gone), buffered as a user's process
    is; the exit code and what the other stream got (the closed one reads empty)."""
    reader, writer = os.pipe()
    os.close(reader)
    # Buffered as a user's process is (the test runner's environment may say otherwise).
    environment = {key: value for key, value in env.items() if key != "PYTHONUNBUFFERED"}
    try:
        completed = subprocess.run(
            [sys.executable, "-m", "nexo_pkg", *(str(arg) for arg in args)],
            env=environment,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=writer if closed == "stdout" else subprocess.PIPE,
            stderr=writer if closed == "stderr" else subprocess.PIPE,
            timeout=120,
            check=False,
        )
    finally:
        os.close(writer)
    return CliResult(completed.returncode, _text(completed.stdout or b""),
                     _text(completed.stderr or b""))  # fmt: skip


def _text(data: bytes) -> str:
    """``data`` as a text-mode pipe reads it: UTF-8, ``\\r\\n`` and ``\\r`` read as ``\\n``."""
    return data.decode("utf-8", "surrogateescape").replace("\r\n", "\n").replace("\r", "\n")


def _in_process(
    arguments: list[str], env: dict[str, str], cwd: Path | None, stdin: bytes | None
) -> tuple[int, bytes, bytes]:
    """Run :func:`nexo_pkg.cli.main.main` here; restore what it changes of this process."""
    from typer.testing import CliRunner

    from nexo_pkg.cli.main import main
    from nexo_pkg.core.output import OUTPUT, OutputSettings

    overrides: dict[str, str | None] = dict.fromkeys(key for key in os.environ if key not in env)
    overrides.update(env)
    handled_signals = [signal.SIGINT, signal.SIGTERM]
    if hasattr(signal, "SIGHUP"):
        handled_signals.append(signal.SIGHUP)
    handlers = {handled: signal.getsignal(handled) for handled in handled_signals}
    saved_argv, saved_cwd, saved_output = sys.argv, Path.cwd(), vars(OUTPUT).copy()
    with CliRunner().isolation(input=stdin or b"", env=overrides) as (stdout, stderr, _):
        vars(OUTPUT).update(vars(OutputSettings()))
        sys.argv = ["nexo", *arguments]
        try:
            if cwd is not None:
                os.chdir(cwd)
            main()
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            sys.argv = saved_argv
            os.chdir(saved_cwd)
            vars(OUTPUT).update(saved_output)
            for handled, handler in handlers.items():
                signal.signal(handled, handler)
        return code, stdout.getvalue(), stderr.getvalue()


def fast_path_output(
    capsys: pytest.CaptureFixture[str],
    runner: Callable[[list[str]], int | None],
    arguments: list[str],
) -> tuple[object, str, str]:
    """Run ``runner`` (a command's Typer-free fast path, or Typer's ``run``) on ``arguments`` in
    this process, with the output settings reset first: its exit code (returned or raised) and
    what it wrote to stdout and stderr, for the two paths to be compared."""
    from nexo_pkg.core.output import OUTPUT, OutputSettings

    vars(OUTPUT).update(vars(OutputSettings()))
    code: object
    try:
        code = runner(arguments)
    except SystemExit as stop:
        code = stop.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def on_terminal(*args: str, env: dict[str, str], cwd: Path) -> tuple[int, str]:
    """``python -m nexo_pkg ARGS`` with a pseudo-terminal as stdout and stderr (stdin
    closed); its exit code and everything it wrote. (POSIX only: pty and select are loaded
    here, not where every test loads this module.)"""
    import pty
    import select

    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "nexo_pkg", *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=terminal,
        start_new_session=True,
    )
    os.close(terminal)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([controller], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            chunks.append(chunk)
        code = process.wait(timeout=60)
    finally:
        os.close(controller)
        if process.poll() is None:
            process.kill()
    return code, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def console(env: Mapping[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``nexo plugin ARGS`` through the console script pip wrote beside this interpreter, as an
    operator runs it: exactly ``env``, in ``cwd``, standard input closed, streams as text."""
    return subprocess.run(
        [str(Path(sys.executable).with_name("nexo")), "plugin", *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def fails_alike(env: Mapping[str, str], cwd: Path, kind: str, code: int, *args: str) -> str:
    """``nexo plugin ARGS`` (:func:`console`) with and without ``--json`` both exit ``code``
    with one failure of ``kind`` and no traceback: the text run prints nothing on stdout and
    ends with the ``error: MESSAGE [KIND]`` line (returned), the document is ``{"ok": false,
    "kind": KIND, "error": MESSAGE}``, and the ``--json`` run's stderr ends with the same line."""
    text = console(env, cwd, *args)
    as_json = console(env, cwd, *args, "--json")
    assert TRACEBACK not in text.stderr + as_json.stderr
    assert (text.returncode, as_json.returncode) == (code, code), (text.stderr, as_json.stderr)
    document = json.loads(as_json.stdout)
    assert (document["ok"], document["kind"]) == (False, kind), document
    assert text.stdout == ""
    line = text.stderr.splitlines()[-1]
    assert line == f"error: {document['error']} [{kind}]", text.stderr
    assert as_json.stderr.splitlines()[-1] == line
    return line
