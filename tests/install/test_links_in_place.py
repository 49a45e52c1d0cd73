"""A symbolic link where a plugin's directory goes is not an install: ``install`` never
follows it to a receipt (it is refused as ``already_installed`` naming the link), ``--force``
replaces the link and leaves what it points to untouched, whether it points at a plugin tree
or nowhere, and ``remove`` does not follow it either."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.tarballs import tree_snapshot, write_plugin

from nexo_pkg.core.errors import NexoError
from nexo_pkg.install.pipeline import install, remove
from nexo_pkg.install.receipts import RECEIPT_NAME

from .conftest import InstallEnv


@pytest.fixture
def linked(install_env: InstallEnv, tmp_path: Path) -> tuple[Path, Path, Path]:
    """hello 1.0.0 installed, its tree moved elsewhere and linked back into its place."""
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    installed = install(str(tarball), install_env.make_options()).path
    elsewhere = tmp_path / "elsewhere"
    installed.rename(elsewhere)
    installed.symlink_to(elsewhere)
    return tarball, installed, elsewhere


def test_a_link_is_not_already_installed(
    install_env: InstallEnv, linked: tuple[Path, Path, Path]
) -> None:
    tarball, place, elsewhere = linked
    before = tree_snapshot(elsewhere)
    with pytest.raises(NexoError) as caught:
        install(str(tarball), install_env.make_options())
    assert caught.value.kind == "already_installed"
    assert "symbolic link" in caught.value.message
    assert place.is_symlink()
    assert tree_snapshot(elsewhere) == before


@pytest.mark.parametrize("dangling", [False, True])
def test_force_replaces_the_link_not_its_target(
    install_env: InstallEnv, linked: tuple[Path, Path, Path], dangling: bool
) -> None:
    tarball, place, elsewhere = linked
    if dangling:
        place.unlink()
        place.symlink_to(elsewhere.parent / "nowhere")
    before = tree_snapshot(elsewhere)
    result = install(str(tarball), install_env.make_options(force=True))
    assert result.path == place
    assert not place.is_symlink()
    assert (place / RECEIPT_NAME).is_file()
    assert tree_snapshot(elsewhere) == before


def test_remove_does_not_follow_a_link(
    install_env: InstallEnv, linked: tuple[Path, Path, Path]
) -> None:
    _, place, elsewhere = linked
    before = tree_snapshot(elsewhere)
    with pytest.raises(NexoError) as caught:
        remove("hello", install_env.dest)
    assert caught.value.kind == "not_installed"
    assert place.is_symlink()
    assert tree_snapshot(elsewhere) == before
