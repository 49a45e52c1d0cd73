"""Hostile answer bodies: a gzip bomb built without inflating it, and JSON nested too deep.

:func:`gzip_bomb` returns a valid gzip stream of ``inflated`` zero bytes (1 GiB becomes about
1 MiB) in milliseconds: one 1 MiB block is compressed with a full flush, which resets the
compressor, so every following block compresses to the same bytes and is simply repeated;
the trailer carries the real CRC-32 and length, so a decoder that inflates it all accepts it.
"""

from __future__ import annotations

import struct
import zlib

GIB = 1024**3
_BLOCK = bytes(1024 * 1024)
# ID1 ID2, deflate, no flags, no mtime, maximum compression, unknown OS.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"


def gzip_bomb(inflated: int = GIB) -> bytes:
    """A gzip stream of ``inflated`` zero bytes (a multiple of 1 MiB)."""
    blocks, rest = divmod(inflated, len(_BLOCK))
    assert blocks, "the size must be at least 1 MiB"
    assert not rest, "the size must be a multiple of 1 MiB"
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    piece = compressor.compress(_BLOCK) + compressor.flush(zlib.Z_FULL_FLUSH)
    end = compressor.flush(zlib.Z_FINISH)
    crc = 0
    for _ in range(blocks):
        crc = zlib.crc32(_BLOCK, crc)
    trailer = struct.pack("<II", crc, inflated & 0xFFFFFFFF)
    return _GZIP_HEADER + piece * blocks + end + trailer


def nested_release(depth: int = 100_000) -> bytes:
    """A release document whose ``assets`` are ``depth`` arrays deep."""
    return b'{"tag_name": "v1.0.0", "assets": ' + b"[" * depth + b"]" * depth + b"}"
