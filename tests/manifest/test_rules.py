"""Semantic rules on plain data: identity, versions, entrypoint, extends, tools, supervisor."""

from __future__ import annotations

import copy
import tomllib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nexo_pkg.core.diagnostics import Diagnostic, Span
from nexo_pkg.core.errors import UsageError
from nexo_pkg.lint.explain import explain_text
from nexo_pkg.manifest.daemon import id_problem
from nexo_pkg.manifest.options import LintOptions
from nexo_pkg.manifest.rules import (
    SEMANTIC_RULES,
    check_semantics,
    detect_legacy_v1,
    format_key_path,
)
from nexo_pkg.manifest.rules_context import KeyPath

from .rule_support import BASE, HERE, locate


def run(
    extra: str | None = "", options: LintOptions | None = None, **plugin: Any
) -> list[Diagnostic]:
    data = tomllib.loads(BASE + (extra or ""))
    data["plugin"].update(plugin)
    return check_semantics(data, locate, options or LintOptions())


def found(
    extra: str = "", options: LintOptions | None = None, **plugin: Any
) -> list[tuple[str, str]]:
    return [(d.code, d.key_path) for d in run(extra, options, **plugin)]


def test_minimal_manifest_is_clean() -> None:
    assert run() == []


def test_every_diagnostic_carries_rule_metadata() -> None:
    diagnostics = run(id="Bad", version="v1")
    assert diagnostics
    for diagnostic in diagnostics:
        rule = SEMANTIC_RULES[diagnostic.code]
        assert diagnostic.name == rule.name
        assert diagnostic.severity == rule.severity
        assert diagnostic.url == rule.url
        assert diagnostic.help
        assert diagnostic.span == HERE


def test_rule_catalog_is_complete_and_consistent() -> None:
    for code, rule in SEMANTIC_RULES.items():
        assert code == rule.code
        assert code.startswith("NX")
        assert int(code[2:]) >= 100
        assert rule.name == rule.name.lower()
        assert " " not in rule.name
        assert rule.what
        assert rule.why
        assert rule.example
        assert rule.fix
        assert rule.summary
        if rule.beyond_daemon:
            assert "daemon" in rule.why
            assert "goes beyond the daemon" in explain_text(rule)
    names = [rule.name for rule in SEMANTIC_RULES.values()]
    assert len(names) == len(set(names))


# --- plugin.id ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plugin_id", "reason"),
    [
        ("", "must not be empty"),
        ("1weather", "must not start with a digit"),
        ("Weather", "uppercase letters are not allowed"),
        ("a" * 65, "must be at most 64 characters (it has 65)"),
        ("weather-plugin", "character `-` is not allowed"),
        ("wéather", "character `é` is not allowed"),
        ("_weather", "must start with a lowercase letter"),
    ],
)
def test_plugin_id_reasons(plugin_id: str, reason: str) -> None:
    problem = id_problem(plugin_id)
    assert problem is not None
    assert problem.startswith(reason)
    diagnostics = run(id=plugin_id)
    assert [(d.code, d.key_path) for d in diagnostics][:1] == [("NX100", "plugin.id")]
    assert reason in diagnostics[0].message


@pytest.mark.parametrize("plugin_id", ["a", "weather", "w_2", "a" * 32, "a" * 64, "a_b_c_1_2_3"])
def test_valid_plugin_ids(plugin_id: str) -> None:
    assert id_problem(plugin_id) is None
    assert "NX100" not in [code for code, _ in found(id=plugin_id)]


def test_plugin_id_help_suggests_a_slug() -> None:
    (diagnostic,) = [d for d in run(id="Weather-Plugin") if d.code == "NX100"]
    assert '`id = "weather_plugin"`' in diagnostic.help


def test_plugin_id_of_wrong_type_is_left_to_the_schema() -> None:
    assert found(id=5) == []


# --- version, name, description ----------------------------------------------------------------


@pytest.mark.parametrize("version", ["v1.0.0", "1.0", "01.0.0", "1.0.0 ", "1.0.0-", "1.0.0-01", ""])
def test_invalid_plugin_version(version: str) -> None:
    assert found(version=version) == [("NX101", "plugin.version")]


def test_version_help_drops_the_v_prefix() -> None:
    (diagnostic,) = run(version="v1.2.3")
    assert diagnostic.help == 'write `version = "1.2.3"` without the `v`'


@pytest.mark.parametrize("version", ["0.1.0", "1.2.3-rc.1", "1.2.3+build.7", "10.20.30-a-b.0+x"])
def test_valid_plugin_version(version: str) -> None:
    assert found(version=version) == []


@pytest.mark.parametrize(("key", "code"), [("name", "NX102"), ("description", "NX103")])
@pytest.mark.parametrize("value", ["", "   ", "\t\n", "\u3000"])
def test_blank_name_and_description(key: str, code: str, value: str) -> None:
    data = tomllib.loads(BASE)
    data["plugin"][key] = value
    result = [(d.code, d.key_path) for d in check_semantics(data, locate, LintOptions())]
    assert result == [(code, f"plugin.{key}")]


# --- min_nexo_version --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "requirement", ["", ">= v0.1", "0.1 0.2", "~>1.0", "1.*.2", "*, >=1", "=>1"]
)
def test_invalid_min_nexo_version(requirement: str) -> None:
    diagnostics = run(min_nexo_version=requirement)
    assert [(d.code, d.key_path) for d in diagnostics] == [("NX104", "plugin.min_nexo_version")]


@pytest.mark.parametrize(
    "requirement", [">=0.1.0", "^0.2", "~1.2", "0.3.*", ">=0.1, <0.5", "0.2", "*", "1", ">= 0.1"]
)
def test_valid_min_nexo_version(requirement: str) -> None:
    # At most a warning when no daemon release nexo-pkg knows satisfies it (`~1.2`, `0.3.*`).
    assert [code for code, _ in found(min_nexo_version=requirement)] in ([], ["NX123"])
    assert found(options=LintOptions(nexo_version="0.2.1"), min_nexo_version=requirement) in (
        [],
        [("NX105", "plugin.min_nexo_version")],
    )


@pytest.mark.parametrize(
    ("requirement", "warned"),
    [(">=0.1.0", False), ("^0.2", False), ("<0.1.5", False), (">=0.3", True), ("~1.2", True)],
)
def test_a_requirement_no_known_daemon_satisfies_is_a_warning(
    requirement: str, warned: bool
) -> None:
    diagnostics = run(min_nexo_version=requirement)
    assert [(d.code, d.severity) for d in diagnostics] == ([("NX123", "warning")] if warned else [])


@pytest.mark.parametrize(
    ("requirement", "daemon", "matches"),
    [
        (">=0.1.0", "0.1.6-rc3", True),  # the daemon drops its own pre-release tag
        (">=0.1.6", "0.1.6-rc3", True),
        (">=0.1.7", "0.1.6", False),
        ("^0.2", "0.2.5", True),
        ("^0.2", "0.3.0", False),
        ("0.3.*", "0.3.9", True),
        ("0.3.*", "0.4.0", False),
        (">=0.1, <0.5", "0.5.0", False),
        ("~1.2", "1.2.9+build", True),
        ("=0.2.0-beta", "0.2.0-beta", False),  # stripped to 0.2.0, which the exact pre misses
    ],
)
def test_min_nexo_version_against_daemon(requirement: str, daemon: str, matches: bool) -> None:
    diagnostics = run(options=LintOptions(nexo_version=daemon), min_nexo_version=requirement)
    assert [d.code for d in diagnostics] == ([] if matches else ["NX105"])
    if not matches:
        assert daemon in diagnostics[0].message


def test_mismatch_message_uses_the_normal_form() -> None:
    (diagnostic,) = run(options=LintOptions(nexo_version="0.1.0"), min_nexo_version="0.2")
    assert "`^0.2`" in diagnostic.message


@pytest.mark.parametrize("daemon", ["v0.4.0", "0.4", "latest", ""])
def test_invalid_nexo_version_option_is_a_usage_error(daemon: str) -> None:
    with pytest.raises(UsageError) as caught:
        run(options=LintOptions(nexo_version=daemon))
    assert caught.value.exit_code == 2
    assert caught.value.kind == "usage"


def test_invalid_requirement_is_not_also_a_mismatch() -> None:
    assert [
        d.code for d in run(options=LintOptions(nexo_version="0.1.0"), min_nexo_version="x.y")
    ] == ["NX104"]


# --- entrypoint --------------------------------------------------------------------------------


def test_reserved_env_keys_point_at_each_key() -> None:
    calls: list[tuple[KeyPath, str]] = []

    def recording(path: KeyPath, part: str) -> Span:
        calls.append((path, part))
        return HERE

    data = tomllib.loads(
        BASE + '[plugin.entrypoint]\ncommand = "./bin/weather"\n'
        '[plugin.entrypoint.env]\nNEXO_HOME = "x"\nAPP_MODE = "y"\nNEXO_TOKEN = "z"\n'
    )
    diagnostics = check_semantics(data, recording, LintOptions())
    assert [(d.code, d.key_path) for d in diagnostics] == [
        ("NX106", "plugin.entrypoint.env.NEXO_HOME"),
        ("NX106", "plugin.entrypoint.env.NEXO_TOKEN"),
    ]
    assert (("plugin", "entrypoint", "env", "NEXO_HOME"), "key") in calls
    assert diagnostics[0].help == "rename it without the prefix, e.g. `WEATHER_HOME`"


@pytest.mark.parametrize("command", ["", "   "])
def test_empty_command(command: str) -> None:
    assert found(f'[plugin.entrypoint]\ncommand = "{command}"\n') == [
        ("NX107", "plugin.entrypoint.command")
    ]


@pytest.mark.parametrize(
    "command",
    [
        "/usr/bin/python3",
        "python3",
        "./bin/weather",
        "./weather",
        "./bin/../weather",
        "node",
        "C:\\x.exe",
    ],
)
def test_valid_commands(command: str) -> None:
    assert found(f"[plugin.entrypoint]\ncommand = '{command}'\n") == []


@pytest.mark.parametrize(
    ("command", "fix"),
    [
        ("bin/weather", 'write `command = "./bin/weather"`'),
        ("../weather", "put the program inside the plugin and write `./<path>`"),
        ("./../weather", "put the program inside the plugin and write `./<path>`"),
        ("./bin/../../x", "put the program inside the plugin and write `./<path>`"),
        ("./", "write `./bin/<program>`"),
        (".", 'write e.g. `command = "./bin/plugin"`'),
        (" ./bin/x", 'write `command = "./bin/x"`'),
        (" ./bin\\x", 'write `command = "./bin\\\\x"`'),
        ("./bin\\weather", 'write `command = "./bin/weather"`'),
        (".\\bin\\weather", 'write `command = "./bin/weather"`'),
        ("bin\\weather", 'write `command = "./bin/weather"`'),
    ],
)
def test_invalid_commands(command: str, fix: str) -> None:
    diagnostics = run(f"[plugin.entrypoint]\ncommand = '{command}'\n")
    assert [(d.code, d.help) for d in diagnostics] == [("NX108", fix)]


def test_absent_command_is_fine() -> None:
    assert found('[plugin.entrypoint]\nargs = ["x"]\n') == []


# --- extends -----------------------------------------------------------------------------------


def test_extends_ids_duplicates_and_conflicts() -> None:
    extra = """
[plugin.extends]
channels = ["sms", "Bad-Id", "sms", "sms", 7]
hooks = ["sms", "before_send"]
memory_backends = ["before_send", "sms"]
tools = ["weather_now"]
"""
    assert found(extra) == [
        ("NX110", "plugin.extends.channels[1]"),
        ("NX111", "plugin.extends.channels[2]"),
        ("NX111", "plugin.extends.channels[3]"),
        ("NX112", "plugin.extends.memory_backends[1]"),
        ("NX112", "plugin.extends.hooks[1]"),
    ]
    conflicts = [d.message for d in run(extra) if d.code == "NX112"]
    assert "(channels, memory_backends, hooks)" in conflicts[0]
    assert "(memory_backends, hooks)" in conflicts[1]


def test_extends_id_longer_than_64_is_invalid_and_33_to_64_a_warning() -> None:
    assert found(f'[plugin.extends]\nhooks = ["{"h" * 65}"]\n') == [
        ("NX110", "plugin.extends.hooks[0]")
    ]
    long_ones = run(f'[plugin.extends]\nhooks = ["{"h" * 33}", "{"h" * 64}"]\n')
    assert [(d.code, d.severity) for d in long_ones] == [("NX109", "warning")] * 2
    assert found(f'[plugin.extends]\nhooks = ["{"h" * 32}"]\n') == []


@pytest.mark.parametrize(
    ("tool", "suggestion"),
    [
        ("get_forecast", "weather_get_forecast"),
        ("weatherget", "weather_get"),
        ("Weather.Get", "weather_get"),
        ("ext_weather", "weather_<name>"),
        ("weather", "weather_<name>"),
    ],
)
def test_tool_namespace_suggests_the_fixed_name(tool: str, suggestion: str) -> None:
    diagnostics = run(f'[plugin.extends]\ntools = ["{tool}"]\n')
    namespace = [d for d in diagnostics if d.code == "NX113"]
    assert len(namespace) == 1
    assert namespace[0].help == f"rename it to `{suggestion}`"
    assert namespace[0].key_path == "plugin.extends.tools[0]"


def test_tool_namespace_waits_for_a_valid_plugin_id() -> None:
    extra = '[plugin.tools]\nexpose = ["weather_now"]\n[plugin.extends]\ntools = ["now"]\n'
    assert found(extra, id="Weather") == [("NX100", "plugin.id")]


def test_tool_namespace_accepts_both_prefixes_on_expose() -> None:
    extra = '[plugin.tools]\nexpose = ["weather_now", "ext_weather_now", "weatherx", "other_now"]\n'
    assert found(extra) == [
        ("NX113", "plugin.tools.expose[2]"),
        ("NX113", "plugin.tools.expose[3]"),
    ]


# --- tools -------------------------------------------------------------------------------------


def test_deferred_must_be_exposed() -> None:
    extra = '[plugin.tools]\nexpose = ["weather_a"]\ndeferred = ["weather_a", "weather_b"]\n'
    assert found(extra) == [("NX114", "plugin.tools.deferred[1]")]


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ("   ", "input_schema is empty"),
        ("{", "invalid JSON: "),
        ("NaN", "invalid JSON: "),
        ("[1]", "input_schema must be a JSON object"),
        ("{}", 'root `type` must be "object", got "missing"'),
        ('{"type": 1}', 'root `type` must be "object", got "missing"'),
        ('{"type": "array"}', 'root `type` must be "object", got "array"'),
    ],
)
def test_outbound_input_schema(schema: str, reason: str) -> None:
    extra = f"""
[plugin.tools]
expose = ["weather_now"]
[[plugin.tools.outbound]]
name = "weather_now"
description = "x"
input_schema = '{schema}'
"""
    diagnostics = run(extra)
    assert [(d.code, d.key_path) for d in diagnostics] == [
        ("NX116", "plugin.tools.outbound[0].input_schema")
    ]
    assert reason in diagnostics[0].message


def test_outbound_name_must_be_exposed() -> None:
    extra = """
[plugin.tools]
expose = ["weather_now"]
[[plugin.tools.outbound]]
name = "weather_now"
description = "x"
input_schema = '{"type": "object"}'
[[plugin.tools.outbound]]
name = "weather_later"
description = "x"
input_schema = '{"type": "object", "properties": {}}'
"""
    assert found(extra) == [("NX115", "plugin.tools.outbound[1].name")]


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ("", "config_schema is empty"),
        ("{'a': 1}", "invalid JSON"),
        ('"object"', "schema must be a JSON object"),
        ('{"type": "array"}', 'got "array"'),
    ],
)
def test_config_schema(schema: str, reason: str) -> None:
    extra = f"[plugin.config_schema]\nschema = '''{schema}'''\nshape = \"array\"\n"
    diagnostics = run(extra)
    assert [(d.code, d.key_path) for d in diagnostics] == [("NX117", "plugin.config_schema.schema")]
    assert reason in diagnostics[0].message


def test_valid_config_schema() -> None:
    assert (
        found('[plugin.config_schema]\nschema = \'{"type": "object"}\'\nshape = "object"\n') == []
    )


# --- capabilities, gates, channels ---------------------------------------------------------------


def test_capabilities_without_implementation() -> None:
    extra = """
[plugin.capabilities]
provides = ["tools", "advisors", "agents", "skills", "channels", "hooks", "mcp_servers", "tools"]
[plugin.tools]
expose = []
"""
    assert found(extra) == [
        ("NX118", "plugin.capabilities.provides[0]"),
        ("NX118", "plugin.capabilities.provides[1]"),
        ("NX118", "plugin.capabilities.provides[2]"),
        ("NX118", "plugin.capabilities.provides[3]"),
        ("NX118", "plugin.capabilities.provides[4]"),
        ("NX118", "plugin.capabilities.provides[7]"),
    ]


def test_capabilities_with_implementation() -> None:
    extra = """
[plugin.capabilities]
provides = ["tools", "advisors", "agents", "skills", "channels"]
[plugin.tools]
expose = ["weather_now"]
[plugin.advisors]
register = ["a"]
[plugin.agents]
contributes_dir = ""
[plugin.skills]
contributes_dir = "skills"
[[plugin.channels.register]]
kind = "sms"
adapter = "sms"
"""
    assert found(extra) == []


def test_duplicate_gate_env_var_once_per_repeat() -> None:
    gate = (
        '[[plugin.capability_gates.gate]]\nextension = "e"\nenv_var = "{}"\n'
        'kind = "Boolean"\nrisk = "Low"\neffect = "x"\n'
    )
    extra = gate.format("A") + gate.format("B") + gate.format("A") + gate.format("A")
    assert found(extra) == [
        ("NX119", "plugin.capability_gates.gate[2].env_var"),
        ("NX119", "plugin.capability_gates.gate[3].env_var"),
    ]


@pytest.mark.parametrize(
    ("kind", "bad"),
    [("sms", False), ("SMS", True), ("s" * 33, True), ("a-b", True), ("s" * 32, False)],
)
def test_channel_kind(kind: str, bad: bool) -> None:
    extra = f'[[plugin.channels.register]]\nkind = "{kind}"\nadapter = "x"\n'
    assert found(extra) == ([("NX120", "plugin.channels.register[0].kind")] if bad else [])


# --- relative path fields ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("/opt/skills", "NX121"),
        ("C:\\skills", "NX121"),
        ("../skills", "NX122"),
        ("a/../../b", "NX122"),
        ("a\\..\\b", "NX122"),
        ("skills", None),
        ("", None),
        ("a/..b/c", None),
        ("./skills", None),
    ],
)
def test_relative_path_fields(value: str, code: str | None) -> None:
    for section, key in (
        ("agents", "contributes_dir"),
        ("skills", "contributes_dir"),
        ("config", "schema_path"),
    ):
        result = found(f"[plugin.{section}]\n{key} = '{value}'\n")
        assert result == ([(code, f"plugin.{section}.{key}")] if code else [])


# --- supervisor ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("stderr_tail_lines = 513", [("NX130", "plugin.supervisor.stderr_tail_lines")]),
        ("stderr_tail_lines = 512", []),
        ("respawn = false\nmax_attempts = 0\nbackoff_ms = 1", []),
        ("respawn = true\nmax_attempts = 0", [("NX131", "plugin.supervisor.max_attempts")]),
        ("respawn = true\nbackoff_ms = 99", [("NX132", "plugin.supervisor.backoff_ms")]),
        ("respawn = true\nbackoff_ms = 100", []),
        ("respawn = true\nbackoff_ms = 300000", []),
        ("respawn = true\nbackoff_ms = 300001", [("NX133", "plugin.supervisor.backoff_ms")]),
        ("respawn = true", []),  # defaults 3 attempts and 1000 ms are within bounds
        ("respawn = true\nmax_attempts = 1.0\nbackoff_ms = 5.0", []),  # floats: schema's job
        ("respawn = true\nbackoff_ms = -5", []),  # negative: schema's job
        ("respawn = true\nmax_attempts = true", []),
    ],
)
def test_supervisor(body: str, expected: list[tuple[str, str]]) -> None:
    assert found(f"[plugin.supervisor]\n{body}\n") == expected


# --- legacy v1 ----------------------------------------------------------------------------------


def test_legacy_v1_diagnostic_at_transport_header() -> None:
    calls: list[tuple[KeyPath, str]] = []

    def recording(path: KeyPath, part: str) -> Span:
        calls.append((path, part))
        return HERE

    data = tomllib.loads(
        '[plugin]\nid = "w"\nversion = "0.1.0"\nmin_agent_version = "0.1"\n'
        '[transport]\nkind = "stdio"\ncommand = "./w"\n[capabilities]\ntools = ["x"]\n'
    )
    diagnostic = detect_legacy_v1(data, recording)
    assert diagnostic is not None
    assert (diagnostic.code, diagnostic.name, diagnostic.key_path) == (
        "NX190",
        "legacy-v1-manifest",
        "transport",
    )
    assert calls == [(("transport",), "key")]
    assert "[plugin.entrypoint]" in diagnostic.help
    assert "min_nexo_version" in diagnostic.help
    assert "[capabilities]" in diagnostic.help


def test_v2_document_is_not_legacy() -> None:
    assert detect_legacy_v1(tomllib.loads(BASE), locate) is None


# --- robustness --------------------------------------------------------------------------------

FULL = """
[plugin]
id = "weather"
version = "0.1.0"
name = "Weather"
description = "Forecasts"
min_nexo_version = ">=0.1.0"
[plugin.capabilities]
provides = ["tools", "channels", "agents"]
[plugin.tools]
expose = ["weather_now"]
deferred = ["weather_now"]
[[plugin.tools.outbound]]
name = "weather_now"
description = "x"
input_schema = '{"type": "object"}'
[plugin.agents]
contributes_dir = "agents"
[[plugin.channels.register]]
kind = "sms"
adapter = "sms"
[plugin.config_schema]
schema = '{"type": "object"}'
shape = "object"
[plugin.extends]
tools = ["weather_now"]
hooks = ["h"]
[[plugin.capability_gates.gate]]
extension = "e"
env_var = "A"
kind = "Boolean"
risk = "Low"
effect = "x"
[plugin.pairing]
kind = "qr"
[plugin.pairing.trigger]
start_method = "nexo/admin/weather/start"
cancel_method = "nexo/admin/weather/cancel"
[plugin.public_tunnel]
close_on_event = "weather.paired"
[plugin.entrypoint]
command = "./bin/weather"
env = { MODE = "x" }
[plugin.supervisor]
respawn = true
[plugin.sandbox]
enabled = true
fs_read_paths = ["/etc/ssl/certs"]
fs_write_paths = ["${state_dir}/cache"]
[plugin.poller]
kinds = ["feed"]
broker_topic_prefix = "plugin.weather.poll"
[plugin.dashboard]
layout = { kind = "workspace_walk", subdir = "sessions" }
auth_check = { kind = "file_presence", path = "token.json" }
[plugin.metrics]
prometheus = true
broker_topic_prefix = "plugin.weather.metrics"
[plugin.admin]
method_prefix = "nexo/admin/weather/"
broker_topic_prefix = "plugin.weather.admin"
[plugin.http]
mount_prefix = "/weather"
[plugin.admin_ui]
[[plugin.admin_ui.screens]]
id = "main"
title = { en = "Weather" }
load = "nexo/admin/weather/load"
[[plugin.admin_ui.screens.fields]]
key = "unit"
type = "select"
label = "Unit"
options = [{ value = "c", label = "Celsius" }]
visible_when = "mode == 'advanced' && !hidden"
[[plugin.admin_ui.contributions]]
id = "weather"
label = "Weather"
slot = "core.sidebar.integrations"
icon = "cloud"
screen = "main"
"""

_ODD_VALUES: list[Any] = [None, 0, -1, 1.5, True, "", "x", [], [1, None], {}, {"a": [{}]}, [[{}]]]


def _paths(value: Any, prefix: KeyPath = ()) -> list[KeyPath]:
    paths = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            paths.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            paths.extend(_paths(item, (*prefix, index)))
    return paths


def test_full_manifest_is_clean() -> None:
    assert run(FULL[FULL.index("[plugin.capabilities]") :]) == []


def test_wrong_types_anywhere_never_crash() -> None:
    original = tomllib.loads(FULL)
    for path in _paths(original)[1:]:
        for odd in _ODD_VALUES:
            data = copy.deepcopy(original)
            parent: Any = data
            for part in path[:-1]:
                parent = parent[part]
            if odd is None:
                del parent[path[-1]]
            else:
                parent[path[-1]] = odd
            for diagnostic in check_semantics(data, locate, LintOptions(nexo_version="0.2.0")):
                assert diagnostic.code in SEMANTIC_RULES


@pytest.mark.parametrize("root", [{}, {"plugin": 3}, {"plugin": []}, {"plugin": {"id": None}}])
def test_odd_roots(root: dict[str, Any]) -> None:
    assert check_semantics(root, locate, LintOptions()) == []


@pytest.mark.parametrize(
    ("path", "text"),
    [
        (("plugin", "extends", "tools", 1), "plugin.extends.tools[1]"),
        (("plugin", "ui", "fields", "a.b"), 'plugin.ui.fields."a.b"'),
        (("transport",), "transport"),
    ],
)
def test_format_key_path(path: KeyPath, text: str) -> None:
    assert format_key_path(path) == text


_scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(["host", "rpc", "form", "custom", "qr", "select", "${state_dir}", "/etc"]),
)
_KEYS = [
    *("id", "kind", "key", "type", "parent", "slot", "method", "fields", "screens", "actions"),
    *("contributions", "label", "title", "enabled", "network", "fs_read_paths", "expose"),
    *("fs_write_paths", "outbound", "register", "gate", "env_var", "trigger", "layout"),
    *("auth_check", "options_source", "prompt_fields", "refresh", "visible_when", "respawn"),
]
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(_KEYS),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)
_SECTIONS = [
    "id",
    "tools",
    "extends",
    "sandbox",
    "pairing",
    "admin_ui",
    "entrypoint",
    "supervisor",
    "capabilities",
    "channels",
    "capability_gates",
    "config_schema",
    "poller",
    "dashboard",
    "metrics",
    "admin",
    "http",
    "public_tunnel",
    "agents",
    "skills",
    "config",
]


@given(section=st.sampled_from(_SECTIONS), value=_values)
def test_random_values_in_any_section_never_crash(section: str, value: Any) -> None:
    data = tomllib.loads(FULL)
    data["plugin"][section] = value
    for diagnostic in check_semantics(data, locate, LintOptions(host_net_allowed=False)):
        assert diagnostic.code in SEMANTIC_RULES
