"""Every archive of the corpus, installed as a local file through the real CLI, is refused
with its kind and exit 1, and leaves every byte around ``<dest>`` as it was.

The workspace of each case holds ``NEXO_HOME`` (with its download cache), an install root
``<dest>`` three levels deep that already holds another plugin, a canary directory that the
escaping cases aim at, and the working directory of the command. The whole workspace is
snapshotted (types, modes, hashes, link targets) before and after the command, so a write
anywhere in it, through a link, a ``..`` or an absolute name, shows up as a difference.

The fast run uses lowered archive limits (``--max-entries`` and friends) so the bombs stay
small, and Click's in-process runner for the bulk of the cases; a few cases and the ``slow``
run go through a real subprocess with the spec's default limits.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.cli import CliResult, clean_env, nexo
from support.tarballs import asset_name, plugin_tarball, sidecar_line

from nexo_pkg.sources.cache import BlobCache

from .archives import (
    ASSET_NAME,
    CONTROLS,
    CORPUS,
    PLUGIN_ID,
    PLUGIN_VERSION,
    CorpusContext,
    Limits,
    sha256_sidecar,
)
from .harness import Entry, diff, snapshot

FAST_LIMITS = Limits(max_entries=40, max_total_bytes=256 * 1024, max_entry_bytes=128 * 1024)
FAST_FLAGS = ("--max-entries", "40", "--max-total-size", "256K", "--max-entry-size", "128K")
# Cases also run through a real subprocess in the fast profile: one per family of defect.
SUBPROCESS_SAMPLE = (
    "dotdot_name",
    "symlink_then_write_through",
    "hardlink_outside_absolute",
    "gzip_bomb_total_size",
    "truncated_gzip",
)


@dataclass
class Workspace:
    root: Path
    home: Path
    dest: Path
    canary: Path
    cwd: Path
    tarball: Path

    def env(self) -> dict[str, str]:
        return clean_env(NEXO_HOME=str(self.home))


def _keeper_template(directory: Path) -> Path:
    """An install root holding the plugin ``keeper`` 1.0.0, installed by the CLI itself."""
    template = directory / "template-dest"
    if template.exists():
        return template
    source = directory / "keeper-src"
    source.mkdir(parents=True)
    data = plugin_tarball("keeper", "1.0.0")
    tarball = source / asset_name("keeper", "1.0.0")
    tarball.write_bytes(data)
    (source / f"{tarball.name}.sha256").write_text(sidecar_line(data, tarball.name))
    env = clean_env(NEXO_HOME=str(directory / "template-home"))
    result = nexo(
        "plugin", "install", str(tarball), "--dest", str(template), "--yes", "--json", env=env
    )
    assert result.exit_code == 0, result.stderr
    assert (template / "keeper-1.0.0" / ".nexo-install.json").is_file()
    return template


@pytest.fixture(scope="module")
def keeper_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _keeper_template(tmp_path_factory.mktemp("keeper"))


def _workspace(root: Path, template: Path, data: bytes) -> Workspace:
    home = root / "home"
    # The shared blob cache exists, as after any earlier install: a refusal must leave it as
    # it was (no blob, no temp file).
    BlobCache(home).prune(max_age=None)
    dest = root / "a" / "b" / "c" / "dest"
    shutil.copytree(template, dest, symlinks=True)
    canary = root / "canary"
    canary.mkdir()
    (canary / "existing.txt").write_text("canary\n")
    cwd = root / "cwd"
    cwd.mkdir()
    incoming = root / "incoming"
    incoming.mkdir()
    tarball = incoming / ASSET_NAME
    tarball.write_bytes(data)
    (incoming / f"{ASSET_NAME}.sha256").write_text(sha256_sidecar(data))
    return Workspace(root, home, dest, canary, cwd, tarball)


def _install_args(space: Workspace, limit_flags: tuple[str, ...]) -> list[str]:
    return [
        "plugin", "install", str(space.tarball), "--dest", str(space.dest), "--yes", "--json",
        *limit_flags,
    ]  # fmt: skip


def _assert_refused(
    name: str, space: Workspace, result: CliResult, before: Mapping[str, Entry]
) -> None:
    case = CORPUS[name]
    assert result.exit_code == 1, (result.exit_code, result.stdout, result.stderr)
    document = result.document
    assert document["ok"] is False
    assert document["kind"] in case.kinds, (name, document)
    assert "Traceback" not in result.stderr
    after = snapshot(space.root)
    changes = diff(before, after)
    assert not any(changes.values()), (name, changes)


def _in_process(
    args: list[str], env: dict[str, str], cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> CliResult:
    monkeypatch.chdir(cwd)
    return nexo(*args, env=env, in_process=True)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_refused_in_process(
    name: str, tmp_path: Path, keeper_template: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    context = CorpusContext(canary_dir=root / "canary", limits=FAST_LIMITS)
    space = _workspace(root, keeper_template, CORPUS[name].build(context))
    before = snapshot(space.root)
    result = _in_process(_install_args(space, FAST_FLAGS), space.env(), space.cwd, monkeypatch)
    _assert_refused(name, space, result, before)


@pytest.mark.parametrize("name", SUBPROCESS_SAMPLE)
def test_refused_by_the_command(name: str, tmp_path: Path, keeper_template: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    context = CorpusContext(canary_dir=root / "canary", limits=FAST_LIMITS)
    space = _workspace(root, keeper_template, CORPUS[name].build(context))
    before = snapshot(space.root)
    result = nexo(*_install_args(space, FAST_FLAGS), env=space.env(), cwd=space.cwd)
    _assert_refused(name, space, result, before)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_refused_by_the_command_with_default_limits(
    name: str, tmp_path: Path, keeper_template: Path
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    context = CorpusContext(canary_dir=root / "canary", limits=Limits())
    space = _workspace(root, keeper_template, CORPUS[name].build(context))
    before = snapshot(space.root)
    result = nexo(*_install_args(space, ()), env=space.env(), cwd=space.cwd, timeout=300)
    _assert_refused(name, space, result, before)


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_controls_install(
    name: str, tmp_path: Path, keeper_template: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without this the refusals above could come from a broken baseline, not the defects.
    root = tmp_path / "ws"
    root.mkdir()
    context = CorpusContext(canary_dir=root / "canary", limits=FAST_LIMITS)
    space = _workspace(root, keeper_template, CONTROLS[name](context))
    keeper_before = snapshot(space.dest / "keeper-1.0.0")
    result = _in_process(_install_args(space, FAST_FLAGS), space.env(), space.cwd, monkeypatch)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert result.document["ok"] is True
    installed = space.dest / f"{PLUGIN_ID}-{PLUGIN_VERSION}"
    assert (installed / "bin" / PLUGIN_ID).stat().st_mode & 0o777 == 0o755
    assert snapshot(space.dest / "keeper-1.0.0") == keeper_before
    assert sorted(p.name for p in space.canary.iterdir()) == ["existing.txt"]
    if name == "nested_archive_is_just_a_file":
        # The inner archive is data: it is stored as is and never unpacked.
        assert (installed / "lib" / "plugin" / "payload.tar.gz").is_file()
        assert not (space.root / "escaped-from-inner").exists()


@pytest.fixture(scope="module")
def written_corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[str, ...]]:
    """The corpus as docs/fuzzing.md writes it to disk, and the install flags it names."""
    directory = tmp_path_factory.mktemp("written")
    script = Path(__file__).with_name("archives.py")
    run = subprocess.run(
        [sys.executable, str(script), str(directory)], capture_output=True, text=True, check=True
    )
    flags = tuple(
        word for pair in re.findall(r"(--max-[a-z-]+) (\S+?)\b", run.stderr) for word in pair
    )
    return directory, flags


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_the_written_corpus_is_refused_with_the_flags_it_names(
    name: str,
    tmp_path: Path,
    keeper_template: Path,
    written_corpus: tuple[Path, tuple[str, ...]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Its size and count cases are built over smaller limits than install's defaults, so the
    # command writing it names the flags under which every written case is an attack.
    directory, flags = written_corpus
    assert flags, "the command writing the corpus names no install flags"
    root = tmp_path / "ws"
    root.mkdir()
    space = _workspace(root, keeper_template, (directory / f"{name}.tar.gz").read_bytes())
    before = snapshot(space.root)
    result = _in_process(_install_args(space, flags), space.env(), space.cwd, monkeypatch)
    _assert_refused(name, space, result, before)
