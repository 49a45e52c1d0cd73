"""The face of ``net``: every name another package may use, and only these.

Callers outside ``nexo_pkg.net`` import from here (the ``faces`` import contract in
pyproject.toml). The client's names, which bring httpx, are imported when first asked for,
so the command line reads its defaults (``--timeout``) without loading httpx."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from nexo_pkg.net.bounded import (
    DEFAULT_TIMEOUT_SECONDS,
    DOCUMENT_ACCEPT_ENCODING,
    MAX_DOCUMENT_BYTES,
    SLOW_NOTICE_SECONDS,
    Deadline,
    checked_timeout,
    declared_length,
    parse_json,
    timeout_from_env,
)

if TYPE_CHECKING:
    from nexo_pkg.net.client import (
        DEFAULT_READ_TIMEOUT_SECONDS,
        DEFAULT_RETRIES,
        HEADER_SECONDS,
        HttpClient,
        Retryable,
        checked_url,
        is_http_url,
        parse_retry_after,
        same_origin,
        shown_url,
    )

_CLIENT = frozenset(
    {
        "DEFAULT_READ_TIMEOUT_SECONDS",
        "DEFAULT_RETRIES",
        "HEADER_SECONDS",
        "HttpClient",
        "Retryable",
        "checked_url",
        "is_http_url",
        "parse_retry_after",
        "same_origin",
        "shown_url",
    }
)

__all__ = [
    "DEFAULT_READ_TIMEOUT_SECONDS",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT_SECONDS",
    "DOCUMENT_ACCEPT_ENCODING",
    "HEADER_SECONDS",
    "MAX_DOCUMENT_BYTES",
    "SLOW_NOTICE_SECONDS",
    "Deadline",
    "HttpClient",
    "Retryable",
    "check_proxy_settings",
    "checked_timeout",
    "checked_url",
    "declared_length",
    "is_http_url",
    "parse_json",
    "parse_retry_after",
    "same_origin",
    "shown_url",
    "timeout_from_env",
]


def check_proxy_settings() -> None:
    """Raises ``config`` for a proxy variable no connection could be made with
    (:func:`nexo_pkg.net.client.check_proxy_settings`); without any ``*_proxy`` variable set
    there is nothing to judge, and the client (httpx) is not loaded for it."""
    if any(value and name.lower().endswith("_proxy") for name, value in os.environ.items()):
        from nexo_pkg.net import client  # noqa: PLC0415

        client.check_proxy_settings()


def __getattr__(name: str) -> object:
    # The client brings httpx: loaded when one of its names is asked for.
    if name in _CLIENT:
        from nexo_pkg.net import client  # noqa: PLC0415

        return getattr(client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
