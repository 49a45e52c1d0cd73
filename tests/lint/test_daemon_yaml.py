"""extensions.yaml, agents.yaml and agents.d/ read as the daemon reads them.

The daemon's config loader (lordmacu/nexo-rs ``crates/config/src/lib.rs`` at eec3f33:
``load_required`` / ``deserialize_yaml_with_schema_version``) substitutes ``${...}`` in the raw
text, parses it into a serde_yaml ``Value``, removes a top-level ``schema_version`` and reads
the struct from the ``Value``; an ``agents.d/`` drop-in (``merge_agents_drop_in``) is read
straight from the text into the struct. The library is serde_yaml 0.9.34 (its Cargo.lock), so
the rules below cite dtolnay/serde-yaml at tag 0.9.34; durations are ``humantime`` 2.x's
(tailhook/humantime ``src/duration.rs``); discovery is ``walkdir``'s walk as
``crates/extensions/src/discovery.rs`` drives it (BurntSushi/walkdir: ``filter_entry`` sees the
root entry, depth 0, too).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support import cli
from support.lint_cli import run_lint_json

from nexo_pkg.lint import yaml_source

from .test_microapp_config import GRANTED, MICROAPP, MODEL, Finding, lint_yaml, project


def _plain(tmp_path: Path) -> None:
    """The microapp under ./extensions without a companion: no admin checks across files."""
    project(tmp_path, None, companion="")


# -- 1. a null is the default of a list, map or struct (through a `Value`) ---------------------
# serde_yaml 0.9.34 src/value/de.rs:393 `Value::Null => visit_sequence(Sequence::new(), ...)`,
# :423 `Value::Null => visit_mapping(Mapping::new(), ...)`, and `deserialize_struct` is
# `deserialize_map` (:437).
NULL_IS_DEFAULT = [
    "extensions:\n",
    "extensions: ~\n",
    "extensions:\n  entries:\n",
    "extensions:\n  entries: {agent_creator: }\n",
    "extensions:\n  entries:\n    agent_creator:\n      capabilities_grant:\n",
    "extensions:\n  disabled:\n",
    "extensions:\n  allowlist: ~\n",
    "extensions:\n  ignore_dirs: null\n",
    "extensions:\n  watch:\n  doctor: ~\n  transport_defaults: {nats: }\n",
    "schema_version: 1\nextensions:\n  search_paths:\n",
]


@pytest.mark.parametrize("text", NULL_IS_DEFAULT)
def test_a_null_container_is_its_default(tmp_path: Path, text: str) -> None:
    _plain(tmp_path)
    assert lint_yaml(tmp_path, "extensions.yaml", text) == (0, [])


@pytest.mark.parametrize(
    "text",
    [
        "extensions:\n  max_depth: ~\n",
        "extensions:\n  enabled:\n",
        "extensions:\n  follow_links: null\n",
    ],
)
def test_a_null_scalar_is_still_refused(tmp_path: Path, text: str) -> None:
    """A number or a boolean has no such default: `Value::Null` is `invalid type: unit`."""
    _plain(tmp_path)
    assert lint_yaml(tmp_path, "extensions.yaml", text) == (1, [("NX221", 2, "error")])


def test_a_null_search_paths_is_no_search_path_not_the_default(tmp_path: Path) -> None:
    """`search_paths:` is an empty list (not `["./extensions"]`): nothing is discovered."""
    _plain(tmp_path)
    text = "extensions:\n  search_paths:\n  disabled: [agent_creator]\n"
    assert lint_yaml(tmp_path, "extensions.yaml", text) == (0, [("NX229", 3, "warning")])
    text = "extensions:\n  disabled: [agent_creator]\n"
    assert lint_yaml(tmp_path, "extensions.yaml", text) == (0, [])


def test_a_null_extensions_config_in_agents_yaml_is_an_empty_map(tmp_path: Path) -> None:
    _plain(tmp_path)
    model = MODEL
    text = f"agents:\n  - id: bob\n    extensions_config:\n{model}  - id: ana\n"
    text += f"    extensions_config: ~\n{model}"
    assert lint_yaml(tmp_path, "agents.yaml", text) == (
        0,
        [("NX230", 3, "warning"), ("NX230", 6, "warning")],
    )


# -- 2. serde_yaml's keys, integers and nesting --------------------------------------------
@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        ("extensions.yaml", "extensions:\n  entries: {123: {}}\n", 2),
        ("extensions.yaml", "extensions:\n  entries:\n    true: {}\n", 3),
        ("extensions.yaml", "extensions:\n  entries:\n    ~: {}\n", 3),
        (
            "agents.yaml",
            "agents:\n  - id: a\n    extensions_config: {1: {}}\n" + MODEL,
            3,
        ),
        (
            "agents.yaml",
            "agents:\n  - id: a\n    extensions_config: {1.5: {}}\n" + MODEL,
            3,
        ),
    ],
)
def test_a_key_that_is_not_a_string_is_refused(
    tmp_path: Path, name: str, text: str, line: int
) -> None:
    """A `BTreeMap<String, _>` reads its keys with `deserialize_string`: a number, boolean or
    null key is `invalid type` (serde_yaml src/value/de.rs), and the daemon does not start."""
    _plain(tmp_path)
    code, found = lint_yaml(tmp_path, name, text)
    assert code == 1
    assert ("NX222", line, "error") in found


def test_a_quoted_number_is_a_string_key(tmp_path: Path) -> None:
    _plain(tmp_path)
    text = 'agents:\n  - id: a\n    extensions_config: {"1": {}}\n' + MODEL
    code, found = lint_yaml(tmp_path, "agents.yaml", text)
    assert code == 0
    assert ("NX222", 3, "error") not in found


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        ("0b11", True),  # src/de.rs parse_unsigned_int: `0b` binary
        ("0o7", True),
        ("0x3", True),
        ("+3", True),
        ("010", False),  # digits_but_not_number: a leading zero makes a string
        ("03", False),
        ("0", True),
        ("3.0", False),  # a float is no usize
        ("1_0", False),  # Rust's from_str_radix takes no `_`
        ("'3'", False),  # quoted: a string
    ],
)
def test_the_integer_grammar_is_serde_yamls(tmp_path: Path, value: str, accepted: bool) -> None:
    _plain(tmp_path)
    code, found = lint_yaml(tmp_path, "extensions.yaml", f"extensions:\n  max_depth: {value}\n")
    assert (code, found) == ((0, []) if accepted else (1, [("NX221", 2, "error")]))


def _nested(levels: int) -> str:
    return "{a: " * levels + "1" + "}" * levels


@pytest.mark.parametrize(("levels", "accepted"), [(100, True), (125, True), (126, False)])
def test_the_nesting_limit_is_128_containers(tmp_path: Path, levels: int, accepted: bool) -> None:
    """serde_yaml 0.9.34 src/de.rs: `remaining_depth: 128`, one taken per sequence or mapping
    (`recursion_check`). Here the document, `agents` and the agent are three of them."""
    _plain(tmp_path)
    text = (
        f"agents:\n  - id: a\n    extensions_config: {{agent_creator: {_nested(levels - 1)}}}\n"
        + MODEL
    )
    code, found = lint_yaml(tmp_path, "agents.yaml", text)
    if accepted:
        assert code == 0
        assert [item for item in found if item[0] == "NX222"] == []
    else:
        assert code == 1
        assert ("NX222", 3, "error") in found


DEPTH_REFUSAL = (
    "values are nested more than 128 levels deep (the daemon's YAML reader stops there: "
    "recursion limit exceeded)"
)


@pytest.mark.parametrize(
    ("nested", "after"),
    [
        ("[" * 200 + "]" * 200, ""),
        ("[" * 5_000 + "]" * 5_000, ""),
        ("{a: " * 5_000 + "1" + "}" * 5_000, ""),
        ("[" * 300 + "]" * 300, "  bogus: [\n"),
        ("[" * 300 + "]" * 300, "---\nextensions:\n"),
    ],
    ids=["200-levels", "5000-levels", "5000-mappings", "then-a-syntax-error", "then-a-document"],
)
def test_nesting_past_the_limit_is_refused_where_serde_yaml_stops_whatever_the_depth(
    tmp_path: Path, nested: str, after: str
) -> None:
    """serde_yaml 0.9.34 src/de.rs:632-640 (`recursion_check`, `RecursionLimitExceeded(mark)`)
    refuses the container that opens the 129th level, at its position, however deep the file
    goes on; and src/de.rs:128-137 deserialises the events read so far before it returns the
    parse error that stopped the loader (src/loader.rs:63) or looks for a second document, so a
    syntax error or a `---` after that point is never what the daemon reports. Here the
    document and `extensions` are two levels: the 127th `[` (column 13 + 126) is the 129th."""
    _plain(tmp_path)
    path = tmp_path / "config" / "extensions.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"extensions:\n  disabled: {nested}\n{after}", encoding="utf-8")
    code, report = run_lint_json([path], cwd=tmp_path)
    width = 4 if nested.startswith("{") else 1
    found = [
        (item["code"], item["message"], item["range"]["start"])
        for item in report["files"][0]["diagnostics"]
    ]
    assert (code, found) == (
        1,
        [("NX222", DEPTH_REFUSAL, {"line": 2, "column": 13 + 126 * width})],
    )


def test_a_million_levels_are_refused_in_bounded_time(tmp_path: Path) -> None:
    """Two megabytes of `[` (under the 4 MiB cap): the same refusal, from the console script,
    in seconds (reading stops where serde_yaml stops, not after scanning every level)."""
    _plain(tmp_path)
    path = tmp_path / "config" / "extensions.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    levels = 1_000_000
    path.write_text(f"extensions:\n  disabled: {'[' * levels}{']' * levels}\n", encoding="utf-8")
    result = cli.nexo("plugin", "lint", "--format", "json", path, cwd=tmp_path, timeout=60)
    assert result.code == 1, result.stderr
    found = [
        (item["code"], item["message"], item["range"]["start"])
        for item in json.loads(result.stdout)["files"][0]["diagnostics"]
        if item["code"] == "NX222"
    ]
    assert found == [("NX222", DEPTH_REFUSAL, {"line": 2, "column": 139})]


def test_an_anchor_defined_again_names_its_newest_node(tmp_path: Path) -> None:
    """serde_yaml 0.9.34 src/loader.rs `next_document`: an anchor is `anchors.insert(anchor,
    id)`, so a name defined again maps to the newer node and the file loads (PyYAML's composer
    refuses it: "found duplicate anchor"). `enabled: *n` is then `false`, a boolean; the first
    definition, `3`, would be `NX221` (reported where that value is written)."""
    _plain(tmp_path)
    text = "extensions:\n  max_depth: &n 3\n  follow_links: &n false\n  enabled: *n\n"
    assert lint_yaml(tmp_path, "extensions.yaml", text) == (0, [])
    text = "extensions:\n  follow_links: &n false\n  max_depth: &n 3\n  enabled: *n\n"
    assert lint_yaml(tmp_path, "extensions.yaml", text) == (1, [("NX221", 3, "error")])


def _repeated(levels: int) -> str:
    """Anchors ten wide, ``levels`` deep, under an opaque ``extensions_config`` value."""
    lines = ["        s: &s x", "        l0: &l0 [" + ", ".join(["*s"] * 10) + "]"]
    lines += [
        f"        l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 10) + "]"
        for level in range(1, levels)
    ]
    text = "agents:\n  - id: a\n    extensions_config:\n      agent_creator:\n"
    return text + "\n".join([*lines, ""]) + MODEL


@pytest.mark.parametrize(("levels", "accepted"), [(3, True), (4, False)])
def test_aliases_followed_past_serde_yamls_budget_are_refused(
    tmp_path: Path, levels: int, accepted: bool
) -> None:
    """serde_yaml 0.9.34 src/de.rs `jump`: every alias followed (inside a repeated one too)
    counts, and past 100 per parse event of the document (src/loader.rs: scalars, aliases,
    collection starts and ends) it refuses the file, "repetition limit exceeded". Three levels:
    1,230 aliases followed for 56 events; four: 12,340 for 69, far below the 100,000 values
    nexo-pkg's own expansion cap stops at."""
    _plain(tmp_path)
    code, found = lint_yaml(tmp_path, "agents.yaml", _repeated(levels))
    if accepted:
        assert code == 0
        assert [item for item in found if item[0] == "NX222"] == []
    else:
        assert code == 1
        assert [item for item in found if item[0] == "NX222"] == [("NX222", 9, "error")]


def test_a_long_file_without_aliases_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nexo-pkg's own expansion cap (`MAX_NODES`, lowered here to keep the file small) bounds
    what aliases add, not the values a file writes out: serde_yaml has no such limit, so a
    list longer than the cap is read whole, every item checked, none of them taken for null."""
    monkeypatch.setattr(yaml_source, "MAX_NODES", 1_000)
    _plain(tmp_path)
    items = "".join(f"    - agent_creator{index}\n" for index in range(1_500))
    text = f"extensions:\n  enabled: false\n  disabled:\n{items}"
    assert lint_yaml(tmp_path, "extensions.yaml", text) == (0, [])


def test_a_file_nexo_stops_reading_gets_no_findings_on_what_it_did_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where aliases expand past the cap, reading stops there: one `NX222` at the alias being
    expanded, and no type finding on the values never read (they are not null)."""
    monkeypatch.setattr(yaml_source, "MAX_NODES", 1_000)
    _plain(tmp_path)
    grants = ", ".join(f"g{index}" for index in range(100))
    aliases = "".join(f"    id{index}: *e\n" for index in range(20))
    text = f"extensions:\n  entries:\n    first: &e {{capabilities_grant: [{grants}]}}\n{aliases}"
    assert lint_yaml(tmp_path, "extensions.yaml", text) == (1, [("NX222", 14, "error")])


@pytest.mark.parametrize(
    ("escape", "accepted"),
    [
        ("\\ud800", False),
        ("\\udfff", False),
        ("\\ud83d\\ude00", False),
        ("\\U00110000", False),
        ("\\U0010FFFF", True),
        ("\\U0001F600", True),
        ("\\u00e9", True),
    ],
)
def test_an_escape_naming_no_unicode_character_is_refused(
    tmp_path: Path, escape: str, accepted: bool
) -> None:
    """unsafe-libyaml 0.2.11 src/scanner.rs (`yaml_parser_scan_flow_scalar`): `value >= 0xD800
    && value <= 0xDFFF || value > 0x10FFFF` is "found invalid Unicode character escape code";
    a surrogate pair is two such escapes, not one character. A syntax error of the file, never
    a crash."""
    _plain(tmp_path)
    text = f'extensions:\n  enabled: false\n  disabled: ["{escape}"]\n'
    assert lint_yaml(tmp_path, "extensions.yaml", text) == (
        (0, []) if accepted else (1, [("NX222", 3, "error")])
    )


@pytest.mark.parametrize(
    "text",
    [
        "extensions:\n  enabled: false\t# off until the grants are reviewed\n",
        "extensions:\n  enabled: false\t\n",
        "extensions:\n  enabled:\tfalse\n",
        "extensions:\n  enabled: false\n  disabled: ['a'\t, \"b\"\t, c\t]\n",
        "extensions:\n  enabled: false\n  disabled: [x?, y?z]\n",
        "extensions:\n  enabled: false\n  disabled:\n    - two\twords\n",
        "agents:\n  - id: a\n    extensions_config:\n      agent_creator: |#raw\n        x\n"
        + MODEL,
        "agents:\n  - id: a\n    extensions_config:\n      agent_creator: >-\t# c\n        x\n"
        + MODEL,
    ],
)
def test_tabs_and_flow_scalars_as_libyaml_scans_them(tmp_path: Path, text: str) -> None:
    """unsafe-libyaml 0.2.11 src/scanner.rs: `yaml_parser_scan_to_next_token` skips a tab
    where no simple key may start (after `key:` or a quoted scalar, and in flow context);
    `yaml_parser_scan_plain_scalar` takes spaces and tabs alike as the blanks inside and after
    a plain scalar, and ends one in flow context only at `,[]{}` or `: ` (`x?` is a scalar);
    `yaml_parser_scan_block_scalar` takes blanks or a comment right after a block scalar's
    indicators (`|#raw`). PyYAML refuses each of these."""
    _plain(tmp_path)
    name = "agents.yaml" if text.startswith("agents") else "extensions.yaml"
    code, found = lint_yaml(tmp_path, name, text)
    assert code == 0
    assert [item for item in found if item[0] == "NX222"] == []


@pytest.mark.parametrize(
    "text",
    [
        "extensions:\n\tenabled: false\n",
        "agents:\n  - id: a\n    extensions_config:\n      agent_creator: |\n       \tx\n" + MODEL,
        "extensions:\n  enabled: false\n  disabled: [a:]\n",
        "extensions:\n  enabled: false\n  disabled:\n  -\ta\n",
    ],
)
def test_tabs_and_colons_libyaml_refuses(tmp_path: Path, text: str) -> None:
    """A tab that indents a line or a block scalar ("found a tab character where an indentation
    space is expected", `yaml_parser_scan_block_scalar_breaks`), a `:` before a flow indicator
    ("found unexpected ':'"), a tab right after `-`: refused by the daemon's YAML reader."""
    _plain(tmp_path)
    code, found = lint_yaml(tmp_path, "extensions.yaml", text)
    assert code == 1
    assert [item[0] for item in found] == ["NX222"]


# -- 3. durations need a unit; ${VAR} is substituted before parsing --------------------------
@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        ("30s", True),
        ("1m 30s", True),
        ("500ms", True),
        ("'30'", False),  # humantime: "time unit needed, for example 30sec or 30ms"
        ("5 parsecs", False),  # "unknown time unit"
        ("30", False),  # an integer: humantime_serde takes only a string
        ("''", False),  # "value was empty"
        ("-5s", False),  # "expected number at 0"
    ],
)
def test_durations_as_humantime_reads_them(tmp_path: Path, value: str, accepted: bool) -> None:
    _plain(tmp_path)
    text = f"extensions:\n  transport_defaults:\n    nats:\n      call_timeout: {value}\n"
    code, found = lint_yaml(tmp_path, "extensions.yaml", text)
    assert (code, found) == ((0, []) if accepted else (1, [("NX221", 4, "error")]))


def test_a_duration_message_is_humantimes(tmp_path: Path) -> None:
    from support.lint_cli import run_lint_json

    _plain(tmp_path)
    path = tmp_path / "config" / "extensions.yaml"
    path.write_text('extensions:\n  transport_defaults: {nats: {shutdown_grace: "30"}}\n')
    _, report = run_lint_json([path], cwd=tmp_path)
    [diagnostic] = report["files"][0]["diagnostics"]
    assert diagnostic["message"] == (
        "`extensions.transport_defaults.nats.shutdown_grace` = `30` is not a duration the "
        "daemon reads: time unit needed, for example 30sec or 30ms"
    )


def _env(**values: str) -> dict[str, str]:
    return {**os.environ, **values}


@pytest.mark.parametrize(
    ("text", "variables", "expected"),
    [
        # The substituted text is what gets parsed and type-checked.
        ("extensions:\n  max_depth: ${NEXO_T_X}\n", {"NEXO_T_X": "four"}, [("NX221", 2, "error")]),
        ("extensions:\n  max_depth: ${NEXO_T_X}\n", {"NEXO_T_X": "4"}, []),
        ("extensions:\n  max_depth: ${NEXO_T_X}\n", {"NEXO_T_X": "010"}, [("NX221", 2, "error")]),
        ("extensions:\n  enabled: ${NEXO_T_X}\n", {"NEXO_T_X": "yes"}, [("NX221", 2, "error")]),
        ("extensions:\n  enabled: ${NEXO_T_X}\n", {"NEXO_T_X": "false"}, []),
        # `${X-3}` with X set but empty leaves an empty value: a null.
        ("extensions:\n  max_depth: ${NEXO_T_X-3}\n", {"NEXO_T_X": ""}, [("NX221", 2, "error")]),
        ("extensions:\n  max_depth: ${NEXO_T_X:-3}\n", {"NEXO_T_X": ""}, []),
        ("extensions:\n  disabled: ${NEXO_T_X-[a]}\n", {"NEXO_T_X": ""}, []),
        # A flow sequence substituted in is a list.
        (
            "extensions:\n  ignore_dirs: ${NEXO_T_X}\n",
            {"NEXO_T_X": "[target, dist]"},
            [],
        ),
        (
            "extensions:\n  transport_defaults: {nats: {call_timeout: '${NEXO_T_X}'}}\n",
            {"NEXO_T_X": "30"},
            [("NX221", 2, "error")],
        ),
    ],
)
def test_placeholders_are_substituted_before_parsing(
    tmp_path: Path, text: str, variables: dict[str, str], expected: list[Finding]
) -> None:
    _plain(tmp_path)
    code, found = lint_yaml(tmp_path, "extensions.yaml", text, env=_env(**variables))
    assert (code, found) == (1 if expected else 0, expected)


def test_a_substitution_that_breaks_the_yaml_is_refused(tmp_path: Path) -> None:
    _plain(tmp_path)
    text = "extensions:\n  disabled: ${NEXO_T_X}\n"
    code, found = lint_yaml(tmp_path, "extensions.yaml", text, env=_env(NEXO_T_X="[a"))
    assert code == 1
    assert [item[0] for item in found] == ["NX222"]


# -- 4. discovery as walkdir walks -----------------------------------------------------------
def _microapp_at(directory: Path) -> None:
    directory.mkdir(parents=True)
    (directory / "plugin.toml").write_text(MICROAPP, encoding="utf-8")


@pytest.mark.parametrize(
    ("layout", "search_path", "extra", "found"),
    [
        # The ignored names filter the root entry too: `./dist` itself is skipped.
        ("dist/agent_creator", "./dist", "", False),
        ("apps/agent_creator", "./apps", "", True),
        ("dist/agent_creator", "./dist", "  ignore_dirs: [target]\n", True),
        # max_depth is raised to at least 1 (`max_depth.max(1)`, discovery.rs).
        ("flat", "./flat", "  max_depth: 0\n", True),
        ("flat/a/b/agent_creator", "./flat", "  max_depth: 3\n", False),
        ("flat/a/agent_creator", "./flat", "  max_depth: 3\n", True),
        # `~` is never expanded: it is a directory named `~` under the working directory.
        ("~/apps/agent_creator", "~/apps", "", True),
    ],
)
def test_discovery_walks_as_the_daemon(
    tmp_path: Path, layout: str, search_path: str, extra: str, found: bool
) -> None:
    _microapp_at(tmp_path / layout)
    (tmp_path / "config").mkdir()
    text = f"extensions:\n  search_paths: ['{search_path}']\n{extra}  disabled: [agent_creator]\n"
    home = tmp_path / "home"
    _microapp_at(home / "apps" / "agent_creator")
    code, findings = lint_yaml(tmp_path, "extensions.yaml", text, env=_env(HOME=str(home)))
    assert code == 0
    nx229 = [item for item in findings if item[0] == "NX229"]
    assert nx229 == ([] if found else [("NX229", 3 + extra.count("\n"), "warning")])


def test_tilde_is_not_the_home_directory(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    home = tmp_path / "home"
    _microapp_at(home / "apps" / "agent_creator")
    text = "extensions:\n  search_paths: ['~/apps']\n  disabled: [agent_creator]\n"
    code, findings = lint_yaml(tmp_path, "extensions.yaml", text, env=_env(HOME=str(home)))
    assert (code, findings) == (0, [("NX229", 3, "warning")])


# -- 5. agents.d drop-ins are read straight into the struct ---------------------------------
def test_schema_version_in_a_drop_in_is_an_unknown_key(tmp_path: Path) -> None:
    _plain(tmp_path)
    text = "schema_version: 1\nagents:\n  - id: a\n" + MODEL
    assert lint_yaml(tmp_path, "agents.d/10-a.yaml", text) == (1, [("NX220", 1, "error")])
    # agents.yaml's own is removed before the struct is read.
    assert lint_yaml(tmp_path, "agents.yaml", text) == (0, [])


def test_an_empty_extensions_config_in_a_drop_in_is_an_empty_map(tmp_path: Path) -> None:
    """src/de.rs `deserialize_map`: an empty plain scalar is an empty map; `~` is not."""
    _plain(tmp_path)
    text = "agents:\n  - id: a\n    extensions_config:\n" + MODEL
    assert lint_yaml(tmp_path, "agents.d/10-a.yaml", text) == (0, [("NX230", 3, "warning")])
    text = "agents:\n  - id: a\n    extensions_config: ~\n" + MODEL
    assert lint_yaml(tmp_path, "agents.d/10-a.yaml", text) == (
        1,
        [("NX230", 3, "warning"), ("NX221", 3, "error")],
    )


def test_granted_stays_clean(tmp_path: Path) -> None:
    project(tmp_path, None)
    assert lint_yaml(tmp_path, "extensions.yaml", GRANTED) == (0, [])


# -- 6. a companion the daemon skips has no admin capabilities to grant ------------------------
def test_a_skipped_companion_needs_no_grant(tmp_path: Path) -> None:
    """With the companion's `version` not SemVer the host skips the file: its `required`
    admin capabilities are not asked for, so no grant is missing (the companion's own lint
    says why it is skipped, NX216)."""
    from .test_microapp_config import COMPANION

    project(tmp_path, None, companion=COMPANION.replace('version = "0.1.0"', 'version = "1"'))
    assert lint_yaml(tmp_path, "extensions.yaml", "extensions:\n  enabled: true\n") == (0, [])
    project_ok = tmp_path / "ok"
    project_ok.mkdir()
    project(project_ok, None)
    code, found = lint_yaml(project_ok, "extensions.yaml", "extensions:\n  enabled: true\n")
    assert code == 1
    assert ("NX225", 1, "error") in found


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        ("true", True),  # src/de.rs parse_bool: "true" | "True" | "TRUE"
        ("True", True),
        ("TRUE", True),
        ("False", True),
        ("FALSE", True),
        ("tRUE", False),  # any other spelling is a string (YAML 1.2 core schema)
        ("yes", False),
        ("on", False),
        ("y", False),
        ("'true'", False),  # quoted: a string
    ],
)
def test_the_boolean_grammar_is_serde_yamls(tmp_path: Path, value: str, accepted: bool) -> None:
    _plain(tmp_path)
    code, found = lint_yaml(tmp_path, "extensions.yaml", f"extensions:\n  follow_links: {value}\n")
    assert (code, found) == ((0, []) if accepted else (1, [("NX221", 2, "error")]))
