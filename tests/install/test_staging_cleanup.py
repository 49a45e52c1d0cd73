"""A staging tree the run made but did not publish never outlives the root's lock, however
the run ends: even a signal landing after the tree was made and before the caller held on to
its path (the window a SIGTERM during ``install`` could hit) leaves nothing under staging."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexo_pkg.install.root import locked_root


class _Stop(BaseException):
    """Stands for the exception the CLI's signal handler raises."""


def _staging(dest: Path) -> list[str]:
    area = dest / ".nexo" / "staging"
    return sorted(p.name for p in area.iterdir()) if area.is_dir() else []


def _stopped_after_staging(dest: Path, *, publish_to: Path | None = None) -> None:
    with locked_root(dest) as root:
        tree = root.new_staging("hello")
        (tree / "file").write_text("x")
        assert _staging(dest)
        if publish_to is not None:
            tree.rename(publish_to)
        del tree  # the caller never stored the path, as when a signal lands on the return
        raise _Stop


def test_an_unheld_staging_tree_goes_with_the_lock(tmp_path: Path) -> None:
    dest = tmp_path / "plugins"
    with pytest.raises(_Stop):
        _stopped_after_staging(dest)
    assert _staging(dest) == []


def test_a_published_tree_is_never_touched(tmp_path: Path) -> None:
    dest = tmp_path / "plugins"
    final = dest / "hello-1.0.0"
    with pytest.raises(_Stop):
        _stopped_after_staging(dest, publish_to=final)
    assert (final / "file").read_text() == "x"
    assert _staging(dest) == []
