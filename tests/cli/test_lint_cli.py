"""``nexo plugin lint`` and ``nexo plugin schema`` end to end, through the real entry point."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from support import cli
from support.shared_fixtures import shared_fixture, skip_unless_present
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
REFERENCE = shared_fixture("reference-manifests")
VALID = FIXTURES / "manifests" / "valid" / "minimal.toml"
INVALID = FIXTURES / "manifests" / "invalid" / "several_faults_in_file_order.toml"
REPORT_SCHEMA = json.loads((ROOT / "schemas" / "lint-report.schema.json").read_text("utf-8"))
MINIMAL = VALID.read_text("utf-8")
WARNING_ONLY = MINIMAL + '\n[plugin.sandbox]\nnetwork = "deny"\n'


# No run here needs a process of its own; the pty, import-time and Typer tests make theirs.
nexo = partial(cli.nexo, in_process=True)


@skip_unless_present("reference-manifests")
def test_reference_manifests_lint_clean() -> None:
    result = nexo("plugin", "lint", str(REFERENCE), "--format", "json")
    assert result.code == 0, result.stdout
    report = json.loads(result.stdout)
    assert report["summary"] == {
        "files": 0,
        "errors": 0,
        "warnings": 0,
    }  # not named nexo-plugin.toml
    explicit = nexo("plugin", "lint", *map(str, sorted(REFERENCE.glob("*.toml"))))
    assert explicit.code == 0, explicit.stderr
    assert "All checks passed (8 files linted)." in explicit.stdout


def test_errors_exit_1_and_text_goes_to_stdout() -> None:
    result = nexo("plugin", "lint", str(INVALID))
    assert result.code == 1
    assert result.stderr == ""
    assert f"{INVALID}:3:11: NX012 " in result.stdout
    assert "Found 5 errors and 0 warnings in 1 file." in result.stdout


def test_json_output_is_one_valid_document() -> None:
    result = nexo("plugin", "lint", "--format", "json", str(INVALID), str(VALID))
    assert result.code == 1
    report = json.loads(result.stdout)
    Draft202012Validator(REPORT_SCHEMA).validate(report)
    assert [entry["path"] for entry in report["files"]] == [str(INVALID), str(VALID)]
    assert report["summary"] == {"files": 2, "errors": 5, "warnings": 0}
    assert result.stderr == ""


@pytest.mark.parametrize("output_format", ["github", "sarif"])
def test_machine_formats_go_to_stdout(output_format: str) -> None:
    result = nexo("plugin", "lint", "--format", output_format, str(INVALID))
    assert result.code == 1
    assert result.stderr == ""
    if output_format == "github":
        assert result.stdout.count("::error ") == 5
    else:
        assert json.loads(result.stdout)["version"] == "2.1.0"


def test_github_annotations_send_columns_only_for_a_span_on_one_line(tmp_path: Path) -> None:
    """The toolkit's AnnotationProperties: columns "cannot be sent when startLine and endLine
    are different values" (the runner drops them). A blank multi-line description spans two
    lines; the denylisted path beside it stays on one and keeps its columns."""
    manifest = tmp_path / "nexo-plugin.toml"
    manifest.write_text(
        MINIMAL.replace('"Forecasts for agents."', '"""\n   """')
        + '\n[plugin.sandbox]\nenabled = true\nfs_read_paths = ["/etc/shadow"]\n',
        encoding="utf-8",
    )
    report = json.loads(
        nexo("plugin", "lint", "--format", "json", manifest.name, cwd=tmp_path).stdout
    )
    ranges = {d["code"]: d["range"] for d in report["files"][0]["diagnostics"]}
    blank, denied = ranges["NX103"], ranges["NX145"]
    assert blank["end"]["line"] == blank["start"]["line"] + 1
    result = nexo("plugin", "lint", "--format", "github", manifest.name, cwd=tmp_path)
    assert result.code == 1
    lines = {line.split("title=")[1].split(" ")[0]: line for line in result.stdout.splitlines()}
    start, end = blank["start"]["line"], blank["end"]["line"]
    assert lines["NX103"].startswith(
        f"::error file=nexo-plugin.toml,line={start},endLine={end},title=NX103 "
    )
    line, col = denied["start"]["line"], denied["start"]["column"]
    assert lines["NX145"].startswith(
        f"::error file=nexo-plugin.toml,line={line},col={col},endLine={line},"
        f"endColumn={denied['end']['column']},title=NX145 "
    )


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        ("\\u001b[31mred\\u001b[0m", "\\u001b[31mred\\u001b[0m"),
        ("a\\u0000b", "a\\u0000b"),
        ("x\\nhelp: run this", "x\\u000ahelp: run this"),
        ("a\\u202eb", "a\\u202eb"),
    ],
    ids=["escape-sequence", "nul", "line-feed", "bidi-override"],
)
def test_github_annotations_show_control_characters_from_the_file_escaped(
    tmp_path: Path, key: str, shown: str
) -> None:
    """A key from the file is quoted in the message as the text report quotes it: an escape
    sequence, NUL or bidirectional control is never written raw into the CI log, and a line
    feed cannot start a line of its own in the annotation (a made-up `help:` line)."""
    manifest = tmp_path / "nexo-plugin.toml"
    manifest.write_text(MINIMAL + f'\n[plugin.sandbox]\n"{key}" = 1\n', encoding="utf-8")
    text = nexo("plugin", "lint", "--format", "text", manifest.name, cwd=tmp_path).stdout
    assert f"unknown key `{shown}`" in text
    result = nexo("plugin", "lint", "--format", "github", manifest.name, cwd=tmp_path)
    assert result.code == 1
    [line] = [line for line in result.stdout.splitlines() if "title=NX011 " in line]
    message = line.split("::", 2)[2]
    assert message.startswith(f"unknown key `{shown}` in table [plugin.sandbox]%0Ahelp: ")
    assert message.count("%0A") == 1
    assert not any(char < " " or "\u202a" <= char <= "\u202e" for char in line)


@pytest.mark.parametrize(
    ("directory", "shown"),
    [
        ("esc\x1b[31mred", "esc\\u001b[31mred"),
        ("bell\x07", "bell\\u0007"),
        ("a\u202eb", "a\\u202eb"),
        ("line\nfeed", "line%0Afeed"),
        ("p%2C,x:y", "p%252C%2Cx%3Ay"),
        ("my café 名前", "my café 名前"),
    ],
    ids=[
        "escape-sequence",
        "bell",
        "bidi-override",
        "line-feed",
        "percent-comma-colon",
        "spaces-and-letters",
    ],
)
def test_github_annotations_name_a_file_with_control_characters_escaped(
    tmp_path: Path, directory: str, shown: str
) -> None:
    """The `file` of an annotation shows a control character of the path escaped, as the text
    report does (never an escape sequence written raw); a line feed, `%`, `,` and `:` are
    carried by the toolkit's property escaping, which the runner reads back as the name; a
    space or a letter outside ASCII is part of a normal name and stays as it is."""
    plugin = tmp_path / directory
    plugin.mkdir()
    (plugin / "nexo-plugin.toml").write_text(MINIMAL + "\n[plugin.sandbox]\nx = 1\n", "utf-8")
    result = nexo("plugin", "lint", "--format", "github", directory, cwd=tmp_path)
    assert result.code == 1
    [line] = [line for line in result.stdout.splitlines() if "title=NX011 " in line]
    assert line.startswith(f"::error file={shown}/nexo-plugin.toml,line=")
    assert not any(char < " " or "\u202a" <= char <= "\u202e" for char in line)


def test_stdin_round_trips_with_file_output(tmp_path: Path) -> None:
    manifest = tmp_path / "nexo-plugin.toml"
    manifest.write_bytes(INVALID.read_bytes())
    from_file = nexo("plugin", "lint", "--format", "json", "nexo-plugin.toml", cwd=tmp_path)
    from_stdin = nexo(
        "plugin",
        "lint",
        "--format",
        "json",
        "--stdin",
        "--stdin-filename",
        "nexo-plugin.toml",
        cwd=tmp_path,
        stdin=INVALID.read_bytes(),
    )
    assert from_stdin.code == from_file.code == 1
    assert from_stdin.stdout == from_file.stdout
    unnamed = nexo("plugin", "lint", "--stdin", "--format", "json", stdin=INVALID.read_bytes())
    assert json.loads(unnamed.stdout)["files"][0]["path"] == "<stdin>"


POLICY_WITH_FAULTS = (
    'schema_version = "1.0"\ndefault = "sometimes"\n[[authors]]\nowner = "🙂"\nbogus = 1\n'
)


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
@pytest.mark.parametrize("document", ["nexo-plugin.toml", "trusted_keys.toml"])
def test_stdin_named_like_a_file_reports_it_byte_for_byte_in_every_format(
    tmp_path: Path, fmt: str, document: str
) -> None:
    """`lint --stdin --stdin-filename F` round-trips with `lint F`: the same report (the path,
    the columns after non-ASCII text, the annotations' file property, SARIF's artifact URI),
    the same stderr and the same exit code, whatever the format and whichever document."""
    plugin = tmp_path / "plugins" / "wëather"
    plugin.mkdir(parents=True)
    if document == "nexo-plugin.toml":
        text = INVALID.read_text("utf-8").replace("[plugin]", "[plugin]\n# Wëather 🌦", 1)
    else:
        text = POLICY_WITH_FAULTS
    (plugin / document).write_text(text, encoding="utf-8", newline="")
    named = f"plugins/wëather/{document}"
    from_file = nexo("plugin", "lint", "--format", fmt, named, cwd=tmp_path)
    assert from_file.code == 1
    assert f"wëather/{document}" in from_file.stdout or "w%C3%ABather" in from_file.stdout
    for spelling in (("--stdin",), ("-",)):
        from_stdin = nexo(
            "plugin", "lint", "--format", fmt, *spelling, "--stdin-filename", named,
            cwd=tmp_path, stdin=text.encode("utf-8"),
        )  # fmt: skip
        assert (from_stdin.code, from_stdin.stdout, from_stdin.stderr) == (
            from_file.code,
            from_file.stdout,
            from_file.stderr,
        )


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
@pytest.mark.parametrize(
    "text",
    ["# Wëather plugin manifest\nx = 1\n", "\nx = 1\n", "# only a comment\n"],
    ids=["comment-first", "blank-first", "one-line"],
)
def test_crlf_line_ends_move_no_range(tmp_path: Path, fmt: str, text: str) -> None:
    """A file saved with CRLF line ends is reported exactly as the same file with LF ends: the
    carriage return ends the line and is part of no span. A missing [plugin] table is reported
    on the first line, and that range stops before the `\\r`, as LSP counts the line (so the
    language server and the command give the same range)."""
    reports = []
    for name, ending in (("lf", "\n"), ("crlf", "\r\n")):
        directory = tmp_path / name
        directory.mkdir()
        (directory / "nexo-plugin.toml").write_bytes(text.replace("\n", ending).encode("utf-8"))
        result = nexo("plugin", "lint", "--format", fmt, "nexo-plugin.toml", cwd=directory)
        assert result.code == 1
        reports.append((result.stdout, result.stderr))
    assert reports[1] == reports[0]
    if fmt == "json":
        [missing] = [
            d for d in json.loads(reports[0][0])["files"][0]["diagnostics"] if d["code"] == "NX010"
        ]
        first = text.partition("\n")[0]
        assert missing["range"] == {
            "start": {"line": 1, "column": 1},
            "end": {"line": 1, "column": len(first) + 1},
        }


@pytest.mark.parametrize(
    "args",
    [
        ("--stdin", "some/path.toml"),
        ("--stdin-filename", "x.toml", str(VALID)),
        ("--format", "yaml", str(VALID)),
        ("--select", "NX999", str(VALID)),
        ("--ignore", "not-a-rule", str(VALID)),
        ("--nexo-version", "v1", str(VALID)),
        ("--explain", "NX999"),
        ("/definitely/not/here.toml",),
        ("--no-such-flag",),
    ],
)
def test_usage_errors_exit_2_with_one_line(args: tuple[str, ...]) -> None:
    result = nexo("plugin", "lint", *args, stdin=b"")
    assert result.code == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.strip()


@pytest.mark.parametrize(
    "args",
    [
        ("--format", "text", "--json", str(INVALID)),
        ("--json", "--format=text", str(INVALID)),
        ("--format", "github", "--json", "--explain", "NX100"),
    ],
)
def test_json_with_another_named_format_is_a_usage_error(args: tuple[str, ...]) -> None:
    # docs/cli.md: `lint --json` is `lint --format json`; with another --format (text named
    # on the command line too, and with --explain) it is a usage error, one JSON document.
    from nexo_pkg.cli.app import build_app

    for in_process in (True, False):
        result = nexo("plugin", "lint", *args, in_process=in_process)
        assert result.code == 2, result.stdout
        assert result.document["kind"] == "usage"
        assert "cannot go with --format" in result.document["error"]
    through_typer = CliRunner().invoke(build_app()[0], ["plugin", "lint", *args])
    assert through_typer.exit_code == 2, through_typer.stdout
    assert json.loads(through_typer.stdout)["kind"] == "usage"


def test_json_alone_and_text_alone_keep_their_formats() -> None:
    as_json = nexo("plugin", "lint", "--json", str(INVALID))
    assert (as_json.code, json.loads(as_json.stdout)["schema_version"]) == (1, 1)
    as_text = nexo("plugin", "lint", "--format", "text", str(INVALID))
    assert as_text.code == 1
    assert as_text.stdout.startswith(f"{INVALID}:"), as_text.stdout
    explained = nexo("plugin", "lint", "--explain", "NX100", "--json")
    assert json.loads(explained.stdout)["rules"][0]["code"] == "NX100"


def test_explain_prints_the_rule_page() -> None:
    for code in ("NX011", "unknown-key", "NX100", "legacy-v1-manifest"):
        result = nexo("plugin", "lint", "--explain", code)
        assert result.code == 0
        assert "What it checks" in result.stdout
        assert "Fix" in result.stdout


def test_strict_fails_on_warnings(tmp_path: Path) -> None:
    manifest = tmp_path / "nexo-plugin.toml"
    manifest.write_text(WARNING_ONLY, encoding="utf-8")
    assert nexo("plugin", "lint", str(manifest)).code == 0
    assert nexo("plugin", "lint", "--strict", str(manifest)).code == 1


def test_select_ignore_and_nexo_version(tmp_path: Path) -> None:
    manifest = tmp_path / "nexo-plugin.toml"
    manifest.write_text(MINIMAL.replace(">=0.1.0", ">=0.3.0") + "extra = 1\n", encoding="utf-8")
    assert nexo("plugin", "lint", "--ignore", "NX011", str(manifest)).code == 0
    mismatch = nexo(
        "plugin",
        "lint",
        "--format",
        "json",
        "--ignore=unknown-key",
        "--nexo-version",
        "0.2.9",
        str(manifest),
    )
    assert mismatch.code == 1
    codes = [d["code"] for d in json.loads(mismatch.stdout)["files"][0]["diagnostics"]]
    assert codes == ["NX105"]
    only = nexo("plugin", "lint", "--format", "json", "--select", "NX105,NX011", str(manifest))
    assert [d["code"] for d in json.loads(only.stdout)["files"][0]["diagnostics"]] == ["NX011"]


def test_directory_search_skips_vendored_trees(tmp_path: Path) -> None:
    bad = INVALID.read_text("utf-8")
    for relative in (".git", "node_modules/dep", "venv", ".venv", "tools/env", "build", "dist"):
        directory = tmp_path / relative
        directory.mkdir(parents=True)
        (directory / "nexo-plugin.toml").write_text(bad, encoding="utf-8")
    (tmp_path / "tools" / "env" / "pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")
    (tmp_path / "plugins" / "a").mkdir(parents=True)
    (tmp_path / "plugins" / "a" / "nexo-plugin.toml").write_text(MINIMAL, encoding="utf-8")
    (tmp_path / "plugins" / "a" / "other.toml").write_text(bad, encoding="utf-8")
    result = nexo("plugin", "lint", "--format", "json", cwd=tmp_path)
    assert result.code == 0, result.stdout
    paths = [entry["path"] for entry in json.loads(result.stdout)["files"]]
    assert paths == [str(Path("plugins/a/nexo-plugin.toml"))]
    explicit = nexo("plugin", "lint", "plugins/a/other.toml", cwd=tmp_path)
    assert explicit.code == 1


def test_empty_directory_warns_and_passes(tmp_path: Path) -> None:
    result = nexo("plugin", "lint", str(tmp_path))
    assert result.code == 0
    assert "no manifest (plugin.toml or nexo-plugin.toml) found" in result.stderr


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"\x7fELF\x02\x01\x01\x00\x00\x00binary", "NX003"),
        (b"", "NX010"),
        (b'[plugin]\nname = "\xff\xfe"\n', "NX003"),
        (b"a = 1\n" * 1_750_000, "NX004"),
        (b"x = " + b"[" * 10_000 + b"]" * 10_000 + b"\n", "NX005"),
        (b"[[[[[[", "NX001"),
    ],
    ids=["binary", "empty", "invalid-utf8", "10MB", "deep-arrays", "brackets"],
)
def test_junk_input_is_a_diagnostic_not_a_traceback(
    tmp_path: Path, content: bytes, code: str
) -> None:
    junk = tmp_path / "junk.toml"
    junk.write_bytes(content)
    result = nexo("plugin", "lint", "--format", "json", str(junk))
    assert result.code == 1
    [entry] = json.loads(result.stdout)["files"]
    assert [d["code"] for d in entry["diagnostics"]][:1] == [code]
    piped = nexo("plugin", "lint", "--stdin", stdin=content)
    assert piped.code == 1


def test_trust_policy_is_linted_as_a_policy(tmp_path: Path) -> None:
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text('schema_version = "1.0"\ndefault = "warn"\n', encoding="utf-8")
    assert nexo("plugin", "lint", str(policy)).code == 0
    policy.write_text('schema_version = "1.0"\ndefault = "warn"\nbogus = 1\n', encoding="utf-8")
    assert nexo("plugin", "lint", str(policy)).code == 1


def test_a_renamed_trust_policy_is_linted_as_a_policy(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('schema_version = "1.0"\ndefault = "strict"\n', encoding="utf-8")
    result = nexo("plugin", "lint", "--format", "json", str(policy))
    assert result.code == 1
    [entry] = json.loads(result.stdout)["files"]
    assert [d["code"] for d in entry["diagnostics"]] == ["NXT004"]
    # A broken manifest is still a manifest, whatever keys it carries.
    manifest = tmp_path / "nexo-plugin.toml"
    manifest.write_text('schema_version = "1.0"\n', encoding="utf-8")
    result = nexo("plugin", "lint", "--format", "json", str(manifest))
    [entry] = json.loads(result.stdout)["files"]
    assert "NX010" in [d["code"] for d in entry["diagnostics"]]


def test_schema_command_prints_the_shipped_schema() -> None:
    result = nexo("plugin", "schema")
    assert result.code == 0
    assert result.stdout == (ROOT / "schemas" / "nexo-plugin.schema.json").read_text("utf-8")


def test_help_is_typer_help() -> None:
    result = nexo("plugin", "lint", "--help")
    assert result.code == 0
    for flag in (
        "--format",
        "--stdin",
        "--stdin-filename",
        "--strict",
        "--select",
        "--ignore",
        "--nexo-version",
        "--explain",
    ):
        assert flag in result.stdout


def test_typer_command_matches_the_fast_path() -> None:
    from nexo_pkg.cli.app import build_app

    runner = CliRunner()
    through_typer = runner.invoke(
        build_app()[0], ["plugin", "lint", "--format", "json", str(INVALID)]
    )
    assert through_typer.exit_code == 1
    fast = nexo("plugin", "lint", "--format", "json", str(INVALID))
    assert json.loads(through_typer.stdout) == json.loads(fast.stdout)
    assert runner.invoke(build_app()[0], ["plugin", "lint", "--explain", "nope"]).exit_code == 2


def test_the_commands_are_module_level_functions_register_attaches(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import typer

    from nexo_pkg.cli import lint

    holder = typer.Typer()
    lint.register(holder)
    attached = [(info.name, info.callback) for info in holder.registered_commands]
    assert attached == [
        ("lint", lint.lint_command),
        ("schema", lint.schema_command),
        ("rule", lint.rule_command),
    ]
    # A test calls a command as a function, without the app.
    lint.rule_command(code="NX113", every=False, json_output=False)
    assert capsys.readouterr().out.startswith("NX113")
    with pytest.raises(typer.Exit) as stopped:
        lint.rule_command(code="NX99999", every=False, json_output=True)
    assert stopped.value.exit_code == 2
    assert json.loads(capsys.readouterr().out)["kind"] == "usage"


def test_cold_lint_does_not_import_typer_or_jsonschema() -> None:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "nexo_pkg", "plugin", "lint", str(VALID)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    imported = {
        line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line
    }
    for heavy in ("typer", "click", "jsonschema", "rich", "httpx", "sigstore", "tomlkit"):
        assert heavy not in imported, heavy
    # Nor what a clean manifest never needs: the fixes of findings, the threads of a run.
    for unused in ("nexo_pkg.lint.fixes", "threading"):
        assert unused not in imported, unused


def run_with_tty_stdout(args: list[str], env: dict[str, str]) -> str:
    controller, terminal = pty.openpty()
    try:
        subprocess.run(
            [sys.executable, "-m", "nexo_pkg", *args],
            stdout=terminal,
            stderr=subprocess.DEVNULL,
            check=False,
            env=env,
        )
    finally:
        os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(controller)
    return b"".join(chunks).decode("utf-8", errors="replace")


def test_colour_on_a_tty_unless_no_color() -> None:
    env = {key: value for key, value in os.environ.items() if key != "NO_COLOR"}
    coloured = run_with_tty_stdout(["plugin", "lint", str(INVALID)], env)
    assert "\x1b[31m" in coloured
    plain = run_with_tty_stdout(["plugin", "lint", str(INVALID)], {**env, "NO_COLOR": "1"})
    assert "NX012" in plain
    assert "\x1b[" not in plain
    piped = nexo("plugin", "lint", str(INVALID), env=cli.clean_env(NO_COLOR=""))
    assert "NX012" in piped.stdout
    assert "\x1b[" not in piped.stdout


def _on_terminal_in(encoding: str, *paths: Path) -> tuple[int, str]:
    """``nexo plugin lint PATHS`` with a pseudo-terminal as stdout and stderr whose encoding
    is ``encoding`` (``PYTHONIOENCODING``, as a locale would set it): the exit code and
    everything written, read back in that encoding."""
    env = {**cli.clean_env(NO_COLOR="1"), "PYTHONIOENCODING": encoding}
    controller, terminal = pty.openpty()
    try:
        process = subprocess.run(
            [sys.executable, "-m", "nexo_pkg", "plugin", "lint", *map(str, paths)],
            stdin=subprocess.DEVNULL,
            stdout=terminal,
            stderr=terminal,
            check=False,
            env=env,
            timeout=60,
        )
    finally:
        os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(controller)
    return process.returncode, b"".join(chunks).decode(encoding).replace("\r\n", "\n")


def _non_ascii_manifests(tmp_path: Path) -> tuple[Path, Path]:
    """A manifest with an unknown non-ASCII key (NX011 under the key) and one whose syntax
    error lies after a non-ASCII character (NX001 after it)."""
    key = tmp_path / "key" / "plugin.toml"
    key.parent.mkdir()
    key.write_text(MINIMAL + '"caf\u00e9" = 1\n', encoding="utf-8")
    after = tmp_path / "after" / "plugin.toml"
    after.parent.mkdir()
    after.write_text('[plugin]\nid = "weather"\nkey = "\u00e9" x\n', encoding="utf-8")
    return key, after


def test_an_ascii_terminal_gets_the_report_with_escapes(tmp_path: Path) -> None:
    """A terminal whose encoding has no `é` (`PYTHONIOENCODING=ascii`, a C locale) shows it
    as `\\xe9`: the report is printed whole, exit 1, with no traceback and no `error:
    unexpected` line (stdout on a terminal is reconfigured to escape, not to fail)."""
    key, after = _non_ascii_manifests(tmp_path)
    code, output = _on_terminal_in("ascii", key, after)
    assert code == 1, output
    assert "Traceback" not in output
    assert "error: unexpected" not in output
    assert "NX011 unknown key `caf\\xe9` in table [plugin]" in output
    assert '| "caf\\xe9" = 1\n' in output
    assert "Found 2 errors and 0 warnings in 2 files." in output


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_carets_line_up_under_what_the_terminal_shows(tmp_path: Path, encoding: str) -> None:
    """On an ASCII terminal `é` is printed as `\\xe9`, four cells: the carets run under the
    whole escape and a caret after it moves along by four (they were placed as if `é` took
    one cell). A latin-1 terminal prints `é` itself, one cell."""
    key, after = _non_ascii_manifests(tmp_path)
    code, output = _on_terminal_in(encoding, key, after)
    assert code == 1, output
    shown_key = '"caf\\xe9"' if encoding == "ascii" else '"caf\u00e9"'
    shown_value = '"\\xe9"' if encoding == "ascii" else '"\u00e9"'
    lines = output.splitlines()
    carets: dict[str, tuple[int, int]] = {}
    for number, line in enumerate(lines):
        for code_name in ("NX011", "NX001"):
            if line.endswith(f" {code_name}") and "^" in line:
                source, run = lines[number - 1], line.removesuffix(f" {code_name}")
                start = run.index("^")
                carets[code_name] = (start - source.index(" | "), len(run) - start)
    # Columns counted from the ` | ` of the frame: the key starts 3 cells after it.
    assert carets["NX011"] == (3, len(shown_key))
    assert carets["NX001"] == (3 + len(f"key = {shown_value} "), 1)


def test_trust_policy_sarif_documents_its_rules(tmp_path: Path) -> None:
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text('schema_version = "1.0"\nbogus = 1\n', encoding="utf-8")
    result = nexo("plugin", "lint", "--format", "sarif", str(policy))
    assert result.code == 1
    [rule] = json.loads(result.stdout)["runs"][0]["tool"]["driver"]["rules"]
    assert rule["name"].startswith("policy-")
    assert "fullDescription" in rule


# --- manifest file names ----------------------------------------------------------------------


def test_a_directory_with_only_a_broken_plugin_toml_fails(tmp_path: Path) -> None:
    (tmp_path / "plugin.toml").write_text(MINIMAL.replace('id = "', 'id = "Bad'), "utf-8")
    result = nexo("plugin", "lint", str(tmp_path), "--format", "json")
    assert result.code == 1
    report = json.loads(result.stdout)
    assert report["summary"]["files"] == 1
    assert report["files"][0]["path"] == str(tmp_path / "plugin.toml")
    assert "NX100" in {d["code"] for d in report["files"][0]["diagnostics"]}


def test_both_names_in_one_directory_lints_both_and_names_the_shadowed_one(
    tmp_path: Path,
) -> None:
    (tmp_path / "nexo-plugin.toml").write_text(MINIMAL, "utf-8")
    (tmp_path / "plugin.toml").write_text(MINIMAL, "utf-8")
    result = nexo("plugin", "lint", str(tmp_path), "--format", "json")
    assert result.code == 0, result.stdout
    report = json.loads(result.stdout)
    by_name = {Path(entry["path"]).name: entry["diagnostics"] for entry in report["files"]}
    assert by_name["nexo-plugin.toml"] == []
    [shadowed] = by_name["plugin.toml"]
    assert (shadowed["code"], shadowed["severity"]) == ("NX006", "warning")
    assert "plugin.toml is shadowed by nexo-plugin.toml" in shadowed["message"]
    strict = nexo("plugin", "lint", str(tmp_path), "--strict")
    assert strict.code == 1
    assert "NX006" in strict.stdout
    # Naming the shadowed file explicitly still says so.
    named = nexo("plugin", "lint", str(tmp_path / "plugin.toml"), "--format", "json")
    assert [d["code"] for d in json.loads(named.stdout)["files"][0]["diagnostics"]] == ["NX006"]


def test_a_directory_without_a_manifest_warns_and_exits_0(tmp_path: Path) -> None:
    (tmp_path / "Cargo.toml").write_text("[package]\n", "utf-8")
    for output_format in ("text", "json"):
        result = nexo("plugin", "lint", str(tmp_path), "--format", output_format)
        assert result.code == 0
        assert "no manifest (plugin.toml or nexo-plugin.toml) found" in result.stderr
    report = json.loads(nexo("plugin", "lint", str(tmp_path), "--format", "json").stdout)
    assert report["summary"] == {"files": 0, "errors": 0, "warnings": 0}
