"""The install root's lock: serialisation, timeout, and no trace left by a failed first use."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nexo_pkg.core.errors import NexoError
from nexo_pkg.install.root import LOCK_NAME, locked_root


def test_lock_times_out_while_another_process_holds_it(tmp_path: Path) -> None:
    dest = tmp_path / "plugins"
    dest.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import fcntl, sys, time
                handle = open({str(dest / LOCK_NAME)!r}, "a+b")
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                print("locked", flush=True)
                sys.stdin.readline()
                """
            ),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(NexoError) as caught, locked_root(dest, timeout=0.2):
            pass
        assert caught.value.kind == "io"
        assert "another nexo install" in caught.value.message
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=10)
        if holder.stdout is not None:
            holder.stdout.close()
    with locked_root(dest, timeout=1):
        pass


def test_failed_first_use_leaves_no_trace(tmp_path: Path) -> None:
    dest = tmp_path / "a" / "b" / "plugins"
    with pytest.raises(RuntimeError), locked_root(dest):
        raise RuntimeError("boom")
    assert not (tmp_path / "a").exists()


def test_failure_keeps_an_existing_lock_file(tmp_path: Path) -> None:
    dest = tmp_path / "plugins"
    with locked_root(dest):
        pass
    with pytest.raises(RuntimeError), locked_root(dest):
        raise RuntimeError("boom")
    assert (dest / LOCK_NAME).exists()


@pytest.mark.parametrize(
    "content",
    ["{", "[]", '{"id": "x"}', '{"id": 1, "version": "1", "files": {}}', '{"schema_version": {}}'],
)
def test_broken_receipts_make_orphans(tmp_path: Path, content: str) -> None:
    from nexo_pkg.install.receipts import RECEIPT_NAME, scan_installed

    plugin = tmp_path / "x-1.0.0"
    plugin.mkdir()
    (plugin / RECEIPT_NAME).write_text(content)
    (item,) = scan_installed(tmp_path)
    assert item.receipt is None
    assert item.problem is not None
