"""The payload's manifest may be `plugin.toml` or `nexo-plugin.toml`, as the daemon reads both."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.tarballs import Member, file, manifest_text, plugin_members, targz, write_plugin

from nexo_pkg.install.pipeline import install
from nexo_pkg.manifest.names import MAX_MANIFEST_BYTES, shadowed_message

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


def test_with_both_names_install_warns_naming_the_shadowed_file(tmp_path: Path) -> None:
    """Issue 11, item 1: both names at the archive root get the daemon's precedence and a
    warning naming the shadowed file, on the screen and in ``--json``, as lint (NX006) and
    check do; the tree is installed whole, both files included."""
    members = [
        *plugin_members("hello", "1.0.0"),
        file("plugin.toml", manifest_text("hello", "9.9.9")),
    ]
    tarball = write_plugin(tmp_path, "hello", "1.0.0", data=targz(members))
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    args: list[str | Path] = ["plugin", "install", tarball, "--yes"]
    shadowed = "plugin.toml is shadowed by nexo-plugin.toml"
    text = nexo(*args, "--dest", tmp_path / "text", env=env)
    assert text.exit_code == 0, text.stderr
    assert any(
        line.startswith("warning: ") and shadowed in line for line in text.stderr.splitlines()
    ), text.stderr
    done = nexo(*args, "--dest", tmp_path / "json", "--json", env=env)
    assert done.exit_code == 0, done.stderr
    assert done.document["version"] == "1.0.0"  # nexo-plugin.toml's, read first
    assert [w for w in done.document["warnings"] if shadowed in w] == [
        shadowed_message("nexo-plugin.toml", "plugin.toml")
    ]
    installed = Path(done.document["path"])
    assert (installed / "plugin.toml").is_file()
    assert (installed / "nexo-plugin.toml").is_file()


def test_one_manifest_name_draws_no_shadow_warning(tmp_path: Path) -> None:
    for name in ("nexo-plugin.toml", "plugin.toml"):
        members = renamed(plugin_members("hello", "1.0.0"), name)
        tarball = write_plugin(tmp_path / name, "hello", "1.0.0", data=targz(members))
        done = nexo(
            "plugin", "install", tarball, "--yes", "--json", "--dest", tmp_path / name / "root",
            env=clean_env(NEXO_HOME=str(tmp_path / "home")),
        )  # fmt: skip
        assert done.exit_code == 0, done.stderr
        assert not any("shadowed" in warning for warning in done.document["warnings"])


@pytest.mark.parametrize("name", ["plugin.toml", "nexo-plugin.toml"])
def test_a_root_manifest_too_large_to_read_is_refused_though_another_is_valid(
    install_env: InstallEnv, tmp_path: Path, name: str
) -> None:
    """An unread ``plugin.toml`` may be the extension-shaped manifest a microapp's host loads,
    and an unread ``nexo-plugin.toml`` is the one plugin discovery reads first: either way the
    manifest checked would not be the one the daemon runs."""
    other = "nexo-plugin.toml" if name == "plugin.toml" else "plugin.toml"
    padding = "#" * 80 + "\n"
    huge = manifest_text("hello", "1.0.0") + padding * (MAX_MANIFEST_BYTES // len(padding) + 1)
    members = [m for m in plugin_members("hello", "1.0.0") if m.name != "nexo-plugin.toml"]
    members += [file(other, manifest_text("hello", "1.0.0")), file(name, huge)]
    tarball = write_plugin(tmp_path, "hello", "1.0.0", data=targz(members))
    error = assert_refused(install_env, str(tarball), "manifest_invalid")
    assert f"{name} at the archive root is {len(huge):,} bytes" in error.message
    assert error.details["member"] == name
