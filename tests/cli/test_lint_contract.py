"""``nexo plugin lint`` held to SPEC §2 and the daemon's manifest crate from the outside: every
check goes through the real command line, on files, standard input and directories.

Daemon facts cited here come from ``lordmacu/nexo-rs`` ``crates/plugin-manifest/src/`` at
17fc8cdf (validate.rs, manifest.rs) and from the ``semver`` crate 1.0.28 (src/parse.rs).
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from manifest.rule_support import BASE
from support import cli

nexo = partial(cli.nexo, in_process=True)

MINIMAL = BASE.lstrip("\n")


def lint_stdin(text: str, *args: str) -> tuple[int, list[dict[str, Any]]]:
    """Exit code and diagnostics of ``nexo plugin lint --format json ARGS -`` on ``text``."""
    result = nexo(
        "plugin",
        "lint",
        "--format",
        "json",
        "--stdin-filename",
        "nexo-plugin.toml",
        *args,
        "-",
        stdin=text,
    )
    report = json.loads(result.stdout)
    diagnostics: list[dict[str, Any]] = report["files"][0]["diagnostics"]
    return result.code, diagnostics


def codes(diagnostics: list[dict[str, Any]]) -> list[str]:
    return [diagnostic["code"] for diagnostic in diagnostics]


# -- A file that cannot be parsed is never reported clean ---------------------------------------

UNCLOSED_TABLE = MINIMAL.replace("[plugin]", "[plugin")
DUPLICATE = MINIMAL + 'id = "again"\n'


@pytest.mark.parametrize(
    ("text", "code"), [(UNCLOSED_TABLE, "NX001"), (DUPLICATE, "NX002")], ids=["syntax", "dup"]
)
@pytest.mark.parametrize(
    "selection",
    [("--select", "NX1"), ("--select", "invalid-plugin-id"), ("--ignore", "NX0")],
    ids=["select-prefix", "select-name", "ignore"],
)
def test_select_and_ignore_never_hide_that_the_file_does_not_parse(
    text: str, code: str, selection: tuple[str, str]
) -> None:
    # The daemon refuses a manifest it cannot parse (toml::from_str fails), so no selection of
    # rules may turn it into "All checks passed", as ruff always reports a syntax error.
    exit_code, diagnostics = lint_stdin(text, *selection)
    assert exit_code == 1
    assert codes(diagnostics) == [code]


def test_config_select_never_hides_a_syntax_error(tmp_path: Path) -> None:
    # docs/cli.md's own example configuration: select = ["NX1"].
    (tmp_path / ".nexo.toml").write_text('[lint]\nselect = ["NX1"]\n', "utf-8")
    (tmp_path / "nexo-plugin.toml").write_text(UNCLOSED_TABLE, "utf-8")
    result = nexo("plugin", "lint", "--format", "json", str(tmp_path), cwd=tmp_path)
    assert result.code == 1
    [file] = json.loads(result.stdout)["files"]
    assert codes(file["diagnostics"]) == ["NX001"]


@pytest.mark.parametrize(
    "text",
    [
        MINIMAL + '[plugin.tools]\nexpose = ["weather_a" # nexo: ignore\n',
        MINIMAL + '[plugin.tools]\nexpose = ["weather_a" # nexo: ignore[NX001]\n',
        MINIMAL + 'id = "again"  # nexo: ignore[duplicate-key]\n',
    ],
    ids=["blanket", "by-code", "duplicate-by-name"],
)
def test_a_comment_never_silences_that_the_file_does_not_parse(text: str) -> None:
    exit_code, diagnostics = lint_stdin(text)
    assert exit_code == 1
    assert codes(diagnostics) in (["NX001"], ["NX002"])


# -- Ids: the reason given is the real one ------------------------------------------------------


@pytest.mark.parametrize(
    ("plugin_id", "reason"),
    [
        # 64 characters but 65 bytes: the daemon (validate.rs validate_id) measures bytes, so
        # it is refused, but what is wrong is the accented letter, not the length.
        ("a" * 63 + "é", "character `é` is not allowed"),
        ("é" * 40, "character `é` is not allowed"),
        # An Arabic-Indic digit is no ASCII digit (validate_id: is_ascii_digit).
        ("\u0663abc", "character `\u0663` is not allowed"),
        ("a" * 65, "must be at most 64 characters (it has 65)"),
        ("1abc", "must not start with a digit"),
    ],
    ids=["64-chars-65-bytes", "short-non-ascii", "non-ascii-digit", "too-long", "digit"],
)
def test_an_invalid_plugin_id_is_told_its_real_reason(plugin_id: str, reason: str) -> None:
    exit_code, diagnostics = lint_stdin(MINIMAL.replace('"weather"', f'"{plugin_id}"'))
    assert exit_code == 1
    [finding] = diagnostics
    assert finding["code"] == "NX100"
    assert f"is not a valid plugin id: {reason}" in finding["message"]
    # The help states the rule NX100 applies (the daemon's 64), not contract 1.10's 32, which
    # is NX109's business: an id of 33 to 64 characters is valid.
    assert "at most 64 characters" in finding["help"], finding["help"]
    assert "at most 32 characters)" not in finding["help"]


def test_a_too_long_plugin_id_is_told_the_limit_the_rule_holds() -> None:
    """SPEC §2 rule 3: ids match ^[a-z][a-z0-9_]{0,63}$ (the daemon's limit); 33-64 characters
    is only a warning (NX109). The suggested id itself is short enough for older daemons."""
    exit_code, diagnostics = lint_stdin(MINIMAL.replace('"weather"', '"Weather_' + "x" * 40 + '"'))
    assert exit_code == 1
    [finding] = diagnostics
    assert finding["code"] == "NX100"
    assert finding["help"].endswith(
        "(lowercase letter first, then lowercase letters, digits or `_`, at most 64 "
        "characters; at most 32 to load in older daemons too)"
    )
    exit_code, diagnostics = lint_stdin(MINIMAL.replace('"weather"', '"' + "w" * 64 + '"'))
    assert exit_code == 0
    assert [(d["code"], d["severity"]) for d in diagnostics] == [("NX109", "warning")]


@pytest.mark.parametrize("version", ["0.1.0", "0.1.5", "0.2.1"])
def test_nexo_version_does_not_make_a_long_id_an_error(version: str) -> None:
    """docs/lint.md "Severity": `--nexo-version` does not switch the id limit back, because no
    daemon version number tells the limit. The 0.1.5 daemon (lordmacu/nexo-rs eec3f33,
    Cargo.toml:88) allows 32 (crates/plugin-manifest/src/validate.rs:25, `{0,31}`), while the
    crate at 17fc8cdf, whose corpus is judged at 0.1.0 (daemon-parity/cases.json), allows 64;
    the crate's own version stays 0.1.0 across the change (crates/plugin-manifest/Cargo.toml).
    An error there would refuse what a daemon of that number accepts: the 36-character tool id
    of the first-party marketing extension (issue 11) stays the warning NX109."""
    long_id = "weather_" + "x" * 28
    section = f'[plugin.extends]\ntools = ["{long_id}"]\n'
    exit_code, diagnostics = lint_stdin(MINIMAL + section, "--nexo-version", version)
    assert exit_code == 0
    assert [(d["code"], d["severity"], d["key_path"]) for d in diagnostics] == [
        ("NX109", "warning", "plugin.extends.tools[0]")
    ]


# -- `nexo plugin schema` accepts what the daemon accepts ---------------------------------------

# Section validators the daemon's manifest validation never calls (validate.rs run_all calls
# neither PluginPollerSection::validate, PluginAdminSection::validate, PluginHttpSection::
# validate nor PluginDashboardSection::validate): the daemon loads these, lint warns (NX18x).
SECTION_RULES_THE_DAEMON_SKIPS = {
    "poller-no-kinds": '[plugin.poller]\nkinds = []\nbroker_topic_prefix = "p"\n',
    "poller-short-kind": '[plugin.poller]\nkinds = ["a"]\nbroker_topic_prefix = "p"\n',
    "poller-empty-prefix": '[plugin.poller]\nkinds = ["rss"]\nbroker_topic_prefix = ""\n',
    "admin-prefix": '[plugin.admin]\nmethod_prefix = "admin/"\nbroker_topic_prefix = ""\n',
    "http-prefix": '[plugin.http]\nmount_prefix = "weather?x"\n',
    "dashboard-subdir": (
        '[plugin.dashboard]\nlayout = { kind = "workspace_walk", subdir = "" }\n'
        'auth_check = { kind = "session_dir_files", candidates = [] }\n'
    ),
}


def schema_validator() -> Any:
    from jsonschema import Draft202012Validator

    result = nexo("plugin", "schema")
    assert result.code == 0, result.stderr
    return Draft202012Validator(json.loads(result.stdout))


@pytest.mark.parametrize(
    "section", SECTION_RULES_THE_DAEMON_SKIPS.values(), ids=SECTION_RULES_THE_DAEMON_SKIPS
)
def test_the_schema_accepts_sections_whose_own_validation_the_daemon_skips(section: str) -> None:
    import tomllib

    text = MINIMAL + section
    exit_code, diagnostics = lint_stdin(text)
    assert exit_code == 0
    assert {diagnostic["severity"] for diagnostic in diagnostics} == {"warning"}
    errors = [error.message for error in schema_validator().iter_errors(tomllib.loads(text))]
    assert errors == []


# -- --fix never leaves the manifest with a new error ---------------------------------------------


@pytest.mark.parametrize(
    "section",
    [
        # The rename would repeat an id of the same array (ExtendsDuplicate) ...
        '[plugin.extends]\ntools = ["search", "weather_search"]\n',
        # ... or put one id in two [plugin.extends] arrays (ExtendsCrossListConflict) ...
        '[plugin.extends]\ntools = ["search"]\nhooks = ["weather_search"]\n',
        # ... or leave `deferred` and an outbound `name` naming a tool no longer exposed
        # (DeferredNotInExpose, OutboundNotExposed).
        '[plugin.tools]\nexpose = ["search"]\ndeferred = ["search"]\n',
        '[plugin.tools]\nexpose = ["search"]\n[[plugin.tools.outbound]]\nname = "search"\n'
        'description = ""\ninput_schema = \'{"type": "object"}\'\n',
        # A reserved variable renamed onto one already set: the file would not parse.
        '[plugin.entrypoint]\ncommand = "./w"\nenv = { NEXO_KEY = "a", WEATHER_KEY = "b" }\n',
    ],
    ids=["duplicate", "cross-list", "deferred", "outbound", "env"],
)
def test_unsafe_fixes_never_trade_one_error_for_another(tmp_path: Path, section: str) -> None:
    manifest = tmp_path / "nexo-plugin.toml"
    manifest.write_text(MINIMAL + section, "utf-8")
    before = lint_stdin(manifest.read_text("utf-8"))[1]
    result = nexo("plugin", "lint", "--fix", "--unsafe-fixes", str(manifest))
    assert result.code == 1
    assert manifest.read_text("utf-8") == MINIMAL + section  # no fix applied
    help_texts = [diagnostic["help"] for diagnostic in before]
    assert not any(text.startswith("rename it to `") for text in help_texts), help_texts
    assert any("weather_search" in text or "WEATHER_KEY" in text for text in help_texts)


def test_fix_keeps_a_byte_order_mark_and_crlf_line_ends(tmp_path: Path) -> None:
    manifest = tmp_path / "nexo-plugin.toml"
    source = "\ufeff" + (MINIMAL + '[plugin.tools]\nexpose = ["search"]  # kept\n')
    manifest.write_bytes(source.replace("\n", "\r\n").encode("utf-8"))
    result = nexo("plugin", "lint", "--fix", "--unsafe-fixes", str(manifest))
    assert result.code == 0, result.stdout
    expected = source.replace('"search"', '"weather_search"').replace("\n", "\r\n")
    assert manifest.read_bytes() == expected.encode("utf-8")
    # Standard input comes back out the same way.
    piped = nexo(
        "plugin", "lint", "--fix", "--unsafe-fixes", "-",
        stdin=source.encode("utf-8"),
    )  # fmt: skip
    assert piped.code == 0, piped.stderr
    assert piped.stdout == expected.replace("\r\n", "\n")


# -- [plugin.entrypoint] ----------------------------------------------------------------------


def test_a_command_line_in_command_is_a_warning_naming_args() -> None:
    # The daemon spawns `command` as one program (Rust's Command::new, no shell): a program
    # named "python3 main.py" is not on PATH. It loads the manifest, so this is a warning.
    text = MINIMAL + '[plugin.entrypoint]\ncommand = "python3 main.py"\n'
    exit_code, diagnostics = lint_stdin(text)
    assert exit_code == 0
    [finding] = diagnostics
    assert (finding["code"], finding["severity"]) == ("NX108", "warning")
    assert "is a command line, not a program name" in finding["message"]
    assert finding["help"] == 'write `command = "python3"` and `args = ["main.py"]`'
    assert finding["range"]["start"] == {"line": 8, "column": 11}
    assert lint_stdin(text, "--strict")[0] == 1


# -- Duplicate definitions: the key path and the position of the second one ---------------------


@pytest.mark.parametrize(
    ("section", "key_path", "start", "end", "what"),
    [
        # An inline table is closed: a dotted key cannot add to it.
        (
            "supervisor = { respawn = true }\nsupervisor.max_attempts = 1\n",
            "plugin.supervisor",
            (8, 1),
            (8, 24),
            "table [plugin.supervisor]",
        ),
        # A table that dotted keys created cannot be reopened by a [table] header.
        (
            "supervisor.respawn = true\n[plugin.supervisor]\nmax_attempts = 1\n",
            "plugin.supervisor",
            (8, 1),
            (8, 20),
            "table [plugin.supervisor]",
        ),
        # A key cannot replace an array of tables ...
        (
            '[[plugin.channels.register]]\nkind = "a"\nadapter = "b"\n'
            "[plugin.channels]\nregister = []\n",
            "plugin.channels.register",
            (11, 1),
            (11, 9),
            "key `plugin.channels.register`",
        ),
        # ... nor an array of tables extend an array ...
        (
            "[plugin.channels]\nregister = []\n"
            '[[plugin.channels.register]]\nkind = "a"\nadapter = "b"\n',
            "plugin.channels.register",
            (9, 1),
            (9, 29),
            "table [plugin.channels.register]",
        ),
        # ... nor a [table] header reopen an array of tables.
        (
            '[[plugin.tools.outbound]]\nname = "weather_x"\ndescription = ""\n'
            'input_schema = "{}"\n[plugin.tools.outbound]\n',
            "plugin.tools.outbound",
            (11, 1),
            (11, 24),
            "table [plugin.tools.outbound]",
        ),
        # A key repeated inside an inline table is the same slip, marked at the repeat (the
        # parser stops at the closing brace, which is not where the user wrote it twice).
        (
            'entrypoint = { command = "a", command = "b" }\n',
            "plugin.entrypoint.command",
            (7, 31),
            (7, 38),
            "key `plugin.entrypoint.command`",
        ),
        (
            'entrypoint = { env.A = "1", env.A = "2" }\n',
            "plugin.entrypoint.env.A",
            (7, 29),
            (7, 34),
            "key `plugin.entrypoint.env.A`",
        ),
        (
            'entrypoint = { env = { A = "1", A = "2" } }\n',
            "plugin.entrypoint.env.A",
            (7, 33),
            (7, 34),
            "key `plugin.entrypoint.env.A`",
        ),
        (
            'channels = { register = [{ kind = "a", kind = "b", adapter = "c" }] }\n',
            "plugin.channels.register[0].kind",
            (7, 40),
            (7, 44),
            "key `plugin.channels.register[0].kind`",
        ),
        # Inside an inline table, a key may not set a table that dotted keys made, nor a
        # dotted key add to a value: the daemon's `toml::from_str` (toml 0.8,
        # crates/plugin-manifest/src/manifest.rs:691 at eec3f33) refuses both. Marked at the
        # key that repeats, as above (tomllib stops at its end or at the closing brace).
        (
            'entrypoint = { env.A = "1", env = 2 }\n',
            "plugin.entrypoint.env",
            (7, 29),
            (7, 32),
            "table [plugin.entrypoint.env]",
        ),
        (
            'entrypoint = { env = { A = "1", A.B = "2" } }\n',
            "plugin.entrypoint.env.A",
            (7, 33),
            (7, 36),
            "table [plugin.entrypoint.env.A]",
        ),
    ],
    ids=[
        "inline-then-dotted",
        "dotted-then-header",
        "aot-then-key",
        "array-then-aot",
        "aot-then-table",
        "inline-repeat",
        "inline-dotted-repeat",
        "nested-inline-repeat",
        "inline-in-array-repeat",
        "inline-dotted-then-value",
        "inline-value-then-dotted",
    ],
)
def test_a_second_definition_is_named_and_located(
    section: str, key_path: str, start: tuple[int, int], end: tuple[int, int], what: str
) -> None:
    exit_code, diagnostics = lint_stdin(MINIMAL + section)
    assert exit_code == 1
    [finding] = diagnostics
    assert finding["code"] == "NX002"
    assert finding["key_path"] == key_path
    assert finding["message"] == f"{what} is defined more than once"
    line, column = start
    assert finding["range"]["start"] == {"line": line, "column": column}
    line, column = end
    assert finding["range"]["end"] == {"line": line, "column": column}


# -- Bytes that are not a UTF-8 manifest --------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_a_utf16_manifest_is_told_to_be_saved_as_utf8(tmp_path: Path, encoding: str) -> None:
    # PowerShell 5's `>` writes UTF-16LE with a byte-order mark: text, not a binary file.
    manifest = tmp_path / "nexo-plugin.toml"
    mark = {"utf-16": b"", "utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}[encoding]
    manifest.write_bytes(mark + MINIMAL.encode(encoding))
    result = nexo("plugin", "lint", "--format", "json", str(manifest))
    assert result.code == 1
    [finding] = json.loads(result.stdout)["files"][0]["diagnostics"]
    assert finding["code"] == "NX003"
    assert "UTF-16" in finding["message"]
    assert "binary" not in finding["message"]
    assert "UTF-8" in finding["help"]


@pytest.mark.parametrize(
    ("tail", "line", "column"),
    [("[plugin\nx = 1\n", 7, 8), ("[plugin.meta]\n[plugin.meta x]\n", 8, 14)],
    ids=["unclosed", "junk"],
)
def test_a_header_not_closed_is_a_syntax_error_even_when_it_repeats_a_table(
    tail: str, line: int, column: int
) -> None:
    # Python's parser judges the key of `[plugin` before its `]` and calls it a second
    # [plugin]; the daemon's parser (toml_edit) stops at the missing bracket.
    exit_code, diagnostics = lint_stdin(MINIMAL + tail)
    assert exit_code == 1
    [finding] = diagnostics
    assert finding["code"] == "NX001"
    assert "expected ']' at the end of a table header" in finding["message"]
    assert finding["range"]["start"] == {"line": line, "column": column}


@pytest.mark.parametrize(
    "value",
    ["0000-01-01", "23:59:60", "1990-12-31T23:59:60Z", "[0000-02-29T23:59:60.5+01:00]"],
    ids=["year-0000", "leap-second", "leap-second-offset", "both-in-array"],
)
def test_datetimes_the_daemon_parses_are_not_syntax_errors(value: str) -> None:
    # toml_edit 0.22 (parser/datetime.rs): date-fullyear is any 4 digits, time-second 00-60.
    # `[plugin.http_server]` takes any TOML value, so the daemon loads these manifests.
    exit_code, diagnostics = lint_stdin(MINIMAL + f"[plugin.http_server]\nwhen = {value}\n")
    assert (exit_code, diagnostics) == (0, [])


@pytest.mark.parametrize("value", ["2023-02-29", "00:00:61"], ids=["no-feb-29", "second-61"])
def test_datetimes_the_daemon_refuses_stay_syntax_errors(value: str) -> None:
    exit_code, diagnostics = lint_stdin(MINIMAL + f"[plugin.http_server]\nwhen = {value}\n")
    assert exit_code == 1
    [finding] = diagnostics
    assert finding["code"] == "NX001"
    assert finding["range"]["start"]["line"] == 8


def test_a_date_in_a_string_field_is_still_a_wrong_type() -> None:
    exit_code, diagnostics = lint_stdin(MINIMAL.replace('"Weather"', "0000-01-01"))
    assert exit_code == 1
    assert [(d["code"], d["key_path"]) for d in diagnostics] == [("NX012", "plugin.name")]


@pytest.mark.parametrize(
    ("value", "refused"),
    [
        ("1e400", True),
        ("+1.8e308", True),
        ("[1.0, 1e999]", True),
        ("-1e400", False),
        ("inf", False),
        ("1.7976931348623157e308", False),
    ],
)
def test_a_float_past_the_f64_range_is_a_syntax_error(value: str, refused: bool) -> None:
    # toml_edit 0.22 (parser/numbers.rs) parses a float and then verifies
    # `*f != f64::INFINITY`: `1e400` is refused, `inf` and (a quirk) `-1e400` are not.
    exit_code, diagnostics = lint_stdin(MINIMAL + f"[plugin.http_server]\nx = {value}\n")
    if not refused:
        assert (exit_code, diagnostics) == (0, [])
        return
    assert exit_code == 1
    [finding] = diagnostics
    assert finding["code"] == "NX001"
    assert "is too large for a 64-bit float" in finding["message"]
    assert finding["key_path"].startswith("plugin.http_server.x")


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ("Bad", "uppercase letters are not allowed"),
        ("1x", "must not start with a digit"),
        ("a" * 65, "must be at most 64 characters (it has 65)"),
        ("a-b", "character `-` is not allowed"),
        ("", "must not be empty"),
    ],
    ids=["uppercase", "digit", "too-long", "hyphen", "empty"],
)
def test_extends_and_channel_kinds_get_the_precise_reason_plugin_ids_get(
    entry: str, reason: str
) -> None:
    # SPEC §2 rule 3: "with a precise reason (...). The same for every id that rule 6 and 8
    # check": [plugin.extends] ids and [[plugin.channels.register]] kinds (32 at most).
    exit_code, diagnostics = lint_stdin(MINIMAL + f'[plugin.extends]\nhooks = ["{entry}"]\n')
    assert exit_code == 1
    [finding] = diagnostics
    assert finding["code"] == "NX110"
    assert f"is invalid: {reason}" in finding["message"]
    kind = entry if entry != "a" * 65 else "a" * 33
    channel = f'[[plugin.channels.register]]\nkind = "{kind}"\nadapter = "x"\n'
    exit_code, diagnostics = lint_stdin(MINIMAL + channel)
    assert exit_code == 1
    [finding] = diagnostics
    assert finding["code"] == "NX120"
    expected = reason if entry != "a" * 65 else "must be at most 32 characters (it has 33)"
    assert f"is invalid: {expected}" in finding["message"]


# One value of one key: the daemon's verdict (validate.rs: validate_name, validate_path_security,
# validate_public_tunnel, validate_supervisor), which lint and the schema must both give.
SINGLE_VALUE_RULES = [
    ('name = " \\u3000"', False),  # Rust's trim() knows U+3000 ...
    ('name = "\\u0085"', False),  # ... and NEL
    ('name = "\\ufeff"', True),  # but not U+FEFF, nor U+001C (Python's isspace() does)
    ('name = "\\u001c"', True),
    ('description = "\\t"', False),
    ('[plugin.agents]\ncontributes_dir = "a/../b"', False),
    ('[plugin.skills]\ncontributes_dir = "/abs"', False),
    ('[plugin.config]\nschema_path = "C:\\\\schema.json"', False),
    ('[plugin.config]\nschema_path = "a\\\\..\\\\b"', False),
    ('[plugin.config]\nschema_path = "C:/schema.json"', True),  # not absolute on Linux
    ('[plugin.config]\nschema_path = "a/..b/..."', True),
    ('[plugin.config]\nschema_path = "a/..\\n"', True),  # the segment is "..\n", not ".."
    ('[plugin.public_tunnel]\nclose_on_event = " a.* "', False),
    ('[plugin.public_tunnel]\nclose_on_event = ">"', False),
    ('[plugin.public_tunnel]\nclose_on_event = " "', False),
    ('[plugin.public_tunnel]\nclose_on_event = "a.*b"', True),
    ('[plugin.public_tunnel]\nclose_on_event = "a. * .b"', True),
    ("[plugin.supervisor]\nstderr_tail_lines = 513", False),
    ("[plugin.supervisor]\nstderr_tail_lines = 512", True),
]


@pytest.mark.parametrize(("line", "daemon_accepts"), SINGLE_VALUE_RULES)
def test_schema_and_lint_agree_on_rules_of_one_value(line: str, daemon_accepts: bool) -> None:
    import tomllib

    key = line.split(" = ", maxsplit=1)[0]
    text = (
        MINIMAL.replace(f'{key} = "Weather"', line).replace(f'{key} = "Forecasts"', line)
        if "\n" not in line
        else MINIMAL + line + "\n"
    )
    exit_code, diagnostics = lint_stdin(text)
    errors = [d["code"] for d in diagnostics if d["severity"] == "error"]
    assert (errors == []) is daemon_accepts is (exit_code == 0), diagnostics
    assert len(errors) <= 1  # the schema's restatement gives way to the rule
    schema_errors = list(schema_validator().iter_errors(tomllib.loads(text)))
    assert (schema_errors == []) is daemon_accepts, [e.message for e in schema_errors]


# -- --explain --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("plugin", "lint", "--explain", "NX146", "--json"),
        ("plugin", "lint", "--explain", "sandbox-path-denylisted-normalised", "--format", "json"),
        ("plugin", "rule", "NX146", "--json"),
    ],
    ids=["lint-json", "lint-format-json", "rule-json"],
)
def test_explain_with_json_prints_one_document_with_the_whole_page(args: tuple[str, ...]) -> None:
    result = nexo(*args)
    assert result.code == 0, result.stderr
    [rule] = json.loads(result.stdout)["rules"]  # one document, nothing else on stdout
    assert rule["code"] == "NX146"
    assert rule["severity"] == "error"
    assert rule["beyond_daemon"] is True
    assert "goes beyond the daemon" in rule["beyond_daemon_note"]
    assert "//etc/shadow" in rule["what"]
    assert rule["example"].startswith("[plugin.sandbox]")
    assert rule["fix"]
    assert rule["url"].endswith("#nx146-sandbox-path-denylisted-normalised")


def test_a_disabled_sandbox_names_what_it_ignores_in_one_sentence() -> None:
    one = MINIMAL + '[plugin.sandbox]\nnetwork = "deny"\n'
    two = MINIMAL + '[plugin.sandbox]\nnetwork = "deny"\nfs_read_paths = ["/etc/ssl/certs"]\n'
    for text, ending in ((one, "sets `network` but is not enabled, so it is ignored"),
                         (two, "but is not enabled, so they are ignored")):  # fmt: skip
        exit_code, diagnostics = lint_stdin(text)
        assert exit_code == 0
        [finding] = diagnostics
        assert (finding["code"], finding["severity"]) == ("NX140", "warning")
        assert finding["message"].endswith(ending)


def test_only_security_checks_call_themselves_security_checks() -> None:
    # SPEC §2: the only errors beyond the daemon are security checks, and their --explain
    # says they go beyond it; the file-size refusal is no security check of a manifest.
    pages = {code: nexo("plugin", "lint", "--explain", code).stdout for code in
             ("NX004", "NX107", "NX146", "NX147")}  # fmt: skip
    for code in ("NX107", "NX146", "NX147"):
        assert "goes beyond the daemon" in pages[code]
        assert "security checks" in pages[code]
    assert "goes beyond the daemon" in pages["NX004"]
    assert "security" not in pages["NX004"]


@pytest.mark.parametrize("paths", [("-", "-"), ("-", "nexo-plugin.toml")], ids=["twice", "mixed"])
def test_standard_input_mixed_with_paths_is_a_usage_error_that_says_so(
    tmp_path: Path, paths: tuple[str, ...]
) -> None:
    (tmp_path / "nexo-plugin.toml").write_text(MINIMAL, "utf-8")
    result = nexo("plugin", "lint", *paths, cwd=tmp_path, stdin=MINIMAL)
    assert result.code == 2
    assert "standard input" in result.error_line
    assert "no such file" not in result.stderr
    piped = nexo("plugin", "lint", "--json", *paths, cwd=tmp_path, stdin=MINIMAL)
    assert piped.code == 2
    assert piped.document["kind"] == "usage"


@pytest.mark.parametrize(
    ("line", "help_text"),
    [
        (
            '[tools]\nexpose = ["weather_a"]\n',
            "`tools` belongs under [plugin]: write it in [plugin.tools]",
        ),
        (
            "[sandbox]\nenabled = true\n",
            "`sandbox` belongs under [plugin]: write it in [plugin.sandbox]",
        ),
    ],
    ids=["tools", "sandbox"],
)
def test_a_plugin_section_written_at_the_top_level_is_told_where_it_goes(
    line: str, help_text: str
) -> None:
    # The daemon refuses the unknown root key (PluginManifest is deny_unknown_fields).
    exit_code, diagnostics = lint_stdin(MINIMAL + line)
    assert exit_code == 1
    [finding] = diagnostics
    assert finding["code"] == "NX011"
    assert finding["help"] == help_text


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        (["--format", "json", "--nexo-version", "abc"], "--nexo-version 'abc'"),
        (["--format=json", "--select", "NX999"], "NX999"),
        (["--format", "json"], "no such file or directory"),
    ],
)
def test_format_json_prints_its_document_for_a_usage_error(
    tmp_path: Path, arguments: list[str], words: str
) -> None:
    """`--format json` is `--json` (docs/lint.md): a usage error is one document on stdout
    too, with the line on stderr."""
    missing = tmp_path / "absent" / "plugin.toml"
    for prefix in ([], ["-q"]):
        result = nexo(
            "plugin", "lint", *prefix, *arguments, missing, env=cli.clean_env(), cwd=tmp_path
        )
        assert result.exit_code == 2, result
        document = json.loads(result.stdout)
        assert document["ok"] is False
        assert document["kind"] == "usage"
        assert words in document["error"]
        assert words in result.stderr
    assert not (tmp_path / "absent").exists()
