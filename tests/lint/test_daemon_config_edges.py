"""Edges of the daemon's config files, read as the daemon reads them.

Sources (the versions the daemon's ``Cargo.lock`` pins at lordmacu/nexo-rs eec3f33):
durations are ``humantime`` 2.3.0 (chronotope/humantime tag ``v2.3.0``, ``src/duration.rs``:
``Parser::parse``, ``parse_fractional_part``, ``Unit::from_str`` and its tests); scalars and
tags are serde_yaml 0.9.34 (dtolnay/serde-yaml tag ``0.9.34``, ``src/de.rs``
``visit_scalar`` / ``visit_untagged_scalar``, ``src/value/de.rs`` ``untag``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.lint_cli import run_lint_json

from nexo_pkg.lsp.server import lint_text
from nexo_pkg.manifest.humantime import DurationError, parse_duration

from .test_microapp_config import MODEL, Finding, lint_yaml, project


def _plain(tmp_path: Path) -> None:
    project(tmp_path, None, companion="")


def _timeout(value: str) -> str:
    return f"extensions:\n  transport_defaults:\n    nats:\n      call_timeout: {value}\n"


# -- humantime 2.3.0: fractions, `µs`, `wk`/`wks`, `yr`/`yrs` ---------------------------------
# src/duration.rs tests `test_units`, `test_fractional_units`, `test_fractional_combined`.
ACCEPTED_DURATIONS = [
    ("4.2s", (4, 200_000_000)),
    ("163µs", (0, 163_000)),
    ("100wk", (60_480_000, 0)),
    ("104wks", (2 * 31_449_600, 0)),
    ("10yr", (10 * 31_557_600, 0)),
    ("15yrs", (15 * 31_557_600, 0)),
    ("3.001us", (0, 3001)),
    ("31.001ms", (0, 31_001_000)),
    ("1.000000002s", (1, 2)),
    ("12.1min", (726, 0)),
    ("2.5h", (9000, 0)),
    ("1.5d", (129_600, 0)),
    ("7.120us 3ns", (0, 7123)),
    ("1.234s 1.345ms 1.678us 1ns", (1, 235_346_679)),
    ("1.234s0.345ms0.678us0ns", (1, 234_345_678)),
]
REFUSED_DURATIONS = [
    ("1.s", "invalid character at 1"),
    ("1..s", "invalid character at 1"),
    (".1s", "expected number at 0"),
    ("0.5ns", "values below 1ns are not supported"),
    ("0.000123456789s", "values below 1ns are not supported"),
    ("0.00000005d", "values below 1ns are not supported"),
    ("1.5", "time unit needed, for example 1sec or 1ms"),
    ("2μs", "invalid character at 1"),  # the Greek mu is no unit character, the micro sign is
]


@pytest.mark.parametrize(("text", "expected"), ACCEPTED_DURATIONS)
def test_humantime_2_3_durations(text: str, expected: tuple[int, int]) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize(("text", "message"), REFUSED_DURATIONS)
def test_humantime_2_3_refusals(text: str, message: str) -> None:
    with pytest.raises(DurationError) as caught:
        parse_duration(text)
    assert message in str(caught.value)


def test_the_exact_nanosecond_carry_at_the_top_is_refused() -> None:
    """``add_current`` leaves exactly 1e9 ns to ``Duration::new``, which carries it into the
    seconds and panics when they are already ``u64::MAX``."""
    with pytest.raises(DurationError, match="panics"):
        parse_duration("18446744073709551615s 1000000000ns")
    assert parse_duration("1s 1000000000ns") == (2, 0)


@pytest.mark.parametrize("value", ["1.5s", "163µs", "2wk", "1yr", "0.5h"])
def test_a_fractional_or_new_unit_duration_passes_lint(tmp_path: Path, value: str) -> None:
    _plain(tmp_path)
    assert lint_yaml(tmp_path, "extensions.yaml", _timeout(value)) == (0, [])


@pytest.mark.parametrize("value", ["1.s", "0.5ns", "'1.5'"])
def test_a_bad_fraction_fails_lint(tmp_path: Path, value: str) -> None:
    _plain(tmp_path)
    assert lint_yaml(tmp_path, "extensions.yaml", _timeout(value)) == (1, [("NX221", 4, "error")])


# -- YAML tags as serde_yaml 0.9.34 reads them into a `Value` --------------------------------
# src/de.rs `visit_scalar`: a `!!bool`/`!!int`/`!!float`/`!!null` scalar is read as that type
# whatever its quoting (`invalid value` otherwise); another `tag:yaml.org,2002:` tag (`!!str`)
# leaves a string; a local tag (`!foo`) makes a `Value::Tagged` whose plain content follows the
# untagged grammar, unwrapped by `Value::untag` (src/value/de.rs `deserialize_string`,
# `deserialize_bool`, `deserialize_number`).
@pytest.mark.parametrize(
    "line",
    [
        "follow_links: !!bool 'true'",
        'max_depth: !!int "4"',
        "max_depth: !!int 0x10",
        "search_paths: [!!str 1, !!str true]",
        "watch: {debounce_ms: !ms 250}",
        "follow_links: !flag true",
        "disabled: [!id agent_creator]",
    ],
)
def test_a_tag_the_daemon_reads_passes(tmp_path: Path, line: str) -> None:
    _plain(tmp_path)
    assert lint_yaml(tmp_path, "extensions.yaml", f"extensions:\n  {line}\n") == (0, [])


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("max_depth: !!str 4", "NX221"),  # a string where a usize goes
        ("search_paths: [!!int '1']", "NX221"),  # an integer where a string goes
        ("max_depth: !!float 3", "NX221"),  # 3.0: a float is no usize
        ("follow_links: !!bool yes", "NX222"),  # `invalid value: string "yes", expected a boolean`
        ("max_depth: !!int 010", "NX222"),  # a leading zero is no integer, tag or not
        ("follow_links: !flag 'true'", "NX221"),  # quoted: a tagged string
    ],
)
def test_a_tag_the_daemon_refuses_fails(tmp_path: Path, line: str, code: str) -> None:
    _plain(tmp_path)
    assert lint_yaml(tmp_path, "extensions.yaml", f"extensions:\n  {line}\n") == (
        1,
        [(code, 2, "error")],
    )


# unsafe-libyaml 0.2.11 src/scanner.rs (libyaml 0.2.5): `yaml_parser_scan_directive` stops at a
# directive other than %YAML and %TAG; `yaml_parser_scan_tag` ends a shorthand tag at a blank, a
# tab included, or, in flow context, at `,`, whose `yaml_parser_scan_tag_uri` (`uri_char` false)
# does not take `,[]`. The file then is no YAML to serde_yaml, or is read as libyaml reads it.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("%FOO bar\n---\nextensions: {}\n", (1, [("NX222", 1, "error")])),
        ("extensions:\n  follow_links: !flag,x true\n", (1, [("NX222", 2, "error")])),
        ("extensions:\n  disabled: !id[0] [agent_creator]\n", (1, [("NX222", 2, "error")])),
        ("extensions:\n  max_depth: !n\t3\n", (0, [])),
        # `!id` tags the empty scalar before `,`: a `Value::Tagged` null, no string.
        ("extensions:\n  disabled: [!id,agent_creator]\n", (1, [("NX221", 2, "error")])),
        ("extensions:\n  disabled: !<!ids,[x]> [agent_creator]\n", (0, [])),
    ],
)
def test_tags_and_directives_as_libyaml_scans_them(
    tmp_path: Path, text: str, expected: tuple[int, list[Finding]]
) -> None:
    _plain(tmp_path)
    assert lint_yaml(tmp_path, "extensions.yaml", text) == expected


# serde_yaml 0.9.34 src/libyaml/parser.rs `Parser::new` sets the encoding to UTF-8, so
# unsafe-libyaml's reader never drops a byte-order mark (src/reader.rs: encoding detection only
# for `YAML_ANY_ENCODING`); its scanner skips one at column 0 (src/scanner.rs
# `yaml_parser_scan_to_next_token`, `SKIP` moves the column to 1). The first line of a file that
# starts with one sits a column right of the next: a second top-level key (or `- ` item) at
# column 0 ends the document ("did not find expected <document start>"); a second mark is text.
BOM = "\ufeff"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (BOM + "schema_version: 1\nextensions: {}\n", (1, [("NX222", 2, "error")])),
        (BOM + "extensions: {}\nschema_version: 1\n", (1, [("NX222", 2, "error")])),
        (BOM + "extensions:\n  max_depth: 3\n", (0, [])),
        (BOM + "# a comment\nschema_version: 1\nextensions: {}\n", (0, [])),
        (BOM + "\nschema_version: 1\nextensions: {}\n", (0, [])),
        (BOM + BOM + "extensions: {}\n", (1, [("NX221", 1, "error"), ("NX220", 1, "error")])),
    ],
)
def test_a_leading_byte_order_mark_is_a_column_to_the_daemon(
    tmp_path: Path, text: str, expected: tuple[int, list[Finding]]
) -> None:
    _plain(tmp_path)
    assert lint_yaml(tmp_path, "extensions.yaml", text) == expected


def test_a_byte_order_mark_that_ends_the_document_is_named(tmp_path: Path) -> None:
    text = BOM + "agents:\n- id: ana\n  model: {provider: x, model: y}\n"
    path = tmp_path / "config" / "agents.yaml"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    code, report = run_lint_json([path], cwd=tmp_path)
    [finding] = report["files"][0]["diagnostics"]
    assert (code, finding["code"], finding["range"]["start"]["line"]) == (1, "NX222", 2)
    assert "byte-order mark" in finding["message"]
    # The editor says the same of the open document.
    [editor] = lint_text("daemon-config", text, str(path))
    assert (editor.code, editor.span.start.line) == ("NX222", 2)


def test_a_tagged_key_is_read_as_its_tag_says(tmp_path: Path) -> None:
    """`!!str 1:` is the string key "1"; `!!int "2":` an integer key, which the daemon refuses."""
    _plain(tmp_path)
    text = "extensions:\n  entries:\n    !!str 1: {}\n    !!int '2': {}\n"
    code, found = lint_yaml(tmp_path, "extensions.yaml", text)
    assert code == 1
    assert ("NX222", 4, "error") in found
    assert [item for item in found if item[1] == 3 and item[2] == "error"] == []


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("extensions.yaml", "extensions:\n  !x max_depth: 3\n  max_depth: 4\n", 3),
        (
            "extensions.yaml",
            "extensions:\n  entries:\n    agent_creator:\n      !x allow_external_bind: true\n"
            "      allow_external_bind: false\n",
            5,
        ),
        ("extensions.yaml", "!x extensions: {}\nextensions: {}\n", 2),
        ("agents.yaml", "agents:\n  - id: ana\n    !x id: bob\n" + MODEL, 3),
        # `entries` is a `BTreeMap`: serde's map visitor keeps the last of the two ids.
        (
            "extensions.yaml",
            "extensions:\n  entries:\n    !x agent_creator: {}\n    agent_creator: {}\n",
            None,
        ),
    ],
)
def test_a_field_given_twice_as_two_values_is_refused_in_a_struct_only(
    tmp_path: Path, name: str, text: str, expected: int | None
) -> None:
    """`!x max_depth` and `max_depth` are two keys of serde_yaml's `Value` (a tagged key is
    another value, 0.9.34 src/de.rs `parse_tag`: no `DuplicateKeyError`), but one field once
    the struct reads them: a field's name is read untagged (src/value/de.rs
    `deserialize_identifier` -> `deserialize_string` -> `untag`), and serde's derived
    `visit_map` refuses a field given twice (`duplicate field`)."""
    _plain(tmp_path)
    code, found = lint_yaml(tmp_path, name, text)
    if expected is None:
        assert (code, found) == (0, [])
    else:
        assert (code, [item for item in found if item[2] == "error"]) == (
            1,
            [("NX222", expected, "error")],
        )


@pytest.mark.parametrize("name", ["extensions.yaml", "agents.yaml"])
@pytest.mark.parametrize(
    ("key", "refused"),
    [("schema_version", False), ('"schema_version"', False), ("!!str schema_version", False),
     ("!x schema_version", True), ("!<!x> schema_version", True)],
)  # fmt: skip
def test_a_schema_version_the_loader_does_not_remove_is_an_unknown_field(
    tmp_path: Path, name: str, key: str, refused: bool
) -> None:
    """The loader removes the top-level key `Value::String("schema_version")` before the
    struct reads the rest (crates/config/src/lib.rs `deserialize_yaml_with_schema_version`).
    A key with a local tag is a `Value::Tagged` (serde_yaml 0.9.34 src/de.rs `parse_tag`),
    which that removal does not find: the struct, `deny_unknown_fields`, reads it untagged as
    an unknown field and refuses the file. `!!str` resolves to a plain string."""
    _plain(tmp_path)
    body = "extensions: {}\n" if name == "extensions.yaml" else "agents: []\n"
    code, found = lint_yaml(tmp_path, name, f"{key}: 1\n{body}")
    assert (code, found) == ((1, [("NX220", 1, "error")]) if refused else (0, []))


# -- keys that are not strings, where the daemon keeps an opaque `Value` ----------------------
# An agent's `extensions_config` is `BTreeMap<String, serde_yaml::Value>` (lordmacu/nexo-rs
# eec3f33 crates/config/src/types/agents.rs:366): inside a microapp's settings any key goes.
# A drop-in is read straight from the text (crates/config/src/lib.rs `merge_agents_drop_in`),
# where a `String` key is the scalar's text whatever it looks like (serde_yaml 0.9.34 src/de.rs
# `deserialize_str`); through agents.yaml's `Value` it must be a YAML string
# (src/value/de.rs `deserialize_string`).
def test_any_key_goes_inside_a_microapps_settings(tmp_path: Path) -> None:
    _plain(tmp_path)
    text = (
        "agents:\n  - id: ana\n    extensions_config:\n"
        "      agent_creator: {tiers: {1: gold, 2: silver}, true: yes, ~: none}\n" + MODEL
    )
    for name in ("agents.yaml", "agents.d/10-ana.yaml"):
        code, found = lint_yaml(tmp_path, name, text)
        assert code == 0, name
        assert [item for item in found if item[2] == "error"] == [], name


def test_a_scalar_microapp_id_key_is_its_text_in_a_drop_in_only(tmp_path: Path) -> None:
    _plain(tmp_path)
    text = "agents:\n  - id: ana\n    extensions_config: {1: {}}\n" + MODEL
    code, found = lint_yaml(tmp_path, "agents.d/10-ana.yaml", text)
    assert code == 0
    assert ("NX229", 3, "warning") in found  # the id "1" names no microapp
    assert lint_yaml(tmp_path, "agents.yaml", text) == (1, [("NX222", 3, "error")])


def test_a_sequence_key_is_refused_even_in_a_drop_in(tmp_path: Path) -> None:
    _plain(tmp_path)
    text = "agents:\n  - id: ana\n    extensions_config: {? [a] : {}}\n" + MODEL
    assert lint_yaml(tmp_path, "agents.d/10-ana.yaml", text) == (1, [("NX222", 3, "error")])


# -- the top of agents.yaml and of a drop-in: `AgentsConfig { agents: Vec<AgentConfig> }` ----
# crates/config/src/types/agents.rs:4-8 (`deny_unknown_fields`, `agents` without a default).
# An empty file reads as an empty mapping (through a `Value`: `Value::Null`, src/value/de.rs
# `deserialize_map`; straight from the text: the empty document, src/de.rs `deserialize_map`
# `Event::Void`), so `agents` is missing; `agents: ~` is an empty list through agents.yaml's
# `Value` but refused in a drop-in, where only an empty value is.
@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("agents.yaml", "", [("NX221", 1, "error")]),
        ("agents.d/10-ana.yaml", "# nothing yet\n", [("NX221", 1, "error")]),
        ("agents.yaml", "agent:\n  - id: ana\n", [("NX220", 1, "error"), ("NX221", 1, "error")]),
        ("agents.yaml", "agents: ana\n", [("NX221", 1, "error")]),
        ("agents.yaml", "agents: [ana]\n", [("NX221", 1, "error")]),
        ("agents.d/10-ana.yaml", "agents: ~\n", [("NX221", 1, "error")]),
        ("agents.yaml", "agents: ~\n", []),
        ("agents.d/10-ana.yaml", "agents:\n", []),
        ("agents.yaml", "schema_version: 2\nagents: []\n", []),
    ],
)
def test_the_top_of_an_agents_file_is_checked(
    tmp_path: Path, name: str, text: str, expected: list[tuple[str, int, str]]
) -> None:
    _plain(tmp_path)
    code, found = lint_yaml(tmp_path, name, text)
    assert (code, sorted(found)) == (1 if expected else 0, sorted(expected))


# -- discovery: walkdir without following links; duplicates kept by path order ---------------
# lordmacu/nexo-rs eec3f33 crates/extensions/src/discovery.rs:160-306: `WalkDir::new(root)
# .follow_links(false)`, then `if !entry.file_type().is_file() { continue; }` (a link's own
# type: BurntSushi/walkdir 2.5.0 src/dent.rs `file_type`); of two manifests with one id the
# first by `(root_index, root_dir)` is kept, `PathBuf` ordered by component.
def _write_microapp(directory: Path, microapp_id: str = "agent_creator") -> Path:
    from .test_microapp_config import MICROAPP

    directory.mkdir(parents=True, exist_ok=True)
    manifest = directory / "plugin.toml"
    manifest.write_text(MICROAPP.replace("agent_creator", microapp_id), encoding="utf-8")
    return manifest


def test_a_linked_plugin_toml_is_not_discovered(tmp_path: Path) -> None:
    real = _write_microapp(tmp_path / "shared" / "agent_creator")
    linked = tmp_path / "extensions" / "agent_creator"
    linked.mkdir(parents=True)
    (linked / "plugin.toml").symlink_to(real)
    (tmp_path / "config").mkdir()
    text = "extensions:\n  entries:\n    agent_creator: {}\n"
    assert lint_yaml(tmp_path, "extensions.yaml", text) == (0, [("NX229", 3, "warning")])


def test_of_two_microapps_with_one_id_the_first_by_component_order_is_kept(
    tmp_path: Path,
) -> None:
    """`b/x` sorts before `b-c` by component (`b` < `b-c`), after it as a string (`/` > `-`):
    the daemon keeps `b/x`, whose companion requires a capability not granted (NX225)."""
    from .test_microapp_config import COMPANION

    kept = tmp_path / "extensions" / "b" / "x"
    _write_microapp(kept)
    (kept / "nexo-plugin.toml").write_text(COMPANION, encoding="utf-8")
    _write_microapp(tmp_path / "extensions" / "b-c")
    (tmp_path / "config").mkdir()
    code, found = lint_yaml(tmp_path, "extensions.yaml", "extensions:\n  entries: {}\n")
    assert (code, [item[0] for item in found]) == (1, ["NX225", "NX226"])


# -- placeholders and the file as written --------------------------------------------------
# crates/config/src/lib.rs `AppConfig::load` starts with `maybe_run_yaml_migrations`, whose
# `migrate_config_dir` (crates/config/src/migrations.rs) parses agents.yaml and extensions.yaml
# *as written* (`serde_yaml::from_str(&raw)`, no substitution) and fails the load on an error;
# only then does `load_optional` substitute and parse again. An agents.d drop-in is not a
# migration candidate: `merge_agents_drop_in` parses it once, substituted. So `[${DIR}]` (no
# valid YAML as written: `{` in a flow sequence) stops the daemon in extensions.yaml, and is a
# flow sequence in a drop-in.
def test_a_placeholder_in_a_flow_sequence_must_be_yaml_as_written(tmp_path: Path) -> None:
    import os

    from support.lint_cli import run_lint_json

    _plain(tmp_path)
    env = {**os.environ, "NEXO_T_DIR": "./extensions", "NEXO_T_ID": "agent_creator"}
    text = "extensions:\n  search_paths: [${NEXO_T_DIR}]\n"
    assert lint_yaml(tmp_path, "extensions.yaml", text, env=env) == (1, [("NX222", 2, "error")])
    path = tmp_path / "config" / "extensions.yaml"
    _, report = run_lint_json([path], cwd=tmp_path, env=env)
    assert "before substituting" in report["files"][0]["diagnostics"][0]["help"]
    quoted = 'extensions:\n  search_paths: ["${NEXO_T_DIR}"]\n'
    assert lint_yaml(tmp_path, "extensions.yaml", quoted, env=env) == (0, [])
    text = "agents:\n  - id: ana\n    extensions_config: {${NEXO_T_ID}: {}, other: {}}\n" + MODEL
    code, found = lint_yaml(tmp_path, "agents.d/10-ana.yaml", text, env=env)
    assert (code, sorted(found)) == (0, [("NX229", 3, "warning"), ("NX230", 3, "warning")])


def test_a_placeholder_name_keeps_the_separators_rust_does_not_trim(tmp_path: Path) -> None:
    """crates/config/src/env.rs at eec3f33 (`resolve_one`): the daemon looks up
    `inner.trim()`, and Rust's `str::trim` keeps U+001C-U+001F, so `${<U+001C>NEXO_T_ID}`
    names a variable that is unset even where NEXO_T_ID is set: NX223. An agents.d drop-in,
    parsed only after substitution (extensions.yaml is also parsed as written, where YAML
    refuses the raw separator)."""
    import os

    _plain(tmp_path)
    env = {**os.environ, "NEXO_T_ID": "agent_creator"}
    text = "agents:\n  - id: ana\n    extensions_config: {${\x1cNEXO_T_ID}: {}}\n" + MODEL
    code, found = lint_yaml(tmp_path, "agents.d/10-ana.yaml", text, env=env)
    assert (code, sorted(found)) == (0, [("NX223", 3, "warning"), ("NX230", 3, "warning")])
    text = "agents:\n  - id: ana\n    extensions_config: {${ NEXO_T_ID\u3000}: {}}\n" + MODEL
    code, found = lint_yaml(tmp_path, "agents.d/10-ana.yaml", text, env=env)
    assert (code, sorted(found)) == (0, [("NX230", 3, "warning")])


def test_an_unset_placeholder_in_a_drop_ins_flow_mapping_is_only_unset(tmp_path: Path) -> None:
    import os

    _plain(tmp_path)
    env = {key: value for key, value in os.environ.items() if key != "NEXO_T_UNSET"}
    text = "agents:\n  - id: ana\n    extensions_config: {${NEXO_T_UNSET}: {}}\n" + MODEL
    code, found = lint_yaml(tmp_path, "agents.d/10-ana.yaml", text, env=env)
    assert (code, sorted(found)) == (0, [("NX223", 3, "warning"), ("NX230", 3, "warning")])
    text = "agents:\n  - id: ana\n    extensions_config: [${NEXO_T_UNSET}\n"  # never closed
    code, found = lint_yaml(tmp_path, "agents.d/10-ana.yaml", text, env=env)
    assert (code, found[0][0]) == (1, "NX222")


# -- `%YAML` directives: libyaml takes 1.1 and 1.2 only ---------------------------------------
# dtolnay/unsafe-libyaml tag 0.2.11 (the daemon's Cargo.lock) src/parser.rs
# `yaml_parser_process_directives`: `major != 1 || minor != 1 && minor != 2` is "found
# incompatible YAML document".
@pytest.mark.parametrize(
    ("version", "accepted"), [("1.1", True), ("1.2", True), ("1.0", False), ("1.3", False)]
)
def test_a_yaml_directive_as_libyaml_takes_it(tmp_path: Path, version: str, accepted: bool) -> None:
    _plain(tmp_path)
    text = f"%YAML {version}\n---\nextensions: {{}}\n"
    expected = (0, []) if accepted else (1, [("NX222", 1, "error")])
    assert lint_yaml(tmp_path, "extensions.yaml", text) == expected


# -- `--nexo-version` is the daemon whose discovery is compared ------------------------------
# crates/extensions/src/manifest.rs `validate_min_agent_version`: a microapp needing a newer
# agent fails discovery (`AgentTooOld`); with the daemon named by `--nexo-version` new enough,
# it loads, and its entry names a microapp.
def test_discovery_checks_min_agent_version_against_the_named_daemon(tmp_path: Path) -> None:
    manifest = _write_microapp(tmp_path / "extensions" / "agent_creator")
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(
        text.replace('version = "0.1.0"\n', 'version = "0.1.0"\nmin_agent_version = "1.0.0"\n', 1),
        encoding="utf-8",
    )
    (tmp_path / "config").mkdir()
    config = "extensions:\n  entries:\n    agent_creator: {}\n"
    assert lint_yaml(tmp_path, "extensions.yaml", config, "--nexo-version", "1.2.0") == (0, [])
    assert lint_yaml(tmp_path, "extensions.yaml", config, "--nexo-version", "0.9.0") == (
        0,
        [("NX229", 3, "warning")],
    )


def test_an_id_twice_in_a_drop_ins_extensions_config_is_the_last_one(tmp_path: Path) -> None:
    """A drop-in's `extensions_config` is a `BTreeMap` read straight from the text: serde's map
    visitor inserts each entry, the last one winning; only serde_yaml's `Value` refuses a
    duplicate (0.9.34 src/mapping.rs `DuplicateKeyError`), as agents.yaml is read."""
    _plain(tmp_path)
    text = (
        "agents:\n  - id: ana\n    extensions_config:\n"
        "      agent_creator: {region: a}\n      agent_creator: {region: b}\n" + MODEL
    )
    code, found = lint_yaml(tmp_path, "agents.d/10-ana.yaml", text)
    assert (code, [item for item in found if item[0] != "NX230"]) == (0, [("NX232", 5, "warning")])
    code, found = lint_yaml(tmp_path, "agents.yaml", text)
    assert (code, [item for item in found if item[0] == "NX222"]) == (1, [("NX222", 5, "error")])
    # A field of the agent twice is serde's `duplicate field` in a drop-in too.
    text = "agents:\n  - id: ana\n    id: bob\n" + MODEL
    assert lint_yaml(tmp_path, "agents.d/10-ana.yaml", text) == (1, [("NX222", 3, "error")])


def test_a_search_path_naming_a_plugin_toml_finds_it(tmp_path: Path) -> None:
    """`WalkDir::new(root)` on a file yields that file (depth 0), and discovery takes an entry
    that is a file named `plugin.toml` (discovery.rs:186-223)."""
    _write_microapp(tmp_path / "apps" / "agent_creator")
    (tmp_path / "config").mkdir()
    text = (
        "extensions:\n  search_paths: [./apps/agent_creator/plugin.toml]\n"
        "  entries:\n    agent_creator: {}\n"
    )
    assert lint_yaml(tmp_path, "extensions.yaml", text) == (0, [])


@pytest.mark.parametrize(
    "search_path",
    [
        '""',  # `canonicalize("")` fails: not the working directory
        '"./extensions/agent_creator/plugin.toml/.."',  # ENOTDIR in the kernel, not lexical
        '"./ext\\0ensions"',  # a NUL byte: `canonicalize` refuses it
    ],
)
def test_a_search_path_canonicalize_refuses_finds_nothing(tmp_path: Path, search_path: str) -> None:
    """discovery.rs:173-183: a search path `std::fs::canonicalize` refuses is skipped with a
    warning of the daemon's own; its microapps are not discovered, so their entries name none."""
    _write_microapp(tmp_path / "extensions" / "agent_creator")
    (tmp_path / "config").mkdir()
    text = f"extensions:\n  search_paths: [{search_path}]\n  entries:\n    agent_creator: {{}}\n"
    assert lint_yaml(tmp_path, "extensions.yaml", text) == (0, [("NX229", 4, "warning")])


# -- a placeholder inside a default is text ---------------------------------------------------
# crates/config/src/env.rs `find_placeholders` nests braces (`${A:-${B}}` is one placeholder)
# and `resolve_one` returns the default as written: no second round of substitution.
def test_a_placeholder_inside_a_default_is_text_to_the_daemon(tmp_path: Path) -> None:
    import os

    _plain(tmp_path)
    env = {key: value for key, value in os.environ.items() if key != "NEXO_T_A"}
    env["NEXO_T_B"] = "4"
    text = "extensions:\n  max_depth: ${NEXO_T_A:-${NEXO_T_B}}\n"
    # The daemon reads the text `${NEXO_T_B}`, a string where a number goes: it does not start.
    assert lint_yaml(tmp_path, "extensions.yaml", text, env=env) == (
        1,
        [("NX221", 2, "error"), ("NX233", 2, "warning")],
    )
    text = (
        "extensions:\n  transport_defaults: {nats: {subject_prefix: '${NEXO_T_A-${NEXO_T_B}}'}}\n"
    )
    assert lint_yaml(tmp_path, "extensions.yaml", text, env=env) == (0, [("NX233", 2, "warning")])
    env["NEXO_T_A"] = "5"  # set: the default is not used, yet it still reads as a shell's would not
    text = "extensions:\n  max_depth: ${NEXO_T_A:-${NEXO_T_B}}\n"
    assert lint_yaml(tmp_path, "extensions.yaml", text, env=env) == (0, [("NX233", 2, "warning")])


def test_a_message_names_a_dotted_key_as_the_key_path_does(tmp_path: Path) -> None:
    from support.lint_cli import run_lint_json

    _plain(tmp_path)
    path = tmp_path / "config" / "extensions.yaml"
    path.write_text('extensions:\n  entries:\n    "a.b": {enabled: true}\n', encoding="utf-8")
    _, report = run_lint_json([path], cwd=tmp_path)
    [diagnostic] = [d for d in report["files"][0]["diagnostics"] if d["code"] == "NX220"]
    assert diagnostic["key_path"] == 'extensions.entries."a.b".enabled'
    assert diagnostic["message"].startswith('unknown key `enabled` in extensions.entries."a.b"')


# -- integers beyond 64 bits ------------------------------------------------------------------
# serde_yaml 0.9.34 src/de.rs `visit_int` hands a number beyond u64/i64 over as u128/i128, and
# the `Value` visitor (src/value/de.rs) has no `visit_u128`/`visit_i128`: serde's default is
# "invalid type: integer `...` as u128", so a file read into a `Value` is refused whatever
# the key (an opaque setting included).
@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("extensions.yaml", "extensions:\n  max_depth: 18446744073709551616\n", 1),
        ("extensions.yaml", "extensions:\n  max_depth: 18446744073709551615\n", 0),
        (
            "agents.yaml",
            "agents:\n  - id: a\n    extensions_config: {x: {n: -9223372036854775809}}\n" + MODEL,
            1,
        ),
        (
            "agents.d/10-a.yaml",
            "agents:\n  - id: a\n    extensions_config: {x: {n: 0x1ffffffffffffffff}}\n" + MODEL,
            1,
        ),
        # A drop-in's `id` is a `String` read straight from the text: the digits are its text.
        (
            "agents.d/10-a.yaml",
            "agents:\n  - id: 18446744073709551616\n" + MODEL,
            0,
        ),
    ],
)
def test_an_integer_beyond_64_bits_is_refused_where_a_value_reads_it(
    tmp_path: Path, name: str, text: str, expected: int
) -> None:
    _plain(tmp_path)
    code, found = lint_yaml(tmp_path, name, text)
    errors = [item for item in found if item[2] == "error"]
    assert (code, errors) == (
        expected,
        [("NX222", 2 if name == "extensions.yaml" else 3, "error")] if expected else [],
    )


# -- the host's secret blocklist is ASCII case-insensitive --------------------------------------
# lordmacu/nexo-rs eec3f33 crates/extensions/src/runtime/stdio.rs:459-467 `env_is_blocked`:
# `name.to_ascii_uppercase()`, then suffixes and substrings.
@pytest.mark.parametrize(
    ("name", "blocked"),
    [
        ("weather_api_key", True),
        ("DB_PASSWORD_RO", True),
        ("GH_PAT", True),
        ("TOKEN", False),  # no `_TOKEN` suffix
        ("MY_\u017fECRET", False),  # the long s upper-cases to `S` in Unicode, not in ASCII
        ("X_TOKEN\u0131", False),
    ],
)
def test_the_secret_blocklist_is_the_hosts(name: str, blocked: bool) -> None:
    from nexo_pkg.manifest.microapp import env_is_blocked

    assert env_is_blocked(name) is blocked


def test_with_extensions_disabled_no_microapp_loads_for_agents(tmp_path: Path) -> None:
    """src/main.rs `run_extension_discovery`: `if !cfg.enabled { return (Vec::new(), ...) }`:
    an agent's settings for a microapp under the search paths name nothing loaded."""
    _plain(tmp_path)
    text = "agents:\n  - id: ana\n    extensions_config:\n      agent_creator: {}\n" + MODEL
    found = lint_yaml(tmp_path, "agents.yaml", text)[1]
    assert ("NX229", 4, "warning") not in found
    (tmp_path / "config" / "extensions.yaml").write_text("extensions:\n  enabled: false\n")
    found = lint_yaml(tmp_path, "agents.yaml", text)[1]
    assert ("NX229", 4, "warning") in found


def test_an_agents_extensions_key_names_the_file_the_daemon_refuses(tmp_path: Path) -> None:
    from support.lint_cli import run_lint_json

    _plain(tmp_path)
    (tmp_path / "config" / "agents.d").mkdir()
    for name in ("agents.yaml", "agents.d/10-ana.yaml"):
        path = tmp_path / "config" / name
        path.write_text(
            "agents:\n  - id: ana\n    extensions: [agent_creator]\n" + MODEL,
            encoding="utf-8",
        )
        _, report = run_lint_json([path], cwd=tmp_path)
        [diagnostic] = report["files"][0]["diagnostics"]
        shown = "this agents.d drop-in" if "agents.d" in name else "agents.yaml"
        assert f"the daemon refuses {shown} and does not start" in diagnostic["message"]


def test_a_whole_file_placeholder_is_refused_as_written(tmp_path: Path) -> None:
    """crates/config/src/migrations.rs `apply_migrations` -> `ensure_mapping` on the file as
    written: "top-level YAML document must be a mapping", whatever `${CONFIG}` stands for. A
    drop-in is not migrated: its placeholder is only unset."""
    import os

    _plain(tmp_path)
    env = {**os.environ, "NEXO_T_ALL": "agents: []"}
    code, found = lint_yaml(tmp_path, "agents.yaml", "${NEXO_T_ALL}\n", env=env)
    assert (code, found) == (1, [("NX221", 1, "error")])
    code, found = lint_yaml(tmp_path, "agents.d/10-a.yaml", "${NEXO_T_ALL}\n", env=env)
    assert (code, found) == (0, [])


@pytest.mark.parametrize("value", ["!!null", "!!str", "!local"])
def test_a_tagged_empty_extensions_config_in_a_drop_in_is_an_empty_map(
    tmp_path: Path, value: str
) -> None:
    """serde_yaml 0.9.34 src/de.rs `deserialize_map` reads a scalar whose value is empty and
    whose style is plain as an empty map, whatever its tag; only `~` (not empty) is refused."""
    _plain(tmp_path)
    text = f"agents:\n  - id: a\n    extensions_config: {value}\n" + MODEL
    assert lint_yaml(tmp_path, "agents.d/10-a.yaml", text) == (0, [("NX230", 3, "warning")])


def test_a_tagged_empty_string_is_no_map_in_agents_yaml(tmp_path: Path) -> None:
    """agents.yaml is read through a `Value` first: `!!str` with nothing after it is the
    string "", which no map is (src/value/de.rs `deserialize_map`)."""
    _plain(tmp_path)
    text = "agents:\n  - id: a\n    extensions_config: !!str\n" + MODEL
    code, found = lint_yaml(tmp_path, "agents.yaml", text)
    assert code == 1
    assert ("NX221", 3, "error") in found


def _unreadable(tmp_path: Path) -> dict[str, list[tuple[str, str]]]:
    code, report = run_lint_json([], "--config", "config", cwd=tmp_path)
    assert code == 1
    return {
        Path(item["path"]).name: [(d["code"], d["message"]) for d in item["diagnostics"]]
        for item in report["files"]
        if item["diagnostics"]
    }


# crates/config/src/lib.rs `merge_agents_drop_in`: every `agents.d` entry whose extension is
# `yaml` goes to `std::fs::read_to_string`, whose error stops the boot; a directory or a
# dangling link there is not skipped. `load_optional`/`load_required` read extensions.yaml and
# agents.yaml once `Path::exists` (which follows links) says they are there.
@pytest.mark.parametrize("entry", ["dir", "dangling"])
def test_a_drop_in_the_daemon_cannot_read_is_an_error(tmp_path: Path, entry: str) -> None:
    _plain(tmp_path)
    drop_ins = tmp_path / "config" / "agents.d"
    drop_ins.mkdir()
    if entry == "dir":
        (drop_ins / "20-b.yaml").mkdir()
    else:
        (drop_ins / "20-b.yaml").symlink_to("nowhere.yaml")
    (drop_ins / "10-a.yaml").write_text("agents:\n  - id: a\n" + MODEL, encoding="utf-8")
    found = _unreadable(tmp_path)
    [(code, message)] = found["20-b.yaml"]
    assert code == "NX008"
    assert "does not start" in message
    assert "10-a.yaml" not in found


def test_an_agents_d_that_is_a_file_is_an_error(tmp_path: Path) -> None:
    _plain(tmp_path)
    (tmp_path / "config" / "agents.d").write_text("agents: []\n", encoding="utf-8")
    [(code, message)] = _unreadable(tmp_path)["agents.d"]
    assert (code, "cannot list it" in message) == ("NX008", True)


def test_an_extensions_yaml_that_is_a_directory_is_an_error(tmp_path: Path) -> None:
    _plain(tmp_path)
    config = tmp_path / "config"
    (config / "extensions.yaml").mkdir()
    [(code, _)] = _unreadable(tmp_path)["extensions.yaml"]
    assert code == "NX008"


def test_a_dangling_extensions_yaml_is_absent_as_the_daemon_sees_it(tmp_path: Path) -> None:
    """`Path::exists` follows the link: a dangling one is a missing optional file."""
    _plain(tmp_path)
    config = tmp_path / "config"
    (config / "extensions.yaml").symlink_to("nowhere.yaml")
    code, report = run_lint_json([], "--config", "config", cwd=tmp_path)
    assert code == 0
    assert "extensions.yaml" not in {Path(item["path"]).name for item in report["files"]}
    assert all(d["code"] != "NX008" for f in report["files"] for d in f["diagnostics"])
