"""Every way a connection can fail is one line in words, with kind ``network``: it names the
host and what was being fetched, never the HTTP library's class name, for a GitHub release
and for a registry, in text and in ``--json``. The servers are real loopback sockets that
misbehave at the byte level (reset, a head cut short, garbage status line, broken chunked
body, endless redirects, silence past the deadline)."""

from __future__ import annotations

import re
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.cli import CliResult, clean_env, nexo
from support.stderr import without_notes
from support.tarballs import write_plugin

Behaviour = Callable[[socket.socket], None]

# Names of exception classes (httpx's, http.client's, the socket's) that must never be shown.
CLASS_NAME = re.compile(
    r"\b(?:[A-Z][A-Za-z]*(?:Error|Timeout|Exception|Disconnected)|IncompleteRead|BadStatusLine"
    r"|LineTooLong)\b"
)


def _reset(connection: socket.socket) -> None:
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def _garbage_status_line(connection: socket.socket) -> None:
    connection.sendall(b"HELLO THERE\r\n\r\n")


def _bad_chunked_body(connection: socket.socket) -> None:
    connection.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
        b"\r\nZZ\r\n{}\r\n0\r\n\r\n"
    )


def _head_cut_in_a_header(connection: socket.socket) -> None:
    # http.client alone reads this as a complete 200 answer with an empty body.
    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Le")


def _head_cut_after_the_status_line(connection: socket.socket) -> None:
    connection.sendall(b"HTTP/1.1 200 OK\r\n")


def _head_cut_in_the_status_line(connection: socket.socket) -> None:
    # http.client refuses it as a malformed status line before the head's end is looked at.
    connection.sendall(b"HTTP/1.1 2")


def _head_cut_after_a_carriage_return(connection: socket.socket) -> None:
    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r")


def _garbage_status_line_cut(connection: socket.socket) -> None:
    connection.sendall(b"HELLO")


def _redirect_loop(connection: socket.socket) -> None:
    connection.sendall(b"HTTP/1.1 302 Found\r\nLocation: /again\r\nContent-Length: 0\r\n\r\n")


def _silence(connection: socket.socket) -> None:
    time.sleep(5)


BEHAVIOURS: dict[str, tuple[Behaviour, str]] = {
    # behaviour, and the words the line must hold besides the host
    "reset": (_reset, "broke during the answer"),
    "garbage-status-line": (_garbage_status_line, "does not start with an HTTP status line"),
    "bad-chunked-body": (_bad_chunked_body, "chunked body broke off or is malformed"),
    "head-cut-in-a-header": (_head_cut_in_a_header, "ended during the answer's head"),
    "head-cut-after-the-status-line": (
        _head_cut_after_the_status_line,
        "ended during the answer's head",
    ),
    "head-cut-in-the-status-line": (
        _head_cut_in_the_status_line,
        "ended during the answer's head",
    ),
    "head-cut-after-a-carriage-return": (
        _head_cut_after_a_carriage_return,
        "ended during the answer's head",
    ),
    "garbage-status-line-cut": (
        _garbage_status_line_cut,
        "does not start with an HTTP status line (it starts 'HELLO')",
    ),
    "redirect-loop": (_redirect_loop, "more than 5 redirects"),
    "silence-past-the-deadline": (_silence, "no complete answer"),
}


class RawServer:
    """A loopback socket server that reads each request and then does ``behaviour``."""

    def __init__(self, behaviour: Behaviour, address: str = "127.0.0.1") -> None:
        self.behaviour = behaviour
        self.address = address
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        self.listener = socket.create_server((address, 0), family=family)
        self.port = self.listener.getsockname()[1]
        self.accepted = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def host(self) -> str:
        # An IPv6 address is bracketed before its port, as in a URL.
        return (
            f"[{self.address}]:{self.port}"
            if ":" in self.address
            else f"{self.address}:{self.port}"
        )

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        with connection:
            try:
                connection.recv(65536)
                self.behaviour(connection)
            except OSError:
                pass

    def close(self) -> None:
        self.listener.close()


@pytest.fixture(params=list(BEHAVIOURS), ids=list(BEHAVIOURS))
def server(request: pytest.FixtureRequest) -> Iterator[tuple[RawServer, str]]:
    behaviour, words = BEHAVIOURS[request.param]
    running = RawServer(behaviour)
    try:
        yield running, words
    finally:
        running.close()


def _env(tmp_path: Path) -> dict[str, str]:
    return clean_env(
        NEXO_HOME=str(tmp_path / "home"),
        NEXO_HTTP_RETRY_BASE_MS="1",
        NEXO_HTTP_TIMEOUT="2",
    )


def _assert_one_line_in_words(result: CliResult, host: str, what: str, words: str) -> str:
    lines = without_notes(result.stderr).splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("error: "), line
    assert what in line, line
    assert host in line, line
    assert words in line, line
    assert not CLASS_NAME.search(line), line
    assert "Traceback" not in result.stderr
    return line


def _install_from_github(running: RawServer, dest: Path, *extra: str) -> CliResult:
    """``install acme/hello`` with ``running`` as the GitHub API, into ``dest``."""
    return nexo(
        "plugin", "install", "acme/hello", "--github-api-url", f"http://{running.host}",
        "--dest", str(dest), "--yes", *extra,
        env=_env(dest.parent), in_process=True,
    )  # fmt: skip


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_release_that_cannot_be_fetched_is_told_in_words(
    server: tuple[RawServer, str], tmp_path: Path, as_json: bool
) -> None:
    running, words = server
    dest = tmp_path / "root"
    started = time.monotonic()
    result = _install_from_github(running, dest, *(["--json"] if as_json else []))
    assert time.monotonic() - started < 15
    assert result.code == 1, (result.stdout, result.stderr)
    line = _assert_one_line_in_words(result, running.host, "latest release of acme/hello", words)
    if as_json:
        document = result.document
        assert document["ok"] is False
        assert document["kind"] == "network"
        assert line == f"error: {document['error']} [network]"
    assert not dest.exists() or not any(dest.iterdir())


def test_a_registry_that_cannot_be_reached_is_told_in_words(
    server: tuple[RawServer, str], tmp_path: Path
) -> None:
    running, words = server
    dest = tmp_path / "root"
    result = nexo(
        "plugin",
        "install",
        f"oci://{running.host}/plugins/echo:1.0.0",
        "--plain-http",
        "--dest",
        str(dest),
        "--yes",
        "--json",
        env=_env(tmp_path),
        in_process=True,
    )
    assert result.code == 1, (result.stdout, result.stderr)
    assert result.document["kind"] == "network", result.document
    line = _assert_one_line_in_words(result, running.host, "", words)
    # What was being fetched: the registry's API itself, or the tag's manifest.
    assert "cannot reach registry" in line or "manifest 1.0.0" in line, line
    # The registry's host is named once: what was being fetched names it already. (A redirect
    # loop also shows the last URL it was sent to, which is another piece of information.)
    if words != "more than 5 redirects":
        assert line.count(running.host) == 1, line
    assert not dest.exists() or not any(dest.iterdir())


def _ipv6_loopback() -> bool:
    try:
        with socket.create_server(("::1", 0), family=socket.AF_INET6):
            return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback on this host")
@pytest.mark.parametrize("behaviour", ["reset", "silence-past-the-deadline"])
def test_an_ipv6_host_is_named_with_its_address_bracketed(behaviour: str, tmp_path: Path) -> None:
    # `::1:PORT` would read as an address of nine groups: the host is named as a URL names it.
    running = RawServer(BEHAVIOURS[behaviour][0], "::1")
    try:
        result = _install_from_github(running, tmp_path / "root")
    finally:
        running.close()
    assert result.code == 1, (result.stdout, result.stderr)
    _assert_one_line_in_words(
        result, f"'[::1]:{running.port}'", "latest release of acme/hello", BEHAVIOURS[behaviour][1]
    )


def _registry_command(command: str, reference: str, tmp_path: Path) -> list[str]:
    """``nexo plugin COMMAND`` against the registry ``reference`` (``oci://HOST/acme/hello``)."""
    if command == "install":
        return ["install", f"{reference}:1.0.0", "--dest", str(tmp_path / "root"), "--yes"]
    if command == "lock":
        (tmp_path / "nexo-plugins.toml").write_text(
            f'[plugins]\nhello = {{ source = "{reference}", version = "1.0.0" }}\n'
        )
        return ["lock", "--file", str(tmp_path / "nexo-plugins.toml")]
    if command == "push":
        write_plugin(tmp_path / "dist", "hello", "1.0.0")
        return ["push", str(tmp_path / "dist"), reference]
    return ["mirror", f"{reference}:1.0.0", "oci://127.0.0.1:9/copy/hello"]


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback on this host")
@pytest.mark.parametrize("command", ["install", "lock", "push", "mirror"])
@pytest.mark.parametrize("behaviour", ["refused", "reset"])
def test_an_ipv6_registry_host_is_named_once(command: str, behaviour: str, tmp_path: Path) -> None:
    """A registry at an IPv6 address that refuses the connection (nothing listens on its
    port) or resets it: each command's error line names ``[::1]:PORT`` once, in what it was
    reaching, and not again in the words of the failure."""
    if behaviour == "refused":
        with socket.create_server(("::1", 0), family=socket.AF_INET6) as closed:
            port = closed.getsockname()[1]
        running = None
    else:
        running = RawServer(_reset, "::1")
        port = running.port
    host = f"[::1]:{port}"
    try:
        args = _registry_command(command, f"oci://{host}/acme/hello", tmp_path)
        result = nexo("plugin", *args, "--plain-http", env=_env(tmp_path), in_process=True)
    finally:
        if running is not None:
            running.close()
    assert result.code == 1, (result.stdout, result.stderr)
    words = "cannot connect (Connection refused)" if behaviour == "refused" else "the connection"
    line = _assert_one_line_in_words(result, host, "", words)
    assert line.count(host) == 1, line


PRESIGNED_QUERY = "X-Amz-Signature=f00dfeed5ec2e7&sig=s1gnature&token=t0ken-value"


def _presigned_redirect_loop(connection: socket.socket) -> None:
    # Every answer sends the client on to a presigned-looking download URL.
    connection.sendall(
        b"HTTP/1.1 302 Found\r\nLocation: /download/hello.tar.gz?"
        + PRESIGNED_QUERY.encode()
        + b"#part\r\nContent-Length: 0\r\n\r\n"
    )


def _assert_no_credential(text: str) -> None:
    for secret in ("f00dfeed5ec2e7", "s1gnature", "t0ken-value", "X-Amz-Signature", "#part"):
        assert secret not in text, text


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_too_many_redirects_names_the_last_url_without_its_query(
    tmp_path: Path, as_json: bool
) -> None:
    # A presigned download URL carries its credential in the query string: an error line
    # (which ends up in CI logs) names the URL without the query and the fragment.
    running = RawServer(_presigned_redirect_loop)
    try:
        result = _install_from_github(running, tmp_path / "root", *(["--json"] if as_json else []))
    finally:
        running.close()
    assert result.code == 1, (result.stdout, result.stderr)
    line = _assert_one_line_in_words(
        result, running.host, "latest release of acme/hello", "more than 5 redirects"
    )
    assert line.endswith(
        f"(the last to 'http://{running.host}/download/hello.tar.gz') [network]"
    ), line
    _assert_no_credential(result.stderr + result.stdout)
    if as_json:
        assert result.document["kind"] == "network"


def test_a_refused_redirect_names_both_urls_without_their_query(tmp_path: Path) -> None:
    # A loopback --plain-http registry that redirects to plain http on another host is
    # refused before any connection there; the refusal names the URL without its query, in
    # the line and in the JSON details.
    def redirect_away(connection: socket.socket) -> None:
        connection.sendall(
            b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://192.0.2.7/blob?"
            + PRESIGNED_QUERY.encode()
            + b"#part\r\nContent-Length: 0\r\n\r\n"
        )

    running = RawServer(redirect_away)
    try:
        result = nexo(
            "plugin", "install", f"oci://{running.host}/plugins/echo:1.0.0", "--plain-http",
            "--dest", str(tmp_path / "root"), "--yes", "--json",
            env=_env(tmp_path), in_process=True,
        )  # fmt: skip
    finally:
        running.close()
    assert result.code == 1, (result.stdout, result.stderr)
    assert result.document["kind"] == "network", result.document
    assert (
        "to 'http://192.0.2.7/blob': plain http to a host other than this machine"
        in (result.document["error"])
    ), result.document
    _assert_no_credential(result.stderr + result.stdout)
    assert not (tmp_path / "root").exists() or not any((tmp_path / "root").iterdir())
