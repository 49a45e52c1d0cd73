"""The engine: layering of syntax, legacy, schema and semantic findings; options; bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nexo_pkg.lint.engine import lint_bytes, lint_file, lint_source
from nexo_pkg.manifest.options import LintOptions

HEADER = (
    '[plugin]\nid = "weather"\nversion = "0.1.0"\nname = "Weather"\n'
    'description = "Forecasts."\nmin_nexo_version = ">=0.1.0"\n'
)


def codes(text: str, options: LintOptions | None = None) -> list[str]:
    return [d.code for d in lint_source(text, options=options).diagnostics]


def test_clean_manifest() -> None:
    result = lint_source(HEADER)
    assert result.diagnostics == ()
    assert result.success
    assert result.source == HEADER


def test_semantic_rule_wins_over_the_schema_pattern() -> None:
    text = HEADER.replace('id = "weather"', 'id = "Weather"')
    found = lint_source(text).diagnostics
    assert [d.key_path for d in found] == ["plugin.id"]
    assert found[0].code == "NX100"


def test_type_error_wins_over_a_semantic_finding_on_the_same_value() -> None:
    text = HEADER.replace('version = "0.1.0"', "version = 1")
    assert codes(text) == ["NX012"]


def test_all_problems_in_one_run_in_file_order() -> None:
    text = (
        HEADER
        + "extra = 1\n[plugin.sandbox]\nenabled = true\nnetwork = 1\n[plugin.supervisor]\nx = 2\n"
    )
    found = lint_source(text).diagnostics
    # The enum of `network` is not reported on top of its type error.
    assert [(d.code, d.span.start.line) for d in found] == [
        ("NX011", 7),
        ("NX012", 10),
        ("NX011", 12),
    ]


def test_legacy_v1_gets_only_the_legacy_diagnostic() -> None:
    text = '[plugin]\nid = "Bad-Id"\nversion = "x"\n[transport]\nkind = "stdio"\ncommand = "x"\n'
    [only] = lint_source(text).diagnostics
    assert only.name == "legacy-v1-manifest"
    assert only.span.start.line == 4


def test_select_and_ignore() -> None:
    text = HEADER + "extra = 1\nenabled_by_default = 1\n"
    assert codes(text) == ["NX011", "NX012"]
    assert codes(text, LintOptions(select=frozenset({"NX011"}))) == ["NX011"]
    assert codes(text, LintOptions(select=frozenset({"nx0"}))) == ["NX011", "NX012"]
    assert codes(text, LintOptions(ignore=frozenset({"unknown-key"}))) == ["NX012"]
    assert codes(text, LintOptions(select=frozenset({"NX0"}), ignore=frozenset({"NX012"}))) == [
        "NX011"
    ]


def test_nexo_version_reaches_the_semantic_rules() -> None:
    text = HEADER.replace(">=0.1.0", ">=0.5.0")
    assert codes(text) == ["NX123"]  # no known daemon release satisfies it: a warning
    found = codes(text, LintOptions(nexo_version="0.4.9"))
    assert found == ["NX105"]


def test_bytes_with_bad_encoding_are_a_finding() -> None:
    result = lint_bytes(b"\xff\xfe junk", path="x.toml")
    assert [d.code for d in result.diagnostics] == ["NX003"]
    assert not result.success


def test_trust_policy_file_is_dispatched(tmp_path: Path) -> None:
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text('schema_version = "1.0"\ndefault = "warn"\n', encoding="utf-8")
    assert lint_file(policy).diagnostics == ()
    policy.write_text('schema_version = "1.0"\ndefault = "sometimes"\n', encoding="utf-8")
    result = lint_file(policy)
    assert not result.success
    assert all(not d.code.startswith("NX0") for d in result.diagnostics)
    ignored = lint_file(policy, options=LintOptions(ignore=frozenset({"policy-"})))
    assert ignored.diagnostics == ()


# -- robustness: any parsed document gives diagnostics, never an exception ---------------

FULL = (
    Path(__file__).resolve().parent.parent / "fixtures" / "manifests" / "valid" / "full.toml"
).read_text("utf-8")
FULL_LINES = FULL.splitlines()
JUNK_VALUES = [
    "1",
    "-1",
    "1.5",
    "true",
    '""',
    '" "',
    '"x"',
    "[]",
    "[1, 2]",
    '["a", "a"]',
    "{}",
    "{ kind = 1 }",
    "1979-05-27",
    "07:32:00",
    '"/"',
    '"${state_dir}"',
    '"nexo/admin/"',
    "[{ key = 1 }]",
    '"../x"',
    '"NEXO_X"',
]


@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=len(FULL_LINES) - 1),
            st.sampled_from(JUNK_VALUES),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_mutated_manifests_never_raise(edits: list[tuple[int, str]]) -> None:
    lines = list(FULL_LINES)
    for index, value in edits:
        key, separator, _ = lines[index].partition(" = ")
        if separator and not key.startswith(("#", "[")):
            lines[index] = f"{key} = {value}"
    result = lint_source("\n".join(lines) + "\n")
    for diagnostic in result.diagnostics:
        assert diagnostic.span.start.line >= 1
        assert diagnostic.span.start.column >= 1


def test_a_trailing_newline_never_makes_an_id_valid() -> None:
    # The daemon's regexes match the whole string; Python's `$` would also match before a
    # final line feed, so "weather\n" must not pass as "weather".
    assert codes(HEADER.replace('"weather"', '"weather\\n"')) == ["NX100"]
    assert codes(HEADER + '[plugin.extends]\nhooks = ["audit\\n"]\n') == ["NX110"]
    kind = '[[plugin.channels.register]]\nkind = "chat\\n"\nadapter = "a"\n'
    assert codes(HEADER + kind) == ["NX120"]
    screen = (
        "[plugin.admin_ui]\nschema_version = 1\n[[plugin.admin_ui.screens]]\n"
        'id = "main\\n"\ntitle = "Main"\n[[plugin.admin_ui.screens.fields]]\n'
        'key = "k\\n"\nlabel = "K"\ntype = "text"\n'
    )
    assert sorted(codes(HEADER + screen)) == ["NX162", "NX167"]


@pytest.mark.parametrize(
    "raw",
    [
        "entries: {}\n".encode("utf-16"),  # PowerShell 5's `>`: a UTF-16 byte-order mark
        b"entries:\n  a: \xff\n",
        b"entries: {}\n\x00",
    ],
)
@pytest.mark.parametrize("name", ["extensions.yaml", "agents.yml"])
def test_a_daemon_config_file_that_is_not_utf8_is_spoken_of_as_yaml(raw: bytes, name: str) -> None:
    """The daemon reads its config files to a `String` before serde_yaml sees them
    (`std::fs::read_to_string`), so anything but UTF-8 stops it; the finding speaks of what
    the file is, a YAML config file, not of TOML manifests."""
    result = lint_bytes(raw, path=f"config/{name}")
    [problem] = result.diagnostics
    assert problem.code == "NX003"
    words = f"{problem.message} {problem.help}"
    assert "TOML" not in words
    assert "manifest" not in words
    assert "nexo-plugin.toml" not in words
    assert "UTF-8" in words or "NUL" in words
