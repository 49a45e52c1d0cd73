"""`check --host-calls`: the host's side of the broker and host-call exchanges, as the daemon's
plugin host plays it (``crates/core/src/agent/nexo_plugin_registry/subprocess.rs``, nexo-rs
HEAD eec3f33): ``broker.event`` on ``plugin.outbound.<kind>`` (706-760), ``broker.publish``
forwarded only on ``plugin.inbound.<kind>[.>]`` and as a broker ``Event`` (858-906), and
``memory.recall`` / ``llm.complete`` answered or refused with ``-32602`` / ``-32601``
(915-1248)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from check.check_plugins import cli_check, scripted_plugin


def channel_plugin(root: Path, mode: str) -> Path:
    """The scripted plugin registering channel kind ``chat`` (so the daemon subscribes it)."""
    extra = '\n[[plugin.channels.register]]\nkind = "chat"\nadapter = "chat"\n'
    return scripted_plugin(root, mode, plugin_id="hosty", extra=extra)


def by_name(document: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {check["name"]: (check["status"], check["detail"]) for check in document["checks"]}


def test_events_calls_answers_a_stream_and_a_call_in_flight_at_shutdown(tmp_path: Path) -> None:
    code, document = cli_check(channel_plugin(tmp_path / "p", "host_calls"), "--host-calls")
    checks = by_name(document)
    assert code == 0, document["checks"]
    assert checks["host.memory.recall"] == (
        "pass",
        "3 call(s) answered with a result, an error (-32603), no answer (in flight)",
    )
    assert checks["host.llm.complete"] == (
        "pass",
        "1 call(s) answered with a stream of 3 llm.complete.delta and a final reply",
    )
    assert checks["host.in_flight"] == (
        "pass",
        "shutdown was answered with memory.recall (id 103) still in flight",
    )
    # Three events, a forwarded publish each, and the core topic the daemon drops.
    status, detail = checks["host.broker"]
    assert status == "warn"
    assert detail.startswith(
        "sent 3 broker.event on plugin.outbound.chat; 4 broker.publish, 3 forwarded; "
        "the daemon drops 1: `agent.route.x`: topic outside the plugin's inbound allowlist"
    )
    # What the plugin received: well-formed answers, the stream's chunks, then its final, each
    # with its keys in the order the daemon's serde_json maps write them (sorted).
    answers = "\n".join(document["stderr_tail"])
    assert '"id": 101, "jsonrpc": "2.0", "result": {"entries": [{"agent_id": ' in answers
    assert '{"error": {"code": -32603, "message": "memory recall failed' in answers
    assert '"id": 102, "jsonrpc": "2.0"}' in answers
    assert '"id": 103' not in answers
    assert answers.count('"method": "llm.complete.delta"') == 3
    assert '"id": 200, "jsonrpc": "2.0", "result": {"finish_reason": "stop", "usage"' in answers


def test_streamed_calls_do_not_use_up_the_result_error_and_in_flight_answers(
    tmp_path: Path,
) -> None:
    """A plugin streaming one llm.complete and making a plain one on every event still gets
    each answer the host plays for a plain call: a result, an error, none (in flight)."""
    code, document = cli_check(channel_plugin(tmp_path / "p", "host_calls_mixed"), "--host-calls")
    checks = by_name(document)
    assert code == 0, document["checks"]
    stream = "a stream of 3 llm.complete.delta and a final reply"
    assert checks["host.llm.complete"] == (
        "pass",
        f"6 call(s) answered with {stream}, a result, {stream}, an error (-32603), {stream}, "
        "no answer (in flight)",
    )
    answers = "\n".join(document["stderr_tail"])
    assert '"id": 401, "jsonrpc": "2.0", "result": {"content": ' in answers
    assert '{"error": {"code": -32603, ' in answers
    assert '"id": 402, "jsonrpc": "2.0"}' in answers
    assert '"id": 403' not in answers


def test_calls_the_daemon_refuses_warn_with_its_codes(tmp_path: Path) -> None:
    code, document = cli_check(channel_plugin(tmp_path / "p", "host_calls_bad"), "--host-calls")
    checks = by_name(document)
    assert code == 0, document["checks"]
    assert checks["host.memory.recall"][0] == "warn"
    assert checks["host.memory.recall"][1].endswith(
        "the daemon answers -32602: missing or invalid `agent_id` (string)"
    )
    assert checks["host.tool.dispatch"][0] == "warn"
    assert "the daemon answers -32601" in checks["host.tool.dispatch"][1]
    code, document = cli_check(channel_plugin(tmp_path / "q", "host_calls_bad"), "--strict")
    assert code == 1
    assert "host.memory.recall" in by_name(document)


def test_without_the_option_no_event_is_sent(tmp_path: Path) -> None:
    code, document = cli_check(channel_plugin(tmp_path / "p", "host_calls"))
    assert code == 0, document["checks"]
    assert not [name for name in by_name(document) if name.startswith("host.")]
    assert not any("host answered" in line for line in document["stderr_tail"])


def test_a_call_during_the_handshake_gets_the_daemons_not_yet_wired_error(
    tmp_path: Path,
) -> None:
    """The daemon's reader answers -32603 "host services not yet wired" until the handshake
    succeeded and its bridge is set (subprocess.rs:436-452)."""
    code, document = cli_check(channel_plugin(tmp_path / "p", "host_request"), "--host-calls")
    assert code == 0, document["checks"]
    status, detail = by_name(document)["host.memory.recall"]
    assert status == "warn"
    assert detail.endswith(
        "the daemon answers -32603: called before the handshake completed: host services "
        "not yet wired"
    )
    assert any('"code": -32603' in line for line in document["stderr_tail"])


def test_an_event_id_the_uuid_crate_refuses_is_not_forwarded(tmp_path: Path) -> None:
    """The broker ``Event``'s ``id`` is a ``uuid::Uuid``, read with ``Uuid::parse_str``: a
    ``uuid:`` prefix (or hyphens out of place), which Python's ``uuid.UUID`` takes, makes the
    daemon drop the publish."""
    loose = "uuid:6f1c1a52-2b7e-4a57-9a0c-5b2b3f1e8d11"
    code, document = cli_check(
        channel_plugin(tmp_path / "p", "host_calls"),
        "--host-calls",
        env={"FIXTURE_EVENT_ID": loose},
    )
    assert code == 0, document["checks"]
    status, detail = by_name(document)["host.broker"]
    assert status == "warn"
    assert detail.startswith(
        "sent 3 broker.event on plugin.outbound.chat; 4 broker.publish, 0 forwarded; "
        "the daemon drops 4: "
    ), detail
    assert "`plugin.inbound.chat`: `event.id` is not a UUID" in detail


def test_a_frame_over_the_sdk_limit_while_events_play_is_said_as_during_a_request(
    tmp_path: Path,
) -> None:
    """The events phase reads the plugin's frames through the same frame loop as a request's
    reply: a 1.2 MB notification written on a broker.event warns ``frames.size`` as a 1.2 MB
    reply does (``test_check_session.py``, ``big_reply``); the daemon reads it all the same."""
    code, document = cli_check(channel_plugin(tmp_path / "p", "host_calls_big"), "--host-calls")
    checks = by_name(document)
    assert code == 0, document["checks"]
    status, detail = checks["frames.size"]
    assert status == "warn"
    assert "exceeds the SDKs' 1048576-byte frame limit (the daemon reads it all the same)" in (
        detail
    )
