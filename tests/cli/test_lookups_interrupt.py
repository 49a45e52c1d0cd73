"""Ctrl-C or SIGTERM to ``outdated --jobs`` or ``upgrade --all --jobs`` while the GitHub API
has stopped answering: the run stops its requests, so the lookups under way end at once
instead of waiting out the request timeout (``--timeout``, far beyond the test's patience),
and the command ends with the signal's line and exit code."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.github_server import GitHubServer
from support.stand_in import use_stand_in
from support.tarballs import release_assets

IDS = ("alpha", "bravo", "charlie")


class _Silent:
    """A server on 127.0.0.1 that takes connections and never answers; counts them."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.listener.settimeout(0.05)
        self.taken: list[socket.socket] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def _accept(self) -> None:
        while not self.done.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.taken.append(connection)

    def close(self) -> None:
        self.done.set()
        self.thread.join(5)
        for connection in self.taken:
            connection.close()
        self.listener.close()


@pytest.fixture
def silent() -> Iterator[_Silent]:
    running = _Silent()
    try:
        yield running
    finally:
        running.close()


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is POSIX's")
@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("command", [("outdated",), ("upgrade", "--all")], ids=" ".join)
def test_a_signal_stops_the_lookups_under_way(
    *,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    server: GitHubServer,
    silent: _Silent,
    sent: int,
    command: tuple[str, ...],
) -> None:
    home = use_stand_in(monkeypatch, tmp_path, server)
    for plugin_id in IDS:
        server.publish("acme", plugin_id, "v1.0.0", release_assets(plugin_id, "1.0.0"))
        assert nexo("plugin", "install", f"acme/{plugin_id}", in_process=True).code == 0
    env = clean_env(NEXO_HOME=str(home), NEXO_GITHUB_API_BASE=silent.url, NO_PROXY="127.0.0.1")
    process = subprocess.Popen(
        [
            sys.executable, "-m", "nexo_pkg", "plugin", *command, "--json",
            "--jobs", "4", "--timeout", "600",
        ],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while len(silent.taken) < len(IDS):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the lookups never reached the API"
            time.sleep(0.01)
        process.send_signal(sent)
        try:
            out, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            pytest.fail(f"{command[0]} waited for its requests' timeout after the signal")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 128 + sent, err
    assert "Traceback" not in err
    document = json.loads(out)
    assert (document["ok"], document["kind"]) == (False, "interrupted")
    assert err.strip().splitlines()[-1] == f"error: {document['error']} [interrupted]"
