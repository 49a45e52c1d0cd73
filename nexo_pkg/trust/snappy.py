"""Snappy's raw block format, decoded with a cap on what it may grow to.

GitHub stores the Sigstore bundle of an artifact attestation compressed with Snappy (the raw
block format, no framing) and its attestations API may answer with only a ``bundle_url`` to
it, as ``gh attestation verify`` reads it. The format: the uncompressed length as a varint,
then elements, each a literal run or a copy of earlier output (see Snappy's
``format_description.txt``). A bundle is a few kilobytes, so this small decoder is enough;
its cap is checked against the declared length before anything is produced.
"""

from __future__ import annotations

_LITERAL, _COPY_1, _COPY_2, _COPY_4 = 0, 1, 2, 3
_MAX_VARINT_BYTES = 5  # a 32-bit length


class SnappyError(ValueError):
    """The input is not a well-formed Snappy block, or it would grow past the cap."""


def _varint(data: bytes) -> tuple[int, int]:
    value = 0
    for index in range(min(len(data), _MAX_VARINT_BYTES)):
        byte = data[index]
        value |= (byte & 0x7F) << (7 * index)
        if not byte & 0x80:
            return value, index + 1
    raise SnappyError("the length header is cut short or longer than 32 bits")


def decompress(data: bytes, *, max_size: int) -> bytes:
    """The bytes ``data`` encodes; :class:`SnappyError` when it is malformed, when a copy
    reaches before the start, or when the declared length exceeds ``max_size``."""
    length, position = _varint(data)
    if length > max_size:
        raise SnappyError(f"it declares {length} bytes, more than the {max_size} allowed")
    out = bytearray()
    end = len(data)
    while position < end:
        tag = data[position]
        position += 1
        element = tag & 0x03
        if element == _LITERAL:
            size = tag >> 2
            if size >= 60:
                extra = size - 59
                if position + extra > end:
                    raise SnappyError("a literal's length is cut short")
                size = int.from_bytes(data[position : position + extra], "little")
                position += extra
            size += 1
            if position + size > end:
                raise SnappyError("a literal runs past the end of the input")
            if len(out) + size > length:
                raise SnappyError("the data is longer than its header says")
            out += data[position : position + size]
            position += size
            continue
        if element == _COPY_1:
            size = 4 + ((tag >> 2) & 0x07)
            width = 1
            high = (tag >> 5) << 8
        else:
            size = 1 + (tag >> 2)
            width = 2 if element == _COPY_2 else 4
            high = 0
        if position + width > end:
            raise SnappyError("a copy's offset is cut short")
        offset = high | int.from_bytes(data[position : position + width], "little")
        position += width
        if offset == 0 or offset > len(out):
            raise SnappyError("a copy reaches before the start of the data")
        if len(out) + size > length:
            raise SnappyError("the data is longer than its header says")
        start = len(out) - offset
        if size <= offset:
            out += out[start : start + size]
        else:  # the copy overlaps what it produces: the last `offset` bytes, repeated
            pattern = bytes(out[start:])
            out += (pattern * (size // offset + 1))[:size]
    if len(out) != length:
        raise SnappyError(f"it holds {len(out)} bytes, not the {length} its header says")
    return bytes(out)
