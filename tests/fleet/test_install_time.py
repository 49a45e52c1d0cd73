"""A plain ``install`` (and ``upgrade``) of a registry version stamps its receipt's
``installed_at`` with its own time, as the reference installer does (``InstallMetadata::
new_now`` in nexo-rs ``src/plugin_admin.rs``) and as it does for a GitHub release; only
``sync`` writes the version's publication time, so that clean roots end byte-identical."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from support.cli import nexo
from support.registry import Registry

from .conftest import LINUX, MakeDist, push_dist


def _installed_at(tree: Path) -> datetime:
    receipt = json.loads((tree / ".nexo-install.json").read_text())
    return datetime.fromisoformat(receipt["installed_at"].replace("Z", "+00:00"))


def test_a_registry_install_and_upgrade_record_their_own_time(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    home = Path(fleet_env["NEXO_HOME"])
    source = registry.ref("plugins/alpha")
    # Pushed from tarballs dated 2023 (as a pack's SOURCE_DATE_EPOCH dates them): the
    # version's creation time is not when it is installed.
    push_dist(make_dist("alpha", "1.0.0", identity=None, targets=(LINUX,)), source, home)
    root = tmp_path / "root"
    common = ("--dest", str(root), "--plain-http", "--yes")
    started = datetime.now(UTC) - timedelta(seconds=5)

    done = nexo("plugin", "install", f"{source}:1.0.0", *common, env=fleet_env, in_process=True)
    assert done.code == 0, done.stderr
    assert _installed_at(root / "alpha-1.0.0") >= started

    push_dist(make_dist("alpha", "1.1.0", identity=None, targets=(LINUX,)), source, home)
    done = nexo("plugin", "upgrade", "alpha", *common, env=fleet_env, in_process=True)
    assert done.code == 0, done.stderr
    assert _installed_at(root / "alpha-1.1.0") >= started
