"""`nexo plugin lint` agrees with the daemon on its own test corpus and on real manifests.

``daemon-parity/cases.json`` holds manifests taken from the unit tests of the daemon's manifest
crate, each with the daemon's verdict. Every case runs through the real CLI with
``--nexo-version`` set to the daemon version of the corpus and the case's environment: a case
the daemon accepts gets no error (warnings are fine); one it rejects gets at least one error of
a rule that corresponds to the daemon's validating function (``daemon_rule``).

``daemon-parity/real-manifests/`` holds the manifests of the first-party plugin repositories.
Every v2 manifest the newest daemon accepts lints with no error, and the few it refuses (listed
below with the daemon's reason) get the matching error. The extension-shaped ones (root
``[transport]``) are microapp manifests: they are checked with the rules of the daemon's
extension manifest parser (``crates/extensions/src/manifest.rs``), which accepts all of them but
one (listed below).
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from support.lint_cli import run_lint_json
from support.shared_fixtures import shared_fixture, skip_unless_present

PARITY = ("daemon-parity",)
pytestmark = skip_unless_present(*PARITY, "cases.json")

HOST_NET_ALLOW = "NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW"


def _codes(first: int, last: int) -> frozenset[str]:
    return frozenset(f"NX{number:03d}" for number in range(first, last + 1))


# The daemon's validating function (a pattern over ``daemon_rule``) -> the lint codes that
# report what it refuses. The first matching pattern wins, so specific ones come first.
DAEMON_RULE_CODES: tuple[tuple[str, frozenset[str]], ...] = (
    # Parsing: the discovery walker parses the v2 shape only (serde, deny_unknown_fields).
    # Lint decides the kind from the file: an extension-shaped case is a microapp manifest,
    # which the extension parser refuses too (no capabilities, an unknown key).
    (r"nexo_plugin_registry/discovery\.rs", frozenset({"NX190", "NX011"}) | _codes(200, 215)),
    (r"compat_v1\.rs.*try_parse_v2_or_v1", _codes(10, 15)),
    (r"deny_unknown_fields", frozenset({"NX011"})),
    (r"semver::Version", frozenset({"NX101"})),
    (r"PluginSection\.(id|version)\b", frozenset({"NX010"})),
    (r"enum PairingKind", frozenset({"NX013"})),
    # validate::run_all and the section validators it calls.
    (r"visible_when\.rs", frozenset({"NX169"})),
    (r"admin_ui\.rs|fn validate_admin_ui", _codes(160, 174)),
    (r"fn path_under_or_equals_denylist", frozenset({"NX145", "NX146"})),
    (r"fn validate_sandbox_path\b", _codes(142, 147)),
    (r"fn validate_sandbox\b", _codes(141, 147)),
    (r"fn validate_id\b", frozenset({"NX100"})),
    (r"fn validate_min_nexo_version\b", frozenset({"NX104", "NX105"})),
    (r"fn validate_tool_namespace\b", frozenset({"NX113"})),
    (r"fn validate_extends\b", frozenset({"NX110", "NX111", "NX112"})),
    (r"fn validate_deferred_subset\b", frozenset({"NX114"})),
    (r"fn validate_outbound_tools\b", frozenset({"NX115", "NX116"})),
    (r"fn validate_plugin_config_schema\b", frozenset({"NX117"})),
    (r"fn validate_capability_impl\b", frozenset({"NX118"})),
    (r"fn validate_capability_gates_unique\b", frozenset({"NX119"})),
    (r"fn validate_channel_kinds\b", frozenset({"NX120"})),
    (r"fn validate_path_security\b", frozenset({"NX121", "NX122"})),
    (r"fn validate_supervisor\b", _codes(130, 133)),
    (r"fn validate_pairing\b", _codes(150, 154)),
    (r"fn validate_public_tunnel\b", frozenset({"NX155", "NX156"})),
    # run_all itself: any of the validators above.
    (r"fn run_all", _codes(100, 174)),
)


def codes_for_daemon_rule(daemon_rule: str) -> frozenset[str]:
    """The lint codes that stand for the daemon's validating function; empty when unknown."""
    for pattern, codes in DAEMON_RULE_CODES:
        if re.search(pattern, daemon_rule):
            return codes
    return frozenset()


def lint_json(
    paths: Iterable[Path], *args: str, env: dict[str, str] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Run the real CLI once over ``paths`` with ``--format json``: diagnostics by file path."""
    environment = {key: value for key, value in os.environ.items() if key != HOST_NET_ALLOW}
    code, report = run_lint_json(paths, *args, env={**environment, **(env or {})})
    assert code in (0, 1)
    return {entry["path"]: entry["diagnostics"] for entry in report["files"]}


def errors(diagnostics: list[dict[str, Any]]) -> set[str]:
    return {item["code"] for item in diagnostics if item["severity"] == "error"}


@cache
def corpus() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(
        shared_fixture(*PARITY, "cases.json").read_text(encoding="utf-8")
    )
    return document


@cache
def corpus_results() -> dict[str, list[dict[str, Any]]]:
    """Every case linted by the real CLI: one run per daemon version and environment."""
    document = corpus()
    groups: dict[tuple[str, tuple[tuple[str, str], ...]], list[dict[str, Any]]]
    groups = defaultdict(list)
    for case in document["cases"]:
        groups[case_daemon_version(case), tuple(sorted(case["env"].items()))].append(case)
    results: dict[str, list[dict[str, Any]]] = {}
    for (version, env), cases in groups.items():
        paths = [shared_fixture(*PARITY, "cases", case["file"]) for case in cases]
        by_path = lint_json(paths, "--nexo-version", version, env=dict(env))
        for case, path in zip(cases, paths, strict=True):
            results[case["file"]] = by_path[str(path)]
    return results


def case_daemon_version(case: dict[str, Any]) -> str:
    """The daemon version the case was judged at (the corpus default unless it says)."""
    version: str = case.get("daemon_version") or corpus()["daemon_version"]
    return version


def case_ids() -> list[str]:
    path = shared_fixture(*PARITY, "cases.json")
    if not path.exists():
        return []
    document = json.loads(path.read_text(encoding="utf-8"))
    return [case["file"] for case in document["cases"]]


def test_the_corpus_is_the_one_described() -> None:
    document = corpus()
    assert len(document["cases"]) == 190
    verdicts = {case["daemon"] for case in document["cases"]}
    assert verdicts == {"accepts", "rejects"}


@pytest.mark.parametrize("name", case_ids())
def test_lint_agrees_with_the_daemon(name: str) -> None:
    case = next(case for case in corpus()["cases"] if case["file"] == name)
    found = errors(corpus_results()[name])
    if case["daemon"] == "accepts":
        assert found == set(), f"the daemon accepts {name}; lint reports errors {found}"
        return
    expected = codes_for_daemon_rule(case["daemon_rule"])
    assert expected, f"no lint code stands for the daemon rule {case['daemon_rule']!r}"
    assert found & expected, (
        f"the daemon rejects {name} ({case['daemon_error']}, {case['daemon_rule']}); "
        f"lint reports errors {sorted(found)}, expected one of {sorted(expected)}"
    )


def test_every_case_agrees() -> None:
    """The single figure: how many of the daemon's verdicts lint reproduces."""
    disagreements = []
    for case in corpus()["cases"]:
        found = errors(corpus_results()[case["file"]])
        expected = codes_for_daemon_rule(case["daemon_rule"])
        agrees = not found if case["daemon"] == "accepts" else bool(found & expected)
        if not agrees:
            disagreements.append(case["file"])
    assert disagreements == []


def test_the_rule_mapping_is_exercised_and_exact() -> None:
    """Every mapping entry names a daemon rule of the corpus; none is dead weight."""
    rules = [case["daemon_rule"] for case in corpus()["cases"] if case["daemon"] == "rejects"]
    for pattern, _codes_of_rule in DAEMON_RULE_CODES:
        assert any(re.search(pattern, rule) for rule in rules), pattern


# --- real manifests -------------------------------------------------------------------------

MARKETING = "lordmacu/nexo-rs-extension-marketing"

# Real v2 manifests the newest daemon refuses, by (repository, path): the daemon's error and
# the lint codes that must report it. Everything else in the index that is not legacy v1 must
# lint without error.
REAL_REJECTED: dict[tuple[str, str], tuple[str, frozenset[str]]] = {
    # network = "host" needs the operator's NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW=1; the state
    # path `${NEXO_EXTENSION_STATE_ROOT}/marketing` is not absolute for the daemon.
    (MARKETING, "nexo-plugin.toml"): (
        "SandboxHostNetworkWithoutCapability, SandboxRelativePath",
        frozenset({"NX141", "NX144"}),
    ),
    ("lordmacu/nexo-plugin-browser", "nexo-plugin.toml"): (
        "SandboxHostNetworkWithoutCapability",
        frozenset({"NX141"}),
    ),
    # The tool `web_search` equals the plugin id: it lacks the `web_search_` prefix.
    ("lordmacu/nexo-rs-plugin-web-search", "nexo-plugin.toml"): (
        "ToolNamespaceViolation",
        frozenset({"NX113"}),
    ),
}


# Real extension-shaped manifests the daemon's extension parser refuses: its error and the codes.
REAL_MICROAPP_REJECTED: dict[tuple[str, str], tuple[str, frozenset[str]]] = {
    # `[capabilities] skills` is no field of `Capabilities` (manifest.rs:271-287).
    ("lordmacu/nexo-rs", "extensions/ventas-etb/plugin.toml"): (
        "unknown field `skills`",
        frozenset({"NX211"}),
    ),
}


@cache
def real_index() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads(
        shared_fixture(*PARITY, "real-manifests", "index.json").read_text(encoding="utf-8")
    )
    return entries


def real_path(entry: dict[str, Any]) -> Path:
    return shared_fixture(*PARITY, "real-manifests", entry["file"])


def is_legacy_v1(path: Path) -> bool:
    return re.search(r"^\s*\[transport\]", path.read_text(encoding="utf-8"), re.M) is not None


@cache
def real_results(host_net_allowed: bool) -> dict[str, list[dict[str, Any]]]:
    env = {HOST_NET_ALLOW: "1"} if host_net_allowed else {}
    return lint_json([real_path(entry) for entry in real_index()], env=env)


def test_the_real_manifests_are_the_ones_described() -> None:
    assert len(real_index()) == 130
    assert sum(is_legacy_v1(real_path(entry)) for entry in real_index()) > 0


def test_every_real_v2_manifest_the_daemon_accepts_lints_without_error() -> None:
    results = real_results(host_net_allowed=False)
    accepted = 0
    for entry in real_index():
        path = real_path(entry)
        found = errors(results[str(path)])
        rejected = REAL_REJECTED.get((entry["repo"], entry["path"]))
        if is_legacy_v1(path):
            refused = REAL_MICROAPP_REJECTED.get((entry["repo"], entry["path"]))
            assert found == (refused[1] if refused else set()), (entry["file"], found)
        elif rejected is not None:
            reason, codes = rejected
            assert found, (entry["file"], reason)
            assert found <= codes, (entry["file"], reason, found)
        else:
            assert found == set(), (entry["file"], found)
            accepted += 1
    assert accepted >= 40


def test_the_marketing_extension_lints_with_a_warning_only() -> None:
    """Its tool `marketing_lead_detect_meeting_intent` has 36 characters: valid, but a warning."""
    [entry] = [
        entry
        for entry in real_index()
        if entry["repo"] == "lordmacu/nexo-rs-extension-marketing"
        and entry["path"] == "plugin.toml"
    ]
    diagnostics = real_results(host_net_allowed=False)[str(real_path(entry))]
    assert errors(diagnostics) == set()
    long_ids = [item for item in diagnostics if item["code"] == "NX109"]
    assert long_ids
    assert all(item["severity"] == "warning" for item in long_ids)
    assert "marketing_lead_detect_meeting_intent" in long_ids[0]["message"]


def test_host_network_manifests_load_once_the_operator_allows_it() -> None:
    results = real_results(host_net_allowed=True)
    for entry in real_index():
        if entry["repo"] == "lordmacu/nexo-plugin-browser":
            assert errors(results[str(real_path(entry))]) == set()
        if (entry["repo"], entry["path"]) == (
            "lordmacu/nexo-rs-extension-marketing",
            "nexo-plugin.toml",
        ):
            # Still refused: the state path is not absolute.
            assert errors(results[str(real_path(entry))]) == {"NX144"}
