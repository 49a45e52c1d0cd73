"""Archive pre-scan and filtered extraction: every attack is refused before extraction and
leaves the install root exactly as it was."""

from __future__ import annotations

import gzip
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from support.tarballs import (
    Member,
    directory,
    file,
    gzip_bytes,
    plugin_members,
    plugin_tarball,
    tar_bytes,
    targz,
    tree_snapshot,
    write_plugin,
)

from nexo_pkg.core.errors import NexoError
from nexo_pkg.install.pipeline import install
from nexo_pkg.sources.archive import ArchiveLimits, inspect_archive
from nexo_pkg.sources.extract import safe_extract

from .conftest import InstallEnv

ID, VERSION = "hello", "1.0.0"
KiB = 1024
SMALL = ArchiveLimits(
    max_download=1024 * KiB, max_entries=20, max_total=64 * KiB, max_entry=16 * KiB
)


def _with(*extra: Member) -> bytes:
    return targz([*plugin_members(ID, VERSION), *extra])


def _many_entries(count: int) -> bytes:
    members = plugin_members(ID, VERSION)
    members += [file(f"lib/plugin/f{index}", b"") for index in range(count - len(members))]
    return targz(members)


def _symlink(name: str, target: str) -> Member:
    return Member(name, kind=tarfile.SYMTYPE, linkname=target, mode=0o777)


UNSAFE: dict[str, Callable[[Path], bytes]] = {
    "dotdot": lambda canary: _with(file("../evil", "x")),
    "dotdot_inside": lambda canary: _with(file("lib/../../evil", "x")),
    "absolute": lambda canary: _with(file(str(canary / "evil"), "x")),
    "dot_slash_dotdot": lambda canary: _with(file("./../evil", "x")),
    "symlink_to_etc": lambda canary: _with(_symlink("lib/etc", "/etc")),
    "symlink_then_file_through_it": lambda canary: _with(
        _symlink("lib/out", str(canary)), file("lib/out/evil", "x")
    ),
    "hardlink_outside": lambda canary: _with(
        Member("lib/passwd", kind=tarfile.LNKTYPE, linkname=str(canary / "target"))
    ),
    "hardlink_inside": lambda canary: _with(
        Member("lib/copy", kind=tarfile.LNKTYPE, linkname="lib/plugin/main.py")
    ),
    "char_device": lambda canary: _with(Member("lib/null", kind=tarfile.CHRTYPE)),
    "block_device": lambda canary: _with(Member("lib/sda", kind=tarfile.BLKTYPE)),
    "fifo": lambda canary: _with(Member("lib/pipe", kind=tarfile.FIFOTYPE)),
    "setuid_file": lambda canary: _with(file("lib/su", "x", mode=0o4755)),
    "setgid_file": lambda canary: _with(file("lib/sg", "x", mode=0o2755)),
    "sticky_dir": lambda canary: _with(directory("lib/tmp", mode=0o1777)),
    "duplicate_name": lambda canary: _with(file("lib/plugin/main.py", "evil")),
    "duplicate_after_dot_slash": lambda canary: _with(file("./lib/plugin/main.py", "evil")),
    "duplicate_case_folded": lambda canary: _with(file("lib/plugin/MAIN.py", "evil")),
    "double_slash": lambda canary: _with(file("lib//x", "x")),
    "file_then_dir_below_it": lambda canary: _with(file("lib/f", "x"), file("lib/f/g", "y")),
    "over_entry_limit": lambda canary: _with(file("lib/big", b"\0" * (16 * KiB + 1))),
    "over_entry_count": lambda canary: _many_entries(21),
    "gzip_bomb_total": lambda canary: _with(
        *(file(f"lib/zeros{index}", b"\0" * (16 * KiB)) for index in range(5))
    ),
    "nul_in_name": lambda canary: _with(Member("lib/a", b"x", pax={"path": "lib/a\0b"})),
    "backslash_traversal": lambda canary: _with(file("..\\evil", "x")),
    "backslash_name": lambda canary: _with(file("lib\\evil", "x")),
    "control_char_name": lambda canary: _with(file("lib/a\x1bb", "x")),
    "pax_path_override": lambda canary: _with(Member("lib/ok", b"x", pax={"path": "../evil"})),
    "pax_header_too_big": lambda canary: _with(
        Member("lib/ok", b"x", pax={"comment": "x" * (70 * KiB)})
    ),
    "gnu_sparse": lambda canary: _with(Member("lib/sparse", kind=tarfile.GNUTYPE_SPARSE)),
    "file_named_dot": lambda canary: _with(file(".", "x")),
}


def _flip_crc(data: bytes) -> bytes:
    return data[:-8] + bytes([data[-8] ^ 0xFF]) + data[-7:]


INVALID: dict[str, bytes] = {
    "not_gzip": b"PK\x03\x04 this is a zip",
    "empty_file": b"",
    "plain_tar": tar_bytes(plugin_members(ID, VERSION)),
    "gzip_of_text": gzip.compress(b"hello, not a tar\n" * 100),
    "gzip_of_nothing": gzip.compress(b""),
    "truncated": plugin_tarball(ID, VERSION)[:200],
    "garbage_after_members": gzip_bytes(
        tar_bytes(plugin_members(ID, VERSION))[:-1024] + b"\xff" * 1024
    ),
    "bad_crc": _flip_crc(plugin_tarball(ID, VERSION)),
}


@pytest.mark.parametrize("case", sorted(UNSAFE))
def test_unsafe_archives_are_refused_by_the_scan(case: str, tmp_path: Path) -> None:
    tarball = tmp_path / "a.tar.gz"
    tarball.write_bytes(UNSAFE[case](tmp_path / "canary"))
    with pytest.raises(NexoError) as caught:
        inspect_archive(tarball, SMALL)
    assert caught.value.kind == "archive_unsafe", caught.value.message


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_archives(case: str, tmp_path: Path) -> None:
    tarball = tmp_path / "a.tar.gz"
    tarball.write_bytes(INVALID[case])
    with pytest.raises(NexoError) as caught:
        inspect_archive(tarball, SMALL)
    assert caught.value.kind == "archive_invalid", caught.value.message


def _populated_root(env: InstallEnv, tmp_path: Path) -> None:
    """An install root holding another plugin, so "unchanged" is checked on a real tree."""
    other = write_plugin(tmp_path / "other", "other", "2.0.0")
    install(str(other), env.make_options())


@pytest.mark.parametrize("case", sorted(UNSAFE))
def test_unsafe_archives_change_nothing(case: str, tmp_path: Path, install_env: InstallEnv) -> None:
    canary = tmp_path / "canary"
    canary.mkdir()
    _populated_root(install_env, tmp_path)
    before = tree_snapshot(install_env.dest)
    tarball = write_plugin(tmp_path / "dist", ID, VERSION, data=UNSAFE[case](canary))
    with pytest.raises(NexoError) as caught:
        install(str(tarball), install_env.make_options(limits=SMALL))
    assert caught.value.kind == "archive_unsafe", caught.value.message
    assert tree_snapshot(install_env.dest) == before
    assert list(canary.iterdir()) == []
    assert not install_env.cache.exists() or list(install_env.cache.iterdir()) == []


@pytest.mark.parametrize("case", ["not_gzip", "gzip_of_text", "truncated"])
def test_invalid_archives_change_nothing(
    case: str, tmp_path: Path, install_env: InstallEnv
) -> None:
    tarball = write_plugin(tmp_path / "dist", ID, VERSION, data=INVALID[case])
    with pytest.raises(NexoError) as caught:
        install(str(tarball), install_env.make_options())
    assert caught.value.kind == "archive_invalid"
    assert not install_env.dest.exists()
    assert not install_env.cache.exists() or list(install_env.cache.iterdir()) == []


def test_default_entry_limit_is_ten_thousand(tmp_path: Path) -> None:
    over = tmp_path / "over.tar.gz"
    over.write_bytes(_many_entries(10_001))
    with pytest.raises(NexoError) as caught:
        inspect_archive(over)
    assert caught.value.kind == "archive_unsafe"
    assert "10000 entries" in caught.value.message


def test_gzip_bomb_stops_early(tmp_path: Path) -> None:
    """Claimed sizes are refused before their bytes are decompressed."""
    bomb = tmp_path / "bomb.tar.gz"
    with gzip.open(bomb, "wb", compresslevel=1) as raw, tarfile.open(fileobj=raw, mode="w|") as tar:
        info = tarfile.TarInfo("lib/zeros")
        info.size = 101 * 1024 * 1024

        class Zeros:
            def __init__(self) -> None:
                self.left = info.size

            def read(self, size: int) -> bytes:
                chunk = min(size, self.left)
                self.left -= chunk
                return b"\0" * chunk

        tar.addfile(info, Zeros())  # type: ignore[arg-type]
    assert bomb.stat().st_size < 1024 * 1024
    for limits in (ArchiveLimits(), ArchiveLimits(max_entry=300 * 1024 * 1024, max_total=1024)):
        with pytest.raises(NexoError) as caught:
            inspect_archive(bomb, limits)
        assert caught.value.kind == "archive_unsafe"


def test_scan_lists_files_and_manifest(tmp_path: Path) -> None:
    tarball = tmp_path / "a.tar.gz"
    tarball.write_bytes(targz([directory("."), *plugin_members(ID, VERSION)]))
    listing = inspect_archive(tarball)
    assert set(listing.files) == {"nexo-plugin.toml", "bin/hello", "lib/plugin/main.py"}
    assert listing.directories == {"bin", "lib", "lib/plugin"}
    assert listing.manifest is not None
    assert b'id = "hello"' in listing.manifest


def test_safe_extract(tmp_path: Path) -> None:
    tarball = tmp_path / "a.tar.gz"
    tarball.write_bytes(targz([file("./nexo-plugin.toml", "x"), *plugin_members(ID, VERSION)[1:]]))
    out = tmp_path / "out"
    out.mkdir()
    safe_extract(tarball, out)
    assert (out / "bin" / ID).stat().st_mode & 0o777 == 0o755
    assert (out / "lib/plugin/main.py").read_text() == "print('hello')\n"
    assert (out / "nexo-plugin.toml").read_text() == "x"


def test_safe_extract_refuses_and_leaves_dir_empty(tmp_path: Path) -> None:
    tarball = tmp_path / "a.tar.gz"
    tarball.write_bytes(_with(file("../evil", "x")))
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(NexoError) as caught:
        safe_extract(tarball, out)
    assert caught.value.kind == "archive_unsafe"
    assert list(out.iterdir()) == []
    assert not (tmp_path / "evil").exists()


def test_safe_extract_needs_an_empty_directory(tmp_path: Path) -> None:
    tarball = tmp_path / "a.tar.gz"
    tarball.write_bytes(plugin_tarball(ID, VERSION))
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep").write_text("mine")
    with pytest.raises(NexoError) as caught:
        safe_extract(tarball, out)
    assert caught.value.kind == "io"
    assert [p.name for p in out.iterdir()] == ["keep"]


def test_the_inflating_reader_never_steps_back(tmp_path: Path) -> None:
    """The walker refuses a negative member size before reading its data; the reader below it
    refuses one too, so no caller can move it back over bytes already checked."""
    from nexo_pkg.sources.archive import _InflatingReader

    tarball = tmp_path / "x.gz"
    tarball.write_bytes(gzip.compress(b"\0" * 4096))
    with tarball.open("rb") as handle:
        reader = _InflatingReader(handle, budget=1 << 20)
        assert bytes(next(reader.chunks(512))) == b"\0" * 512
        with pytest.raises(ValueError, match="-512 bytes"):
            next(reader.chunks(-512))
        assert reader.tell() == 512
