"""Where is the cursor in a TOML document? Hover and completion ask this of a half-typed buffer.

The buffer is scanned by :func:`nexo_pkg.core.toml_spans.scan_tolerant` (headers, entries with
the offsets of every dotted-key part, strings, inline tables); :func:`resolve` says what the
cursor is on. Offsets are indexes into the text (code points);
:class:`nexo_pkg.lsp.positions.LineIndex` converts them to and from lines and columns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nexo_pkg.core.toml_spans import (
    Entry,
    InlineTable,
    ScannedDocument,
    StringToken,
)
from nexo_pkg.core.toml_text import BARE_KEY_CHARS

__all__ = ["Context", "resolve"]

_WORD_CHARS = BARE_KEY_CHARS | frozenset(".+:")

ContextKind = Literal["header", "key", "value", "none"]


@dataclass(frozen=True)
class Context:
    """What the cursor is on.

    - ``header``: inside ``[…]``/``[[…]]``; ``path`` is the header's parts up to the one under
      the cursor; ``replace`` covers the whole header key.
    - ``key``: on a key (or where a new key would go); ``path`` ends with the part under the
      cursor (``""`` when nothing is typed yet); ``replace`` covers that part.
    - ``value``: right of ``=``; ``path`` is the key's path; ``string`` is the string literal
      around the cursor, if any; ``replace`` covers the word or string content at the cursor.
    """

    kind: ContextKind
    path: tuple[str, ...] = ()
    replace: tuple[int, int] = (0, 0)
    block: int = -1
    is_array_header: bool = False
    entry: Entry | None = None
    string: StringToken | None = None


def _word_around(text: str, offset: int) -> tuple[int, int]:
    start = offset
    while start > 0 and text[start - 1] in _WORD_CHARS:
        start -= 1
    end = offset
    while end < len(text) and text[end] in _WORD_CHARS:
        end += 1
    return start, end


def resolve(document: ScannedDocument, offset: int) -> Context:
    """Describe what is at ``offset`` in ``document``; never raises."""
    text = document.text
    offset = max(0, min(offset, len(text)))
    for index, header in enumerate(document.headers):
        if header.inner_start <= offset <= header.inner_end:
            path: tuple[str, ...] = ()
            for part in header.parts:
                path += (part.name,)
                if part.start <= offset <= part.end:
                    break
            if not header.parts:
                path = ("",)
            start = header.parts[0].start if header.parts else offset
            end = header.parts[-1].end if header.parts else offset
            return Context("header", path, (start, end), index, header.is_array)
    for entry in document.entries:
        for position, part in enumerate(entry.parts):
            if part.start <= offset <= part.end:
                path = entry.table + tuple(p.name for p in entry.parts[: position + 1])
                return Context("key", path, (part.start, part.end), entry.block, entry=entry)
    best: Entry | None = None
    best_equals = -1
    for entry in document.entries:
        if entry.equals is None or entry.value_end is None:
            continue
        # The innermost value wins: an entry of an inline table starts after its parent's `=`.
        if entry.equals < offset <= entry.value_end and entry.equals > best_equals:
            best, best_equals = entry, entry.equals
    inline: InlineTable | None = None
    for table in document.inline_tables:
        after_closing_brace = offset == table.end and text[table.end - 1] == "}"
        inside = table.start < offset <= table.end and not after_closing_brace
        if inside and (inline is None or table.start > inline.start):
            inline = table
    if inline is not None and inline.start > best_equals:
        # Inside `{ … }` but not on one of its keys or values: a new key of the inline table.
        return Context("key", (*inline.path, ""), (offset, offset), inline.block)
    if best is not None:
        for token in best.strings:
            inside = token.content_start <= offset <= token.content_end
            if inside and (not token.closed or offset < token.end):
                return Context(
                    "value",
                    best.path,
                    (token.content_start, token.content_end),
                    best.block,
                    entry=best,
                    string=token,
                )
        return Context("value", best.path, _word_around(text, offset), best.block, entry=best)
    line_start = text.rfind("\n", 0, offset) + 1
    if text[line_start:offset].strip() == "":
        block = sum(1 for header in document.headers if header.start < offset) - 1  # -1: root
        table_path = document.headers[block].path if block >= 0 else ()
        return Context("key", (*table_path, ""), (offset, offset), block)
    return Context("none")
