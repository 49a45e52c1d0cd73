"""``pack`` writes no name its own ``install`` and ``check`` refuse: one rule for both
(``sources.archive.check_member_names``), names stored NFC, and a symlink that never reaches
a file refused in one line."""

from __future__ import annotations

import os
import tarfile
import unicodedata
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.cli import clean_env, nexo

from nexo_pkg.core.errors import NexoError
from nexo_pkg.pack.archive import complete_entries, write_tar_gz
from nexo_pkg.pack.build import PackOptions, pack
from nexo_pkg.pack.layout import TreeWalk, collect_tree
from nexo_pkg.sources.archive import inspect_archive
from pack.pack_helpers import write_project

EPOCH = 1_700_000_000
CAFE = "caf\u00e9.py"

# Each: the src/ names (bytes, as the file system holds them) that pack must refuse, and the
# archive names the refusal must name.
HOSTILE: dict[str, tuple[list[bytes], list[str]]] = {
    "case-files": ([b"Util.py", b"util.py"], ["lib/plugin/Util.py", "lib/plugin/util.py"]),
    "case-directories": ([b"Pkg/a.py", b"pkg/b.py"], ["lib/plugin/Pkg", "lib/plugin/pkg"]),
    "nfc-nfd": (
        [CAFE.encode(), unicodedata.normalize("NFD", CAFE).encode()],
        ["lib/plugin/caf"],
    ),
    "kelvin-sign": (["\u212a.py".encode(), b"k.py"], ["lib/plugin/k.py"]),
    "newline": ([b"a\nb.py"], ["lib/plugin/a\\nb.py"]),
    "escape-sequence": ([b"a\x1b[31mb.py"], ["lib/plugin/a\\x1b[31mb.py"]),
    "invalid-utf8": ([b"a\xffb.py"], ["not valid UTF-8"]),
    "backslash": ([b"a\\b.py"], ["backslash"]),
}


def _project(root: Path, names: list[bytes]) -> Path:
    write_project(root)
    for name in names:
        path = root / "src" / os.fsdecode(name)  # bytes that are not UTF-8 come back as they were
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"X = 1\n")
    return root


def _unchecked_tarball(project: Path, out: Path) -> Path:
    """What pack wrote before it checked names: the same tree, written as it is."""
    entries = collect_tree(project / "src", TreeWalk("lib/plugin", project))
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as stream:
        write_tar_gz(complete_entries(entries), stream, mtime=EPOCH)
    return out


@pytest.mark.parametrize("case", list(HOSTILE))
def test_pack_refuses_what_install_refuses_with_install_s_message(
    tmp_path: Path, case: str
) -> None:
    names, named = HOSTILE[case]
    project = _project(tmp_path / "project", names)
    with pytest.raises(NexoError) as caught:
        pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    error = caught.value
    assert (error.kind, error.exit_code) == ("layout_invalid", 1)
    assert "\n" not in error.message
    assert "\x1b" not in error.message
    for text in named:
        assert text in error.message, (text, error.message)
    assert not (project / "dist").exists()
    # The installer refuses the same tree written without the check, with the same words.
    with pytest.raises(NexoError) as refused:
        inspect_archive(_unchecked_tarball(project, tmp_path / "raw.tar.gz"))
    assert refused.value.kind == "archive_unsafe"
    assert error.message.startswith(refused.value.message)


def test_names_are_stored_nfc(tmp_path: Path) -> None:
    decomposed = unicodedata.normalize("NFD", CAFE)
    project = _project(tmp_path / "project", [decomposed.encode(), "\u212a.py".encode()])
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    with tarfile.open(result.tarball.path) as archive:
        names = set(archive.getnames())
    assert f"lib/plugin/{CAFE}" in names
    assert "lib/plugin/K.py" in names  # the Kelvin sign's NFC form
    assert not any(name != unicodedata.normalize("NFC", name) for name in names)


@pytest.mark.parametrize("kind", ["loop", "self"])
def test_a_symlink_that_never_reaches_a_file_is_one_line(tmp_path: Path, kind: str) -> None:
    project = _project(tmp_path / "project", [])
    link = project / "src" / "link"
    if kind == "self":
        link.symlink_to(link)
    else:
        (project / "src" / "other").symlink_to(link)
        link.symlink_to(project / "src" / "other")
    result = nexo(
        "plugin", "pack", str(project), env=clean_env(SOURCE_DATE_EPOCH=str(EPOCH)), in_process=True
    )
    assert result.code == 1, result.stderr
    assert "Traceback" not in result.stderr
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert "never reaches a file" in line


# Names built from the characters that fold, normalise or decompose into one another.
_PIECES = st.sampled_from(["a", "A", "k", "K", "\u212a", "e", "\u00e9", "e\u0301", "\u00df", "ss"])
_NAME = st.lists(_PIECES, min_size=1, max_size=3).map("".join)
_TREE = st.lists(st.tuples(st.one_of(st.none(), _NAME), _NAME), min_size=1, max_size=5)


@pytest.mark.daemon_host
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tree=_TREE)
def test_every_tree_pack_accepts_installs_and_checks(
    tmp_path_factory: pytest.TempPathFactory, tree: list[tuple[str | None, str]]
) -> None:
    root = tmp_path_factory.mktemp("tree")
    names: list[bytes] = []
    for directory, stem in tree:
        name = f"{directory}/{stem}.py" if directory else f"{stem}.py"
        names.append(name.encode())
    try:
        project = _project(root / "project", names)
    except (IsADirectoryError, NotADirectoryError, FileExistsError):
        return  # a file and a directory of one name: no such tree on disk
    try:
        result = pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    except NexoError as error:
        refusal: NexoError | None = error
    else:
        refusal = None
    if refusal is not None:
        assert refusal.kind == "layout_invalid", refusal.message
        return
    tarball = result.tarball.path
    env = clean_env(NEXO_HOME=str(root / "home"))
    dest = root / "plugins"
    installed = nexo(
        "plugin", "install", str(tarball), "--dest", str(dest), "--yes", env=env, in_process=True
    )
    assert installed.code == 0, installed.stderr
    # `check` reads the tarball with the installer's rules: it gets as far as the plugin.
    checked = nexo("plugin", "check", str(tarball), "--json", env=env, in_process=True)
    assert checked.document.get("kind") not in {"archive_unsafe", "archive_invalid"}
    assert checked.document["checks"], checked.document


def test_names_windows_reserves_are_packed_as_they_are(tmp_path: Path) -> None:
    """The daemon runs on Linux and macOS, where ``CON.py``, ``aux.txt`` or ``nul`` are plain
    names: pack keeps them (a Windows author cannot have them on disk; a Linux author's tarball
    is no less installable for them), from a project path with spaces and non-ASCII letters."""
    names = [b"CON.py", b"aux.txt", b"nul", b"com1.py", "\u00c4rger mit Leerzeichen.py".encode()]
    project = _project(tmp_path / "Mis Plugins \u00f1and\u00fa" / "project", names)
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    inspect_archive(result.tarball.path)  # the installer's own name rules: no refusal
    with tarfile.open(result.tarball.path) as archive:
        packed = set(archive.getnames())
    for name in names:
        assert f"lib/plugin/{name.decode()}" in packed


def test_a_name_nfc_makes_longer_than_a_file_name_can_be_is_refused(tmp_path: Path) -> None:
    """U+0344 is two code points once NFC-normalised: a 204-byte name on disk becomes 404 bytes
    as pack stores it, which no file system can create, so ``install`` and ``check`` would
    refuse the tarball. Pack refuses it with the installer's words, writing nothing."""
    name = "a" + "\u0344" * 100 + ".py"
    assert len(name.encode()) <= 255 < len(unicodedata.normalize("NFC", name).encode())
    project = _project(tmp_path / "project", [name.encode()])
    with pytest.raises(NexoError) as caught:
        pack(PackOptions(project=project, source_date_epoch=EPOCH), environ={})
    error = caught.value
    assert (error.kind, error.exit_code) == ("layout_invalid", 1)
    assert "has a component longer than 255 bytes" in error.message
    assert not (project / "dist").exists()
    # The installer refuses the tree as pack would have stored it, with the same words.
    entries = collect_tree(project / "src", TreeWalk("lib/plugin", project))
    stored = [replace(e, name=unicodedata.normalize("NFC", e.name)) for e in entries]
    raw = tmp_path / "raw.tar.gz"
    with raw.open("wb") as stream:
        write_tar_gz(complete_entries(stored), stream, mtime=EPOCH)
    with pytest.raises(NexoError) as refused:
        inspect_archive(raw)
    assert refused.value.kind == "archive_unsafe"
    assert error.message.startswith(refused.value.message)
