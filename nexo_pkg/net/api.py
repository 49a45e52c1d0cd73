"""The face of ``net``: every name another package may use, and only these.

Callers outside ``nexo_pkg.net`` import from here (the ``faces`` import contract in
pyproject.toml); a name is imported from its module when it is first asked for, so the
command line reads its defaults (``--timeout``) without loading httpx."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
    )

_HOMES: dict[str, str] = {
    "DEFAULT_TIMEOUT_SECONDS": "nexo_pkg.net.bounded",
    "DOCUMENT_ACCEPT_ENCODING": "nexo_pkg.net.bounded",
    "Deadline": "nexo_pkg.net.bounded",
    "MAX_DOCUMENT_BYTES": "nexo_pkg.net.bounded",
    "SLOW_NOTICE_SECONDS": "nexo_pkg.net.bounded",
    "checked_timeout": "nexo_pkg.net.bounded",
    "declared_length": "nexo_pkg.net.bounded",
    "parse_json": "nexo_pkg.net.bounded",
    "timeout_from_env": "nexo_pkg.net.bounded",
    "DEFAULT_READ_TIMEOUT_SECONDS": "nexo_pkg.net.client",
    "DEFAULT_RETRIES": "nexo_pkg.net.client",
    "HEADER_SECONDS": "nexo_pkg.net.client",
    "HttpClient": "nexo_pkg.net.client",
    "Retryable": "nexo_pkg.net.client",
    "checked_url": "nexo_pkg.net.client",
    "is_http_url": "nexo_pkg.net.client",
    "parse_retry_after": "nexo_pkg.net.client",
    "same_origin": "nexo_pkg.net.client",
}
"""Each public name -> the module it lives in (imported when the name is first asked for)."""

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
    "checked_timeout",
    "checked_url",
    "declared_length",
    "is_http_url",
    "parse_json",
    "parse_retry_after",
    "same_origin",
    "timeout_from_env",
]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
