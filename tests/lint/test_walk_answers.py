"""``lint DIR`` answers from its directory search what it used to ask the OS for file by file
(``manifest.names.listed_directories``, ``lint.discovery.Walked``): which files a directory
holds, and each directory's resolved path. Over a tree with every case those answers touch
(virtualenvs, a directory named like the virtualenv marker, shadowed manifests, a microapp
and its companion, config files with ``exclude`` and ``per-file-ignores``, a linked manifest
and a linked directory), the files found, what shadows them, their settings and their
findings are the same as with every lookup made on disk.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.tarballs import manifest_text

from nexo_pkg.lint.config import LintSettings
from nexo_pkg.lint.discovery import Walked, discover_manifests
from nexo_pkg.lint.engine import lint_bytes
from nexo_pkg.manifest.names import is_file, known_absent, listed_directories

MICROAPP = '[plugin]\nid = "tools"\nversion = "0.1.0"\n\n[transport]\ntype = "stdio"\n'


def _tree(root: Path) -> None:
    def write(relative: str, text: str) -> None:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    write("a/nexo-plugin.toml", manifest_text("alpha", "1.0.0"))
    write("b/nexo-plugin.toml", manifest_text("beta", "1.0.0"))
    write("b/plugin.toml", manifest_text("beta", "1.0.1"))  # shadowed by nexo-plugin.toml
    write("m/plugin.toml", MICROAPP)
    write("m/nexo-plugin.toml", manifest_text("tools", "0.1.0"))  # the microapp's companion
    write("venv/pyvenv.cfg", "home = /usr\n")
    write("venv/x/nexo-plugin.toml", manifest_text("hidden", "1.0.0"))
    write("notvenv/pyvenv.cfg/keep", "")  # a directory of that name: not a virtualenv
    write("notvenv/nexo-plugin.toml", manifest_text("seen", "1.0.0"))
    write("c/.nexo.toml", '[lint]\nignore = ["NX104"]\nexclude = ["skip*"]\n')
    write("c/skipped/nexo-plugin.toml", manifest_text("skipped", "1.0.0"))
    write("c/kept/nexo-plugin.toml", manifest_text("kept", "1.0.0", extra="") + "x = 1\n")
    write("d/pyproject.toml", '[tool.nexo.lint]\nselect = ["NX0"]\n')
    write("d/e/nexo-plugin.toml", manifest_text("delta", "1.0.0"))
    (root / "links").mkdir()
    (root / "links" / "nexo-plugin.toml").symlink_to(root / "a" / "nexo-plugin.toml")
    (root / "linked-dir").symlink_to(root / "b", target_is_directory=True)


def _lint(root: Path, *, walk: bool) -> list[tuple[object, ...]]:
    settings = LintSettings(root)
    walked = Walked() if walk else None
    rows: list[tuple[object, ...]] = []
    with listed_directories(walked.files if walked is not None else {}):
        found = discover_manifests([str(root)], walked)
        if walked is not None:
            settings.know(walked.resolved)
        for item in found:
            resolved = item.resolved if walk else None
            if settings.excluded(item.path, resolved):
                rows.append((str(item.path), "excluded"))
                continue
            options = settings.options_for(item.path, resolved)
            result = lint_bytes(item.path.read_bytes(), path=str(item.path), options=options)
            rows.append(
                (
                    str(item.path),
                    str(item.shadowed_by),
                    options,
                    result.parser,
                    tuple((d.code, d.message) for d in result.diagnostics),
                )
            )
    return rows


@pytest.mark.parametrize("form", ["absolute", "relative", "dot"])
def test_the_walk_answers_as_the_disk_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    _tree(tmp_path / "tree")
    cwd = {"absolute": Path("/"), "relative": tmp_path, "dot": tmp_path / "tree"}[form]
    monkeypatch.chdir(cwd)
    root = {"absolute": tmp_path / "tree", "relative": Path("tree"), "dot": Path()}[form]
    on_disk = _lint(root, walk=False)
    from_walk = _lint(root, walk=True)
    assert from_walk == on_disk
    paths = [str(row[0]) for row in on_disk]
    assert not any("venv/x" in path and "notvenv" not in path for path in paths)
    assert any(path.endswith("notvenv/nexo-plugin.toml") for path in paths)
    assert (str(root / "c" / "skipped" / "nexo-plugin.toml"), "excluded") in on_disk
    shadowed = {row[0]: row[1] for row in on_disk if len(row) > 2}
    assert shadowed[str(root / "b" / "plugin.toml")] == str(root / "b" / "nexo-plugin.toml")
    parsers = {row[0]: row[3] for row in on_disk if len(row) > 2}
    assert parsers[str(root / "m" / "nexo-plugin.toml")] == "companion-manifest"


def test_only_absent_names_are_taken_from_a_listing(tmp_path: Path) -> None:
    (tmp_path / "there.toml").write_text("")
    listing = {str(tmp_path): frozenset({"there.toml", "gone.toml"})}
    with listed_directories(listing):
        assert known_absent(tmp_path / "never.toml")
        assert not is_file(tmp_path / "never.toml")
        # Listed but no longer a file: the disk is asked, and says so.
        assert not known_absent(tmp_path / "gone.toml")
        assert not is_file(tmp_path / "gone.toml")
        assert is_file(tmp_path / "there.toml")
        # A directory the listing does not cover is looked up on disk.
        assert not known_absent(tmp_path / "sub" / "never.toml")
    assert not known_absent(tmp_path / "never.toml")
