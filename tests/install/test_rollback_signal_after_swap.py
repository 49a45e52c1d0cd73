"""Ctrl-C (or SIGTERM) during ``rollback``: a signal before the kept version and the installed
one change places stops the command with the root as it was; one that lands once they have
changed places waits for the rollback to finish (the hold written) and its result to be
printed, so the command never says ``interrupted`` alone about a rollback it did.

The signal is sent by a ``sitecustomize`` hook right after an exact step (the re-hash of the
kept tree, or the swap itself), so nothing races.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import clean_env, nexo_with_sitecustomize
from support.daemon_walk import discovered_versions
from support.stderr import without_notes
from support.step_signal import signal_after_step
from support.tarballs import tree_snapshot, write_plugin

from nexo_pkg.install.receipts import scan_kept

pytestmark = [
    pytest.mark.daemon_host,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]


def _leftovers(dest: Path) -> list[str]:
    areas = [dest / ".nexo" / area for area in ("staging", "removing", "journal")]
    return [str(p) for area in areas if area.is_dir() for p in area.iterdir()]


def _kept(dest: Path) -> list[str]:
    return sorted(item.receipt.version for item in scan_kept(dest) if item.receipt is not None)


def _installed_twice(tmp_path: Path, dest: Path) -> None:
    """``x`` 1.1.0 installed over 1.0.0, which is kept for rollback."""
    env = clean_env(NEXO_HOME=str(tmp_path / "nexo"), HOME=str(tmp_path))
    for version in ("1.0.0", "1.1.0"):
        installed = subprocess.run(
            [str(Path(sys.executable).with_name("nexo")), "plugin", "install",
             str(write_plugin(tmp_path / "dist", "x", version)), "--dest", str(dest), "--yes"],
            env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
            check=False,
        )  # fmt: skip
        assert installed.returncode == 0, installed.stderr
    assert discovered_versions(dest) == {"x": "1.1.0"}
    assert _kept(dest) == ["1.0.0"]


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"]
)
@pytest.mark.parametrize("json_output", [True, False], ids=["json", "text"])
def test_a_signal_once_rollback_swapped_the_versions_still_says_it_rolled_back(
    tmp_path: Path, signum: int, code: int, json_output: bool
) -> None:
    dest = tmp_path / "plugins"
    _installed_twice(tmp_path, dest)

    run = nexo_with_sitecustomize(
        tmp_path,
        signal_after_step("nexo_pkg.install.rollback", "nexo_pkg.install.root.swap_in", signum),
        "plugin", "rollback", "x", "--dest", str(dest), *(["--json"] if json_output else []),
    )  # fmt: skip

    assert run.returncode == code, run.stderr
    assert "Traceback" not in run.stderr
    lines = without_notes(run.stderr).strip().splitlines()
    word = "interrupted" if signum == signal.SIGINT else "terminated"
    assert lines[-1] == f"error: {word} [interrupted]"
    # The rollback happened, whole: the kept version is in, the other kept, the hold written.
    assert discovered_versions(dest) == {"x": "1.0.0"}
    assert _kept(dest) == ["1.1.0"]
    assert _leftovers(dest) == []
    listed = subprocess.run(
        [str(Path(sys.executable).with_name("nexo")), "plugin", "list", "--dest", str(dest),
         "--json"],
        env=clean_env(NEXO_HOME=str(tmp_path / "nexo"), HOME=str(tmp_path)),
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    [plugin] = [item for item in json.loads(listed.stdout)["plugins"] if not item["kept"]]
    assert (plugin["version"], plugin["held"]) == ("1.0.0", True)
    # ...and the command says so before it says it was stopped.
    if json_output:
        document = json.loads(run.stdout)  # exactly one document
        assert document["ok"] is True, document
        assert (document["from_version"], document["version"]) == ("1.1.0", "1.0.0")
        assert document["held"] is True
    else:
        assert f"Rolled back x to 1.0.0 (from 1.1.0) at {dest / 'x-1.0.0'}." in lines


def test_a_signal_before_rollback_swaps_the_versions_changes_nothing(tmp_path: Path) -> None:
    dest = tmp_path / "plugins"
    _installed_twice(tmp_path, dest)
    before = tree_snapshot(dest)

    run = nexo_with_sitecustomize(
        tmp_path,
        signal_after_step("nexo_pkg.install.rollback", "nexo_pkg.install.verify.verify_installed"),
        "plugin", "rollback", "x", "--dest", str(dest), "--json",
    )  # fmt: skip

    assert run.returncode == 130, run.stderr
    assert "Traceback" not in run.stderr
    assert without_notes(run.stderr).strip().splitlines()[-1] == "error: interrupted [interrupted]"
    assert json.loads(run.stdout) == {"ok": False, "kind": "interrupted", "error": "interrupted"}
    assert tree_snapshot(dest) == before
    assert _leftovers(dest) == []
