"""One-pass extraction: names, modes and times are the installer's, the archive is inflated
once, and every refusal leaves the install root as it was."""

from __future__ import annotations

import dataclasses
import io
import os
import pickle
import stat
import tarfile
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from support.cli import clean_env, nexo
from support.tarballs import (
    Member,
    directory,
    file,
    gzip_bytes,
    launcher_text,
    manifest_text,
    plugin_members,
    plugin_tarball,
    sha256_hex,
    tar_bytes,
    targz,
    tree_snapshot,
    write_plugin,
)

from nexo_pkg.core import durable
from nexo_pkg.core.errors import NexoError
from nexo_pkg.install.pipeline import install
from nexo_pkg.install.receipts import RECEIPT_NAME
from nexo_pkg.install.verify import tree_modes, verify_installed
from nexo_pkg.sources import archive as inspect
from nexo_pkg.sources.archive import ArchiveLimits, inspect_archive
from nexo_pkg.sources.extract import MAX_OPEN_DIRECTORIES, safe_extract

from .conftest import InstallEnv

ID, VERSION = "hello", "1.0.0"


def _flat_plugin(*extra: Member) -> list[Member]:
    """A valid plugin without any directory entry: every directory is implied."""
    return [
        file("nexo-plugin.toml", manifest_text(ID, VERSION)),
        file(f"bin/{ID}", launcher_text(), mode=0o755),
        file("lib/plugin/main.py", "print('hello')\n"),
        *extra,
    ]


def _refused(install_env: InstallEnv, tmp_path: Path, data: bytes, kind: str) -> NexoError:
    """Install ``data`` into a root that already holds a plugin; it must change nothing."""
    other = write_plugin(tmp_path / "other", "other", "2.0.0")
    install(str(other), install_env.make_options())
    before = tree_snapshot(install_env.dest)
    tarball = write_plugin(tmp_path / "dist", ID, VERSION, data=data)
    with pytest.raises(NexoError) as caught:
        install(str(tarball), install_env.make_options())
    assert caught.value.kind == kind, caught.value.message
    assert tree_snapshot(install_env.dest) == before
    assert not install_env.cache.exists() or list(install_env.cache.iterdir()) == []
    return caught.value


def test_every_directory_is_0755_whatever_the_umask(
    umask: int, tmp_path: Path, install_env: InstallEnv
) -> None:
    members = _flat_plugin(
        file("lib/vendor/pkg/deep/mod.py", "X = 1\n"),
        directory("lib/open", mode=0o777),
        file("lib/open/data.txt", "x", mode=0o666),
        file("lib/tool", "#!/bin/sh\n", mode=0o700),
    )
    tarball = write_plugin(tmp_path / "dist", ID, VERSION, data=targz(members))
    result = install(str(tarball), install_env.make_options())
    modes = {
        path.relative_to(result.path).as_posix(): stat.S_IMODE(path.stat().st_mode)
        for path in result.path.rglob("*")
    }
    assert stat.S_IMODE(result.path.stat().st_mode) == 0o755
    directories = {name for name in modes if (result.path / name).is_dir()}
    assert directories == {"bin", "lib", "lib/plugin", "lib/vendor", "lib/vendor/pkg",
                           "lib/vendor/pkg/deep", "lib/open"}  # fmt: skip
    assert {modes[name] for name in directories} == {0o755}
    assert modes["lib/open/data.txt"] == 0o644
    assert modes["lib/tool"] == 0o755
    assert modes[f"bin/{ID}"] == 0o755
    assert modes["lib/vendor/pkg/deep/mod.py"] == 0o644


def test_the_listing_holds_the_modes_a_walk_of_the_tree_finds(umask: int, tmp_path: Path) -> None:
    """What the receipt records without walking the tree: the modes read from every file
    and directory as it was made, under each umask, equal a walk's."""
    members = _flat_plugin(
        file("lib/vendor/pkg/deep/mod.py", "X = 1\n"),
        directory("lib/open", mode=0o777),
        directory("lib/empty", mode=0o700),
        file("lib/open/data.txt", "x", mode=0o666),
        file("lib/tool", "#!/bin/sh\n", mode=0o700),
    )
    tarball = tmp_path / "plugin.tar.gz"
    tarball.write_bytes(targz(members))
    destination = tmp_path / "tree"
    destination.mkdir()
    listing = safe_extract(tarball, destination)
    assert listing.modes is not None
    assert listing.modes == tree_modes(destination)
    assert listing.modes.keys() == listing.files.keys() | listing.directories
    assert listing.modes["lib/tool"] == 0o755
    assert listing.modes["lib/open/data.txt"] == 0o644
    assert listing.modes["lib/empty"] == 0o755
    assert inspect_archive(tarball).modes is None


def test_a_listing_comes_back_from_a_worker_whole(tmp_path: Path) -> None:
    """A listing pickled (as extraction workers send it back) is the same listing: every
    field, each set here."""
    members = _flat_plugin(
        file("plugin.toml", manifest_text(ID, VERSION)),
        file("sbom.cdx.json", '{"bomFormat": "CycloneDX"}'),
        file("lib/tool", "#!/bin/sh\n", mode=0o700),
        directory("lib/empty"),
    )
    tarball = tmp_path / "plugin.tar.gz"
    tarball.write_bytes(targz(members))
    destination = tmp_path / "tree"
    destination.mkdir()
    listing = safe_extract(tarball, destination)
    copy = pickle.loads(pickle.dumps(listing, protocol=pickle.HIGHEST_PROTOCOL))  # noqa: S301 (ours)
    assert copy == listing
    defaults = inspect.ArchiveListing()
    for field in dataclasses.fields(listing):
        assert getattr(listing, field.name) != getattr(defaults, field.name), field.name
        assert getattr(copy, field.name) == getattr(listing, field.name), field.name
    assert copy.files["lib/tool"] == inspect.FileInfo(10, sha256_hex(b"#!/bin/sh\n"), 0o700)
    assert type(copy.files["lib/tool"]) is inspect.FileInfo


@pytest.mark.parametrize("size", [b"-1", b"-1024", b"-0000001"])
def test_a_negative_size_is_refused(size: bytes, tmp_path: Path, install_env: InstallEnv) -> None:
    """``tarfile`` reads a size field of ``-1024`` as it is; followed, it steps back over the
    header just read (``tarfile`` itself then reads the same members forever)."""
    raw = bytearray(
        tar_bytes(_flat_plugin(file("lib/negative.bin", b"")), fmt=tarfile.USTAR_FORMAT)
    )
    with tarfile.open(fileobj=io.BytesIO(bytes(raw))) as archive:
        at = archive.getmember("lib/negative.bin").offset
    raw[at + 124 : at + 136] = size.ljust(12, b"\x00")
    raw[at + 148 : at + 156] = b" " * 8
    raw[at + 148 : at + 156] = b"%06o\x00 " % sum(raw[at : at + 512])
    error = _refused(install_env, tmp_path, gzip_bytes(bytes(raw)), "archive_invalid")
    assert error.message.endswith(f"'lib/negative.bin' has a negative size ({int(size, 8)})")


@pytest.mark.parametrize(
    "name", ["lib/a\x85b", "lib/\x9b31mred", "lib/\x80", "lib/\x9f.py", "bin/\x7f"]
)
def test_c1_control_characters_in_names_are_refused(
    name: str, tmp_path: Path, install_env: InstallEnv
) -> None:
    error = _refused(install_env, tmp_path, targz(_flat_plugin(file(name, "x"))), "archive_unsafe")
    assert "control characters" in error.message


COLLISIONS: dict[str, list[Member]] = {
    "file_beside_implied_directory": [file("lib/Vendor", "x"), file("lib/vendor/x.py", "y")],
    "implied_directory_beside_file": [file("lib/vendor/x.py", "y"), file("lib/VENDOR", "x")],
    "two_implied_directories": [file("lib/A/x.py", "x"), file("lib/a/y.py", "y")],
    "nfc_file_beside_implied_directory": [
        file("lib/caf\u00e9", "x"),
        file("lib/cafe\u0301/x.py", "y"),
    ],
    "explicit_directory_beside_implied_one": [
        file("lib/data/x.bin", "x"),
        directory("lib/DATA"),
    ],
    "file_below_a_case_folded_file": [file("lib/f", "x"), file("lib/F/g", "y")],
}


@pytest.mark.parametrize("case", sorted(COLLISIONS))
def test_case_and_normalisation_collisions_with_implied_directories(
    case: str, tmp_path: Path, install_env: InstallEnv
) -> None:
    data = targz(_flat_plugin(*COLLISIONS[case]))
    _refused(install_env, tmp_path, data, "archive_unsafe")


def test_an_explicit_directory_after_its_implied_creation_is_fine(tmp_path: Path) -> None:
    tarball = tmp_path / "a.tar.gz"
    tarball.write_bytes(targz(_flat_plugin(file("lib/data/x.bin", "x"), directory("lib/data"))))
    listing = inspect_archive(tarball)
    assert {"lib", "lib/data", "lib/plugin", "bin"} <= listing.directories


@pytest.mark.parametrize("mtime", ["1e400", "-1e400", "nan", "-99999999999999999999999", "1e300"])
def test_impossible_pax_mtimes_are_invalid(
    mtime: str, tmp_path: Path, install_env: InstallEnv
) -> None:
    bad = Member("lib/plugin/old.py", b"x = 1\n", pax={"mtime": mtime})
    error = _refused(install_env, tmp_path, targz(_flat_plugin(bad)), "archive_invalid")
    assert "modification time" in error.message


def test_impossible_mtime_is_one_json_document_on_the_command_line(tmp_path: Path) -> None:
    bad = Member("lib/plugin/old.py", b"x = 1\n", pax={"mtime": "1e400"})
    tarball = write_plugin(tmp_path / "dist", ID, VERSION, data=targz(_flat_plugin(bad)))
    dest = tmp_path / "dest"
    result = nexo(
        "plugin",
        "install",
        str(tarball),
        "--dest",
        str(dest),
        "--yes",
        "--json",
        env=clean_env(NEXO_HOME=str(tmp_path / "home")),
        in_process=True,
    )
    assert result.exit_code == 1
    assert result.document["kind"] == "archive_invalid"
    assert "Traceback" not in result.stderr
    assert not dest.exists()


@pytest.mark.parametrize(
    "name", [RECEIPT_NAME, RECEIPT_NAME.upper(), f"{RECEIPT_NAME}.tmp", "./.nexo-install.json"]
)
def test_members_named_like_the_installers_own_files_are_refused(
    name: str, tmp_path: Path, install_env: InstallEnv
) -> None:
    forged = file(name, '{"id": "hello", "files": {}}\n')
    error = _refused(install_env, tmp_path, targz(_flat_plugin(forged)), "archive_unsafe")
    assert "installer keeps for itself" in error.message


@pytest.mark.parametrize("dry_run", [False, True], ids=["install", "dry-run"])
@pytest.mark.parametrize(
    "name", [f"{RECEIPT_NAME}/x", f"{RECEIPT_NAME.upper()}/sub/x", f"{RECEIPT_NAME}.tmp/x"]
)
def test_a_root_directory_named_like_the_installers_own_files_is_refused(
    name: str, dry_run: bool, tmp_path: Path
) -> None:
    """A directory only implied by a member below it (``.nexo-install.json/x``) takes the
    receipt's place as surely as a file of that name: refused as the archive's fault, by the
    dry run too, and nothing is written."""
    forged = file(name, '{"id": "hello", "files": {}}\n')
    tarball = write_plugin(tmp_path / "dist", ID, VERSION, data=targz(_flat_plugin(forged)))
    home, dest = tmp_path / "home", tmp_path / "dest"
    flags = ["--dry-run"] if dry_run else ["--yes"]
    result = nexo(
        "plugin", "install", tarball, "--dest", dest, *flags, "--json",
        env=clean_env(NEXO_HOME=str(home)),
    )  # fmt: skip
    assert result.exit_code == 1, result.stdout
    assert result.document["kind"] == "archive_unsafe"
    assert "installer keeps for itself" in result.document["error"]
    assert not dest.exists()
    assert not (home / "cache" / "blobs" / "tmp").exists() or not any(
        (home / "cache" / "blobs" / "tmp").iterdir()
    )


def test_the_reserved_name_below_the_root_is_an_ordinary_file(
    tmp_path: Path, install_env: InstallEnv
) -> None:
    members = _flat_plugin(file(f"lib/{RECEIPT_NAME}", "{}\n"))
    tarball = write_plugin(tmp_path / "dist", ID, VERSION, data=targz(members))
    result = install(str(tarball), install_env.make_options())
    assert (result.path / "lib" / RECEIPT_NAME).read_text() == "{}\n"
    report = verify_installed(_installed(install_env))
    assert report.ok, report


def _installed(install_env: InstallEnv) -> Any:
    from nexo_pkg.install.receipts import scan_installed

    (item,) = scan_installed(install_env.dest)
    return item


class _CountingInflate(ModuleType):
    """zlib, counting the inflaters made (one per gzip member read)."""

    def __init__(self) -> None:
        super().__init__("counting_zlib")
        self.made = 0

    def decompressobj(self, wbits: int) -> Any:
        self.made += 1
        return zlib.decompressobj(wbits=wbits)


def test_the_archive_is_inflated_once_per_install(
    tmp_path: Path, install_env: InstallEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    counting = _CountingInflate()
    monkeypatch.setattr(inspect, "INFLATE", counting)
    tarball = write_plugin(tmp_path / "dist", ID, VERSION, data=plugin_tarball(ID, VERSION))
    install(str(tarball), install_env.make_options())
    assert counting.made == 1


def _bad_crc(data: bytes) -> bytes:
    return data[:-8] + bytes([data[-8] ^ 0xFF]) + data[-7:]


@pytest.mark.parametrize("backend", ["zlib", "isal"])
def test_both_inflate_backends_accept_and_refuse_alike(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend == "isal":
        isal_zlib = pytest.importorskip("isal.isal_zlib")
        monkeypatch.setattr(inspect, "INFLATE", isal_zlib)
    else:
        monkeypatch.setattr(inspect, "INFLATE", zlib)
    good = targz(plugin_members(ID, VERSION, payload=os.urandom(3 * 1024 * 1024)))
    cases = {
        "bad_crc": _bad_crc(good),
        "truncated": good[: len(good) // 2],
        "trailing_garbage": good + b"garbage!",
    }
    tarball = tmp_path / "a.tar.gz"
    for name, data in cases.items():
        tarball.write_bytes(data)
        out = tmp_path / name
        out.mkdir()
        with pytest.raises(NexoError) as caught:
            safe_extract(tarball, out)
        assert caught.value.kind == "archive_invalid", (name, caught.value.message)
        assert list(out.iterdir()) == []
    tarball.write_bytes(good + targz([]))  # two gzip members, as `cat a.gz b.gz` makes
    out = tmp_path / "good"
    out.mkdir()
    listing = safe_extract(tarball, out)
    assert (out / "lib/plugin/data.bin").stat().st_size == 3 * 1024 * 1024
    assert listing.files["lib/plugin/data.bin"].size == 3 * 1024 * 1024


def _with_flags(data: bytes, flags: int) -> bytes:
    """``data`` (a gzip member) with ``flags`` added to its header's FLG byte."""
    return data[:3] + bytes([data[3] | flags]) + data[4:]


@pytest.mark.parametrize("backend", ["zlib", "isal"])
def test_both_inflate_backends_refuse_the_same_damage_in_the_same_words(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ISA-L inflates a gzip member whose header sets a reserved flag bit, which zlib and
    ``gzip -d`` refuse (RFC 1952 2.3.1.2): an archive must not install on one platform and be
    refused on another. A damaged stream reads the same whichever library inflates it."""
    if backend == "isal":
        monkeypatch.setattr(inspect, "INFLATE", pytest.importorskip("isal.isal_zlib"))
    else:
        monkeypatch.setattr(inspect, "INFLATE", zlib)
    good = targz(plugin_members(ID, VERSION, payload=os.urandom(64 * 1024)))
    cases = {
        "reserved flag, first member": (_with_flags(good, 0x20), "reserved flag bits"),
        "reserved flag, second member": (good + _with_flags(targz([]), 0x80), "reserved flag"),
        "bad crc": (_bad_crc(good), "the gzip data is damaged"),
        "bad length": (good[:-1] + bytes([good[-1] ^ 1]), "the gzip data is damaged"),
    }
    tarball = tmp_path / "a.tar.gz"
    messages = {}
    for name, (data, words) in cases.items():
        tarball.write_bytes(data)
        out = tmp_path / name.replace(" ", "-").replace(",", "")
        out.mkdir()
        with pytest.raises(NexoError) as caught:
            safe_extract(tarball, out)
        assert caught.value.kind == "archive_invalid", (name, caught.value.message)
        assert words in caught.value.message, (name, caught.value.message)
        assert list(out.iterdir()) == []
        messages[name] = caught.value.message
    assert messages["bad crc"] == messages["bad length"]
    assert "zlib" not in messages["bad crc"]
    assert "Error -" not in messages["bad crc"]


def test_many_directories_visited_out_of_order(tmp_path: Path) -> None:
    """More directories than descriptors kept open, revisited in turn: each is reopened."""
    count = MAX_OPEN_DIRECTORIES * 2
    members = [file(f"lib/d{index:03d}/first.py", f"A = {index}\n") for index in range(count)]
    members += [file(f"lib/d{index:03d}/second.py", f"B = {index}\n") for index in range(count)]
    tarball = tmp_path / "a.tar.gz"
    tarball.write_bytes(targz(_flat_plugin(*members)))
    out = tmp_path / "out"
    out.mkdir()
    listing = safe_extract(tarball, out, ArchiveLimits())
    assert len(listing.files) == 3 + 2 * count
    for index in (0, count // 2, count - 1):
        assert (out / f"lib/d{index:03d}/second.py").read_text() == f"B = {index}\n"


def test_files_after_their_directory_was_closed_go_to_that_directory(tmp_path: Path) -> None:
    """Files of one directory, then more new directories than descriptors kept open (the
    first one's is closed, its number taken again), then more files of the first: they are
    written where they belong, through the directory reopened, not a number reused."""
    count = MAX_OPEN_DIRECTORIES + 8
    members = [file(f"lib/a/before{index}.py", "A\n") for index in range(3)]
    members += [directory(f"lib/d{index:03d}") for index in range(count)]
    members += [file(f"lib/a/after{index}.py", "B\n") for index in range(3)]
    tarball = tmp_path / "a.tar.gz"
    tarball.write_bytes(targz(_flat_plugin(*members)))
    out = tmp_path / "out"
    out.mkdir()
    listing = safe_extract(tarball, out, ArchiveLimits())
    assert sorted(path.name for path in (out / "lib/a").iterdir()) == [
        *(f"after{index}.py" for index in range(3)),
        *(f"before{index}.py" for index in range(3)),
    ]
    assert not list((out / "lib").glob("d*/*"))
    assert listing.modes == tree_modes(out)


def test_a_bad_member_after_written_ones_leaves_nothing(
    tmp_path: Path, install_env: InstallEnv
) -> None:
    members = _flat_plugin(*(file(f"lib/ok{index}.py", "x\n") for index in range(50)))
    members.append(Member("lib/link", kind=tarfile.SYMTYPE, linkname="/etc/passwd"))
    _refused(install_env, tmp_path, targz(members), "archive_unsafe")


def test_receipt_hashes_are_those_of_the_written_bytes(
    tmp_path: Path, install_env: InstallEnv
) -> None:
    payload = os.urandom(2 * 1024 * 1024 + 17)
    tarball = write_plugin(
        tmp_path / "dist", ID, VERSION, data=plugin_tarball(ID, VERSION, payload=payload)
    )
    result = install(str(tarball), install_env.make_options())
    assert (result.path / "lib/plugin/data.bin").read_bytes() == payload
    report = verify_installed(_installed(install_env))
    assert report.ok, report


class _FsyncCounter:
    def __init__(self) -> None:
        self.calls = 0
        self.real = os.fsync

    def __call__(self, descriptor: int) -> None:
        self.calls += 1
        self.real(descriptor)


def _install_counting_fsyncs(
    tmp_path: Path, install_env: InstallEnv, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, Path]:
    members = _flat_plugin(*(file(f"lib/m/f{index}.py", f"X = {index}\n") for index in range(40)))
    tarball = write_plugin(tmp_path / "dist", ID, VERSION, data=targz(members))
    counter = _FsyncCounter()
    monkeypatch.setattr(os, "fsync", counter)
    result = install(str(tarball), install_env.make_options())
    monkeypatch.undo()
    assert verify_installed(_installed(install_env)).ok
    return counter.calls, result.path


@pytest.mark.skipif(not durable.syncfs_available(), reason="no syncfs(2) on this platform")
def test_one_syncfs_instead_of_an_fsync_per_file(
    tmp_path: Path, install_env: InstallEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls, _ = _install_counting_fsyncs(tmp_path, install_env, monkeypatch)
    # Only the directories the rename touches: the install root (staging lives there too).
    assert calls <= 2


@pytest.mark.skipif(not durable.syncfs_available(), reason="no syncfs(2) on this platform")
def test_the_staging_tree_is_synced_before_it_is_published_then_its_parents(
    tmp_path: Path, install_env: InstallEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Durability in that order: one ``syncfs`` of the staging tree's file system while the
    plugin is not yet visible, then fsyncs of directories only (those the rename touched)."""
    members = _flat_plugin(*(file(f"lib/m/f{index}.py", f"X = {index}\n") for index in range(40)))
    tarball = write_plugin(tmp_path / "dist", ID, VERSION, data=targz(members))
    events: list[tuple[str, str]] = []
    real_syncfs, real_fsync = durable.syncfs, os.fsync
    published = install_env.dest / f"{ID}-{VERSION}"

    def where(descriptor: int) -> str:
        return str(Path(f"/proc/self/fd/{descriptor}").readlink())

    def syncfs(descriptor: int) -> bool:
        events.append(("syncfs", where(descriptor)))
        assert not published.exists(), "published before its files were made durable"
        assert (Path(where(descriptor)) / "lib/m/f39.py").is_file()  # every file written
        return real_syncfs(descriptor)

    def fsync(descriptor: int) -> None:
        assert stat.S_ISDIR(os.fstat(descriptor).st_mode), where(descriptor)
        events.append(("fsync", where(descriptor)))
        real_fsync(descriptor)

    monkeypatch.setattr(durable, "syncfs", syncfs)
    monkeypatch.setattr(os, "fsync", fsync)
    install(str(tarball), install_env.make_options())
    monkeypatch.undo()
    assert [kind for kind, _ in events][:1] == ["syncfs"], events
    assert [kind for kind, _ in events].count("syncfs") == 1, events
    staging = install_env.dest / ".nexo" / "staging"
    assert events[0][1].startswith(f"{staging}{os.sep}"), events
    fsynced = [path for kind, path in events if kind == "fsync"]
    assert str(install_env.dest) in fsynced, events
    assert published.is_dir()
    assert verify_installed(_installed(install_env)).ok


def test_without_syncfs_every_file_and_directory_is_fsynced(
    tmp_path: Path, install_env: InstallEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(durable, "syncfs", lambda descriptor: False)
    calls, path = _install_counting_fsyncs(tmp_path, install_env, monkeypatch)
    entries = sum(1 for _ in path.rglob("*")) + 1
    assert calls >= entries
