"""Every relative link of README.md, docs/ and the scaffolded READMEs leads somewhere: the file
it names exists, and a ``#fragment`` names a heading of that page as GitHub renders it (or an
``<a id>``/``<a name>``). A renamed heading or a moved page breaks the link that pointed at it
here, not on the reader's screen."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TEMPLATES = sorted((REPO / "nexo_pkg" / "scaffold" / "templates").glob("*/README.md"))
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *TEMPLATES]

_FENCE = re.compile(r"^ *```")
_HEADING = re.compile(r"^#{1,6} +(.*?) *#* *$")
_LINK = re.compile(r"\]\(([^)\s]+)(?: \"[^\"]*\")?\)")
_ANCHOR_TAG = re.compile(r"<a (?:name|id)=\"([^\"]+)\"")


def _prose(page: Path) -> list[tuple[int, str]]:
    """The lines of ``page`` outside fenced code blocks, numbered from 1."""
    lines: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


def _slug(heading: str) -> str:
    """GitHub's anchor for ``heading``: lower case, punctuation dropped (``-`` and ``_``
    kept; the text of a code span stays, its backquotes go), each space a ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The fragments a link to ``page`` may name; a repeated heading's get ``-1``, ``-2``..."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in _prose(page):
        found.update(_ANCHOR_TAG.findall(line))
        heading = _HEADING.match(line)
        if heading is None:
            continue
        slug = _slug(heading.group(1))
        count = seen.get(slug, 0)
        found.add(slug if count == 0 else f"{slug}-{count}")
        seen[slug] = count + 1
    return found


def links(page: Path) -> list[tuple[int, str]]:
    """The relative link targets of ``page``'s prose (inline code left out)."""
    found: list[tuple[int, str]] = []
    for number, line in _prose(page):
        for target in _LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target):  # http:, mailto:, ...
                found.append((number, target))
    return found


def broken_links(page: Path) -> list[str]:
    broken: list[str] = []
    for number, target in links(page):
        path, _, fragment = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        where = f"{page.relative_to(REPO)}:{number}: {target}"
        if not linked.exists():
            broken.append(f"{where} (no such file)")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(f"{where} (no such heading)")
    return broken


def test_the_pages_link_to_each_other() -> None:
    """The check reads what it should: the pages' links, many with a heading."""
    targets = [target for page in PAGES for _, target in links(page)]
    assert len(targets) > 100
    assert sum("#" in target for target in targets) > 50
    install = anchors(REPO / "docs" / "install.md")
    assert "upgrade-list-remove-verify-outdated-rollback-enable-disable" in install
    assert "receipt-destid-versionnexo-installjson" in install


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(REPO).as_posix())
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    assert broken_links(page) == []
