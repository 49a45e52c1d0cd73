"""What the installer creates besides the plugin tree has fixed modes whatever the umask: the
install root and the parents it had to create, the download and blob caches are 0755; the
receipt and the lock file 0644. Under umask 000 none of them is writable by other users (a
world-writable root would let anyone plant a plugin the daemon loads, a world-writable
receipt would let anyone point upgrades elsewhere)."""

from __future__ import annotations

import stat
from pathlib import Path

from support.tarballs import release_assets

from nexo_pkg.install.pipeline import install, upgrade
from nexo_pkg.install.receipts import RECEIPT_NAME
from nexo_pkg.install.root import LOCK_NAME

from .conftest import InstallEnv


def _modes(root: Path) -> dict[str, int]:
    return {
        path.relative_to(root).as_posix(): stat.S_IMODE(path.lstat().st_mode)
        for path in (root, *root.rglob("*"))
    }


def test_what_the_installer_creates_has_fixed_modes(
    umask: int, install_env: InstallEnv, tmp_path: Path
) -> None:
    del umask
    install_env.server.publish(
        "acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"), digests=True
    )
    dest = tmp_path / "new" / "plugins"
    first = install("acme/hello", install_env.make_options(dest=dest))
    install_env.server.publish(
        "acme", "hello", "v1.1.0", release_assets("hello", "1.1.0"), digests=True
    )
    upgrade("hello", install_env.make_options(dest=dest), keep_old=True)
    assert not first.path.exists()
    home = _modes(install_env.home)
    roots = _modes(tmp_path / "new")
    directories = {
        name: mode
        for tree, modes in ((install_env.home, home), (tmp_path / "new", roots))
        for name, mode in modes.items()
        if (tree / name).is_dir()
    }
    assert "cache/blobs/sha256" in directories
    # One cache directory: nothing is staged for a download outside it.
    assert "state/plugin-install-cache" not in directories
    assert {"plugins/.nexo/kept", "plugins/hello-1.1.0"} <= directories.keys()
    assert {name: mode for name, mode in directories.items() if mode != 0o755} == {}
    assert roots[f"plugins/{LOCK_NAME}"] == 0o644
    assert roots[f"plugins/hello-1.1.0/{RECEIPT_NAME}"] == 0o644
    writable = {name for name, mode in {**home, **roots}.items() if mode & stat.S_IWOTH}
    assert writable == set()
