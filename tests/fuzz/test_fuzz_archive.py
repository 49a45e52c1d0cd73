"""Property: any bytes given to the archive pre-scan and extraction are refused as
``archive_unsafe`` / ``archive_invalid`` or extracted as regular files and directories only,
inside the staging directory, with no special bits."""

from __future__ import annotations

import shutil
import stat
import tempfile
from pathlib import Path

import pytest
from adversarial.archives import CONTROLS, CORPUS, CorpusContext, Limits
from hypothesis import given, settings
from hypothesis import strategies as st

from nexo_pkg.sources.archive import ArchiveLimits
from nexo_pkg.sources.extract import safe_extract

from .strategies import attempt

CONTEXT = CorpusContext(
    canary_dir=Path("/nonexistent-fuzz-canary"),
    limits=Limits(max_entries=40, max_total_bytes=64 * 1024, max_entry_bytes=32 * 1024),
)
LIMITS = ArchiveLimits(
    max_download=1024 * 1024, max_entries=40, max_total=64 * 1024, max_entry=32 * 1024
)
SEEDS: tuple[bytes, ...] = (
    *(build(CONTEXT) for build in CONTROLS.values()),
    *(case.build(CONTEXT) for name, case in CORPUS.items() if name != "too_many_entries"),
)


@st.composite
def mutated_archives(draw: st.DrawFn) -> bytes:
    """A corpus archive with a few bytes flipped, inserted, deleted or the tail cut."""
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        if not data:
            break
        at = draw(st.integers(min_value=0, max_value=len(data) - 1))
        action = draw(st.sampled_from(["flip", "insert", "delete", "cut"]))
        if action == "flip":
            data[at] ^= 1 << draw(st.integers(min_value=0, max_value=7))
        elif action == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif action == "delete":
            del data[at : at + draw(st.integers(min_value=1, max_value=64))]
        else:
            del data[at:]
    return bytes(data)


def _check(data: bytes) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="nexo-fuzz-archive-"))
    try:
        tarball = scratch / "input.tar.gz"
        tarball.write_bytes(data)
        staging = scratch / "staging"
        staging.mkdir()
        listing, error = attempt(lambda: safe_extract(tarball, staging, LIMITS))
        assert sorted(p.name for p in scratch.iterdir()) == ["input.tar.gz", "staging"]
        if listing is None:
            assert error is not None
            assert error.kind in {"archive_unsafe", "archive_invalid"}, error.kind
            assert list(staging.iterdir()) == []
            return
        for path in staging.rglob("*"):
            mode = path.lstat().st_mode
            assert stat.S_ISREG(mode) or stat.S_ISDIR(mode), path
            assert not mode & 0o7000, path
    finally:
        shutil.rmtree(scratch)


@given(mutated_archives())
def test_archive_scan_is_total(data: bytes) -> None:
    _check(data)


@pytest.mark.slow
@settings(max_examples=10_000)
@given(mutated_archives())
def test_archive_scan_is_total_at_scale(data: bytes) -> None:
    _check(data)
