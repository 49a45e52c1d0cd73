"""``nexo plugin doctor`` over plugins that each fail their handshake another way, spawned
side by side: every failure is marked on its own plugin, under its own deadline, and the
report is the one ``--jobs 1`` gives, in text and in JSON."""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

import pytest
from support.cli import nexo_with_sitecustomize

from nexo_pkg.install.receipts import RECEIPT_NAME

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


# Counts every TOML text the process parses, by its SHA-256, and writes them out on exit:
# ``tomllib.load`` parses through ``tomllib._parser.loads``, ``tomllib.loads`` is that one.
PARSES_COUNTED = """
import atexit, collections, hashlib, json, os, tomllib, tomllib._parser
parsed = collections.Counter()
real = tomllib._parser.loads
def loads(text, /, **options):
    parsed[hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()] += 1
    return real(text, **options)
tomllib.loads = tomllib._parser.loads = loads
atexit.register(lambda: open(os.environ["PARSES_OUT"], "w").write(json.dumps(parsed)))
"""


def _parses(tmp_path: Path, *args: str) -> tuple[int, str, dict[str, int]]:
    """Run ``nexo ARGS`` counting the TOML texts it parses: exit code, stdout, and how many
    times each text (by its SHA-256) was parsed."""
    out = tmp_path / "parses.json"
    out.unlink(missing_ok=True)
    hook = tmp_path / "hook"
    if hook.exists():
        shutil.rmtree(hook)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PARSES_OUT", str(out))
        completed = nexo_with_sitecustomize(tmp_path, PARSES_COUNTED, *args)
    assert "Traceback" not in completed.stderr, completed.stderr
    counted = json.loads(out.read_text())
    assert isinstance(counted, dict)
    return completed.returncode, completed.stdout, counted


def test_verify_and_doctor_no_check_parse_each_manifest_once(root: Path, tmp_path: Path) -> None:
    """``verify`` and ``doctor --no-check`` parse each installed manifest once (doctor's
    lint and its receipt-against-manifest comparison share the document), and a receipt
    edited to name another version is still caught by that comparison."""
    ids = ["alpha", "bravo", "charlie"]
    manifests = {
        plugin_id: hashlib.sha256(
            (_install(root, plugin_id) / "nexo-plugin.toml").read_bytes()
        ).hexdigest()
        for plugin_id in ids
    }
    for args in (["verify"], ["doctor", "--no-check"]):
        code, stdout, counted = _parses(tmp_path, "plugin", *args, "--dest", str(root))
        assert code == 0, stdout
        assert {plugin_id: counted.get(digest) for plugin_id, digest in manifests.items()} == (
            dict.fromkeys(ids, 1)
        ), args
    receipt_path = root / "bravo-1.0.0" / RECEIPT_NAME
    receipt = json.loads(receipt_path.read_text())
    receipt["version"] = "9.9.9"
    receipt_path.write_text(json.dumps(receipt))
    code, stdout, counted = _parses(
        tmp_path, "plugin", "doctor", "--no-check", "--dest", str(root), "--json"
    )
    assert code == 1
    assert counted.get(manifests["bravo"]) == 1
    verified = [f for f in json.loads(stdout)["findings"] if f["check"] == "verify"]
    assert [(f["id"], f["message"]) for f in verified] == [
        (
            "bravo",
            "files differ from the install receipt: the receipt names bravo 9.9.9, but its "
            "nexo-plugin.toml is bravo 1.0.0 (the receipt was edited)",
        )
    ]


def test_doctor_with_handshakes_parses_each_manifest_once(root: Path, tmp_path: Path) -> None:
    """``doctor`` with its handshakes parses each installed manifest once: the handshake
    (its manifest model and its lint refusal) takes the document doctor's lint parsed, while
    the file still holds those bytes, and reports what ``check`` reports."""
    modes = {"alpha": "ok", "bravo": "exit3", "charlie": "undeclared_tool"}
    manifests = {
        plugin_id: hashlib.sha256(
            (_install(root, plugin_id, mode=mode) / "nexo-plugin.toml").read_bytes()
        ).hexdigest()
        for plugin_id, mode in modes.items()
    }
    code, stdout, counted = _parses(
        tmp_path, "plugin", "doctor", "--dest", str(root), "--json", "--timeout-ms", "8000"
    )
    assert code == 1, stdout
    assert {plugin_id: counted.get(digest) for plugin_id, digest in manifests.items()} == (
        dict.fromkeys(modes, 1)
    )
    checked = [
        (f["severity"], f["id"], f["message"])
        for f in json.loads(stdout)["findings"]
        if f["check"] == "check"
    ]
    assert checked == [
        ("error", "bravo",
         "initialize: no reply to initialize: the plugin exited with code 3 before replying"),
        ("error", "charlie",
         "tools.declared: advertised but not in [plugin.extends].tools: charlie_secret (the "
         "daemon refuses to load the plugin)"),
    ]  # fmt: skip


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


def test_the_default_jobs_handshake_side_by_side_each_under_its_own_deadline(root: Path) -> None:
    """Without ``--jobs``, ``doctor`` spawns plugins side by side as ``sync`` does: four
    plugins that never answer each wait out their own deadline at the same time (well under
    the four deadlines one after another that ``--jobs 1`` takes), and both runs give the
    same report, each silent plugin failed on its own line."""
    ids = ["alpha", "bravo", "charlie", "delta"]
    for plugin_id in ids:
        _install(root, plugin_id, mode="silent")
    deadline_ms = 2000
    timed = {}
    for jobs in ((), ("--jobs", "1")):
        started = time.monotonic()
        timed[jobs] = (
            _doctor(root, *jobs, timeout_ms=str(deadline_ms)),
            time.monotonic() - started,
        )
    (default, default_took), (one, one_took) = timed[()], timed[("--jobs", "1")]
    assert default == one
    code, document = default
    assert code == 1
    failed = [(f[2], f[0]) for f in _findings(document) if f[1] == "check"]
    assert failed == [(plugin_id, "error") for plugin_id in ids]
    assert one_took >= len(ids) * deadline_ms / 1000
    # Side by side: one deadline and the spawning, never the four of them in a row.
    assert default_took < (len(ids) - 1) * deadline_ms / 1000, (default_took, one_took)
