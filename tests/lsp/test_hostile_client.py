"""A careless or hostile editor client: every request is answered, no message size is trusted.

The real server runs as a subprocess (`nexo plugin lsp`) and is spoken to over its pipes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import IO, Any

import pytest

URI = "file:///tmp/project/nexo-plugin.toml"
TEXT = '[plugin]\nid = "weather"\nversion = "0.1.0"\n'


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def read_message(stream: IO[bytes]) -> dict[str, Any]:
    length = 0
    while True:
        line = stream.readline()
        assert line, "the server closed its output"
        if line == b"\r\n":
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    document: dict[str, Any] = json.loads(stream.read(length))
    return document


def response_to(stream: IO[bytes], request_id: int | None) -> dict[str, Any]:
    """The next response with ``request_id`` (notifications in between are skipped)."""
    for _ in range(50):
        message = read_message(stream)
        if "method" not in message and message.get("id") == request_id:
            return message
    raise AssertionError(f"no response to {request_id}")


def messages_until(stream: IO[bytes], request_id: int) -> list[dict[str, Any]]:
    """Every message up to and including the response to ``request_id``."""
    answers = [read_message(stream)]
    while answers[-1].get("id") != request_id or "method" in answers[-1]:
        answers.append(read_message(stream))
    return answers


def errors_then_answer(server: subprocess.Popen[bytes], raw: bytes) -> list[tuple[Any, int]]:
    """Write ``raw`` and then a hover request; return the ``(id, code)`` of the errors answered
    before the hover's response, once that response (a result: the session went on) came."""
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(raw + frame(_hover(99)))
    server.stdin.flush()
    answers = messages_until(server.stdout, 99)
    assert "result" in answers[-1]
    return [(answer["id"], answer["error"]["code"]) for answer in answers if "error" in answer]


def spawn(*arguments: str) -> subprocess.Popen[bytes]:
    """`nexo plugin lsp ARGUMENTS` with all three pipes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEXO_")}
    return subprocess.Popen(
        [sys.executable, "-m", "nexo_pkg", "plugin", "lsp", *arguments],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


@pytest.fixture
def server() -> Iterator[subprocess.Popen[bytes]]:
    process = spawn()
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(
        frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    )
    process.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    process.stdin.write(
        frame(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {
                    "textDocument": {
                        "uri": URI,
                        "languageId": "toml",
                        "version": 1,
                        "text": TEXT,
                    }
                },
            }
        )
    )
    process.stdin.flush()
    assert "result" in response_to(process.stdout, 1)
    yield process
    if process.poll() is None:
        process.kill()
    process.communicate(timeout=10)


@pytest.mark.parametrize("character", [-1, 2**31, 2**31 - 1])
def test_every_position_gets_an_answer(server: subprocess.Popen[bytes], character: int) -> None:
    assert server.stdin is not None
    assert server.stdout is not None
    for request_id, method in ((7, "textDocument/hover"), (8, "textDocument/completion")):
        server.stdin.write(
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": method,
                    "params": {
                        "textDocument": {"uri": URI},
                        "position": {"line": 1, "character": character},
                    },
                }
            )
        )
        server.stdin.flush()
        answer = response_to(server.stdout, request_id)
        if 0 <= character < 2**31:
            assert "error" not in answer, answer
        else:
            assert answer["error"]["code"] == -32602, answer
    # The server is still serving.
    server.stdin.write(frame({"jsonrpc": "2.0", "id": 9, "method": "shutdown"}))
    server.stdin.flush()
    assert "result" in response_to(server.stdout, 9)


def test_a_huge_content_length_is_refused_and_the_server_stops(
    server: subprocess.Popen[bytes],
) -> None:
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(b"Content-Length: 1000000000000\r\n\r\n{")
    server.stdin.flush()
    answer = response_to(server.stdout, None)
    assert answer["error"]["code"] == -32600
    _, err = server.communicate(timeout=30)
    assert server.returncode == 0
    assert b"MemoryError" not in err
    assert b"Traceback" not in err


def _stderr_lines(process: subprocess.Popen[bytes]) -> list[bytes]:
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(frame({"jsonrpc": "2.0", "id": 99, "method": "shutdown"}))
    process.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
    process.stdin.flush()
    _, err = process.communicate(timeout=30)
    return err.splitlines()


@pytest.mark.parametrize(
    ("uri", "text"),
    [
        (URI, "[plugin]\nid = " + "[" * 50_000 + "]" * 50_000 + "\n"),
        ("file:///tmp/project/nexo-plugins.lock", "x = " + "{a = " * 30_000 + "1" + "}" * 30_000),
    ],
)
@pytest.mark.timeout(90)  # before one-line logging, 100 KB tracebacks filled the pipe
def test_hover_in_a_document_nested_past_the_parser_logs_one_line(
    server: subprocess.Popen[bytes], uri: str, text: str
) -> None:
    """Answered, and what the server logs is one line per failure, not a traceback of the
    parser's recursion (over 100 KB a request)."""
    assert server.stdin is not None
    assert server.stdout is not None
    opened = {"uri": uri, "languageId": "toml", "version": 1, "text": text}
    server.stdin.write(
        frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
               "params": {"textDocument": opened}})
    )  # fmt: skip
    for request_id in (21, 22, 23):
        server.stdin.write(
            frame({"jsonrpc": "2.0", "id": request_id, "method": "textDocument/hover",
                   "params": {"textDocument": {"uri": uri},
                              "position": {"line": 1, "character": 10}}})
        )  # fmt: skip
        server.stdin.flush()
        assert "error" not in response_to(server.stdout, request_id)
    lines = _stderr_lines(server)
    assert not any(b"Traceback" in line for line in lines), lines[:5]
    assert sum(len(line) for line in lines) < 16 * 1024


def test_malformed_messages_are_logged_on_one_line_each(
    server: subprocess.Popen[bytes],
) -> None:
    assert server.stdin is not None
    assert server.stdout is not None
    for body in (b"{not json", b'{"jsonrpc": "2.0", "id": 5, "method": 7}', b"[1, 2"):
        server.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    server.stdin.write(frame({"jsonrpc": "2.0", "id": 31, "method": "shutdown"}))
    server.stdin.flush()
    assert "result" in response_to(server.stdout, 31)
    lines = _stderr_lines(server)
    assert not any(b"Traceback" in line for line in lines), lines[:5]
    assert 1 <= len(lines) <= 6, lines


@pytest.mark.parametrize("arguments", [[], ["--verbose"]], ids=["default", "verbose"])
@pytest.mark.parametrize("then_exit", [False, True], ids=["no-exit", "exit"])
def test_a_client_that_quits_without_awaiting_shutdown_leaves_a_quiet_log(
    arguments: list[str], then_exit: bool
) -> None:
    """As Neovim 0.11 does: `shutdown` (maybe `exit`) is sent and the pipes are closed at
    once, while replies and diagnostics are still on their way. The server ends with status 0
    and logs no error, no BrokenPipe, no traceback (it used to log one per message)."""
    process = spawn(*arguments)
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    process.stdin.write(
        frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    )
    process.stdin.flush()
    assert "result" in response_to(process.stdout, 1)
    messages: list[dict[str, Any]] = [{"jsonrpc": "2.0", "method": "initialized", "params": {}}]
    for index in range(5):
        uri = f"file:///tmp/project{index}/nexo-plugin.toml"
        opened = {"uri": uri, "languageId": "toml", "version": 1, "text": TEXT + "naem = 1\n"}
        messages.append(
            {"jsonrpc": "2.0", "method": "textDocument/didOpen",
             "params": {"textDocument": opened}}
        )  # fmt: skip
        messages.append(
            {"jsonrpc": "2.0", "id": 10 + index, "method": "textDocument/hover",
             "params": {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 1}}}
        )  # fmt: skip
    messages.append({"jsonrpc": "2.0", "id": 99, "method": "shutdown"})
    if then_exit:
        messages.append({"jsonrpc": "2.0", "method": "exit"})
    process.stdout.close()  # the client is gone before any of the answers
    process.stdin.write(b"".join(frame(message) for message in messages))
    process.stdin.close()
    assert process.wait(timeout=60) == 0
    log = process.stderr.read().decode()
    process.stderr.close()
    for word in ("Traceback", "BrokenPipe", "ERROR", "Exception ignored", "Broken pipe"):
        assert word not in log, log[-2000:]


def _initialize() -> bytes:
    return frame(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    )


def _hover(request_id: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "textDocument/hover",
        "params": {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}},
    }


def test_a_body_that_is_not_json_gets_a_parse_error_and_the_session_goes_on(
    server: subprocess.Popen[bytes],
) -> None:
    """JSON-RPC 2.0: invalid JSON is answered `-32700` with `"id": null` (not a pop-up)."""
    assert server.stdin is not None
    assert server.stdout is not None
    body = b"{not json"
    server.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    server.stdin.write(frame(_hover(7)))
    server.stdin.flush()
    answers = messages_until(server.stdout, 7)
    [parse_error] = [answer for answer in answers if "error" in answer]
    assert parse_error == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": parse_error["error"]["message"]},
    }
    assert not [answer for answer in answers if answer.get("method") == "window/showMessage"]
    assert "result" in answers[-1]


def test_requests_before_initialize_are_refused_and_notifications_dropped() -> None:
    """LSP: before `initialize` a request gets `-32002` and a notification is dropped."""
    process = spawn()
    assert process.stdin is not None
    assert process.stdout is not None
    opened = {"uri": URI, "languageId": "toml", "version": 1, "text": "naem = 1\n"}
    process.stdin.write(frame(_hover(3)))
    process.stdin.write(
        frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
               "params": {"textDocument": opened}})
    )  # fmt: skip
    process.stdin.write(_initialize())
    process.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    process.stdin.write(frame(_hover(4)))
    process.stdin.flush()
    try:
        first = read_message(process.stdout)
        assert first["id"] == 3
        assert first["error"]["code"] == -32002
        assert "result" in response_to(process.stdout, 1)
        # The document opened too early was dropped: nothing to hover in.
        assert response_to(process.stdout, 4)["result"] is None
    finally:
        process.kill()
        process.communicate(timeout=10)


def test_requests_after_shutdown_are_answered_invalid(server: subprocess.Popen[bytes]) -> None:
    """LSP: after `shutdown` a request is an error (`-32600`), not left unanswered."""
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(frame({"jsonrpc": "2.0", "id": 40, "method": "shutdown"}))
    server.stdin.write(frame(_hover(41)))
    server.stdin.flush()
    assert "result" in response_to(server.stdout, 40)
    assert response_to(server.stdout, 41)["error"]["code"] == -32600


@pytest.mark.parametrize("shutdown", [True, False], ids=["after-shutdown", "without-shutdown"])
def test_exit_status_follows_shutdown(shutdown: bool) -> None:
    """LSP: `exit` ends the server with 0 after `shutdown`, with 1 without it."""
    process = spawn()
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(_initialize())
    process.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    process.stdin.flush()
    assert "result" in response_to(process.stdout, 1)
    if shutdown:
        process.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        process.stdin.flush()
        assert "result" in response_to(process.stdout, 2)
    process.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
    process.stdin.flush()
    _, log = process.communicate(timeout=30)
    assert process.returncode == (0 if shutdown else 1)
    assert b"Traceback" not in log


@pytest.mark.parametrize(
    "header",
    [b"content-length: %d\r\n", b"CONTENT-LENGTH:%d\r\n", b"Content-Length:  %d \r\n"],
    ids=["lower-case", "no-space", "extra-spaces"],
)
def test_a_content_length_header_in_another_spelling_is_read(
    server: subprocess.Popen[bytes], header: bytes
) -> None:
    """Header names are case-insensitive (HTTP's rule, which LSP's base protocol follows);
    such a header used to be ignored, and with it every later message of the session."""
    assert server.stdin is not None
    assert server.stdout is not None
    body = json.dumps(_hover(61)).encode()
    server.stdin.write(header % len(body) + b"\r\n" + body)
    server.stdin.write(frame(_hover(62)))
    server.stdin.flush()
    assert "result" in response_to(server.stdout, 61)
    assert "result" in response_to(server.stdout, 62)


def test_a_content_length_that_is_not_a_number_is_refused_and_the_next_message_read(
    server: subprocess.Popen[bytes],
) -> None:
    assert server.stdin is not None
    assert server.stdout is not None
    body = json.dumps(_hover(63)).encode()
    assert errors_then_answer(server, b"Content-Length: many\r\n\r\n" + body) == [(None, -32700)]


@pytest.mark.parametrize(
    ("message", "expected_id"),
    [
        ({**_hover(80), "jsonrpc": "1.0"}, 80),
        ({key: value for key, value in _hover(81).items() if key != "jsonrpc"}, 81),
        ([_hover(82)], None),
    ],
    ids=["version-1.0", "no-version", "batch"],
)
def test_what_is_not_json_rpc_2_is_answered_invalid_request(
    server: subprocess.Popen[bytes], message: Any, expected_id: int | None
) -> None:
    """JSON-RPC 2.0: an invalid request gets `-32600` (it used to get nothing, and the
    client waited for ever); the session goes on."""
    assert server.stdin is not None
    assert server.stdout is not None
    body = json.dumps(message).encode()
    raw = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    assert errors_then_answer(server, raw) == [(expected_id, -32600)]
