"""The reference installer's view of a receipt, for tests that check it can read ours."""

from __future__ import annotations

from typing import Any

from nexo_pkg.install.receipts import REFERENCE_RECEIPT_FIELDS


def reference_receipt_struct(document: Any) -> dict[str, str]:
    """A strict model of the reference installer's receipt (``InstallMetadata`` in nexo-rs'
    ``plugin_admin.rs``): every one of its ten fields present and a JSON string, ``source``
    a free-form string; other keys ignored, as serde does by default."""
    assert isinstance(document, dict)
    parsed: dict[str, str] = {}
    for field in REFERENCE_RECEIPT_FIELDS:
        value = document[field]
        assert isinstance(value, str), (field, value)
        parsed[field] = value
    return parsed
