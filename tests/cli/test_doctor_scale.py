"""``nexo plugin doctor`` over plugins that each fail their handshake another way, spawned
side by side: every failure is marked on its own plugin, under its own deadline, and the
report is the one ``--jobs 1`` gives, in text and in JSON."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from .test_doctor import _doctor, _findings, _install, plugin, root

__all__ = ["root"]  # the fixture, used by name

# id -> (mode of the scripted plugin, the severity of its handshake finding: an error where
# the daemon would fail it, a warning where it tolerates what it sees, none for a clean one)
MODES = {
    "alpha": ("ok", None),
    "bravo": ("crash_after_init", "error"),
    "charlie": ("wrong_id", "error"),
    "delta": ("ok", None),
    "echo": ("bad_utf8", "error"),
    "foxtrot": ("huge_line", "warning"),
    "golf": ("ignore_shutdown", "error"),
    "hotel": ("no_jsonrpc", "warning"),
    "india": ("exit3", "error"),
    "juliet": ("ok", None),
}


def test_each_failure_is_its_own_plugins_whatever_the_jobs(root: Path) -> None:
    for plugin_id, (mode, _) in MODES.items():
        _install(root, plugin_id, mode=mode)
    started = time.monotonic()
    runs = {jobs: _doctor(root, "--jobs", jobs, timeout_ms="4000") for jobs in ("1", "8")}
    assert time.monotonic() - started < 120
    assert runs["1"] == runs["8"]
    code, document = runs["8"]
    assert code == 1
    assert document["plugins"] == sorted(MODES)
    failed = {(f[2], f[0]) for f in _findings(document) if f[1] == "check"}
    expected = {(plugin_id, severity) for plugin_id, (_, severity) in MODES.items() if severity}
    assert failed == expected
    texts = {
        jobs: plugin("doctor", "--dest", str(root), "--timeout-ms", "4000", "--jobs", jobs)
        for jobs in ("1", "8")
    }
    assert texts["1"] == texts["8"]


def test_a_plugin_spawned_while_another_is_ended_is_left_alone(root: Path) -> None:
    """Ending a plugin kills what it left behind (children re-parented to doctor), never a
    plugin another job is spawning at that moment: sixteen healthy plugins, eight at a time,
    several runs, and not one handshake cut short."""
    ids = [f"plugin{number:02d}" for number in range(16)]
    for plugin_id in ids:
        _install(root, plugin_id)
    for _ in range(3):
        code, document = _doctor(root, "--jobs", "8", timeout_ms="8000")
        assert [f for f in _findings(document) if f[0] == "error"] == []
        assert code == 0


def test_changed_trees_are_named_on_their_own_plugin(root: Path) -> None:
    """A changed file, a missing one, an extra one and a changed mode, each in its own
    plugin among healthy ones: ``verify`` and ``doctor --no-check`` (both hashing plugins
    side by side) name each change on its plugin and nothing on the others."""
    ids = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    for plugin_id in ids:
        _install(root, plugin_id)
    (root / "bravo-1.0.0" / "lib" / "plugin" / "main.py").write_text("changed\n")
    (root / "delta-1.0.0" / "lib" / "plugin" / "main.py").unlink()
    (root / "foxtrot-1.0.0" / "lib" / "extra.txt").write_text("extra\n")
    (root / "hotel-1.0.0" / "bin" / "hotel").chmod(0o644)
    expected = {
        "bravo": ("modified", "lib/plugin/main.py"),
        "delta": ("missing", "lib/plugin/main.py"),
        "foxtrot": ("extra", "lib/extra.txt"),
        "hotel": ("mode_changed", "bin/hotel"),
    }
    result = plugin("verify", "--dest", str(root), "--json")
    assert result.code == 1
    entries = {entry["id"]: entry for entry in result.document["plugins"]}
    assert list(entries) == ids
    for plugin_id, entry in entries.items():
        changes = {
            (field, path)
            for field in ("modified", "missing", "extra", "mode_changed")
            for path in entry[field]
        }
        assert changes == ({expected[plugin_id]} if plugin_id in expected else set())
        assert entry["ok"] is (plugin_id not in expected)
    text = plugin("verify", "--dest", str(root))
    assert text.stdout.count("CHANGED") == len(expected)
    code, document = _doctor(root, "--no-check")
    assert code == 1
    findings = document["findings"]
    assert isinstance(findings, list)
    verified = {f["id"]: f["message"] for f in findings if f["check"] == "verify"}
    assert verified == {
        plugin_id: f"files differ from the install receipt: {path}"
        for plugin_id, (_, path) in expected.items()
    }


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="the daemon wraps in bwrap only")
def test_plugins_spawned_side_by_side_are_each_in_their_sandbox(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sandboxed plugins among unsandboxed ones, eight at a time: the one that writes
    outside its write paths is refused by its sandbox (the file never appears) and fails
    alone; the report is the one ``--jobs 1`` gives."""
    outside = tmp_path / "outside" / "escaped.txt"
    outside.parent.mkdir()
    monkeypatch.setenv("FIXTURE_WRITE_PATH", str(outside))
    modes = {"alpha": "ok", "bravo": "write_outside", "charlie": "ok", "delta": "ok"}
    for plugin_id, mode in modes.items():
        where = root / f"{plugin_id}-1.0.0"
        sandbox = (
            '\n[plugin.sandbox]\nenabled = true\nnetwork = "deny"\n'
            f"fs_read_paths = [{json.dumps(str(where))}]\n"
            'fs_write_paths = ["${state_dir}"]\n'
        )
        _install(root, plugin_id, mode=mode, extra=sandbox if plugin_id != "delta" else "")
    runs = {jobs: _doctor(root, "--jobs", jobs, timeout_ms="8000") for jobs in ("1", "8")}
    assert runs["1"] == runs["8"]
    code, document = runs["8"]
    assert not outside.exists()
    assert code == 1
    errors = [f for f in _findings(document) if f[0] == "error"]
    assert errors == [("error", "check", "bravo")]
    findings = document["findings"]
    assert isinstance(findings, list)
    (refused,) = [f["message"] for f in findings if f["severity"] == "error"]
    assert "exited with code 3" in refused  # its write was refused, so it gave up
