"""``nexo plugin doctor`` end to end: real installs from local tarballs, real handshakes of
real subprocess plugins, the daemon's discovery configuration."""

from __future__ import annotations

import json
import os
import shutil
from functools import partial
from pathlib import Path

import pytest
from support.cli import nexo
from support.tarballs import (
    Member,
    file,
    manifest_text,
    plugin_members,
    targz,
    tree_snapshot,
    write_plugin,
)

SCRIPTED = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "scripted.py"

# `nexo plugin ...` in this process: these runs need no process of their own.
plugin = partial(nexo, "plugin", in_process=True)


def _members(plugin_id: str, mode: str, requirement: str, extra: str = "") -> list[Member]:
    """A packed plugin whose ``bin/<id>`` runs the scripted test plugin in ``mode``
    (``extra``: more manifest text)."""
    manifest = manifest_text(plugin_id, "1.0.0", extra=extra).replace(
        'min_nexo_version = ">=0.1.0"', f'min_nexo_version = "{requirement}"'
    )
    source = SCRIPTED.read_text().replace(
        'MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"', f"MODE = {mode!r}"
    )
    members = plugin_members(plugin_id, "1.0.0", manifest=manifest)
    return [
        file(member.name, source) if member.name == "lib/plugin/main.py" else member
        for member in members
    ]


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "home"))
    for name in ("NEXO_CONFIG_DIR", "NEXO_DAEMON_VERSION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "plugins"


def _install(
    root: Path, plugin_id: str, mode: str = "ok", *, requirement: str = ">=0.1.0", extra: str = ""
) -> Path:
    members = _members(plugin_id, mode, requirement, extra)
    tarball = write_plugin(root.parent / "dist", plugin_id, "1.0.0", data=targz(members))
    result = plugin("install", str(tarball), "--dest", str(root), "--yes")
    assert result.code == 0, result.stderr
    return root / f"{plugin_id}-1.0.0"


def _doctor(root: Path, *args: str, timeout_ms: str = "2000") -> tuple[int, dict[str, object]]:
    result = plugin("doctor", "--dest", str(root), "--json", "--timeout-ms", timeout_ms, *args)
    assert "Traceback" not in result.stderr
    return result.code, json.loads(result.stdout)


def _findings(document: dict[str, object]) -> list[tuple[str, str, str | None]]:
    found = document["findings"]
    assert isinstance(found, list)
    return [(f["severity"], f["check"], f["id"]) for f in found]


def test_a_healthy_root(root: Path) -> None:
    _install(root, "hello")
    code, document = _doctor(root)
    assert code == 0, document
    assert document["ok"] is True
    assert document["plugins"] == ["hello"]
    assert [f for f in _findings(document) if f[0] == "error"] == []
    result = plugin("doctor", "--dest", str(root))
    assert result.code == 0
    assert "no problem the daemon would trip on" in result.stderr
    # Said once, without brackets nested in brackets.
    assert "daemon version: unknown (give --nexo-version or NEXO_DAEMON_VERSION)\n" in (
        result.stderr
    )


def test_changed_files_and_a_failing_handshake_are_errors(root: Path) -> None:
    installed = _install(root, "hello")
    _install(root, "mute", mode="silent")
    (installed / "lib" / "plugin" / "main.py").write_text("print('changed')\n")
    code, document = _doctor(root)
    assert code == 1
    assert ("error", "verify", "hello") in _findings(document)
    assert ("error", "check", "mute") in _findings(document)
    # Without spawning, only the changed files remain.
    code, document = _doctor(root, "--no-check")
    assert code == 1
    assert [f for f in _findings(document) if f[0] == "error"] == [("error", "verify", "hello")]


def test_min_nexo_version_against_the_daemon(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _install(root, "future", requirement=">=9.0")
    code, document = _doctor(root, "--no-check", "--nexo-version", "0.2.1")
    assert code == 1
    assert ("error", "manifest", "future") in _findings(document)
    assert document["nexo_version"] == {"version": "0.2.1", "source": "--nexo-version"}
    monkeypatch.setenv("NEXO_DAEMON_VERSION", "0.2.1")
    code, document = _doctor(root, "--no-check")
    assert code == 1
    assert document["nexo_version"] == {"version": "0.2.1", "source": "NEXO_DAEMON_VERSION"}


@pytest.mark.parametrize("given", ["flag", "environment"])
def test_a_daemon_version_that_is_no_version_is_a_usage_error(
    root: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    """As for install, lock and sync: ``soon`` is no version to compare with (exit 2, one
    line, a --json document), and nothing is spawned or reported."""
    _install(root, "hello")
    args = ("--nexo-version", "soon") if given == "flag" else ()
    if given == "environment":
        monkeypatch.setenv("NEXO_DAEMON_VERSION", "soon")
    code, document = _doctor(root, *args)
    assert code == 2
    assert document["kind"] == "usage"
    assert "'soon' is not a version" in str(document["error"])
    assert "findings" not in document


@pytest.mark.parametrize(
    ("lists", "state"),
    [
        ("disabled: [mute]", "discovery.disabled"),
        ("allowlist: [loud]", "not in discovery.allowlist"),
    ],
    ids=["disabled", "not-allowlisted"],
)
def test_disabled_plugins_are_not_spawned(
    root: Path, tmp_path: Path, lists: str, state: str
) -> None:
    _install(root, "mute", mode="silent")
    _install(root, "loud")
    config = tmp_path / "config"
    (config / "plugins").mkdir(parents=True)
    (config / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths: ['{root}']\n  {lists}\n"
    )
    result = plugin("doctor", "--json", "--timeout-ms", "2000")
    document = json.loads(result.stdout)
    assert result.code == 0, document
    assert _findings(document) == [("note", "discovery", "mute")]
    [finding] = document["findings"]
    assert finding["message"] == f"{state}: the daemon does not load it"


def test_root_level_findings(root: Path) -> None:
    installed = _install(root, "hello")
    shutil.copytree(installed, root / "hello-copy", symlinks=True)
    (root / ".nexo" / "staging" / "hello-0123456789ab").mkdir(parents=True)
    (root.parent / "nexo-plugins.toml").write_text('[plugins.hello]\nsource = "acme/hello"\n')
    code, document = _doctor(root, "--no-check")
    assert code == 1
    findings = _findings(document)
    assert ("error", "shadowed", "hello") in findings
    assert ("warning", "leftover", None) in findings
    assert ("warning", "lock", None) in findings


@pytest.mark.parametrize("receipt", [None, '{"id":'])
def test_a_plugin_without_a_readable_receipt_still_shadows_one_after_it(
    root: Path, receipt: str | None
) -> None:
    """The daemon reads manifests, not receipts: a copy of a plugin with no receipt (or one
    nexo-pkg cannot read) named before the install is the one it loads; the install is
    reported skipped. A directory whose manifest the daemon refuses shadows nothing."""
    installed = _install(root, "hello")
    copy = root / "a-copy"
    shutil.copytree(installed, copy, symlinks=True)
    if receipt is None:
        (copy / ".nexo-install.json").unlink()
    else:
        (copy / ".nexo-install.json").write_text(receipt)
    refused = root / "b-refused"
    shutil.copytree(installed, refused, symlinks=True)
    (refused / ".nexo-install.json").unlink()
    for name in ("plugin.toml", "nexo-plugin.toml"):
        (refused / name).write_text('[plugin]\nid = "hello"\nversion = "x"\n')
    code, document = _doctor(root, "--no-check")
    assert code == 1, document
    findings = document["findings"]
    assert isinstance(findings, list)
    shadowed = [f for f in findings if f["check"] == "shadowed"]
    assert [(f["id"], f["path"]) for f in shadowed] == [("hello", str(installed))]
    assert str(copy) in shadowed[0]["message"]
    assert [f["path"] for f in findings if f["check"] == "receipt"] == [
        str(copy),
        str(refused),
    ]


def test_a_bad_daemon_configuration_is_a_config_error(root: Path, tmp_path: Path) -> None:
    _install(root, "hello")
    (tmp_path / "config" / "plugins").mkdir(parents=True)
    (tmp_path / "config" / "plugins" / "discovery.yaml").write_text("discovery: [x\n")
    result = plugin("doctor", "--dest", str(root), "--json")
    assert result.code == 2
    assert json.loads(result.stdout)["kind"] == "config"


def test_an_extra_file_is_named(root: Path) -> None:
    installed = _install(root, "hello")
    (installed / "lib" / "plugin" / "extra.bin").write_bytes(b"\0")
    code, document = _doctor(root, "--no-check")
    assert code == 1
    findings = document["findings"]
    assert isinstance(findings, list)
    messages = [finding["message"] for finding in findings]
    assert any("extra.bin" in message for message in messages)


def test_an_id_in_two_search_paths_is_shadowed(root: Path, tmp_path: Path) -> None:
    second = tmp_path / "second"
    _install(root, "hello")
    _install(second, "hello")
    config = tmp_path / "config"
    (config / "plugins").mkdir(parents=True)
    (config / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths: ['{root}', '{second}']\n"
    )
    result = plugin("doctor", "--json", "--no-check")
    document = json.loads(result.stdout)
    assert result.code == 1, document
    assert document["roots"] == [str(root), str(second)]
    shadowed = [f for f in document["findings"] if f["check"] == "shadowed"]
    assert [f["path"] for f in shadowed] == [str(second / "hello-1.0.0")]


def test_concurrent_handshakes_give_the_sequential_report(root: Path) -> None:
    """``--jobs`` spawns several plugins at once; the report (findings, their order, the
    text lines) is the one ``--jobs 1`` gives, and a plugin that never answers fails alone,
    under its own deadline, while the others pass."""
    modes = {
        "alpha": "ok", "bravo": "silent", "charlie": "exit3", "delta": "ok",
        "echo": "banner", "foxtrot": "ok", "golf": "silent",
    }  # fmt: skip
    for plugin_id, mode in modes.items():
        _install(root, plugin_id, mode=mode)
    changed = root / "delta-1.0.0" / "lib" / "plugin" / "main.py"
    changed.write_text("print('changed')\n")
    # Seven interpreters start at once on a busy machine: the deadline leaves the answering
    # plugins room (the silent ones wait it out, one after another with --jobs 1).
    deadline = "5000"
    runs = {jobs: _doctor(root, "--jobs", jobs, timeout_ms=deadline) for jobs in ("1", "4", "8")}
    assert runs["4"] == runs["1"] == runs["8"]
    code, document = runs["8"]
    assert code == 1
    assert document["plugins"] == sorted(modes)
    errors = {f[2] for f in _findings(document) if f[0] == "error"}
    assert errors == {"bravo", "charlie", "delta", "golf"}
    texts = {
        jobs: plugin("doctor", "--dest", str(root), "--timeout-ms", deadline, "--jobs", jobs)
        for jobs in ("1", "8")
    }
    assert texts["1"].stdout == texts["8"].stdout
    assert texts["1"].stdout.count("ERROR") == 5


@pytest.mark.parametrize("jobs", ["0", "65"])
def test_jobs_outside_its_range_is_a_usage_error(root: Path, jobs: str) -> None:
    _install(root, "hello")
    code, document = _doctor(root, "--jobs", jobs)
    assert code == 2
    assert document["kind"] == "usage"
    assert "--jobs takes 1 to 64" in str(document["error"])


def test_verify_hashes_plugins_together_and_reports_as_one_at_a_time(root: Path) -> None:
    """``verify`` hashes several plugins at once; its report is the one a plugin-by-plugin
    pass gives, in the same order, and a changed plugin is marked alone."""
    from nexo_pkg.install.receipts import scan_installed
    from nexo_pkg.install.verify import verify_installed

    ids = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
    for plugin_id in ids:
        _install(root, plugin_id)
    (root / "bravo-1.0.0" / "lib" / "plugin" / "main.py").write_text("changed\n")
    (root / "foxtrot-1.0.0" / "bin" / "foxtrot").unlink()
    (root / "india-1.0.0" / "extra.txt").write_text("extra\n")
    result = plugin("verify", "--dest", str(root), "--json")
    document = json.loads(result.stdout)
    assert result.code == 1
    sequential = [verify_installed(item).to_json() for item in scan_installed(root)]
    assert document["plugins"] == sequential
    assert [entry["id"] for entry in document["plugins"]] == ids
    changed = {entry["id"] for entry in document["plugins"] if not entry["ok"]}
    assert changed == {"bravo", "foxtrot", "india"}
    text = plugin("verify", "--dest", str(root))
    assert [line.split()[:2] for line in text.stdout.splitlines() if line[:1] != " "] == [
        ["CHANGED" if plugin_id in changed else "ok", plugin_id] for plugin_id in ids
    ]


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="the daemon wraps in bwrap only")
def test_a_sandbox_path_reaching_the_host_is_not_spawned(root: Path, tmp_path: Path) -> None:
    """An installed plugin whose write path is a link to `/` (it lints clean, so it installs):
    the daemon would bind the host's root writable; doctor's handshake starts nothing and
    says so."""
    hole = tmp_path / "hole"
    hole.symlink_to("/")
    marker = tmp_path / "started"
    extra = f'\n[plugin.sandbox]\nenabled = true\nfs_write_paths = ["{hole}"]\n'
    manifest = manifest_text("reach", "1.0.0", extra=extra)
    members = [
        file(m.name, f"open({str(marker)!r}, 'w').close()\n")
        if m.name == "lib/plugin/main.py"
        else m
        for m in plugin_members("reach", "1.0.0", manifest=manifest)
    ]
    tarball = write_plugin(root.parent / "dist", "reach", "1.0.0", data=targz(members))
    assert plugin("install", str(tarball), "--dest", str(root), "--yes").code == 0
    code, document = _doctor(root)
    assert code == 1
    findings = document["findings"]
    assert isinstance(findings, list)
    (finding,) = [f for f in findings if f["check"] == "check"]
    assert finding["severity"] == "error"
    assert "resolves to `/`" in finding["message"]
    assert "THE DAEMON WOULD SPAWN IT" in finding["message"]
    assert not marker.exists()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="the daemon wraps in bwrap only")
def test_a_manifest_that_does_not_lint_is_not_spawned(root: Path, tmp_path: Path) -> None:
    """A write path `${state_dir}/../../../..` (NX146: the daemon's textual check lets it
    through and bwrap would bind the host's `/` writable) in an installed plugin's manifest,
    edited there after install, which refuses it: doctor's handshake starts nothing and says
    that the daemon would load and spawn it."""
    marker = tmp_path / "started"
    extra = '\n[plugin.sandbox]\nenabled = true\nfs_write_paths = ["${state_dir}"]\n'
    manifest = manifest_text("reach", "1.0.0", extra=extra)
    members = [
        file(m.name, f"open({str(marker)!r}, 'w').close()\n")
        if m.name == "lib/plugin/main.py"
        else m
        for m in plugin_members("reach", "1.0.0", manifest=manifest)
    ]
    tarball = write_plugin(root.parent / "dist", "reach", "1.0.0", data=targz(members))
    assert plugin("install", str(tarball), "--dest", str(root), "--yes").code == 0
    installed = root / "reach-1.0.0" / "nexo-plugin.toml"
    text = installed.read_text(encoding="utf-8")
    installed.write_text(
        text.replace('"${state_dir}"', '"${state_dir}/../../../.."'), encoding="utf-8"
    )
    code, document = _doctor(root)
    assert code == 1
    findings = document["findings"]
    assert isinstance(findings, list)
    (finding,) = [f for f in findings if f["check"] == "check"]
    assert finding["severity"] == "error"
    assert "NX146" in finding["message"]
    assert "not started" in finding["message"]
    assert "THE DAEMON WOULD LOAD AND SPAWN IT" in finding["message"]
    assert not marker.exists()


def test_concurrent_handshakes_leave_no_process_behind(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plugins spawned side by side are each still ended with everything they started: a
    grandchild that escaped its group with ``setsid`` and a child left sleeping are gone
    when doctor returns, whichever plugin finished first."""
    import time

    modes = {"alpha": "setsid_grandchild", "bravo": "silent", "charlie": "setsid_grandchild"}
    for plugin_id, mode in {**modes, "delta": "ok"}.items():
        _install(root, plugin_id, mode=mode)
    pid_file = tmp_path / "pids"
    monkeypatch.setenv("FIXTURE_PID_FILE", str(pid_file))
    code, document = _doctor(root, "--jobs", "8")
    assert code == 1
    assert {f[2] for f in _findings(document) if f[0] == "error"} == {"bravo"}
    pids = [int(line) for line in pid_file.read_text().split()]
    assert len(pids) == 4 + 2 + 1  # four plugins, two grandchildren, one sleeping child

    def running(pid: int) -> bool:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return False
        return stat.rsplit(")", 1)[1].split()[0] != "Z"

    deadline = time.monotonic() + 3
    while any(running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in pids if running(pid)] == []


def test_a_microapps_handshake_reads_the_grants_of_doctors_config(tmp_path: Path) -> None:
    """doctor's handshake of a microapp answers its admin requests with the grants of the
    configuration directory doctor reads (--config), as `nexo plugin check --config` does."""
    from check.check_microapps import companion, scripted_microapp

    from nexo_pkg.cli.operate import _handshake

    config = tmp_path / "config"
    config.mkdir()
    (config / "extensions.yaml").write_text(
        "extensions:\n  entries:\n    scripted:\n      capabilities_grant: [agents_crud]\n",
        encoding="utf-8",
    )
    root = scripted_microapp(
        tmp_path / "microapp",
        "admin_boot",
        "nexo/admin/agents/list",
        companion=companion("scripted", required=("agents_crud",)),
    )
    ok, _, summary = _handshake(5000, None, config)(root)
    assert ok, summary
    elsewhere = tmp_path / "elsewhere"  # a configuration directory granting nothing
    elsewhere.mkdir()
    (elsewhere / "extensions.yaml").write_text("extensions:\n  entries: {}\n", encoding="utf-8")
    ok, _, summary = _handshake(5000, None, elsewhere)(root)
    assert not ok
    assert summary.startswith('admin: "nexo/admin/agents/list" (app:boot) dropped: required')


@pytest.mark.parametrize("receipt", [None, '{"id":'])
def test_a_plugin_without_a_readable_receipt_is_still_judged_as_the_daemon_would(
    root: Path, receipt: str | None
) -> None:
    """The daemon reads manifests, not receipts: a plugin directory whose receipt is gone (or
    unreadable) is loaded and spawned all the same, so a manifest it refuses or a handshake
    that fails there is an error (exit 1), not only the note that nexo-pkg cannot verify it."""
    future = _install(root, "future", requirement=">=9.0")
    mute = _install(root, "mute", mode="silent")
    for tree in (future, mute):
        if receipt is None:
            (tree / ".nexo-install.json").unlink()
        else:
            (tree / ".nexo-install.json").write_text(receipt)
    code, document = _doctor(root, "--nexo-version", "0.2.1")
    assert code == 1, document
    findings = _findings(document)
    assert ("error", "manifest", "future") in findings
    assert ("error", "check", "mute") in findings
    assert findings.count(("warning", "receipt", None)) == 2
    assert document["plugins"] == []
    text = plugin("doctor", "--dest", str(root), "--no-check", "--nexo-version", "0.2.1")
    assert text.code == 1
    assert "NX105" in text.stdout
    assert "1 error(s)" in text.stderr


@pytest.mark.parametrize(
    ("lock", "message"),
    [
        ("directory", "cannot read it (is not a regular file)"),
        ("x = [", "line 1, column 6: not valid TOML (Invalid value)"),
    ],
)
def test_an_unreadable_lock_is_named_once(root: Path, lock: str, message: str) -> None:
    # The finding's path names the lock; its message says what is wrong, not the name again.
    _install(root, "hello")
    (root.parent / "nexo-plugins.toml").write_text('[plugins.hello]\nsource = "acme/hello"\n')
    lock_path = root.parent / "nexo-plugins.lock"
    if lock == "directory":
        lock_path.mkdir()
    else:
        lock_path.write_text(lock)
    code, document = _doctor(root, "--no-check")
    assert code == 0, document
    findings = document["findings"]
    assert isinstance(findings, list)
    [finding] = [f for f in findings if f["check"] == "lock"]
    assert finding["message"] == message
    text = plugin("doctor", "--dest", str(root), "--no-check")
    assert f"warn   lock       nexo-plugins.lock: {message}" in text.stdout.splitlines()


def test_a_leftover_is_cleaned_by_what_doctor_says_cleans_it(root: Path) -> None:
    """The leftover finding names what cleans it, and that does: an upgrade with nothing
    to install (it takes no lock on the root) is not promised, an install is."""
    _install(root, "hello")
    leftover = root / ".nexo" / "staging" / "hello-0123456789ab"
    leftover.mkdir(parents=True)
    _, document = _doctor(root, "--no-check")
    findings = document["findings"]
    assert isinstance(findings, list)
    (message,) = [f["message"] for f in findings if f["check"] == "leftover"]
    assert message == (
        "left by an interrupted run; the next install, remove, rollback or sync on the root, "
        "or an upgrade that installs a version, deletes it once it can"
    )
    _install(root, "world")
    assert not leftover.exists()
    _, document = _doctor(root, "--no-check")
    assert [f for f in document["findings"] if f["check"] == "leftover"] == []  # type: ignore[attr-defined]


def test_a_reference_receipt_is_a_warning_not_changed_files(root: Path) -> None:
    """A plugin the reference installer put there (its receipt has the ten string fields
    and no file hashes) is loaded by the daemon as any other: doctor says its files cannot
    be checked (a warning, exit 0) and never that they differ from the receipt."""
    path = _install(root, "hello")
    receipt = path / ".nexo-install.json"
    document = json.loads(receipt.read_text())
    reference = {key: document[key] for key in _REFERENCE_FIELDS}
    receipt.write_text(json.dumps({**reference, "tag": "latest"}), newline="\n")
    code, report = _doctor(root, "--no-check")
    assert code == 0, report
    assert report["ok"] is True
    findings = report["findings"]
    assert isinstance(findings, list)
    verify = [f for f in findings if f["check"] == "verify"]
    assert [(f["severity"], f["id"]) for f in verify] == [("warning", "hello")]
    assert "no file hashes to check" in verify[0]["message"]
    assert "differ" not in verify[0]["message"]
    # verify itself still fails for it, as docs/install.md says.
    assert plugin("verify", "--dest", str(root)).code == 1


_REFERENCE_FIELDS = (
    "schema_version", "id", "version", "owner", "repo", "tag", "target", "sha256",
    "installed_at", "source",
)  # fmt: skip


def test_an_unreadable_receipt_without_a_readable_manifest_is_reported(root: Path) -> None:
    """`list` shows such a directory as unreadable and `verify` fails on it: doctor names it
    too (as it names one whose manifest it can read), and does not count it as a plugin."""
    _install(root, "hello")
    broken = root / "other-1.0.0"
    broken.mkdir()
    (broken / ".nexo-install.json").write_text('{"schema_version": NaN}', newline="\n")
    listed = json.loads(plugin("list", "--dest", str(root), "--json").stdout)
    assert [each["path"] for each in listed["unreadable"]] == [str(broken)]
    code, report = _doctor(root, "--no-check")
    assert code == 0, report
    assert report["plugins"] == ["hello"]
    findings = report["findings"]
    assert isinstance(findings, list)
    named = [f for f in findings if f["path"] == str(broken)]
    assert [(f["severity"], f["check"]) for f in named] == [("warning", "receipt")]
    assert named[0]["message"].startswith("receipt unreadable: ")


@pytest.mark.parametrize(
    ("in_place", "kind"),
    [
        (".nexo", "file"),
        pytest.param(
            ".nexo",
            "fifo",
            marks=pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here"),
        ),
        (".nexo/staging", "file"),
        (".nexo/removing", "file"),
        (".nexo/journal", "file"),
        (".nexo/kept", "file"),
        (".nexo/holds", "file"),
    ],
)
def test_a_file_in_place_of_the_bookkeeping_directory_is_an_error(
    root: Path, in_place: str, kind: str
) -> None:
    """Install refuses a root with a file where it keeps its bookkeeping (``.nexo`` or an
    area in it), and so do the other commands that need it: doctor names the file and says
    to move it away, as an error (exit 1), and touches nothing."""
    _install(root, "hello")
    blocked = root / in_place
    if blocked.is_dir():
        shutil.rmtree(blocked)
    blocked.parent.mkdir(exist_ok=True)
    if kind == "fifo":
        os.mkfifo(blocked)
    else:
        blocked.write_text("not a directory\n")
    message = (
        f"a file that is not a directory is in place of {blocked}, where nexo-pkg keeps the "
        "root's bookkeeping, so the commands that need it there fail; move it away"
    )
    before = tree_snapshot(root)
    code, document = _doctor(root, "--no-check")
    assert code == 1, document
    assert (document["ok"], document["errors"]) == (False, 1), document
    findings = document["findings"]
    assert isinstance(findings, list)
    assert [f for f in findings if f["severity"] == "error"] == [
        {"severity": "error", "check": "root", "id": None, "path": str(blocked), "message": message}
    ]
    text = plugin("doctor", "--dest", str(root), "--no-check")
    assert text.code == 1, text.stderr
    assert f"ERROR  root       {blocked.name}: {message}" in text.stdout.splitlines()
    assert text.stderr.splitlines()[-1] == f"1 plugin(s) in {root}: 1 error(s)"
    assert tree_snapshot(root) == before
