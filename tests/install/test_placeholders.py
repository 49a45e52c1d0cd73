"""``${...}`` in the daemon's YAML files are found as its loader finds them
(``crates/config/src/env.rs:19-82``, ``find_placeholders``): one finder serves both the
install root's ``discovery.yaml`` and lint's ``extensions.yaml``."""

from __future__ import annotations

from nexo_pkg.manifest.daemon_config import find_placeholders


def _inners(text: str) -> list[str]:
    return [inner for _, _, inner in find_placeholders(text)]


def test_placeholders_in_quotes_count_and_comments_do_not() -> None:
    # As the daemon's scan, any `#` outside quotes starts a comment, even inside a word.
    text = "a: ${A}\nb: \"${B}\"\nc: '${C}'  # ${NOT_ME}\n# ${NOR_ME}\nd: x#${D}\ne: '#${E}'\n"
    assert _inners(text) == ["A", "B", "C", "E"]


def test_braces_nest_and_spans_cover_the_placeholder() -> None:
    text = "k: ${VAR:-{a}}!"
    ((start, end, inner),) = list(find_placeholders(text))
    assert inner == "VAR:-{a}"
    assert text[start:end] == "${VAR:-{a}}"


def test_an_unterminated_placeholder_ends_the_scan() -> None:
    # The daemon's scan never advances past it (its loader does not finish); ours stops.
    assert _inners("a: ${A}\nb: ${B\nc: ${C}\n") == ["A"]
