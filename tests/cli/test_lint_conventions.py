"""What ruff users reach for in `lint`: config files, suppression comments, --exclude, --fix
(keeping comments), and `-` for standard input; each run through the real command."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from support.cli import CliResult, nexo

MANIFEST = """\
# the weather plugin
[plugin]
id = "weather"
version = "0.1.0"
name = "Weather"
description = "Weather tools"
min_nexo_version = ">=0.1.0"

[plugin.entrypoint]
command = "python3"  # launcher
env = { NEXO_DEBUG = "1" }

[plugin.extends]
tools = ["forecast", "weather_now"]  # keep this comment
"""


@pytest.fixture(autouse=True)
def _no_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plain reports: ``NO_COLOR`` set, ``FORCE_COLOR`` gone."""
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


# `nexo plugin lint ...` in this process: no run here needs a process of its own.
lint = partial(nexo, "plugin", "lint", in_process=True)


def codes(result: CliResult) -> list[tuple[str, int, str]]:
    document: dict[str, Any] = json.loads(result.stdout)
    return sorted(
        (Path(file["path"]).name, d["range"]["start"]["line"], d["code"])
        for file in document["files"]
        for d in file["diagnostics"]
    )


def project(tmp_path: Path, text: str = MANIFEST) -> Path:
    (tmp_path / "nexo-plugin.toml").write_text(text, encoding="utf-8")
    return tmp_path


def test_fix_repairs_namespace_and_env_and_keeps_comments(tmp_path: Path) -> None:
    root = project(tmp_path)
    before = lint("--format", "json", cwd=root)
    assert codes(before) == [("nexo-plugin.toml", 11, "NX106"), ("nexo-plugin.toml", 14, "NX113")]
    # Both fixes rename what the plugin's code uses too: unsafe, so `--fix` alone (as ruff's)
    # leaves the file as it is and says how to apply them.
    safe_only = lint("--fix", cwd=root)
    assert safe_only.code == 1
    assert "fixed" not in safe_only.stderr
    assert (root / "nexo-plugin.toml").read_text(encoding="utf-8") == MANIFEST
    assert safe_only.stdout.endswith(
        "Found 2 errors and 0 warnings in 1 file.\n"
        "No fixes available (2 hidden fixes can be enabled with the `--unsafe-fixes` option).\n"
    )
    assert "[*]" not in safe_only.stdout
    fixed = lint("--fix", "--unsafe-fixes", cwd=root)
    assert fixed.code == 0, fixed.stdout + fixed.stderr
    assert "fixed 2 findings" in fixed.stderr
    text = (root / "nexo-plugin.toml").read_text(encoding="utf-8")
    assert 'tools = ["weather_forecast", "weather_now"]  # keep this comment' in text
    assert 'env = { WEATHER_DEBUG = "1" }' in text
    assert text.startswith("# the weather plugin\n")
    assert 'command = "python3"  # launcher' in text
    assert text.count("\n") == MANIFEST.count("\n")
    # Nothing left to fix: a second run changes nothing.
    again = lint("--fix", "--unsafe-fixes", cwd=root)
    assert again.code == 0
    assert "fixed" not in again.stderr
    assert (root / "nexo-plugin.toml").read_text(encoding="utf-8") == text


def test_fix_writes_through_a_linked_manifest(tmp_path: Path) -> None:
    """As ruff: the fix goes into the file a link names; the link stays a link."""
    shared = tmp_path / "shared" / "weather.toml"
    shared.parent.mkdir()
    shared.write_text(MANIFEST, encoding="utf-8")
    root = tmp_path / "plugin"
    root.mkdir()
    link = root / "nexo-plugin.toml"
    link.symlink_to(Path("..", "shared", "weather.toml"))
    fixed = lint("--fix", "--unsafe-fixes", "nexo-plugin.toml", cwd=root)
    assert fixed.code == 0, fixed.stdout + fixed.stderr
    assert "fixed 2 findings in nexo-plugin.toml" in fixed.stderr
    assert link.is_symlink()
    assert link.readlink() == Path("..", "shared", "weather.toml")
    assert 'tools = ["weather_forecast", "weather_now"]' in shared.read_text(encoding="utf-8")
    assert sorted(path.name for path in shared.parent.iterdir()) == ["weather.toml"]
    assert sorted(path.name for path in root.iterdir()) == ["nexo-plugin.toml"]


def test_fix_on_standard_input_prints_the_fixed_source(tmp_path: Path) -> None:
    """As ``ruff check --fix -``: the fixed source on stdout, what is left on stderr."""
    unchanged = lint("--fix", "-", cwd=tmp_path, stdin=MANIFEST)
    assert (unchanged.code, unchanged.stdout) == (1, MANIFEST)
    assert "2 hidden fixes can be enabled with the `--unsafe-fixes` option" in unchanged.stderr
    result = lint("--fix", "--unsafe-fixes", "-", cwd=tmp_path, stdin=MANIFEST)
    assert result.code == 0, result.stderr
    assert 'tools = ["weather_forecast", "weather_now"]  # keep this comment' in result.stdout
    assert 'env = { WEATHER_DEBUG = "1" }' in result.stdout
    assert result.stdout.count("\n") == MANIFEST.count("\n")
    assert "All checks passed" in result.stderr
    assert list(tmp_path.iterdir()) == []
    # Nothing to fix: the source comes back unchanged; a finding left fails on stderr.
    broken = MANIFEST.replace('id = "weather"', 'id = "Weather"')
    again = lint("--fix", "-", cwd=tmp_path, stdin=broken)
    assert again.code == 1
    assert 'id = "Weather"' in again.stdout
    assert "NX100" in again.stderr
    assert "NX100" not in again.stdout


def test_every_fix_says_how_safe_it_is(tmp_path: Path) -> None:
    """As ruff: `[*]` marks what `--fix` would apply with the options given, the JSON report
    carries `fix.applicability` and the edits, SARIF the result's `fixes`."""
    root = project(tmp_path)
    text = lint(cwd=root).stdout
    assert "[*]" not in text
    assert (
        "= fix: Rename tool to `weather_forecast` (unsafe: the plugin's code must answer to "
        "the new name too; apply with `--fix --unsafe-fixes`)"
    ) in text
    marked = lint("--unsafe-fixes", cwd=root).stdout
    assert "nexo-plugin.toml:14:10: NX113 [*] tool `forecast`" in marked
    assert "nexo-plugin.toml:11:9: NX106 [*] key `NEXO_DEBUG`" in marked
    assert marked.endswith("[*] 2 fixable with the `--fix` option.\n")
    # --unsafe-fixes alone changes nothing: it is --fix that writes.
    assert (root / "nexo-plugin.toml").read_text(encoding="utf-8") == MANIFEST

    document = json.loads(lint("--format", "json", cwd=root).stdout)
    fixes = {d["code"]: d["fix"] for d in document["files"][0]["diagnostics"]}
    assert fixes["NX113"] == {
        "applicability": "unsafe",
        "message": "Rename tool to `weather_forecast`",
        "edits": [
            {
                "content": '"weather_forecast"',
                "range": {"start": {"line": 14, "column": 10}, "end": {"line": 14, "column": 20}},
            }
        ],
    }
    assert fixes["NX106"]["applicability"] == "unsafe"
    assert fixes["NX106"]["edits"][0]["content"] == "WEATHER_DEBUG"
    unfixable = lint("--format", "json", "-", cwd=tmp_path, stdin=MANIFEST + "naem = 1\n")
    other = json.loads(unfixable.stdout)
    assert [(d["code"], d["fix"]) for d in other["files"][0]["diagnostics"]][-1] == ("NX011", None)

    sarif = json.loads(lint("--format", "sarif", cwd=root).stdout)
    results = {result["ruleId"]: result for result in sarif["runs"][0]["results"]}
    [fix] = results["NX113"]["fixes"]
    assert fix["description"] == {"text": "Rename tool to `weather_forecast`"}
    assert fix["properties"] == {"applicability": "unsafe"}
    [change] = fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "nexo-plugin.toml"
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 14, "startColumn": 10, "endLine": 14, "endColumn": 20},
            "insertedContent": {"text": '"weather_forecast"'},
        }
    ]


def test_quiet_clean_lint_prints_nothing(tmp_path: Path) -> None:
    fixed = project(tmp_path, MANIFEST.replace("NEXO_DEBUG", "WEATHER_DEBUG"))
    clean = fixed.parent / "clean"
    clean.mkdir()
    text = (fixed / "nexo-plugin.toml").read_text(encoding="utf-8")
    (clean / "nexo-plugin.toml").write_text(
        text.replace('"forecast"', '"weather_forecast"'), encoding="utf-8"
    )
    quiet = lint("-q", cwd=clean)
    assert (quiet.code, quiet.stdout, quiet.stderr) == (0, "", "")
    assert "All checks passed" in lint(cwd=clean).stdout
    # With findings, -q keeps them and drops only the summary line (as ruff -q).
    noisy = lint("--quiet", cwd=fixed)
    assert noisy.code == 1
    assert "NX113" in noisy.stdout
    assert "Found" not in noisy.stdout


def test_blanket_ignore_comment_silences_its_line_only(tmp_path: Path) -> None:
    text = MANIFEST.replace(
        'tools = ["forecast", "weather_now"]  # keep this comment',
        'tools = ["forecast", "weather_now"]  # nexo: ignore',
    )
    root = project(tmp_path, text)
    # Line 14's NX113 is silenced; line 11's NX106 has no comment and stays.
    assert codes(lint("--format", "json", cwd=root)) == [("nexo-plugin.toml", 11, "NX106")]
    # `nexo: ignored` or `nexo: ignore-me` is not the directive.
    other = tmp_path / "other"
    other.mkdir()
    almost = MANIFEST.replace("# keep this comment", "# nexo: ignored")
    assert ("nexo-plugin.toml", 14, "NX113") in codes(
        lint("--format", "json", cwd=project(other, almost))
    )


def test_force_exclude_applies_exclude_to_named_files(tmp_path: Path) -> None:
    root = project(tmp_path)
    vendored = root / "vendor" / "nexo-plugin.toml"
    vendored.parent.mkdir()
    vendored.write_text(MANIFEST.replace('id = "weather"', 'id = "Weather"'), encoding="utf-8")
    (root / ".nexo.toml").write_text('[lint]\nexclude = ["vendor/"]\n', encoding="utf-8")
    # Named on the command line, an excluded file is linted (as ruff) ...
    named = lint("--format", "json", "vendor/nexo-plugin.toml", cwd=root)
    assert ("nexo-plugin.toml", 3, "NX100") in codes(named)
    # ... unless --force-exclude, which a pre-commit hook passes.
    forced = lint("--force-exclude", "vendor/nexo-plugin.toml", "nexo-plugin.toml", cwd=root)
    assert "vendor" not in forced.stdout
    assert "NX113" in forced.stdout
    assert "1 file" in forced.stdout
    # The same for standard input named by --stdin-filename.
    piped = lint(
        "--force-exclude", "--stdin-filename", "vendor/nexo-plugin.toml", "-",
        cwd=root, stdin=vendored.read_text(encoding="utf-8"),
    )  # fmt: skip
    assert piped.code == 0, piped.stdout


def test_ignore_comment_silences_exactly_that_code_on_that_line(tmp_path: Path) -> None:
    text = MANIFEST.replace(
        'tools = ["forecast", "weather_now"]  # keep this comment',
        'tools = ["forecast", "weather_now"]  # nexo: ignore[NX113]',
    ).replace('env = { NEXO_DEBUG = "1" }', 'env = { NEXO_DEBUG = "1" }  # nexo: ignore[NX113]')
    root = project(tmp_path, text)
    result = lint("--format", "json", cwd=root)
    # NX113 on line 14 is silenced; the comment on line 11 names another code, so NX106 stays.
    assert codes(result) == [("nexo-plugin.toml", 11, "NX106")]
    # A `#` inside a string is not a comment.
    inside = MANIFEST.replace('"forecast"', '"forecast # nexo: ignore[NX113]"')
    root2 = tmp_path / "inside"
    root2.mkdir()
    assert ("nexo-plugin.toml", 14, "NX113") in codes(
        lint("--format", "json", cwd=project(root2, inside))
    )


@pytest.mark.parametrize(
    ("closing", "silenced"),
    [
        ('"""  # nexo: ignore[NX103]', True),
        ('"""  # nexo: ignore', True),
        ('"""  # nexo: ignore[NX106]', False),  # another code
        ('""" # keep', False),
    ],
)
def test_ignore_comment_after_a_multi_line_string_covers_the_string(
    tmp_path: Path, closing: str, silenced: bool
) -> None:
    """As ruff reads `# noqa` after a multi-line string: the comment goes where the string
    ends, since a comment cannot stand on the line where it starts."""
    text = MANIFEST.replace('description = "Weather tools"', f'description = """\n   \n{closing}')
    found = codes(lint("--format", "json", cwd=project(tmp_path, text)))
    # NX103 (blank description) is reported where the string starts, line 6.
    assert (("nexo-plugin.toml", 6, "NX103") in found) is not silenced
    assert ("nexo-plugin.toml", 13, "NX106") in found  # other lines keep theirs


def test_config_in_dot_nexo_toml(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / ".nexo.toml").write_text('[lint]\nignore = ["NX106"]\n', encoding="utf-8")
    assert codes(lint("--format", "json", cwd=root)) == [("nexo-plugin.toml", 14, "NX113")]
    # A flag adds to the file's ignore list.
    assert codes(lint("--format", "json", "--ignore", "NX113", cwd=root)) == []


def test_config_in_pyproject_with_select_and_per_file_ignores(tmp_path: Path) -> None:
    root = project(tmp_path)
    other = root / "plugins" / "other"
    other.mkdir(parents=True)
    project(other)
    (root / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n\n[tool.nexo.lint]\nselect = ['NX1']\n"
        "[tool.nexo.lint.per-file-ignores]\n'plugins/**' = ['tool-namespace-violation']\n",
        encoding="utf-8",
    )
    found = codes(lint("--format", "json", cwd=root))
    assert found == [
        ("nexo-plugin.toml", 11, "NX106"),
        ("nexo-plugin.toml", 11, "NX106"),
        ("nexo-plugin.toml", 14, "NX113"),
    ]


def test_bad_config_is_a_configuration_error(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / ".nexo.toml").write_text('[lint]\nselekt = ["NX1"]\n', encoding="utf-8")
    result = lint(cwd=root)
    assert result.code == 2
    assert "unknown key selekt" in result.stderr
    (root / ".nexo.toml").write_text('[lint]\nignore = ["NX999999"]\n', encoding="utf-8")
    assert lint(cwd=root).code == 2


@pytest.mark.parametrize(
    "setting",
    [
        'select = ["NX999999"]',
        'ignore = ["no-such-rule"]',
        'per-file-ignores = { "*.toml" = ["NX999999"] }',
    ],
)
def test_an_unknown_rule_in_the_config_file_is_config_invalid(tmp_path: Path, setting: str) -> None:
    """A rule no code names, read from `.nexo.toml`, is the configuration's fault
    (`config_invalid`, docs/errors.md), as for every other bad setting there (ruff refuses
    its configuration for an unknown selector too); the same name on the command line stays
    a usage error. Nothing is linted and the file is left as it was."""
    root = project(tmp_path)
    config = root / ".nexo.toml"
    config.write_text(f"[lint]\n{setting}\n", encoding="utf-8")
    before = (root / "nexo-plugin.toml").read_bytes()
    result = lint("--format", "json", cwd=root)
    assert result.code == 2
    document = json.loads(result.stdout)
    assert document["ok"] is False
    assert document["kind"] == "config_invalid"
    assert str(config) in document["error"]
    assert "unknown rule code or name" in document["error"]
    assert (root / "nexo-plugin.toml").read_bytes() == before
    flag = lint("--format", "json", "--ignore", "NX999999", cwd=root)
    assert (flag.code, json.loads(flag.stdout)["kind"]) == (2, "usage")


@pytest.mark.parametrize(
    ("setting", "flags"),
    [
        ('select = ["NX999999"]', ("--select", "NX001")),
        ('per-file-ignores = { "elsewhere/**" = ["NX999999"] }', ()),
    ],
    ids=["select-replaced-by-the-flag", "per-file-pattern-matching-no-file"],
)
def test_an_unknown_rule_in_the_config_file_is_refused_whatever_the_run_uses_of_it(
    tmp_path: Path, setting: str, flags: tuple[str, ...]
) -> None:
    """The config file is refused as a whole, as ruff refuses its own: an unknown rule in
    `select` is `config_invalid` even when `--select` replaces that setting, and one in a
    `per-file-ignores` entry even when its pattern matches no file linted."""
    root = project(tmp_path)
    config = root / ".nexo.toml"
    config.write_text(f"[lint]\n{setting}\n", encoding="utf-8")
    before = (root / "nexo-plugin.toml").read_bytes()
    result = lint("--format", "json", *flags, cwd=root)
    assert result.code == 2, result.stdout
    document = json.loads(result.stdout)
    assert (document["ok"], document["kind"]) == (False, "config_invalid")
    assert f"{config}: " in document["error"]
    assert "unknown rule code or name NX999999" in document["error"]
    assert (root / "nexo-plugin.toml").read_bytes() == before


def test_exclude_skips_directories_in_the_search(tmp_path: Path) -> None:
    root = project(tmp_path)
    vendored = root / "vendor" / "copy"
    vendored.mkdir(parents=True)
    project(vendored)
    both = json.loads(lint("--format", "json", cwd=root).stdout)
    assert len(both["files"]) == 2
    one = json.loads(lint("--format", "json", "--exclude", "vendor", cwd=root).stdout)
    assert [Path(f["path"]).as_posix() for f in one["files"]] == ["nexo-plugin.toml"]
    (root / ".nexo.toml").write_text('[lint]\nexclude = ["vendor/"]\n', encoding="utf-8")
    assert len(json.loads(lint("--format", "json", cwd=root).stdout)["files"]) == 1
    # A file named on the command line is linted even when excluded.
    named = lint("--format", "json", "vendor/copy/nexo-plugin.toml", cwd=root)
    assert len(json.loads(named.stdout)["files"]) == 1


def test_a_directory_named_on_the_command_line_is_searched_even_when_excluded(
    tmp_path: Path,
) -> None:
    """As ruff: `exclude` looks only below a directory PATH (`ruff check vendor` checks
    vendor/ when `vendor` is excluded), and --force-exclude applies it to the PATH too."""
    root = project(tmp_path)
    for below in ("vendor/copy", "examples/old/x"):
        (root / below).mkdir(parents=True)
        project(root / below)
    (root / ".nexo.toml").write_text(
        '[lint]\nexclude = ["vendor", "examples/old"]\n', encoding="utf-8"
    )

    def linted(*args: str) -> list[str]:
        result = lint("--format", "json", *args, cwd=root)
        return sorted(Path(f["path"]).as_posix() for f in json.loads(result.stdout)["files"])

    assert linted() == ["nexo-plugin.toml"]
    assert linted("vendor") == ["vendor/copy/nexo-plugin.toml"]
    assert linted("vendor/copy") == ["vendor/copy/nexo-plugin.toml"]
    assert linted("examples/old") == ["examples/old/x/nexo-plugin.toml"]
    assert linted("--exclude", str(root / "vendor"), "vendor") == ["vendor/copy/nexo-plugin.toml"]
    # Below the PATH, exclude still applies; with --force-exclude, to the PATH itself too.
    assert linted("--exclude", "copy", "vendor") == []
    assert linted("--force-exclude", "vendor") == []
    assert linted("--force-exclude", "examples/old/x") == []


def test_a_link_below_a_named_directory_into_an_excluded_one_is_still_excluded(
    tmp_path: Path,
) -> None:
    """Only the directories between the project and the directory PATH are spared: a
    manifest found under `examples` that is a link into the excluded `vendor` is matched by
    where it lies, as `lint .` matches it (and as `lint` did before PATH was spared)."""
    root = project(tmp_path)
    (root / "vendor" / "copy").mkdir(parents=True)
    project(root / "vendor" / "copy")
    (root / "examples" / "m").mkdir(parents=True)
    (root / "examples" / "m" / "nexo-plugin.toml").symlink_to(
        root / "vendor" / "copy" / "nexo-plugin.toml"
    )
    (root / "examples" / "own").mkdir()
    project(root / "examples" / "own")
    (root / ".nexo.toml").write_text('[lint]\nexclude = ["vendor"]\n', encoding="utf-8")

    def linted(*args: str) -> list[str]:
        result = lint("--format", "json", *args, cwd=root)
        return sorted(Path(f["path"]).as_posix() for f in json.loads(result.stdout)["files"])

    assert linted("examples") == ["examples/own/nexo-plugin.toml"]
    assert linted("--exclude", str(root / "vendor"), "examples") == [
        "examples/own/nexo-plugin.toml"
    ]
    assert "examples/m/nexo-plugin.toml" not in linted(".")
    assert linted("vendor") == ["vendor/copy/nexo-plugin.toml"]


def _linted(root: Path, *args: str) -> list[str]:
    document = json.loads(lint("--format", "json", *args, ".", cwd=root).stdout)
    return sorted(Path(f["path"]).as_posix() for f in document["files"])


def test_exclude_patterns_read_as_ruff_reads_them(tmp_path: Path) -> None:
    """A pattern with a `/` skips the directory it names and all below it, `**/` may stand
    for no directory at all, and an absolute `--exclude` names a directory too."""
    root = tmp_path / "tree"
    for directory in ("examples/old/x", "examples/new", "legacy", "vendor/copy"):
        (root / directory).mkdir(parents=True)
        project(root / directory)
    everything = [
        "examples/new/nexo-plugin.toml",
        "examples/old/x/nexo-plugin.toml",
        "legacy/nexo-plugin.toml",
        "vendor/copy/nexo-plugin.toml",
    ]
    assert _linted(root) == everything
    # The example of docs/cli.md, "Configuration files".
    config = root / "pyproject.toml"
    config.write_text('[tool.nexo.lint]\nexclude = ["vendor/", "examples/old"]\n')
    assert _linted(root) == ["examples/new/nexo-plugin.toml", "legacy/nexo-plugin.toml"]
    config.write_text('[tool.nexo.lint]\nexclude = ["**/old", "**/legacy/*"]\n')
    assert _linted(root) == ["examples/new/nexo-plugin.toml", "vendor/copy/nexo-plugin.toml"]
    config.unlink()
    absolute = str((root / "examples").resolve())
    assert _linted(root, "--exclude", absolute, "--exclude", "**/vendor") == [
        "legacy/nexo-plugin.toml"
    ]
    # As a shell completes a directory: `./` and the trailing `/` name no other directory.
    assert _linted(root, "--exclude", "./legacy/", "--exclude", "examples/../vendor") == [
        "examples/new/nexo-plugin.toml",
        "examples/old/x/nexo-plugin.toml",
    ]
    # per-file-ignores: `**/legacy/*` names legacy/ at the config's own directory too.
    config.write_text('[tool.nexo.lint.per-file-ignores]\n"**/legacy/*" = ["NX113"]\n')
    document = json.loads(lint("--format", "json", "legacy", cwd=root).stdout)
    [entry] = document["files"]
    assert sorted(d["code"] for d in entry["diagnostics"]) == ["NX106"]


def test_dash_reads_standard_input(tmp_path: Path) -> None:
    result = lint("--format", "json", "-", cwd=tmp_path, stdin=MANIFEST)
    assert result.code == 1
    document = json.loads(result.stdout)
    assert document["files"][0]["path"] == "<stdin>"
    assert len(document["files"][0]["diagnostics"]) == 2


def test_each_file_takes_the_nearest_config_above_it(tmp_path: Path) -> None:
    # As in ruff: the closest config file wins for the files below it, parents are not merged.
    root = project(tmp_path)
    (root / ".nexo.toml").write_text('[lint]\nignore = ["NX106"]\n', encoding="utf-8")
    nested = root / "plugins" / "other"
    nested.mkdir(parents=True)
    project(nested)
    (root / "plugins" / "pyproject.toml").write_text(
        "[tool.nexo.lint]\nignore = ['NX113']\n", encoding="utf-8"
    )
    expected = [("nexo-plugin.toml", 11, "NX106"), ("nexo-plugin.toml", 14, "NX113")]
    from_root = lint("--format", "json", cwd=root)
    assert codes(from_root) == sorted(expected)
    paths = {
        Path(file["path"]).as_posix(): [d["code"] for d in file["diagnostics"]]
        for file in json.loads(from_root.stdout)["files"]
    }
    assert paths == {"nexo-plugin.toml": ["NX113"], "plugins/other/nexo-plugin.toml": ["NX106"]}
    # The same verdicts whatever the working directory: from inside the nested project,
    # and from a directory with no config at all, naming both files.
    assert codes(lint("--format", "json", cwd=nested)) == [("nexo-plugin.toml", 11, "NX106")]
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    elsewhere.mkdir()
    named = lint(
        "--format",
        "json",
        str(root / "nexo-plugin.toml"),
        str(nested / "nexo-plugin.toml"),
        cwd=elsewhere,
    )
    assert codes(named) == sorted(expected)


def test_nested_config_paths_are_relative_to_its_directory(tmp_path: Path) -> None:
    root = project(tmp_path)
    group = root / "plugins"
    for name in ("keep", "legacy"):
        (group / name).mkdir(parents=True)
        project(group / name)
    (group / ".nexo.toml").write_text(
        '[lint]\nexclude = ["keep"]\n[lint.per-file-ignores]\n"legacy/*" = ["NX1"]\n',
        encoding="utf-8",
    )
    document = json.loads(lint("--format", "json", cwd=root).stdout)
    found = {Path(file["path"]).as_posix(): len(file["diagnostics"]) for file in document["files"]}
    assert found == {"nexo-plugin.toml": 2, "plugins/legacy/nexo-plugin.toml": 0}


def test_stdin_takes_the_config_of_its_file_name(tmp_path: Path) -> None:
    nested = tmp_path / "plugins" / "weather"
    nested.mkdir(parents=True)
    (nested / ".nexo.toml").write_text('[lint]\nignore = ["NX106"]\n', encoding="utf-8")
    named = "plugins/weather/nexo-plugin.toml"
    result = lint(
        "--format", "json", "--stdin", "--stdin-filename", named, cwd=tmp_path, stdin=MANIFEST
    )
    assert [d["code"] for d in json.loads(result.stdout)["files"][0]["diagnostics"]] == ["NX113"]
    # Without a file name, the config found from the working directory applies.
    plain = lint("--format", "json", "-", cwd=tmp_path, stdin=MANIFEST)
    assert sorted(d["code"] for d in json.loads(plain.stdout)["files"][0]["diagnostics"]) == [
        "NX106",
        "NX113",
    ]


def test_broken_nested_config_is_a_configuration_error(tmp_path: Path) -> None:
    root = project(tmp_path)
    nested = root / "plugins" / "other"
    nested.mkdir(parents=True)
    project(nested)
    (nested / ".nexo.toml").write_text('[lint]\nignore = ["NX999999"]\n', encoding="utf-8")
    result = lint("--format", "json", cwd=root)
    assert result.code == 2
    document = json.loads(result.stdout)  # --format json: one document, a failure included
    assert document["ok"] is False
    assert "NX999999" in document["error"]
    assert "NX999999" in result.stderr
    assert "plugins/other/.nexo.toml" in result.stderr


def test_a_pyproject_without_the_lint_table_is_not_a_config_file(tmp_path: Path) -> None:
    # As for ruff: the search goes on past a pyproject.toml that has no settings for it.
    root = project(tmp_path)
    (root / ".nexo.toml").write_text('[lint]\nignore = ["NX106"]\n', encoding="utf-8")
    nested = root / "plugins" / "other"
    nested.mkdir(parents=True)
    project(nested)
    (nested / "pyproject.toml").write_text(
        "[project]\nname = 'other'\n\n[tool.nexo.other]\nkey = 1\n", encoding="utf-8"
    )
    found = codes(lint("--format", "json", cwd=root))
    assert found == [("nexo-plugin.toml", 14, "NX113"), ("nexo-plugin.toml", 14, "NX113")]


def test_settings_follow_each_file_through_links_and_shared_directories(tmp_path: Path) -> None:
    """Settings are looked up once per directory: several manifests of one directory each
    get their own per-file-ignores, a linked manifest takes the settings of where it points
    (as before), and a linked directory those of its target."""
    root = tmp_path / "work"
    quiet = root / "quiet"
    loud = root / "loud"
    for directory in (quiet, loud):
        directory.mkdir(parents=True)
    (quiet / ".nexo.toml").write_text('[lint]\nignore = ["NX106"]\n', encoding="utf-8")
    (root / ".nexo.toml").write_text(
        '[lint.per-file-ignores]\n"loud/b/*" = ["NX113"]\n', encoding="utf-8"
    )
    for name in ("a", "b"):
        (loud / name).mkdir()
        project(loud / name)
    project(quiet)
    (loud / "c").mkdir()
    (loud / "c" / "nexo-plugin.toml").symlink_to(quiet / "nexo-plugin.toml")
    (root / "linked").symlink_to(quiet, target_is_directory=True)
    document = json.loads(lint("--format", "json", cwd=root).stdout)
    found = {
        Path(file["path"]).as_posix(): sorted(d["code"] for d in file["diagnostics"])
        for file in document["files"]
    }
    assert found == {
        "loud/a/nexo-plugin.toml": ["NX106", "NX113"],
        "loud/b/nexo-plugin.toml": ["NX106"],
        "loud/c/nexo-plugin.toml": ["NX113"],  # quiet's own file, met here first
    }
    linked = json.loads(lint("--format", "json", "linked", cwd=root).stdout)
    assert [sorted(d["code"] for d in f["diagnostics"]) for f in linked["files"]] == [["NX113"]]


@pytest.mark.parametrize("given", ["directory", "files"])
def test_settings_are_looked_up_once_per_directory_not_per_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    """``lint DIR`` (and a list of files) of many manifests in few directories: each
    directory is searched for a config file at most once and each config file read once,
    whatever the number of manifests there; every file still gets its directory's settings."""
    from nexo_pkg.lint import config

    searched: list[Path] = []
    read: list[Path | None] = []
    search, load = config._config_in, config.load_config

    def counted_search(directory: Path) -> Path | None:
        searched.append(directory)
        return search(directory)

    def counted_load(path: Path | None) -> config.LintConfig:
        read.append(path)
        return load(path)

    monkeypatch.setattr(config, "_config_in", counted_search)
    monkeypatch.setattr(config, "load_config", counted_load)
    root = tmp_path / "work"
    (root / "quiet").mkdir(parents=True)
    (root / "quiet" / ".nexo.toml").write_text('[lint]\nignore = ["NX106"]\n', encoding="utf-8")
    files = []
    for group in ("quiet", "loud"):
        for number in range(4):
            directory = root / group / f"p{number}"
            directory.mkdir(parents=True)
            for name in ("nexo-plugin.toml", "plugin.toml"):
                (directory / name).write_text(MANIFEST, encoding="utf-8")
                files.append(directory.relative_to(root) / name)
    arguments = ["."] if given == "directory" else [str(file) for file in files]
    result = lint("--format", "json", "--ignore", "NX006", *arguments, cwd=root)
    document = json.loads(result.stdout)
    found = {
        Path(file["path"]).as_posix(): sorted(d["code"] for d in file["diagnostics"])
        for file in document["files"]
    }
    assert found == {
        file.as_posix(): ["NX113"] if file.parts[0] == "quiet" else ["NX106", "NX113"]
        for file in files
    }
    assert sorted(searched) == sorted(set(searched)), searched
    assert len(searched) <= len({file.parent for file in files}) + len(root.parents) + 3
    assert sorted(read, key=str) == [root / "quiet" / ".nexo.toml"]


def test_config_discovery_as_docs_cli_states_it(tmp_path: Path) -> None:
    """docs/cli.md "Configuration files", through the real console script: in one directory
    `.nexo.toml` wins over a `pyproject.toml` with `[tool.nexo.lint]` (as ruff's `.ruff.toml`
    over `pyproject.toml`); a manifest with no config file above it takes the one found from
    the working directory upward; standard input without a file name takes that one too."""
    env = {"NEXO_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    work = tmp_path / "work"
    work.mkdir()
    # Each file silences another rule, so the codes left say which one applied.
    (work / ".nexo.toml").write_text('[lint]\nignore = ["NX113"]\n', encoding="utf-8")
    (work / "pyproject.toml").write_text("[tool.nexo.lint]\nignore = ['NX106']\n", encoding="utf-8")
    project(work)
    outside = tmp_path / "outside"
    outside.mkdir()
    project(outside)

    def left(result: CliResult) -> list[str]:
        assert result.code in (0, 1), result.stderr
        return [d["code"] for f in json.loads(result.stdout)["files"] for d in f["diagnostics"]]

    beside = nexo("plugin", "lint", "--format", "json", "nexo-plugin.toml", cwd=work, env=env)
    assert left(beside) == ["NX106"]
    named = nexo("plugin", "lint", "--format", "json", outside, cwd=work, env=env)
    assert left(named) == ["NX106"]
    piped = nexo("plugin", "lint", "--format", "json", "-", cwd=work, env=env, stdin=MANIFEST)
    assert left(piped) == ["NX106"]
    # Without `.nexo.toml` the pyproject table is the one that applies.
    (work / ".nexo.toml").unlink()
    assert left(nexo("plugin", "lint", "--format", "json", cwd=work, env=env)) == ["NX113"]
    # From a directory with no config anywhere above it, the outside manifest gets both.
    alone = nexo("plugin", "lint", "--format", "json", ".", cwd=outside, env=env)
    assert sorted(left(alone)) == ["NX106", "NX113"]


def test_quiet_keeps_the_machine_report_of_a_clean_lint(tmp_path: Path) -> None:
    """`-q` drops the summary line, never the report a program reads: as `ruff check -q
    --output-format json` prints `[]`, a clean `lint -q` in JSON or SARIF prints its whole
    document (a CI step piping it gets something to parse); text and GitHub print nothing."""
    clean = project(
        tmp_path,
        MANIFEST.replace("NEXO_DEBUG", "WEATHER_DEBUG").replace('"forecast"', '"weather_forecast"'),
    )
    env = {"NEXO_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    for flags in (["--format", "json"], ["--json"]):
        result = nexo("plugin", "lint", "-q", *flags, cwd=clean, env=env)
        assert (result.code, result.stderr) == (0, ""), result.stderr
        document = json.loads(result.stdout)
        assert document["summary"] == {"files": 1, "errors": 0, "warnings": 0}
        assert [f["diagnostics"] for f in document["files"]] == [[]]
    sarif = nexo("plugin", "lint", "--quiet", "--format", "sarif", cwd=clean, env=env)
    assert (sarif.code, sarif.stderr) == (0, ""), sarif.stderr
    [run] = json.loads(sarif.stdout)["runs"]
    assert run["results"] == []
    for quiet in (["--format", "github"], ["--format", "text"]):
        result = nexo("plugin", "lint", "-q", *quiet, cwd=clean, env=env)
        assert (result.code, result.stdout, result.stderr) == (0, "", "")
