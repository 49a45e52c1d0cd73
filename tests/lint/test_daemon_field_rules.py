"""Field rules of ``[plugin]`` that no other test pins, read from the daemon's manifest crate.

Source: ``lordmacu/nexo-rs`` at 17fc8cdf17c652e9288c23f3c284943c29162867 (the newest stored
version of ``crates/plugin-manifest/src``; the daemon-parity corpus was taken from it).
Each row names the struct field or validator it comes from. Every case runs through the real
``nexo plugin lint --format json`` CLI at ``--nexo-version 0.1.0``: a manifest the daemon
accepts gets no error, one it refuses gets the named error.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.lint_cli import run_lint_json
from support.toml_texts import WEATHER_MANIFEST as BASE

GATE = """
[[plugin.capability_gates.gate]]
extension = "weather"
env_var = "WEATHER_{env}"
kind = "{kind}"
risk = "{risk}"
effect = "e"
"""
OUTBOUND = """
[plugin.tools]
expose = ["weather_now"]
[[plugin.tools.outbound]]
name = "weather_now"
description = ""
input_schema = '{{"type":"object"}}'
timeout_ms = {timeout}
"""

# (case id, text after BASE (or a whole document when it starts with "manifest_version"),
#  the error code lint must report, or None when the daemon accepts it)
CASES: list[tuple[str, str, str | None]] = [
    # manifest.rs PluginSection.http_server: Option<toml::Value>, opaque (any TOML value).
    ("http-server-string", 'http_server = "x"\n', None),
    ("http-server-array", 'http_server = [1, "a", {b = 2}]\n', None),
    ("http-server-table", '[plugin.http_server]\nport_env = "P"\nany = {deep = [1]}\n', None),
    # manifest.rs CapabilityGatesSection.gates: #[serde(default, rename = "gate")].
    (
        "gates-spelled-as-the-rust-field",
        GATE.replace(".gate]", ".gates]").format(env="A", kind="Boolean", risk="Low"),
        "NX011",
    ),
    ("gate-pascal-case", GATE.format(env="A", kind="CargoFeature", risk="Critical"), None),
    # GateKind / GateRisk: #[serde(rename_all = "PascalCase")].
    ("gate-kind-lowercase", GATE.format(env="A", kind="boolean", risk="Low"), "NX013"),
    ("gate-risk-lowercase", GATE.format(env="A", kind="Boolean", risk="low"), "NX013"),
    # validate.rs validate_capability_gates_unique: env_var unique across gates.
    (
        "gate-env-var-twice",
        GATE.format(env="A", kind="Boolean", risk="Low")
        + GATE.format(env="A", kind="Allowlist", risk="High"),
        "NX119",
    ),
    # ConfigShape: #[serde(rename_all = "lowercase")], used by config_schema.shape and
    # credentials_schema.accounts_shape.
    (
        "config-shape-capitalised",
        '[plugin.config_schema]\nschema = \'{"type":"object"}\'\nshape = "Object"\n',
        "NX013",
    ),
    (
        "config-shape-array",
        '[plugin.config_schema]\nschema = \'{"type":"object"}\'\nshape = "array"\n',
        None,
    ),
    (
        "accounts-shape-array",
        '[plugin.credentials_schema]\nenabled = true\naccounts_shape = "array"\n',
        None,
    ),
    ("accounts-shape-unknown", '[plugin.credentials_schema]\naccounts_shape = "list"\n', "NX013"),
    # Capability: #[serde(rename_all = "snake_case")].
    ("provides-capitalised", '[plugin.capabilities]\nprovides = ["Tools"]\n', "NX013"),
    # UiHint: deny_unknown_fields, six optional keys.
    (
        "ui-hint-every-key",
        '[plugin.ui.fields."a.b"]\nlabel = "x"\nhelp = "h"\ntags = ["t"]\n'
        'advanced = true\nsensitive = true\nplaceholder = "p"\n',
        None,
    ),
    ("ui-hint-unknown-key", '[plugin.ui.fields."a.b"]\nwidget = "x"\n', "NX011"),
    # RequiresSection: bins, env, features, nexo_capabilities; MetaSection: four strings.
    (
        "requires-every-key",
        '[plugin.requires]\nbins = ["git"]\nenv = ["X"]\nfeatures = ["f"]\n'
        'nexo_capabilities = ["broker"]\n',
        None,
    ),
    ("meta-unknown-key", '[plugin.meta]\nkeywords = ["a"]\n', "NX011"),
    # OutboundToolSpec.timeout_ms: Option<u64>.
    ("outbound-timeout-zero", OUTBOUND.format(timeout="0"), None),
    ("outbound-timeout-negative", OUTBOUND.format(timeout="-1"), "NX014"),
    # PluginManifest.manifest_version: u32 (a string fails both the v2 and the v1 parse).
    ("manifest-version-string", 'manifest_version = "2"\n' + BASE, "NX012"),
    # validate.rs validate_public_tunnel: only a whole `*` or `>` segment is a wildcard.
    (
        "close-on-event-star-inside-a-segment",
        '[plugin.public_tunnel]\nclose_on_event = "plugin.wa.b*"\n',
        None,
    ),
    (
        "close-on-event-tail-wildcard",
        '[plugin.public_tunnel]\nclose_on_event = "plugin.wa.>"\n',
        "NX156",
    ),
    # validate.rs validate_pairing: returns at once when `kind` is absent, trigger included.
    (
        "pairing-trigger-without-kind",
        '[plugin.pairing.trigger]\nstart_method = ""\ncancel_method = ""\n',
        None,
    ),
    # validate.rs validate_supervisor: max_attempts/backoff_ms only bound when respawn = true.
    (
        "supervisor-bounds-without-respawn",
        "[plugin.supervisor]\nrespawn = false\nmax_attempts = 0\nbackoff_ms = 0\n",
        None,
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_field_rule_agrees_with_the_daemon(tmp_path: Path, text: str, expected: str | None) -> None:
    document = text if text.startswith("manifest_version") else BASE + text
    (tmp_path / "plugin.toml").write_text(document, encoding="utf-8", newline="\n")
    code, report = run_lint_json([tmp_path], "--nexo-version", "0.1.0")
    diagnostics = [item for entry in report["files"] for item in entry["diagnostics"]]
    errors = {item["code"] for item in diagnostics if item["severity"] == "error"}
    if expected is None:
        assert errors == set(), f"the daemon accepts this manifest; lint reports {errors}"
        assert code == 0
    else:
        assert expected in errors, f"the daemon refuses this manifest; lint reports {errors}"
        assert code == 1
