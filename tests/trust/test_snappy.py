"""The Snappy block decoder against a second implementation (cramjam), and its refusals."""

from __future__ import annotations

import json
import os

import cramjam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.shared_fixtures import skip_unless_present

from nexo_pkg.trust.snappy import SnappyError, decompress

from .helpers import SHARED_FIXTURES

LIMIT = 4 * 1024 * 1024


def _compress(data: bytes) -> bytes:
    return bytes(cramjam.snappy.compress_raw(data))


@skip_unless_present("github-attestations")
def test_a_real_attestation_bundle_round_trips() -> None:
    bundle = (
        SHARED_FIXTURES / "github-attestations" / "reusable-workflow-attestation.sigstore.json"
    ).read_bytes()
    compressed = _compress(bundle)
    assert len(compressed) < len(bundle)  # copies were used, not only literals
    assert decompress(compressed, max_size=LIMIT) == bundle


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"a",
        b"ab" * 5000,  # overlapping copies
        os.urandom(70_000),  # long literals (length in extra bytes)
        json.dumps({"k": ["value"] * 20_000}).encode(),  # offsets past 64 KiB
    ],
    ids=["empty", "one", "repeated", "random", "large-json"],
)
def test_shapes_round_trip(data: bytes) -> None:
    assert decompress(_compress(data), max_size=LIMIT) == data


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=3000), st.integers(min_value=1, max_value=8))
def test_any_bytes_round_trip(data: bytes, repeat: int) -> None:
    blob = data * repeat
    assert decompress(_compress(blob), max_size=LIMIT) == blob


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_input_decodes_or_raises_snappy_error(data: bytes) -> None:
    try:
        out = decompress(data, max_size=4096)
    except SnappyError:
        return
    assert len(out) <= 4096


def test_a_declared_length_over_the_cap_is_refused_before_decoding() -> None:
    data = _compress(b"x" * 10_000)
    with pytest.raises(SnappyError, match="declares 10000 bytes, more than the 9999"):
        decompress(data, max_size=9999)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "length header is cut short"),
        (b"\xff\xff\xff\xff\xff\x01", "length header is cut short or longer than 32 bits"),
        (b"\x05\x10abc", "literal runs past the end"),
        (b"\x05\xf0", "literal's length is cut short"),
        (b"\x08\x00a\x05\x02", "copy reaches before the start"),
        (b"\x08\x00a\x05\x00", "copy reaches before the start"),
        (b"\x03\x00a", "holds 1 bytes, not the 3"),
        (b"\x01\x04ab", "longer than its header says"),
        (b"\x04\x00a\x02", "copy's offset is cut short"),
    ],
)
def test_malformed_blocks_are_refused(data: bytes, reason: str) -> None:
    with pytest.raises(SnappyError, match=reason):
        decompress(data, max_size=LIMIT)


def test_a_cut_block_is_refused() -> None:
    compressed = _compress(b"attestation " * 100)
    with pytest.raises(SnappyError):
        decompress(compressed[:-3], max_size=LIMIT)
