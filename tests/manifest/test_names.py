"""The manifest file names and the daemon's precedence between them."""

from __future__ import annotations

from pathlib import Path

from nexo_pkg.manifest.names import (
    CANONICAL_MANIFEST_NAME,
    MANIFEST_NAMES,
    choose_manifest,
    find_manifest,
    is_manifest_name,
    shadowed_message,
)


def test_both_names_are_manifest_names_in_the_daemons_walk_order() -> None:
    # The daemon's discovery walks sorted by file name: nexo-plugin.toml is met first.
    assert tuple(sorted(MANIFEST_NAMES)) == MANIFEST_NAMES
    assert set(MANIFEST_NAMES) == {"plugin.toml", "nexo-plugin.toml"}
    assert CANONICAL_MANIFEST_NAME == "plugin.toml"
    assert is_manifest_name("plugin.toml")
    assert is_manifest_name("nexo-plugin.toml")
    assert not is_manifest_name("Plugin.toml")
    assert not is_manifest_name("nexo-plugin.toml.bak")


def test_choose_manifest_prefers_the_first_name_the_daemon_meets() -> None:
    assert choose_manifest(["plugin.toml"]).name == "plugin.toml"
    assert choose_manifest(["nexo-plugin.toml"]).name == "nexo-plugin.toml"
    both = choose_manifest(["plugin.toml", "nexo-plugin.toml", "README.md"])
    assert both.name == "nexo-plugin.toml"
    assert both.shadowed == ("plugin.toml",)
    assert choose_manifest(["Cargo.toml"]).name is None


def test_find_manifest_in_a_directory(tmp_path: Path) -> None:
    assert find_manifest(tmp_path).path is None
    (tmp_path / "plugin.toml").write_text("", encoding="utf-8")
    assert find_manifest(tmp_path).path == tmp_path / "plugin.toml"
    assert find_manifest(tmp_path).shadowed == ()
    (tmp_path / "nexo-plugin.toml").write_text("", encoding="utf-8")
    lookup = find_manifest(tmp_path)
    assert lookup.path == tmp_path / "nexo-plugin.toml"
    assert lookup.shadowed == (tmp_path / "plugin.toml",)


def test_a_directory_named_like_a_manifest_is_not_one(tmp_path: Path) -> None:
    (tmp_path / "nexo-plugin.toml").mkdir()
    (tmp_path / "plugin.toml").write_text("", encoding="utf-8")
    assert find_manifest(tmp_path).path == tmp_path / "plugin.toml"


def test_a_missing_directory_has_no_manifest(tmp_path: Path) -> None:
    assert find_manifest(tmp_path / "absent").path is None


def test_shadowed_message_names_both_files() -> None:
    message = shadowed_message("nexo-plugin.toml", "plugin.toml")
    assert "plugin.toml is shadowed by nexo-plugin.toml" in message
