"""An editor's buffer, piped to ``lint --stdin --stdin-filename`` or opened in the language
server, is linted as ``nexo plugin lint`` lints the file: a ``plugin.toml`` beside a
``nexo-plugin.toml`` is ignored by the daemon and warned about (``NX006``), and standard input
over the size cap is reported without a made-up size."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

from support import cli

from .client import LspSession
from .conftest import SharedServer
from .test_server import GOOD

nexo = partial(cli.nexo, in_process=True)

SHADOWED = '[plugin]\nid = "demo"\nversion = "0.1.0"\n'
USED = GOOD  # a clean manifest


def _codes(report: str) -> list[str]:
    return [item["code"] for item in json.loads(report)["files"][0]["diagnostics"]]


def test_stdin_named_after_a_shadowed_manifest_warns_as_the_file_does(tmp_path: Path) -> None:
    (tmp_path / "nexo-plugin.toml").write_text(USED, "utf-8")
    (tmp_path / "plugin.toml").write_text(SHADOWED, "utf-8")
    args = ("plugin", "lint", "--format", "json")
    from_file = nexo(*args, "plugin.toml", cwd=tmp_path)
    from_stdin = nexo(
        *args, "--stdin", "--stdin-filename", "plugin.toml", cwd=tmp_path, stdin=SHADOWED.encode()
    )
    assert "NX006" in _codes(from_file.stdout)
    assert from_stdin.stdout == from_file.stdout
    assert from_stdin.code == from_file.code == 1
    # Without the manifest that shadows it, or unnamed, the buffer gets no such warning.
    unnamed = nexo(*args, "--stdin", cwd=tmp_path, stdin=SHADOWED.encode())
    assert "NX006" not in _codes(unnamed.stdout)
    (tmp_path / "nexo-plugin.toml").unlink()
    alone = nexo(
        *args, "--stdin", "--stdin-filename", "plugin.toml", cwd=tmp_path, stdin=SHADOWED.encode()
    )
    assert "NX006" not in _codes(alone.stdout)
    assert alone.code == 1


def test_language_server_warns_about_a_shadowed_manifest(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    (tmp_path / "nexo-plugin.toml").write_text(USED, "utf-8")
    shadowed = tmp_path / "plugin.toml"
    shadowed.write_text(SHADOWED, "utf-8")
    expected = json.loads(nexo("plugin", "lint", "--format", "json", str(shadowed)).stdout)
    warning = next(item for item in expected["files"][0]["diagnostics"] if item["code"] == "NX006")

    async def scenario(session: LspSession) -> None:
        uri = session.open(shadowed, SHADOWED)
        published = await session.diagnostics(uri, version=1)
        found = [item for item in published.diagnostics if item.code == "NX006"]
        assert [item.message for item in found] == [warning["message"]]
        assert found[0].range.start.line == found[0].range.start.character == 0
        assert len(published.diagnostics) == len(expected["files"][0]["diagnostics"])
        # The manifest the daemon does read gets no such warning.
        used = session.open(tmp_path / "nexo-plugin.toml", USED)
        assert [item.code for item in (await session.diagnostics(used)).diagnostics] == []

    shared_server.run(scenario)


def test_stdin_over_the_cap_is_not_given_the_size_read(tmp_path: Path) -> None:
    """Standard input is read one byte past the 4 MiB cap: the finding does not pass that
    count off as the size of what was piped, here 5,000,000 bytes."""
    piped = b"a" * 5_000_000
    report = nexo("plugin", "lint", "--format", "json", "--stdin", cwd=tmp_path, stdin=piped)
    [finding] = json.loads(report.stdout)["files"][0]["diagnostics"]
    assert finding["code"] == "NX004"
    assert "4,194,305" not in finding["message"]
    assert finding["message"].startswith("file is larger than 4,194,304 bytes")
    assert report.code == 1


def test_stdin_fix_says_what_it_fixed_as_for_a_file(tmp_path: Path) -> None:
    """`--fix` on standard input prints the fixed source on stdout and, on stderr, the same
    note as for a file: how many findings it fixed."""
    source = GOOD + '\n[plugin.extends]\ntools = ["forecast"]\n'
    manifest = tmp_path / "nexo-plugin.toml"
    manifest.write_text(source, "utf-8")
    fix = ("plugin", "lint", "--fix", "--unsafe-fixes")
    from_file = nexo(*fix, "nexo-plugin.toml", cwd=tmp_path)
    from_stdin = nexo(
        *fix, "--stdin", "--stdin-filename", "nexo-plugin.toml", cwd=tmp_path, stdin=source.encode()
    )
    assert "fixed 1 finding in nexo-plugin.toml" in from_file.stderr
    assert "fixed 1 finding in nexo-plugin.toml" in from_stdin.stderr
    assert from_stdin.stdout == manifest.read_text("utf-8")
    assert '"demo_forecast"' in from_stdin.stdout
    assert from_stdin.code == from_file.code == 0
    quiet = nexo(*fix, "-q", "--stdin", cwd=tmp_path, stdin=source.encode())
    assert quiet.stderr == ""
    assert quiet.stdout == from_stdin.stdout


FLEET_FILES = {
    "nexo-plugins.toml": (
        '[plugins.slack]\nsource = "lordmacu/nexo-plugin-slack"\nversion = "^0.3"\nbogus = 1\n',
        "fleet-wanted-set",
    ),
    "nexo-plugins.lock": ('lock_version = "one"\n', "fleet-lock"),
}


def test_fleet_files_are_linted_against_their_schemas_by_the_command_and_the_server(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    """`nexo plugin lint nexo-plugins.toml` checked the wanted set as a plugin manifest
    (`missing required table [plugin]`) while the language server checked it against the
    fleet schema; both now check a fleet's files against their schemas, with equal
    findings, from a file or from standard input."""
    reports = {}
    for name, (text, parser) in FLEET_FILES.items():
        (tmp_path / name).write_text(text, "utf-8")
        args = ("plugin", "lint", "--format", "json")
        from_file = nexo(*args, name, cwd=tmp_path)
        from_stdin = nexo(
            *args, "--stdin", "--stdin-filename", name, cwd=tmp_path, stdin=text.encode()
        )
        assert from_stdin.stdout == from_file.stdout
        assert from_file.code == 1
        [report] = json.loads(from_file.stdout)["files"]
        assert report["parser"] == parser
        assert "NX010" not in [item["code"] for item in report["diagnostics"]]
        reports[name] = report["diagnostics"]
    assert [item["code"] for item in reports["nexo-plugins.toml"]] == ["NX011"]
    assert [item["code"] for item in reports["nexo-plugins.lock"]] == ["NX012", "NX013"]

    async def scenario(session: LspSession) -> None:
        for name, (text, _) in FLEET_FILES.items():
            uri = session.open(tmp_path / name, text)
            published = await session.diagnostics(uri, version=1)
            found = [
                (item.code, item.message, item.range.start.line + 1,
                 item.range.start.character + 1, item.range.end.line + 1,
                 item.range.end.character + 1)
                for item in published.diagnostics
            ]  # fmt: skip
            expected = [
                (item["code"], item["message"], item["range"]["start"]["line"],
                 item["range"]["start"]["column"], item["range"]["end"]["line"],
                 item["range"]["end"]["column"])
                for item in reports[name]
            ]  # fmt: skip
            assert found == expected

    shared_server.run(scenario)


def test_a_document_the_lint_config_excludes_gets_no_diagnostics(
    shared_server: SharedServer, tmp_path: Path
) -> None:
    """An editor names every file it opens, as pre-commit does: the server applies the
    config's `exclude` as `lint --force-exclude` does (and ruff's server), so a vendored
    manifest the project skips shows no findings; it used to show every one of them."""
    (tmp_path / ".nexo.toml").write_text('[lint]\nexclude = ["vendor"]\n', "utf-8")
    vendored = tmp_path / "vendor" / "x" / "nexo-plugin.toml"
    vendored.parent.mkdir(parents=True)
    vendored.write_text(SHADOWED, "utf-8")
    kept = tmp_path / "nexo-plugin.toml"
    kept.write_text(SHADOWED, "utf-8")
    args = ("plugin", "lint", "--format", "json", "--force-exclude", "--stdin")
    for path, expected in ((vendored, []), (kept, ["NX010", "NX010", "NX010"])):
        report = nexo(*args, "--stdin-filename", str(path), cwd=tmp_path, stdin=SHADOWED.encode())
        files = json.loads(report.stdout)["files"]
        assert [item["code"] for file in files for item in file["diagnostics"]] == expected

    async def scenario(session: LspSession) -> None:
        for path, expected in ((vendored, []), (kept, ["NX010", "NX010", "NX010"])):
            uri = session.open(path, SHADOWED)
            published = await session.diagnostics(uri, version=1)
            assert [item.code for item in published.diagnostics] == expected

    shared_server.run(scenario)
