"""`nexo plugin check` end to end: the real CLI checking real plugin processes."""

from __future__ import annotations

import json
import os
import shutil
import sys
from functools import partial
from pathlib import Path

import pytest
from support.cli import nexo
from support.stderr import without_notes
from support.tarballs import tree_snapshot

PLUGINS = Path(__file__).resolve().parent.parent / "fixtures" / "plugins"


def toml_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def sdk_project(root: Path) -> Path:
    """The SDK fixture with its command pointed at this interpreter (which has nexoai)."""
    shutil.copytree(PLUGINS / "sdk_plugin", root)
    manifest = root / "nexo-plugin.toml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8").replace(
            'command = "python3"', f"command = {toml_string(sys.executable)}"
        ),
        encoding="utf-8",
    )
    return root


def scripted_project(root: Path, mode: str) -> Path:
    root.mkdir()
    (root / "nexo-plugin.toml").write_text(
        f"""[plugin]
id = "scripted"
version = "0.1.0"
name = "Scripted"
description = "Test plugin"
min_nexo_version = ">=0.1.0"

[plugin.entrypoint]
command = {toml_string(sys.executable)}
args = [{toml_string(str(PLUGINS / "scripted.py"))}, "{mode}"]
""",
        encoding="utf-8",
    )
    return root


@pytest.fixture(autouse=True)
def _colour_decided_by_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``NO_COLOR``: the report is plain because stdout is not a terminal."""
    monkeypatch.delenv("NO_COLOR", raising=False)


# The check spawns real plugin processes; the CLI itself needs no process of its own.
plugin_check = partial(nexo, "plugin", "check", in_process=True)


def test_conforming_plugin_exits_0_with_ascii_report_on_stdout(tmp_path: Path) -> None:
    root = sdk_project(tmp_path / "sdkdemo")
    result = plugin_check(str(root), "--timeout-ms", "20000")
    assert result.code == 0, result.stderr
    # The report is the command's result: stdout, so it can be piped and counted.
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].startswith("PASS sandbox")
    assert lines[1].startswith("PASS spawn")
    assert any(line.startswith("PASS identity") for line in lines)
    assert lines[-1] == "check passed for sdkdemo: 18 passed, 0 warnings, 0 failed"
    # Not a TTY: plain ASCII, no colour codes; no stderr tail when nothing failed.
    assert result.stdout.isascii()
    assert "plugin stderr" not in result.stdout


def test_default_target_is_the_current_directory(tmp_path: Path) -> None:
    root = sdk_project(tmp_path / "sdkdemo")
    result = plugin_check("--timeout-ms", "20000", cwd=root)
    assert result.code == 0, result.stderr


def test_json_report_is_one_document_with_the_documented_keys(tmp_path: Path) -> None:
    root = sdk_project(tmp_path / "sdkdemo")
    result = plugin_check(
        str(root),
        "--json",
        "--timeout-ms",
        "20000",
        "--invoke",
        "sdkdemo_echo",
        "--args",
        '{"text": "busy"}',
    )
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["ok"] is True
    assert {"ok", "checks", "stderr_tail"} <= set(document)
    for check in document["checks"]:
        assert set(check) == {"name", "status", "detail"}
        assert check["status"] == "pass"
    assert document["stderr_tail"] == ["sdkdemo: starting"]
    assert document["invoke"]["tool"] == "sdkdemo_echo"
    assert document["invoke"]["args"] == {"text": "busy"}
    assert document["invoke"]["error"]["code"] == -33404
    assert document["invoke"]["error"]["data"] == {"retry_after_ms": 250}
    assert result.stderr == ""


def test_failing_check_exits_1_and_shows_the_stderr_tail(tmp_path: Path) -> None:
    root = scripted_project(tmp_path / "banner", "banner")
    relaxed = plugin_check(str(root), "--timeout-ms", "20000")
    assert relaxed.code == 0
    assert "WARN frames.json" in relaxed.stdout
    result = plugin_check(str(root), "--timeout-ms", "20000", "--strict")
    assert result.code == 1
    # The report is the command's result: stdout.
    assert result.stderr == ""
    assert "WARN frames.json" in result.stdout
    assert "stray non-JSON stdout line" in result.stdout
    assert "plugin stderr (last 2 lines):" in result.stdout
    assert "  | scripted: mode banner" in result.stdout
    last = result.stdout.splitlines()[-1]
    assert last.startswith("check failed (--strict: warnings fail) for scripted:")


def test_failing_check_in_json(tmp_path: Path) -> None:
    root = scripted_project(tmp_path / "crash", "crash_after_init")
    result = plugin_check(str(root), "--json", "--timeout-ms", "20000")
    assert result.code == 1
    document = json.loads(result.stdout)
    assert document["ok"] is False
    failed = [check["name"] for check in document["checks"] if check["status"] == "fail"]
    assert failed == ["unknown_method"]
    assert document["stderr_tail"][-1] == "RuntimeError: boom"


def test_warnings_do_not_fail(tmp_path: Path) -> None:
    root = sdk_project(tmp_path / "sdkdemo")
    result = plugin_check(str(root), "--timeout-ms", "20000", "--invoke", "sdkdemo_echo")
    assert result.code == 0, result.stderr
    assert "WARN invoke.args" in result.stdout


def test_nexo_version_is_sent_in_initialize(tmp_path: Path) -> None:
    root = scripted_project(tmp_path / "ok", "ok")
    result = plugin_check(str(root), "--json", "--nexo-version", "1.2.3-beta.1")
    assert result.code == 0, result.stderr
    assert "scripted: nexo_version=1.2.3-beta.1" in json.loads(result.stdout)["stderr_tail"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--invoke", "sdkdemo_echo", "--args", "{not json"], "--args is not valid JSON"),
        (["--invoke", "sdkdemo_echo", "--args", "[1, 2]"], "--args must be a JSON object"),
        # What the daemon's serde_json refuses never goes on the wire (nor into --json).
        (["--invoke", "sdkdemo_echo", "--args", '{"n": NaN}'], "`NaN` is not JSON"),
        (["--invoke", "sdkdemo_echo", "--args", '{"s": "\\ud800"}'], "lone surrogate"),
        (["--args", "{}"], "--args needs --invoke"),
        (["--nexo-version", "v1"], "not a semver version"),
        # As semver::Version parses it: no trailing newline, ASCII digits only, a u64 part.
        (["--nexo-version", "1.0.0\n"], "not a semver version"),
        (["--nexo-version", "1.0.1\u0663"], "not a semver version"),
        (["--nexo-version", "18446744073709551616.0.0"], "not a semver version"),
        (["--timeout-ms", "0"], "--timeout-ms"),
    ],
)
def test_bad_options_are_usage_errors_and_spawn_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: list[str], message: str
) -> None:
    root = sdk_project(tmp_path / "sdkdemo")
    pid_file = tmp_path / "pids"
    monkeypatch.setenv("FIXTURE_PID_FILE", str(pid_file))
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "home"))
    before = tree_snapshot(tmp_path)
    result = plugin_check(str(root), *options)
    assert result.code == 2
    assert message in result.stderr
    assert result.error_line.endswith(" [usage]"), result.stderr
    assert result.stdout == ""
    assert not pid_file.exists(), "the plugin was started despite a usage error"
    assert tree_snapshot(tmp_path) == before  # the project as it was, no NEXO_HOME made


@pytest.mark.parametrize("json_flag", [False, True])
def test_nothing_runnable_is_exit_2_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, json_flag: bool
) -> None:
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "home"))
    result = plugin_check(str(tmp_path), *(["--json"] if json_flag else []))
    assert list(tmp_path.iterdir()) == []  # nothing written there, no NEXO_HOME made
    assert result.code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path}: no plugin.toml or nexo-plugin.toml found; is this a plugin directory? "
        "[target_invalid]"
    ]
    if json_flag:
        document = json.loads(result.stdout)
        assert document["ok"] is False
        assert document["kind"] == "target_invalid"
    else:
        assert result.stdout == ""


def test_a_fifo_planted_as_a_receipt_is_passed_over_not_waited_on(tmp_path: Path) -> None:
    """Looking an id up reads the receipts under the root (and the ids close to a mistyped
    one): a FIFO named ``.nexo-install.json`` is no receipt, and reading it would block the
    command for ever."""
    (tmp_path / "weather-1.0.0").mkdir()
    os.mkfifo(tmp_path / "weather-1.0.0" / ".nexo-install.json")
    result = nexo("plugin", "check", "weather", "--dest", str(tmp_path), "--json", timeout=60)
    assert result.code == 2, result.stderr
    assert json.loads(result.stdout)["kind"] == "target_invalid"
    assert "no installed plugin with that id" in result.stderr
    assert sorted(path.name for path in tmp_path.rglob("*")) == [
        ".nexo-install.json",
        "weather-1.0.0",
    ]


def test_unknown_installed_id_is_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "home"))
    for dest in (tmp_path / "root", None):  # an absent root, given and the default one
        result = plugin_check("weather", *(["--dest", str(dest)] if dest else []))
        assert result.code == 2
        assert "no installed plugin with that id" in result.stderr
        assert result.error_line.endswith(" [target_invalid]"), result.stderr
        assert list(tmp_path.iterdir()) == []  # neither root nor NEXO_HOME made


def test_usage_error_from_a_real_process_has_no_traceback(tmp_path: Path) -> None:
    result = nexo("plugin", "check", str(tmp_path / "missing"))
    assert result.code == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ")


def test_an_ambiguous_target_is_a_usage_error_and_dest_or_a_path_decides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    plugins = home / "state" / "plugins"
    plugins.mkdir(parents=True)
    installed = scripted_project(plugins / "scripted-1.0.0", "ok")
    (installed / ".nexo-install.json").write_text(
        json.dumps({"schema_version": "1.0", "id": "scripted", "version": "1.0.0"}), "utf-8"
    )
    work = tmp_path / "work"
    work.mkdir()
    local = scripted_project(work / "scripted", "ok")
    monkeypatch.setenv("NEXO_HOME", str(home))

    ambiguous = plugin_check("scripted", cwd=work)
    assert ambiguous.code == 2
    [line] = without_notes(ambiguous.stderr).splitlines()
    assert "ambiguous" in line
    assert "./scripted" in line
    assert str(plugins) in line

    chosen = plugin_check("scripted", "--dest", str(plugins), "--json", cwd=work)
    assert chosen.code == 0, chosen.stderr
    assert json.loads(chosen.stdout)["plugin"]["root"] == str(installed.resolve())

    as_path = plugin_check("./scripted", "--json", cwd=work)
    assert as_path.code == 0, as_path.stderr
    assert json.loads(as_path.stdout)["plugin"]["root"] == str(local.resolve())


def test_an_installed_id_is_looked_up_where_the_daemon_config_installs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``./config/plugins/discovery.yaml`` names the root install uses; check looks there."""
    work = tmp_path / "work"
    root = tmp_path / "daemon-plugins"
    (work / "config" / "plugins").mkdir(parents=True)
    (work / "config" / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths:\n    - {root}\n", "utf-8"
    )
    root.mkdir()
    installed = scripted_project(root / "scripted-1.0.0", "ok")
    (installed / ".nexo-install.json").write_text(
        json.dumps({"schema_version": "1.0", "id": "scripted", "version": "1.0.0"}), "utf-8"
    )
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "home"))

    found = plugin_check("scripted", "--json", cwd=work)
    assert found.code == 0, found.stderr
    assert json.loads(found.stdout)["plugin"]["root"] == str(installed.resolve())

    (tmp_path / "empty-config").mkdir()
    elsewhere = plugin_check("scripted", "--config", str(tmp_path / "empty-config"), cwd=work)
    assert elsewhere.code == 2
    assert "no installed plugin with that id" in elsewhere.stderr
