"""`nexo plugin lint` on the daemon's config files that decide whether a microapp loads.

``extensions.yaml`` is read into ``ExtensionsConfigFile`` (``crates/config/src/types/
extensions.rs:8-140`` at eec3f33), every struct ``deny_unknown_fields`` (``:9,15,57,77,114,136,
143``); ``AppConfig::load`` drops a top-level ``schema_version`` and propagates any error
(``crates/config/src/lib.rs:72-73,242-266``), so the daemon does not start: an error at the
offending line. ``${...}`` placeholders are resolved first (``crates/config/src/env.rs:5-177``).
An agent is ``deny_unknown_fields`` with no ``extensions`` (``types/agents.rs:28-40``);
``extensions_config`` is parsed (``:366``) and never delivered. Cross-file: the admin bootstrap
(``crates/setup/src/admin_bootstrap.rs:364-408``, ``core/src/agent/admin_rpc/capabilities.rs:
122-176``) fails on a required capability not granted or an external bind not allowed, and the
daemon then runs with admin RPC off for every microapp (``src/main.rs:1653-1656``).

Every ``extensions.yaml`` key of the first-party docs that the daemon refuses is here
(``microapps.md`` §1.2): ``entries.<id>.config`` (contract.md:198-201), ``.timeout_secs``
(contract.md:264-266), ``.path`` (contract.md:335-336), ``.enabled`` (getting-started.md:133-141,
template-microapp-rust/README.md:46-55), and ``agents[].extensions`` (getting-started.md:146-148).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from support.cli import nexo
from support.lint_cli import run_lint_json

from nexo_pkg.lint.daemon_files import microapp_schemas

ROOT = Path(__file__).resolve().parent.parent.parent

MICROAPP = """\
[plugin]
id = "agent_creator"
version = "0.1.0"

[capabilities]
tools = ["create_agent"]

[transport]
kind = "stdio"
command = "./agent_creator"
"""

COMPANION = """\
[plugin]
id = "agent_creator"
version = "0.1.0"
name = "Agent creator"
description = "Operator UI."
min_nexo_version = ">=0.1.0"

[plugin.capabilities.admin]
required = ["agents_crud"]
optional = ["channels_crud"]
"""

HTTP_SERVER = """
[plugin.capabilities.http_server]
port = 8080
bind = "0.0.0.0"
token_env = "AGENT_CREATOR_ADMIN"
"""

MODEL = "    model: {provider: minimax, model: m}\n"
"""An agent's required `model` (crates/config/src/types/agents.rs:38, `ModelConfig`)."""

GRANTED = """\
extensions:
  entries:
    agent_creator:
      capabilities_grant: [agents_crud, channels_crud]
"""

Finding = tuple[str, int, str]


def project(tmp_path: Path, extensions: str | None, *, companion: str = COMPANION) -> Path:
    """A working directory with the daemon's ``config/`` and one microapp under
    ``./extensions`` (the default search path)."""
    app = tmp_path / "extensions" / "agent_creator"
    app.mkdir(parents=True)
    (app / "plugin.toml").write_text(MICROAPP, encoding="utf-8")
    if companion:
        (app / "nexo-plugin.toml").write_text(companion, encoding="utf-8")
    (tmp_path / "config").mkdir()
    if extensions is not None:
        (tmp_path / "config" / "extensions.yaml").write_text(extensions, encoding="utf-8")
    return tmp_path


def lint_yaml(
    tmp_path: Path, name: str, text: str, *args: str, env: dict[str, str] | None = None
) -> tuple[int, list[Finding]]:
    path = tmp_path / "config" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    code, report = run_lint_json([path], *args, cwd=tmp_path, env=env)
    [entry] = report["files"]
    assert entry["parser"] in ("extensions-config", "agents-config")
    return code, [
        (item["code"], item["range"]["start"]["line"], item["severity"])
        for item in entry["diagnostics"]
    ]


REFUSED: list[tuple[str, str, list[Finding]]] = [
    (
        "entries.<id>.config (contract.md:198-201)",
        GRANTED + "      config:\n        region: bogota\n",
        [("NX220", 5, "error")],
    ),
    (
        "entries.<id>.timeout_secs (contract.md:264-266)",
        GRANTED + "      timeout_secs: 30\n",
        [("NX220", 5, "error")],
    ),
    (
        "entries.<id>.path (contract.md:335-336)",
        GRANTED + "    hello: { path: ./extensions/hello }\n",
        [("NX220", 5, "error")],
    ),
    (
        "entries.<id>.enabled (getting-started.md:133-141)",
        GRANTED + "      enabled: true\n",
        [("NX220", 5, "error")],
    ),
    (
        "entries.<id>.command/args/env",
        GRANTED + "      command: ./x\n      args: []\n      env: {}\n",
        [("NX220", 5, "error"), ("NX220", 6, "error"), ("NX220", 7, "error")],
    ),
    (
        "a misspelt extensions key",
        GRANTED + "  search_path: [./extensions]\n",
        [("NX220", 5, "error")],
    ),
    (
        "unknown key in watch",
        GRANTED + "  watch: {enabled: true, delay_ms: 5}\n",
        [("NX220", 5, "error")],
    ),
    ("unknown key in doctor", GRANTED + "  doctor:\n    timeout_ms: 5\n", [("NX220", 6, "error")]),
    (
        "unknown key in transport_defaults.nats",
        GRANTED + "  transport_defaults:\n    nats:\n      url: nats://x\n",
        [("NX220", 7, "error")],
    ),
    ("unknown top-level key", GRANTED + "extension_dirs: []\n", [("NX220", 5, "error")]),
    ("no extensions: wrapper", "enabled: true\n", [("NX221", 1, "error"), ("NX220", 1, "error")]),
    ("a YAML 1.1 boolean", GRANTED + "  enabled: yes\n", [("NX221", 5, "error")]),
    ("a negative max_depth", GRANTED + "  max_depth: -1\n", [("NX221", 5, "error")]),
    (
        "search_paths not a list",
        GRANTED + "  search_paths: ./extensions\n",
        [("NX221", 5, "error")],
    ),
    (
        "capabilities_grant not a list",
        "extensions:\n  entries:\n    agent_creator:\n      capabilities_grant: agents_crud\n",
        [("NX221", 4, "error")],
    ),
    (
        "a key defined twice",
        GRANTED + "  enabled: true\n  enabled: false\n",
        [("NX222", 6, "error")],
    ),
    ("not YAML", GRANTED + "  search_paths: [./x\n", [("NX222", 6, "error")]),
    (
        "a required admin capability not granted",
        "extensions:\n  entries:\n    agent_creator:\n      capabilities_grant: [channels_crud]\n",
        [("NX225", 4, "error")],
    ),
    (
        "no entry at all for a microapp requiring admin capabilities",
        "extensions:\n  enabled: true\n",
        [("NX225", 1, "error"), ("NX226", 1, "warning")],
    ),
    (
        "a file reference outside the secret roots",
        GRANTED + "  search_paths: ['${file:../paths}']\n",
        [("NX224", 5, "error")],
    ),
    (
        "a placeholder that never closes",
        GRANTED + "  search_paths: ['${NEXO_TEST_EXT_DIR']\n",
        [("NX231", 5, "error")],
    ),
    (
        "a placeholder whose braces never balance",
        GRANTED + "  search_paths: ['${NEXO_TEST_EXT_DIR:-{x}']  # ${closed}\n",
        [("NX231", 5, "error")],
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [case[1:] for case in REFUSED], ids=[case[0] for case in REFUSED]
)
def test_what_stops_the_daemon_or_its_admin_rpc_is_an_error(
    tmp_path: Path, text: str, expected: list[Finding]
) -> None:
    project(tmp_path, None)
    code, found = lint_yaml(tmp_path, "extensions.yaml", text)
    assert code == 1
    assert found == expected


WARNED: list[tuple[str, str, list[Finding]]] = [
    (
        "an optional capability not granted",
        "extensions:\n  entries:\n    agent_creator:\n      capabilities_grant: [agents_crud]\n",
        [("NX226", 4, "warning")],
    ),
    (
        "a grant the microapp does not declare",
        GRANTED.replace("channels_crud]", "channels_crud, skills_crud]"),
        [("NX227", 4, "warning")],
    ),
    ("an entry naming no microapp", GRANTED + "    wheather: {}\n", [("NX229", 5, "warning")]),
    (
        "disabled and allowlist naming no microapp",
        GRANTED + "  disabled: [nope]\n  allowlist: [agent_creator, nada]\n",
        [("NX229", 5, "warning"), ("NX229", 6, "warning")],
    ),
    (
        "a placeholder unset here",
        GRANTED + "  search_paths: ['${NEXO_TEST_UNSET_DIR}']\n",
        [("NX223", 5, "warning")],
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [case[1:] for case in WARNED], ids=[case[0] for case in WARNED]
)
def test_what_the_daemon_tolerates_is_a_warning(
    tmp_path: Path, text: str, expected: list[Finding]
) -> None:
    project(tmp_path, None)
    code, found = lint_yaml(tmp_path, "extensions.yaml", text)
    assert (code, found) == (0, expected)


@pytest.mark.parametrize(
    "companion",
    ["", COMPANION.split("\n[plugin.capabilities.admin]", maxsplit=1)[0] + "\n"],
    ids=["no nexo-plugin.toml", "no [plugin.capabilities.admin]"],
)
def test_a_grant_to_a_microapp_declaring_nothing_is_a_warning(
    tmp_path: Path, companion: str
) -> None:
    # The admin bootstrap skips a microapp that declares no admin capabilities without a word
    # (crates/setup/src/admin_bootstrap.rs:346-362): the grant gives it nothing.
    project(tmp_path, None, companion=companion)
    code, found = lint_yaml(tmp_path, "extensions.yaml", GRANTED)
    assert (code, found) == (0, [("NX227", 4, "warning"), ("NX227", 4, "warning")])


def test_a_grant_to_an_undeclaring_microapp_is_found_under_its_companion_id(
    tmp_path: Path,
) -> None:
    # The admin bootstrap keys capabilities and grants by the companion's `plugin.id`
    # (crates/setup/src/admin_capability_collect.rs, `m.id()`), as the grant check of a
    # declaring microapp does: NX227 looks for the grant under the same id.
    companion = COMPANION.split("\n[plugin.capabilities.admin]", maxsplit=1)[0] + "\n"
    project(tmp_path, None, companion=companion.replace('"agent_creator"', '"creator_ui"'))
    text = "extensions:\n  entries:\n    creator_ui:\n      capabilities_grant: [agents_crud]\n"
    path = tmp_path / "config" / "extensions.yaml"
    path.write_text(text, encoding="utf-8")
    code, report = run_lint_json([path], cwd=tmp_path)
    [entry] = report["files"]
    assert code == 0
    nx227 = [item for item in entry["diagnostics"] if item["code"] == "NX227"]
    assert [(item["key_path"], item["message"]) for item in nx227] == [
        (
            "extensions.entries.creator_ui.capabilities_grant[0]",
            "`agents_crud` is granted to `creator_ui`, which declares no admin capabilities "
            "(nexo-plugin.toml [plugin.capabilities.admin]): the daemon ignores the grant and "
            "the microapp gets no admin RPC",
        )
    ]


def test_a_valid_config_lints_clean(tmp_path: Path) -> None:
    text = (
        "schema_version: 2\n"
        + GRANTED
        + "  search_paths: ['${NEXO_TEST_EXT_DIR:-./extensions}']  # ${NOT_A_PLACEHOLDER\n"
        "  ignore_dirs: [target]\n  max_depth: 2\n  follow_links: false\n"
        "  watch: {enabled: false, debounce_ms: 500}\n"
        "  doctor: {stdio_timeout_ms: 5000, concurrency: 4}\n"
        "  transport_defaults:\n    nats: {subject_prefix: ext, call_timeout: 30s}\n"
    )
    project(tmp_path, None)
    assert lint_yaml(tmp_path, "extensions.yaml", text) == (0, [])


def test_a_placeholder_resolves_from_the_environment(tmp_path: Path) -> None:
    text = GRANTED + "  search_paths: ['${NEXO_TEST_EXT_DIR}']\n"
    project(tmp_path, None)
    env = {**os.environ, "NEXO_TEST_EXT_DIR": "./extensions"}
    assert lint_yaml(tmp_path, "extensions.yaml", text, env=env) == (0, [])


def test_an_external_bind_needs_allow_external_bind(tmp_path: Path) -> None:
    project(tmp_path, None, companion=COMPANION + HTTP_SERVER)
    code, found = lint_yaml(tmp_path, "extensions.yaml", GRANTED)
    assert (code, found) == (1, [("NX228", 3, "error")])
    allowed = GRANTED + "      allow_external_bind: true\n"
    assert lint_yaml(tmp_path, "extensions.yaml", allowed) == (0, [])


def test_a_disabled_extension_system_checks_no_grants(tmp_path: Path) -> None:
    project(tmp_path, None)
    assert lint_yaml(tmp_path, "extensions.yaml", "extensions:\n  enabled: false\n") == (0, [])


def test_a_disabled_microapp_needs_no_grant(tmp_path: Path) -> None:
    project(tmp_path, None)
    text = "extensions:\n  disabled: [agent_creator]\n"
    assert lint_yaml(tmp_path, "extensions.yaml", text) == (0, [])


AGENTS = "agents:\n  - id: ana\n" + MODEL


@pytest.mark.parametrize(
    ("admin", "expected"),
    [
        ('required = ["agents_crud"]\n', ("NX225", "error", 1)),
        ('optional = ["channels_crud"]\n', ("NX226", "warning", 0)),
    ],
)
def test_without_extensions_yaml_a_microapp_gets_no_admin_rpc(
    tmp_path: Path, admin: str, expected: tuple[str, str, int]
) -> None:
    """No ``extensions.yaml``: the daemon still discovers and spawns the microapps under
    ``./extensions`` (``run_extension_discovery`` falls back to ``ExtensionsConfig::default()``,
    ``src/main.rs:6530``) but builds no admin RPC, whose bootstrap needs ``cfg.extensions``
    (``src/main.rs:1488-1494``): no capability is granted and every ``app:`` request is
    dropped (``crates/extensions/src/runtime/stdio.rs:858-872``). Reported on agents.yaml,
    the file the daemon always reads."""
    companion = COMPANION.partition("[plugin.capabilities.admin]")[0]
    project(tmp_path, None, companion=companion + "[plugin.capabilities.admin]\n" + admin)
    (tmp_path / "config" / "agents.yaml").write_text(AGENTS, encoding="utf-8")
    code, report = run_lint_json([], "--config", "config", cwd=tmp_path)
    [agents] = [item for item in report["files"] if item["parser"] == "agents-config"]
    rule, severity, exit_code = expected
    assert [(d["code"], d["severity"]) for d in agents["diagnostics"]] == [(rule, severity)]
    [finding] = agents["diagnostics"]
    assert "no extensions.yaml" in finding["message"]
    assert "agent_creator" in finding["message"]
    assert code == exit_code
    assert not (tmp_path / "config" / "extensions.yaml").exists()
    # With the file granting what the companion declares, nothing is left to report.
    declared = "agents_crud" if "required" in admin else "channels_crud"
    (tmp_path / "config" / "extensions.yaml").write_text(
        f"extensions:\n  entries:\n    agent_creator:\n      capabilities_grant: [{declared}]\n",
        encoding="utf-8",
    )
    code, report = run_lint_json([], "--config", "config", cwd=tmp_path)
    assert code == 0
    assert all(not item["diagnostics"] for item in report["files"])


def test_agents_yaml_microapp_keys(tmp_path: Path) -> None:
    project(tmp_path, GRANTED)
    text = (
        "agents:\n"
        "  - id: ana\n"
        "    extensions: [agent_creator]\n"
        "    extensions_config:\n"
        "      agent_creator: {region: bogota}\n"
        "      ventas: {}\n" + MODEL + "  - id: bob\n"
        "    extensions_config: null\n" + MODEL
    )
    # An agent has no `extensions`: the daemon does not start, so nothing across files is
    # judged until it is gone.
    assert lint_yaml(tmp_path, "agents.yaml", text) == (1, [("NX220", 3, "error")])
    text = text.replace("    extensions: [agent_creator]\n", "")
    code, found = lint_yaml(tmp_path, "agents.yaml", text)
    assert code == 0
    # `extensions_config: null` is an empty map: agents.yaml is read through a serde_yaml
    # `Value` (tests/lint/test_daemon_yaml.py).
    assert found == [
        ("NX230", 3, "warning"),
        ("NX229", 5, "warning"),
        ("NX230", 8, "warning"),
    ]


def test_config_dir_lints_the_config_and_the_microapps_it_discovers(tmp_path: Path) -> None:
    """``--config DIR``: extensions.yaml, agents.yaml, agents.d/*.yaml, and every plugin.toml
    under the search paths with its companion (``discovery.rs:160-306``)."""
    project(tmp_path, GRANTED + "      enabled: true\n")
    (tmp_path / "config" / "agents.d").mkdir()
    (tmp_path / "config" / "agents.d" / "10-ana.yaml").write_text(
        "agents:\n  - id: ana\n    extensions: [agent_creator]\n" + MODEL,
        encoding="utf-8",
    )
    code, report = run_lint_json([], "--config", "config", cwd=tmp_path)
    assert code == 1
    parsers = {Path(item["path"]).name: item["parser"] for item in report["files"]}
    assert parsers == {
        "extensions.yaml": "extensions-config",
        "10-ana.yaml": "agents-config",
        "plugin.toml": "extension-manifest",
        "nexo-plugin.toml": "companion-manifest",
    }
    codes = {
        Path(item["path"]).name: [d["code"] for d in item["diagnostics"]]
        for item in report["files"]
    }
    assert codes == {
        "extensions.yaml": ["NX220"],
        "10-ana.yaml": ["NX220"],
        "plugin.toml": [],
        "nexo-plugin.toml": [],
    }


@pytest.mark.parametrize("where", ["NEXO_CONFIG_DIR", "./config", "NEXO_HOME"])
def test_daemon_config_finds_the_directory_as_the_daemon_does(tmp_path: Path, where: str) -> None:
    project(tmp_path, "extensions:\n  entries:\n    agent_creator: {enabled: true}\n")
    env = {key: value for key, value in os.environ.items() if key != "NEXO_CONFIG_DIR"}
    if where == "NEXO_CONFIG_DIR":
        (tmp_path / "config").rename(tmp_path / "daemon-config")
        env["NEXO_CONFIG_DIR"] = str(tmp_path / "daemon-config")
    elif where == "NEXO_HOME":
        (tmp_path / "home").mkdir()
        (tmp_path / "config").rename(tmp_path / "home" / "config")
        env["NEXO_HOME"] = str(tmp_path / "home")
    code, report = run_lint_json([], "--daemon-config", cwd=tmp_path, env=env)
    assert code == 1
    [entry] = [item for item in report["files"] if item["parser"] == "extensions-config"]
    assert [d["code"] for d in entry["diagnostics"]] == ["NX220"]


@pytest.mark.parametrize(
    ("present", "args", "chosen"),
    [
        (("flag", "env", "cwd", "home"), ("--config", "flag"), "flag"),
        (("env", "cwd", "home"), ("--daemon-config",), "env"),
        (("cwd", "home"), ("--daemon-config",), "cwd"),
        (("home",), ("--daemon-config",), "home"),
    ],
)
def test_daemon_config_lints_only_the_directory_the_daemon_would_read(
    tmp_path: Path, present: tuple[str, ...], args: tuple[str, ...], chosen: str
) -> None:
    """`--config DIR` > `NEXO_CONFIG_DIR` > `./config` when it exists > `$NEXO_HOME/config`
    (SPEC §1): with several present, only the first one's extensions.yaml is linted."""
    places = {
        "flag": tmp_path / "flag",
        "env": tmp_path / "env",
        "cwd": tmp_path / "config",
        "home": tmp_path / "home" / "config",
    }
    for name in present:
        places[name].mkdir(parents=True)
        (places[name] / "extensions.yaml").write_text(
            f"extensions:\n  unknown_in_{name}: 1\n", encoding="utf-8"
        )
    env = {key: value for key, value in os.environ.items() if key != "NEXO_CONFIG_DIR"}
    env["NEXO_HOME"] = str(tmp_path / "home")
    if "env" in present:
        env["NEXO_CONFIG_DIR"] = str(places["env"])
    code, report = run_lint_json([], *args, cwd=tmp_path, env=env)
    assert code == 1
    linted = [item for item in report["files"] if item["parser"] == "extensions-config"]
    assert [(tmp_path / item["path"]).resolve() for item in linted] == [
        (places[chosen] / "extensions.yaml").resolve()
    ]
    [diagnostic] = linted[0]["diagnostics"]
    assert diagnostic["code"] == "NX220"
    assert f"unknown_in_{chosen}" in diagnostic["message"]


def test_a_missing_config_dir_is_a_usage_error(tmp_path: Path) -> None:
    completed = nexo("plugin", "lint", "--config", "nope", cwd=tmp_path, in_process=True)
    assert completed.code == 2
    assert completed.stderr.startswith("error: the daemon's configuration directory")
    assert "Traceback" not in completed.stderr


@pytest.mark.parametrize("fmt", ["text", "github", "sarif"])
def test_every_output_format_reports_config_findings(tmp_path: Path, fmt: str) -> None:
    project(tmp_path, GRANTED + "      timeout_secs: 30\n")
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "nexo_pkg",
            "plugin",
            "lint",
            "--format",
            fmt,
            "config/extensions.yaml",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert completed.returncode == 1, completed.stderr
    if fmt == "text":
        assert "config/extensions.yaml: the daemon's extensions.yaml" in completed.stdout
        assert "config/extensions.yaml:5:7: NX220 unknown key `timeout_secs`" in completed.stdout
    elif fmt == "github":
        assert completed.stdout.startswith("::error file=config/extensions.yaml,line=5,col=7,")
    else:
        [result] = json.loads(completed.stdout)["runs"][0]["results"]
        assert result["ruleId"] == "NX220"
        assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 5


def test_hostile_yaml_is_a_finding_not_a_crash(tmp_path: Path) -> None:
    """Aliases that expand exponentially and deep nesting stop at a limit."""
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for index in range(8):
        previous, name = chr(97 + index), chr(98 + index)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
    bomb = "\n".join(lines) + "\n"
    project(tmp_path, None)
    code, found = lint_yaml(tmp_path, "extensions.yaml", bomb)
    assert code == 1
    assert ("NX222", "error") in {(code, severity) for code, _, severity in found}
    code, found = lint_yaml(tmp_path, "extensions.yaml", "extensions: " + "[" * 5000)
    assert code == 1
    assert found[0][0] == "NX222"
    for text, expected in (
        ("extensions:\n  disabled: [\x01]\n", [("NX222", 2, "error")]),
        ("extensions:\n  entries:\n    ? [a]\n    : {}\n", [("NX222", 3, "error")]),
        ("", [("NX221", 1, "error")]),
        ("- extensions\n", [("NX221", 1, "error")]),
    ):
        assert lint_yaml(tmp_path, "extensions.yaml", text) == (1, expected), text


# --- JSON Schemas ---------------------------------------------------------------------------


def test_the_published_schemas_are_the_lint_models() -> None:
    for name, schema in microapp_schemas().items():
        for directory in (ROOT / "schemas", ROOT / "nexo_pkg" / "schemas"):
            published = json.loads((directory / name).read_text("utf-8"))
            assert published == schema, f"run scripts/gen_microapp_schemas.py ({name})"


def test_the_extensions_schema_accepts_what_the_daemon_does_and_no_more() -> None:
    schema = microapp_schemas()["extensions.schema.json"]
    validator = jsonschema.Draft202012Validator(schema)
    good = yaml.safe_load(GRANTED + "  search_paths: [./extensions]\n  max_depth: 3\n")
    assert list(validator.iter_errors(good)) == []
    bad = yaml.safe_load(GRANTED + "      timeout_secs: 30\n")
    assert [error.validator for error in validator.iter_errors(bad)] == ["additionalProperties"]


# (extensions.yaml, environment, whether the daemon's loader accepts it). serde_yaml reads a
# null list, map or struct as an empty one (0.9.34 `src/value/de.rs`: `Value::Null =>
# visit_sequence/visit_mapping`) and the loader substitutes `${VAR}` in the text before the
# YAML is parsed (`crates/config/src/lib.rs` `load_optional`, `env.rs`).
LOADER_CASES: list[tuple[str, dict[str, str], bool]] = [
    ("extensions:\n", {}, True),
    ("extensions:\n  disabled:\n    # - greeter\n", {}, True),
    ("extensions:\n  allowlist: ~\n  search_paths:\n", {}, True),
    ("extensions:\n  entries:\n    agent_creator:\n", {}, True),
    ("extensions:\n  entries:\n    agent_creator:\n      capabilities_grant:\n", {}, True),
    ("extensions:\n  transport_defaults:\n    nats:\n  watch:\n  doctor:\n", {}, True),
    ("extensions:\n  max_depth: ${DEPTH}\n", {"DEPTH": "4"}, True),
    (
        "extensions:\n  follow_links: ${LINKS}\n  enabled: ${ON}\n",
        {"LINKS": "true", "ON": "true"},
        True,
    ),
    ("extensions:\n  enabled:\n", {}, False),
    ("extensions:\n  max_depth: -1\n", {}, False),
    ("extensions:\n  max_depth:\n", {}, False),
    ("extensions:\n  disabled: agent_creator\n", {}, False),
    ("extensions:\n  entries:\n    agent_creator: {timeout_secs: 3}\n", {}, False),
    # A `${` that never closes: the loader scans for its `}` forever (`find_placeholders`),
    # the daemon never starts; a closed one beside it does not make it load.
    ("extensions:\n  max_depth: 3${\n", {}, False),
    ("extensions:\n  max_depth: ${DEPTH}${\n", {"DEPTH": "4"}, False),
    ("extensions:\n  enabled: ${ON\n", {"ON": "true"}, False),
    ("extensions:\n  max_depth: ${DEPTH{X}\n", {"DEPTH": "4"}, False),
    ("extensions:\n  max_depth: ${DEPTH:-4}\n", {}, True),
]


@pytest.mark.parametrize(("text", "environ", "accepted"), LOADER_CASES)
def test_the_extensions_schema_judges_nulls_and_placeholders_as_lint_does(
    tmp_path: Path, text: str, environ: dict[str, str], *, accepted: bool
) -> None:
    """An editor validating with the published schema and `nexo plugin lint` agree on what
    the daemon loads: a null list or table, a `${VAR}` where a number or a boolean goes."""
    code, findings = lint_yaml(tmp_path, "extensions.yaml", text, env={**os.environ, **environ})
    assert (code == 0) is accepted, findings
    assert all(severity != "error" for _, _, severity in findings) is accepted, findings
    schema = microapp_schemas()["extensions.schema.json"]
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(yaml.safe_load(text)))
    assert (errors == []) is accepted, [error.message for error in errors]


def test_hover_shows_the_types_the_daemon_declares() -> None:
    """The schema's allowances for null and `${VAR}` do not show as types in hover."""
    from nexo_pkg.lsp.yaml_help import yaml_navigator

    navigator = yaml_navigator("extensions")
    assert navigator is not None
    types = {
        key: info.types
        for key in ("max_depth", "enabled", "disabled", "entries", "doctor")
        if (info := navigator.key_info(("extensions", key))) is not None
    }
    assert types == {
        "max_depth": ("integer",),
        "enabled": ("boolean",),
        "disabled": ("array",),
        "entries": ("object",),
        "doctor": ("object",),
    }


def test_the_microapp_schema_accepts_what_the_daemon_does_and_no_more() -> None:
    import tomllib

    schema = microapp_schemas()["microapp-manifest.schema.json"]
    validator = jsonschema.Draft202012Validator(schema)
    assert list(validator.iter_errors(tomllib.loads(MICROAPP))) == []
    bad = tomllib.loads(
        MICROAPP.replace('id = "agent_creator"', 'id = "memory"') + "[capabilities.admin]\n"
    )
    assert sorted(error.validator for error in validator.iter_errors(bad)) == [
        "additionalProperties",
        "not",
    ]


def test_discovery_follows_the_daemon(tmp_path: Path) -> None:
    """``discovery.rs:160-375``: ``max_depth`` (3) below each search path, ``ignore_dirs``
    skipped, only manifests the parser accepts, a candidate inside another dropped, the first
    of a duplicate id kept. Entries naming anything else name no microapp that loads."""
    manifests = {
        "a": "a",
        "a/inner": "inner",
        "x/y/z": "deep",
        "target/t": "t",
        "b": "a",
        "bad": "bad",
    }
    for directory, plugin_id in manifests.items():
        path = tmp_path / "extensions" / directory
        path.mkdir(parents=True)
        text = MICROAPP.replace('id = "agent_creator"', f'id = "{plugin_id}"')
        if plugin_id == "bad":
            text = text.replace('tools = ["create_agent"]', "tools = []")
        (path / "plugin.toml").write_text(text, encoding="utf-8")
    text = "extensions:\n  entries:\n" + "".join(
        f"    {name}: {{}}\n" for name in ("a", "inner", "deep", "t", "bad")
    )
    code, found = lint_yaml(tmp_path, "extensions.yaml", text)
    assert (code, found) == (
        0,
        [("NX229", line, "warning") for line in (4, 5, 6, 7)],
    )
    deeper = text.replace("extensions:\n", "extensions:\n  max_depth: 4\n")
    code, found = lint_yaml(tmp_path, "extensions.yaml", deeper)
    assert (code, found) == (0, [("NX229", line, "warning") for line in (5, 7, 8)])


def test_a_large_extensions_yaml_still_decides_where_microapps_are(tmp_path: Path) -> None:
    """The daemon reads extensions.yaml whole, whatever its size (`crates/config/src/lib.rs:
    235-245`): its `search_paths` decide which microapps agents.yaml's `extensions_config` can
    name and which manifests `--config` lints. A file over 1 MiB (lint warns NX007 and reads
    it) was taken for absent there: the default search path was walked instead, the
    microapp went unlinted and agents.yaml got a false NX229."""
    project(tmp_path, None)
    (tmp_path / "extensions").rename(tmp_path / "apps")
    comment = "# " + "x" * 98 + "\n"
    (tmp_path / "config" / "extensions.yaml").write_text(
        comment * 12_000 + GRANTED + "  search_paths: [./apps]\n", encoding="utf-8"
    )
    (tmp_path / "config" / "agents.yaml").write_text(
        "agents:\n  - id: ana\n    extensions_config:\n      agent_creator: {}\n" + MODEL,
        encoding="utf-8",
    )
    code, report = run_lint_json([], "--config", "config", cwd=tmp_path)
    assert code == 0, report
    codes = {
        Path(item["path"]).name: [d["code"] for d in item["diagnostics"]]
        for item in report["files"]
    }
    assert codes == {
        "extensions.yaml": ["NX007"],
        "agents.yaml": ["NX230"],
        "plugin.toml": [],
        "nexo-plugin.toml": [],
    }


def test_an_allowlisted_id_that_is_also_disabled_is_what_the_daemon_warns_about(
    tmp_path: Path,
) -> None:
    """`discovery.rs:329-356` drops `disabled` ids before it reads the allowlist, and warns
    "allowlist contains `{id}` but no extension with that id was discovered" for each
    allowlisted id not among what is left. An id in both lists is such an id; another
    allowlisted id is compared with what is left too, so a disabled microapp is not named as
    one the daemon loads."""
    project(tmp_path, None)
    text = (
        "extensions:\n  entries:\n    agent_creator: {capabilities_grant: [agents_crud]}\n"
        "  disabled: [agent_creator]\n  allowlist: [agent_creator, nada]\n"
    )
    path = tmp_path / "config" / "extensions.yaml"
    path.write_text(text, encoding="utf-8")
    code, report = run_lint_json([path], cwd=tmp_path)
    [entry] = report["files"]
    found = [
        (d["code"], d["key_path"], d["range"]["start"]["column"], d["message"], d["help"])
        for d in entry["diagnostics"]
        if d["code"] == "NX229"
    ]
    assert code == 0
    assert found == [
        (
            "NX229",
            "extensions.allowlist[0]",
            15,
            "`allowlist` id `agent_creator` is also listed under `disabled`: the daemon drops "
            "it before it reads the allowlist, and warns that no extension with that id was "
            "discovered",
            "remove it from `disabled` to load it, or from `allowlist`",
        ),
        (
            "NX229",
            "extensions.allowlist[1]",
            30,
            "`allowlist` id `nada` names no microapp the daemon loads from the search paths "
            "(found: none)",
            "use the microapp's plugin.toml `plugin.id`, or remove the entry",
        ),
    ]
