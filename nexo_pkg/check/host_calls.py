"""The host's side of the broker and host-call exchanges, as the daemon's plugin host plays it.

With ``check --host-calls`` the session does more than the handshake. For every channel kind
the manifest registers it delivers ``broker.event`` notifications on the topic the daemon
subscribes the plugin to (``plugin.outbound.<kind>``), and it answers the plugin's own
requests the way the daemon's reader does (``crates/core/src/agent/nexo_plugin_registry/
subprocess.rs``: ``handle_child_request``, ``handle_memory_recall``, ``handle_llm_complete``,
``handle_child_publish``):

* ``memory.recall`` and ``llm.complete`` get a result when their params are what the daemon
  reads (else ``-32602``), a streamed ``llm.complete`` its ``llm.complete.delta``
  notifications first; any other method gets ``-32601``.
* While events are delivered, successive calls of a method are answered with a result, then
  an error (``-32603``, as a failing backend), then not at all (a backend that hangs: the
  call stays in flight, up to the ``shutdown``); a streamed or refused call takes no turn.
  Calls made inside ``tool.invoke`` always get a result.
* A ``broker.publish`` is forwarded by the daemon only when its topic matches the plugin's
  inbound allowlist (``plugin.inbound.<kind>`` and ``plugin.inbound.<kind>.>``) and its
  ``event`` is a broker ``Event``; otherwise it drops it with a warning, and so does the report.

Nothing here does I/O: the session sends the frames :meth:`HostCalls.answer` returns and
reports :meth:`HostCalls.results`.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from nexo_pkg.check.report import Status
from nexo_pkg.check.text import CHECK_AGENT_ID
from nexo_pkg.manifest.model import PluginManifest

Phase = Literal["handshake", "after", "events", "invoke"]
Outcome = Literal["result", "error", "held", "stream", "refused"]

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

#: How many ``broker.event`` frames are delivered per subscribed topic.
EVENTS_PER_TOPIC = 3

#: The answers given, in turn, to calls made while events are delivered.
_EVENT_ANSWERS: tuple[Outcome, ...] = ("result", "error", "held")

_ROLES = frozenset({"user", "assistant", "system", "tool"})

_HYPHENATED_UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# The shapes `Uuid::parse_str` takes (uuid 1.x `parser.rs` `try_parse`, by length: 32, 36, 38, 45).
_RUST_UUID = re.compile(
    rf"[0-9a-fA-F]{{32}}|{_HYPHENATED_UUID}|\{{{_HYPHENATED_UUID}\}}|urn:uuid:{_HYPHENATED_UUID}"
)
_STREAM_CHUNKS = ("nexo ", "plugin ", "check")


@dataclass
class _Call:
    method: str
    request_id: Any
    phase: Phase
    outcome: Outcome
    problem: str | None = None
    code: int | None = None


@dataclass
class HostCalls:
    """The host's script and what happened: the calls answered, the publishes judged."""

    kinds: list[str]
    calls: list[_Call] = field(default_factory=list)
    publishes: list[tuple[str, str | None]] = field(default_factory=list)
    events_sent: int = 0
    phase: Phase = "handshake"

    @classmethod
    def from_manifest(cls, model: PluginManifest | None) -> HostCalls:
        """The channel kinds of ``[[plugin.channels.register]]`` decide the broker topics."""
        return cls(list(model.plugin.channel_kinds) if model is not None else [])

    def subscribed_topics(self) -> list[str]:
        """The exact topics the daemon subscribes the plugin to (one per kind)."""
        return [f"plugin.outbound.{kind}" for kind in self.kinds]

    def event(self, topic: str, sequence: int) -> dict[str, Any]:
        """A ``broker.event`` notification as the daemon's bridge forwards a broker event."""
        self.events_sent += 1
        event = {
            "id": str(uuid.uuid4()),
            "timestamp": datetime.now().astimezone().isoformat(),
            "topic": topic,
            "source": CHECK_AGENT_ID,
            "session_id": None,
            "payload": {"text": f"nexo plugin check event {sequence}", "sequence": sequence},
        }
        return {
            "jsonrpc": "2.0",
            "method": "broker.event",
            "params": {"topic": topic, "event": event},
        }

    def publish(self, message: dict[str, Any]) -> None:
        """Judge a ``broker.publish`` notification as ``handle_child_publish`` does."""
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        topic = params.get("topic")
        topic = topic if isinstance(topic, str) else ""
        if self.phase == "handshake":
            problem: str | None = "published before the handshake completed"
        elif not topic:
            problem = "empty topic"
        elif not any(_topic_matches(pattern, topic) for pattern in self._allowlist()):
            allowed = ", ".join(self._allowlist()) or "none: no channel kinds registered"
            problem = f"topic outside the plugin's inbound allowlist ({allowed})"
        else:
            problem = _event_problem(params.get("event"))
        self.publishes.append((topic, problem))

    def _allowlist(self) -> list[str]:
        return [
            pattern
            for kind in self.kinds
            for pattern in (f"plugin.inbound.{kind}", f"plugin.inbound.{kind}.>")
        ]

    def answer(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        """The frames answering one request of the plugin (none when the call is held)."""
        name = str(message.get("method"))
        request_id = message.get("id")
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if self.phase == "handshake":
            # The daemon wires its services only once the handshake succeeded.
            early = "called before the handshake completed: host services not yet wired"
            return self._refuse(name, request_id, INTERNAL_ERROR, early)
        if name not in ("memory.recall", "llm.complete"):
            return self._refuse(name, request_id, METHOD_NOT_FOUND, f"method not found: {name}")
        problem = _memory_problem(params) if name == "memory.recall" else _llm_problem(params)
        if problem is not None:
            return self._refuse(name, request_id, INVALID_PARAMS, problem)
        if name == "llm.complete" and params.get("stream") is True:
            self.calls.append(_Call(name, request_id, self.phase, "stream"))
            return [*_deltas(request_id), _result(request_id, _llm_result(stream=True))]
        outcome: Outcome = "result"
        if self.phase == "events":
            # Only the plain calls answered before take turns (a stream or refusal does not).
            earlier = sum(
                1
                for call in self.calls
                if call.method == name and call.phase == "events" and call.outcome in _EVENT_ANSWERS
            )
            outcome = _EVENT_ANSWERS[min(earlier, len(_EVENT_ANSWERS) - 1)]
        self.calls.append(_Call(name, request_id, self.phase, outcome))
        if outcome == "held":
            return []
        if outcome == "error":
            text = "memory recall failed" if name == "memory.recall" else "llm chat failed"
            return [_error(request_id, INTERNAL_ERROR, f"{text}: a backend error (nexo check)")]
        if name == "memory.recall":
            agent_id = params.get("agent_id", "")
            entry = {"id": str(uuid.uuid4()), "agent_id": agent_id, "content": "remembered"}
            return [_result(request_id, {"entries": [entry]})]
        return [_result(request_id, _llm_result(stream=False))]

    def _refuse(
        self, method: str, request_id: Any, code: int, problem: str
    ) -> list[dict[str, Any]]:
        self.calls.append(_Call(method, request_id, self.phase, "refused", problem, code))
        return [_error(request_id, code, problem)]

    def results(self, *, shutdown_answered: bool | None) -> list[tuple[str, Status, str]]:
        """The ``host.*`` checks: the broker, each method called, the call left in flight."""
        checks = [self._broker_result()]
        methods = list(dict.fromkeys(call.method for call in self.calls))
        if not methods:
            checks.append(("host.calls", "pass", "the plugin made no host call"))
        checks += [self._method_result(method) for method in methods]
        held = ", ".join(
            f"{call.method} (id {call.request_id})" for call in self.calls if call.outcome == "held"
        )
        if held and shutdown_answered:
            detail = f"shutdown was answered with {held} still in flight"
            checks.append(("host.in_flight", "pass", detail))
        elif held and shutdown_answered is not None:
            detail = (
                f"no shutdown reply with {held} in flight (the daemon waits, then kills the plugin)"
            )
            checks.append(("host.in_flight", "warn", detail))
        return checks

    def _broker_result(self) -> tuple[str, Status, str]:
        dropped = [(topic, problem) for topic, problem in self.publishes if problem is not None]
        sent = (
            f"{self.events_sent} broker.event on {', '.join(self.subscribed_topics())}"
            if self.kinds
            else "no broker.event (no [[plugin.channels.register]] kind: the daemon "
            "subscribes the plugin to no topic)"
        )
        forwarded = len(self.publishes) - len(dropped)
        detail = f"sent {sent}; {len(self.publishes)} broker.publish, {forwarded} forwarded"
        if dropped:
            topic, problem = dropped[0]
            more = f" (and {len(dropped) - 1} more)" if len(dropped) > 1 else ""
            return (
                "host.broker",
                "warn",
                f"{detail}; the daemon drops {len(dropped)}: `{topic}`: {problem}{more}",
            )
        return ("host.broker", "pass", detail)

    def _method_result(self, method: str) -> tuple[str, Status, str]:
        calls = [call for call in self.calls if call.method == method]
        words = {
            "result": "a result",
            "error": "an error (-32603)",
            "held": "no answer (in flight)",
            "stream": f"a stream of {len(_STREAM_CHUNKS)} llm.complete.delta and a final reply",
            "refused": "a refusal",
        }
        told = ", ".join(
            f"{words[call.outcome]}{' inside tool.invoke' if call.phase == 'invoke' else ''}"
            for call in calls
        )
        refused = [call for call in calls if call.problem is not None]
        detail = f"{len(calls)} call(s) answered with {told}"
        if refused:
            return (
                f"host.{method}",
                "warn",
                f"{detail}; the daemon answers {refused[0].code}: {refused[0].problem}",
            )
        return (f"host.{method}", "pass", detail)


def _result(request_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _deltas(request_id: Any) -> list[dict[str, Any]]:
    return [
        {
            "jsonrpc": "2.0",
            "method": "llm.complete.delta",
            "params": {"request_id": request_id, "chunk": chunk},
        }
        for chunk in _STREAM_CHUNKS
    ]


def _llm_result(*, stream: bool) -> dict[str, Any]:
    usage = {"prompt_tokens": 3, "completion_tokens": len(_STREAM_CHUNKS)}
    if stream:
        return {"finish_reason": "stop", "usage": usage}
    return {"content": "".join(_STREAM_CHUNKS), "finish_reason": "stop", "usage": usage}


def _memory_problem(params: dict[str, Any]) -> str | None:
    for key in ("agent_id", "query"):
        if not isinstance(params.get(key), str):
            return f"missing or invalid `{key}` (string)"
    return None


def _llm_problem(params: dict[str, Any]) -> str | None:
    for key in ("provider", "model"):
        if not isinstance(params.get(key), str):
            return f"missing or invalid `{key}` (string)"
    messages = params.get("messages")
    if "messages" not in params:
        return "missing `messages` (array of {role, content})"
    if not isinstance(messages, list) or not all(
        isinstance(entry, dict)
        and entry.get("role") in _ROLES
        and isinstance(entry.get("content"), str)
        for entry in messages
    ):
        return "invalid `messages`: expected [{role: user|assistant|system|tool, content}]"
    if not messages:
        return "`messages` must not be empty"
    return None


def _event_problem(event: object) -> str | None:
    """Why ``event`` is not a broker ``Event`` (``crates/broker/src/types.rs``), or None."""
    if not isinstance(event, dict):
        return "`event` is not an object"
    for key in ("id", "timestamp", "topic", "source", "payload"):
        if key not in event:
            return f"`event` has no `{key}` (not a broker Event)"
    for key in ("topic", "source"):
        if not isinstance(event[key], str):
            return f"`event.{key}` is not a string"
    if not _is_uuid(event["id"]):
        return "`event.id` is not a UUID"
    session = event.get("session_id")
    if session is not None and not _is_uuid(session):
        return "`event.session_id` is not a UUID"
    try:
        stamp = datetime.fromisoformat(str(event["timestamp"]))
    except ValueError:
        return "`event.timestamp` is not an RFC 3339 time"
    if not isinstance(event["timestamp"], str) or stamp.tzinfo is None:
        return "`event.timestamp` is not an RFC 3339 time with an offset"
    return None


def _is_uuid(value: object) -> bool:
    """Whether the ``uuid`` crate reads ``value`` as a ``Uuid`` (its serde impl parses the
    string with ``Uuid::parse_str``): 32 hex digits, the hyphenated 8-4-4-4-12 form, that form
    in braces or after ``urn:uuid:``. Python's ``uuid.UUID`` also takes hyphens anywhere, a
    ``uuid:`` prefix or unbalanced braces, which the daemon refuses."""
    return isinstance(value, str) and _RUST_UUID.fullmatch(value) is not None


def _topic_matches(pattern: str, topic: str) -> bool:
    """The broker's subject match: ``*`` is one segment, a final ``>`` one or more."""
    wanted, got = pattern.split("."), topic.split(".")
    for index, part in enumerate(wanted):
        if part == ">":
            return len(got) > index
        if index >= len(got) or (part not in ("*", got[index])):
            return False
    return len(got) == len(wanted)
