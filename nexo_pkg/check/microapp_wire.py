"""What the daemon's extension host decodes and derives, as pure functions.

Each function mirrors one piece of the daemon's source (``lordmacu/nexo-rs`` @ ``eec3f33``),
cited beside it, so that ``check`` judges a microapp's answers as the host would: the
environment it builds for the child, the ``initialize`` result it decodes, the hook replies it
reads, the reply frames its reader accepts, the LLM-visible tool names it derives and the admin
methods its dispatcher knows. Nothing here does I/O.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nexo_pkg.check.text import CHECK_AGENT_ID
from nexo_pkg.manifest.microapp import MAX_TOOL_NAME_LEN, env_is_blocked

#: ``StdioSpawnOptions::default()`` (``crates/extensions/src/runtime/stdio.rs:71-81``).
HANDSHAKE_TIMEOUT_SECONDS = 10.0
CALL_TIMEOUT_SECONDS = 30.0

#: The variables ``build_command`` stamps on the child (``stdio.rs:698-719``, ``state.rs:28``).
AGENT_VERSION_ENV = "AGENT_VERSION"
AGENT_EXTENSION_ID_ENV = "AGENT_EXTENSION_ID"
STATE_ROOT_ENV = "NEXO_EXTENSION_STATE_ROOT"

#: ``HookResponse`` fields and their JSON types (``runtime/mod.rs:58-85``).
_HOOK_FIELDS: dict[str, tuple[type, ...]] = {
    "abort": (bool,),
    "reason": (str,),
    "decision": (str,),
    "transformed_body": (str,),
    "do_not_reply_again": (bool,),
}

_HOOK_ORDER = ("abort", "reason", "override", "decision", "transformed_body", "do_not_reply_again")

#: ``AdminRpcDispatcher::required_capability`` (``crates/core/src/agent/admin_rpc/
#: dispatcher.rs:532-606``): every admin method the daemon routes, and its capability.
_ADMIN_DOMAINS: dict[str, tuple[str, tuple[str, ...]]] = {
    "agents": ("agents_crud", ("list", "get", "upsert", "delete")),
    "credentials": ("credentials_crud", ("list", "register", "revoke")),
    "pairing": ("pairing_initiate", ("start", "status", "cancel")),
    "llm_providers": ("llm_keys_crud", ("list", "upsert", "delete", "probe")),
    "channels": ("channels_crud", ("list", "approve", "revoke", "doctor")),
    "agent_events": ("transcripts_read", ("list", "read", "search")),
    "processing": ("operator_intervention", ("pause", "resume", "intervention", "state")),
    "escalations": ("escalations_read", ("list",)),
    "skills": ("skills_crud", ("list", "get", "upsert", "delete")),
    "tenants": ("tenants_crud", ("list", "get", "upsert", "delete")),
}
ADMIN_METHODS: dict[str, str] = {
    "nexo/admin/echo": "_echo",
    **{
        f"nexo/admin/{domain}/{verb}": capability
        for domain, (capability, verbs) in _ADMIN_DOMAINS.items()
        for verb in verbs
    },
    "nexo/admin/escalations/resolve": "escalations_resolve",
    "nexo/admin/secrets/write": "secrets_write",
    "nexo/admin/auth/rotate_token": "auth_rotate",
    "nexo/admin/reload": "agents_crud",
}

#: ``AdminRpcError::code`` (``dispatcher.rs:78-85``).
ADMIN_METHOD_NOT_FOUND = -32601
ADMIN_CAPABILITY_NOT_GRANTED = -32004
ADMIN_INTERNAL = -32603

#: What every pending call gets when the child exits (``stdio.rs:1087-1098``).
CHILD_EXITED_CODE = -32000

_I32 = (-(2**31), 2**31 - 1)

#: The session of the events (and ``_meta``) the check sends.
SAMPLE_SESSION_ID = "00000000-0000-4000-8000-000000000000"


def child_environment(
    parent: Mapping[str, str], *, extension_id: str, agent_version: str, state_dir: str
) -> tuple[dict[str, str], list[str]]:
    """The child's environment as ``build_command`` makes it (``stdio.rs:690-719``): cleared,
    refilled with every parent variable not on the blocklist, then ``AGENT_VERSION``,
    ``AGENT_EXTENSION_ID`` and ``NEXO_EXTENSION_STATE_ROOT`` stamped. Returns it with the
    sorted names that were removed."""
    removed = sorted(name for name in parent if env_is_blocked(name))
    env = {name: value for name, value in parent.items() if not env_is_blocked(name)}
    env[AGENT_VERSION_ENV] = agent_version
    env[AGENT_EXTENSION_ID_ENV] = extension_id
    env[STATE_ROOT_ENV] = state_dir
    return env, removed


def fit_name(prefix: str, extension_id: str, tool: str) -> str:
    """``ToolDef::fit_name`` (``crates/llm/src/types.rs:317-341``): ``{prefix}{id}_{tool}``,
    or, past 64 bytes, the tool cut short plus ``_`` and 6 hex digits of
    ``sha256(id NUL tool)``; when even that does not fit, the id is cut too."""
    full = f"{prefix}{extension_id}_{tool}"
    if len(full.encode()) <= MAX_TOOL_NAME_LEN:
        return full
    digest = hashlib.sha256(extension_id.encode() + b"\0" + tool.encode()).hexdigest()[:6]
    fixed = len(prefix.encode()) + len(extension_id.encode()) + 1 + 1 + 6
    if fixed <= MAX_TOOL_NAME_LEN:
        head = tool[: MAX_TOOL_NAME_LEN - fixed]
        return f"{prefix}{extension_id}_{head}_{digest}"
    id_budget = max(MAX_TOOL_NAME_LEN - (len(prefix.encode()) + 1 + 6), 0)
    return f"{prefix}{extension_id[:id_budget]}_{digest}"


@dataclass(frozen=True)
class ToolDescriptor:
    """One decoded ``ToolDescriptor`` (``runtime/mod.rs:159-171``)."""

    name: str
    description: str
    input_schema: Any
    #: Which keys the microapp left to serde's defaults.
    defaulted: tuple[str, ...] = ()


@dataclass(frozen=True)
class HandshakeInfo:
    """The decoded ``initialize`` result (``runtime/mod.rs:173-182``)."""

    server_version: str | None
    tools: tuple[ToolDescriptor, ...]
    hooks: tuple[str, ...]


def _json_type(value: object) -> str:
    """How serde names a JSON value in an ``invalid type`` error."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{str(value).lower()}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, float):
        return f"floating point `{value}`"
    if isinstance(value, str):
        return f"string {value!r}".replace("'", '"')
    if isinstance(value, list):
        return "sequence"
    return "map"


def _invalid(where: str, value: object, expected: str) -> str:
    """serde's ``invalid type`` error for ``value`` at ``where`` (nothing for the root)."""
    prefix = f"{where}: " if where else ""
    return f"{prefix}invalid type: {_json_type(value)}, expected {expected}"


def _struct_fields(
    where: str, value: object, struct: str, fields: tuple[str, ...], required: int
) -> dict[str, Any] | str:
    """``value`` as the fields serde's derived ``Deserialize`` reads for ``struct``: an object
    as it is, or an array read in field order (``visit_seq``: the first ``required`` fields
    must be there, the others take their defaults, more elements than fields are refused),
    else serde's error."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, list):
        return _invalid(where, value, f"struct {struct}")
    prefix = f"{where}: " if where else ""
    if len(value) < required:
        expected = f"struct {struct} with {len(fields)} elements"
        return f"{prefix}invalid length {len(value)}, expected {expected}"
    if len(value) > len(fields):
        return f"{prefix}invalid length {len(value)}, expected fewer elements in array"
    return dict(zip(fields, value, strict=False))


def decode_handshake(value: object) -> HandshakeInfo | str:
    """Decode an ``initialize`` result as serde does into ``HandshakeInfo``, or return the
    reason it fails (the daemon's ``StartError::DecodeHandshake``: the microapp does not
    load). Unknown keys (``version``, ``server_info``) are ignored, as serde does; an array
    is read field by field, as serde reads a struct from a sequence."""
    fields = _struct_fields(
        "", value, "HandshakeInfo", ("server_version", "tools", "hooks"), required=0
    )
    if isinstance(fields, str):
        return fields
    value = fields
    server_version = value.get("server_version")
    if server_version is not None and not isinstance(server_version, str):
        return _invalid("server_version", server_version, "a string")
    tools_value = value.get("tools", [])
    if not isinstance(tools_value, list):
        return _invalid("tools", tools_value, "a sequence")
    tools: list[ToolDescriptor] = []
    for index, item in enumerate(tools_value):
        entry = _struct_fields(
            f"tools[{index}]",
            item,
            "ToolDescriptor",
            ("name", "description", "input_schema"),
            required=1,
        )
        if isinstance(entry, str):
            return entry
        name = entry.get("name")
        if "name" not in entry:
            return f"tools[{index}]: missing field `name`"
        if not isinstance(name, str):
            return _invalid(f"tools[{index}].name", name, "a string")
        description = entry.get("description", "")
        if not isinstance(description, str):
            return _invalid(f"tools[{index}].description", description, "a string")
        defaulted = tuple(key for key in ("description", "input_schema") if key not in entry)
        tools.append(ToolDescriptor(name, description, entry.get("input_schema", {}), defaulted))
    hooks_value = value.get("hooks", [])
    if not isinstance(hooks_value, list):
        return _invalid("hooks", hooks_value, "a sequence")
    for index, hook in enumerate(hooks_value):
        if not isinstance(hook, str):
            return _invalid(f"hooks[{index}]", hook, "a string")
    return HandshakeInfo(server_version, tuple(tools), tuple(hooks_value))


def hook_response_problem(value: object) -> str | None:
    """Why ``value`` does not decode as a ``HookResponse`` (``extension_hook.rs:39-54``:
    ``null`` is the default), or None."""
    if value is None:
        return None
    # Field order of the struct (`override` is `override_event` renamed), for an array.
    fields = _struct_fields("", value, "HookResponse", _HOOK_ORDER, required=0)
    if isinstance(fields, str):
        return fields
    value = fields
    for key, types in _HOOK_FIELDS.items():
        item = value.get(key)
        if item is None and (key not in value or types == (str,)):
            continue  # absent, or null for an `Option<String>`; a `bool` has no null
        if not isinstance(item, types) or (types == (str,) and isinstance(item, bool)):
            return _invalid(key, item, "a boolean" if types == (bool,) else "a string")
    return None


def hook_reply_surprises(hook: str, reply: dict[str, Any]) -> list[str]:
    """What the daemon does with a decoded hook ``reply`` that its author likely does not
    expect (``HookRegistry::fire_with_merge``, ``crates/core/src/agent/hook_registry.rs:
    133-182``): ``abort`` on an ``after_*`` hook is ignored, an ``override`` that is not an
    object is dropped, and ``decision``, ``transformed_body`` and ``do_not_reply_again`` are
    read by nothing."""
    surprises: list[str] = []
    if reply.get("abort") is True and hook.startswith("after_"):
        surprises.append(
            "the daemon ignores `abort` on an after_* hook (after_* hooks are advisory): the "
            "event has already happened"
        )
    acting = {
        "decision": reply.get("decision") in ("block", "transform"),
        "transformed_body": reply.get("transformed_body") is not None,
        "do_not_reply_again": reply.get("do_not_reply_again") is True,
    }
    unread = [key for key, asks in acting.items() if asks]
    if unread and reply.get("abort") is not True:
        surprises.append(
            f"the daemon decodes {', '.join(f'`{key}`' for key in unread)} but nothing acts "
            "on it (no block, no rewrite): only `abort: true` blocks a before_* event"
        )
    override = reply.get("override")
    if override is not None and not isinstance(override, dict):
        surprises.append(
            "the daemon drops the `override`: `override` is not a JSON object, so there is "
            "nothing to merge into the event"
        )
    return surprises


def response_fields(frame: object) -> object:
    """``frame`` with an array read as serde reads a derived struct from a sequence: a
    ``wire::Response`` ``[jsonrpc, id, result, error]`` (an ``error`` array as
    ``[code, message, data]``) becomes the object it decodes as, or a :class:`Refused` with
    serde's reason; anything else is returned as it is, for :func:`response_problem`."""
    if not isinstance(frame, list):
        return frame
    fields = _struct_fields("", frame, "Response", ("jsonrpc", "id", "result", "error"), required=0)
    if isinstance(fields, str):
        return Refused(fields)
    if isinstance(fields.get("error"), list):
        error = _struct_fields(
            "error", fields["error"], "RpcError", ("code", "message", "data"), required=2
        )
        if isinstance(error, str):
            return Refused(error)
        fields["error"] = error
    return fields


@dataclass(frozen=True)
class Refused:
    """A frame serde cannot decode as a ``wire::Response``, with its reason."""

    reason: str


def response_problem(frame: object) -> str | None:
    """Why the host's reader cannot decode ``frame`` as ``wire::Response``
    (``runtime/wire.rs:13-24,42-45``) and drops it, or None: an object whose ``jsonrpc`` is
    a string when present and whose non-null ``error`` has an i32 ``code`` and a string
    ``message``."""
    if isinstance(frame, Refused):
        return frame.reason
    if not isinstance(frame, dict):
        return "not a JSON object"
    repeated = _repeated(frame, ("jsonrpc", "id", "result", "error"))
    if repeated is not None:
        return repeated
    # `jsonrpc: String` with `#[serde(default)]`: absent is "", but null is no string.
    if "jsonrpc" in frame and not isinstance(frame["jsonrpc"], str):
        return "`jsonrpc` is not a string"
    error = frame.get("error")
    if error is None:
        return None
    if not isinstance(error, dict):
        return "`error` is not an object"
    repeated = _repeated(error, ("code", "message", "data"))
    if repeated is not None:
        return f"`error`: {repeated}"
    code = error.get("code")
    if type(code) is not int or not _I32[0] <= code <= _I32[1]:
        return "`error.code` is not a 32-bit integer"
    if not isinstance(error.get("message"), str):
        return "`error.message` is not a string"
    return None


def _repeated(frame: dict[str, Any], fields: tuple[str, ...]) -> str | None:
    """serde's ``duplicate field`` error: a derived struct refuses a field given twice (a
    ``Value`` map would keep the last; :mod:`~nexo_pkg.check.frame_json` records them)."""
    repeated: frozenset[str] = getattr(frame, "repeated", frozenset())
    twice = next((name for name in fields if name in repeated), None)
    return None if twice is None else f"duplicate field `{twice}`"


def numeric_id(value: object) -> int | None:
    """``wire::extract_u64_id`` (``wire.rs:47-50``): a non-negative JSON integer, else None."""
    if type(value) is int and value >= 0:
        return value
    return None


def sample_hook_event(hook: str) -> dict[str, Any]:
    """An event shaped as the daemon fires ``hook`` (``crates/core/src/agent/
    llm_behavior.rs:622-627,827-832,1671-1678,1825-1830``)."""
    base: dict[str, Any] = {"agent_id": CHECK_AGENT_ID, "session_id": SAMPLE_SESSION_ID}
    if hook == "before_message":
        return {**base, "text": "hello from nexo plugin check", "source": CHECK_AGENT_ID}
    if hook == "after_message":
        return {**base, "text_in": "hello from nexo plugin check", "text_out": "hello"}
    if hook == "before_tool_call":
        return {**base, "tool_name": "ext_check_tool", "arguments": {}}
    return {**base, "tool_name": "ext_check_tool", "duration_ms": 1, "result": {}, "error": None}
