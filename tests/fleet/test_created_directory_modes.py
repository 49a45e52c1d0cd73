"""Directories the fleet, trust and discovery commands create are 0755 whatever the umask, as
install's are (tests/install/test_modes.py): under umask 000 a plugin root every user could
write would let anyone plant a plugin the daemon loads, and a configuration directory every
user could write would let anyone put another trust policy or discovery file in its place."""

from __future__ import annotations

import stat
from pathlib import Path

from support.cli import nexo
from support.install_env import umask
from support.registry import Registry
from support.tarballs import write_plugin

from .conftest import MakeDist, push_dist

__all__ = ["umask"]

IDENTITY_REGEXP = r"^https://github\.com/acme/echo/\.github/workflows/release\.yml@refs/tags/v.*$"


def _directory_modes(top: Path) -> dict[str, int]:
    """The mode of ``top`` and of every directory below it, by path relative to its parent."""
    return {
        path.relative_to(top.parent).as_posix(): stat.S_IMODE(path.lstat().st_mode)
        for path in (top, *top.rglob("*"))
        if path.is_dir() and not path.is_symlink()
    }


def test_sync_makes_a_missing_root_and_its_parents_0755(
    *,
    umask: int,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    del umask
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    project = tmp_path / "fleet"
    project.mkdir()
    (project / "nexo-plugins.toml").write_text(
        f'[plugins.echo]\nsource = "{registry.ref("plugins/echo")}"\n'
    )
    common = ("--plain-http", "--trusted-keys", str(policy))
    locked = nexo("plugin", "lock", "-f", str(project / "nexo-plugins.toml"), *common,
                  env=fleet_env, in_process=True)  # fmt: skip
    assert locked.code == 0, locked.stderr
    root = tmp_path / "new" / "state" / "plugins"
    synced = nexo("plugin", "sync", "--lock", str(project / "nexo-plugins.lock"),
                  "--dest", str(root), *common, env=fleet_env, in_process=True)  # fmt: skip
    assert synced.code == 0, synced.stderr
    modes = _directory_modes(tmp_path / "new")
    assert {"new", "new/state", "new/state/plugins", "new/state/plugins/echo-1.2.3"} <= set(modes)
    assert {name: oct(mode) for name, mode in modes.items() if mode != 0o755} == {}


def test_trust_add_makes_the_policy_s_directories_0755(
    umask: int, tmp_path: Path, fleet_env: dict[str, str]
) -> None:
    del umask
    home = Path(fleet_env["NEXO_HOME"])
    assert not home.exists()
    added = nexo("plugin", "trust", "add", "acme", "--identity-regexp", IDENTITY_REGEXP,
                 "--yes", "--json", env=fleet_env, in_process=True)  # fmt: skip
    assert added.code == 0, added.stderr
    policy = home / "config" / "extensions" / "trusted_keys.toml"
    assert 'owner = "acme"' in policy.read_text()
    modes = _directory_modes(home)
    assert set(modes) == {"home", "home/config", "home/config/extensions"}
    assert {name: oct(mode) for name, mode in modes.items() if mode != 0o755} == {}
    assert stat.S_IMODE(policy.stat().st_mode) & 0o022 == 0


def test_disable_makes_the_discovery_file_s_directory_0755(
    umask: int, tmp_path: Path, fleet_env: dict[str, str]
) -> None:
    del umask
    config = tmp_path / "etc-nexo"
    config.mkdir(mode=0o755)
    config.chmod(0o755)
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    installed = nexo("plugin", "install", str(tarball), "--yes", "--config", str(config),
                     env=fleet_env, in_process=True)  # fmt: skip
    assert installed.code == 0, installed.stderr
    disabled = nexo("plugin", "disable", "hello", "--config", str(config), "--json",
                    env=fleet_env, in_process=True)  # fmt: skip
    assert disabled.code == 0, disabled.stderr
    assert "hello" in (config / "plugins" / "discovery.yaml").read_text()
    assert _directory_modes(config) == {"etc-nexo": 0o755, "etc-nexo/plugins": 0o755}
