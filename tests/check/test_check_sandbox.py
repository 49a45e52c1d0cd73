"""`check` spawns a plugin inside the sandbox the daemon builds for it, with real ``bwrap``.

The daemon's runner is ``crates/core/src/agent/plugin_sandbox.rs`` in lordmacu/nexo-rs
(commit 9de9b39): ``SandboxRunner::wrap_command`` refuses on ``NEXO_PLUGIN_SANDBOX_REQUIRE``
with the sandbox off, on ``network = "host"`` without ``NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW``,
and, when required, on a missing ``bwrap`` or macOS; otherwise it degrades to an unsandboxed
run with a warning. ``build_bwrap_args`` binds each ``fs_read_paths`` entry with
``--ro-bind`` and each ``fs_write_paths`` entry with ``--bind`` after ``${state_dir}``
expansion, and adds ``--unshare-net`` unless ``network = "host"``. Tests that need ``bwrap``
skip, with the reason, where it cannot run.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo

from check.check_plugins import SCRIPTED, cli_check, scripted_plugin, toml_string


def _bwrap_problem() -> str | None:
    """Why the daemon's kind of ``bwrap`` call cannot run here, or None when it can."""
    bwrap = shutil.which("bwrap")
    if bwrap is None or not sys.platform.startswith("linux"):
        return "bwrap is not installed (apt install bubblewrap)"
    probe = [
        bwrap,
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-net",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        *[
            part
            for directory in ("/usr", "/bin", "/lib", "/lib64")
            for part in ("--ro-bind-try", directory, directory)
        ],
        "--",
        "/bin/sh",
        "-c",
        "true",
    ]
    result = subprocess.run(probe, capture_output=True, text=True, check=False, timeout=30)
    if result.returncode != 0:
        return f"bwrap cannot create namespaces here: {result.stderr.strip()}"
    return None


# The sandbox binds /usr, /bin and /lib but nothing under /root (denylisted), so the plugin
# runs on the system interpreter: a venv or pyenv one cannot be reached inside it.
SYSTEM_PYTHON = "/usr/bin/python3"


def _system_python_problem() -> str | None:
    if not Path(SYSTEM_PYTHON).is_file():
        return f"{SYSTEM_PYTHON} is not installed"
    version = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import tomllib"], capture_output=True, check=False, timeout=30
    )
    if version.returncode != 0:
        return f"{SYSTEM_PYTHON} has no tomllib (Python 3.11 or newer needed)"
    return None


PYTHON_PROBLEM = _system_python_problem()
BWRAP_PROBLEM = _bwrap_problem() or PYTHON_PROBLEM
needs_bwrap = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=str(BWRAP_PROBLEM))
needs_system_python = pytest.mark.skipif(PYTHON_PROBLEM is not None, reason=str(PYTHON_PROBLEM))


def sandboxed_plugin(  # the sandbox table's keys
    root: Path,
    mode: str,
    *,
    command: str = SYSTEM_PYTHON,
    enabled: bool = True,
    network: str = "deny",
    read: tuple[str, ...] = (),
    write: tuple[str, ...] = ("${state_dir}",),
) -> Path:
    """The scripted plugin with a ``[plugin.sandbox]`` section. Its read paths hold what the
    daemon's argv needs to run it: the script's directory and the plugin root (its cwd)."""
    reads = [str(SCRIPTED.parent), str(root), *read]
    listed = "".join(f"    {toml_string(path)},\n" for path in reads)
    extra = f"""
[plugin.sandbox]
enabled = {"true" if enabled else "false"}
network = "{network}"
fs_read_paths = [
{listed}]
fs_write_paths = [{", ".join(toml_string(path) for path in write)}]
"""
    return scripted_plugin(root, mode, plugin_id="boxed", command=command, extra=extra)


def check(document: dict[str, Any], name: str) -> dict[str, Any]:
    found = [entry for entry in document["checks"] if entry["name"] == name]
    assert found, f"check {name} did not run: {document['checks']}"
    entry: dict[str, Any] = found[0]
    return entry


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP listener on 127.0.0.1 (the host's loopback): its port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


@pytest.fixture(autouse=True)
def daemon_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No sandbox policy from the environment running the tests."""
    monkeypatch.delenv("NEXO_PLUGIN_SANDBOX_REQUIRE", raising=False)
    monkeypatch.delenv("NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW", raising=False)


@needs_bwrap
def test_sandboxed_plugin_passes_inside_bwrap_and_the_report_shows_the_wrapper(
    tmp_path: Path,
) -> None:
    root = sandboxed_plugin(tmp_path / "boxed", "ok")
    code, document = cli_check(root)
    assert code == 0, document["checks"]
    assert document["ok"] is True
    sandbox = check(document, "sandbox")
    assert sandbox["status"] == "pass"
    assert "bwrap" in sandbox["detail"]
    assert "--unshare-net" in sandbox["detail"]
    assert "inside the daemon's bwrap sandbox" in check(document, "spawn")["detail"]
    argv = document["sandbox"]["argv"]
    assert Path(argv[0]).name == "bwrap"
    assert document["sandbox"]["wrapped"] is True
    # The daemon's argv: lifecycle flags first, each allowlist entry bound, the command last.
    assert argv[1:6] == [
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-uts",
        "--unshare-ipc",
        "--new-session",
    ]
    assert ["--ro-bind", str(root), str(root)] == argv[argv.index(str(root)) - 1 :][:3]
    state_dir = document["sandbox"]["state_dir"]
    assert state_dir.endswith("/plugins/boxed")
    assert ["--bind", state_dir, state_dir] == argv[argv.index(state_dir) - 1 :][:3]
    assert argv[argv.index("--") + 1 :] == [SYSTEM_PYTHON, str(SCRIPTED), "ok"]
    # The temporary state directory is gone with the check.
    assert not Path(state_dir).exists()


@needs_bwrap
def test_a_read_path_missing_on_this_host_fails_spawn_naming_the_manifest_line(
    tmp_path: Path,
) -> None:
    missing = "/opt/nexo-check-absent/chromium"
    root = sandboxed_plugin(tmp_path / "boxed", "ok", read=(missing,))
    line = next(
        number
        for number, text in enumerate(
            (root / "nexo-plugin.toml").read_text(encoding="utf-8").splitlines(), 1
        )
        if missing in text
    )
    code, document = cli_check(root)
    assert code == 1
    spawn = check(document, "spawn")
    assert spawn["status"] == "fail"
    assert f"nexo-plugin.toml:{line}" in spawn["detail"]
    assert "plugin.sandbox.fs_read_paths" in spawn["detail"]
    assert f"Can't find source path {missing}" in spawn["detail"]
    # Nothing was started.
    assert [entry["name"] for entry in document["checks"]] == ["sandbox", "spawn"]


@needs_bwrap
@pytest.mark.parametrize("entry", ["/opt/nexo-check-absent/cache", "${state_dir}/cache"])
def test_a_write_path_missing_on_this_host_fails_spawn_naming_the_manifest_line(
    tmp_path: Path, entry: str
) -> None:
    """``--bind`` of a missing source is as fatal to bwrap as ``--ro-bind``: the daemon binds
    each ``fs_write_paths`` entry after ``${state_dir}`` expansion (``build_bwrap_args``) and
    creates no directory under the state directory, so a sub-directory there fails too."""
    root = sandboxed_plugin(tmp_path / "boxed", "ok", write=(entry,))
    line = next(
        number
        for number, text in enumerate(
            (root / "nexo-plugin.toml").read_text(encoding="utf-8").splitlines(), 1
        )
        if entry in text
    )
    code, document = cli_check(root)
    assert code == 1
    assert document["ok"] is False
    spawn = check(document, "spawn")
    assert spawn["status"] == "fail"
    assert f"nexo-plugin.toml:{line}" in spawn["detail"]
    assert "plugin.sandbox.fs_write_paths" in spawn["detail"]
    resolved = entry.replace("${state_dir}", document["sandbox"]["state_dir"])
    assert f"Can't find source path {resolved}" in spawn["detail"]
    argv = document["sandbox"]["argv"]
    end = argv.index("--")
    assert argv[end - 3 : end] == ["--bind", resolved, resolved]
    # Nothing was started, and check made no directory the daemon would not make.
    assert [item["name"] for item in document["checks"]] == ["sandbox", "spawn"]
    assert not Path(resolved).exists()


@needs_bwrap
def test_writing_outside_fs_write_paths_at_start_fails(tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "escaped.txt"
    outside.parent.mkdir()
    root = sandboxed_plugin(tmp_path / "boxed", "write_outside")
    env = {"FIXTURE_WRITE_PATH": str(outside)}
    code, document = cli_check(root, env=env)
    assert code == 1
    initialize = check(document, "initialize")
    assert initialize["status"] == "fail"
    assert "exited with code 3" in initialize["detail"]
    assert any("write_outside refused" in line for line in document["stderr_tail"])
    assert not outside.exists()
    # The same plugin unsandboxed writes the file: the sandbox is what stopped it.
    code, document = cli_check(root, "--no-sandbox", env=env)
    assert code == 0, document["checks"]
    assert outside.read_text(encoding="utf-8") == "escaped\n"


@needs_bwrap
def test_connecting_out_under_network_deny_fails_and_no_sandbox_says_what_it_skips(
    tmp_path: Path, listener: int
) -> None:
    root = sandboxed_plugin(tmp_path / "boxed", "connect_out")
    env = {"FIXTURE_CONNECT_PORT": str(listener)}
    code, document = cli_check(root, env=env)
    assert code == 1
    assert check(document, "initialize")["status"] == "fail"
    assert any("connect_out refused" in line for line in document["stderr_tail"])

    code, document = cli_check(root, "--no-sandbox", env=env)
    assert code == 0, document["checks"]
    sandbox = check(document, "sandbox")
    assert sandbox["status"] == "warn"
    assert "--no-sandbox" in sandbox["detail"]
    assert "network policy" in sandbox["detail"]
    assert document["sandbox"]["skipped"] is True
    assert document["sandbox"]["wrapped"] is False


@needs_bwrap
def test_host_network_with_the_operators_permission_shares_the_hosts_network(
    tmp_path: Path, listener: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`network = "host"` under `NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW=1`: still wrapped, but
    without `--unshare-net`, so the plugin reaches the host's loopback at start."""
    monkeypatch.setenv("NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW", "1")
    root = sandboxed_plugin(tmp_path / "boxed", "connect_out", network="host")
    code, document = cli_check(root, env={"FIXTURE_CONNECT_PORT": str(listener)})
    assert code == 0, (document["checks"], document["stderr_tail"])
    assert document["sandbox"]["wrapped"] is True
    argv = document["sandbox"]["argv"]
    assert "--unshare-net" not in argv
    assert "--unshare-pid" in argv
    assert check(document, "spawn")["status"] == "pass"


def test_sandbox_required_with_the_sandbox_off_fails_with_the_daemons_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = tmp_path / "pids"
    monkeypatch.setenv("FIXTURE_PID_FILE", str(pids))
    monkeypatch.setenv("NEXO_PLUGIN_SANDBOX_REQUIRE", "1")
    root = sandboxed_plugin(tmp_path / "boxed", "ok", enabled=False)
    code, document = cli_check(root)
    assert code == 1
    reason = (
        "plugin `boxed`: sandbox required (NEXO_PLUGIN_SANDBOX_REQUIRE=1) but manifest sets "
        "sandbox.enabled = false"
    )
    assert check(document, "sandbox")["status"] == "fail"
    assert reason in check(document, "sandbox")["detail"]
    assert check(document, "spawn") == {
        "name": "spawn",
        "status": "fail",
        "detail": f"not started: {reason}",
    }
    assert document["sandbox"]["refusal"] == reason
    assert not pids.exists()


def test_host_network_without_the_operators_permission_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pids = tmp_path / "pids"
    monkeypatch.setenv("FIXTURE_PID_FILE", str(pids))
    root = sandboxed_plugin(tmp_path / "boxed", "ok", network="host")
    code, document = cli_check(root)
    assert code == 1
    assert document["ok"] is False
    reason = (
        'plugin `boxed`: sandbox.network = "host" requires NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW=1'
    )
    assert check(document, "spawn")["detail"] == f"not started: {reason}"
    assert check(document, "sandbox")["status"] == "fail"
    assert document["sandbox"]["refusal"] == reason
    assert not pids.exists()


@needs_system_python
def test_without_bwrap_the_plugin_runs_unsandboxed_with_the_daemons_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "no-bwrap-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    root = sandboxed_plugin(tmp_path / "boxed", "ok")
    code, document = cli_check(root)
    assert code == 0, document["checks"]
    sandbox = check(document, "sandbox")
    assert sandbox["status"] == "warn"
    assert (
        "plugin `boxed` declares sandbox but `bwrap` is not in PATH — running without sandbox"
        in sandbox["detail"]
    )
    assert document["sandbox"]["argv"][0] == SYSTEM_PYTHON

    monkeypatch.setenv("NEXO_PLUGIN_SANDBOX_REQUIRE", "yes")
    code, document = cli_check(root)
    assert code == 1
    assert "(apt install bubblewrap)" in check(document, "spawn")["detail"]


@needs_bwrap
def test_the_scaffolds_sandboxed_plugin_passes_check_inside_the_sandbox(
    tmp_path: Path, offline_pip_env: dict[str, str]
) -> None:
    """`nexo plugin new`, `pack`, installed as the daemon lays it out, with the manifest's
    sandbox table uncommented for this install root: it starts and answers inside bwrap."""
    env = {**os.environ, **offline_pip_env}
    for args in (
        ["new", "weather", "--lang", "python", "--dest", "weather"],
        ["pack", "weather", "--out", "dist"],
    ):
        done = nexo("plugin", *args, env=env, cwd=tmp_path, in_process=True)
        assert done.code == 0, done.stderr
    plugins = tmp_path / "opt" / "nexo" / "plugins"
    installed = plugins / "weather-0.1.0"
    installed.mkdir(parents=True)
    with tarfile.open(tmp_path / "dist" / "weather-0.1.0-noarch.tar.gz") as archive:
        archive.extractall(installed, filter="data")
    manifest = installed / "nexo-plugin.toml"  # the release's name for the manifest
    text = manifest.read_text(encoding="utf-8")
    table = text[text.index("# [plugin.sandbox]") :]
    enabled = "\n".join(line.removeprefix("# ") for line in table.splitlines())
    manifest.write_text(
        text.replace(table, enabled.replace("/opt/nexo/plugins", str(plugins)) + "\n"),
        encoding="utf-8",
    )
    code, document = cli_check(installed, "--invoke", "weather_hello", "--args", '{"name": "x"}')
    assert code == 0, (document["checks"], document["stderr_tail"])
    assert document["sandbox"]["wrapped"] is True
    assert ["--ro-bind", str(installed), str(installed)] == (
        document["sandbox"]["argv"][document["sandbox"]["argv"].index(str(installed)) - 1 :][:3]
    )
    assert document["invoke"]["result"]["content"][0]["text"] == "Hello, x!"


@needs_bwrap
def test_a_program_bwrap_cannot_start_fails_spawn_with_bwraps_own_line(tmp_path: Path) -> None:
    """The launcher's interpreter lives in a directory the sandbox does not bind: bwrap's
    exec fails, as under the daemon, and `spawn` fails with what bwrap said."""
    interpreter = tmp_path / "interp" / "sh"
    interpreter.parent.mkdir()
    interpreter.symlink_to("/bin/sh")
    root = tmp_path / "p"
    root.mkdir()
    launcher = root / "run"
    launcher.write_text(f"#!{interpreter}\nexit 0\n", encoding="utf-8")
    launcher.chmod(0o755)
    (root / "nexo-plugin.toml").write_text(
        '[plugin]\nid = "unreachable"\nversion = "0.1.0"\nname = "u"\ndescription = "u"\n'
        'min_nexo_version = ">=0.1.0"\n[plugin.entrypoint]\n'
        'command = "./run"\n[plugin.sandbox]\nenabled = true\n',
        encoding="utf-8",
    )
    code, document = cli_check(root)
    assert code == 1
    spawn = check(document, "spawn")
    assert spawn["status"] == "fail"
    assert spawn["detail"].startswith(
        f"bwrap could not start the plugin: bwrap: execvp {launcher}: No such file or directory"
    )


@needs_bwrap
def test_a_plugin_logging_a_line_that_starts_like_bwraps_is_not_taken_for_bwrap(
    tmp_path: Path,
) -> None:
    """bwrap speaks only before it runs the plugin. A plugin that starts, answers every
    request and logs a line beginning `bwrap: ` ran inside the sandbox as under the daemon:
    its log line is no failure of bwrap's."""
    root = sandboxed_plugin(tmp_path / "boxed", "ok", command=str(tmp_path / "boxed" / "run"))
    launcher = root / "run"
    launcher.write_text(
        f"#!/bin/sh\necho 'bwrap: the plugin logs this' >&2\nexec {SYSTEM_PYTHON} \"$@\"\n",
        encoding="utf-8",
    )
    launcher.chmod(0o755)
    code, document = cli_check(root)
    assert code == 0, (document["checks"], document["stderr_tail"])
    assert document["sandbox"]["wrapped"] is True
    spawn = check(document, "spawn")
    assert spawn["status"] == "pass"
    assert "inside the daemon's bwrap sandbox" in spawn["detail"]
    assert check(document, "initialize")["status"] == "pass"
    assert document["stderr_tail"][0] == "bwrap: the plugin logs this"


@needs_bwrap
def test_drop_user_runs_the_plugin_as_nobody_inside_the_sandbox(tmp_path: Path) -> None:
    """`drop_user = true`: the daemon's argv maps the plugin to uid/gid 65534 in a user
    namespace (`build_bwrap_args`), and the plugin check runs is that user."""
    root = sandboxed_plugin(tmp_path / "boxed", "ok", command=str(tmp_path / "boxed" / "run"))
    launcher = root / "run"
    launcher.write_text(
        f'#!/bin/sh\necho "ids: $(id -u) $(id -g)" >&2\nexec {SYSTEM_PYTHON} "$@"\n',
        encoding="utf-8",
    )
    launcher.chmod(0o755)
    manifest = root / "nexo-plugin.toml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace('network = "deny"\n', 'network = "deny"\ndrop_user = true\n'))
    code, document = cli_check(root)
    assert code == 0, (document["checks"], document["stderr_tail"])
    argv = document["sandbox"]["argv"]
    start = argv.index("--unshare-user")
    assert argv[start : start + 5] == ["--unshare-user", "--uid", "65534", "--gid", "65534"]
    assert "ids: 65534 65534" in document["stderr_tail"]


@needs_bwrap
def test_a_bare_command_is_handed_to_bwrap_as_written_and_found_on_the_sandboxs_path(
    tmp_path: Path,
) -> None:
    """The daemon passes `command = "python3"` to bwrap as it is (no parent directory to
    bind), so the sandbox's PATH (/usr/bin:/bin) finds the system interpreter."""
    root = sandboxed_plugin(tmp_path / "boxed", "ok", command="python3")
    code, document = cli_check(root)
    assert code == 0, (document["checks"], document["stderr_tail"])
    argv = document["sandbox"]["argv"]
    assert argv[argv.index("--") + 1 :] == ["python3", str(SCRIPTED), "ok"]
    # The plugin's own command line, as resolved on this host's PATH, is reported beside it.
    assert document["plugin"]["command"][0] == shutil.which("python3")


def _marking_plugin(root: Path, marker: Path, write: str) -> Path:
    """A sandboxed plugin whose launcher first creates ``marker``: if it exists afterwards, the
    plugin was started. ``write`` is its one ``fs_write_paths`` entry."""
    root.mkdir(parents=True)
    launcher = root / "run"
    launcher.write_text(f"#!/bin/sh\n: > {marker}\nexit 0\n", encoding="utf-8")
    launcher.chmod(0o755)
    (root / "nexo-plugin.toml").write_text(
        '[plugin]\nid = "reach"\nversion = "0.1.0"\nname = "r"\ndescription = "r"\n'
        'min_nexo_version = ">=0.1.0"\n[plugin.entrypoint]\ncommand = "./run"\n'
        f"[plugin.sandbox]\nenabled = true\nfs_read_paths = [{toml_string(str(root))}]\n"
        f"fs_write_paths = [{toml_string(write)}]\n",
        encoding="utf-8",
    )
    return root


@needs_bwrap
def test_a_write_path_climbing_out_of_the_state_dir_is_not_started(tmp_path: Path) -> None:
    """`${state_dir}/../../../..` passes the daemon's textual check (it would bind the host's
    `/` writable) but lint refuses it: check starts nothing and says what the daemon does."""
    marker = tmp_path / "started"
    root = _marking_plugin(tmp_path / "p", marker, "${state_dir}/../../../..")
    code, document = cli_check(root)
    assert code == 1
    manifest = check(document, "manifest")
    assert manifest["status"] == "fail"
    assert "NX146" in manifest["detail"]
    assert "THE DAEMON WOULD LOAD AND SPAWN IT" in manifest["detail"]
    # What it would bind on this host: the whole root, writable.
    sandbox = check(document, "sandbox")
    assert sandbox["status"] == "fail"
    assert "resolves to `/`" in sandbox["detail"]
    assert "`/` writable" in sandbox["detail"]
    assert check(document, "spawn")["status"] == "fail"
    assert not marker.exists()


@needs_bwrap
def test_a_write_path_that_is_a_link_to_the_root_is_not_started(tmp_path: Path) -> None:
    """A link to `/` lints clean (the text is harmless) and the daemon would bind it, bwrap
    following the link: check judges the path it resolves to, and starts nothing."""
    hole = tmp_path / "hole"
    hole.symlink_to("/")
    marker = tmp_path / "started"
    root = _marking_plugin(tmp_path / "p", marker, str(hole))
    linted = nexo("plugin", "lint", str(root / "nexo-plugin.toml"), in_process=True)
    assert linted.code == 0, linted.stdout
    code, document = cli_check(root)
    assert code == 1
    sandbox = check(document, "sandbox")
    assert sandbox["status"] == "fail"
    assert f"`{hole}`" in sandbox["detail"]
    assert "resolves to `/`" in sandbox["detail"]
    assert "THE DAEMON WOULD SPAWN IT" in sandbox["detail"]
    assert "`/` writable" in sandbox["detail"]
    assert document["sandbox"]["daemon_spawns"] is True
    assert check(document, "spawn")["status"] == "fail"
    assert not marker.exists()
    # A link to a harmless directory is bound as the daemon binds it, and the plugin runs.
    (tmp_path / "data").mkdir()
    safe = tmp_path / "safe"
    safe.symlink_to(tmp_path / "data")
    started = _marking_plugin(tmp_path / "q", safe / "started", str(safe))
    cli_check(started)
    assert (tmp_path / "data" / "started").exists()


@needs_bwrap
def test_a_write_path_that_still_climbs_after_expansion_is_not_started(tmp_path: Path) -> None:
    """`${state_dir}/../sibling` lints clean (it reaches nothing denylisted) and the daemon
    binds it as written; check never hands bwrap a path with `..`, and says what it reaches."""
    marker = tmp_path / "started"
    root = _marking_plugin(tmp_path / "p", marker, "${state_dir}/../sibling")
    code, document = cli_check(root)
    assert code == 1
    sandbox = check(document, "sandbox")
    assert sandbox["status"] == "fail"
    assert "still has `..` components" in sandbox["detail"]
    assert "THE DAEMON WOULD SPAWN IT" in sandbox["detail"]
    assert check(document, "spawn")["status"] == "fail"
    assert not marker.exists()


@needs_bwrap
@pytest.mark.parametrize(
    "entry", ["/proc/self/cwd", "/proc/thread-self/cwd/data", "/proc/1/root/etc"]
)
def test_a_path_under_the_host_proc_is_not_started(tmp_path: Path, entry: str) -> None:
    """`/proc/self/cwd` lints clean and the daemon binds it as written; what it names is the
    working directory of the process that binds it (a daemon started in `/` would hand the
    plugin the host's root, writable), whatever it resolves to for check. `/proc/1/root` may
    not even be resolvable here (permission denied): that is a failed check too, never an
    `io` error ending the run."""
    marker = tmp_path / "started"
    root = _marking_plugin(tmp_path / "p", marker, entry)
    code, document = cli_check(root)
    assert code == 1, document
    assert "checks" in document, document
    sandbox = check(document, "sandbox")
    assert sandbox["status"] == "fail"
    assert f"`{entry}`" in sandbox["detail"]
    assert "not started" in sandbox["detail"]
    assert check(document, "spawn")["status"] == "fail"
    assert not marker.exists()


def _launcher_in(directory: Path, marker: Path) -> Path:
    """``directory/run``, a launcher that creates ``marker`` and exits, beside an empty
    ``directory/bin``."""
    (directory / "bin").mkdir(parents=True)
    launcher = directory / "run"
    launcher.write_text(f"#!/bin/sh\n: > {marker}\nexit 0\n", encoding="utf-8")
    launcher.chmod(0o755)
    return launcher


@needs_bwrap
def test_a_command_whose_directory_reaches_the_host_is_not_started(tmp_path: Path) -> None:
    """The daemon binds the directory of the command read-only (its `Path::parent`): a command
    at `/x` would hand the plugin the whole host to read, and one under `/proc/self/root`
    whatever the daemon's root is. check judges that directory as every bind source, starts
    nothing, and says the daemon would; `./bin/../run` is the plugin's own directory."""
    root = tmp_path / "p"
    marker = tmp_path / "started"
    launcher = _launcher_in(root, marker)
    command = f"/proc/self/root{launcher}"
    manifest = root / "nexo-plugin.toml"

    def write(command: str) -> None:
        manifest.write_text(
            '[plugin]\nid = "reach"\nversion = "0.1.0"\nname = "r"\ndescription = "r"\n'
            'min_nexo_version = ">=0.1.0"\n[plugin.entrypoint]\n'
            f"command = {toml_string(command)}\n[plugin.sandbox]\nenabled = true\n"
            f"fs_read_paths = [{toml_string(str(root))}, {toml_string(str(tmp_path))}]\n"
            f"fs_write_paths = [{toml_string(str(tmp_path))}]\n",
            encoding="utf-8",
        )

    write(command)
    code, document = cli_check(root)
    assert code == 1, document
    sandbox = check(document, "sandbox")
    assert sandbox["status"] == "fail", sandbox
    assert f"the directory of the command `{command}`" in sandbox["detail"]
    assert "THE DAEMON WOULD SPAWN IT" in sandbox["detail"]
    assert "read-only" in sandbox["detail"]
    assert document["sandbox"]["daemon_spawns"] is True
    assert check(document, "spawn")["status"] == "fail"
    assert not marker.exists()
    write(f"{root}/bin/../run")
    cli_check(root)
    assert marker.exists()


@needs_bwrap
def test_a_read_path_exposing_the_own_home_s_secrets_is_not_started(tmp_path: Path) -> None:
    """A service user's home is rarely under /home (`/var/lib/nexo`): binding it, or a
    directory above it, hands the plugin its `.ssh`. check judges the path against this
    user's own home too, wherever it is, when the secret exists; a sibling of the home is
    bound as the daemon binds it."""
    home = tmp_path / "service-home"
    (home / ".ssh").mkdir(parents=True)
    marker = tmp_path / "started"
    for exposing in (home, tmp_path):
        root = tmp_path / f"p-{exposing.name}"
        _marking_plugin(root, marker, str(tmp_path / "out"))
        manifest = root / "nexo-plugin.toml"
        manifest.write_text(
            manifest.read_text(encoding="utf-8").replace(
                "fs_read_paths = [", f"fs_read_paths = [{toml_string(str(exposing))}, "
            ),
            encoding="utf-8",
        )
        code, document = cli_check(root, env={"HOME": str(home)})
        assert code == 1, document
        sandbox = check(document, "sandbox")
        assert sandbox["status"] == "fail", sandbox
        assert f"`{home / '.ssh'}`" in sandbox["detail"]
        assert "THE DAEMON WOULD SPAWN IT" in sandbox["detail"]
        assert not marker.exists()
    (tmp_path / "out").mkdir()
    sibling = tmp_path / "p-sibling"
    _marking_plugin(sibling, tmp_path / "out" / "started", str(tmp_path / "out"))
    code, document = cli_check(sibling, env={"HOME": str(home)})
    assert (tmp_path / "out" / "started").exists(), document


@needs_bwrap
def test_a_command_path_with_dot_dot_reaches_bwrap_resolved(tmp_path: Path) -> None:
    """SPEC §4: check never passes the sandbox a path that still has `..` components. The
    daemon binds the directory of an absolute command as written (`{root}/bin/..`), and bwrap
    follows the `..` and any link before it: check binds that directory as bwrap reaches it
    and runs the command from there, so the plugin starts as under the daemon and no argument
    of bwrap climbs."""
    real = tmp_path / "real"
    marker = tmp_path / "started"
    launcher = _launcher_in(real, marker)
    root = tmp_path / "p"
    root.mkdir()
    (root / "via").symlink_to(real / "bin")  # `via/..` is `real`, not `p`, to the kernel
    command = f"{root}/via/../run"
    (root / "nexo-plugin.toml").write_text(
        '[plugin]\nid = "climb"\nversion = "0.1.0"\nname = "c"\ndescription = "c"\n'
        'min_nexo_version = ">=0.1.0"\n[plugin.entrypoint]\n'
        f"command = {toml_string(command)}\n[plugin.sandbox]\nenabled = true\n"
        f"fs_write_paths = [{toml_string(str(tmp_path))}]\n",
        encoding="utf-8",
    )
    _, document = cli_check(root)
    argv = document["sandbox"]["argv"]
    assert argv, document["sandbox"]
    assert not [arg for arg in argv if ".." in arg.split("/")], argv
    assert ["--ro-bind-try", str(real), str(real)] == argv[
        argv.index(str(real)) - 1 : argv.index(str(real)) + 2
    ]
    assert argv[argv.index("--") + 1] == str(launcher)
    assert check(document, "sandbox")["status"] == "pass", check(document, "sandbox")
    assert marker.exists()
