"""Parse limits, Rust string semantics and spawn-time checks, as the daemon's code has them.

Every case runs through the real ``nexo plugin lint --format json`` CLI. The daemon sources
cited are ``lordmacu/nexo-rs``: the manifest crate ``crates/plugin-manifest/src`` (validate.rs
and the section structs at 17fc8cdf, manifest.rs at eec3f33), the discovery walker
``crates/core/src/agent/nexo_plugin_registry/discovery.rs`` and the spawn code
``.../nexo_plugin_registry/subprocess.rs`` (eec3f33), and the libraries it builds with
(Cargo.lock at eec3f33: toml 0.8.23 / toml_edit 0.22.27, serde_json 1.0.149).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from support.lint_cli import run_lint_json
from support.toml_texts import WEATHER_MANIFEST as BASE

SPAWNABLE = '\n[plugin.entrypoint]\ncommand = "./bin/weather"\n'
OUTBOUND = """
[plugin.tools]
expose = ["weather_now"]

[[plugin.tools.outbound]]
name = "weather_now"
description = "Now"
input_schema = '''{schema}'''
"""


def lint(
    tmp_path: Path, text: str, env: dict[str, str] | None = None
) -> tuple[int, list[dict[str, Any]]]:
    """Exit code and diagnostics of the CLI on ``text`` (written as nexo-plugin.toml)."""
    path = tmp_path / "nexo-plugin.toml"
    path.write_text(text, encoding="utf-8")
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith("NEXO_PLUGIN_")
    }
    environment.update(env or {})
    code, report = run_lint_json([path], env=environment)
    return code, list(report["files"][0]["diagnostics"])


def codes(diagnostics: list[dict[str, Any]]) -> list[str]:
    return [diagnostic["code"] for diagnostic in diagnostics]


def errors(diagnostics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [diagnostic for diagnostic in diagnostics if diagnostic["severity"] == "error"]


# --- Rust `trim()`: Unicode White_Space, not Python's isspace() ---------------------------------


@pytest.mark.parametrize("key", ["name", "description"])
@pytest.mark.parametrize("separator", ["\\u001C", "\\u001D", "\\u001E", "\\u001F"])
def test_information_separators_are_not_blank(tmp_path: Path, key: str, separator: str) -> None:
    """validate.rs@17fc8cdf `validate_name`/`validate_description` (validate.rs:120 and :126 at
    eec3f33): `name.trim().is_empty()`. Rust's `trim` strips Unicode White_Space only, which
    has no U+001C-U+001F, so a value made of them is not empty to the daemon (NX191 still warns
    about the control character)."""
    text = BASE.replace(f'{key} = "', f'{key} = "{separator}{separator}" #', 1)
    code, found = lint(tmp_path, text)
    assert errors(found) == []
    assert code == 0
    assert codes(found) == ["NX191"]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("\\u001C", ["NX191"]),
        ("\\u001F\\u001C", ["NX191"]),
        ("weather\\u001Dserver", ["NX191"]),
        ("weather\\u3000server", ["NX108"]),
    ],
    ids=["fs", "us-fs", "gs-inside", "ideographic-space-inside"],
)
def test_a_command_of_information_separators_is_one_program_name(
    tmp_path: Path, command: str, expected: list[str]
) -> None:
    """subprocess.rs:174 at eec3f33 refuses only `command.trim().is_empty()` and then spawns
    `command` as one program name. Rust's `trim` keeps U+001C-U+001F, so a command made of them
    is a (strange) program name: not NX107, not a command line to split (lint's split at
    Python's whitespace gave no word at all for it, and stopped with an internal error).
    White_Space inside the name still reads as a command line (NX108)."""
    text = BASE + f'\n[plugin.entrypoint]\ncommand = "{command}"\n'
    code, found = lint(tmp_path, text)
    assert sorted(codes(found)) == expected
    assert errors(found) == []
    assert code == 0


@pytest.mark.parametrize(
    ("blank", "code"),
    [("\\u0085", "NX102"), ("\\u00A0\\u3000", "NX102"), ("\\u2028 \\t", "NX102")],
)
def test_white_space_only_names_are_blank(tmp_path: Path, blank: str, code: str) -> None:
    """validate.rs:120 at eec3f33: NEL, NBSP, ideographic space and LINE SEPARATOR are
    White_Space, so `trim()` empties the name and the daemon refuses it (`NameEmpty`)."""
    text = BASE.replace('name = "Weather"', f'name = "{blank}"')
    exit_code, found = lint(tmp_path, text)
    assert code in codes(errors(found))
    assert exit_code == 1


def test_separator_only_outbound_schema_is_not_empty_but_invalid_json(tmp_path: Path) -> None:
    """validate.rs@17fc8cdf `validate_outbound_tools`: `input_schema.trim().is_empty()` is
    false for U+001F, so the daemon goes on to serde_json, which refuses it as JSON."""
    text = BASE + OUTBOUND.format(schema="\\u001F")
    _, found = lint(tmp_path, text.replace("'''\\u001F'''", '"\\u001F"'))
    [problem] = [d for d in found if d["code"] == "NX116"]
    assert "invalid JSON" in problem["message"]
    assert "input_schema is empty" not in problem["message"]


def test_pairing_trigger_method_of_separators_is_not_empty(tmp_path: Path) -> None:
    """validate.rs@17fc8cdf `validate_pairing`: `trigger.start_method.trim().is_empty()`; a
    method of U+001E is not blank to Rust, so no NX153."""
    text = BASE + (
        '\n[plugin.pairing]\nkind = "qr"\n[plugin.pairing.trigger]\n'
        'start_method = "\\u001E"\ncancel_method = "nexo/admin/x/cancel"\n'
    )
    _, found = lint(tmp_path, text)
    assert "NX153" not in codes(found)


def test_public_tunnel_subject_of_separators_is_not_empty(tmp_path: Path) -> None:
    """validate.rs@17fc8cdf `validate_public_tunnel`: `subject.trim()` keeps U+001C, so the
    subject is not `PublicTunnelCloseEventEmpty`."""
    text = BASE + '\n[plugin.public_tunnel]\nclose_on_event = "\\u001C"\n'
    _, found = lint(tmp_path, text)
    assert "NX155" not in codes(found)


def test_visible_when_lexer_skips_only_four_blanks(tmp_path: Path) -> None:
    """visible_when.rs@17fc8cdf `lex`: only ' ', '\\t', '\\n', '\\r' are skipped between
    tokens; a form feed or NBSP is `unexpected character`, though Python's isspace() takes
    both for whitespace."""
    text = BASE + (
        '\n[plugin.admin_ui]\n[[plugin.admin_ui.contributions]]\nid = "home"\n'
        'slot = "core.sidebar.root"\nlabel = "Home"\n'
        'visible_when = "plugin.enabled\\u000C&& true"\n'
    )
    _, found = lint(tmp_path, text)
    [problem] = [d for d in found if d["code"] == "NX169"]
    assert "unexpected character" in problem["message"]
    _, clean = lint(tmp_path, text.replace("\\u000C", "\\t"))
    assert "NX169" not in codes(clean)


def test_visible_when_string_literals_refuse_only_a_line_feed(tmp_path: Path) -> None:
    """visible_when.rs@17fc8cdf `lex`: inside a quoted literal only `ch == '\\n'` is "newline
    inside string literal"; a carriage return is an ordinary character of the string, so
    the daemon accepts `mode == "a\\rb"`."""
    text = BASE + (
        '\n[plugin.admin_ui]\n[[plugin.admin_ui.contributions]]\nid = "home"\n'
        'slot = "core.sidebar.root"\nlabel = "Home"\n'
        "visible_when = \"mode == 'a\\rb'\"\n"
    )
    code, found = lint(tmp_path, text)
    assert errors(found) == []
    assert code == 0
    _, refused = lint(tmp_path, text.replace("\\r", "\\n"))
    [problem] = [d for d in errors(refused) if d["code"] == "NX169"]
    assert problem["message"].endswith("newline inside string literal")


# --- the TOML parser's limits -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "word"),
    [("9223372036854775808", "large"), ("-9223372036854775809", "small")],
)
def test_integer_outside_i64_is_a_toml_error(tmp_path: Path, value: str, word: str) -> None:
    """discovery.rs:150 at eec3f33 parses with `toml::from_str`; toml_edit stores integers as
    `i64`, so a literal outside it fails the parse (`number too large to fit in target type`).
    Python's tomllib accepts any size."""
    text = BASE + f"\n[plugin.supervisor]\nbackoff_ms = {value}\n"
    code, found = lint(tmp_path, text)
    [problem] = found
    assert problem["code"] == "NX001"
    assert code == 1
    assert f"too {word} to fit" in problem["message"]
    assert problem["key_path"] == "plugin.supervisor.backoff_ms"
    assert (problem["range"]["start"]["line"], problem["range"]["start"]["column"]) == (9, 14)


def test_i64_bounds_parse(tmp_path: Path) -> None:
    """The `i64` extremes themselves parse; a `u64` field (backoff_ms, manifest.rs:197 at
    eec3f33) then takes any non-negative one (the range rule reports the daemon's cap)."""
    text = BASE + "\n[plugin.supervisor]\nrespawn = false\nbackoff_ms = 9223372036854775807\n"
    _, found = lint(tmp_path, text)
    assert "NX001" not in codes(found)


@pytest.mark.parametrize(
    ("table", "key", "value", "expected"),
    [
        ("[plugin.supervisor]", "max_attempts", 4294967296, "NX014"),
        ("[plugin.supervisor]", "max_attempts", 4294967295, None),
        ("[plugin.capabilities.http_server]", "port", 65536, "NX014"),
        ("[plugin.poller]", "max_concurrent_ticks", -1, "NX014"),
    ],
)
def test_integers_outside_the_fields_rust_type(
    tmp_path: Path, table: str, key: str, value: int, expected: str | None
) -> None:
    """serde deserialises into the field's Rust type: `max_attempts: u32` (manifest.rs:191 at
    eec3f33), `port: u16` (manifest.rs:292), `max_concurrent_ticks: u32` (poller.rs at
    7566e279). A value outside the type fails (`invalid value: integer ..., expected u32`)."""
    text = BASE + f"\n{table}\n{key} = {value}\n"
    _, found = lint(tmp_path, text)
    range_errors = [d for d in found if d["code"] == "NX014"]
    if expected is None:
        assert range_errors == []
    else:
        assert range_errors
        assert range_errors[0]["key_path"].endswith(key)
        # The daemon's serde wording for the field's Rust type.
        assert f"invalid value: integer `{value}`, expected u" in range_errors[0]["message"]


def test_admin_ui_order_is_u32(tmp_path: Path) -> None:
    """admin_ui.rs@17fc8cdf `Contribution.order: u32`: 2**32 fails deserialisation."""
    text = BASE + (
        '\n[plugin.admin_ui]\n[[plugin.admin_ui.contributions]]\nid = "home"\n'
        'slot = "core.sidebar.root"\nlabel = "Home"\norder = 4294967296\n'
    )
    _, found = lint(tmp_path, text)
    assert [d["key_path"] for d in found if d["code"] == "NX014"] == [
        "plugin.admin_ui.contributions[0].order"
    ]


@pytest.mark.parametrize(("depth", "refused"), [(79, False), (80, True)])
def test_toml_recursion_limit(tmp_path: Path, depth: int, refused: bool) -> None:
    """toml_edit 0.22.27's parser (`RecursionCheck`, `const LIMIT: usize = 80` in
    src/parser/mod.rs:97, checked as `LIMIT <= self.current`) refuses the array or inline
    table that opens the 80th nesting level with `recursion limit exceeded`; 79 levels parse."""
    value = "[" * depth + "]" * depth
    text = BASE + f"\n[plugin.extends]\ntools = {value}\n"
    code, found = lint(tmp_path, text)
    if refused:
        [problem] = found
        assert problem["code"] == "NX005"
        assert code == 1
        assert "recursion limit exceeded" in problem["message"]
        assert problem["range"]["start"] == {"line": 9, "column": 9 + 79}
    else:
        assert "NX005" not in codes(found)


def test_inline_tables_count_towards_the_recursion_limit(tmp_path: Path) -> None:
    """Inline tables recurse through the same check as arrays in toml_edit
    (src/parser/value.rs:25-26, `check_recursion(array)` and `check_recursion(inline_table)`)."""
    value = "{ a = " * 80 + "1" + " }" * 80
    code, found = lint(tmp_path, BASE + f"\n[plugin.config]\nx = {value}\n")
    assert codes(found) == ["NX005"]
    assert code == 1


def _dotted(parts: int) -> str:
    return ".".join(["k"] * parts)


@pytest.mark.parametrize(
    ("form", "column"),
    [("{key} = 1", 1), ("[{key}]", 2), ("[[{key}]]", 3), ("x = {{ a = 1, {key} = 1 }}", 14)],
)
@pytest.mark.parametrize(("parts", "refused"), [(79, False), (80, True)])
def test_dotted_key_recursion_limit(
    tmp_path: Path, form: str, column: int, parts: int, refused: bool
) -> None:
    """toml_edit 0.22.27 checks every key's length against the same limit
    (src/parser/key.rs:38, `RecursionCheck::check_depth(k.len())`, refused when
    `80 <= k.len()`): a dotted key of 80 parts — in a `key = value` line, a table or array
    table header, an inline table — is `recursion limit exceeded`; 79 parts parse (and are
    then judged as keys, here unknown ones). Its compliance tests probe the same forms
    (tests/compliance/parse.rs, `dotted_key_recursion_limit`, `table_key_recursion_limit`,
    `inline_dotted_key_recursion_limit`)."""
    text = BASE + "\n" + form.format(key=_dotted(parts)) + "\n"
    code, found = lint(tmp_path, text)
    assert code == 1
    if refused:
        [problem] = found
        assert problem["code"] == "NX005"
        assert problem["message"] == (
            "TOML parse error: recursion limit exceeded (a dotted key of 80 parts; at most 79)"
        )
        assert problem["range"]["start"] == {"line": 8, "column": column}
    else:
        assert "NX005" not in codes(found)
        assert "NX011" in codes(found)


def test_dots_in_strings_values_and_quoted_keys_are_not_key_parts(tmp_path: Path) -> None:
    """A quoted key is one part whatever it holds, and dots in values and comments are no
    keys at all: nothing here comes near the limit."""
    many = "." * 200
    text = (
        BASE
        + f'description_long = "{many}"\n# {many}\n'
        + f'\n[plugin.entrypoint]\ncommand = "./bin/weather"\nargs = ["{many}", \'{many}\']\n'
        + f'\n[plugin.entrypoint.env]\n"{many}" = "x"\n'
    )
    _, found = lint(tmp_path, text)
    assert "NX005" not in codes(found)


def test_a_dotted_key_of_fifty_thousand_parts_is_refused_without_parsing_it(
    tmp_path: Path,
) -> None:
    """Python's parser takes time quadratic in a dotted key's length (minutes for 50,000
    parts) and its tables recurse past Python's limit; the daemon's parser stops at part 80,
    and so does lint, at once."""
    code, found = lint(tmp_path, BASE + "\n" + _dotted(50_000) + " = 1\n")
    assert code == 1
    assert [(d["code"], d["range"]["start"]) for d in found] == [
        ("NX005", {"line": 8, "column": 1})
    ]


def test_tables_nested_past_python_s_recursion_limit_are_linted(tmp_path: Path) -> None:
    """Keys of 79 parts in inline tables nested 70 deep under a 79-part header: toml_edit
    parses it (no key or value past its limit); the tables are thousands deep, and lint walks
    them without recursing: the daemon refuses the unknown root key, lint says the same."""
    key = _dotted(79)
    value = "1"
    for _ in range(70):
        value = f"{{ {key} = {value} }}"
    code, found = lint(tmp_path, BASE + f"\n[{key}]\n{key} = {value}\n")
    assert code == 1
    assert "NX011" in codes(errors(found))
    assert "NX005" not in codes(found)


# --- JSON in strings: serde_json, not Python's json -------------------------------------------


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ('{"type":"object","maximum":1e400}', "number out of range at line 1 column 32"),
        ('{"type":"object","x":-1e400}', "number out of range at line 1 column 27"),
        ('{"type":"object","x":"\\ud800"}', "unexpected end of hex escape at line 1 column 29"),
        (
            '{"type":"object","x":"\\udc00"}',
            "lone leading surrogate in hex escape at line 1 column 28",
        ),
        (
            '{"type":"object","x":"\\ud800\\u0041"}',
            "lone leading surrogate in hex escape at line 1 column 34",
        ),
        (
            '{"type":"object","x":' + "[" * 127 + "]" * 127 + "}",
            "recursion limit exceeded at line 1 column 148",
        ),
        # An integer literal past u64 is read as an f64 (src/de.rs `parse_long_integer`), and
        # one past f64's range is NumberOutOfRange though it has no exponent.
        ('{"type":"object","x":1' + "0" * 400 + "}", "number out of range at line 1 column 422"),
        ('{"type":"object","x":-9' + "9" * 399 + "}", "number out of range at line 1 column 422"),
        # Python's `json` reads NaN and Infinity; no serde_json value starts with `N` or `I`
        # (src/de.rs `ExpectedSomeValue`), and `-` needs a digit after it (`InvalidNumber`).
        ('{"type":"object","x":NaN}', "expected value at line 1 column 22"),
        ('{"type":"object","x":Infinity}', "expected value at line 1 column 22"),
        ('{"type":"object",\n"x":[1, -Infinity]}', "invalid number at line 2 column 10"),
    ],
)
def test_serde_json_refusals_python_accepts(tmp_path: Path, schema: str, message: str) -> None:
    """validate.rs@17fc8cdf `validate_outbound_tools`: `serde_json::from_str::<Value>` and
    `invalid JSON: {e}`. serde_json refuses numbers that overflow f64 (`NumberOutOfRange`),
    unpaired UTF-16 surrogate escapes, and a 128th level of nesting (recursion limit 128);
    its position is the line and byte column of the offending character."""
    code, found = lint(tmp_path, BASE + OUTBOUND.format(schema=schema))
    [problem] = [d for d in found if d["code"] == "NX116"]
    assert problem["severity"] == "error"
    assert code == 1
    assert f"invalid JSON: {message}" in problem["message"]


@pytest.mark.parametrize(
    "schema",
    [
        '{"type":"object","x":"\\ud83d\\ude00"}',
        '{"type":"object","maximum":1e308}',
        # Underflow is no error: serde_json reads 1e-400 as 0.0, as Python does.
        '{"type":"object","minimum":1e-400}',
        '{"type":"object","x":18446744073709551616}',
        '{"type":"object","x":' + "[" * 126 + "]" * 126 + "}",
    ],
)
def test_serde_json_accepts(tmp_path: Path, schema: str) -> None:
    """A surrogate pair, a finite large number and 127 levels are valid serde_json."""
    _, found = lint(tmp_path, BASE + OUTBOUND.format(schema=schema))
    assert "NX116" not in codes(found)


# --- size: the daemon reads any manifest whole ------------------------------------------------


def test_a_large_manifest_is_read_with_a_warning(tmp_path: Path) -> None:
    """discovery.rs:135 at eec3f33 reads the manifest with `read_to_string`, whatever its size:
    above 1 MiB nexo-pkg still lints it, with the NX007 warning."""
    padding = "# " + "x" * 1000 + "\n"
    text = BASE + padding * 1100
    code, found = lint(tmp_path, text)
    assert codes(found) == ["NX007"]
    assert code == 0
    assert found[0]["severity"] == "warning"


def test_only_a_file_nexo_pkg_cannot_safely_read_is_refused(tmp_path: Path) -> None:
    """Above 4 MiB nexo-pkg does not read the file (NX004, stricter than the daemon)."""
    path = tmp_path / "nexo-plugin.toml"
    with path.open("w", encoding="utf-8") as out:
        out.write(BASE)
        chunk = "# " + "x" * 65534 + "\n"
        for _ in range(4 * 16 + 1):
            out.write(chunk)
    code, report = run_lint_json([path], env=dict(os.environ))
    assert [d["code"] for d in report["files"][0]["diagnostics"]] == ["NX004"]
    assert code == 1


# --- checks that bite only when the plugin is spawned -----------------------------------------


def test_reserved_env_keys_only_matter_with_a_command(tmp_path: Path) -> None:
    """subprocess.rs:169-187 at eec3f33: the `NEXO_` env check runs in `spawn_and_handshake`,
    after the command is taken; a manifest without one is never spawned, so never checked."""
    env_table = '\n[plugin.entrypoint.env]\nNEXO_HOME = "/tmp"\n'
    _, without = lint(tmp_path, BASE + env_table)
    assert "NX106" not in codes(without)
    _, blank = lint(tmp_path, BASE + '\n[plugin.entrypoint]\ncommand = " "\n' + env_table[1:])
    assert codes(errors(blank)) == ["NX107"]
    code, spawned = lint(tmp_path, BASE + SPAWNABLE + env_table[1:])
    assert "NX106" in codes(spawned)
    assert code == 1


@pytest.mark.parametrize(
    ("extra", "key_path"),
    [
        ('args = ["--mode\\u0000x"]\n', "plugin.entrypoint.args[0]"),
        ('env = { WEATHER_MODE = "a\\u0000" }\n', "plugin.entrypoint.env.WEATHER_MODE"),
    ],
)
def test_nul_bytes_in_what_is_spawned(tmp_path: Path, extra: str, key_path: str) -> None:
    """subprocess.rs:189-206 at eec3f33 passes args and env to `Command`; the spawn fails on a
    NUL byte (`nul byte found in provided data`), so the plugin never runs."""
    code, found = lint(tmp_path, BASE + SPAWNABLE + extra)
    [problem] = [d for d in found if d["code"] == "NX124"]
    assert problem["key_path"] == key_path
    assert problem["severity"] == "error"
    assert code == 1
    _, not_spawned = lint(tmp_path, BASE + "\n[plugin.entrypoint]\n" + extra)
    assert "NX124" not in codes(not_spawned)


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "yes", "YES"])
def test_sandbox_required_refuses_an_unsandboxed_plugin(tmp_path: Path, value: str) -> None:
    """The daemon's sandbox runner (`SandboxRunner::discover`, `env_flag`) takes
    NEXO_PLUGIN_SANDBOX_REQUIRE as on for 1/true/TRUE/yes/YES and `wrap_command` then refuses
    a plugin with `sandbox.enabled = false` (`SandboxRequiredButDisabled`)."""
    env = {"NEXO_PLUGIN_SANDBOX_REQUIRE": value}
    code, found = lint(tmp_path, BASE + SPAWNABLE, env)
    assert codes(errors(found)) == ["NX149"]
    assert code == 1
    disabled = BASE + SPAWNABLE + "\n[plugin.sandbox]\nenabled = false\n"
    _, found = lint(tmp_path, disabled, env)
    assert [d["key_path"] for d in found if d["code"] == "NX149"] == ["plugin.sandbox.enabled"]
    enabled = BASE + SPAWNABLE + "\n[plugin.sandbox]\nenabled = true\n"
    assert "NX149" not in codes(lint(tmp_path, enabled, env)[1])
    assert "NX149" not in codes(lint(tmp_path, BASE, env)[1])


@pytest.mark.parametrize("value", ["0", "on", "True", "Yes", ""])
def test_other_spellings_do_not_require_a_sandbox(tmp_path: Path, value: str) -> None:
    """`env_flag` matches the five spellings exactly; anything else is off."""
    _, found = lint(tmp_path, BASE + SPAWNABLE, {"NEXO_PLUGIN_SANDBOX_REQUIRE": value})
    assert "NX149" not in codes(found)


def test_host_network_accepts_the_daemons_truthy_spellings(tmp_path: Path) -> None:
    """The same `env_flag` reads NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW."""
    text = BASE + '\n[plugin.sandbox]\nenabled = true\nnetwork = "host"\n'
    assert "NX141" in codes(lint(tmp_path, text)[1])
    for value in ("yes", "TRUE"):
        env = {"NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW": value}
        assert "NX141" not in codes(lint(tmp_path, text, env)[1])


@pytest.mark.parametrize("depth", [900, 5000])
def test_nesting_too_deep_for_python_is_reported_where_the_daemon_stops(
    tmp_path: Path, depth: int
) -> None:
    """Nesting deep enough to exhaust Python's recursion in tomllib is reported where
    toml_edit stops, at the bracket that opens the 80th level, with the same words as a
    shallower overflow; not at line 1, column 1."""
    value = "[" * depth + "]" * depth
    code, found = lint(tmp_path, BASE + f"\n[plugin.extends]\ntools = {value}\n")
    [problem] = found
    assert code == 1
    assert problem["code"] == "NX005"
    assert problem["message"] == (
        "TOML parse error: recursion limit exceeded (more than 79 nested levels)"
    )
    assert problem["range"]["start"] == {"line": 9, "column": 9 + 79}
    assert problem["range"]["end"] == {"line": 9, "column": 9 + 80}
