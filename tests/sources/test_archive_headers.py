"""The archive walker's own reader of plain tar headers against ``tarfile``'s.

``StrictTarInfo.plain_header`` reads regular-file and directory headers in one ``struct``
call and leaves every other block to ``tarfile``; the archives it accepts and refuses, and the
members it reads, must be exactly ``tarfile``'s. Each property runs the same bytes through the
reader with the fast path on and off (off: ``tarfile``'s own ``frombuf`` and ``_proc_*``), and
where that succeeds, through plain ``tarfile.TarInfo`` too.
"""

from __future__ import annotations

import gzip
import io
import struct
import tarfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest
from adversarial.archives import CONTROLS, CORPUS, CorpusContext, Limits
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources import archive as archive_module
from nexo_pkg.sources.archive import ArchiveLimits, StrictTarInfo, inspect_archive

T = TypeVar("T")

BLOCK = tarfile.BLOCKSIZE
# Number fields: (offset, length) in a header block, the checksum's last.
NUMBER_FIELDS = ((100, 8), (108, 8), (116, 8), (124, 12), (136, 12), (329, 8), (337, 8))
CHECKSUM = (148, 8)
# What real and hostile tars put in a number field.
NUMBER_SPELLINGS = (
    b"0000644\x00", b"644\x00\x00\x00\x00\x00", b"   644 \x00", b"0000644 ", b"\x00" * 8,
    b" " * 8, b"+644\x00\x00\x00\x00", b"-1\x00\x00\x00\x00\x00\x00", b"0o644\x00\x00\x00",
    b"6_4_4\x00\x00\x00", b"\x1c644\x00\x00\x00\x00", b"64\xe94\x00\x00\x00\x00", b"9\x00" * 4,
    b"\x80\x00\x00\x00\x00\x00\x01\xa4", b"\xff" * 8, b"0x1F\x00\x00\x00\x00", b"7" * 8,
    b"\x0b644\x0c\x00\x00\x00",
)  # fmt: skip
TYPES = (b"0", b"\x00", b"5", b"1", b"2", b"3", b"6", b"7", b"x", b"g", b"L", b"K", b"S", b"Z")
CONTEXT = CorpusContext(
    canary_dir=Path("/nonexistent-header-canary"),
    limits=Limits(max_entries=40, max_total_bytes=64 * 1024, max_entry_bytes=32 * 1024),
)
LIMITS = ArchiveLimits(
    max_download=1024 * 1024, max_entries=40, max_total=64 * 1024, max_entry=32 * 1024
)
SEEDS: tuple[bytes, ...] = (
    *(build(CONTEXT) for build in CONTROLS.values()),
    *(case.build(CONTEXT) for name, case in CORPUS.items() if name != "too_many_entries"),
)


def _tar_of(data: bytes) -> bytes | None:
    try:
        return gzip.decompress(data)
    except (OSError, EOFError):  # the corpus has broken gzip streams too
        return None


TAR_SEEDS = tuple(tar for tar in map(_tar_of, SEEDS) if tar is not None)


@contextmanager
def pieces_of(size: int) -> Iterator[None]:
    """The walker's reader inflating ``size`` bytes at a time (and reading as much): pieces
    of a few blocks put header blocks across two pieces, which only ``tarfile`` reads."""
    saved = archive_module.READ_CHUNK
    archive_module.READ_CHUNK = size
    try:
        yield
    finally:
        archive_module.READ_CHUNK = saved


@contextmanager
def fast_headers(on: bool) -> Iterator[None]:
    saved = StrictTarInfo.fast_headers
    StrictTarInfo.fast_headers = on
    try:
        yield
    finally:
        StrictTarInfo.fast_headers = saved


def _outcome(call: Callable[[], T]) -> tuple[str, Any]:
    try:
        return "ok", call()
    except NexoError as error:
        return "refused", (error.kind, error.message)
    except Exception as error:  # noqa: BLE001 - the exception itself is what is compared
        return "raised", (type(error).__name__, str(error))


def _members(data: bytes, tarinfo: type[tarfile.TarInfo]) -> list[tuple[Any, ...]]:
    """Every member ``tarfile`` reads from the uncompressed tar ``data`` with ``tarinfo``."""
    found = []
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:", tarinfo=tarinfo) as archive:
        while (member := archive.next()) is not None:
            found.append(
                (
                    member.name, member.mode, member.uid, member.gid, member.size, member.mtime,
                    member.chksum, member.type, member.linkname, member.uname, member.gname,
                    member.devmajor, member.devminor, member.offset, member.offset_data,
                    member.pax_headers, member.sparse, archive.offset,
                )
            )  # fmt: skip
    return found


def _base_tar(fmt: int, names: list[str], directories: list[str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=fmt) as archive:
        for name in directories:
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            archive.addfile(info)
        for index, name in enumerate(names):
            payload = b"x" * (index * 37 % 700)
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            info.mtime = 1_700_000_000
            archive.addfile(info, io.BytesIO(payload))
    return buffer.getvalue()


def _headers(data: bytes) -> list[int]:
    """Offsets of the member header blocks of a well-formed tar."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
        return [member.offset for member in archive.getmembers()]


def _checksummed(block: bytearray, how: str) -> None:
    """Write ``block``'s checksum: right (unsigned), signed only, or wrong."""
    block[148:156] = b" " * 8
    unsigned = sum(block)
    signed = sum(struct.unpack("512b", bytes(block)))
    value = {"unsigned": unsigned, "signed": signed, "wrong": unsigned + 1}[how]
    block[148:156] = b"%06o\x00 " % (value % 0o1000000)


@st.composite
def mutated_tars(draw: st.DrawFn) -> bytes:
    """A small ustar, GNU or PAX tar with some of its headers' fields respelled."""
    fmt = draw(st.sampled_from([tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT]))
    stems = st.text(alphabet="ab/.é\\", min_size=1, max_size=12)
    long_names = st.text(alphabet="abc/", min_size=90, max_size=140)
    names = draw(st.lists(st.one_of(stems, long_names), min_size=1, max_size=4))
    directories = draw(st.lists(st.sampled_from(["d", "d/", "d//", "e/f", "./g"]), max_size=2))
    try:
        data = bytearray(_base_tar(fmt, names, directories))
    except (ValueError, tarfile.TarError):
        data = bytearray(_base_tar(fmt, ["plain"], []))
    offsets = _headers(bytes(data))
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        at = draw(st.sampled_from(offsets))
        block = bytearray(data[at : at + BLOCK])
        change = draw(st.sampled_from(["number", "type", "prefix", "name", "magic", "none"]))
        if change == "number":
            start, length = draw(st.sampled_from(NUMBER_FIELDS))
            spelling = draw(st.sampled_from(NUMBER_SPELLINGS))
            block[start : start + length] = spelling[:length].ljust(length, b"\x00")
        elif change == "type":
            block[156:157] = draw(st.sampled_from(TYPES))
        elif change == "prefix":
            block[345:500] = draw(st.sampled_from([b"pre", b"pre/", b"", b"p\xffx"])).ljust(
                155, b"\x00"
            )
        elif change == "name":
            block[0:100] = draw(st.sampled_from([b"x/", b"/", b"", b"a\xc3", b"dir///"])).ljust(
                100, b"\x00"
            )
        elif change == "magic":
            block[257:265] = draw(st.sampled_from([b"ustar\x0000", b"ustar  \x00", b"\x00" * 8]))
        _checksummed(block, draw(st.sampled_from(["unsigned", "unsigned", "signed", "wrong"])))
        data[at : at + BLOCK] = block
    return bytes(data)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_tars())
def test_plain_headers_are_read_as_tarfile_reads_them(data: bytes) -> None:
    with fast_headers(on=True):
        fast = _outcome(lambda: _members(data, StrictTarInfo))
    with fast_headers(on=False):
        slow = _outcome(lambda: _members(data, StrictTarInfo))
    assert fast == slow
    if slow[0] == "ok":
        # Without the strictness (a damaged later header ends the archive for tarfile),
        # tarfile reads the same members.
        reference = _outcome(lambda: _members(data, tarfile.TarInfo))
        assert reference == slow


def _walk(tarball: Path) -> tuple[str, Any]:
    def listing() -> tuple[Any, ...]:
        found = inspect_archive(tarball, LIMITS)
        return (found.entries, found.files, found.directories, found.manifests, found.total_size)

    return _outcome(listing)


@st.composite
def archives(draw: st.DrawFn) -> bytes:
    """A corpus archive (hostile or not) or a mutated tar, gzipped, some bytes of the tar
    flipped; or a corpus archive as it is (broken gzip streams too)."""
    choice = draw(st.sampled_from(["corpus", "tar", "gzip"]))
    if choice == "gzip":
        return draw(st.sampled_from(SEEDS))
    if choice == "corpus":
        data = bytearray(draw(st.sampled_from(TAR_SEEDS)))
    else:
        data = bytearray(draw(mutated_tars()))
    for _ in range(draw(st.integers(min_value=0, max_value=2))):
        at = draw(st.integers(min_value=0, max_value=max(len(data) - 1, 0)))
        if data:
            data[at] ^= 1 << draw(st.integers(min_value=0, max_value=7))
    return gzip.compress(bytes(data), mtime=0)


# Inflated pieces: the default, and sizes that put blocks across pieces at varying offsets.
PIECES = (archive_module.READ_CHUNK, 700, 1536, 4096 + 300)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(data=archives(), piece=st.sampled_from(PIECES))
def test_the_walker_accepts_and_refuses_alike_with_either_reader(
    data: bytes, piece: int, tmp_path_factory: Any
) -> None:
    """The walker reads plain headers itself where they lie whole in a piece (fast on), or
    leaves every block to ``tarfile`` (off): the same verdicts, errors and listings."""
    tarball = tmp_path_factory.mktemp("walk") / "input.tar.gz"
    tarball.write_bytes(data)
    with pieces_of(piece):
        with fast_headers(on=True):
            fast = _walk(tarball)
        with fast_headers(on=False):
            slow = _walk(tarball)
    assert fast == slow
    assert fast[0] in {"ok", "refused"}, fast


@pytest.mark.parametrize("piece", PIECES)
def test_the_whole_corpus_gets_the_same_verdicts(piece: int, tmp_path: Path) -> None:
    """Every hostile and control archive: same listing or same kind and message."""
    verdicts = set()
    for index, data in enumerate(SEEDS):
        tarball = tmp_path / f"{index}.tar.gz"
        tarball.write_bytes(data)
        with pieces_of(piece):
            with fast_headers(on=True):
                fast = _walk(tarball)
            with fast_headers(on=False):
                slow = _walk(tarball)
        assert fast == slow, index
        verdicts.add(fast[0])
    assert verdicts == {"ok", "refused"}


def _header(
    name: str,
    kind: bytes = tarfile.REGTYPE,
    size: int = 0,
    *,
    fields: tuple[tuple[int, bytes], ...] = (),
    checksum: str = "unsigned",
) -> bytes:
    """One ustar header block, some of its fields then respelled (``(offset, bytes)``)."""
    info = tarfile.TarInfo(name)
    info.type, info.size, info.mode, info.mtime = kind, size, 0o644, 1_700_000_000
    block = bytearray(info.tobuf(tarfile.USTAR_FORMAT, "utf-8", "surrogateescape"))
    for offset, value in fields:
        block[offset : offset + len(value)] = value
    _checksummed(block, checksum)
    return bytes(block)


def _data(size: int) -> bytes:
    return (b"d" * size).ljust(-(-size // BLOCK) * BLOCK, b"\x00")


def _global(records: dict[str, str]) -> bytes:
    """A global PAX header (type ``g``) of ``records``, as ``tarfile`` writes one."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT, pax_headers=records):
        pass
    return buffer.getvalue()[: -2 * BLOCK].rstrip(b"\x00").ljust(2 * BLOCK, b"\x00")


def _file(name: str, size: int = 5) -> bytes:
    return _header(name, size=size) + _data(size)


END = b"\x00" * (2 * BLOCK)
FILE = _file("f.txt")
# Hand-made archives around the rules the walker's own header reading repeats from tarfile:
# where a member's data ends, what a name becomes, when tarfile's state changes a member.
HEADER_CASES: dict[str, bytes] = {
    # A directory's size field: tarfile skips no data for it, the blocks after are headers.
    "directory_with_a_size": _header("d", tarfile.DIRTYPE, 1024) + FILE
    + _file("g.txt") + END,
    "later_directory_with_a_size": FILE + _header("d", tarfile.DIRTYPE, 1024) + _file("g.txt")
    + _file("h.txt") + END,
    "directory_with_a_size_then_data": _header("d", tarfile.DIRTYPE, 700) + _data(700) + END,
    "old_style_directory": _header("e/", tarfile.AREGTYPE) + FILE + END,
    "later_old_style_directory_with_a_size": FILE + _header("e/", tarfile.AREGTYPE, 600)
    + _file("g.txt") + _file("h.txt") + END,
    "directory_slashes": _header("g//", tarfile.DIRTYPE) + _header("g//h", size=3) + _data(3)
    + END,
    "prefix": _header("x", fields=((345, b"pre\x00"),)) + _header("y/", tarfile.DIRTYPE,
    fields=((345, b"pre\x00"),)) + END,
    "prefix_with_a_slash": _header("y/", tarfile.DIRTYPE, fields=((345, b"pre/\x00"),)) + END,
    "global_mtime_out_of_range": _global({"mtime": "1e13"}) + FILE + END,
    "global_mtime": _global({"mtime": "12.5"}) + FILE + _file("g.txt") + END,
    "global_size": _global({"size": "3"}) + _header("s", size=5) + _data(3) + FILE + END,
    "global_path": _global({"path": "same"}) + FILE + _file("g.txt") + END,
    "global_comment": _global({"comment": "x"}) + FILE + END,
    "negative_size": _header("n", fields=((124, b"-1\x00"),)) + FILE + END,
    "negative_size_back_to_an_earlier_header": _file("a", 0) + _file("b", 0)
    + _header("n", fields=((124, b"-2000\x00"),)) + FILE + END,
    "negative_size_back_to_the_root": _header("./", tarfile.DIRTYPE)
    + _header("n", fields=((124, b"-1024\x00"),)) + FILE + END,
    "size_with_spaces": _header("sp", fields=((124, b"   5 \x00"),)) + _data(5) + END,
    "base256_size": _header("b", fields=((124, b"\x80" + b"\x00" * 10 + b"\x05"),))
    + _data(5) + END,
    "underscored_size": _header("u", fields=((124, b"0_5\x00"),)) + _data(5) + END,
    "signed_checksum": FILE + _header("\xe9.txt".encode("latin-1").decode("latin-1"),
    fields=((0, b"\xe9.txt\x00"),), checksum="signed") + END,
    "wrong_checksum_later": FILE + _header("w", checksum="wrong") + END,
    "huge_size": FILE + _header("h", fields=((124, b"77777777777\x00"),)) + END,
    "no_end_marker": FILE + _file("g.txt"),
    "ends_in_padding": FILE + _header("p", size=5) + b"ddddd",
    "ends_in_data": FILE + _header("q", size=5000) + _data(700),
    "one_zero_block": FILE + b"\x00" * BLOCK,
    "dev_numbers": _header("v", fields=((329, b"0000001\x00"), (337, b"7\x00"))) + END,
    "garbage_after_end": FILE + END + FILE,
}  # fmt: skip


@pytest.mark.parametrize("piece", PIECES)
def test_hand_made_headers_get_the_same_verdicts(piece: int, tmp_path: Path) -> None:
    """Directories with a size, global PAX headers in force, odd numbers and names, ends
    in the wrong place: the walker reads them with ``tarfile`` or alike."""
    verdicts = {}
    for name, tar in HEADER_CASES.items():
        tarball = tmp_path / f"{name}.tar.gz"
        tarball.write_bytes(gzip.compress(tar, mtime=0))
        with pieces_of(piece):
            with fast_headers(on=True):
                fast = _walk(tarball)
            with fast_headers(on=False):
                slow = _walk(tarball)
        assert fast == slow, name
        verdicts[name] = fast[0]
        print(name, str(fast)[:150])
    assert set(verdicts.values()) == {"ok", "refused"}, verdicts
    assert verdicts["global_mtime_out_of_range"] == verdicts["global_path"] == "refused"
    assert verdicts["directory_with_a_size"] == verdicts["global_size"] == "ok"
    assert verdicts["later_directory_with_a_size"] == "ok"
    assert verdicts["later_old_style_directory_with_a_size"] == "ok"


def test_plain_headers_in_a_piece_are_read_without_tarfile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The path the comparisons above hold is taken: of a ustar archive of plain members
    (extended headers for the long names), ``tarfile`` reads only the first header, the
    extended ones with what they apply to, and the end; the walker reads the rest.
    (``TarFile.next`` is counted, not changed.)"""
    names = [f"lib/m{index:03d}.py" for index in range(30)]
    names += ["lib/" + "x" * 120 + ".py", "lib/" + "y" * 120 + ".py"]
    tarball = tmp_path / "plain.tar.gz"
    tarball.write_bytes(gzip.compress(_base_tar(tarfile.PAX_FORMAT, names, ["lib"])))
    calls = []
    next_member = tarfile.TarFile.next

    def counted(archive: tarfile.TarFile) -> tarfile.TarInfo | None:
        member = next_member(archive)
        calls.append(member.name if member is not None else None)
        return member

    monkeypatch.setattr(tarfile.TarFile, "next", counted)
    with fast_headers(on=True):
        fast = _walk(tarball)
    assert fast[0] == "ok", fast
    # The first header is read when the archive is opened, and handed out by the first call.
    assert calls == ["lib", "lib", "lib/" + "x" * 120 + ".py", "lib/" + "y" * 120 + ".py", None]
    calls.clear()
    with fast_headers(on=False):
        slow = _walk(tarball)
    assert len(calls) == 1 + 1 + len(names) + 1
    assert fast == slow


@given(st.binary(max_size=64))
def test_the_texts_the_walker_does_not_read_could_not_fail_to_decode(data: bytes) -> None:
    """The walker skips decoding a plain header's link name, user and group names where
    decoding cannot fail; under tarfile's defaults it cannot."""
    assert archive_module.lenient_decoding(tarfile.ENCODING, "surrogateescape")
    for encoding in ("utf-8", "UTF8", "ascii", "ANSI_X3.4-1968"):
        assert archive_module.lenient_decoding(encoding, "surrogateescape")
        data.decode(encoding, "surrogateescape")
    assert not archive_module.lenient_decoding("utf-8", "strict")
    assert not archive_module.lenient_decoding("utf-16", "surrogateescape")


def _walked_alike(tar: bytes, tmp_path: Path) -> tuple[str, Any]:
    """The walk of ``tar`` gzipped, the same with either reader."""
    tarball = tmp_path / "input.tar.gz"
    tarball.write_bytes(gzip.compress(tar))
    with fast_headers(on=True):
        fast = _walk(tarball)
    with fast_headers(on=False):
        slow = _walk(tarball)
    assert fast == slow
    return fast


@pytest.mark.parametrize(
    ("field", "spelling"),
    [
        ((108, 8), b"zz\x00\x00\x00\x00\x00\x00"),  # uid: not a number, tarfile refuses it
        ((329, 8), b"0x1F\x00\x00\x00\x00"),  # devmajor
        ((100, 8), b"0000755\x00"),  # mode: another value, read as such
        ((136, 12), b"17000000001\x00"),  # mtime: another value
        ((345, 155), b"pre".ljust(155, b"\x00")),  # prefix: another directory
    ],
)
def test_fields_repeated_by_earlier_headers_are_read_again_when_they_change(
    field: tuple[int, int], spelling: bytes, tmp_path: Path
) -> None:
    """The walker reads a field that repeats from header to header once per spelling: a later
    header spelling it otherwise is read (or refused) as tarfile reads it."""
    names = [f"lib/m{index}.py" for index in range(6)]
    data = bytearray(_base_tar(tarfile.USTAR_FORMAT, names, ["lib"]))
    at = _headers(bytes(data))[4]
    block = bytearray(data[at : at + BLOCK])
    start, length = field
    block[start : start + length] = spelling
    _checksummed(block, "unsigned")
    data[at : at + BLOCK] = block
    fast = _walked_alike(bytes(data), tmp_path)
    if spelling.startswith((b"zz", b"0x")):
        assert fast[0] == "refused", fast
        assert fast[1][0] == "archive_invalid"
    else:
        assert fast[0] == "ok", fast


@pytest.mark.parametrize("claimed", ["sum", "sum less Adler-32's modulus"])
def test_a_header_summing_past_adler32s_modulus_is_checked_in_full(
    claimed: str, tmp_path: Path
) -> None:
    """A header block of high bytes sums to more than 65,521: its checksum is the sum itself,
    not the sum modulo Adler-32's modulus (which an ASCII block cannot reach)."""
    data = bytearray(_base_tar(tarfile.USTAR_FORMAT, ["a", "b", "c"], []))
    at = _headers(bytes(data))[1]
    block = bytearray(data[at : at + BLOCK])
    block[0:100] = b"\xff" * 100  # the name: not UTF-8, refused once the header is read
    block[157:257] = b"\xff" * 100  # link name, user and group names, the block's end
    block[265:329] = b"\xff" * 64
    block[500:512] = b"\xff" * 12
    block[148:156] = b" " * 8
    total = sum(block)
    assert total > 65_521
    value = total if claimed == "sum" else total - 65_521
    block[148:156] = b"%06o\x00 " % value
    data[at : at + BLOCK] = block
    fast = _walked_alike(bytes(data), tmp_path)
    assert fast[0] == "refused"
    if claimed == "sum":
        assert fast[1][0] == "archive_unsafe"
        assert "is not valid UTF-8" in fast[1][1]
    else:
        assert fast[1] == (
            "archive_invalid",
            f"not a valid .tar.gz archive: damaged or missing header at offset {at} (bad checksum)",
        )
