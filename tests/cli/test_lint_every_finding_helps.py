"""Every finding of ``nexo plugin lint`` carries a ``help`` line with the fix (SPEC §2 and
docs/lint.md: "a `help:` line"), the schema's own findings included: a value of the wrong
type (``NX012``), not one of the choices (``NX013``) or out of range (``NX014``), in a plugin
manifest, a microapp manifest, the daemon's YAML and a fleet's files alike."""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path

import pytest
from support import cli
from support.shared_fixtures import shared_fixture, skip_unless_present

ROOT = Path(__file__).resolve().parent.parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "manifests"
MINIMAL = (CORPUS / "valid" / "minimal.toml").read_text("utf-8")

nexo = partial(cli.nexo, in_process=True)


def _findings(*args: str | Path, cwd: Path | None = None) -> list[tuple[str, str, str, str]]:
    """(path, code, message, help) of every finding of ``lint --format json ARGS``."""
    result = nexo("plugin", "lint", "--format", "json", *args, cwd=cwd)
    assert result.code in {0, 1}, result.stderr
    return [
        (file["path"], found["code"], found["message"], found["help"])
        for file in json.loads(result.stdout)["files"]
        for found in file["diagnostics"]
    ]


def _without_help(findings: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str]]:
    return [
        (Path(path).name, code, message)
        for path, code, message, help_text in findings
        if not help_text.strip()
    ]


def test_every_finding_of_the_corpus_has_a_help_line() -> None:
    files = sorted(CORPUS.glob("*/*.toml"))
    assert len(files) > 60
    findings = _findings(*files)
    assert {code for _, code, _, _ in findings} >= {"NX012", "NX013", "NX014"}
    assert _without_help(findings) == []


@skip_unless_present("daemon-parity")
def test_every_finding_on_the_daemons_own_manifests_has_a_help_line() -> None:
    parity = shared_fixture("daemon-parity")
    files = sorted((parity / "cases").glob("*.toml")) + sorted(
        (parity / "real-manifests").glob("*.toml")
    )
    findings = _findings(*files)
    assert len(findings) > 100
    assert _without_help(findings) == []


@pytest.mark.parametrize(
    ("line", "code", "help_text"),
    [
        # A string written as a number, a boolean written as a string: the value rewritten.
        (
            '[plugin.entrypoint]\ncommand = "x"\nenv = { PORT = 8080 }\n',
            "NX012",
            'quote the value to make it a string: `"8080"`',
        ),
        (
            '[plugin.supervisor]\nrespawn = "true"\n',
            "NX012",
            "write the boolean without quotes: `true`",
        ),
        ('[plugin.supervisor]\nrespawn = "yes"\n', "NX012", "write a boolean here"),
        (
            '[plugin.capabilities.http_server]\nport = "8080"\n',
            "NX012",
            "write the integer without quotes: `8080`",
        ),
        # Not one of the choices, and nothing close to suggest: the choices.
        (
            '[plugin.config_schema]\nshape = "list"\nschema = "{}"\n',
            "NX013",
            'use one of "object", "array" (case matters)',
        ),
        (
            '[plugin.pairing]\nkind = "bluetooth"\n',
            "NX013",
            'use one of "qr", "form", "info", "custom" (case matters)',
        ),
        # Out of range: the range, as the schema states it.
        (
            "[plugin.capabilities.http_server]\nport = 70000\n",
            "NX014",
            "use a value from 0 to 65535",
        ),
        ("[plugin.supervisor]\nbackoff_ms = -1\n", "NX014", "use a value that is at least 0"),
    ],
    ids=[
        "int-for-string",
        "quoted-bool",
        "word-for-bool",
        "quoted-int",
        "enum",
        "enum-4",
        "port",
        "negative",
    ],
)
def test_a_value_the_schema_refuses_is_told_how_to_write_it(
    tmp_path: Path, line: str, code: str, help_text: str
) -> None:
    manifest = tmp_path / "nexo-plugin.toml"
    manifest.write_text(MINIMAL + "\n" + line, encoding="utf-8")
    findings = [(found, helps) for _, found, _, helps in _findings(manifest)]
    assert (code, help_text) in findings, findings
    text = nexo("plugin", "lint", manifest)
    assert text.code == 1
    assert f"= help: {help_text}\n" in text.stdout


def test_the_daemons_yaml_a_microapp_and_a_fleet_are_told_the_fix_too(tmp_path: Path) -> None:
    config = tmp_path / "config"
    microapp = config / "plugins" / "weather"
    microapp.mkdir(parents=True)
    (config / "extensions.yaml").write_text(
        "extensions:\n  enabled: 3\n  disabled: x\n", encoding="utf-8"
    )
    (microapp / "plugin.toml").write_text(
        '[plugin]\nid = "weather"\nversion = 3\nname = "W"\ndescription = "d"\n'
        'priority = "high"\n\n[transport]\nkind = "stdioo"\n\n[requires]\nbins = [1]\n',
        encoding="utf-8",
    )
    (tmp_path / "nexo-plugins.lock").write_text("version = 1\n", encoding="utf-8")
    findings = _findings(
        "--config", config, microapp / "plugin.toml", tmp_path / "nexo-plugins.lock", cwd=tmp_path
    )
    helps = {(Path(path).name, code, help_text) for path, code, _, help_text in findings}
    assert {
        ("extensions.yaml", "NX221", "write a boolean here"),
        ("extensions.yaml", "NX221", "write an array here"),
        ("plugin.toml", "NX012", "write a string here"),
        ("plugin.toml", "NX012", "write an integer (i32) here"),
        ("plugin.toml", "NX013", 'use one of "stdio", "nats", "http" (case matters)'),
        ("nexo-plugins.lock", "NX010", "add `lock_version`"),
    } <= helps, sorted(helps)
    assert _without_help(findings) == []


# A value the help rewrites: the line as written, the key, and whether a rewrite is offered.
_REWRITES = [
    ('[plugin.capabilities.http_server]\ntoken_env = "T"\nport = "8080"\n', "port", True),
    ('[plugin.capabilities.http_server]\ntoken_env = "T"\nport = 8080.0\n', "port", True),
    ('[plugin.supervisor]\nrespawn = "true"\n', "respawn", True),
    ('[plugin.entrypoint]\ncommand = "x"\nenv = { PORT = 8080 }\n', "PORT", True),
    # Rewritten, each would break the key's pattern or range: only the type is named.
    ('[plugin.capabilities.http_server]\ntoken_env = "T"\nport = "70000"\n', "port", False),
    ('[plugin.capabilities.http_server]\ntoken_env = "T"\nport = 70000.0\n', "port", False),
    ('[plugin.supervisor]\nbackoff_ms = "-1"\n', "backoff_ms", False),
    ('[plugin.supervisor]\nbackoff_ms = "99999999999999999999"\n', "backoff_ms", False),
]
_PLUGIN_KEYS = [('version = "0.1.0"', "version = 1"), ('id = "weather"', "id = 123")]


@pytest.mark.parametrize(
    ("manifest", "key", "offered"),
    [(MINIMAL + "\n" + line, key, offered) for line, key, offered in _REWRITES]
    + [(MINIMAL.replace(good, bad), bad.split(" ")[0], False) for good, bad in _PLUGIN_KEYS],
    ids=[
        "quoted-port",
        "float-port",
        "quoted-bool",
        "int-env",
        "quoted-port-out-of-range",
        "float-port-out-of-range",
        "quoted-negative-u64",
        "quoted-beyond-toml-integers",
        "int-version",
        "int-id",
    ],
)
def test_a_value_a_help_rewrites_is_one_lint_then_takes(
    tmp_path: Path, manifest: str, key: str, offered: bool
) -> None:
    """Each rewrite a help offers, applied, lints clean at that key: never a fix that lint
    (or TOML) then refuses; where none would be taken, the help names the type instead."""
    path = tmp_path / "nexo-plugin.toml"
    path.write_text(manifest, encoding="utf-8")
    result = nexo("plugin", "lint", "--format", "json", path)
    found = [
        item
        for file in json.loads(result.stdout)["files"]
        for item in file["diagnostics"]
        if item["key_path"].split(".")[-1] == key
    ]
    assert [item["code"] for item in found] == ["NX012"], found
    help_text = found[0]["help"]
    rewrite = re.search(r": `(.+)`$", help_text)
    assert (rewrite is not None) is offered, help_text
    if rewrite is None:
        assert re.fullmatch(
            r"(write an? \w+.* here|integers are written without a decimal point)", help_text
        )
        return
    # The value as written after `KEY = `, to the line's end or the inline table's ` }`.
    value = re.compile(rf"(?m)(\b{key} = )([^\n}}]+?)( }}|$)")
    path.write_text(value.sub(rf"\g<1>{rewrite[1]}\g<3>", manifest, count=1), encoding="utf-8")
    again = nexo("plugin", "lint", "--format", "json", path)
    assert again.code == 0, again.stdout
