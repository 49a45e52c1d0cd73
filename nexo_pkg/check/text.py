"""How a check words what it saw: frames as the host writes them, exit statuses, and values
shortened to fit one line of a report."""

from __future__ import annotations

import contextlib
import json
from typing import Any

#: The name the check goes by towards the plugin: the ``agent_id`` of its calls and events and
#: the ``source`` of its broker events.
CHECK_AGENT_ID = "nexo-plugin-check"

# How many characters of a value a check's detail quotes.
DETAIL_LIMIT = 160


def encode_frame(frame: dict[str, Any], *, sort_keys: bool = False) -> bytes:
    """``frame`` as one compact JSON line; ``sort_keys`` orders every object's keys as the
    daemon's plugin host writes them (its ``json!`` values are ``serde_json`` maps without
    ``preserve_order``: a ``BTreeMap``, so ``{"id":1,"jsonrpc":"2.0","method":...}``)."""
    text = json.dumps(frame, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
    return (text + "\n").encode()


def exit_text(code: int | None) -> str:
    """How a process ended, as a report words it (``with code 1``, ``on signal 9``)."""
    if code is None:
        return "(status unknown)"
    if code < 0:
        return f"on signal {-code}"
    return f"with code {code}"


def short(value: object) -> str:
    """``value`` as JSON (else its repr), cut to one line of a report."""
    if isinstance(value, bytes):
        return truncate(repr(value))
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = "<a value nested too deeply to show>"
        with contextlib.suppress(RecursionError, ValueError):
            text = repr(value)
    return truncate(text)


def truncate(text: str, limit: int = DETAIL_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
