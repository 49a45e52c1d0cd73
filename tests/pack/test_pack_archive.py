"""The reproducible tar.gz writer, checked with tarfile and the real GNU tar."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from nexo_pkg.pack.archive import ArchiveEntry, complete_entries, write_tar_gz

from .pack_helpers import write_project


def _write(entries: list[ArchiveEntry], mtime: int = 1_700_000_000) -> bytes:
    buffer = io.BytesIO()
    write_tar_gz(entries, buffer, mtime=mtime)
    return buffer.getvalue()


def test_headers_are_normalised(tmp_path: Path) -> None:
    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o700)
    data = _write(
        [
            ArchiveEntry("b/x.txt", data=b"x"),
            ArchiveEntry("a.txt", data=b"a" * 600),
            ArchiveEntry("bin/tool", executable=True, source=script),
        ]
    )
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        members = archive.getmembers()
    assert [m.name for m in members] == ["a.txt", "b", "b/x.txt", "bin", "bin/tool"]
    for member in members:
        assert (member.uid, member.gid, member.uname, member.gname) == (0, 0, "", "")
        assert member.mtime == 1_700_000_000
        assert member.pax_headers == {}
    modes = {m.name: (m.type, m.mode) for m in members}
    assert modes["b"] == (tarfile.DIRTYPE, 0o755)
    assert modes["a.txt"] == (tarfile.REGTYPE, 0o644)
    assert modes["bin/tool"] == (tarfile.REGTYPE, 0o755)


def test_gzip_header_has_no_name_and_zero_mtime() -> None:
    data = _write([ArchiveEntry("a", data=b"a")])
    assert data[:3] == b"\x1f\x8b\x08"
    assert data[3] == 0  # FLG: no FNAME, no comment, no extra field
    assert data[4:8] == b"\0\0\0\0"  # MTIME


def test_same_entries_give_same_bytes_in_any_order() -> None:
    entries = [ArchiveEntry(f"d{i % 3}/f{i}", data=str(i).encode()) for i in range(30)]
    assert _write(entries) == _write(list(reversed(entries)))
    assert _write(entries) != _write(entries, mtime=1)


def test_long_names_round_trip_through_gnu_tar(tmp_path: Path) -> None:
    long_name = "lib/" + "/".join(["deeply_nested_directory"] * 8) + "/module_with_a_long_name.py"
    assert len(long_name) > 100
    archive = tmp_path / "a.tar.gz"
    archive.write_bytes(_write([ArchiveEntry(long_name, data=b"print(1)\n")]))
    listing = subprocess.run(
        ["tar", "-tzf", str(archive)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert long_name in listing
    out = tmp_path / "out"
    out.mkdir()
    subprocess.run(["tar", "-xzf", str(archive), "-C", str(out)], check=True)
    assert (out / long_name).read_bytes() == b"print(1)\n"


def test_archive_is_padded_to_whole_records() -> None:
    import gzip

    raw = gzip.decompress(_write([ArchiveEntry("a", data=b"a")]))
    assert len(raw) % tarfile.RECORDSIZE == 0
    assert raw[-1024:] == bytes(1024)


def test_complete_entries_adds_parents_and_refuses_conflicts() -> None:
    names = [e.name for e in complete_entries([ArchiveEntry("x/y/z", data=b"")])]
    assert names == ["x", "x/y", "x/y/z"]
    with pytest.raises(ValueError, match="duplicate"):
        complete_entries([ArchiveEntry("a", data=b""), ArchiveEntry("a", data=b"")])
    with pytest.raises(ValueError, match="both a file and a directory"):
        complete_entries([ArchiveEntry("a", data=b""), ArchiveEntry("a/b", data=b"")])


def test_negative_mtime_is_refused() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        _write([ArchiveEntry("a", data=b"")], mtime=-1)


def test_missing_source_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        _write([ArchiveEntry("a", source=tmp_path / "gone")])


def test_streamed_bytes_are_those_of_a_one_shot_deflate(tmp_path: Path) -> None:
    """Big files reach zlib in pieces; the output must not depend on how input is split."""
    import zlib

    big = tmp_path / "big.bin"
    big.write_bytes(b"".join(os.urandom(512) * 8 for _ in range(1200)))  # ~4.7 MiB
    entries = [
        ArchiveEntry("lib/big.bin", source=big),
        *(ArchiveEntry(f"lib/small{index}.py", data=b"x = 1\n" * index) for index in range(50)),
    ]
    data = _write(entries)
    tar = zlib.decompress(data, wbits=31)
    one_shot = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS, zlib.DEF_MEM_LEVEL, 0)
    body = one_shot.compress(tar) + one_shot.flush()
    assert data[10:-8] == body
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        member = archive.extractfile("lib/big.bin")
        assert member is not None
        assert member.read() == big.read_bytes()


PACK_IN_A_CHILD = """
import sys
from pathlib import Path
from nexo_pkg.pack.build import PackOptions, pack
pack(PackOptions(project=Path(sys.argv[1]), out=Path(sys.argv[2]), source_date_epoch=1), environ={})
for line in Path("/proc/self/status").read_text().splitlines():
    if line.startswith("VmHWM:"):
        print(int(line.split()[1]) * 1024)
"""


def _peak_rss_of_pack(project: Path, out: Path) -> int:
    """Peak RSS of a fresh interpreter packing ``project`` (its own VmHWM, after exec)."""
    result = subprocess.run(
        [sys.executable, "-c", PACK_IN_A_CHILD, str(project), str(out)],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )
    assert result.returncode == 0, result.stderr
    return int(result.stdout.split()[-1])


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_pack_memory_is_flat_in_the_size_of_one_file(tmp_path: Path) -> None:
    peaks = []
    for size in (1, 96):
        project = write_project(tmp_path / f"p{size}")
        with (project / "src" / "blob.bin").open("wb") as handle:
            handle.truncate(size * 1024 * 1024)  # sparse zeros: quick to write and to deflate
        peaks.append(_peak_rss_of_pack(project, tmp_path / f"out{size}"))
    small, large = peaks
    assert large - small < 16 * 1024 * 1024, (small, large)
    assert large < 64 * 1024 * 1024, large
