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


def test_a_signal_between_the_renames_of_a_replacement_puts_the_old_tree_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old version has been moved out of sight and the new one is about to be renamed in
    when the signal's exception lands (as Ctrl-C may, between two renames): the replacement
    is undone before the exception goes on, so the root holds the old version, visible, as
    before the run (not nothing until the next run replays the journal)."""
    from nexo_pkg.install import root as root_module

    dest = tmp_path / "plugins"
    old = dest / "hello-1.0.0"
    old.mkdir(parents=True)
    (old / "file").write_text("old")
    final = dest / "hello-2.0.0"
    real_rename = Path.rename

    def rename(self: Path, target: str | Path) -> Path:
        if Path(target) == final:
            raise _Stop
        return real_rename(self, target)

    with locked_root(dest) as root:
        tree = root.new_staging("hello")
        (tree / "file").write_text("new")
        monkeypatch.setattr(Path, "rename", rename)
        with pytest.raises(_Stop):
            root_module.publish(root, tree, final, replaces=(old,))
        monkeypatch.undo()
        assert (old / "file").read_text() == "old"
        assert not final.exists()
        journal = dest / ".nexo" / "journal"
        assert not journal.exists() or list(journal.iterdir()) == []


def test_a_signal_right_after_the_last_rename_of_a_replacement_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same exception landing once the new tree is renamed in: the replacement is
    complete and stays so (one version visible, never the old one back beside it)."""
    from nexo_pkg.install import root as root_module

    dest = tmp_path / "plugins"
    old = dest / "hello-1.0.0"
    old.mkdir(parents=True)
    (old / "file").write_text("old")
    final = dest / "hello-2.0.0"
    real_rename = Path.rename

    def rename(self: Path, target: str | Path) -> Path:
        moved = real_rename(self, target)
        if Path(target) == final:
            raise _Stop
        return moved

    with locked_root(dest) as root:
        tree = root.new_staging("hello")
        (tree / "file").write_text("new")
        monkeypatch.setattr(Path, "rename", rename)
        with pytest.raises(_Stop):
            root_module.publish(root, tree, final, replaces=(old,))
        monkeypatch.undo()
    assert (final / "file").read_text() == "new"
    assert not old.exists()
    assert sorted(p.name for p in dest.iterdir() if not p.name.startswith(".")) == [final.name]
