"""Frames read as the daemon's ``serde_json`` reads them, on both of check's hosts.

The daemon parses every stdout line with ``serde_json`` 1.x (default features): the plugin
host into a ``Value`` after ``str::trim`` (``nexo_plugin_registry/subprocess.rs`` @ eec3f33,
its reader task), the extension host straight into ``wire::Response``
(``crates/extensions/src/runtime/wire.rs:13-24,42-45``). A line ``serde_json`` refuses is
skipped, so the reply it carried never arrives. The ``serde_json`` rules mirrored here are
from its ``src/de.rs``: ``Deserializer::new`` (``remaining_depth: 128``, ``check_recursion!``
fails at 0), ``parse_number`` ("Convert into a float if we underflow, or on `-0`"),
``f64_from_parts`` (``NumberOutOfRange`` once the value is infinite), no ``NaN``/``Infinity``
tokens, and lone surrogates refused in ``\\u`` escapes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from check.check_microapps import scripted_microapp
from check.check_plugins import scripted_plugin
from check.test_check_microapp import detail, nexo_check, statuses
from nexo_pkg.check import frame_json, run_check
from nexo_pkg.check.microapp_wire import (
    HandshakeInfo,
    decode_handshake,
    hook_response_problem,
    response_fields,
    response_problem,
)

#: Replies here are refused or taken at once; a refused one is waited for this long.
SHORT_TIMEOUT_MS = 1500

REFUSED_BY_SERDE = [
    pytest.param('{"jsonrpc":"2.0","id":@ID@,"result":@RESULT@,"x":NaN}', "NaN", id="nan"),
    pytest.param(
        '{"jsonrpc":"2.0","id":@ID@,"result":@RESULT@,"x":-Infinity}', "Infinity", id="infinity"
    ),
    pytest.param(
        '{"jsonrpc":"2.0","id":@ID@,"result":@RESULT@,"x":1e400}', "out of range", id="1e400"
    ),
    pytest.param(
        '{"jsonrpc":"2.0","id":@ID@,"result":@RESULT@,"x":' + "7" * 5000 + "}",
        "out of range",
        id="5000-digit-integer",
    ),
    pytest.param(
        '{"jsonrpc":"2.0","id":@ID@,"result":@RESULT@,"x":"\\ud800"}',
        "lone surrogate",
        id="lone-surrogate",
    ),
    pytest.param(
        '{"jsonrpc":"2.0","id":@ID@,"result":@RESULT@,"x":' + "[" * 127 + "]" * 127 + "}",
        "nested too deeply",
        id="depth-128",
    ),
]


@pytest.mark.parametrize(("line", "reason"), REFUSED_BY_SERDE)
def test_a_plugin_reply_serde_refuses_never_arrives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str, reason: str
) -> None:
    """The plugin host skips the line as non-JSON output: initialize times out."""
    monkeypatch.setenv("FIXTURE_INIT_LINE", line)
    report = run_check(scripted_plugin(tmp_path / "p", "raw_init"), timeout_ms=SHORT_TIMEOUT_MS)
    assert not report.ok
    initialize = report.get("initialize")
    assert initialize is not None
    assert (initialize.status, "no reply within" in initialize.detail) == ("fail", True)
    frames = report.get("frames.json")
    assert frames is not None
    assert frames.status == "warn"
    assert reason in frames.detail
    assert report.get("identity") is None


@pytest.mark.parametrize(
    "line",
    [
        # Rust's `str::trim` removes Unicode White_Space before serde_json reads the line.
        pytest.param('\u3000{"jsonrpc":"2.0","id":@ID@,"result":@RESULT@}\u2028', id="trimmed"),
        # 127 levels: the deepest nesting serde_json reads.
        pytest.param(
            '{"jsonrpc":"2.0","id":@ID@,"result":@RESULT@,"x":' + "[" * 126 + "]" * 126 + "}",
            id="depth-127",
        ),
        # Past u64 an integer is read as an f64, not refused.
        pytest.param(
            '{"jsonrpc":"2.0","id":@ID@,"result":@RESULT@,"x":' + "9" * 300 + "}", id="big-int"
        ),
    ],
)
def test_a_plugin_reply_serde_reads_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str
) -> None:
    monkeypatch.setenv("FIXTURE_INIT_LINE", line)
    report = run_check(scripted_plugin(tmp_path / "p", "raw_init"), timeout_ms=10_000)
    assert report.ok, report.checks
    assert {check.status for check in report.checks} == {"pass"}, report.checks


def test_minus_zero_is_no_id_the_plugin_host_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """serde_json reads ``-0`` as an f64, which ``as_u64`` does not take."""
    monkeypatch.setenv("FIXTURE_INIT_LINE", '{"jsonrpc":"2.0","id":-0,"result":@RESULT@}')
    report = run_check(scripted_plugin(tmp_path / "p", "raw_init"), timeout_ms=SHORT_TIMEOUT_MS)
    frames_id = report.get("frames.id")
    assert frames_id is not None
    assert frames_id.status == "fail"
    assert "carried id -0.0" in frames_id.detail


def test_a_string_id_is_no_id_the_plugin_host_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """subprocess.rs resolves a reply by ``id.as_u64()``: ``"1"`` answers no request."""
    monkeypatch.setenv("FIXTURE_INIT_LINE", '{"jsonrpc":"2.0","id":"@ID@","result":@RESULT@}')
    report = run_check(scripted_plugin(tmp_path / "p", "raw_init"), timeout_ms=SHORT_TIMEOUT_MS)
    assert not report.ok
    frames_id = report.get("frames.id")
    assert frames_id is not None
    assert frames_id.status == "fail"
    assert 'carried id "1"' in frames_id.detail


def test_another_jsonrpc_version_is_warned_not_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plugin host reads the reply as a JSON value and never looks at ``jsonrpc``, so a
    ``"1.0"`` reply is taken; the written contract (JSON-RPC 2.0) is broken: a warning."""
    monkeypatch.setenv("FIXTURE_INIT_LINE", '{"jsonrpc":"1.0","id":@ID@,"result":@RESULT@}')
    report = run_check(scripted_plugin(tmp_path / "p", "raw_init"), timeout_ms=10_000)
    assert report.ok, report.checks
    statuses_ = {check.name: check.status for check in report.checks}
    assert statuses_["initialize"] == "pass"
    frames_jsonrpc = report.get("frames.jsonrpc")
    assert frames_jsonrpc is not None
    assert frames_jsonrpc.status == "warn"
    assert '`jsonrpc` must be "2.0", got "1.0"' in frames_jsonrpc.detail


def test_a_frame_with_an_id_and_a_method_that_is_no_name_is_a_reply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plugin host routes a frame as the child's request only when its ``method`` is a
    non-empty string; otherwise a numeric id resolves the pending request."""
    line = '{"jsonrpc":"2.0","id":@ID@,"method":"","result":@RESULT@}'
    monkeypatch.setenv("FIXTURE_INIT_LINE", line)
    report = run_check(scripted_plugin(tmp_path / "p", "raw_init"), timeout_ms=10_000)
    statuses_ = {check.name: check.status for check in report.checks}
    assert statuses_["initialize"] == "pass"
    assert statuses_["identity"] == "pass"
    assert statuses_["frames.jsonrpc"] == "warn"


MICROAPP_REFUSED = [
    pytest.param('{"jsonrpc":"2.0","id":@ID@,"result":@RESULT@,"x":NaN}', "NaN", id="nan"),
    pytest.param(
        '{"jsonrpc":"2.0","id":@ID@,"result":@RESULT@,"x":"\\udc00"}',
        "lone surrogate",
        id="lone-surrogate",
    ),
    # `jsonrpc: String` with #[serde(default)]: a null is no string.
    pytest.param('{"jsonrpc":null,"id":@ID@,"result":@RESULT@}', "`jsonrpc`", id="jsonrpc-null"),
    # A derived struct refuses a field given twice.
    pytest.param(
        '{"jsonrpc":"2.0","id":7,"id":@ID@,"result":@RESULT@}',
        "duplicate field `id`",
        id="duplicate-id",
    ),
    pytest.param('{"jsonrpc":"2.0","id":-0,"result":@RESULT@}', "non-numeric id", id="minus-0"),
    # A JSON-RPC batch: its first element is no `jsonrpc` string.
    pytest.param('[{"jsonrpc":"2.0","id":@ID@,"result":@RESULT@}]', "`jsonrpc`", id="batch"),
    pytest.param('["2.0",@ID@,@RESULT@,null,1]', "fewer elements", id="long-array"),
]


@pytest.mark.parametrize(("line", "reason"), MICROAPP_REFUSED)
def test_a_microapp_reply_serde_refuses_never_arrives(
    tmp_path: Path, line: str, reason: str
) -> None:
    root = scripted_microapp(tmp_path / "m", "raw", line)
    code, document = nexo_check(str(root), "--timeout-ms", str(SHORT_TIMEOUT_MS), cwd=tmp_path)
    assert code == 1
    found = statuses(document)
    assert found["initialize"] == "fail"
    assert "no reply to initialize (id 0)" in detail(document, "initialize")
    assert found["frames.dropped"] == "warn"
    assert reason in detail(document, "frames.dropped")


@pytest.mark.parametrize(
    "line",
    [
        # Unknown keys, even repeated, are ignored by `wire::Response`.
        '{"jsonrpc":"2.0","id":@ID@,"method":"x","method":"y","result":@RESULT@}',
        # serde reads a derived struct from an array too: [jsonrpc, id, result, error].
        '["2.0",@ID@,@RESULT@]',
    ],
)
def test_a_microapp_reply_serde_reads_passes(tmp_path: Path, line: str) -> None:
    root = scripted_microapp(tmp_path / "m", "raw", line)
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 0, document["checks"]
    assert statuses(document)["initialize"] == "pass"


def test_the_readers_agree_with_serde() -> None:
    with pytest.raises(frame_json.FrameJsonError, match="recursion limit"):
        frame_json.loads("[" * 128 + "]" * 128)
    assert frame_json.loads("[" * 127 + "]" * 127) is not None
    assert frame_json.loads("18446744073709551615") == 2**64 - 1
    assert frame_json.loads("-9223372036854775808") == -(2**63)
    assert isinstance(frame_json.loads("18446744073709551616"), float)
    assert isinstance(frame_json.loads("-0"), float)
    assert frame_json.loads('"\\ud83d\\ude00"') == "\U0001f600"  # a pair is one character
    with pytest.raises(frame_json.FrameJsonError, match="out of range"):
        frame_json.loads("-1e309")
    repeated = frame_json.loads(
        '{"id":1,"error":{"code":1,"code":2,"message":""}}', repeated_keys=True
    )
    assert response_problem(repeated) == "`error`: duplicate field `code`"
    # HookResponse: `abort` and `do_not_reply_again` are `bool` (no null); the rest Option.
    assert hook_response_problem({"abort": None}) == "abort: invalid type: null, expected a boolean"
    assert hook_response_problem({"do_not_reply_again": None}) is not None
    assert hook_response_problem({"reason": None, "decision": None}) is None


def test_an_initialize_result_given_as_an_array_decodes_as_serde_reads_it(
    tmp_path: Path,
) -> None:
    """serde's derived ``Deserialize`` reads a struct from a sequence too, field by field
    (``visit_seq``; ``HandshakeInfo`` and ``ToolDescriptor``, runtime/mod.rs:159-182): the
    daemon loads such a microapp and registers its tools."""
    tool = '["scripted_probe","Reports what the microapp sees",{"type":"object"}]'
    line = '{"jsonrpc":"2.0","id":@ID@,"result":["scripted-0.1.0",[' + tool + "],[]]}"
    root = scripted_microapp(tmp_path / "m", "raw", line)
    code, document = nexo_check(str(root), cwd=tmp_path)
    assert code == 0, document["checks"]
    assert statuses(document)["handshake"] == "pass"
    assert document["microapp"]["tools"] == [
        {"name": "scripted_probe", "llm_name": "ext_scripted_scripted_probe"}
    ]


def test_the_handshake_decoder_reads_sequences_as_serde() -> None:
    assert decode_handshake([]) == HandshakeInfo(None, (), ())
    decoded = decode_handshake({"tools": [["t"]]})
    assert not isinstance(decoded, str)
    assert decoded.tools[0].name == "t"
    assert decoded.tools[0].defaulted == ("description", "input_schema")
    assert decode_handshake({"tools": [[]]}) == (
        "tools[0]: invalid length 0, expected struct ToolDescriptor with 3 elements"
    )
    assert decode_handshake(["v", [], [], 4]) == (
        "invalid length 4, expected fewer elements in array"
    )
    assert response_fields(["2.0", 0, {}]) == {"jsonrpc": "2.0", "id": 0, "result": {}}
    assert response_problem(response_fields(["2.0", 1, None, [-32601]])) == (
        "error: invalid length 1, expected struct RpcError with 3 elements"
    )
    assert response_problem("text") == "not a JSON object"
    assert decode_handshake({"tools": ["t"]}) == (
        'tools[0]: invalid type: string "t", expected struct ToolDescriptor'
    )
