"""Archive reading: an untrusted ``.tar.gz`` is checked member by member in one streaming pass.

The gzip stream is inflated once. Every member is checked (type, name, mode bits, size limits,
duplicates and collisions) as its header is read, before any of its bytes are handed on; its
bytes are hashed as they pass. Real decompressed bytes are counted, so a gzip bomb stops as
soon as it passes the limit, and extended headers (PAX, GNU long names) are size-capped before
tarfile reads them into memory.

What receives the members is a :class:`TreeSink`: :func:`inspect_archive` passes them to one
that keeps nothing (a scan), :mod:`nexo_pkg.sources.extract` to one that writes them.
"""

from __future__ import annotations

import codecs
import hashlib
import re
import struct
import tarfile
import unicodedata
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import IO, Any, ClassVar, Literal, NamedTuple, Self, cast

from nexo_pkg.core.errors import NexoError
from nexo_pkg.manifest.names import (
    MANIFEST_NAMES,
    MAX_MANIFEST_BYTES,
    choose_manifest,
    is_manifest_name,
)
from nexo_pkg.sbom import MAX_SBOM_BYTES, SBOM_MEMBER

MiB = 1024 * 1024
# What is read of the file and inflated at a time: pieces that stay in a core's cache while
# their members are hashed and written (1 MiB pieces cost 10 % more CPU on plugin archives).
READ_CHUNK = 256 * 1024
# Extended headers carry one path and a few attributes; anything bigger is an attack.
MAX_EXTENDED_HEADER_BYTES = 64 * 1024
MAX_NAME_LENGTH = 1024
MAX_COMPONENT_LENGTH = 255
# Headers, padding and extended headers cost bytes that member sizes do not count.
PER_ENTRY_OVERHEAD = 4 * 1024
# Member times beyond +-2**40 s (about 35,000 years) are not times but attacks on whoever
# converts them.
MAX_ABS_MTIME = 2**40
# The installer's own files inside a plugin directory (the receipt, its temp file): a member
# named so would be taken for ours.
RESERVED_PREFIX = ".nexo-install"
_SPECIAL_BITS = 0o7000
# The FLG byte of a gzip member header, and its bits RFC 1952 reserves (to be refused).
_GZIP_FLAGS_AT = 3
_GZIP_RESERVED_FLAGS = 0xE0
#: What a gzip stream that does not inflate, or fails its checks, is refused as, whichever
#: inflate library read it.
DAMAGED_GZIP = "the gzip data is damaged: it does not inflate, or fails its CRC-32 or length check"
_DRIVE = re.compile(r"^[A-Za-z]:")
# C0, DEL and C1 control characters.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Names most archives hold: components of ASCII letters, digits and a few signs, none
# starting with a dot (so none is "", "." or ".."); at most MAX_COMPONENT_LENGTH long in all,
# they pass every rule of normalise_name as they are.
_PLAIN_NAME = re.compile(r"[\w+@,=-][\w.+@,=-]*(?:/[\w+@,=-][\w.+@,=-]*)*", re.ASCII)
# tarfile decodes undecodable bytes as lone surrogates (surrogateescape).
_SURROGATE = re.compile("[\ud800-\udfff]")
_EXTENDED_TYPES = {
    tarfile.XHDTYPE,
    tarfile.XGLTYPE,
    tarfile.SOLARIS_XHDTYPE,
    tarfile.GNUTYPE_LONGNAME,
    tarfile.GNUTYPE_LONGLINK,
}
_REGULAR_TYPES = {tarfile.REGTYPE, tarfile.AREGTYPE}
# Members whose bytes the listing keeps (when small enough).
_KEPT_NAMES = frozenset({SBOM_MEMBER, *MANIFEST_NAMES})

EntryKind = Literal["file", "dir"]

#: The inflate implementation: ISA-L's (~1.7x zlib's speed on plugin archives) when its wheel
#: is installed, else zlib. Both check every gzip member's CRC-32 and length.
INFLATE: ModuleType = zlib
INFLATE_ERRORS: tuple[type[Exception], ...] = (zlib.error,)
try:
    from isal import isal_zlib

    INFLATE = isal_zlib
    INFLATE_ERRORS = (zlib.error, cast("type[Exception]", isal_zlib.error))
except ImportError:  # pragma: no cover (platforms without an isal wheel)
    pass


@dataclass(frozen=True)
class ArchiveLimits:
    """Size limits for untrusted archives (SPEC defaults); flags of ``install`` change them."""

    max_download: int = 100 * MiB
    max_entries: int = 10_000
    max_total: int = 250 * MiB
    max_entry: int = 100 * MiB

    def stream_budget(self) -> int:
        """Decompressed bytes allowed in total: content plus header overhead per entry."""
        return self.max_total + (self.max_entries + 2) * PER_ENTRY_OVERHEAD


class FileInfo(NamedTuple):
    """One regular file of an archive: its size, the sha256 of its bytes, its tar mode."""

    size: int
    sha256: str
    mode: int


@dataclass
class ArchiveListing:
    """What one pass found: explicit entries in archive order, every directory (explicit or
    implied by a member below it), file hashes, the root manifest.

    ``manifests`` holds every root manifest (``plugin.toml``, ``nexo-plugin.toml``);
    ``manifest_name``/``manifest`` are the one the daemon reads first.
    """

    entries: list[tuple[str, EntryKind]] = field(default_factory=list)
    files: dict[str, FileInfo] = field(default_factory=dict)
    directories: set[str] = field(default_factory=set)
    manifests: dict[str, bytes] = field(default_factory=dict)
    manifest_name: str | None = None
    manifest: bytes | None = None
    total_size: int = 0
    #: The SBOM at the root (``sbom.cdx.json``) when it is at most ``MAX_SBOM_BYTES``; an
    #: SBOM member listed in ``files`` but absent here is over that cap.
    sbom: bytes | None = None
    #: Set by an extraction: the permission bits (``S_IMODE``) each file and directory it
    #: created had on disk once written, by name (what a walk of the tree would find).
    modes: dict[str, int] | None = None

    def __reduce__(self) -> tuple[Callable[..., ArchiveListing], tuple[Any, ...]]:
        """Pickled (an extraction worker's listing goes back to the installing process)
        with the files as columns, a list per field, not an object each: about a third of
        the time to write, a little less to read back."""
        infos = self.files.values()
        columns = (
            list(self.files),
            [info.size for info in infos],
            [info.sha256 for info in infos],
            [info.mode for info in infos],
        )
        fields = {name: value for name, value in vars(self).items() if name != "files"}
        return _listing_from_columns, (columns, fields)


def _listing_from_columns(
    columns: tuple[list[str], list[int], list[str], list[int]], fields: dict[str, Any]
) -> ArchiveListing:
    names, sizes, digests, modes = columns
    files = dict(
        zip(names, map(FileInfo._make, zip(sizes, digests, modes, strict=True)), strict=True)
    )
    return ArchiveListing(files=files, **fields)


def unsafe(message: str, *, member: str | None = None) -> NexoError:
    details = {"member": member} if member is not None else {}
    return NexoError(f"unsafe archive: {message}", kind="archive_unsafe", details=details)


def invalid(message: str) -> NexoError:
    return NexoError(f"not a valid .tar.gz archive: {message}", kind="archive_invalid")


class TreeSink:
    """Receives the members of an archive as they pass, already checked; keeps nothing.

    Directories come parents first (implied ones included) and each once; a file's bytes come
    in :meth:`write` calls between :meth:`open_file` and :meth:`close_file`. A subclass that
    writes raises :class:`OSError` on failure; :meth:`abort` then undoes what it did.
    """

    def directory(self, name: str) -> None:
        """Create the directory ``name`` (its parent exists)."""

    def open_file(self, name: str, executable: bool) -> None:
        """Start the file ``name`` (its parent exists; the name is new)."""

    def write(self, data: bytes | memoryview) -> None:
        """Append ``data`` to the open file."""

    def close_file(self) -> None:
        """Finish the open file."""

    def write_file(self, name: str, executable: bool, data: bytes | memoryview) -> None:
        """A whole file at once: :meth:`open_file`, :meth:`write`, :meth:`close_file`."""
        self.open_file(name, executable)
        self.write(data)
        self.close_file()

    def abort(self) -> None:
        """Undo everything after a failure."""


class _BudgetExceededError(Exception):
    pass


class _InflatingReader:
    """A forward-only file object over a gzip file, inflating in large pieces within a budget.

    The inflater checks every gzip member's CRC-32 and length itself, and each member's header
    is checked for reserved flag bits here; concatenated members are accepted as ``gzip -d``
    does, anything else after the last member is refused. More
    than ``budget`` decompressed bytes raises :class:`_BudgetExceededError`, so a gzip bomb
    stops as soon as it passes the limit. :meth:`chunks` hands member data out as views of
    the inflated pieces, without copying.
    """

    def __init__(self, raw: IO[bytes], budget: int) -> None:
        self.raw = raw
        self.budget = budget
        self.position = 0
        self._produced = 0
        self._inflater = INFLATE.decompressobj(wbits=31)
        self._pending = self._member_start(raw.read(READ_CHUNK))
        self.piece = b""
        self.at = 0

    def _member_start(self, data: bytes) -> bytes:
        """``data``, the first bytes of a gzip member, read on past its flag byte when the file
        holds that many; a header setting a reserved flag bit is ``archive_invalid``, as zlib
        and ``gzip -d`` refuse it (RFC 1952) and ISA-L would read on."""
        while len(data) <= _GZIP_FLAGS_AT and (more := self.raw.read(READ_CHUNK)):
            data += more
        if len(data) > _GZIP_FLAGS_AT and data[_GZIP_FLAGS_AT] & _GZIP_RESERVED_FLAGS:
            raise invalid("a gzip header sets reserved flag bits")
        return data

    def _inflate(self) -> bytes:
        """The next piece of decompressed data, ``b""`` at the clean end of the file."""
        while True:
            inflater = self._inflater
            if inflater.eof:
                rest = inflater.unused_data or self._pending or self.raw.read(READ_CHUNK)
                self._pending = b""
                if not rest:
                    return b""
                if len(rest) < 2:
                    rest += self.raw.read(READ_CHUNK)
                if rest[:2] != b"\x1f\x8b":
                    raise invalid("data follows the end of the gzip stream")
                self._inflater = INFLATE.decompressobj(wbits=31)
                self._pending = self._member_start(rest)
                continue
            if inflater.unconsumed_tail:
                data = inflater.unconsumed_tail
            elif self._pending:
                data, self._pending = self._pending, b""
            else:
                data = self.raw.read(READ_CHUNK)
                if not data:
                    raise EOFError("the gzip stream ends before its end marker")
            try:
                piece: bytes = inflater.decompress(data, READ_CHUNK)
            except INFLATE_ERRORS as exc:  # each library words it its own way
                raise invalid(DAMAGED_GZIP) from exc
            if piece:
                self._produced += len(piece)
                if self._produced > self.budget:
                    raise _BudgetExceededError
                return piece

    def _advance(self, size: int) -> int:
        """Move up to ``size`` bytes on within the current piece, inflating the next one when
        it is used up; how many bytes were passed (0: the stream has ended)."""
        left = len(self.piece) - self.at
        if left == 0:
            self.piece = self._inflate()
            self.at = 0
            left = len(self.piece)
        take = min(size, left)
        self.at += take
        self.position += take
        return take

    def chunks(self, size: int) -> Iterator[memoryview]:
        """Exactly the next ``size`` bytes, as views valid until the next read; a stream
        that ends first raises :class:`EOFError`; a negative size is :class:`ValueError`
        (the reader only goes forward)."""
        if size < 0:
            raise ValueError(f"a member of {size} bytes")
        while size:
            take = self._advance(size)
            if not take:
                raise EOFError("the archive ends inside a member")
            yield memoryview(self.piece)[self.at - take : self.at]
            size -= take

    def whole(self, size: int) -> memoryview | None:
        """The next ``size`` bytes (at least one) as one view when the current piece holds
        them all (most members of an archive), else ``None``, having read nothing."""
        at = self.at
        if not 0 < size <= len(self.piece) - at:
            return None
        self.at = at + size
        self.position += size
        return memoryview(self.piece)[at : at + size]

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = self.budget + 1
        at = self.at
        if 0 < size <= len(self.piece) - at:  # a header block: within the current piece
            self.at = at + size
            self.position += size
            return self.piece[at : at + size]
        parts: list[bytes] = []
        while size > 0 and (take := self._advance(size)):
            parts.append(self.piece[self.at - take : self.at])
            size -= take
        return b"".join(parts)

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = 0) -> int:
        """Skip forward to ``offset`` (tarfile skips member padding this way)."""
        if whence != 0 or offset < self.position:
            raise invalid("the archive reader cannot go back")
        while self.position < offset and self._advance(offset - self.position):
            pass
        return self.position


# The fields of a tar header block up to its prefix (magic and version skipped), as
# ``tarfile.TarInfo.frombuf`` slices them.
_HEADER = struct.Struct("100s8s8s8s12s12s8s1s100s8x32s32s8s8s155s")
_PLAIN_TYPES = frozenset({tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE})
_NUL = b"\0"


def byte_sum(block: bytes) -> int:
    """``sum(block)`` of a 512-byte block, in C: Adler-32's first half is 1 plus the sum of
    the bytes modulo 65,521, and a half block sums to at most 256 * 255 = 65,280."""
    return (zlib.adler32(block[:256]) & 0xFFFF) + (zlib.adler32(block[256:]) & 0xFFFF) - 2


@contextmanager
def _sparse_map_of(member: tarfile.TarInfo, rest: tuple[Any, ...]) -> Iterator[None]:
    """Within the block, tarfile reads ``member``'s PAX sparse map (``rest`` begins with the
    PAX records); a malformed map is ``archive_invalid`` naming the member."""
    try:
        yield
    except ValueError as exc:
        records = rest[0] if rest and isinstance(rest[0], dict) else {}
        name = records.get("GNU.sparse.name") or records.get("path") or member.name
        raise invalid(
            f"member {name!r} has a malformed sparse map (its list of data regions is cut short "
            "or holds what is not a number)"
        ) from exc


class StrictTarInfo(tarfile.TarInfo):
    """tarfile's header reader, strict and faster.

    Oversized PAX / GNU long-name headers are refused before tarfile reads them into memory,
    and a damaged header after the first member is refused instead of being taken for the end
    of the archive. A plain header (a regular file or directory, unsigned checksum, no global
    PAX header in force) is parsed here in one ``struct`` call, with the same field rules as
    ``tarfile`` (``frombuf`` then ``_proc_builtin``) and to the same :class:`tarfile.TarInfo`;
    every other block, valid or not, goes to ``tarfile`` itself, so both readers accept and
    refuse the same archives. ``fast_headers`` off: every block goes to ``tarfile``.
    """

    fast_headers: ClassVar[bool] = True

    def _proc_member(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        if self.type in _EXTENDED_TYPES and self.size > MAX_EXTENDED_HEADER_BYTES:
            raise unsafe(
                f"an extended header of {self.size} bytes (limit {MAX_EXTENDED_HEADER_BYTES})"
            )
        processed: tarfile.TarInfo = super()._proc_member(tarfile_)  # type: ignore[misc]
        return processed

    # tarfile reads a PAX sparse map (GNU formats 0.1 and 1.0) with ``int()`` and tuple
    # unpacking, so a malformed one is a bare ValueError in Python's words: say it in ours,
    # naming the member.
    def _proc_gnusparse_01(self, next_: tarfile.TarInfo, *rest: Any) -> None:
        with _sparse_map_of(next_, rest):
            super()._proc_gnusparse_01(next_, *rest)  # type: ignore[misc]

    def _proc_gnusparse_10(self, next_: tarfile.TarInfo, *rest: Any) -> None:
        with _sparse_map_of(next_, rest):
            super()._proc_gnusparse_10(next_, *rest)  # type: ignore[misc]

    @classmethod
    def fromtarfile(cls, tarfile_: tarfile.TarFile) -> Self:
        """The next member's header (``tarfile.TarInfo.fromtarfile``); a damaged one after
        the first member is ``archive_invalid``."""
        start = tarfile_.offset
        fileobj = cast("IO[bytes]", tarfile_.fileobj)
        try:
            block = fileobj.read(tarfile.BLOCKSIZE)
            member = cls.plain_header(block, tarfile_) if cls.fast_headers else None
            if member is not None:
                return member
            obj = cls.frombuf(block, tarfile_.encoding, tarfile_.errors)
            obj.offset = fileobj.tell() - tarfile.BLOCKSIZE
            return cast("Self", obj._proc_member(tarfile_))
        except (
            tarfile.InvalidHeaderError,  # type: ignore[attr-defined]
            tarfile.TruncatedHeaderError,  # type: ignore[attr-defined]
            tarfile.EmptyHeaderError,  # type: ignore[attr-defined]
        ) as exc:
            if start > 0:
                raise invalid(f"damaged or missing header at offset {start} ({exc})") from exc
            raise

    @classmethod
    def plain_header(cls, block: bytes, tarfile_: tarfile.TarFile) -> Self | None:
        """``block`` read as tarfile reads a regular file's or a directory's header (and
        ``tarfile_`` moved past its data), or ``None``, having changed nothing, for any other
        block: another type, a checksum tarfile would take only as signed or not at all, a
        number field ``tarfile`` refuses, a global PAX header in force."""
        if tarfile_.pax_headers:
            return None
        encoding, errors = tarfile_.encoding, tarfile_.errors
        if len(block) != tarfile.BLOCKSIZE:
            return None
        fields = _plain_reader(encoding, errors, lenient=False)(block, 0)
        if fields is None:
            return None
        member = cls.__new__(cls)
        member.chksum, member.mode, member.size, member.mtime, name, prefix, kind = fields
        member.name, member.type = _plain_name(name, kind, prefix)
        # The fields the walker does not use, which _plain_fields found valid.
        unpacked = _HEADER.unpack_from(block)
        member.uid, member.gid, member.devmajor, member.devminor = (
            _octal(unpacked[index]) for index in (2, 3, 11, 12)
        )
        member.linkname, member.uname, member.gname = (
            unpacked[index].partition(_NUL)[0].decode(encoding, errors) for index in (8, 9, 10)
        )
        member.sparse = None
        member.pax_headers = {}
        fileobj = cast("IO[bytes]", tarfile_.fileobj)
        data = fileobj.tell()
        member.offset = data - tarfile.BLOCKSIZE
        member.offset_data = data
        tarfile_.offset = data + _data_blocks(member.type, member.size)
        return member


def _octal(field: bytes) -> int:
    """A number field as ``tarfile.nti`` reads it when it is plain octal (see below)."""
    digits = field.partition(_NUL)[0]
    return int(digits, 8) if digits else 0


def lenient_decoding(encoding: str, errors: str) -> bool:
    """Whether decoding any bytes with ``encoding`` and ``errors`` succeeds (tarfile's
    default, the file system's UTF-8 with ``surrogateescape``): an undecodable byte of an
    ASCII-compatible encoding is 0x80 or above, which ``surrogateescape`` takes."""
    return errors == "surrogateescape" and codecs.lookup(encoding).name in {"utf-8", "ascii"}


# The same fields grouped as the walker reads them: name, mode, user and group ids, size,
# mtime, checksum, type, link name, (magic and version skipped), user and group names with the
# device numbers, prefix.
_GROUPED = struct.Struct("100s8s16s12s12s8s1s100s8x80s155s")


_PlainFields = tuple[int, int, int, int, str, str, bytes]


def _plain_reader(
    encoding: str, errors: str, *, lenient: bool
) -> Callable[[bytes, int], _PlainFields | None]:
    """A reader of the checksum, mode, size, mtime, name, prefix and type of a regular file's
    or a directory's header block as ``tarfile`` reads them (``frombuf``), every other field
    found as ``tarfile`` would read it, or ``None`` for any other block (see
    :meth:`StrictTarInfo.plain_header`), from the block at ``start`` in ``piece`` (which
    holds it whole). ``lenient``: the decoding cannot fail (see :func:`lenient_decoding`),
    the texts not returned are not decoded.

    The fields that archives repeat from member to member (owner, link name, devices, mode,
    mtime, prefix) are read again only when their bytes change: the same bytes are valid or
    not, and read to the same values, whatever header holds them.
    """
    # The bytes of the last ids, link name and owner fields found valid; the last mode,
    # mtime and prefix fields read, and what they were read as.
    valid_rest: tuple[bytes, bytes, bytes] | None = None
    mode_field, mode_bits = b"", 0
    mtime_field, mtime_value = b"", 0
    prefix_field, directory_prefix = b"", ""

    def read(piece: bytes, start: int) -> _PlainFields | None:
        nonlocal valid_rest, mode_field, mode_bits, mtime_field, mtime_value
        nonlocal prefix_field, directory_prefix
        (
            name, mode, ids, size, mtime, chksum, kind, linkname, owners, prefix,
        ) = _GROUPED.unpack_from(piece, start)  # fmt: skip
        if kind not in _PLAIN_TYPES:
            return None
        try:
            # A number field as tarfile.nti reads it: the bytes before the first NUL, in
            # octal, none being 0. int() of those bytes accepts a subset of what nti's int()
            # of the decoded, stripped text does, with the same value; what it refuses (a
            # base-256 number, spaces only, a control character, garbage) is left to tarfile.
            checksum = int(chksum.partition(_NUL)[0] or b"0", 8)
            length = int(size.partition(_NUL)[0] or b"0", 8)
            if mode != mode_field:
                mode_bits = int(mode.partition(_NUL)[0] or b"0", 8)
                mode_field = mode
            if mtime != mtime_field:
                mtime_value = int(mtime.partition(_NUL)[0] or b"0", 8)
                mtime_field = mtime
            if (ids, linkname, owners) != valid_rest:
                # uid, gid, device numbers; link, user and group names: not used, but
                # refused by tarfile where they are not numbers or texts.
                for number in (ids[:8], ids[8:], owners[64:72], owners[72:]):
                    if digits := number.partition(_NUL)[0]:
                        int(digits, 8)
                if not lenient:
                    for text in (linkname, owners[:32], owners[32:64]):
                        text.partition(_NUL)[0].decode(encoding, errors)
                valid_rest = (ids, linkname, owners)
            # tarfile's unsigned sum: every byte, the checksum field counted as 8 spaces. An
            # ASCII block sums to at most 512 * 127 = 65,024, below Adler-32's modulus, so its
            # first half is 1 plus the sum itself.
            block = piece[start : start + tarfile.BLOCKSIZE]
            block_sum = (zlib.adler32(block) & 0xFFFF) - 1 if block.isascii() else byte_sum(block)
            if checksum != block_sum - sum(chksum) + 256:
                return None
            # Strings as tarfile.nts decodes them: the bytes before the first NUL.
            text = name.partition(_NUL)[0].decode(encoding, errors)
            if prefix != prefix_field:
                directory_prefix = prefix.partition(_NUL)[0].decode(encoding, errors)
                prefix_field = prefix
        except ValueError:
            return None
        return checksum, mode_bits, length, mtime_value, text, directory_prefix, kind

    return read


def _plain_name(name: str, kind: bytes, directory_prefix: str) -> tuple[str, bytes]:
    """A plain member's name and type as ``tarfile._proc_builtin`` makes them."""
    if kind == tarfile.AREGTYPE and name.endswith("/"):
        kind = tarfile.DIRTYPE
    if directory_prefix:
        name = directory_prefix + "/" + name
    if kind == tarfile.DIRTYPE:  # stripped (once joined), as tarfile does
        name = name.rstrip("/")
    return name, kind


def _data_blocks(kind: bytes, size: int) -> int:
    """The bytes a plain member's data takes (``TarInfo._block``: whole blocks); a directory's
    header has none, whatever its size field says (``_proc_builtin``)."""
    if kind == tarfile.DIRTYPE:
        return 0
    return -(-size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE


# A NamedTuple made without the Python-level __new__ of its class.
_new_tuple = tuple.__new__


class Header(NamedTuple):
    """What the walker reads of a member header, from either reader."""

    name: str
    type: bytes
    mode: int
    size: int
    mtime: float
    sparse: object

    def isdir(self) -> bool:
        return self.type == tarfile.DIRTYPE


def _headers(archive: tarfile.TarFile, reader: _InflatingReader) -> Iterator[Header]:
    """Every member header of ``archive``, in order, as ``archive.next()`` reads them.

    A plain header block (see :meth:`StrictTarInfo.plain_header`) that lies whole in the
    inflated piece at hand is read here, without ``tarfile``'s machinery around it (no
    ``TarInfo``, no seek); every other block (the first, extended headers and what they
    apply to, the end of the archive, anything damaged or unusual, a block across two
    pieces) is ``archive.next()``'s, which reads it in full as it would have. ``fast_headers``
    off: every block is ``archive.next()``'s."""
    fast = StrictTarInfo.fast_headers
    encoding, errors = archive.encoding, archive.errors
    fields_of = _plain_reader(encoding, errors, lenient=lenient_decoding(encoding, errors))
    # Whether the walker may read the next block: only archive.next() changes what it reads.
    plain = False
    while True:
        if plain:
            piece, offset, at = reader.piece, archive.offset, reader.at
            # Where the next header starts in the piece: after the padding tarfile seeks
            # over, which is in the piece when the header is.
            start = at + offset - reader.position
            end = start + tarfile.BLOCKSIZE
            if at <= start and end <= len(piece):
                fields = fields_of(piece, start)
                if fields is not None:
                    _, mode, size, mtime, name, prefix, kind = fields
                    reader.at, reader.position = end, offset + tarfile.BLOCKSIZE
                    if kind == tarfile.REGTYPE and not prefix:  # most: named and sized as read
                        archive.offset = reader.position - (-size // tarfile.BLOCKSIZE) * 512
                    else:
                        name, kind = _plain_name(name, kind, prefix)
                        archive.offset = reader.position + _data_blocks(kind, size)
                    yield _new_tuple(Header, (name, kind, mode, size, mtime, None))
                    continue
        member = archive.next()
        # tarfile keeps every header it reads otherwise.
        archive.members.clear()  # type: ignore[attr-defined]
        if member is None:
            return
        plain = fast and archive.firstmember is None and not archive.pax_headers  # type: ignore[attr-defined]
        sparse = getattr(member, "sparse", None)
        yield Header(member.name, member.type, member.mode, member.size, member.mtime, sparse)


_DECODE_ERRORS: tuple[type[Exception], ...] = (
    tarfile.ReadError,
    tarfile.HeaderError,
    EOFError,
    ValueError,  # tarfile raises it for some malformed PAX records (sparse maps)
    OverflowError,
    *INFLATE_ERRORS,
)


@contextmanager
def open_stream(
    tarball: Path, limits: ArchiveLimits
) -> Iterator[tuple[tarfile.TarFile, _InflatingReader]]:
    """Open ``tarball`` as a bounded gzip tar stream; map decoding failures to NexoError.

    Yields the tar reader and the inflating reader below it (member data is read from the
    latter). Raises ``archive_invalid`` when it is not gzip or not tar, ``archive_unsafe``
    when the decompressed stream passes the budget, ``io`` when the file cannot be read.
    """
    try:
        with tarball.open("rb") as handle:
            if handle.read(2) != b"\x1f\x8b":
                raise invalid("the file is not gzip-compressed")
            handle.seek(0)
            reader = _InflatingReader(handle, limits.stream_budget())
            # Random-access mode over a forward-only reader: tarfile reads headers and skips
            # padding with seek(); member data is read from ``reader`` directly.
            with tarfile.open(
                fileobj=cast("IO[bytes]", reader), mode="r:", tarinfo=StrictTarInfo
            ) as archive:
                yield archive, reader
    except NexoError:
        raise
    except _BudgetExceededError as exc:
        raise unsafe(
            f"more than {limits.max_total} bytes when decompressed (gzip bomb?); "
            "raise the limit with --max-total-size"
        ) from exc
    except _DECODE_ERRORS as exc:
        raise invalid(str(exc) or type(exc).__name__) from exc
    except tarfile.TarError as exc:
        raise unsafe(str(exc)) from exc
    except OSError as exc:
        raise NexoError(f"cannot read {tarball}: {exc.strerror or exc}", kind="io") from exc


def normalise_name(raw: str) -> str | None:
    """The canonical form of a member name, ``None`` for the archive root (``.``/``./``).

    Raises ``archive_unsafe`` for absolute names, ``..``, NUL, backslashes, control
    characters, undecodable bytes, empty or ``.`` components, and over-long names.
    """
    if len(raw) <= MAX_COMPONENT_LENGTH and _PLAIN_NAME.fullmatch(raw):
        return raw  # none of the rules of checked_name can apply to it
    return checked_name(raw)


def checked_name(raw: str) -> str | None:
    """:func:`normalise_name`, every rule applied one by one."""
    if "\x00" in raw:
        raise unsafe("a member name contains NUL", member=raw)
    if "\\" in raw:
        raise unsafe(f"member name {raw!r} contains a backslash", member=raw)
    if _CONTROL.search(raw):
        raise unsafe(f"member name {raw!r} contains control characters", member=raw)
    if _SURROGATE.search(raw):
        raise unsafe(f"member name {raw!r} is not valid UTF-8", member=raw)
    if raw.startswith("/") or _DRIVE.match(raw):
        raise unsafe(f"member name {raw!r} is absolute", member=raw)
    name = raw
    while name.startswith("./"):
        name = name[2:]
    if name in {"", "."}:
        return None
    if len(name) > MAX_NAME_LENGTH:
        raise unsafe(f"member name {raw[:80]!r}… is longer than {MAX_NAME_LENGTH}", member=raw)
    for part in name.split("/"):
        if part == "..":
            raise unsafe(f"member name {raw!r} escapes the archive with '..'", member=raw)
        if part in {"", "."}:
            raise unsafe(f"member name {raw!r} is not normalised", member=raw)
        # In bytes, as the file system counts it (NAME_MAX): 'é' is two.
        if len(part.encode("utf-8")) > MAX_COMPONENT_LENGTH:
            raise unsafe(
                f"member name {raw[:80]!r}… has a component longer than"
                f" {MAX_COMPONENT_LENGTH} bytes",
                member=raw,
            )
    return name


def check_member(member: Header) -> tuple[str, EntryKind] | None:
    """Classify one member or raise ``archive_unsafe``; ``None`` for the root entry."""
    raw, kind_byte, mode, _, mtime, sparse = member
    if (
        kind_byte in _REGULAR_TYPES
        and sparse is None
        and not mode & _SPECIAL_BITS
        and -MAX_ABS_MTIME <= mtime <= MAX_ABS_MTIME
        and len(raw) <= MAX_COMPONENT_LENGTH
        and _PLAIN_NAME.fullmatch(raw)
    ):
        return raw, "file"  # most members: a plain file no rule below applies to
    name = normalise_name(raw)
    if member.isdir():
        kind: EntryKind = "dir"
    elif member.type in _REGULAR_TYPES and member.sparse is None:
        kind = "file"
    else:
        what = {
            tarfile.SYMTYPE: "a symbolic link",
            tarfile.LNKTYPE: "a hard link",
            tarfile.CHRTYPE: "a character device",
            tarfile.BLKTYPE: "a block device",
            tarfile.FIFOTYPE: "a FIFO",
        }.get(member.type, f"a member of type {member.type!r}")
        raise unsafe(
            f"{raw!r} is {what}; only regular files and directories are allowed", member=raw
        )
    mtime = member.mtime
    if not abs(mtime) <= MAX_ABS_MTIME:  # also catches NaN and the infinities
        raise invalid(f"{raw!r} has an impossible modification time ({mtime!r})")
    if member.mode & _SPECIAL_BITS:
        raise unsafe(f"{raw!r} has setuid, setgid or sticky bits ({oct(member.mode)})", member=raw)
    if name is None:
        if kind != "dir":
            raise unsafe(f"member name {raw!r} is empty", member=raw)
        return None
    return name, kind


def _key(name: str) -> str:
    """What a name is on a case-insensitive, normalising file system (macOS, Windows).

    An ASCII name is its own NFC form, and folds as it lowers."""
    if name.isascii():
        return name.lower()
    return unicodedata.normalize("NFC", name).casefold()


class _Namespace:
    """The names of one archive, explicit and implied, as file systems would see them.

    Two names that fold to the same key would alias on macOS and Windows, so they collide
    even when their bytes differ; a file may not sit where a directory is, explicit or
    implied (``lib/Plugin`` beside ``lib/plugin/x``), nor below a file.
    """

    def __init__(self) -> None:
        # key -> (exact name, kind, explicit)
        self.names: dict[str, tuple[str, EntryKind, bool]] = {}
        # Parents whose every ancestor was checked (as below) and recorded as a directory of
        # that exact name: what is recorded a directory stays one, so the check would pass
        # again, adding nothing (archives list a directory's members together).
        self.parents_checked: set[str] = set()

    def add(self, name: str, kind: EntryKind, raw: str) -> Sequence[str]:
        """Record ``name``; return the directories it implies that are new, parents first."""
        ascii_name = name.isascii()
        key = name.lower() if ascii_name else _key(name)  # (see _key)
        parent = name.rpartition("/")[0]
        # (The prefix holds no "/": a name below a root directory so named starts with it too.)
        if key.startswith(RESERVED_PREFIX):
            raise unsafe(f"{raw!r} is a name the installer keeps for itself", member=raw)
        # (Folding keeps every "/"; lowering ASCII changes letters only.)
        if not ascii_name and name.count("/") != key.count("/"):  # pragma: no cover
            raise unsafe(f"member name {raw!r} changes shape when case-folded", member=raw)
        implied: Sequence[str] = ()
        if parent and parent not in self.parents_checked:
            implied = self._add_parents(name, key, raw)
            self.parents_checked.add(parent)
        known = self.names.get(key)
        if known is None:
            self.names[key] = (name, kind, True)
        elif known == (name, "dir", False) and kind == "dir":
            self.names[key] = (name, "dir", True)
        elif known[0] == name:
            raise unsafe(f"duplicate member name {name!r}", member=raw)
        else:
            raise _collision(name, known[0], raw)
        return implied

    def _add_parents(self, name: str, key: str, raw: str) -> list[str]:
        """Check and record the directories above ``name``; the new ones, parents first."""
        parts, keys = name.split("/"), key.split("/")
        implied: list[str] = []
        for depth in range(1, len(parts)):
            parent, parent_key = "/".join(parts[:depth]), "/".join(keys[:depth])
            known = self.names.get(parent_key)
            if known is None:
                self.names[parent_key] = (parent, "dir", False)
                implied.append(parent)
            elif known[1] == "file":
                raise unsafe(f"{name!r} lies below {known[0]!r}, which is a file", member=raw)
            elif known[0] != parent:
                raise _collision(name, known[0], raw)
        return implied


def check_member_names(members: Iterable[tuple[str, bool]]) -> None:
    """The member-name rules of :func:`walk_archive` (:func:`normalise_name`, then no two names
    alike once case-folded and NFC-normalised, no file where a directory is) applied to the
    ``(name, is_dir)`` pairs a writer is about to store, in order, so that ``pack`` writes
    nothing ``install`` refuses. Raises ``archive_unsafe`` with the message ``install`` would
    give (a collision names both members)."""
    names = _Namespace()
    for raw, is_dir in members:
        name = normalise_name(raw)
        if name is not None:
            names.add(name, "dir" if is_dir else "file", raw)


def _collision(name: str, other: str, raw: str) -> NexoError:
    return unsafe(
        f"{name!r} collides with {other!r} (same name once case-folded or Unicode-normalised)",
        member=raw,
    )


def walk_archive(
    tarball: Path,
    limits: ArchiveLimits,
    sink: TreeSink,
    *,
    expect: ArchiveListing | None = None,
) -> ArchiveListing:
    """Read ``tarball`` once, checking each member as its header is read and passing it to
    ``sink``; return what was found.

    The first bad member stops everything: ``sink.abort()`` runs and ``archive_unsafe`` or
    ``archive_invalid`` is raised (``io`` when the sink cannot write). With ``expect``, the
    archive must hold exactly that listing's entries, in order, with the same hashes
    (``archive_unsafe`` otherwise).
    """
    listing = ArchiveListing()
    names = _Namespace()
    entries, files, directories = listing.entries, listing.files, listing.directories
    max_entries, max_entry, max_total = limits.max_entries, limits.max_entry, limits.max_total
    total = created = 0
    try:
        with open_stream(tarball, limits) as (archive, reader):
            for member in _headers(archive, reader):
                checked = check_member(member)
                if checked is None:
                    continue
                name, kind = checked
                if expect is not None:
                    index = len(entries)
                    if index >= len(expect.entries) or expect.entries[index] != checked:
                        raise unsafe("the archive is not the one that was inspected")
                raw, _, mode, size, _, _ = member
                implied = names.add(name, kind, raw)
                # Every name the tree gets counts, a directory implied by a member's name
                # too: 10,000 members 500 directories deep would otherwise make 5 million.
                created += len(implied) + (kind != "dir" or name not in directories)
                if created > max_entries:
                    raise unsafe(
                        f"more than {max_entries} entries, counting the directories member "
                        "names imply (raise the limit with --max-entries)"
                    )
                for parent in implied:
                    directories.add(parent)
                    sink.directory(parent)
                entries.append(checked)
                if kind == "dir":
                    if name not in directories:
                        directories.add(name)
                        sink.directory(name)
                    continue
                if size < 0:  # tarfile reads "-1024" as it is: the data would end before it starts
                    raise invalid(f"{name!r} has a negative size ({size})")
                if size > max_entry:
                    raise unsafe(
                        f"{name!r} is {size} bytes, over the per-entry limit of "
                        f"{max_entry} "
                        "(raise the limit with --max-entry-size)",
                        member=raw,
                    )
                total += size
                if total > max_total:
                    raise unsafe(
                        f"more than {max_total} bytes when extracted "
                        "(raise the limit with --max-total-size)"
                    )
                whole = None if name in _KEPT_NAMES else reader.whole(size)
                if whole is not None:  # most members: whole in the piece at hand, one call each
                    sink.write_file(name, bool(mode & 0o100), whole)
                    digest = hashlib.sha256(whole).hexdigest()
                    info = _new_tuple(FileInfo, (size, digest, mode))
                else:
                    info = _copy_member(reader, member, name, sink, listing)
                if expect is not None and expect.files[name].sha256 != info.sha256:
                    raise unsafe("the archive is not the one that was inspected", member=name)
                files[name] = info
            if expect is not None and len(entries) != len(expect.entries):
                raise unsafe("the archive is not the one that was inspected")
            _drain(reader)
    except BaseException:
        sink.abort()
        raise
    listing.total_size = total
    return listing


def _copy_member(
    reader: _InflatingReader,
    member: Header,
    name: str,
    sink: TreeSink,
    listing: ArchiveListing,
) -> FileInfo:
    """Pass a member's bytes to ``sink`` (one kept in the listing, or not whole in the piece
    at hand), hashing exactly what it is given to write."""
    hasher = hashlib.sha256()
    is_sbom = name == SBOM_MEMBER and member.size <= MAX_SBOM_BYTES
    keep = is_sbom or (is_manifest_name(name) and member.size <= MAX_MANIFEST_BYTES)
    kept = bytearray()
    sink.open_file(name, bool(member.mode & 0o100))
    whole = reader.whole(member.size)
    try:
        for chunk in reader.chunks(member.size) if whole is None else (whole,):
            hasher.update(chunk)
            sink.write(chunk)
            if keep:
                kept += chunk
    except EOFError as exc:
        raise invalid(f"{name!r} is truncated") from exc
    sink.close_file()
    if is_sbom:
        listing.sbom = bytes(kept)
    elif keep:
        listing.manifests[name] = bytes(kept)
        listing.manifest_name = choose_manifest(listing.manifests).name
        listing.manifest = listing.manifests[listing.manifest_name or name]
    return FileInfo(member.size, hasher.hexdigest(), member.mode)


def _drain(reader: _InflatingReader) -> None:
    """Read to the end of the gzip stream: only zero padding may follow the end marker, and
    reading to the end makes the inflater check the trailer (CRC and length)."""
    while chunk := reader.read(READ_CHUNK):
        if chunk.count(0) != len(chunk):
            raise invalid("data follows the end of the tar archive")


def inspect_archive(tarball: Path, limits: ArchiveLimits | None = None) -> ArchiveListing:
    """Check ``tarball`` in one pass without writing anything; return its listing.

    Raises ``archive_unsafe`` (see module docstring) or ``archive_invalid``.
    """
    return walk_archive(tarball, limits or ArchiveLimits(), TreeSink())
