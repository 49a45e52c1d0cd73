"""``sync --dry-run`` refuses the flags the run itself refuses, with the same error: a
rehearsal that passes what the real run turns down (``--jobs 0``, a malformed
``--registry-mirror``, two signature flags that exclude each other) rehearses nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import nexo

from .conftest import LINUX


def _lock(path: Path) -> Path:
    path.write_text(
        "lock_version = 1\n\n[plugins.alpha]\n"
        'source = "oci://127.0.0.1:9/plugins/alpha"\nrequirement = "*"\nversion = "1.0.0"\n'
        f'resolved = "oci://127.0.0.1:9/plugins/alpha@sha256:{"a" * 64}"\n\n'
        f'[plugins.alpha.targets.{LINUX}]\nasset = "alpha-1.0.0-{LINUX}.tar.gz"\nsize = 10\n'
        f'sha256 = "{"b" * 64}"\nmanifest = "sha256:{"c" * 64}"\n',
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    "flags",
    [
        ("--jobs", "0"),
        ("--timeout", "0"),
        ("--registry-mirror", "a="),
        ("--nexo-version", "x.y"),
        ("--require-signature", "--skip-signature-verify"),
        ("--config", "/nonexistent/nexo-config"),
    ],
)
def test_a_dry_run_refuses_what_the_run_refuses(
    tmp_path: Path, fleet_env: dict[str, str], flags: tuple[str, ...]
) -> None:
    lock = _lock(tmp_path / "nexo-plugins.lock")
    dest = tmp_path / "root"
    common = ("plugin", "sync", "--lock", str(lock), "--dest", str(dest), "--frozen", "--json")
    run = nexo(*common, *flags, env=fleet_env, in_process=True)
    rehearsal = nexo(*common, "--dry-run", *flags, env=fleet_env, in_process=True)
    assert run.code == 2, run.stdout
    assert (rehearsal.code, rehearsal.document) == (run.code, run.document)
    assert not dest.exists()


def test_a_frozen_dry_run_refuses_a_stale_lock_as_the_run_does(
    tmp_path: Path, fleet_env: dict[str, str]
) -> None:
    lock = _lock(tmp_path / "nexo-plugins.lock")
    text = lock.read_bytes()
    (tmp_path / "nexo-plugins.toml").write_text(  # alpha no longer wanted, beta new
        '[plugins.beta]\nsource = "oci://127.0.0.1:9/plugins/beta"\n', encoding="utf-8"
    )
    dest = tmp_path / "root"
    common = ("plugin", "sync", "--lock", str(lock), "--dest", str(dest), "--frozen", "--json")
    run = nexo(*common, env=fleet_env, in_process=True)
    rehearsal = nexo(*common, "--dry-run", env=fleet_env, in_process=True)
    assert (run.code, run.document["kind"]) == (1, "lock_stale"), run.stdout
    assert (rehearsal.code, rehearsal.document) == (run.code, run.document)
    assert sorted(rehearsal.document["stale"]) == [
        "alpha is locked but no longer wanted", "beta is wanted but not locked",
    ]  # fmt: skip
    assert lock.read_bytes() == text
    assert not dest.exists()


def test_a_dry_run_refuses_a_malformed_source_date_epoch_as_the_run_does(
    tmp_path: Path, fleet_env: dict[str, str]
) -> None:
    lock = _lock(tmp_path / "nexo-plugins.lock")
    dest = tmp_path / "root"
    env = {**fleet_env, "SOURCE_DATE_EPOCH": "yesterday"}  # receipts may take it
    common = ("plugin", "sync", "--lock", str(lock), "--dest", str(dest), "--json")
    run = nexo(*common, env=env, in_process=True)
    rehearsal = nexo(*common, "--dry-run", env=env, in_process=True)
    assert (run.code, run.document["kind"]) == (2, "usage"), run.stdout
    assert "SOURCE_DATE_EPOCH" in run.document["error"]
    assert (rehearsal.code, rehearsal.document) == (run.code, run.document)
    assert not dest.exists()


def test_a_dry_run_plans_a_plugin_without_a_tarball_for_this_host_as_the_run_fails_it(
    tmp_path: Path, fleet_env: dict[str, str]
) -> None:
    """The lock has alpha for another host only: the run fails alpha (asset_not_found,
    exit 1), so the plan says refused with the run's words and exit code, not `install`."""
    lock = _lock(tmp_path / "nexo-plugins.lock")
    lock.write_text(lock.read_text(encoding="utf-8").replace(LINUX, "aarch64-apple-darwin"))
    dest = tmp_path / "root"
    common = ("plugin", "sync", "--lock", str(lock), "--dest", str(dest), "--frozen", "--json")
    rehearsal = nexo(*common, "--dry-run", env=fleet_env, in_process=True)
    assert not dest.exists()
    run = nexo(*common, env=fleet_env, in_process=True)
    assert (run.code, run.document["kind"]) == (1, "sync_failed"), run.stdout
    (failed,) = run.document["plugins"]
    assert (rehearsal.code, rehearsal.document["kind"]) == (1, "sync_failed")
    assert rehearsal.document["error"] == "1 plugin(s) would fail: alpha"
    (step,) = rehearsal.document["plan"]
    assert (step["action"], step["kind"], step["error"]) == (
        "install",
        "asset_not_found",
        failed["error"],
    )
    line = f"error: alpha: {failed['error']} [asset_not_found]"
    assert line in rehearsal.stderr.splitlines()
    assert line in run.stderr.splitlines()
    text = nexo(*common[:-1], "--dry-run", env=fleet_env, in_process=True)
    assert text.code == 1
    assert text.stdout.split() == ["alpha", "1.0.0", "install:", "refused", "[asset_not_found]"]
