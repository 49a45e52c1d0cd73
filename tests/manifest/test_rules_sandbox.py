"""``[plugin.sandbox]``: the daemon's lexical checks and the stricter normalised ones."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nexo_pkg.core.diagnostics import Diagnostic
from nexo_pkg.manifest.options import LintOptions
from nexo_pkg.manifest.rules import SEMANTIC_RULES, check_semantics
from nexo_pkg.manifest.sandbox_paths import (
    DENYLIST_HOST_PATHS,
    HOME_SECRET_SUBPATHS,
    daemon_denylist_hit,
    denylist_hit,
    home_secret_hit,
    normalise,
)

from .rule_support import BASE, locate


def run_all(sandbox: str, options: LintOptions | None = None) -> list[Diagnostic]:
    data = tomllib.loads(f"{BASE}[plugin.sandbox]\n{sandbox}\n")
    return check_semantics(data, locate, options or LintOptions(host_net_allowed=False))


def run(sandbox: str, options: LintOptions | None = None) -> list[Diagnostic]:
    """The lexical verdicts only: whether a path exists on this host (NX148) is tested apart,
    as most paths here exist nowhere."""
    return [d for d in run_all(sandbox, options) if d.code != "NX148"]


def found(sandbox: str, options: LintOptions | None = None) -> list[tuple[str, str]]:
    return [(d.code, d.key_path) for d in run(sandbox, options)]


def read(path: str) -> list[str]:
    return [d.code for d in run(f"enabled = true\nfs_read_paths = ['{path}']")]


def write(path: str) -> list[str]:
    return [d.code for d in run(f"enabled = true\nfs_write_paths = ['{path}']")]


# --- the daemon's lexical verdict -----------------------------------------------------------------


@pytest.mark.parametrize("entry", DENYLIST_HOST_PATHS)
def test_every_denylisted_path_its_children_and_parents(entry: str) -> None:
    assert read(entry) == ["NX145"]
    assert read(entry + "/x") == ["NX145"]
    parent = entry.rsplit("/", 1)[0]
    if parent:
        assert read(parent) == ["NX145"]


@pytest.mark.parametrize(
    "entry",
    ["/", "/etc", "/proc", "/sys", "/dev", "/var", "/var/run", "/run", "/private", "/private/var"],
)
def test_root_and_ancestors_are_refused(entry: str) -> None:
    assert read(entry) == ["NX145"]
    assert write(entry) == ["NX145"]


@pytest.mark.parametrize(
    "entry",
    [
        "/etc/ssl/certs",
        "/etc/shadow_backup",
        "/usr/share/zoneinfo",
        "/tmp",
        "/var/lib/weather",
        "/dev/null",
    ],
)
def test_siblings_are_accepted(entry: str) -> None:
    assert read(entry) == []


def test_daemon_hit_matches_the_crate_quirks() -> None:
    assert daemon_denylist_hit("//etc/shadow") is None
    assert daemon_denylist_hit("/etc/") is None
    assert daemon_denylist_hit("/var/run/") is None
    assert daemon_denylist_hit("/etc/shadow_backup") is None
    assert daemon_denylist_hit("/etc") == "/etc/shadow"
    assert daemon_denylist_hit("/") == "/"


# --- beyond the daemon: normalisation and home secrets --------------------------------------------


@pytest.mark.parametrize(
    ("entry", "normal", "hit"),
    [
        ("//etc/shadow", "/etc/shadow", "/etc/shadow"),
        ("/etc/./shadow", "/etc/shadow", "/etc/shadow"),
        ("/etc//shadow", "/etc/shadow", "/etc/shadow"),
        ("/etc/", "/etc", "/etc/shadow"),
        ("/var/run/", "/var/run", "/var/run/docker.sock"),
        ("/tmp/../etc/shadow", "/etc/shadow", "/etc/shadow"),
        ("/tmp/../../../boot", "/boot", "/boot"),
        ("/etc/ssl/../../", "/", "/"),
        ("/./", "/", "/"),
    ],
)
def test_normalised_denylist(entry: str, normal: str, hit: str) -> None:
    assert normalise(entry) == normal
    assert denylist_hit(normal) == hit
    diagnostics = run(f"enabled = true\nfs_read_paths = ['{entry}']")
    assert [d.code for d in diagnostics] == ["NX146"]
    assert f"`{hit}`" in diagnostics[0].message
    assert SEMANTIC_RULES["NX146"].beyond_daemon


@pytest.mark.parametrize("secret", HOME_SECRET_SUBPATHS)
@pytest.mark.parametrize("home", ["/home/ana", "/Users/bob", "//home/ana/"])
def test_home_secrets_in_any_home(secret: str, home: str) -> None:
    assert read(f"{home}/{secret}") == ["NX147"]
    assert read(f"{home}/{secret}/inner/file") == ["NX147"]


@pytest.mark.parametrize(
    ("entry", "hit"),
    [
        ("/home/ana", "/home/ana/.aws"),
        ("/home/ana/", "/home/ana/.aws"),
        ("/home", "/home/<user>/.aws"),
        ("/Users", "/Users/<user>/.aws"),
        ("/home/ana/.config", "/home/ana/.config/gh"),
        ("/home/ana/.cargo", "/home/ana/.cargo/credentials"),
        ("/home/ana/x/../.ssh", "/home/ana/.ssh"),
    ],
)
def test_home_secret_ancestors(entry: str, hit: str) -> None:
    assert home_secret_hit(entry) == hit
    diagnostics = run(f"enabled = true\nfs_read_paths = ['{entry}']")
    assert [d.code for d in diagnostics] == ["NX147"]
    assert f"`{hit}`" in diagnostics[0].message


@pytest.mark.parametrize(
    "entry",
    [
        "/home/ana/Documents",
        "/home/ana/.config/weather",
        "/home/ana/.cargo/registry",
        "/Users/bob/src",
        "/homework",
    ],
)
def test_other_home_directories_are_fine(entry: str) -> None:
    assert read(entry) == []


def test_root_home_secret_is_reported_once_as_the_daemon_does() -> None:
    assert read("/root/.ssh") == ["NX145"]


def test_tilde_paths_are_relative_and_flag_secrets_too() -> None:
    assert read("~/.ssh") == ["NX144", "NX147"]
    assert read("~/work") == ["NX144"]
    assert read("~") == ["NX144", "NX147"]


# --- state_dir, relative paths, network -----------------------------------------------------------


def test_state_dir_rules() -> None:
    assert read("${state_dir}/cache") == ["NX142"]
    assert write("${state_dir}") == []
    assert write("${state_dir}/cache") == []
    assert write("/tmp/${state_dir}") == ["NX143"]
    assert write("${state_dir}x") == ["NX143"]
    assert write("${state_dir}/${state_dir}") == ["NX143"]
    assert write("cache/${state_dir}") == ["NX143", "NX144"]
    assert write("${state_dir}/../../etc") == ["NX146"]
    assert not SEMANTIC_RULES["NX142"].beyond_daemon
    assert SEMANTIC_RULES["NX143"].beyond_daemon


@pytest.mark.parametrize("entry", ["", "data", "./data", "$HOME/x", "C:\\data"])
def test_relative_entries(entry: str) -> None:
    assert read(entry) == ["NX144"]
    assert write(entry) == ["NX144"]


def test_host_network_needs_permission(monkeypatch: pytest.MonkeyPatch) -> None:
    body = 'enabled = true\nnetwork = "host"'
    assert found(body) == [("NX141", "plugin.sandbox.network")]
    assert found(body, LintOptions(host_net_allowed=True)) == []
    monkeypatch.setenv("NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW", "1")
    assert found(body, LintOptions()) == []
    for truthy in ("true", "TRUE", "yes", "YES"):
        monkeypatch.setenv("NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW", truthy)
        assert found(body, LintOptions()) == []
    for other in ("True", "on", "0", ""):
        monkeypatch.setenv("NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW", other)
        assert found(body, LintOptions()) == [("NX141", "plugin.sandbox.network")]
    monkeypatch.delenv("NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW")
    assert found(body, LintOptions()) == [("NX141", "plugin.sandbox.network")]
    assert found('enabled = true\nnetwork = "deny"') == []


# --- disabled sandbox -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        'fs_read_paths = ["/etc"]',
        'enabled = false\nnetwork = "host"',
        'network = "deny"',
        'enabled = false\nfs_write_paths = ["relative", "/"]\nfs_read_paths = ["${state_dir}"]',
    ],
)
def test_disabled_sandbox_warns_once_and_checks_nothing(body: str) -> None:
    diagnostics = run(body)
    assert [(d.code, d.severity, d.key_path) for d in diagnostics] == [
        ("NX140", "warning", "plugin.sandbox")
    ]


@pytest.mark.parametrize("body", ["", "enabled = false", "drop_user = false", "fs_read_paths = []"])
def test_empty_disabled_sandbox_is_silent(body: str) -> None:
    assert run(body) == []


def test_every_entry_is_reported() -> None:
    body = (
        "enabled = true\nfs_read_paths = ['/etc', '/ok', '//boot']\nfs_write_paths = ['x', '/sys']"
    )
    assert found(body) == [
        ("NX145", "plugin.sandbox.fs_read_paths[0]"),
        ("NX146", "plugin.sandbox.fs_read_paths[2]"),
        ("NX144", "plugin.sandbox.fs_write_paths[0]"),
        ("NX145", "plugin.sandbox.fs_write_paths[1]"),
    ]


_segment = st.sampled_from(
    ["etc", "shadow", "..", ".", "", "ssl", "home", "ana", ".ssh", "root", "x"]
)


@given(st.lists(_segment, max_size=8))
def test_normalise_is_idempotent_and_slash_free(segments: list[str]) -> None:
    path = "/" + "/".join(segments)
    normal = normalise(path)
    assert normalise(normal) == normal
    assert normal == "/" or not normal.endswith("/")
    assert "//" not in normal
    assert "/./" not in normal
    assert "/../" not in normal + "/"


@given(st.lists(_segment, max_size=8))
def test_normalised_check_never_misses_a_daemon_hit_on_normal_paths(segments: list[str]) -> None:
    normal = normalise("/" + "/".join(segments))
    if daemon_denylist_hit(normal) is not None:
        assert denylist_hit(normal) is not None


# --- paths bwrap cannot mount on this host (NX148, beyond the daemon) -----------------------------


def missing(sandbox: str) -> list[str]:
    return [d.key_path for d in run_all(sandbox) if d.code == "NX148"]


def test_a_path_missing_here_warns_and_existing_ones_do_not(tmp_path: Path) -> None:
    present = tmp_path / "present"
    present.mkdir()
    absent = tmp_path / "absent"
    diagnostics = run_all(f"enabled = true\nfs_read_paths = ['{present}', '{absent}']")
    assert [(d.code, d.severity, d.key_path) for d in diagnostics] == [
        ("NX148", "warning", "plugin.sandbox.fs_read_paths[1]")
    ]
    assert str(absent) in diagnostics[0].message
    assert missing(f"enabled = true\nfs_write_paths = ['{absent}', '{present}']") == [
        "plugin.sandbox.fs_write_paths[0]"
    ]
    # A dangling link is missing too: bwrap follows it.
    (tmp_path / "dangling").symlink_to(absent)
    assert missing(f"enabled = true\nfs_read_paths = ['{tmp_path / 'dangling'}']") == [
        "plugin.sandbox.fs_read_paths[0]"
    ]


def test_state_dir_entries_disabled_sandboxes_and_refused_paths_are_not_looked_up() -> None:
    assert missing("enabled = true\nfs_write_paths = ['${state_dir}/never/created']") == []
    assert missing("enabled = false\nfs_read_paths = ['/nonexistent/x']") == []
    assert [d.code for d in run_all("enabled = true\nfs_read_paths = ['/root/nope']")] == ["NX145"]
