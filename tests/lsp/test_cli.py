"""``nexo plugin lsp`` as a command: flags, usage errors, and ending when the editor goes."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from nexo_pkg.cli import Interrupted
from nexo_pkg.lsp.server import _guarded, document_kind

COMMAND = [sys.executable, "-m", "nexo_pkg", "plugin", "lsp"]


def test_help_lists_the_options() -> None:
    done = subprocess.run(
        [*COMMAND, "--help"], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0
    assert "--debounce-ms" in done.stdout
    assert "--stdio" in done.stdout
    # Every kind of file it serves is named (docs/editors.md, "Which files").
    served = " ".join(done.stdout.split())
    for name in ("trusted_keys.toml", "nexo-plugins.toml", "nexo-plugins.lock", "extensions.yaml"):
        assert name in served
    assert "agents.d/*.yaml" in served


@pytest.mark.parametrize("args", [["--debounce-ms", "-5"], ["--debounce-ms", "x"], ["--bogus"]])
def test_usage_errors_exit_2_without_a_traceback(args: list[str]) -> None:
    done = subprocess.run(
        [*COMMAND, *args], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_closed_stdin_ends_the_server() -> None:
    """An editor that dies without `shutdown` must not leave the server running; the server
    ends with 1, the status of an `exit` that no `shutdown` preceded."""
    done = subprocess.run(
        [*COMMAND, "--stdio"], input=b"", capture_output=True, check=False, timeout=60
    )
    assert done.returncode == 1
    assert done.stdout == b""
    assert b"Traceback" not in done.stderr


def test_guarded_handlers_log_and_return_nothing(caplog: pytest.LogCaptureFixture) -> None:
    @_guarded
    def broken(value: int) -> int:
        raise ValueError(value)

    with caplog.at_level(logging.ERROR, logger="nexo_pkg.lsp.server"):
        assert broken(3) is None
    assert "broken failed" in caplog.text


@pytest.mark.parametrize(
    ("uri", "kind"),
    [
        ("file:///work/plugin/nexo-plugin.toml", "manifest"),
        ("file:///C:/My%20Plugins/x/nexo-plugin.toml", "manifest"),
        ("file:///work/plugin/plugin.toml", "manifest"),
        ("file:///work/plugin/myplugin.toml", None),
        ("file:///work/plugin/trusted_keys.toml", "policy"),
        ("file:///work/plugin/Cargo.toml", None),
        ("file:///work/nexo-plugin.toml.orig", None),
        ("untitled:Untitled-1", None),
        ("file:///etc/nexo/config/agents.d/ops.yaml", "daemon-config"),
        # Lint reads an upper-case suffix as YAML (NX235 says the daemon skips the file); the
        # editor shows the same diagnostics, not nothing.
        ("file:///etc/nexo/config/agents.d/ops.YAML", "daemon-config"),
        # So is a `.yml` drop-in, in any case (the daemon skips it; lint says so).
        ("file:///etc/nexo/config/agents.d/ops.yml", "daemon-config"),
        ("file:///etc/nexo/config/agents.d/ops.Yml", "daemon-config"),
        ("file:///etc/nexo/config/ops.yml", None),
        ("file:///etc/nexo/config/agents.d/ops.txt", None),
    ],
)
def test_document_kind_by_file_name(uri: str, kind: str | None) -> None:
    assert document_kind(uri) == kind


def test_every_signal_the_command_line_unwinds_on_ends_the_server_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SIGHUP, SIGUSR1 and the rest stop the server as Ctrl-C does (``_stop_now``), not by an
    interruption raised into pygls's loop, where it can be caught and the server go on."""
    import contextlib
    import signal

    from nexo_pkg.cli import HANGUP, SIGNAL_EXIT
    from nexo_pkg.cli import lsp as lsp_cli
    from nexo_pkg.cli.main import install_signal_handlers
    from nexo_pkg.lsp import server

    saved = {
        number: signal.getsignal(number)
        for number in range(1, signal.NSIG)
        if number not in (signal.SIGKILL, getattr(signal, "SIGSTOP", 0))
    }
    seen: dict[int, object] = {}

    def serve(debounce_seconds: float) -> int:
        del debounce_seconds
        seen.update({number: signal.getsignal(number) for number in SIGNAL_EXIT})
        return 0

    monkeypatch.setattr(server, "serve", serve)
    try:
        install_signal_handlers()
        expected = set(SIGNAL_EXIT)
        lsp_cli.lsp_command(stdio=True, debounce_ms=100)
    finally:
        for number, handler in saved.items():
            with contextlib.suppress(OSError, TypeError, ValueError):
                signal.signal(number, handler)
    if HANGUP is not None and saved.get(HANGUP) is not signal.SIG_IGN:
        assert HANGUP in expected  # (Windows has no SIGHUP)
    assert set(seen) == expected
    assert {number for number, handler in seen.items() if handler is not lsp_cli._stop_now} == set()


@pytest.mark.posix
@pytest.mark.parametrize("name", ["SIGHUP", "SIGUSR1", "SIGQUIT"])
def test_a_running_server_ends_at_once_on_each_unwound_signal(name: str) -> None:
    """The real server, initialized and waiting on its editor: a terminal closing (SIGHUP) or
    a SIGUSR1/SIGQUIT ends it at once with 128 + the signal's number and its one line, as
    Ctrl-C does, never left waiting on the editor's next message."""
    import json
    import signal
    import time

    number = getattr(signal, name)
    if name == "SIGHUP" and signal.getsignal(number) is signal.SIG_IGN:
        pytest.skip("started under nohup: the command line leaves SIGHUP ignored then")
    with subprocess.Popen(
        [*COMMAND, "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as server:
        assert server.stdin is not None
        assert server.stdout is not None
        assert server.stderr is not None
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
        ).encode()
        server.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        server.stdin.flush()
        # The answer: the server's loop is running, its reader waiting on stdin.
        header = server.stdout.readline()
        assert header.lower().startswith(b"content-length:")
        server.stdout.readline()
        assert b'"id": 1' in server.stdout.read(int(header.split(b":")[1]))
        time.sleep(0.5)  # settled: waiting on the editor's next message
        server.send_signal(number)
        try:
            code = server.wait(timeout=15)
        finally:
            if server.poll() is None:
                server.kill()
        stderr = server.stderr.read().decode()
    assert code == 128 + number, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1:] == [Interrupted(number).error_line]


def test_a_file_uri_with_a_nul_is_linted_as_a_buffer_that_names_no_file() -> None:
    """A `file:` URI holding `%00` names no path any file system takes: its buffer gets the
    diagnostics of a buffer that names no file, where linting it by that path raised
    `ValueError: embedded null byte` and the editor got none."""
    from nexo_pkg.lsp.server import NexoLanguageServer, _Snapshot

    text = '[plugin]\nid = "Bad Id"\nversion = "0.1.0"\nname = "x"\ndescription = "x"\n'
    found = [
        NexoLanguageServer._diagnose(_Snapshot(uri, "manifest", text, 1), "utf-16")
        for uri in ("file:///tmp/a%00b/nexo-plugin.toml", "untitled:nexo-plugin.toml")
    ]
    assert found[0]
    assert [(d.code, d.message) for d in found[0]] == [(d.code, d.message) for d in found[1]]
