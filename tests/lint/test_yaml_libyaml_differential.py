"""The YAML scanner of lint against libyaml itself.

The daemon's serde_yaml 0.9.34 scans with unsafe-libyaml, a line-by-line translation of
libyaml's C scanner (dtolnay/unsafe-libyaml ``src/scanner.rs``). PyYAML ships that C library
as ``yaml.CSafeLoader`` (libyaml 0.2.x); its events say whether libyaml reads a text at all.
Lint composes with PyYAML's pure-Python scanner, patched where it departs from libyaml (tabs,
flow scalars, block scalar headers, escapes), so both must accept and refuse the same texts.
Tags are left out of the generated texts: their URI grammar is not what this test pins.
"""

from __future__ import annotations

import random

import pytest
import yaml

from nexo_pkg.lint.yaml_source import parse_yaml

pytestmark = pytest.mark.skipif(
    not yaml.__with_libyaml__, reason="PyYAML was built without libyaml"
)

SEEDS = (
    "extensions:\n  enabled: true\n  search_paths: [./ext, \"x y\", 'z']\n  disabled:\n"
    "    - a\n    - b\n  max_depth: 3\n  transport_defaults:\n    nats:\n"
    "      call_timeout: 30s\n  watch: {enabled: true, debounce_ms: 5}\n  entries:\n"
    "    agent_creator:\n      capabilities_grant: [agents_crud]\n",
    "agents:\n  - id: ana\n    model: {provider: x, model: y}\n    extensions_config:\n"
    '      x: |\n        text\n        more\n      y: >-\n        folded\n      z: "a\\tb"\n',
)
PIECES = (
    "~",
    "&a ",
    "{",
    "[",
    "]",
    "}",
    ",",
    ":",
    "- ",
    "-",
    "\n",
    "  ",
    " ",
    "\t",
    "#",
    "'",
    '"',
    "\\",
    "? ",
    "|",
    ">",
    "|-",
    ">+",
    "|2",
    "---",
    "...",
    "\ufeff",
    "\x85",
    "\u2028",
    "\r",
    "\r\n",
    "@",
    "`",
    "%",
    "a: b",
    "{a: b}",
    "[a, b]",
    '"\\x41"',
    "'it''s'",
    "x?",
)


def _libyaml_reads(text: str) -> bool:
    try:
        events = list(yaml.parse(text, Loader=yaml.CSafeLoader))
    except yaml.YAMLError:
        return False
    return sum(isinstance(event, yaml.DocumentStartEvent) for event in events) <= 1


def _texts(count: int) -> list[str]:
    generator = random.Random(20260)  # noqa: S311 - reproducible texts, not secrets
    texts = []
    for _ in range(count):
        text = generator.choice(SEEDS)
        for _ in range(generator.randint(1, 4)):
            at = generator.randint(0, len(text))
            if generator.random() < 0.3:
                text = text[:at] + text[at + generator.randint(1, 5) :]
            else:
                text = text[:at] + generator.choice(PIECES) + text[at:]
        texts.append(text)
    return texts


def test_lint_reads_what_libyaml_reads() -> None:
    disagreements = [
        text
        for text in _texts(1_500)
        if _libyaml_reads(text)
        != (not any(problem.kind == "syntax" for problem in parse_yaml(text).problems))
    ]
    assert disagreements == []


# Tags and directives: unsafe-libyaml 0.2.11 src/scanner.rs, as libyaml 0.2.5.
# `yaml_parser_scan_directive` refuses a directive other than %YAML and %TAG ("found unknown
# directive name"; PyYAML skips it); `yaml_parser_scan_tag_uri` takes `,`, `[` and `]` into a
# verbatim tag only (its `uri_char`), and `yaml_parser_scan_tag` ends a tag at a blank (a tab
# too) or, in flow context, at `,` ("did not find expected whitespace or line break").
TAGGED_TEXTS = [
    "%FOO bar\n---\nextensions: {}\n",
    "%RESERVED\n---\nextensions: {}\n",
    "%TAG !e! tag:e.com,2000:\n---\nextensions: !e!x {}\n",
    "extensions: !foo,bar {}\n",
    "extensions: !foo[ {}\n",
    "extensions: !foo] {}\n",
    "extensions: [!foo,bar]\n",
    "extensions: [!,bar]\n",
    "extensions: {a: !foo,b: c}\n",
    "extensions: {a: !foo}\n",
    "extensions: !foo\t{}\n",
    "extensions: !\t{}\n",
    "extensions: !<x,[y]> {}\n",
    "extensions: !<> {}\n",
    "extensions: !! {}\n",
    "extensions: ! {}\n",
    "extensions: !a!b {}\n",
    "extensions: !é {}\n",
    "extensions: !foo%2C {}\n",
    "extensions: !foo%zz {}\n",
    "extensions: !foo!bar {}\n",
]


@pytest.mark.parametrize("text", TAGGED_TEXTS)
def test_lint_reads_the_tags_and_directives_libyaml_reads(text: str) -> None:
    syntax = [problem.message for problem in parse_yaml(text).problems if problem.kind == "syntax"]
    assert _libyaml_reads(text) == (not syntax), syntax
