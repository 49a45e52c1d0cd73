"""The daemon's wrapper decision, branch by branch, from the same inputs it reads
(``SandboxRunner::wrap_command`` / ``build_bwrap_args`` in
``crates/core/src/agent/plugin_sandbox.rs``, lordmacu/nexo-rs 9de9b39), including the
platforms and flags this machine cannot show by running bwrap."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from nexo_pkg.check.sandbox import current_platform, daemon_program, plan_sandbox
from nexo_pkg.manifest.model import Sandbox, plugin_manifest_from_data
from nexo_pkg.manifest.rules_sandbox import env_flag

ARGV = ["/opt/p/bin/p", "--serve"]


def manifest(**sandbox: Any) -> Sandbox:
    """The ``[plugin.sandbox]`` section as the manifest model reads it."""
    data = {"plugin": {"id": "p", "version": "0.1.0", "sandbox": sandbox}}
    return plugin_manifest_from_data(data).plugin.sandbox


def plan(
    tmp_path: Path,
    data: Sandbox,
    *,
    env: dict[str, str] | None = None,
    platform: str = "linux",
    bwrap: str | None = "/usr/bin/bwrap",
    state_dir: Path | None = None,
) -> Any:
    return plan_sandbox(
        data,
        "p",
        ARGV,
        root=tmp_path,
        state_dir=state_dir or tmp_path / "state",
        env=env or {},
        bwrap=bwrap,
        platform=platform,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("value", "on"),
    [
        ("1", True),
        ("true", True),
        ("TRUE", True),
        ("yes", True),
        ("YES", True),
        ("0", False),
        ("True", False),
        ("on", False),
        ("", False),
    ],
)
def test_flags_read_as_the_daemon_reads_them(value: str, on: bool) -> None:
    assert env_flag("NEXO_PLUGIN_SANDBOX_REQUIRE", {"NEXO_PLUGIN_SANDBOX_REQUIRE": value}) is on


def test_macos_runs_unsandboxed_with_the_daemons_warning_unless_required(tmp_path: Path) -> None:
    got = plan(tmp_path, manifest(enabled=True), platform="macos", bwrap=None)
    assert got.argv == ARGV
    assert got.wrapped is False
    assert got.note == "macOS — sandbox not enforced for plugin `p` (native sandbox-exec deferred)"
    required = plan(
        tmp_path,
        manifest(enabled=True),
        platform="macos",
        bwrap=None,
        env={"NEXO_PLUGIN_SANDBOX_REQUIRE": "1"},
    )
    assert required.argv is None
    assert required.refusal == (
        "plugin `p`: sandbox required but the current platform is unsupported (macOS sandbox "
        "path deferred)"
    )


def test_drop_user_host_network_and_the_argv_order(tmp_path: Path) -> None:
    got = plan(
        tmp_path,
        manifest(enabled=True, network="host", drop_user=True),
        env={"NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW": "1"},
    )
    argv = got.argv
    assert argv[0] == "/usr/bin/bwrap"
    assert "--unshare-net" not in argv
    user = argv.index("--unshare-user")
    assert argv[user : user + 5] == ["--unshare-user", "--uid", "65534", "--gid", "65534"]
    path = argv.index("--setenv")
    assert argv[path : path + 3] == ["--setenv", "PATH", "/usr/bin:/bin"]
    assert argv[argv.index("--") :] == ["--", *ARGV]
    deny = plan(tmp_path, manifest(enabled=True))
    assert "--unshare-net" in deny.argv
    assert "--unshare-user" not in deny.argv


def test_state_dir_under_a_denylisted_path_is_refused_at_spawn(tmp_path: Path) -> None:
    got = plan(
        tmp_path,
        manifest(enabled=True, fs_write_paths=["${state_dir}/cache"]),
        state_dir=Path("/root/.nexo/state/plugins/p"),
    )
    assert got.argv is None
    assert got.refusal == (
        "plugin `p`: resolved sandbox path `/root/.nexo/state/plugins/p/cache` (from manifest "
        "entry `${state_dir}/cache`) hits denylisted host path `/root`"
    )


def test_a_relative_entry_is_refused_as_the_daemon_refuses_it(tmp_path: Path) -> None:
    got = plan(tmp_path, manifest(enabled=True, fs_read_paths=["data"]))
    assert got.refusal == (
        "plugin `p`: sandbox path resolution failed for `data`: resolved path is not absolute"
    )


def test_only_a_bare_command_found_on_path_is_passed_as_written() -> None:
    assert daemon_program("python3", ["/usr/local/bin/python3", "main.py"]) == "python3"
    assert daemon_program("python3", ["/x/bin/p"]) is None
    assert daemon_program("./bin/p", ["/x/bin/p"]) is None
    assert daemon_program(None, ["/x/bin/p"]) is None


def test_windows_runs_unsandboxed_with_the_daemons_other_platform_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    assert current_platform() == "other"
    got = plan(tmp_path, manifest(enabled=True), platform="other", bwrap=None)
    assert got.argv == ARGV
    assert got.wrapped is False
    assert got.note == "sandbox not enforced for plugin `p` on this platform"
    required = plan(
        tmp_path,
        manifest(enabled=True),
        platform="other",
        bwrap=None,
        env={"NEXO_PLUGIN_SANDBOX_REQUIRE": "1"},
    )
    assert required.argv is None
    assert required.refusal is not None
