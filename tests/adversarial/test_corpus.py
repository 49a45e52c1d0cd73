"""The adversarial corpus itself: each case carries the defect it claims, and nothing else.

These checks read the archives with the standard library only, so a refusal by the installer
(tested in ``test_install_refuses.py``) is known to be about the defect and not an accident
of how the archive was built.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zlib
from pathlib import Path

import pytest

from .archives import (
    CONTROLS,
    CORPUS,
    INVALID,
    MANIFEST,
    PLUGIN_ID,
    UNSAFE,
    CorpusContext,
    Limits,
    write_corpus,
)

SMALL = CorpusContext(
    canary_dir=Path("/nonexistent-canary"),
    limits=Limits(max_entries=40, max_total_bytes=64 * 1024, max_entry_bytes=32 * 1024),
)

# Invalid archives that only a reader checking the whole stream notices: ``tarfile`` stops at
# the end marker (never reading the gzip trailer) and treats a bad header after the first as
# the end of the archive.
INVALID_ONLY_TO_STRICT_READERS = {
    "truncated_gzip_trailer",
    "corrupt_gzip_crc",
    "garbage_instead_of_end_marker",
    "member_hidden_after_end_marker",
    "bytes_after_the_gzip_stream",
}

# A well-formed tar that is no plugin: ``archive_invalid`` names "no launcher" too.
INVALID_AS_A_PLUGIN = {"launcher_is_directory"}
# Refused by a size cap before the stream is read to its end, where a listing would fail.
UNSAFE_AND_UNLISTABLE = {"size_claim_5gib_no_data"}

BASELINE_NAMES = {"bin", f"bin/{PLUGIN_ID}", "lib", "lib/plugin", "lib/plugin/main.py"}


def _members(data: bytes) -> list[tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        return archive.getmembers()


def test_corpus_is_large_and_names_every_kind() -> None:
    assert len(CORPUS) >= 30
    kinds = {entry.kinds[0] for entry in CORPUS.values()}
    assert kinds == {UNSAFE, INVALID}
    for entry in CORPUS.values():
        assert entry.description, entry.name
        assert len(entry.kinds) == 1, entry.name  # the exact kind of the refusal
        assert set(entry.kinds) <= {UNSAFE, INVALID}


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_controls_are_complete_plugins(name: str) -> None:
    members = {member.name: member for member in _members(CONTROLS[name](SMALL))}
    assert set(members) >= {*BASELINE_NAMES, "nexo-plugin.toml"}
    assert all(member.isreg() or member.isdir() for member in members.values())
    assert members[f"bin/{PLUGIN_ID}"].mode == 0o755


@pytest.mark.parametrize("name", sorted(name for name, c in CORPUS.items() if c.kinds[0] == UNSAFE))
def test_unsafe_cases_are_tars_holding_the_whole_plugin(name: str) -> None:
    data = CORPUS[name].build(SMALL)
    try:
        members = _members(data)
    except (tarfile.TarError, ValueError):
        assert name in UNSAFE_AND_UNLISTABLE, name
        return
    names = [member.name for member in members]
    assert "nexo-plugin.toml" in names
    # The defect is an addition or a swap: at least one member differs from the baseline.
    baseline = _members(CONTROLS["valid_baseline"](SMALL))
    signature = {(m.name, m.type, m.mode, m.size, m.linkname) for m in baseline}
    assert {(m.name, m.type, m.mode, m.size, m.linkname) for m in members} != signature


@pytest.mark.parametrize(
    "name", sorted(name for name, c in CORPUS.items() if c.kinds[0] == INVALID)
)
def test_invalid_cases_fail_a_strict_read(name: str) -> None:
    data = CORPUS[name].build(SMALL)
    if name in INVALID_AS_A_PLUGIN:
        launcher = {m.name: m for m in _members(data)}[f"bin/{PLUGIN_ID}"]
        assert launcher.isdir()
        return
    if name in INVALID_ONLY_TO_STRICT_READERS:
        # tarfile lists these without complaint; decompressing the whole stream, or walking
        # the headers to the end marker, does not.
        try:
            raw = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            return
        assert name in {"garbage_instead_of_end_marker", "member_hidden_after_end_marker"}
        if name == "member_hidden_after_end_marker":
            # tarfile stops at the end marker and never lists the member after it.
            assert "../hidden-escaped" not in {member.name for member in _members(data)}
            assert b"../hidden-escaped" in raw
            return
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as archive:
            end = archive.offset
        assert raw[end : end + 2 * tarfile.BLOCKSIZE] != bytes(2 * tarfile.BLOCKSIZE)
        return
    with pytest.raises((tarfile.TarError, EOFError, OSError, ValueError)):
        _members(data)


def test_escapes_aim_at_the_canary_only() -> None:
    canary = Path("/tmp/some-canary")
    context = CorpusContext(canary_dir=canary, limits=SMALL.limits)
    absolute = {m.name for m in _members(CORPUS["absolute_name"].build(context))}
    assert f"{canary}/absolute-pwned" in absolute
    links = {m.linkname for m in _members(CORPUS["symlink_then_write_through"].build(context))}
    assert str(canary) in links


def test_limits_follow_the_context() -> None:
    many = _members(CORPUS["too_many_entries"].build(SMALL))
    assert len(many) == SMALL.limits.max_entries + 1
    deep = _members(CORPUS["implied_directories_past_entry_limit"].build(SMALL))
    assert len(deep) < SMALL.limits.max_entries
    implied = {
        "/".join(m.name.split("/")[:depth])
        for m in deep
        for depth in range(1, m.name.count("/") + 1)
    }
    assert len(implied | {m.name for m in deep}) > SMALL.limits.max_entries
    big = [m for m in _members(CORPUS["entry_over_size_limit"].build(SMALL)) if m.size > 1000]
    assert [m.size for m in big] == [SMALL.limits.max_entry_bytes + 1]
    bombs = _members(CORPUS["gzip_bomb_total_size"].build(SMALL))
    assert all(m.size <= SMALL.limits.max_entry_bytes for m in bombs)
    assert sum(m.size for m in bombs) > SMALL.limits.max_total_bytes


def test_write_corpus(tmp_path: Path) -> None:
    written = write_corpus(tmp_path, SMALL)
    assert len(written) == len(CORPUS) + len(CONTROLS)
    assert (tmp_path / "valid_baseline.tar.gz").read_bytes() == CONTROLS["valid_baseline"](SMALL)
    assert MANIFEST.startswith("[plugin]")
