"""A microapp release: the extension-shaped `plugin.toml` is the manifest install checks (it is
what the daemon's extension host reads), with its `nexo-plugin.toml` companion installed beside."""

from __future__ import annotations

from pathlib import Path

from support.tarballs import Member, file, plugin_members, targz, write_plugin

from nexo_pkg.install.pipeline import install

from .conftest import InstallEnv, assert_refused

COMPANION = """[plugin]
id = "greeter"
version = "1.0.0"
name = "Greeter"
description = "Companion"
min_nexo_version = ">=0.1.0"
"""


def extension_manifest(plugin_id: str = "greeter", version: str = "1.0.0", extra: str = "") -> str:
    return (
        f'[plugin]\nid = "{plugin_id}"\nversion = "{version}"\n{extra}\n'
        '[capabilities]\ntools = ["greeter_hello"]\n\n'
        '[transport]\nkind = "stdio"\ncommand = "./bin/greeter"\n'
    )


def microapp_members(manifest: str, *, companion: str | None = COMPANION) -> list[Member]:
    members = [m for m in plugin_members("greeter", "1.0.0") if m.name != "nexo-plugin.toml"]
    members.append(file("plugin.toml", manifest))
    if companion is not None:
        members.append(file("nexo-plugin.toml", companion))
    return members


def test_a_microapp_installs_with_both_manifests(install_env: InstallEnv, tmp_path: Path) -> None:
    tarball = write_plugin(
        tmp_path, "greeter", "1.0.0", data=targz(microapp_members(extension_manifest()))
    )
    result = install(str(tarball), install_env.make_options())
    assert (result.path / "plugin.toml").read_text(encoding="utf-8") == extension_manifest()
    assert (result.path / "nexo-plugin.toml").read_text(encoding="utf-8") == COMPANION
    document = result.to_json()
    assert document["id"] == "greeter"
    assert document["manifest"]["entrypoint"]["command"] == "./bin/greeter"
    # The companion is the extension manifest's partner, not a manifest it shadows.
    assert not any("shadowed" in warning for warning in document["warnings"])


def test_the_extension_manifest_is_linted_not_the_companion(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    """An unknown [plugin] key: the extension manifest parser refuses it (deny_unknown_fields,
    crates/extensions/src/manifest.rs:252), even though the companion lints clean."""
    members = microapp_members(extension_manifest(extra='colour = "blue"\n'))
    tarball = write_plugin(tmp_path, "greeter", "1.0.0", data=targz(members))
    error = assert_refused(install_env, str(tarball), "manifest_invalid")
    assert error.message.startswith("plugin.toml:")


def test_a_microapp_named_for_another_version_is_refused(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    members = microapp_members(extension_manifest(version="2.0.0"), companion=None)
    tarball = write_plugin(tmp_path, "greeter", "1.0.0", data=targz(members))
    assert_refused(install_env, str(tarball), "manifest_mismatch")


ADMIN = """
[plugin.capabilities.admin]
required = ["agents_crud"]
optional = ["skills_crud"]
"""


def test_the_admin_rpcs_a_microapp_asks_for_come_from_its_companion(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    """The daemon reads a microapp's admin capabilities from nexo-plugin.toml, keyed by its
    plugin.id (admin_capability_collect.rs:38-65): the confirmation shows them as for a
    plugin."""
    members = microapp_members(extension_manifest(), companion=COMPANION + ADMIN)
    tarball = write_plugin(tmp_path, "greeter", "1.0.0", data=targz(members))
    result = install(str(tarball), install_env.make_options())
    assert result.to_json()["manifest"]["admin_capabilities"] == {
        "required": ["agents_crud"],
        "optional": ["skills_crud"],
    }


def test_a_companion_for_another_id_asks_for_no_admin_rpc(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    """Keyed by another id, the grants never reach this microapp's router
    (admin_bootstrap.rs:723-734): nothing to show."""
    companion = COMPANION.replace('id = "greeter"', 'id = "other"') + ADMIN
    members = microapp_members(extension_manifest(), companion=companion)
    tarball = write_plugin(tmp_path, "greeter", "1.0.0", data=targz(members))
    result = install(str(tarball), install_env.make_options())
    assert result.to_json()["manifest"]["admin_capabilities"] == {"required": [], "optional": []}
