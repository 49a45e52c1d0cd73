"""`check` beside the SDKs' own conformance kit (mock host + scenarios), on the Python SDK's
conformance fixture and on variants of it broken in one way each.

The daemon's reader is ``crates/core/src/agent/nexo_plugin_registry/subprocess.rs`` (nexo-rs
HEAD eec3f33): tokio ``lines()`` at 377-390 stops at a line that is not UTF-8; a reply with an
``error`` member at all is an error (476: ``parsed.get("error")`` is ``Some`` for ``null``);
lines of any length are read. Host calls are answered by ``handle_child_request`` (915-930),
``memory.recall`` (941-986), ``llm.complete`` (1013-1248); ``broker.publish`` is forwarded
only as a broker ``Event`` (858-906, ``crates/broker/src/types.rs:6-13``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.shared_fixtures import shared_fixture, skip_unless_present

from check.check_plugins import PLUGINS, cli_check, toml_string

KIT = ("plugin-sdks", "conformance")
pytestmark = skip_unless_present(*KIT, "fixtures", "python_fixture.py")

VARIANT = PLUGINS / "kit_variant.py"

MANIFEST = """[plugin]
id = "confplugin"
version = "0.1.0"
name = "Conf"
description = "conformance fixture"
min_nexo_version = ">=0.1.0"
"""


def kit_plugin(root: Path, config: dict[str, Any], *, extra: str = "", mode: str = "") -> Path:
    """A plugin directory whose entrypoint is the kit's Python fixture with ``config`` (the
    manifest injected as the kit's mock host does), wrapped by ``kit_variant.py MODE``."""
    root.mkdir(parents=True)
    manifest = MANIFEST + extra
    fixture = shared_fixture(*KIT, "fixtures", "python_fixture.py")
    argv = [str(fixture), "--config", json.dumps({**config, "manifest": manifest})]
    if mode:
        argv = [str(VARIANT), mode, sys.executable, *argv]
    args = ", ".join(toml_string(arg) for arg in argv)
    (root / "nexo-plugin.toml").write_text(
        f"{manifest}\n[plugin.entrypoint]\ncommand = {toml_string(sys.executable)}\n"
        f"args = [{args}]\n",
        encoding="utf-8",
    )
    return root


def statuses(document: dict[str, Any]) -> dict[str, str]:
    return {check["name"]: check["status"] for check in document["checks"]}


def details(document: dict[str, Any]) -> dict[str, str]:
    return {check["name"]: check["detail"] for check in document["checks"]}


def test_the_kits_mock_host_passes_the_python_fixture() -> None:
    run = shared_fixture(*KIT, "run.py")
    result = subprocess.run(
        [sys.executable, str(run), "--lang", "python"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "# 19/19 scenarios passed for --lang python" in result.stdout


def test_check_passes_the_python_fixture_with_its_host_calls(tmp_path: Path) -> None:
    """Scenario 13's fixture: a tool whose body calls memory.recall mid-invocation."""
    root = kit_plugin(
        tmp_path / "recall",
        {
            "declare_tools": ["confplugin_recall"],
            "tool_handler": "recall_then_return",
            "use_tool_context": True,
        },
        extra='\n[plugin.extends]\ntools = ["confplugin_recall"]\n',
    )
    code, document = cli_check(
        root, "--host-calls", "--invoke", "confplugin_recall", "--args", '{"q": "prefs"}'
    )
    assert code == 0, document["checks"]
    found = statuses(document)
    assert set(found.values()) == {"pass"}, document["checks"]
    assert details(document)["host.memory.recall"] == (
        "1 call(s) answered with a result inside tool.invoke"
    )
    assert document["invoke"]["result"] == {"recalled": ["remembered"], "plugin_id": "confplugin"}
    assert "no broker.event" in details(document)["host.broker"]


def test_check_delivers_broker_events_and_judges_the_sdks_publish(tmp_path: Path) -> None:
    """Scenario 02's fixture publishes on every broker.event. The SDK's event carries `topic`,
    `source` and `payload` but no `id` or `timestamp`, which the daemon's broker Event needs:
    the daemon drops it, a warning (the check still passes)."""
    root = kit_plugin(
        tmp_path / "events",
        {"event_handler": "publish_marker"},
        extra='\n[[plugin.channels.register]]\nkind = "conf"\nadapter = "conf"\n',
    )
    code, document = cli_check(root, "--host-calls")
    assert code == 0, document["checks"]
    broker = details(document)["host.broker"]
    assert statuses(document)["host.broker"] == "warn"
    assert broker.startswith(
        "sent 3 broker.event on plugin.outbound.conf; 3 broker.publish, 0 forwarded; "
        "the daemon drops 3: `plugin.inbound.conf`: `event` has no `id`"
    )
    code, document = cli_check(root, "--host-calls", "--strict")
    assert code == 1


@pytest.mark.parametrize(
    ("mode", "code", "level"),
    [
        # The daemon's reader stops at the non-UTF-8 line: initialize is never answered.
        ("non_utf8", 1, {"frames.utf8": "fail", "initialize": "fail"}),
        # A present `error` member is an error: the daemon refuses the handshake.
        ("error_null", 1, {"initialize": "fail", "frames.jsonrpc": "warn"}),
        # The daemon reads lines of any length: the handshake succeeds, over the SDKs' limit.
        ("big_reply", 0, {"initialize": "pass", "identity": "pass", "frames.size": "warn"}),
    ],
)
def test_check_judges_a_broken_fixture_at_the_daemons_level(
    tmp_path: Path, mode: str, code: int, level: dict[str, str]
) -> None:
    root = kit_plugin(tmp_path / mode, {}, mode=mode)
    got, document = cli_check(root)
    assert got == code, document["checks"]
    found = statuses(document)
    for name, status in level.items():
        assert found[name] == status, document["checks"]
    if mode == "error_null":
        assert "any `error` member is an error" in details(document)["initialize"]


def test_the_docs_table_has_a_row_for_every_scenario_of_the_kit() -> None:
    """docs/check.md says, for each of the kit's scenarios, what `check` does and what the
    daemon does: one row per scenario file, numbered as the kit numbers them."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "check.md").read_text(encoding="utf-8")
    table = docs.split("### The SDKs' conformance kit, scenario by scenario", 1)[1]
    table = table.split("\n## ", 1)[0]
    rows = {
        line.split("|")[1].strip().split(" ", 1)[0]: line
        for line in table.splitlines()
        if line.startswith("| ") and line[2:4].isdigit()
    }
    scenarios = sorted(shared_fixture(*KIT, "scenarios").glob("*.json"))
    assert len(scenarios) == 19
    assert sorted(rows) == [path.name.split("_", 1)[0] for path in scenarios]
    for row in rows.values():
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        assert len(cells) == 3, row
        assert all(cells), row
    sandbox = docs.split("\n## Sandbox\n", 1)[1].split("\n## ", 1)[0]
    for needed in ("--die-with-parent", "--unshare-net", "macOS", "--no-sandbox"):
        assert needed in sandbox, needed
