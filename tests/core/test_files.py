"""The one atomic writer: a failed write leaves the old file and no temporary file behind."""

from __future__ import annotations

import hashlib
import os
import resource
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.files import (
    FileTooLargeError,
    NotRegularFileError,
    read_capped_bytes,
    write_file_atomically,
)
from nexo_pkg.fleet.lockfile import write_if_changed


def test_a_rename_onto_a_directory_fails_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "nexo-plugins.lock"
    target.mkdir()
    (target / "kept").write_text("x", encoding="utf-8")
    with pytest.raises(IsADirectoryError):
        write_file_atomically(target, b"lock_version = 1\n")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["nexo-plugins.lock"]
    assert (target / "kept").read_text(encoding="utf-8") == "x"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
@pytest.mark.parametrize("through_a_link", [False, True], ids=["fifo", "link-to-fifo"])
def test_a_fifo_or_device_at_the_target_is_never_renamed_over(
    tmp_path: Path, through_a_link: bool
) -> None:
    # A rename would put a regular file where /dev/null or /dev/stdout (a link) was: for root,
    # every process's /dev/null. The writer refuses instead and leaves both as they were.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    target = fifo
    if through_a_link:
        target = tmp_path / "stdout"
        target.symlink_to(fifo)
    with pytest.raises(NotRegularFileError):
        write_file_atomically(target, b"x")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert target.is_symlink() is through_a_link
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted({"fifo", target.name})


def test_a_written_file_has_its_mode_whatever_the_umask(tmp_path: Path) -> None:
    target = tmp_path / "policy.toml"
    old = os.umask(0o077)
    try:
        write_file_atomically(target, b"a = 1\n", mode=0o644)
    finally:
        os.umask(old)
    assert target.read_bytes() == b"a = 1\n"
    assert target.stat().st_mode & 0o777 == 0o644
    assert [path.name for path in tmp_path.iterdir()] == ["policy.toml"]


def test_a_link_at_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_text("untouched", encoding="utf-8")
    target = tmp_path / "lock"
    target.symlink_to(outside)
    write_file_atomically(target, b"new")
    assert not target.is_symlink()
    assert target.read_bytes() == b"new"
    assert outside.read_text(encoding="utf-8") == "untouched"


def test_the_capped_reader_refuses_one_byte_more(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"12345")
    assert read_capped_bytes(path, 5) == b"12345"
    with pytest.raises(FileTooLargeError, match="larger than 4 bytes"):
        read_capped_bytes(path, 4)


def test_the_lock_writer_leaves_no_temp_file_when_it_cannot_rename(tmp_path: Path) -> None:
    """A lock path the writer cannot replace (a directory) is one ``io`` error; nothing is left
    beside it."""
    target = tmp_path / "nexo-plugins.lock"
    target.mkdir()
    with pytest.raises(NexoError) as caught:
        write_if_changed(target, "lock_version = 1\n")
    assert caught.value.kind == "io"
    assert [path.name for path in tmp_path.iterdir()] == ["nexo-plugins.lock"]


_WRITE_LOCK = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from nexo_pkg.core.errors import NexoError
    from nexo_pkg.fleet.lockfile import write_if_changed
    try:
        write_if_changed(Path(sys.argv[1]), "lock_version = 1\\n" + "#" * 65536 + "\\n")
    except NexoError as error:
        print(error.kind, error.message)
        sys.exit(3)
    """
)


def _small_files() -> None:
    # Python ignores SIGXFSZ: a write past the limit fails with EFBIG instead of killing it.
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def test_the_lock_writer_leaves_no_temp_file_when_the_write_fails(tmp_path: Path) -> None:
    """The write of the new lock fails part-way (the file-size limit, as a full disk would):
    the old lock is intact and no temporary file remains in its directory."""
    target = tmp_path / "nexo-plugins.lock"
    target.write_text("lock_version = 1\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-c", _WRITE_LOCK, str(target)],
        capture_output=True,
        text=True,
        preexec_fn=_small_files,
        check=False,
        timeout=60,
    )
    assert result.returncode == 3, result.stderr
    assert result.stdout.startswith(f"io cannot write {target}: "), result.stdout
    assert target.read_text(encoding="utf-8") == "lock_version = 1\n"
    assert [path.name for path in tmp_path.iterdir()] == ["nexo-plugins.lock"]


@pytest.mark.parametrize("size", [0, 1, 6_700, 65_535, 65_536, 65_537, (1 << 20) + 3, 3 << 20])
def test_the_capped_reader_reads_every_size_whole(tmp_path: Path, size: int) -> None:
    """Small files in one piece, large ones in pieces of at most 1 MiB: the same bytes, and
    one byte more than the cap is still refused."""
    data = (hashlib.sha256(b"x").digest() * (size // 32 + 1))[:size]
    path = tmp_path / "f"
    path.write_bytes(data)
    assert read_capped_bytes(path, size) == data
    assert read_capped_bytes(path, size + (1 << 20)) == data
    if size:
        with pytest.raises(FileTooLargeError):
            read_capped_bytes(path, size - 1)
