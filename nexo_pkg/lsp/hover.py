"""Hover text for the key under the cursor, from the schema's description, type and default."""

from __future__ import annotations

from nexo_pkg.core.toml_spans import scan_tolerant
from nexo_pkg.lsp.schema_nav import SchemaNavigator
from nexo_pkg.lsp.toml_context import resolve

__all__ = ["hover_at"]


def hover_at(
    navigator: SchemaNavigator, text: str, offset: int
) -> tuple[str, tuple[int, int]] | None:
    """Markdown for the key at ``offset`` and the text range it describes.

    On a header part, a key part or a value, the key's schema is described; ``None`` when the
    cursor is elsewhere or the schema does not know the key.
    """
    context = resolve(scan_tolerant(text), offset)
    if context.kind == "none" or not context.path or context.path[-1] == "":
        return None
    info = navigator.key_info(context.path)
    return None if info is None else (info.markdown(), context.replace)
