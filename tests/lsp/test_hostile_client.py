"""A careless or hostile editor client: every request is answered, no message size is trusted.

The real server runs as a subprocess (`nexo plugin lsp`) and is spoken to over its pipes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
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


def spawn(*arguments: str, cwd: Path | None = None) -> subprocess.Popen[bytes]:
    """`nexo plugin lsp ARGUMENTS` with all three pipes (in ``cwd``, the daemon's working
    directory for the microapp search paths of its config files)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEXO_")}
    return subprocess.Popen(
        [sys.executable, "-m", "nexo_pkg", "plugin", "lsp", *arguments],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
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


def test_a_refused_position_is_logged_as_what_was_wrong_with_it(
    server: subprocess.Popen[bytes],
) -> None:
    """pygls logs a refused message with the traceback of an exception group: the one line
    kept of it says which value was wrong, not the group's box drawing."""
    assert server.stdin is not None
    assert server.stdout is not None
    position = {"line": 1, "character": -1}
    params = {"textDocument": {"uri": URI}, "position": position}
    server.stdin.write(
        frame({"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": params})
    )
    server.stdin.flush()
    assert response_to(server.stdout, 7)["error"]["code"] == -32602
    (line,) = [line for line in _stderr_lines(server) if b"Unable to deserialize" in line]
    assert line.endswith(
        b"Unable to deserialize message (ValueError: Position.character should be in range"
        b" [0:2147483647], but was -1.)"
    ), line


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
    # The session ended without `shutdown`: not a clean end (LSP's status 1).
    assert server.returncode == 1
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


def _raw(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


@pytest.mark.parametrize(
    ("body", "expected_id"),
    [
        (b'{"jsonrpc": "2.0", "id": 70, "method": 7}', 70),
        (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "shutdown"}', None),
        (b'{"jsonrpc": "2.0", "id": [71], "method": "shutdown"}', None),
        (b'{"jsonrpc": "2.0", "id": true, "method": "shutdown"}', None),
        (b'{"jsonrpc": "2.0", "id": 1e400, "method": "custom/x", "params": {}}', None),
        (b'{"jsonrpc": "2.0", "id": 72}', 72),
        (b'{"jsonrpc": "2.0"}', None),
        (b'{"jsonrpc": "2.0", "result": 1}', None),
        (b'{"jsonrpc": "2.0", "method": 1, "params": "bar"}', None),
        (b"42", None),
        (b'"shutdown"', None),
        (b"null", None),
    ],
    ids=[
        "method-not-a-string",
        "id-an-object",
        "id-an-array",
        "id-a-boolean",
        "id-past-a-float",
        "id-alone",
        "version-alone",
        "result-without-id",
        "json-rpc-spec-example",
        "a-number",
        "a-string",
        "null",
    ],
)
def test_an_invalid_request_object_is_answered_invalid_request_without_traceback(
    server: subprocess.Popen[bytes], body: bytes, expected_id: int | None
) -> None:
    """JSON-RPC 2.0: what is not a valid Request object (a method that is no string, an id
    that is no string or number, neither a method nor a result) gets `-32600`, under its id
    when that id is valid and `null` otherwise. It used to get `-32603` with a Python
    traceback in `data`, a `window/showMessage` pop-up, or nothing at all; the session goes
    on (the hover after it is answered) and nothing reaches the client's log window."""
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(_raw(body) + frame(_hover(99)))
    server.stdin.flush()
    answers = messages_until(server.stdout, 99)
    assert "result" in answers[-1]
    errors = [answer for answer in answers if "error" in answer]
    assert [(error["id"], error["error"]["code"]) for error in errors] == [(expected_id, -32600)]
    assert "data" not in errors[0]["error"], errors[0]
    assert not [answer for answer in answers if answer.get("method") == "window/showMessage"]


def test_a_method_without_params_is_answered_as_json_rpc_allows_omitting_them(
    server: subprocess.Popen[bytes],
) -> None:
    """JSON-RPC 2.0: `params` MAY be omitted. A request for a method the server does not know
    is answered `-32601` (method not found), not `-32603`; a notification the server does not
    know is dropped quietly, not shown to the user as "Error in server"."""
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(
        _raw(b'{"jsonrpc": "2.0", "method": "custom/notice"}')
        + _raw(b'{"jsonrpc": "2.0", "id": 73, "method": "custom/question"}')
        + frame(_hover(99))
    )
    server.stdin.flush()
    # (The diagnostics the server publishes for the open document may come in between.)
    answers = [m for m in messages_until(server.stdout, 99) if "id" in m]
    assert "result" in answers[-1]
    assert answers[:-1] == [{"jsonrpc": "2.0", "id": 73, "error": answers[0]["error"]}]
    assert answers[0]["error"]["code"] == -32601


def test_a_notification_with_params_of_the_wrong_shape_is_logged_not_shown(
    server: subprocess.Popen[bytes],
) -> None:
    """A notification is never answered (JSON-RPC 2.0); one whose params do not fit is a
    line in the server log, not an "Error in server" pop-up in the editor."""
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(
        _raw(b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"x": 1}}')
        + frame(_hover(99))
    )
    server.stdin.flush()
    answers = messages_until(server.stdout, 99)
    assert answers == [answers[-1]], answers
    assert "result" in answers[-1]


def test_a_nested_object_with_a_jsonrpc_key_is_data_not_a_message() -> None:
    """`initializationOptions` is the client's own JSON: an object in it that happens to have
    a `jsonrpc` key used to be read as a message of its own, and `initialize` was never
    answered (the client waited for ever)."""
    process = spawn()
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        process.stdin.write(
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "capabilities": {},
                        "initializationOptions": {"proxy": {"jsonrpc": "2.0"}},
                    },
                }
            )
        )
        process.stdin.flush()
        answer = read_message(process.stdout)
        assert answer["id"] == 1
        assert "capabilities" in answer["result"]
    finally:
        process.kill()
        process.communicate(timeout=10)


def test_a_second_initialize_is_refused_and_the_session_keeps_its_encoding() -> None:
    """LSP: `initialize` is sent once. A second one is answered `-32600` (as tower-lsp's
    `Initialize` layer does, src/service/layers.rs) and changes nothing: it used to be
    answered again and to reset the negotiated UTF-8 positions to UTF-16 under the client."""
    process = spawn()
    assert process.stdin is not None
    assert process.stdout is not None
    text = '[plugin]\nid = "wé🙂ather"\n'
    params = {"capabilities": {"general": {"positionEncodings": ["utf-8"]}}}
    try:
        process.stdin.write(
            frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        )
        process.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        process.stdin.write(_initialize().replace(b'"id": 1', b'"id": 2'))
        process.stdin.write(
            frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                   "params": {"textDocument": {"uri": URI, "languageId": "toml",
                                               "version": 1, "text": text}}})
        )  # fmt: skip
        process.stdin.flush()
        first = response_to(process.stdout, 1)
        assert first["result"]["capabilities"]["positionEncoding"] == "utf-8"
        assert response_to(process.stdout, 2)["error"]["code"] == -32600
        published = read_message(process.stdout)
        while published.get("method") != "textDocument/publishDiagnostics":
            published = read_message(process.stdout)
        [invalid_id] = [
            item for item in published["params"]["diagnostics"] if item["code"] == "NX100"
        ]
        # `"wé🙂ather"` is 14 UTF-8 bytes from byte 5 (it would be 11 UTF-16 units).
        assert invalid_id["range"] == {
            "start": {"line": 1, "character": 5},
            "end": {"line": 1, "character": 19},
        }
    finally:
        process.kill()
        process.communicate(timeout=10)


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"jsonrpc": "2.0", "id": 74, "method": "textDocument/hover", "params": '
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}",
    ],
    ids=["nested-array", "nested-params"],
)
def test_a_body_nested_past_the_json_reader_is_a_parse_error(
    server: subprocess.Popen[bytes], body: bytes
) -> None:
    """JSON nested deeper than the reader goes cannot be read: `-32700` under a null id, as
    for a body that is not JSON (it used to pop up "Error in server: maximum recursion depth
    exceeded" in the editor and leave the request unanswered); the session goes on."""
    assert errors_then_answer(server, _raw(body)) == [(None, -32700)]


@pytest.mark.parametrize(
    "raw",
    [
        b"Content-Length: 0\r\n\r\n",
        _raw(b'{"jsonrpc": "2.0", "id": 75, "method": "textDocument/hover", "params": '
             b'{"textDocument": {"uri": "file:///x"}, "position": {"line": NaN, "character": 0}}}'),
        _raw(b'{"jsonrpc": "2.0", "id": 76, "method": "custom/x", "params": {"a": Infinity}}'),
        _raw(b'{"jsonrpc": "2.0", "id": 77, "method": "custom/x", "params": [-Infinity]}'),
        _raw(b"NaN"),
    ],
    ids=["empty-body", "nan", "infinity", "minus-infinity", "bare-nan"],
)  # fmt: skip
def test_a_body_that_is_no_json_text_is_a_parse_error(
    server: subprocess.Popen[bytes], raw: bytes
) -> None:
    """RFC 8259 has no `NaN` or `Infinity`, and an empty body is no JSON text: each is
    answered `-32700` under a null id, as a body that is not JSON (Python's reader took the
    literals, and an empty message was skipped without a word); the session goes on."""
    assert errors_then_answer(server, raw) == [(None, -32700)]


_SHUTDOWN_80 = '{"jsonrpc": "2.0", "id": 80, "method": "shutdown"}'


@pytest.mark.parametrize("charset", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le"])
def test_a_body_in_utf_16_or_utf_32_is_a_parse_error_and_not_carried_out(
    server: subprocess.Popen[bytes], charset: str
) -> None:
    """LSP's base protocol has one charset, UTF-8. Python's JSON reader detects UTF-16 and
    UTF-32 (with or without a byte order mark) and took them: a `shutdown` in UTF-16 shut the
    server down. It is answered `-32700` under a null id, as a body that is not JSON, and the
    session goes on (a later `shutdown` in UTF-8 is answered)."""
    assert errors_then_answer(server, _raw(_SHUTDOWN_80.encode(charset))) == [(None, -32700)]
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(frame({"jsonrpc": "2.0", "id": 81, "method": "shutdown"}))
    server.stdin.flush()
    assert response_to(server.stdout, 81) == {"jsonrpc": "2.0", "id": 81, "result": None}


def test_a_utf_8_body_with_a_byte_order_mark_is_read(server: subprocess.Popen[bytes]) -> None:
    """RFC 8259 lets a reader ignore a UTF-8 byte order mark, as vscode-jsonrpc's does."""
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(_raw(json.dumps(_hover(82)).encode("utf-8-sig")))
    server.stdin.flush()
    assert "result" in response_to(server.stdout, 82)


def test_a_request_with_a_nan_is_not_carried_out(server: subprocess.Popen[bytes]) -> None:
    """A `shutdown` whose params are `NaN` is no request: the server does not shut down (it
    used to, and refused every later request)."""
    assert errors_then_answer(
        server, _raw(b'{"jsonrpc": "2.0", "id": 78, "method": "shutdown", "params": NaN}')
    ) == [(None, -32700)]
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(frame({"jsonrpc": "2.0", "id": 79, "method": "shutdown"}))
    server.stdin.flush()
    assert response_to(server.stdout, 79) == {"jsonrpc": "2.0", "id": 79, "result": None}


@pytest.mark.parametrize("shutdown", [True, False], ids=["after-shutdown", "without-shutdown"])
def test_input_that_ends_without_exit_ends_the_server_as_exit_would(shutdown: bool) -> None:
    """A client that goes away (its end of stdin closed) without `exit`: the server stops with
    the status `exit` would have given, 0 after `shutdown` and 1 without it (it was always 0,
    so a crashed editor looked like a clean end of session)."""
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
    process.stdin.close()
    assert process.wait(timeout=30) == (0 if shutdown else 1)
    assert process.stderr is not None
    log = process.stderr.read()
    process.stdout.close()
    process.stderr.close()
    assert b"Traceback" not in log


@pytest.mark.parametrize(
    "notification",
    [
        # An answered request cancelled (an editor cancels a hover it no longer needs; every
        # request here is answered at once, so the cancel comes after the answer).
        {"method": "$/cancelRequest", "params": {"id": 99}},
        # Sent by Neovim, Helix and vscode-languageclient when settings are configured: the
        # server has none.
        {"method": "workspace/didChangeConfiguration", "params": {"settings": {"nexo": {}}}},
        {"method": "textDocument/willSave", "params": {"textDocument": {"uri": URI}, "reason": 1}},
        {"method": "$/progress", "params": {"token": "t", "value": {"kind": "end"}}},
    ],
    ids=["cancel-answered", "did-change-configuration", "will-save", "progress"],
)
def test_a_notification_with_nothing_to_do_is_dropped_without_a_warning(
    server: subprocess.Popen[bytes], notification: dict[str, Any]
) -> None:
    """LSP lets a server ignore what it does not handle; the editor's server log (stderr,
    which Neovim records at its error level) gets no warning for the client's normal chatter."""
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(frame(_hover(99)))
    server.stdin.flush()
    assert "result" in response_to(server.stdout, 99)
    server.stdin.write(frame({"jsonrpc": "2.0", **notification}) + frame(_hover(100)))
    server.stdin.write(frame({"jsonrpc": "2.0", "id": 101, "method": "shutdown"}))
    server.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
    server.stdin.flush()
    assert "result" in response_to(server.stdout, 100)
    _, stderr = server.communicate(timeout=30)
    assert server.returncode == 0
    assert [line for line in stderr.decode().splitlines() if "WARNING" in line] == []


@pytest.mark.parametrize("digits", [9, 5000, 100_000])
def test_a_content_length_of_many_digits_is_refused_and_the_server_stops(
    server: subprocess.Popen[bytes], digits: int
) -> None:
    """A length past Python's 4300-digit conversion limit is over the cap like any other:
    answered ``-32600`` before its digits are converted, then a clean stop."""
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(b"Content-Length: " + b"9" * digits + b"\r\n\r\n{")
    server.stdin.flush()
    answer = response_to(server.stdout, None)
    assert answer["error"]["code"] == -32600
    assert "limit" in answer["error"]["message"]
    _, err = server.communicate(timeout=30)
    assert server.returncode == 1
    assert b"Traceback" not in err
    assert b"unexpected" not in err


def test_leading_zeros_of_a_content_length_are_no_digits_of_it(
    server: subprocess.Popen[bytes],
) -> None:
    body = json.dumps(_hover(21)).encode()
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(b"Content-Length: " + b"0" * 5000 + b"%d\r\n\r\n" % len(body) + body)
    server.stdin.flush()
    assert "result" in response_to(server.stdout, 21)
    _stderr_lines(server)
    assert server.returncode == 0
