"""`nexo plugin lint` on microapp manifests, through the real CLI.

An extension-shaped ``plugin.toml`` (root ``[transport]``/``[capabilities]``) is checked with the
rules of the daemon's extension manifest parser, ``crates/extensions/src/manifest.rs`` at
eec3f33: serde ``deny_unknown_fields`` on every struct (``manifest.rs:109,199,206,252,272,290,
306``), then ``validate()`` (``manifest.rs:415-591``): id ``^[a-z][a-z0-9_-]*$`` of at most 64
bytes (``49,98,456-467``), reserved ids (``55-64``), SemVer ``version``/``min_agent_version``
(``469-513``), description of at most 512 characters (``515-522``), at least one capability
(``524-531``), capability names ``^[a-z][a-z0-9_]*$`` without duplicates (``541-561``), the
transport's command, prefix or URL (``563-591``), MCP servers (``427-454``). Each refusal is an
error at the offending line; what the daemon accepts but handles otherwise than the author
likely expects is a warning. The companion ``nexo-plugin.toml`` is parsed only
(``crates/setup/src/admin_capability_collect.rs:38-65``); its id keys the admin capabilities
(``:50-53``) while the router is looked up by the ``plugin.toml`` id
(``admin_bootstrap.rs:723-734``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo
from support.lint_cli import run_lint_json

GOOD = """\
[plugin]
id = "weather_app"
version = "0.1.0"
name = "Weather"
description = "Forecasts."

[capabilities]
tools = ["get_weather"]
hooks = ["before_message"]

[transport]
kind = "stdio"
command = "python3"
args = ["main.py"]

[meta]
author = "Ana"
license = "MIT"
"""

COMPANION = """\
[plugin]
id = "weather_app"
version = "0.1.0"
name = "Weather"
description = "Forecasts."
min_nexo_version = ">=0.1.0"

[plugin.capabilities.admin]
required = ["agents_crud"]
"""

Finding = tuple[str, int, str]


def lint_files(
    tmp_path: Path, files: dict[str, str], *args: str, targets: list[str] | None = None
) -> tuple[int, dict[str, Any]]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    paths = [tmp_path / name for name in (targets if targets is not None else list(files))]
    return run_lint_json(paths, *args, cwd=tmp_path)


def findings(report: dict[str, Any], name: str = "plugin.toml") -> list[Finding]:
    [entry] = [item for item in report["files"] if Path(item["path"]).name == name]
    return [
        (item["code"], item["range"]["start"]["line"], item["severity"])
        for item in entry["diagnostics"]
    ]


def parser_of(report: dict[str, Any], name: str = "plugin.toml") -> str:
    [entry] = [item for item in report["files"] if Path(item["path"]).name == name]
    parser: str = entry["parser"]
    return parser


def test_a_daemon_shaped_microapp_lints_clean(tmp_path: Path) -> None:
    code, report = lint_files(tmp_path, {"plugin.toml": GOOD})
    assert code == 0
    assert findings(report) == []
    assert parser_of(report) == "extension-manifest"


def test_the_text_report_names_the_parser(tmp_path: Path) -> None:
    (tmp_path / "plugin.toml").write_text(GOOD, encoding="utf-8")
    completed = nexo("plugin", "lint", "plugin.toml", cwd=tmp_path, in_process=True)
    assert completed.code == 0, completed.stderr
    assert (
        "plugin.toml: microapp manifest, checked with the rules of the daemon's extension "
        "manifest parser" in completed.stdout
    )


def _replace(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new)


# (case, manifest text, expected findings in file order)
REFUSED: list[tuple[str, str, list[Finding]]] = [
    ("unknown root table", GOOD + "[extra]\nx = 1\n", [("NX011", 19, "error")]),
    (
        "plugin.min_nexo_version is a plugin-manifest key",
        _replace('name = "Weather"', 'min_nexo_version = ">=0.1.0"'),
        [("NX011", 4, "error")],
    ),
    (
        "unknown key in [meta]",
        GOOD + 'homepage = "https://example.com"\n',
        [("NX011", 19, "error")],
    ),
    (
        "transport tagged with type (docs/src/extensions/manifest.md)",
        _replace('kind = "stdio"', 'type = "stdio"'),
        [("NX010", 11, "error"), ("NX011", 12, "error")],
    ),
    (
        "unknown key in the stdio transport",
        _replace('args = ["main.py"]', 'args = ["main.py"]\ncwd = "."'),
        [("NX011", 15, "error")],
    ),
    (
        "unknown key in [requires]",
        GOOD + "[requires]\npath = []\n",
        [("NX213", 19, "warning"), ("NX011", 20, "error")],
    ),
    (
        "unknown key in [context]",
        GOOD + "[context]\nmeta = true\n",
        [("NX213", 19, "warning"), ("NX011", 20, "error")],
    ),
    (
        "unknown key in an MCP server",
        GOOD + '[mcp_servers.search]\ntransport = "stdio"\ncommand = "s"\nport = 1\n',
        [("NX213", 19, "warning"), ("NX011", 22, "error")],
    ),
    ("missing plugin.version", _replace('version = "0.1.0"\n', ""), [("NX010", 1, "error")]),
    ("missing [transport]", GOOD.split("[transport]", maxsplit=1)[0], [("NX010", 1, "error")]),
    (
        "stdio transport without a command",
        _replace('command = "python3"\n', ""),
        [("NX010", 11, "error")],
    ),
    (
        "unknown transport kind",
        _replace('kind = "stdio"', 'kind = "grpc"'),
        [("NX013", 12, "error")],
    ),
    (
        "priority of the wrong type",
        _replace('name = "Weather"', 'priority = "1"'),
        [("NX213", 4, "warning"), ("NX012", 4, "error")],
    ),
    (
        "priority beyond i32",
        _replace('name = "Weather"', "priority = 3000000000"),
        [("NX213", 4, "warning"), ("NX014", 4, "error")],
    ),
    (
        "tools not a list",
        _replace('tools = ["get_weather"]', 'tools = "get_weather"'),
        [("NX012", 8, "error")],
    ),
    (
        "capabilities not a table (one finding, not also NX205)",
        "capabilities = 1\n"
        + _replace('[capabilities]\ntools = ["get_weather"]\nhooks = ["before_message"]\n', ""),
        [("NX012", 1, "error")],
    ),
    ("uppercase id", _replace('id = "weather_app"', 'id = "Weather"'), [("NX200", 2, "error")]),
    ("empty id", _replace('id = "weather_app"', 'id = ""'), [("NX200", 2, "error")]),
    (
        "id of 65 bytes",
        _replace('id = "weather_app"', f'id = "{"a" * 65}"'),
        [("NX200", 2, "error")],
    ),
    ("reserved id", _replace('id = "weather_app"', 'id = "memory"'), [("NX201", 2, "error")]),
    (
        "version with a v",
        _replace('version = "0.1.0"', 'version = "v0.1"'),
        [("NX202", 3, "error")],
    ),
    (
        "min_agent_version written as a requirement",
        _replace('name = "Weather"', 'min_agent_version = ">=0.1.0"'),
        [("NX202", 4, "error")],
    ),
    (
        "min_agent_version newer than the daemon",
        _replace('name = "Weather"', 'min_agent_version = "9.0.0"'),
        [("NX203", 4, "error")],
    ),
    (
        "description over 512 characters",
        _replace('description = "Forecasts."', f'description = "{"x" * 513}"'),
        [("NX204", 5, "error")],
    ),
    (
        "no capability",
        _replace('tools = ["get_weather"]\nhooks = ["before_message"]', "tools = []"),
        [("NX205", 7, "error")],
    ),
    ("hyphen in a tool name", _replace('"get_weather"', '"get-weather"'), [("NX206", 8, "error")]),
    (
        "tool listed twice",
        _replace('"get_weather"', '"get_weather", "get_weather"'),
        [("NX207", 8, "error")],
    ),
    ("blank command", _replace('command = "python3"', 'command = "  "'), [("NX208", 13, "error")]),
    (
        "nats transport with a blank prefix",
        _replace(
            'kind = "stdio"\ncommand = "python3"\nargs = ["main.py"]',
            'kind = "nats"\nsubject_prefix = ""',
        ),
        [("NX209", 12, "warning"), ("NX208", 13, "error")],
    ),
    (
        "http transport with a bad URL",
        _replace(
            'kind = "stdio"\ncommand = "python3"\nargs = ["main.py"]',
            'kind = "http"\nurl = "ftp://x"',
        ),
        [("NX209", 12, "warning"), ("NX208", 13, "error")],
    ),
    (
        "MCP server name with uppercase",
        GOOD + '[mcp_servers.Search]\ntransport = "stdio"\ncommand = "s"\n',
        [("NX210", 19, "error"), ("NX213", 19, "warning")],
    ),
    (
        "MCP server with a non-http URL",
        GOOD + '[mcp_servers.search]\ntransport = "sse"\nurl = "file:///x"\n',
        [("NX213", 19, "warning"), ("NX210", 21, "error")],
    ),
    (
        "[capabilities.admin] in plugin.toml (docs/src/microapps/admin-rpc.md)",
        GOOD + '[capabilities.admin]\nrequired = ["agents_crud"]\n',
        [("NX211", 19, "error")],
    ),
    (
        "[capabilities.http_server] in plugin.toml (docs/src/microapps/agent-creator.md)",
        GOOD + "[capabilities.http_server]\nport = 8080\n",
        [("NX211", 19, "error")],
    ),
    (
        "capabilities.skills (extensions/ventas-etb/plugin.toml)",
        _replace('hooks = ["before_message"]', 'skills = ["ventas"]'),
        [("NX211", 9, "error")],
    ),
    (
        "manifest_version in an extension manifest",
        "manifest_version = 1\n" + GOOD,
        [("NX190", 12, "error")],
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [case[1:] for case in REFUSED], ids=[case[0] for case in REFUSED]
)
def test_what_the_extension_parser_refuses_is_an_error_at_its_line(
    tmp_path: Path, text: str, expected: list[Finding]
) -> None:
    code, report = lint_files(tmp_path, {"plugin.toml": text})
    assert code == 1
    assert findings(report) == expected


EVERY_PROBLEM_AT_ONCE = """\
[plugin]
id = "Weather"
version = "1.0"

[capabilities]
tools = ["get_weather"]

[transport]
type = "stdio"
command = "python3"
timeout = 5

[mcp_servers.Search]
transport = "grpc"
command = " "
port = 1
"""


def test_every_finding_of_a_microapp_shows_in_one_run(tmp_path: Path) -> None:
    # A transport without its tag, or with an unknown one, still has its other keys judged
    # (against every variant's fields), so fixing the tag uncovers nothing new; likewise an
    # MCP server with a bad name.
    code, report = lint_files(tmp_path, {"plugin.toml": EVERY_PROBLEM_AT_ONCE})
    assert code == 1
    assert findings(report) == [
        ("NX200", 2, "error"),
        ("NX202", 3, "error"),
        ("NX010", 8, "error"),
        ("NX011", 9, "error"),
        ("NX011", 11, "error"),
        ("NX210", 13, "error"),
        ("NX213", 13, "warning"),
        ("NX013", 14, "error"),
        ("NX011", 16, "error"),
    ]
    [entry] = report["files"]
    hints = {item["message"]: item["help"] for item in entry["diagnostics"]}
    assert hints["unknown key `type` in transport"] == "the transport's tag is `kind`, not `type`"
    # The author repairs what the report showed; nothing new appears.
    repaired = (
        EVERY_PROBLEM_AT_ONCE.replace('"Weather"', '"weather"')
        .replace('"1.0"', '"1.0.0"')
        .replace("type =", "kind =")
        .replace("timeout = 5\n", "")
        .replace("Search", "search")
        .replace('"grpc"', '"stdio"')
        .replace('" "', '"s"')
        .replace("port = 1\n", "")
    )
    code, report = lint_files(tmp_path, {"plugin.toml": repaired})
    assert (code, findings(report)) == (0, [("NX213", 12, "warning")])


WARNED: list[tuple[str, str, list[Finding]]] = [
    (
        "a secret-named requires.env (stdio.rs:26-46,690-697)",
        GOOD + '[requires]\nenv = ["WEATHER_API_KEY", "WEATHER_REGION"]\n',
        [("NX213", 19, "warning"), ("NX212", 20, "warning")],
    ),
    (
        "sections the unified manifest drops",
        GOOD + '[context]\npassthrough = true\n[outbound_bindings]\nwhatsapp = ["main"]\n',
        [("NX213", 19, "warning"), ("NX213", 21, "warning")],
    ),
    (
        "a hook outside the host's HOOK_NAMES (runtime/mod.rs:26-31)",
        _replace('"before_message"', '"on_message"'),
        [("NX215", 9, "warning")],
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [case[1:] for case in WARNED], ids=[case[0] for case in WARNED]
)
def test_what_the_daemon_accepts_but_handles_otherwise_is_a_warning(
    tmp_path: Path, text: str, expected: list[Finding]
) -> None:
    code, report = lint_files(tmp_path, {"plugin.toml": text})
    assert code == 0
    assert findings(report) == expected
    code, _ = lint_files(tmp_path, {"plugin.toml": text}, "--strict")
    assert code == 1


# Blank as the daemon's `trim().is_empty()` judges it (Rust's White_Space, `manifest.rs:436,566,
# 571`): the ASCII information separators U+001C-U+001F are not white space there, though
# Python's str.strip() removes them; an ideographic space U+3000 is.
SEPARATOR = "\\u001c"
IDEOGRAPHIC_SPACE = "\\u3000"


@pytest.mark.parametrize(
    ("text", "blank"),
    [
        (_replace('command = "python3"', f'command = "{SEPARATOR}"'), False),
        (_replace('command = "python3"', f'command = "{IDEOGRAPHIC_SPACE}"'), True),
        (
            _replace(
                'kind = "stdio"\ncommand = "python3"\nargs = ["main.py"]',
                f'kind = "nats"\nsubject_prefix = "{SEPARATOR}"',
            ),
            False,
        ),
        (
            GOOD + f'[mcp_servers.search]\ntransport = "stdio"\ncommand = "{SEPARATOR}"\n',
            False,
        ),
    ],
    ids=["command U+001C", "command U+3000", "subject_prefix U+001C", "MCP command U+001C"],
)
def test_blank_is_what_rust_trims_away(tmp_path: Path, text: str, blank: bool) -> None:
    _, report = lint_files(tmp_path, {"plugin.toml": text})
    codes = {code for code, _, severity in findings(report) if severity == "error"}
    assert bool(codes & {"NX208", "NX210"}) is blank, findings(report)


# An MCP server's URL is judged by `url::Url::parse` (`manifest.rs:440-450`), which follows the
# URL Standard, then its scheme must be http or https. Each verdict below is the URL Standard's
# (also what a browser's `new URL()` says), not urllib's: `urlsplit` accepts a space or a
# 99999 port in the host part and refuses `http:` without slashes.
MCP_URLS: list[tuple[str, bool]] = [
    ("https://mcp.example/v1", True),
    ("HTTP://mcp.example", True),
    ("http:mcp.example", True),
    ("https:\\\\mcp.example\\v1", True),
    (" http://mcp.example/ ", True),
    ("http://mcp.example:/", True),
    ("http://user:pw@mcp.example:8080/p?q#f", True),
    ("https://[::1]:8080/", True),
    ("http://0x7f.1/", True),
    ("http://4294967295/", True),
    ("http://a_b..c/", True),
    ("http://mcp.example:065535/", True),
    ("http://", False),
    ("ftp://mcp.example/", False),
    ("http://exa mple.com/", False),
    ("http://a%20b/", False),
    ("http://%zz/", False),
    ("https://mcp.example:99999/", False),
    ("http://mcp.example:8a/", False),
    ("http://:80/", False),
    ("http://user@/", False),
    ("http://1.2.3.256/", False),
    ("http://4294967296/", False),
    ("http://1.2.3.4.5/", False),
    ("http://09/", False),
    ("http://host.1/", False),
    ("http://[1::/", False),
    ("http://[fe80::1%25eth0]/", False),
    ("http://[::1]x/", False),
]


def test_an_mcp_server_url_is_judged_as_the_url_standard_reads_it(tmp_path: Path) -> None:
    """Every URL in one lint run: a directory per URL; NX210 exactly where the daemon refuses."""
    for index, (url, _) in enumerate(MCP_URLS):
        text = GOOD + f'[mcp_servers.search]\ntransport = "sse"\nurl = {json.dumps(url)}\n'
        (tmp_path / f"u{index:02d}").mkdir()
        (tmp_path / f"u{index:02d}" / "plugin.toml").write_text(text, encoding="utf-8")
    code, report = run_lint_json([tmp_path], cwd=tmp_path)
    refused = {
        Path(entry["path"]).parent.name: [
            (item["code"], item["range"]["start"]["line"], item["severity"])
            for item in entry["diagnostics"]
            if item["code"] == "NX210"
        ]
        for entry in report["files"]
    }
    wrong = [
        url
        for index, (url, valid) in enumerate(MCP_URLS)
        if refused[f"u{index:02d}"] != ([] if valid else [("NX210", 21, "error")])
    ]
    assert wrong == []
    assert code == 1


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        (f"a{SEPARATOR}b", [("NX209", 12, "warning")]),
        (f"a{IDEOGRAPHIC_SPACE}b", [("NX209", 12, "warning"), ("NX208", 13, "error")]),
    ],
    ids=["U+001C", "U+3000"],
)
def test_an_http_transport_url_is_matched_with_the_regex_crates_white_space(
    tmp_path: Path, host: str, expected: list[Finding]
) -> None:
    """`HTTP_URL_RE` (`manifest.rs:103-104`) keeps White_Space out of the host: the regex
    crate's white-space class, which leaves out the information separators Python's takes."""
    text = _replace(
        'kind = "stdio"\ncommand = "python3"\nargs = ["main.py"]',
        f'kind = "http"\nurl = "http://{host}/mcp"',
    )
    code, report = lint_files(tmp_path, {"plugin.toml": text})
    assert (code, findings(report)) == (1 if len(expected) > 1 else 0, expected)


def test_a_newer_daemon_accepts_a_newer_min_agent_version(tmp_path: Path) -> None:
    text = _replace('name = "Weather"', 'min_agent_version = "9.0.0"')
    code, report = lint_files(tmp_path, {"plugin.toml": text}, "--nexo-version", "9.0.1")
    assert (code, findings(report)) == (0, [])


@pytest.mark.parametrize(
    ("required", "daemon", "refused"),
    [
        # The host orders with `semver::Version`'s `Ord`, which counts build metadata
        # (semver 1.0.28 src/impls.rs, `impl Ord for BuildMetadata`): 0.1.5 < 0.1.5+build.1.
        ("0.1.5+build.1", "0.1.5", True),
        ("1.0.0+b2", "1.0.0+b1", True),
        ("0.1.5+build.1", "0.1.5+build.1", False),
        ("0.1.5+build.1", "0.1.5+build.2", False),
        ("0.1.5", "0.1.5+build.1", False),
    ],
)
def test_min_agent_version_orders_build_metadata_as_the_host(
    tmp_path: Path, required: str, daemon: str, refused: bool
) -> None:
    text = _replace('name = "Weather"', f'min_agent_version = "{required}"')
    code, report = lint_files(tmp_path, {"plugin.toml": text}, "--nexo-version", daemon)
    assert (code, findings(report)) == ((1, [("NX203", 4, "error")]) if refused else (0, []))


def test_plugin_manifests_keep_the_plugin_rules(tmp_path: Path) -> None:
    """A v1-shaped nexo-plugin.toml is no microapp (extension discovery reads only plugin.toml,
    ``discovery.rs:219``): it stays a legacy plugin manifest (NX190)."""
    code, report = lint_files(tmp_path, {"legacy/nexo-plugin.toml": GOOD})
    assert code == 1
    assert findings(report, "nexo-plugin.toml") == [("NX190", 11, "error")]
    assert parser_of(report, "nexo-plugin.toml") == "plugin-manifest"


def test_the_companion_is_parsed_not_validated_and_must_share_the_id(tmp_path: Path) -> None:
    """A hyphenated id is no plugin id (NX100), but the host only parses the companion, so the
    same id in both files is right; a different one leaves the microapp without a router."""
    code, report = lint_files(tmp_path, {"plugin.toml": GOOD, "nexo-plugin.toml": COMPANION})
    assert code == 0
    assert findings(report, "nexo-plugin.toml") == []
    assert parser_of(report, "nexo-plugin.toml") == "companion-manifest"
    assert findings(report) == []
    # A directory search finds both; they are read side by side, so neither is shadowed (NX006).
    code, report = run_lint_json([tmp_path], cwd=tmp_path)
    assert code == 0
    assert [(Path(item["path"]).name, item["diagnostics"]) for item in report["files"]] == [
        ("nexo-plugin.toml", []),
        ("plugin.toml", []),
    ]

    other = COMPANION.replace('id = "weather_app"', 'id = "weather_other"')
    code, report = lint_files(tmp_path, {"plugin.toml": GOOD, "nexo-plugin.toml": other})
    assert code == 1
    assert findings(report, "nexo-plugin.toml") == [("NX214", 2, "error")]


def test_the_companion_must_parse(tmp_path: Path) -> None:
    """``PluginSection`` requires ``name`` (``plugin-manifest/src/manifest.rs:28-51``) and every
    table is closed; the HTTP server's ``token_env`` is stripped from the child's environment."""
    broken = COMPANION.replace('name = "Weather"\n', "") + (
        '[plugin.capabilities.http_server]\nport = 8080\ntoken_env = "WEATHER_TOKEN"\nhost = "x"\n'
    )
    code, report = lint_files(tmp_path, {"plugin.toml": GOOD, "nexo-plugin.toml": broken})
    assert code == 1
    assert findings(report, "nexo-plugin.toml") == [
        ("NX010", 1, "error"),
        ("NX216", 1, "error"),
        ("NX212", 11, "warning"),
        ("NX011", 12, "error"),
    ]


COMPANION_SKIPPED = [
    # `PluginSection.version: semver::Version` (plugin-manifest/src/manifest.rs:28-51).
    (
        "a version that is not SemVer",
        COMPANION.replace('version = "0.1.0"', 'version = "0.1"'),
        3,
        "`plugin.version` `0.1` is not SemVer: unexpected end of input while parsing minor "
        "version number",
    ),
    # `min_nexo_version: semver::VersionReq`.
    (
        "a min_nexo_version that is not a VersionReq",
        COMPANION.replace('">=0.1.0"', '">= 0.1.0 <0.3"'),
        6,
        "`plugin.min_nexo_version` `>= 0.1.0 <0.3` is not a version requirement: expected "
        "comma after patch version number, found '<'",
    ),
    # `HttpServerCapability` is `deny_unknown_fields` (manifest.rs:288-313).
    (
        "an unknown key in http_server",
        COMPANION
        + '[plugin.capabilities.http_server]\nport = 8080\ntoken_env = "T"\nhealth = "/h"\n',
        13,
        "unknown key `health` in table [plugin.capabilities.http_server]",
    ),
]


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [case[1:] for case in COMPANION_SKIPPED],
    ids=[case[0] for case in COMPANION_SKIPPED],
)
def test_a_companion_the_daemon_skips_says_so(
    tmp_path: Path, text: str, line: int, reason: str
) -> None:
    """The host parses the companion with `PluginManifest::from_path` and, when that fails,
    logs a warning and goes on without it (admin_capability_collect.rs:38-65): the microapp
    loads without its admin capabilities and its HTTP server."""
    code, report = lint_files(tmp_path, {"plugin.toml": GOOD, "nexo-plugin.toml": text})
    assert code == 1
    [entry] = [item for item in report["files"] if item["path"].endswith("nexo-plugin.toml")]
    [skipped] = [item for item in entry["diagnostics"] if item["code"] == "NX216"]
    assert skipped["severity"] == "error"
    assert skipped["range"]["start"]["line"] == line
    assert skipped["message"] == (
        f"the daemon cannot parse this nexo-plugin.toml ({reason}) and skips it with only a "
        "log line: microapp `weather_app` loads without its admin capabilities and without "
        "its HTTP server"
    )


def test_a_companion_that_is_not_toml_is_skipped_too(tmp_path: Path) -> None:
    """A TOML syntax error fails `PluginManifest::from_path` as any other parse error does, so
    the host skips the file the same way (admin_capability_collect.rs:38-65): besides the
    syntax error, the report says what the microapp then loses."""
    broken = COMPANION.replace('name = "Weather"', 'name = "Weather')
    code, report = lint_files(tmp_path, {"plugin.toml": GOOD, "nexo-plugin.toml": broken})
    assert code == 1
    [entry] = [item for item in report["files"] if item["path"].endswith("nexo-plugin.toml")]
    assert entry["parser"] == "companion-manifest"
    codes = [(item["code"], item["range"]["start"]["line"]) for item in entry["diagnostics"]]
    assert [code for code, _ in codes] == ["NX001", "NX216"]
    assert codes[0][1] == codes[1][1]
    [syntax, skipped] = entry["diagnostics"]
    assert skipped["severity"] == "error"
    assert skipped["message"] == (
        f"the daemon cannot parse this nexo-plugin.toml ({syntax['message']}) and skips it "
        "with only a log line: microapp `weather_app` loads without its admin capabilities "
        "and without its HTTP server"
    )
    # Without an extension-shaped plugin.toml beside it, it is a plugin's manifest: NX001 only.
    (tmp_path / "plugin.toml").unlink()
    code, report = run_lint_json([tmp_path / "nexo-plugin.toml"], cwd=tmp_path)
    assert code == 1
    [entry] = report["files"]
    assert [item["code"] for item in entry["diagnostics"]] == ["NX001"]


def test_every_rule_has_an_explanation(tmp_path: Path) -> None:
    for code in ("NX200", "NX211", "NX214", "NX215", "NX216"):
        completed = nexo("plugin", "lint", "--explain", code, cwd=tmp_path, in_process=True)
        assert completed.code == 0
        assert completed.stdout.startswith(code)


def test_machine_formats_carry_microapp_findings(tmp_path: Path) -> None:
    (tmp_path / "plugin.toml").write_text(_replace('id = "weather_app"', 'id = "memory"'))
    outputs = {}
    for fmt in ("github", "sarif"):
        completed = nexo(
            "plugin", "lint", "--format", fmt, "plugin.toml", cwd=tmp_path, in_process=True
        )
        assert completed.code == 1
        outputs[fmt] = completed.stdout
    assert "::error file=plugin.toml,line=2,col=6," in outputs["github"]
    assert "NX201 microapp-reserved-id" in outputs["github"]
    [result] = json.loads(outputs["sarif"])["runs"][0]["results"]
    assert result["ruleId"] == "NX201"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 2


def test_pack_lints_a_microapp_with_the_extension_parser_rules(tmp_path: Path) -> None:
    """`pack` lints an extension-shaped plugin.toml as a microapp manifest: what the extension
    parser refuses (here a reserved id) stops the pack with its code, and nothing is written."""
    project = tmp_path / "weather"
    project.mkdir()
    (project / "plugin.toml").write_text(
        GOOD.replace('id = "weather_app"', 'id = "memory"'), encoding="utf-8"
    )
    completed = nexo("plugin", "pack", str(project), "--json", cwd=tmp_path, in_process=True)
    assert completed.code == 1, completed.stderr
    document = json.loads(completed.stdout)
    assert document["kind"] == "manifest_invalid"
    assert [item["code"] for item in document["diagnostics"]] == ["NX201"]
    assert sorted(path.name for path in project.iterdir()) == ["plugin.toml"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["weather"]


def test_a_hyphenated_id_is_valid_for_the_daemon_but_warned_as_unpackable(tmp_path: Path) -> None:
    """The extension parser takes `order-tracker`; a tarball named after it cannot be told
    apart from its version (`order-tracker-0.1.0-noarch`), so pack refuses it: lint says so
    first, as a warning (the daemon itself loads it)."""
    hyphenated = GOOD.replace('id = "weather_app"', 'id = "order-tracker"')
    companion = COMPANION.replace('id = "weather_app"', 'id = "order-tracker"')
    code, report = lint_files(tmp_path, {"plugin.toml": hyphenated, "nexo-plugin.toml": companion})
    assert code == 0
    assert findings(report) == [("NX217", 2, "warning")]
    assert findings(report, "nexo-plugin.toml") == []
    [entry] = [item for item in report["files"] if Path(item["path"]).name == "plugin.toml"]
    [diagnostic] = entry["diagnostics"]
    assert "order_tracker" in json.dumps(diagnostic)
    assert "tarball" in diagnostic["message"]
    code, _ = lint_files(tmp_path, {"plugin.toml": hyphenated}, "--strict")
    assert code == 1
