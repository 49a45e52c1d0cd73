"""The payload's manifest may be `plugin.toml` or `nexo-plugin.toml`, as the daemon reads both."""

from __future__ import annotations

from pathlib import Path

from support.tarballs import Member, file, manifest_text, plugin_members, targz, write_plugin

from nexo_pkg.install.pipeline import install

from .conftest import InstallEnv, assert_refused


def renamed(members: list[Member], name: str) -> list[Member]:
    """``members`` with the root manifest stored under ``name``."""
    return [
        file(name, manifest_text("hello", "1.0.0")) if member.name == "nexo-plugin.toml" else member
        for member in members
    ]


def test_a_tarball_with_only_plugin_toml_installs(install_env: InstallEnv, tmp_path: Path) -> None:
    members = renamed(plugin_members("hello", "1.0.0"), "plugin.toml")
    tarball = write_plugin(tmp_path, "hello", "1.0.0", data=targz(members))
    result = install(str(tarball), install_env.make_options())
    assert (result.path / "plugin.toml").is_file()
    assert not (result.path / "nexo-plugin.toml").exists()
    assert result.to_json()["id"] == "hello"


def test_with_both_names_the_one_the_daemon_reads_first_is_checked(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    members = [*plugin_members("hello", "1.0.0"), file("plugin.toml", "[plugin]\nid = 'stale'\n")]
    tarball = write_plugin(tmp_path, "hello", "1.0.0", data=targz(members))
    result = install(str(tarball), install_env.make_options())
    assert result.to_json()["version"] == "1.0.0"


def test_a_tarball_without_either_name_is_refused_naming_both(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    members = [m for m in plugin_members("hello", "1.0.0") if m.name != "nexo-plugin.toml"]
    members.append(file("Plugin.toml", manifest_text("hello", "1.0.0")))
    tarball = write_plugin(tmp_path, "hello", "1.0.0", data=targz(members))
    error = assert_refused(install_env, str(tarball), "manifest_invalid")
    assert "nexo-plugin.toml or plugin.toml at the archive root is missing" in error.message
