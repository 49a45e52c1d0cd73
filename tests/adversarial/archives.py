"""A corpus of malicious and malformed plugin release tarballs.

Every case is a named function returning the bytes of a ``.tar.gz`` that ``nexo plugin
install`` must refuse before anything is extracted: ``archive_unsafe`` for an archive that is
a well-formed tar but would escape, alias or abuse the plugin root (links, devices, traversal,
special bits, duplicates, size and count limits), ``archive_invalid`` for bytes that are not a
gzip-compressed tar at all. Apart from its one defect each archive is a complete, valid noarch
plugin (``nexo-plugin.toml``, ``bin/<id>``, ``lib/plugin/main.py``), so a refusal can only come
from the defect; :func:`valid_baseline` is the positive control that must install.

Cases that write through a link or to an absolute path aim at ``context.canary_dir``, a
directory the test owns and snapshots, never at a real system path, so a broken installer
cannot damage the machine running the tests.

Run ``python -m tests.adversarial.archives OUTDIR`` (or the module file directly) to write the
corpus to disk, for example as seeds for the atheris harness in ``fuzz/``.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import sys
import tarfile
import unicodedata
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

PLUGIN_ID = "advplug"
PLUGIN_VERSION = "1.0.0"
ASSET_NAME = f"{PLUGIN_ID}-{PLUGIN_VERSION}-noarch.tar.gz"

MIB = 1024 * 1024

MANIFEST = f"""\
[plugin]
id = "{PLUGIN_ID}"
version = "{PLUGIN_VERSION}"
name = "Adversarial test plugin"
description = "A plugin whose release archive is built to attack the installer."
min_nexo_version = ">=0.1.0"

[plugin.entrypoint]
command = "./bin/{PLUGIN_ID}"
args = []
"""

LAUNCHER = """\
#!/usr/bin/env bash
DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec env PYTHONPATH="$DIR/lib" python3 "$DIR/lib/plugin/main.py" "$@"
"""

MAIN_PY = "import sys\n\nsys.exit(0)\n"

# GNU multi-volume continuation; :mod:`tarfile` has no name for it.
GNUTYPE_MULTIVOL = b"M"

INVALID = "archive_invalid"
UNSAFE = "archive_unsafe"


@dataclass(frozen=True)
class Limits:
    """The archive limits the installer enforces (SPEC §5 step 6 defaults)."""

    max_entries: int = 10_000
    max_total_bytes: int = 250 * MIB
    max_entry_bytes: int = 100 * MIB


@dataclass(frozen=True)
class CorpusContext:
    """What a case may depend on: the limits in force and a directory to aim escapes at."""

    canary_dir: Path = Path("/nonexistent-nexo-canary")
    limits: Limits = field(default_factory=Limits)


@dataclass(frozen=True)
class Case:
    """One corpus entry: how to build it and the failure kinds that count as a refusal.

    ``kinds`` is the one kind the refusal must have: where two checks could both see a
    defect (a 5 GiB size claim is over the per-entry limit *and* truncated), the kind the
    order of the checks gives.
    """

    name: str
    build: Callable[[CorpusContext], bytes]
    kinds: tuple[str, ...]
    description: str


# --------------------------------------------------------------------------------------------
# Building blocks


def _info(
    name: str, *, kind: bytes = tarfile.REGTYPE, mode: int = 0o644, size: int = 0
) -> tarfile.TarInfo:
    """A tar header with the reproducible fields ``nexo plugin pack`` would write."""
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.size = size
    info.mtime = 1_700_000_000
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


Member = tuple[tarfile.TarInfo, bytes | None]


def _file(name: str, data: bytes | str, mode: int = 0o644) -> Member:
    raw = data.encode() if isinstance(data, str) else data
    return _info(name, mode=mode, size=len(raw)), raw


def _dir(name: str, mode: int = 0o755) -> Member:
    return _info(name, kind=tarfile.DIRTYPE, mode=mode), None


def _link(name: str, target: str, *, hard: bool = False) -> Member:
    info = _info(name, kind=tarfile.LNKTYPE if hard else tarfile.SYMTYPE, mode=0o777)
    info.linkname = target
    return info, None


def _baseline_members() -> list[Member]:
    return [
        _dir("bin"),
        _file(f"bin/{PLUGIN_ID}", LAUNCHER, 0o755),
        _dir("lib"),
        _dir("lib/plugin"),
        _file("lib/plugin/main.py", MAIN_PY),
        _file("nexo-plugin.toml", MANIFEST),
    ]


def _tar_bytes(members: Iterable[Member], *, fmt: int = tarfile.PAX_FORMAT) -> bytes:
    """An uncompressed tar of ``members`` in order, headers written exactly as given."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=fmt) as archive:
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def _gzip(raw: bytes) -> bytes:
    # mtime 0 and no file name, as pack writes, so the corpus itself is reproducible.
    return gzip.compress(raw, compresslevel=6, mtime=0)


def _targz(members: Iterable[Member], *, fmt: int = tarfile.PAX_FORMAT) -> bytes:
    return _gzip(_tar_bytes(members, fmt=fmt))


def _with(*extra: Member, fmt: int = tarfile.PAX_FORMAT) -> bytes:
    """The valid baseline plus ``extra`` members appended after it."""
    return _targz([*_baseline_members(), *extra], fmt=fmt)


class _Zeros(io.RawIOBase):
    """A readable stream of ``size`` zero bytes that never holds them all in memory."""

    def __init__(self, size: int) -> None:
        self._left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        count = min(len(buffer), self._left)
        buffer[:count] = bytes(count)
        self._left -= count
        return count


def _streamed_targz(
    members: Iterable[tuple[tarfile.TarInfo, io.RawIOBase | bytes | None]],
) -> bytes:
    """Like :func:`_targz` but members may be streams (used for the size-limit bombs)."""
    compressed = io.BytesIO()
    # Level 1: zeros compress about 1000:1 at any level and level 1 is several times faster.
    with (
        gzip.GzipFile(fileobj=compressed, mode="wb", compresslevel=1, mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as archive,
    ):
        for info, data in members:
            if isinstance(data, bytes):
                archive.addfile(info, io.BytesIO(data))
            elif data is None:
                archive.addfile(info)
            else:
                archive.addfile(info, io.BufferedReader(data, 1 << 20))
    return compressed.getvalue()


def _pax_header_block(
    records: dict[str, str | bytes], name: str = "././@PaxHeader", kind: bytes = tarfile.XHDTYPE
) -> bytes:
    """A raw PAX extended header (type ``x``, or ``g`` for a global one) carrying ``records``,
    padded to blocks.

    Written by hand because :mod:`tarfile` refuses to emit some values (a NUL in a path).
    """
    body = b""
    for key, value in records.items():
        raw_value = value if isinstance(value, bytes) else value.encode()
        payload = b" " + key.encode() + b"=" + raw_value + b"\n"
        length = len(payload)
        # The length prefix counts its own digits.
        while len(str(length + len(str(length)))) != len(str(length)):
            length += 1
        length += len(str(length))
        body += str(length).encode() + payload
    info = _info(name, kind=kind, size=len(body))
    header = info.tobuf(format=tarfile.USTAR_FORMAT)
    padding = (tarfile.BLOCKSIZE - len(body) % tarfile.BLOCKSIZE) % tarfile.BLOCKSIZE
    return header + body + bytes(padding)


def _raw_member(info: tarfile.TarInfo, data: bytes = b"") -> bytes:
    """Header plus padded data for one member, in ustar layout."""
    header = info.tobuf(format=tarfile.USTAR_FORMAT)
    padding = (tarfile.BLOCKSIZE - len(data) % tarfile.BLOCKSIZE) % tarfile.BLOCKSIZE
    return header + data + bytes(padding)


def _raw_file(name: str, data: str) -> bytes:
    """One regular-file member written as :func:`_raw_member` writes it."""
    raw = data.encode()
    return _raw_member(_info(name, size=len(raw)), raw)


def _end_of_archive() -> bytes:
    return bytes(tarfile.BLOCKSIZE * 2)


def _baseline_tar_without_end() -> bytes:
    raw = _tar_bytes(_baseline_members(), fmt=tarfile.USTAR_FORMAT)
    # tarfile pads the archive to a RECORDSIZE multiple after the two end blocks; find the
    # first all-zero block boundary where the members stop.
    offset = 0
    while offset < len(raw):
        info = tarfile.TarInfo.frombuf(raw[offset : offset + tarfile.BLOCKSIZE], "utf-8", "strict")
        offset += tarfile.BLOCKSIZE + ((info.size + tarfile.BLOCKSIZE - 1) // tarfile.BLOCKSIZE) * (
            tarfile.BLOCKSIZE
        )
        if raw[offset : offset + tarfile.BLOCKSIZE] == bytes(tarfile.BLOCKSIZE):
            return raw[:offset]
    return raw


# --------------------------------------------------------------------------------------------
# The cases

CORPUS: dict[str, Case] = {}


def case(
    *kinds: str,
) -> Callable[[Callable[[CorpusContext], bytes]], Callable[[CorpusContext], bytes]]:
    """Register the decorated builder in :data:`CORPUS` under its function name."""

    def register(build: Callable[[CorpusContext], bytes]) -> Callable[[CorpusContext], bytes]:
        doc = (build.__doc__ or "").strip().splitlines()[0]
        CORPUS[build.__name__] = Case(build.__name__, build, tuple(kinds), doc)
        return build

    return register


def valid_baseline(context: CorpusContext) -> bytes:
    """A correct noarch plugin archive: the control that must install."""
    del context
    return _targz(_baseline_members())


def nested_archive_is_just_a_file(context: CorpusContext) -> bytes:
    """A valid plugin carrying an evil tar.gz as data: never unpacked, so it installs."""
    inner = _targz([_file("../../escaped-from-inner", "x"), _link("etc", "/etc")])
    del context
    return _with(_file("lib/plugin/payload.tar.gz", inner))


#: Archives that must install: the controls proving the refusals are about the defect.
CONTROLS: dict[str, Callable[[CorpusContext], bytes]] = {
    "valid_baseline": valid_baseline,
    "nested_archive_is_just_a_file": nested_archive_is_just_a_file,
}


@case(UNSAFE)
def dotdot_name(context: CorpusContext) -> bytes:
    """A member named ``../escaped`` (parent traversal)."""
    del context
    return _with(_file("../escaped", "pwned"))


@case(UNSAFE)
def dotdot_deep(context: CorpusContext) -> bytes:
    """A member ``lib/../../../../escaped`` that climbs past the staging root."""
    del context
    return _with(_file("lib/../../../../escaped", "pwned"))


@case(UNSAFE)
def dotdot_inside_stays_inside(context: CorpusContext) -> bytes:
    """``lib/../nexo-plugin.toml``: a ``..`` that stays inside still breaks the name rules."""
    del context
    return _with(_file("lib/../lib/plugin/other.py", "x"))


@case(UNSAFE)
def absolute_name(context: CorpusContext) -> bytes:
    """A member with an absolute name inside the canary directory."""
    return _with(_file(f"{context.canary_dir}/absolute-pwned", "pwned"))


@case(UNSAFE)
def dot_slash_dotdot(context: CorpusContext) -> bytes:
    """``./../escaped``: a leading ``./`` hiding a traversal."""
    del context
    return _with(_file("./../escaped", "pwned"))


@case(UNSAFE)
def symlink_to_etc(context: CorpusContext) -> bytes:
    """A symlink ``lib/etc -> /etc``."""
    del context
    return _with(_link("lib/etc", "/etc"))


@case(UNSAFE)
def symlink_then_write_through(context: CorpusContext) -> bytes:
    """A symlink to the canary directory, then a file written through it."""
    return _with(
        _link("lib/out", str(context.canary_dir)), _file("lib/out/written-through-link", "pwned")
    )


@case(UNSAFE)
def relative_symlink_escape_then_write(context: CorpusContext) -> bytes:
    """``lib/up -> ../../../..`` then ``lib/up/escaped``."""
    del context
    return _with(_link("lib/up", "../../../.."), _file("lib/up/escaped-via-relative-link", "x"))


@case(UNSAFE)
def symlink_internal(context: CorpusContext) -> bytes:
    """A symlink that stays inside the root (``lib/alias -> plugin``): links are refused."""
    del context
    return _with(_link("lib/alias", "plugin"))


@case(UNSAFE)
def symlink_as_launcher(context: CorpusContext) -> bytes:
    """``bin/<id>`` is a symlink to ``/bin/sh`` instead of the launcher."""
    del context
    members = [m for m in _baseline_members() if m[0].name != f"bin/{PLUGIN_ID}"]
    return _targz([*members, _link(f"bin/{PLUGIN_ID}", "/bin/sh")])


@case(UNSAFE)
def hardlink_outside_absolute(context: CorpusContext) -> bytes:
    """A hardlink to ``/etc/passwd``."""
    del context
    return _with(_link("lib/passwd", "/etc/passwd", hard=True))


@case(UNSAFE)
def hardlink_outside_relative(context: CorpusContext) -> bytes:
    """A hardlink to ``../../outside`` (a file beside the plugin root)."""
    del context
    return _with(_link("lib/outside", "../../outside", hard=True))


@case(UNSAFE)
def hardlink_internal(context: CorpusContext) -> bytes:
    """A hardlink to another member of the archive: hardlinks are refused outright."""
    del context
    return _with(_link("lib/launcher-copy", f"bin/{PLUGIN_ID}", hard=True))


@case(UNSAFE)
def char_device(context: CorpusContext) -> bytes:
    """A character device (1,3 like ``/dev/null``)."""
    del context
    info = _info("lib/null", kind=tarfile.CHRTYPE, mode=0o666)
    info.devmajor, info.devminor = 1, 3
    return _with((info, None))


@case(UNSAFE)
def block_device(context: CorpusContext) -> bytes:
    """A block device (8,0 like ``/dev/sda``)."""
    del context
    info = _info("lib/disk", kind=tarfile.BLKTYPE, mode=0o660)
    info.devmajor, info.devminor = 8, 0
    return _with((info, None))


@case(UNSAFE)
def fifo(context: CorpusContext) -> bytes:
    """A named pipe."""
    del context
    return _with((_info("lib/pipe", kind=tarfile.FIFOTYPE), None))


@case(UNSAFE)
def setuid_file(context: CorpusContext) -> bytes:
    """A setuid executable."""
    del context
    return _with(_file("lib/suid", "#!/bin/sh\n", 0o4755))


@case(UNSAFE)
def setuid_launcher(context: CorpusContext) -> bytes:
    """The launcher ``bin/<id>`` itself is setuid."""
    del context
    members = [m for m in _baseline_members() if m[0].name != f"bin/{PLUGIN_ID}"]
    return _targz([*members, _file(f"bin/{PLUGIN_ID}", LAUNCHER, 0o4755)])


@case(UNSAFE)
def setgid_file(context: CorpusContext) -> bytes:
    """A setgid executable."""
    del context
    return _with(_file("lib/sgid", "#!/bin/sh\n", 0o2755))


@case(UNSAFE)
def sticky_directory(context: CorpusContext) -> bytes:
    """A directory with the sticky bit."""
    del context
    return _with(_dir("lib/sticky", 0o1777))


@case(UNSAFE)
def duplicate_member(context: CorpusContext) -> bytes:
    """The launcher twice: a later member silently replacing a reviewed one."""
    del context
    return _with(_file(f"bin/{PLUGIN_ID}", "#!/bin/sh\necho replaced\n", 0o755))


@case(UNSAFE)
def duplicate_manifest_shadowing(context: CorpusContext) -> bytes:
    """A second ``nexo-plugin.toml`` after the first, asking for more than the first."""
    del context
    evil = MANIFEST + '\n[plugin.entrypoint.env]\nLD_PRELOAD = "/tmp/evil.so"\n'
    return _with(_file("nexo-plugin.toml", evil))


@case(UNSAFE)
def duplicate_after_dot_slash(context: CorpusContext) -> bytes:
    """``lib/plugin/main.py`` and ``./lib/plugin/main.py``: equal once normalised."""
    del context
    return _with(_file("./lib/plugin/main.py", "print('shadow')\n"))


@case(UNSAFE)
def duplicate_after_double_slash(context: CorpusContext) -> bytes:
    """``lib//plugin/main.py`` duplicating ``lib/plugin/main.py``."""
    del context
    return _with(_file("lib//plugin/main.py", "print('shadow')\n"))


@case(UNSAFE)
def directory_then_file_same_name(context: CorpusContext) -> bytes:
    """``lib/plugin`` is a directory and then a regular file."""
    del context
    return _with(_file("lib/plugin", "not a directory"))


@case(UNSAFE)
def case_colliding_names(context: CorpusContext) -> bytes:
    """``lib/plugin/Data.txt`` and ``lib/plugin/data.txt``: one file on a case-folding disk."""
    del context
    return _with(_file("lib/plugin/Data.txt", "A"), _file("lib/plugin/data.txt", "B"))


@case(UNSAFE)
def unicode_normalisation_collision(context: CorpusContext) -> bytes:
    """``café.txt`` composed (NFC) and decomposed (NFD): one name on macOS file systems."""
    del context
    composed = unicodedata.normalize("NFC", "lib/plugin/café.txt")
    decomposed = unicodedata.normalize("NFD", "lib/plugin/café.txt")
    assert composed != decomposed
    return _with(_file(composed, "A"), _file(decomposed, "B"))


@case(UNSAFE)
def entry_over_size_limit(context: CorpusContext) -> bytes:
    """One member one byte over the per-entry limit (zeros, so tiny compressed)."""
    size = context.limits.max_entry_bytes + 1
    return _streamed_targz([*_baseline_members(), (_info("lib/big.bin", size=size), _Zeros(size))])


@case(UNSAFE)
def too_many_entries(context: CorpusContext) -> bytes:
    """One entry more than the entry limit (empty files)."""
    # +1 over the limit, less the baseline members and the "lib/many" directory.
    count = context.limits.max_entries + 1 - len(_baseline_members()) - 1
    many = [_file(f"lib/many/{index:05d}", b"") for index in range(count)]
    return _targz([*_baseline_members(), _dir("lib/many"), *many])


@case(UNSAFE)
def implied_directories_past_entry_limit(context: CorpusContext) -> bytes:
    """Far fewer members than the entry limit, no directory entries, but names so deep that
    the directories they imply outnumber the limit (an inode bomb)."""
    depth = 300  # "d/" * 300: 600 characters, within the name length limit
    count = context.limits.max_entries // depth + 1
    deep = [_file(f"lib/deep{index}/" + "d/" * depth + "x", b"") for index in range(count)]
    return _targz([*_baseline_members(), *deep])


@case(UNSAFE)
def gzip_bomb_total_size(context: CorpusContext) -> bytes:
    """Members each under the per-entry limit whose sum exceeds the total limit."""
    limits = context.limits
    per_entry = min(limits.max_entry_bytes, limits.max_total_bytes // 2 + 1)
    count = limits.max_total_bytes // per_entry + 1
    bombs: list[tuple[tarfile.TarInfo, io.RawIOBase | bytes | None]] = [
        (_info(f"lib/zeros-{index}.bin", size=per_entry), _Zeros(per_entry))
        for index in range(count)
    ]
    return _streamed_targz([*_baseline_members(), *bombs])


@case(UNSAFE)
def size_claim_5gib_no_data(context: CorpusContext) -> bytes:
    """A header claiming 5 GiB of data, followed by the end of the archive."""
    del context
    info = _info("lib/huge.bin", size=5 * 1024 * MIB)
    raw = _baseline_tar_without_end() + info.tobuf(format=tarfile.GNU_FORMAT) + _end_of_archive()
    return _gzip(raw)


@case(UNSAFE)
def nul_in_name(context: CorpusContext) -> bytes:
    """A PAX ``path`` with a NUL byte (``lib/a\\0/../../x``)."""
    del context
    data = b"x"
    pax = _pax_header_block({"path": b"lib/plugin/a\x00/../../../nul-escaped"})
    member = _raw_member(_info("lib/plugin/innocent", size=len(data)), data)
    return _gzip(_baseline_tar_without_end() + pax + member + _end_of_archive())


@case(UNSAFE)
def backslash_traversal(context: CorpusContext) -> bytes:
    """``..\\..\\escaped``: a traversal on any system that splits on backslashes."""
    del context
    return _with(_file("..\\..\\escaped", "pwned"))


@case(UNSAFE)
def backslash_absolute(context: CorpusContext) -> bytes:
    """``\\\\server\\share\\x`` and ``C:\\x`` style names."""
    del context
    return _with(_file("C:\\Windows\\evil.dll", "x"))


@case(UNSAFE)
def pax_path_override_traversal(context: CorpusContext) -> bytes:
    """A harmless ustar name overridden by a PAX ``path=../../escaped``."""
    del context
    info, data = _file("lib/plugin/harmless.txt", "pwned")
    info.pax_headers = {"path": "../../pax-escaped"}
    return _with((info, data))


@case(UNSAFE)
def pax_linkpath_override(context: CorpusContext) -> bytes:
    """A symlink whose PAX ``linkpath`` retargets it to ``/etc/shadow``."""
    del context
    info, _ = _link("lib/plugin/link", "harmless")
    info.pax_headers = {"linkpath": "/etc/shadow"}
    return _with((info, None))


@case(UNSAFE)
def gnu_longname_traversal(context: CorpusContext) -> bytes:
    """A GNU ``././@LongLink`` name that hides ``..`` past the 100-byte ustar field."""
    del context
    name = "lib/" + "a" * 120 + "/../../../../gnu-long-escaped"
    return _with(_file(name, "pwned"), fmt=tarfile.GNU_FORMAT)


@case(UNSAFE)
def gnu_longlink_symlink(context: CorpusContext) -> bytes:
    """A GNU long-link symlink whose target is only in the ``K`` record."""
    del context
    return _with(_link("lib/longlink", "/" + "x" * 150 + "/../../etc"), fmt=tarfile.GNU_FORMAT)


@case(UNSAFE)
def gnu_sparse_member(context: CorpusContext) -> bytes:
    """A GNU old-style sparse member (type ``S``), which :mod:`tarfile` reports as regular."""
    del context
    info = _info("lib/sparse.bin", kind=tarfile.GNUTYPE_SPARSE, size=0)
    return _gzip(
        _baseline_tar_without_end() + info.tobuf(format=tarfile.GNU_FORMAT) + _end_of_archive()
    )


def _pax_sparse(sparse_map: bytes, data: bytes, realsize: int) -> bytes:
    body = sparse_map.ljust(tarfile.BLOCKSIZE, b"\0") + data
    pax = _pax_header_block(
        {
            "GNU.sparse.major": "1",
            "GNU.sparse.minor": "0",
            "GNU.sparse.name": "lib/sparse-pax.bin",
            "GNU.sparse.realsize": str(realsize),
        }
    )
    member = _raw_member(_info("lib/GNUSparseFile.0/sparse-pax.bin", size=len(body)), body)
    return _gzip(_baseline_tar_without_end() + pax + member + _end_of_archive())


@case(UNSAFE)
def pax_sparse_member(context: CorpusContext) -> bytes:
    """A PAX 1.0 sparse member (``GNU.sparse.*`` records): 4 data bytes, 1 GiB real size."""
    del context
    return _pax_sparse(b"1\n0\n4\n", b"abcd", 1024 * MIB)


@case(INVALID)
def pax_sparse_malformed_map(context: CorpusContext) -> bytes:
    """A PAX sparse map announcing 10 regions but giving one number (``tarfile`` raises
    ``ValueError``, not ``ReadError``, on it)."""
    del context
    return _pax_sparse(b"10\n0\n", b"", 1024 * MIB)


@case(UNSAFE)
def gnu_multivolume_member(context: CorpusContext) -> bytes:
    """A GNU multi-volume continuation member (type ``M``)."""
    del context
    info = _info("lib/volume.bin", kind=GNUTYPE_MULTIVOL, size=0)
    return _gzip(
        _baseline_tar_without_end() + info.tobuf(format=tarfile.GNU_FORMAT) + _end_of_archive()
    )


@case(UNSAFE)
def pax_global_header_traversal(context: CorpusContext) -> bytes:
    """A PAX global header (type ``g``) whose ``path=../../escaped`` names the members after it."""
    del context
    header = _pax_header_block({"path": "../../global-escaped"}, "pax_global_header", b"g")
    late = _raw_file("lib/plugin/late.txt", "pwned")
    return _gzip(_baseline_tar_without_end() + header + late + _end_of_archive())


@case(UNSAFE)
def contiguous_file_member(context: CorpusContext) -> bytes:
    """A member of type ``7`` (contiguous file), which some readers write as a regular file."""
    del context
    info, data = _file("lib/plugin/contiguous.bin", "x")
    info.type = tarfile.CONTTYPE
    return _with((info, data))


@case(UNSAFE)
def volume_label_member(context: CorpusContext) -> bytes:
    """A GNU volume label (type ``V``) among the members."""
    del context
    info = _info("lib/plugin/label", kind=b"V", size=0)
    return _gzip(
        _baseline_tar_without_end() + info.tobuf(format=tarfile.GNU_FORMAT) + _end_of_archive()
    )


@case(UNSAFE)
def over_long_component(context: CorpusContext) -> bytes:
    """A name component of 300 bytes, more than any file system holds in one name."""
    del context
    return _with(_file("lib/" + "c" * 300, "x"))


@case(UNSAFE)
def over_long_name(context: CorpusContext) -> bytes:
    """A name of more than 1024 bytes made of short components."""
    del context
    return _with(_file("lib/" + "/".join(["d" * 200] * 6), "x"))


@case(UNSAFE)
def undecodable_name(context: CorpusContext) -> bytes:
    """A PAX ``path`` of raw bytes that are not UTF-8 (``hdrcharset=BINARY``)."""
    del context
    header = _pax_header_block({"hdrcharset": "BINARY", "path": b"lib/plugin/\xff\xfe"})
    member = _raw_file("lib/plugin/named.txt", "x")
    return _gzip(_baseline_tar_without_end() + header + member + _end_of_archive())


@case(UNSAFE)
def second_gzip_stream_smuggles_traversal(context: CorpusContext) -> bytes:
    """The plugin in one gzip member, then a second gzip member carrying ``../escaped``.

    ``gzip -d`` joins the members into one tar, so the second is read, not ignored.
    """
    del context
    escaped = _raw_file("../second-stream-escaped", "pwned")
    return _gzip(_baseline_tar_without_end()) + _gzip(escaped + _end_of_archive())


@case(UNSAFE)
def regular_file_named_dot(context: CorpusContext) -> bytes:
    """A regular file named ``.`` (would replace the plugin root itself)."""
    del context
    return _with(_file(".", "pwned"))


@case(UNSAFE)
def regular_file_named_dotdot(context: CorpusContext) -> bytes:
    """A regular file named ``..``."""
    del context
    return _with(_file("..", "pwned"))


@case(UNSAFE)
def empty_member_name(context: CorpusContext) -> bytes:
    """A regular member with an empty name."""
    del context
    return _with(_file("", "pwned"))


@case(UNSAFE)
def trailing_slash_on_file(context: CorpusContext) -> bytes:
    """A regular file whose name ends in ``/``."""
    del context
    return _with(_file("lib/plugin/notes.txt/", "x"))


@case(INVALID)
def launcher_is_directory(context: CorpusContext) -> bytes:
    """``bin/<id>`` is a directory (holding a file), not the launcher."""
    del context
    members = [m for m in _baseline_members() if m[0].name != f"bin/{PLUGIN_ID}"]
    return _targz(
        [*members, _dir(f"bin/{PLUGIN_ID}"), _file(f"bin/{PLUGIN_ID}/run", LAUNCHER, 0o755)]
    )


@case(UNSAFE)
def nested_archive_with_outer_traversal(context: CorpusContext) -> bytes:
    """A harmless nested tar.gz next to an outer ``../`` member: the outer rule still applies."""
    del context
    inner = _targz(_baseline_members())
    return _with(_file("lib/plugin/inner.tar.gz", inner), _file("../outer-escaped", "x"))


@case(INVALID)
def truncated_gzip(context: CorpusContext) -> bytes:
    """A valid archive cut in half (no gzip trailer, tar cut mid-member)."""
    del context
    whole = _targz([*_baseline_members(), _file("lib/plugin/filler.bin", bytes(range(256)) * 64)])
    return whole[: len(whole) // 2]


@case(INVALID)
def truncated_gzip_trailer(context: CorpusContext) -> bytes:
    """A valid archive missing only its 8-byte gzip trailer (CRC and size)."""
    del context
    return _targz(_baseline_members())[:-8]


@case(INVALID)
def corrupt_gzip_crc(context: CorpusContext) -> bytes:
    """A valid archive whose gzip CRC32 is wrong."""
    del context
    whole = bytearray(_targz(_baseline_members()))
    whole[-8] ^= 0xFF
    return bytes(whole)


@case(INVALID)
def gzip_of_non_tar(context: CorpusContext) -> bytes:
    """A valid gzip stream of text that is not a tar archive."""
    del context
    return _gzip(b"this is not a tar archive\n" * 100)


@case(INVALID)
def gzip_of_nothing(context: CorpusContext) -> bytes:
    """A valid gzip stream of zero bytes."""
    del context
    return _gzip(b"")


@case(INVALID)
def double_gzip(context: CorpusContext) -> bytes:
    """A tar gzipped twice: after one gunzip it is not a tar."""
    del context
    return _gzip(_targz(_baseline_members()))


@case(INVALID)
def plain_tar_not_gzipped(context: CorpusContext) -> bytes:
    """A valid plugin tar that is not compressed."""
    del context
    return _tar_bytes(_baseline_members())


@case(INVALID)
def zero_length(context: CorpusContext) -> bytes:
    """An empty file."""
    del context
    return b""


@case(INVALID)
def zip_named_tar_gz(context: CorpusContext) -> bytes:
    """A zip file (raw deflate inside) under a ``.tar.gz`` name."""
    del context
    body = zlib.compress(MANIFEST.encode())
    return b"PK\x03\x04" + body + b"PK\x05\x06" + bytes(18)


@case(INVALID)
def bad_header_checksum(context: CorpusContext) -> bytes:
    """A valid tar whose first header checksum is wrong."""
    del context
    raw = bytearray(_tar_bytes(_baseline_members()))
    raw[148:156] = b"0000000\x00"
    return _gzip(bytes(raw))


@case(INVALID)
def garbage_instead_of_end_marker(context: CorpusContext) -> bytes:
    """The complete plugin, then random bytes where the next header or the end marker belongs.

    :mod:`tarfile` stops silently at a bad header after the first, so a reader that trusts its
    member list sees a valid plugin here; GNU tar reports the damage.
    """
    del context
    noise = hashlib.sha512(b"noise").digest() * 16
    return _gzip(_baseline_tar_without_end() + noise + _end_of_archive())


@case(INVALID)
def member_hidden_after_end_marker(context: CorpusContext) -> bytes:
    """The plugin and its end marker, then ``../escaped`` that readers stopping there never see."""
    del context
    escaped = _raw_file("../hidden-escaped", "pwned")
    return _gzip(_baseline_tar_without_end() + _end_of_archive() + escaped + _end_of_archive())


@case(INVALID)
def bytes_after_the_gzip_stream(context: CorpusContext) -> bytes:
    """A complete plugin ``.tar.gz`` followed by bytes that are no gzip member."""
    del context
    return _targz(_baseline_members()) + b"not gzip, but carried along"


# --------------------------------------------------------------------------------------------


def sha256_sidecar(data: bytes, name: str = ASSET_NAME) -> str:
    """The ``<hex>  <name>`` line ``pack`` writes (``sha256sum -c`` compatible)."""
    return f"{hashlib.sha256(data).hexdigest()}  {name}\n"


def iter_corpus(context: CorpusContext) -> Iterator[tuple[str, bytes]]:
    """Build every case (controls first) and yield ``(name, bytes)``."""
    for name, build in CONTROLS.items():
        yield name, build(context)
    for name, entry in CORPUS.items():
        yield name, entry.build(context)


def write_corpus(directory: Path, context: CorpusContext | None = None) -> list[Path]:
    """Write every case as ``<name>.tar.gz`` into ``directory``; return the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in iter_corpus(context or CorpusContext()):
        path = directory / f"{name}.tar.gz"
        path.write_bytes(data)
        written.append(path)
    return written


#: The limits of the corpus :func:`write_corpus` writes from the command line: small limits keep
#: the seed corpus small, and the defects are the same.
SEED_LIMITS = Limits(max_entries=50, max_total_bytes=MIB, max_entry_bytes=MIB)

#: The ``nexo plugin install`` flags that set :data:`SEED_LIMITS`: the size and count cases of
#: the written corpus are over these limits only, not over the default ones.
SEED_INSTALL_FLAGS = (
    "--max-entries",
    str(SEED_LIMITS.max_entries),
    "--max-total-size",
    str(SEED_LIMITS.max_total_bytes),
    "--max-entry-size",
    str(SEED_LIMITS.max_entry_bytes),
)

if __name__ == "__main__":
    for path in write_corpus(
        Path(sys.argv[1] if len(sys.argv) > 1 else "corpus"), CorpusContext(limits=SEED_LIMITS)
    ):
        sys.stdout.write(f"{path}\n")
    sys.stderr.write(
        f"Install each as {ASSET_NAME} (with its .sha256 sidecar) and with "
        f"{' '.join(SEED_INSTALL_FLAGS)}: the size and count cases are over these limits, "
        "not over the default ones.\n"
    )
