"""Positions as the user's editor counts them, through the real ``nexo plugin lint`` process.

SPEC §2: every diagnostic has a 1-based line and column "pointing at the offending key or value
in the file"; lines are what an editor (and LSP) counts, ended by a line feed, and columns count
code points (docs/lint.md "json"). YAML itself (libyaml, which serde_yaml reads with) also
breaks lines at NEL (U+0085), LINE SEPARATOR (U+2028) and PARAGRAPH SEPARATOR (U+2029), which a
quoted string or a comment may hold: those must not shift the reported lines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import clean_env, nexo

from .test_microapp_config import MODEL

BREAKS = ["\u2028", "\u2029", "\x85"]


def _lint(path: Path, *args: str) -> tuple[int, list[dict[str, Any]]]:
    result = nexo("plugin", "lint", *args, "--format", "json", path.name, cwd=path.parent)
    [entry] = json.loads(result.stdout)["files"]
    return result.code, entry["diagnostics"]


def _config(tmp_path: Path, text: str) -> Path:
    (tmp_path / "extensions").mkdir()
    path = tmp_path / "config" / "extensions.yaml"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("separator", BREAKS)
def test_a_yaml_unicode_line_separator_in_a_string_does_not_shift_later_lines(
    tmp_path: Path, separator: str
) -> None:
    path = _config(tmp_path, f'extensions:\n  search_paths: ["a{separator}b"]\n  bogus: 1\n')
    code, [finding] = _lint(path)
    assert code == 1
    assert finding["code"] == "NX220"
    assert finding["range"] == {"start": {"line": 3, "column": 3}, "end": {"line": 3, "column": 8}}
    text = nexo("plugin", "lint", path.name, cwd=path.parent).stdout
    assert "extensions.yaml:3:3: NX220 " in text
    assert "3 |   bogus: 1" in text
    github = nexo("plugin", "lint", "--format", "github", path.name, cwd=path.parent).stdout
    assert ",line=3,col=3,endLine=3,endColumn=8," in github


@pytest.mark.parametrize("separator", BREAKS)
def test_a_yaml_syntax_error_after_a_unicode_line_separator_is_on_its_editor_line(
    tmp_path: Path, separator: str
) -> None:
    """libyaml ends the comment at the separator, so `more` starts a plain scalar and the
    colon after `extensions` is refused: on line 2 of the file, where the editor shows it."""
    path = _config(tmp_path, f"# note{separator}more\nextensions:\n  enabled: true\n")
    code, [finding] = _lint(path)
    assert code == 1
    assert finding["code"] == "NX222"
    assert finding["range"]["start"] == {"line": 2, "column": 11}


def test_a_yaml_file_with_lone_carriage_returns_has_the_lines_an_editor_shows(
    tmp_path: Path,
) -> None:
    """A lone CR ends a line for libyaml, for editors and for LSP: findings, placeholders and
    the code frame are on those lines."""
    env = {key: value for key, value in clean_env().items() if key != "NEXO_TEST_UNSET_DIR"}
    text = 'extensions:\r  search_paths: ["${NEXO_TEST_UNSET_DIR}"]\r  bogus: 1\r'
    path = _config(tmp_path, text)
    result = nexo("plugin", "lint", "--format", "json", path.name, cwd=path.parent, env=env)
    [entry] = json.loads(result.stdout)["files"]
    assert result.code == 1
    assert [(item["code"], item["range"]) for item in entry["diagnostics"]] == [
        ("NX223", {"start": {"line": 2, "column": 19}, "end": {"line": 2, "column": 41}}),
        ("NX220", {"start": {"line": 3, "column": 3}, "end": {"line": 3, "column": 8}}),
    ]
    text_report = nexo("plugin", "lint", path.name, cwd=path.parent, env=env).stdout
    assert "extensions.yaml:3:3: NX220 " in text_report
    assert "3 |   bogus: 1\n  |   ^^^^^ NX220" in text_report


def test_a_yaml_mid_line_byte_order_mark_counts_as_a_column(tmp_path: Path) -> None:
    """Columns count code points, a U+FEFF inside a quoted string too."""
    path = _config(tmp_path, 'extensions: {search_paths: ["\ufeffa"], bogus: 1}\n')
    code, [finding] = _lint(path)
    assert code == 1
    assert finding["code"] == "NX220"
    assert finding["range"] == {
        "start": {"line": 1, "column": 36},
        "end": {"line": 1, "column": 41},
    }


# -- keys of a microapp's settings compared as serde_yaml compares them ------------------------
# An agent's `extensions_config.<id>` is an opaque serde_yaml `Value` (nexo-rs
# crates/config/src/types/agents.rs:366), in agents.yaml and in an agents.d drop-in alike; its
# mappings refuse a key equal to an earlier one (dtolnay/serde-yaml 0.9.34 src/mapping.rs
# `DuplicateKeyError`), equality being that of `Value` (src/number.rs `PartialEq for N`: NaN
# equals NaN, 0.0 equals -0.0; src/value/tagged.rs: a local tag is part of the value).
SAME_VALUE = [
    ("{1: a, 0x1: b}", "0x1"),
    ("{~: a, null: b}", "null"),
    ("{.nan: a, .NaN: b}", ".NaN"),
    ("{0.0: a, -0.0: b}", "-0.0"),
    ("{true: a, True: b}", "True"),
    ("{!!str 7: a, '7': b}", "'7'"),
    ("{[1]: a, [0x1]: b}", "[0x1]"),
]
OTHER_VALUES = [
    '{1: a, "1": b}',
    "{null: a, 'null': b}",
    "{true: a, 'true': b}",
    "{1: a, 1.0: b, true: c}",
    "{!x 1: a, 1: b}",
    "{[1]: a, [2]: b}",
]


def _settings(tmp_path: Path, name: str, mapping: str) -> Path:
    path = _config(tmp_path, "extensions: {}\n").parent / name
    path.parent.mkdir(exist_ok=True)
    text = f"agents:\n  - id: bob\n    extensions_config:\n      app: {mapping}\n" + MODEL
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["agents.yaml", "agents.d/bob.yaml"])
@pytest.mark.parametrize(("mapping", "second"), SAME_VALUE)
def test_a_settings_key_equal_as_a_yaml_value_to_an_earlier_one_is_refused(
    tmp_path: Path, name: str, mapping: str, second: str
) -> None:
    """Refused at the second key, the one written again."""
    path = _settings(tmp_path, name, mapping)
    code, findings = _lint(path)
    assert code == 1
    [refused] = [item for item in findings if item["severity"] == "error"]
    assert refused["code"] == "NX222"
    assert "is defined more than once" in refused["message"]
    column = f"      app: {mapping}".index(f", {second}") + 3
    assert refused["range"]["start"] == {"line": 4, "column": column}


@pytest.mark.parametrize("name", ["agents.yaml", "agents.d/bob.yaml"])
@pytest.mark.parametrize("mapping", OTHER_VALUES)
def test_settings_keys_that_differ_as_yaml_values_are_accepted(
    tmp_path: Path, name: str, mapping: str
) -> None:
    """`1` and `"1"` are a number and a string: two keys to the daemon, whose microapp
    settings take keys of any type."""
    path = _settings(tmp_path, name, mapping)
    code, findings = _lint(path)
    assert code == 0
    assert not [item for item in findings if item["severity"] == "error"]


def test_drop_in_ids_are_their_text_so_1_and_0x1_are_two_ids(tmp_path: Path) -> None:
    """A drop-in is read straight into the struct: its `extensions_config` ids are read as
    text (serde_yaml src/de.rs `deserialize_str`), `"1"` and `"0x1"`; `1` and `"1"` are
    one id written twice, the last one kept (NX232)."""
    path = _config(tmp_path, "extensions: {}\n").with_name("agents.d")
    path.mkdir()
    drop_in = path / "bob.yaml"
    drop_in.write_text(
        "agents:\n  - id: bob\n    extensions_config: {1: {}, 0x1: {}}\n" + MODEL,
        encoding="utf-8",
    )
    code, findings = _lint(drop_in)
    assert code == 0
    assert sorted(item["key_path"] for item in findings if item["code"] == "NX229") == [
        "agents[0].extensions_config.0x1",
        "agents[0].extensions_config.1",
    ]
    drop_in.write_text(
        'agents:\n  - id: bob\n    extensions_config: {1: {}, "1": {}}\n' + MODEL,
        encoding="utf-8",
    )
    code, findings = _lint(drop_in)
    assert code == 0
    assert [item["range"]["start"] for item in findings if item["code"] == "NX232"] == [
        {"line": 3, "column": 32}
    ]


@pytest.mark.parametrize("named", ["bob.yaml", "./bob.yaml", "../agents.d/bob.yaml"])
def test_a_drop_in_named_from_inside_agents_d_is_still_a_drop_in(
    tmp_path: Path, named: str
) -> None:
    """What a file is depends on where it is, not on how the command line spells its path: a
    drop-in keeps no `schema_version` (the daemon reads it straight into its agents type)."""
    drop_ins = _config(tmp_path, "extensions: {}\n").parent / "agents.d"
    drop_ins.mkdir()
    (drop_ins / "bob.yaml").write_text("schema_version: 1\nagents: []\n", encoding="utf-8")
    result = nexo("plugin", "lint", "--format", "json", named, cwd=drop_ins)
    [entry] = json.loads(result.stdout)["files"]
    assert result.code == 1
    assert [(item["code"], item["key_path"]) for item in entry["diagnostics"]] == [
        ("NX220", "schema_version")
    ]


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ("extensions: [\n", ("--ignore", "NX222")),
        ("extensions: [\n", ("--select", "NX220")),
        ("extensions: [ # nexo: ignore\n", ()),
        ("extensions:\n  enabled: true\n  enabled: false # nexo: ignore[NX222]\n", ()),
        ("extensions:\n  enabled: true\n  enabled: false\n", ("--ignore", "config-yaml")),
    ],
)
def test_a_config_file_the_daemon_cannot_read_is_reported_whatever_is_selected(
    tmp_path: Path, text: str, args: tuple[str, ...]
) -> None:
    """As for a manifest that does not parse (docs/lint.md): nothing else in the file was
    checked and the daemon does not start, so no selection or comment hides it."""
    path = _config(tmp_path, text)
    code, findings = _lint(path, *args)
    assert code == 1
    assert [item["code"] for item in findings] == ["NX222"]


def test_a_second_yaml_document_is_refused_in_one_whole_sentence(tmp_path: Path) -> None:
    """serde_yaml 0.9.34 refuses a stream of several documents (src/error.rs: "deserializing
    from YAML containing more than one document is not supported"), at the second `---`."""
    path = _config(tmp_path, "extensions: {}\n---\nextensions: {}\n")
    code, [finding] = _lint(path)
    assert code == 1
    assert finding["code"] == "NX222"
    assert finding["range"]["start"] == {"line": 2, "column": 1}
    assert finding["message"] == (
        "YAML syntax error: the file holds more than one YAML document (`---`); the daemon "
        "reads one"
    )


def test_config_files_are_named_relative_to_the_working_directory(tmp_path: Path) -> None:
    """`lint --config config` names what it found as ruff names the files it finds, relative
    to the working directory, so a GitHub annotation's `file` is the repository path."""
    app = tmp_path / "extensions" / "app"
    _config(tmp_path, "extensions:\n  bogus: 1\n")
    app.mkdir()
    (app / "plugin.toml").write_text(
        '[plugin]\nid = "app"\nversion = "0.1.0"\n\n[capabilities]\ntools = ["app_x"]\n\n'
        '[transport]\nkind = "stdio"\ncommand = "./app"\nbogus = 1\n',
        encoding="utf-8",
    )
    github = nexo("plugin", "lint", "--config", "config", "--format", "github", cwd=tmp_path)
    assert github.code == 1
    files = [line.split(",", 1)[0] for line in github.stdout.splitlines()]
    assert files == [
        "::error file=config/extensions.yaml",
        "::error file=extensions/app/plugin.toml",
    ]
    env = {key: value for key, value in clean_env().items() if key != "NEXO_CONFIG_DIR"}
    report = nexo("plugin", "lint", "--daemon-config", "--format", "json", cwd=tmp_path, env=env)
    assert [entry["path"] for entry in json.loads(report.stdout)["files"]] == [
        "config/extensions.yaml",
        "extensions/app/plugin.toml",
    ]


# -- positions of what is found once `${...}` is substituted -----------------------------------
# The daemon substitutes placeholders in the raw text before parsing (nexo-rs
# crates/config/src/env.rs `resolve_placeholders`); what that text holds is reported where the
# file holds it, not where the longer or shorter substituted text would put it.


def test_a_finding_after_a_placeholder_on_its_line_is_where_the_file_has_it(
    tmp_path: Path,
) -> None:
    """A drop-in is read only once substituted (`[${X}]` is a flow sequence there); an id after
    the placeholder keeps its column in the file, whatever the value's length."""
    drop_ins = _config(tmp_path, "extensions: {}\n").parent / "agents.d"
    drop_ins.mkdir()
    line = (
        "  - {id: bob, model: {provider: p, model: m}, "
        "extensions_config: {app: [${NEXO_TEST_X}], other: {}}}"
    )
    (drop_ins / "bob.yaml").write_text(f"agents:\n{line}\n", encoding="utf-8")
    column = line.index("other") + 1
    base = {key: value for key, value in clean_env().items() if key != "NEXO_TEST_X"}
    for env in (base, {**base, "NEXO_TEST_X": "a-value-much-longer-than-its-placeholder"}):
        named = "config/agents.d/bob.yaml"
        result = nexo("plugin", "lint", "--format", "json", named, cwd=tmp_path, env=env)
        [entry] = json.loads(result.stdout)["files"]
        found = {item["key_path"]: item["range"] for item in entry["diagnostics"]}
        assert found["agents[0].extensions_config.other"] == {
            "start": {"line": 2, "column": column},
            "end": {"line": 2, "column": column + 5},
        }


def test_a_problem_after_a_multi_line_value_is_on_its_line_in_the_file(tmp_path: Path) -> None:
    """`${V}` standing for two lines: the key it makes a duplicate is on line 3 of the file
    (line 4 of the substituted text)."""
    path = _config(tmp_path, "extensions:\n  search_paths: ${NEXO_TEST_V}\n  enabled: false\n")
    env = clean_env(NEXO_TEST_V="a\n  enabled: true")
    result = nexo("plugin", "lint", "--format", "json", path.name, cwd=path.parent, env=env)
    [entry] = json.loads(result.stdout)["files"]
    assert result.code == 1
    [finding] = entry["diagnostics"]
    assert finding["code"] == "NX222"
    assert "defined more than once" in finding["message"]
    assert finding["range"] == {"start": {"line": 3, "column": 3}, "end": {"line": 3, "column": 10}}


def test_a_settings_key_built_of_aliases_is_read_as_serde_yaml_reads_it(tmp_path: Path) -> None:
    """A key is read into a serde_yaml `Value` too, following every alias inside it (0.9.34
    src/de.rs `jump`: at most 100 aliases followed per event of the document). Nine anchors
    of nine aliases each are millions of jumps: the daemon refuses the file, and lint says so
    at once (each node is looked at once, never walked as a tree). A key with a few aliases
    is read."""
    parts = ["&b0 [x, x, x, x, x, x, x, x, x]"]
    parts += [f"&b{level} [{', '.join([f'*b{level - 1}'] * 9)}]" for level in range(1, 8)]
    path = _config(tmp_path, "extensions: {}\n").with_name("agents.yaml")
    for key, codes in (
        (f"[{', '.join(parts)}]", ["NX222"]),
        ("[&c [x, y], *c, *c]", ["NX230", "NX229"]),
    ):
        text = (
            f"agents:\n  - id: bob\n    extensions_config:\n      app: {{? {key} : 1, z: 2}}\n"
            + MODEL
        )
        path.write_text(text, encoding="utf-8")
        result = nexo("plugin", "lint", "--format", "json", path.name, cwd=path.parent, timeout=60)
        [entry] = json.loads(result.stdout)["files"]
        assert [item["code"] for item in entry["diagnostics"]] == codes
        if codes == ["NX222"]:
            [refused] = entry["diagnostics"]
            assert "repetition limit exceeded" in refused["message"]
            assert refused["range"]["start"] == {"line": 4, "column": 15}


MANIFEST_HEAD = (
    '[plugin]\nid = "wx"\nversion = "0.1.0"\nname = "Wx"\ndescription = "d"\n'
    'min_nexo_version = ">=0.1.0"\n'
)


@pytest.mark.parametrize(
    ("line", "start", "end"),
    [
        # tomllib reports the column past `\q`; the fault is the escape, from its backslash.
        ('args = ["ok", "C:\\qbad"]\n', 18, 20),
        # past the blanks that follow a backslash which does not end the line
        ('description2 = """a\\   b"""\n', 20, 24),
        # a one-line string whose line ends in a backslash: tomllib names the next line
        ('cmd = "ok\\\n"\n', 10, 11),
        ('cmd = "ok\\\r\n"\r\n', 10, 11),
        # tomllib reports bad hex digits after `\u`, and a surrogate past its escape
        ('cmd = "\\uZZZZ"\n', 8, 14),
        ('cmd = "\\uD800"\n', 8, 14),
        ('cmd = "\\U0011FFFF"\n', 8, 18),
    ],
    ids=[
        "escape",
        "blanks-after-backslash",
        "backslash-at-line-end",
        "crlf",
        "hex",
        "surrogate",
        "beyond-unicode",
    ],
)
def test_a_refused_escape_is_reported_at_its_backslash(
    tmp_path: Path, line: str, start: int, end: int
) -> None:
    path = tmp_path / "nexo-plugin.toml"
    path.write_bytes((MANIFEST_HEAD + line).encode("utf-8"))
    code, [finding] = _lint(path)
    assert code == 1
    assert finding["code"] == "NX001"
    assert finding["range"] == {
        "start": {"line": 7, "column": start},
        "end": {"line": 7, "column": end},
    }
    assert finding["message"].startswith("TOML syntax error: ")
    assert (
        f"nexo-plugin.toml:7:{start}: NX001 "
        in nexo("plugin", "lint", path.name, cwd=tmp_path).stdout
    )
