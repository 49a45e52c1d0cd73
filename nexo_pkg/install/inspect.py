"""Archive inspection: pre-scan an untrusted ``.tar.gz`` before anything is extracted.

Every member is checked (type, name, mode bits, size limits, duplicates) while the archive is
decompressed once as a stream. Real decompressed bytes are counted, so a gzip bomb stops as
soon as it passes the limit, and extended headers (PAX, GNU long names) are size-capped before
tarfile reads them into memory. :func:`safe_extract` combines this scan with the filtered
extraction of :mod:`nexo_pkg.install.extract`.
"""

from __future__ import annotations

import hashlib
import re
import tarfile
import unicodedata
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal, Self, cast

from nexo_pkg.errors import NexoError

MiB = 1024 * 1024
HASH_CHUNK = MiB
# tarfile's stream reader re-joins its whole buffer on every read, so it must stay small.
STREAM_BUFFER = 16 * 1024
READ_CHUNK = MiB
MANIFEST_NAME = "nexo-plugin.toml"
MAX_MANIFEST_BYTES = MiB
# Extended headers carry one path and a few attributes; anything bigger is an attack.
MAX_EXTENDED_HEADER_BYTES = 64 * 1024
MAX_NAME_LENGTH = 1024
MAX_COMPONENT_LENGTH = 255
# Headers, padding and extended headers cost bytes that member sizes do not count.
PER_ENTRY_OVERHEAD = 4 * 1024
_SPECIAL_BITS = 0o7000
_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
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

EntryKind = Literal["file", "dir"]


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


@dataclass(frozen=True)
class FileInfo:
    """One regular file of an inspected archive."""

    size: int
    sha256: str
    mode: int


@dataclass
class ArchiveListing:
    """What the pre-scan found: entries in archive order, file hashes, the root manifest."""

    entries: list[tuple[str, EntryKind]] = field(default_factory=list)
    files: dict[str, FileInfo] = field(default_factory=dict)
    directories: set[str] = field(default_factory=set)
    manifest: bytes | None = None
    total_size: int = 0


def unsafe(message: str, *, member: str | None = None) -> NexoError:
    details = {"member": member} if member is not None else {}
    return NexoError(f"unsafe archive: {message}", kind="archive_unsafe", details=details)


def invalid(message: str) -> NexoError:
    return NexoError(f"not a valid .tar.gz archive: {message}", kind="archive_invalid")


class _BudgetExceededError(Exception):
    pass


class _InflatingReader:
    """A read-only file object decompressing a gzip file in large pieces, within a budget.

    zlib checks every member's CRC-32 and length itself (``wbits=31``); concatenated members
    are accepted as ``gzip -d`` does, anything else after the last member is refused. More
    than ``budget`` decompressed bytes raises :class:`_BudgetExceededError`, so a gzip bomb
    stops as soon as it passes the limit.
    """

    def __init__(self, raw: IO[bytes], budget: int) -> None:
        self.raw = raw
        self.budget = budget
        self.consumed = 0
        self._inflater = zlib.decompressobj(wbits=31)
        self._pending = b""
        self._buffer = bytearray()
        self._eof = False

    def _inflate(self) -> bytes:
        """The next piece of decompressed data, ``b""`` at the clean end of the file."""
        while True:
            inflater = self._inflater
            if inflater.eof:
                rest = inflater.unused_data or self._pending or self.raw.read(READ_CHUNK)
                self._pending = b""
                if not rest:
                    self._eof = True
                    return b""
                if len(rest) < 2:
                    rest += self.raw.read(READ_CHUNK)
                if rest[:2] != b"\x1f\x8b":
                    raise invalid("data follows the end of the gzip stream")
                self._inflater = zlib.decompressobj(wbits=31)
                self._pending = rest
                continue
            if inflater.unconsumed_tail:
                data = inflater.unconsumed_tail
            elif self._pending:
                data, self._pending = self._pending, b""
            else:
                data = self.raw.read(READ_CHUNK)
                if not data:
                    raise EOFError("the gzip stream ends before its end marker")
            piece = inflater.decompress(data, READ_CHUNK)
            if piece:
                return piece

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = self.budget - self.consumed + 1
        while len(self._buffer) < size and not self._eof:
            piece = self._inflate()
            self._buffer += piece
            if self.consumed + len(self._buffer) > self.budget:
                raise _BudgetExceededError
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        self.consumed += len(data)
        return data


class _CappedTarInfo(tarfile.TarInfo):
    """Refuses oversized PAX / GNU long-name headers before tarfile reads them into memory."""

    def _proc_member(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        if self.type in _EXTENDED_TYPES and self.size > MAX_EXTENDED_HEADER_BYTES:
            raise unsafe(
                f"an extended header of {self.size} bytes (limit {MAX_EXTENDED_HEADER_BYTES})"
            )
        processed: tarfile.TarInfo = super()._proc_member(tarfile_)  # type: ignore[misc]
        return processed

    @classmethod
    def fromtarfile(cls, tarfile_: tarfile.TarFile) -> Self:
        """tarfile takes a damaged header after the first member for the end of the archive;
        a strict reader refuses it instead."""
        start = tarfile_.offset
        try:
            return super().fromtarfile(tarfile_)
        except (
            tarfile.InvalidHeaderError,  # type: ignore[attr-defined]
            tarfile.TruncatedHeaderError,  # type: ignore[attr-defined]
            tarfile.EmptyHeaderError,  # type: ignore[attr-defined]
        ) as exc:
            if start > 0:
                raise invalid(f"damaged or missing header at offset {start} ({exc})") from exc
            raise


@contextmanager
def open_stream(tarball: Path, limits: ArchiveLimits) -> Iterator[tarfile.TarFile]:
    """Open ``tarball`` as a bounded gzip tar stream; map decoding failures to NexoError.

    Raises ``archive_invalid`` when it is not gzip or not tar, ``archive_unsafe`` when the
    decompressed stream passes the budget, ``io`` when the file cannot be read.
    """
    try:
        with tarball.open("rb") as handle:
            if handle.read(2) != b"\x1f\x8b":
                raise invalid("the file is not gzip-compressed")
            handle.seek(0)
            reader = _InflatingReader(handle, limits.stream_budget())
            with tarfile.open(
                fileobj=cast("IO[bytes]", reader),
                mode="r|",
                bufsize=STREAM_BUFFER,
                tarinfo=_CappedTarInfo,
            ) as archive:
                # Extraction copies in 16 KiB pieces by default; bigger is faster.
                archive.copybufsize = READ_CHUNK  # type: ignore[attr-defined]
                yield archive
    except NexoError:
        raise
    except _BudgetExceededError as exc:
        raise unsafe(
            f"more than {limits.max_total} bytes when decompressed (gzip bomb?); "
            "raise the limit with --max-total-size"
        ) from exc
    except (
        tarfile.ReadError,
        tarfile.HeaderError,
        EOFError,
        zlib.error,
        ValueError,  # tarfile raises it for some malformed PAX records (sparse maps)
    ) as exc:
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
        if len(part) > MAX_COMPONENT_LENGTH:
            raise unsafe(f"member name {raw[:80]!r}… has an over-long component", member=raw)
    return name


def check_member(member: tarfile.TarInfo) -> tuple[str, EntryKind] | None:
    """Classify one member or raise ``archive_unsafe``; ``None`` for the root entry."""
    raw = member.name
    name = normalise_name(raw)
    if member.isdir():
        kind: EntryKind = "dir"
    elif member.type in _REGULAR_TYPES and getattr(member, "sparse", None) is None:
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
    if member.mode & _SPECIAL_BITS:
        raise unsafe(f"{raw!r} has setuid, setgid or sticky bits ({oct(member.mode)})", member=raw)
    if name is None:
        if kind != "dir":
            raise unsafe(f"member name {raw!r} is empty", member=raw)
        return None
    return name, kind


def inspect_archive(tarball: Path, limits: ArchiveLimits | None = None) -> ArchiveListing:
    """Pre-scan ``tarball`` without writing anything; return its listing.

    Raises ``archive_unsafe`` (see module docstring) or ``archive_invalid``.
    """
    limits = limits or ArchiveLimits()
    listing = ArchiveListing()
    # Names that collide after Unicode normalisation or case folding would alias each other on
    # macOS and Windows file systems, so they count as duplicates too.
    seen: set[str] = set()
    with open_stream(tarball, limits) as archive:
        for member in archive:
            checked = check_member(member)
            if checked is None:
                continue
            name, kind = checked
            if len(listing.entries) >= limits.max_entries:
                raise unsafe(
                    f"more than {limits.max_entries} entries (raise it with --max-entries)"
                )
            key = unicodedata.normalize("NFC", name).casefold()
            if key in seen:
                raise unsafe(f"duplicate member name {name!r}", member=member.name)
            seen.add(key)
            listing.entries.append((name, kind))
            if kind == "dir":
                listing.directories.add(name)
                continue
            if member.size > limits.max_entry:
                raise unsafe(
                    f"{name!r} is {member.size} bytes, over the per-entry limit of "
                    f"{limits.max_entry} (raise it with --max-entry-size)",
                    member=member.name,
                )
            listing.total_size += member.size
            if listing.total_size > limits.max_total:
                raise unsafe(
                    f"more than {limits.max_total} bytes when extracted "
                    "(raise it with --max-total-size)"
                )
            listing.files[name] = _read_member(archive, member, name, listing)
        _drain(archive)
    _check_tree_shape(listing)
    return listing


def _read_member(
    archive: tarfile.TarFile, member: tarfile.TarInfo, name: str, listing: ArchiveListing
) -> FileInfo:
    """Hash a member's real bytes (and keep the root manifest); a short read is invalid."""
    handle = archive.extractfile(member)
    if handle is None:  # only for non-regular members, which check_member refused
        raise unsafe(f"{name!r} has no data", member=member.name)
    hasher = hashlib.sha256()
    keep = name == MANIFEST_NAME and member.size <= MAX_MANIFEST_BYTES
    kept = bytearray()
    read = 0
    while chunk := handle.read(HASH_CHUNK):
        read += len(chunk)
        hasher.update(chunk)
        if keep:
            kept += chunk
    if read != member.size:
        raise invalid(f"{name!r} is truncated")
    if keep:
        listing.manifest = bytes(kept)
    return FileInfo(member.size, hasher.hexdigest(), member.mode)


def _drain(archive: tarfile.TarFile) -> None:
    """Read to the end of the gzip stream: only zero padding may follow the end marker, and
    reading to the end makes gzip check its trailer (CRC and length)."""
    stream = archive.fileobj
    assert stream is not None  # noqa: S101 (an open archive always has one)
    while chunk := stream.read(STREAM_BUFFER):
        if chunk.count(0) != len(chunk):
            raise invalid("data follows the end of the tar archive")


def _check_tree_shape(listing: ArchiveListing) -> None:
    """A file may not also be used as a directory (``bin`` file plus ``bin/x``)."""
    for name, _ in listing.entries:
        parts = name.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if parent in listing.files:
                raise unsafe(f"{name!r} lies below {parent!r}, which is a file", member=name)


def safe_extract(
    tarball: Path, dest_dir: Path, limits: ArchiveLimits | None = None
) -> ArchiveListing:
    """Pre-scan ``tarball`` then extract it (``filter="data"``) into the empty ``dest_dir``.

    On failure ``dest_dir`` is left empty. Raises ``archive_unsafe``, ``archive_invalid``, or
    ``io`` when ``dest_dir`` is missing, not empty or not writable.
    """
    from nexo_pkg.install.extract import extract_listed  # noqa: PLC0415 (extract imports this module)

    limits = limits or ArchiveLimits()
    try:
        if not dest_dir.is_dir() or any(dest_dir.iterdir()):
            raise NexoError(f"{dest_dir} must be an existing empty directory", kind="io")
    except OSError as exc:
        raise NexoError(f"cannot use {dest_dir}: {exc.strerror or exc}", kind="io") from exc
    listing = inspect_archive(tarball, limits)
    extract_listed(tarball, dest_dir, listing, limits)
    return listing
