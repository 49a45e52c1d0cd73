"""A dry run with no lock at all has nothing to plan from: ``lock_stale`` (exit 1, run
``lock`` first), with or without a wanted set beside it and with ``--frozen`` as without,
as the run itself refuses a missing lock under ``--frozen``; nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import nexo


@pytest.mark.parametrize("wanted", [False, True], ids=["alone", "beside-a-wanted-set"])
@pytest.mark.parametrize("flags", [(), ("--frozen",)], ids=["plain", "frozen"])
def test_a_dry_run_without_a_lock_is_lock_stale(
    tmp_path: Path, fleet_env: dict[str, str], wanted: bool, flags: tuple[str, ...]
) -> None:
    if wanted:
        (tmp_path / "nexo-plugins.toml").write_text(
            '[plugins.echo]\nsource = "acme/nexo-plugin-echo"\n', encoding="utf-8"
        )
    lock, dest = tmp_path / "nexo-plugins.lock", tmp_path / "root"
    result = nexo(
        "plugin", "sync", "--lock", str(lock), "--dest", str(dest), "--dry-run", *flags,
        "--json", env=fleet_env, in_process=True,
    )  # fmt: skip
    assert result.code == 1, result.stderr
    assert result.document["kind"] == "lock_stale"
    assert "nexo plugin lock" in result.document["error"]
    assert "Traceback" not in result.stderr
    assert not lock.exists()
    assert not dest.exists()
    plain = nexo(
        "plugin", "sync", "--lock", str(lock), "--dest", str(dest), "--frozen", "--json",
        env=fleet_env, in_process=True,
    )  # fmt: skip
    assert (plain.code, plain.document["kind"]) == (result.code, result.document["kind"])
    if flags:  # the run's own refusal, word for word: a frozen run would not resolve either
        assert result.document == plain.document
