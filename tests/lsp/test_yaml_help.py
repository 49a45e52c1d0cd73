"""The block-YAML positions behind hover and completion in the daemon's YAML files."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nexo_pkg.lsp.yaml_help import complete_yaml, hover_yaml, yaml_navigator

EXTENSIONS = yaml_navigator("extensions")
AGENTS = yaml_navigator("agents")


def test_a_key_below_a_sequence_item_is_found_through_the_item() -> None:
    assert AGENTS is not None
    text = "agents:\n  - id: ana\n    extensions_config:\n      weather_app: {}\n"
    found = hover_yaml(AGENTS, text, text.index("extensions_config") + 2)
    assert found is not None
    markdown, (start, end) = found
    assert markdown.startswith("**`agents.extensions_config`**")
    assert text[start:end] == "extensions_config"


def test_a_key_with_an_inline_value_is_no_parent() -> None:
    assert EXTENSIONS is not None
    # `enabled: true` cannot hold `max_depth`: nothing is offered rather than a wrong guess.
    text = "extensions:\n  enabled: true\n    \n"
    assert complete_yaml(EXTENSIONS, text, text.index("    \n") + 4) == []


def test_comments_do_not_count_as_keys() -> None:
    assert EXTENSIONS is not None
    text = "# enabled: here\nextensions:\n  max_depth: 3 # deep enough\n"
    assert hover_yaml(EXTENSIONS, text, 3) is None
    found = hover_yaml(EXTENSIONS, text, text.index("max_depth"))
    assert found is not None
    assert "`integer`" in found[0]


@given(st.text(alphabet=" -:#\n\t{}[]'\"ae_xé", max_size=60), st.integers(0, 60))
def test_any_text_and_position_is_answered_without_raising(text: str, offset: int) -> None:
    offset = min(offset, len(text))
    for navigator in (EXTENSIONS, AGENTS):
        assert navigator is not None
        hover_yaml(navigator, text, offset)
        complete_yaml(navigator, text, offset)
