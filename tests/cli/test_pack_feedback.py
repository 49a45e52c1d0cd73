"""What `pack` tells the person packing: progress, install's limits, and a network failure
while vendoring said as such."""

from __future__ import annotations

import json
import os
import socket
from functools import partial
from pathlib import Path

import pytest
from support.cli import nexo

from nexo_pkg.cli.pack import limit_warnings
from nexo_pkg.pack.build import ArchiveStats
from nexo_pkg.scaffold.generator import NewProject, create_project
from nexo_pkg.sources.archive import ArchiveLimits

# `nexo plugin ...` in this process: these runs need no process of their own.
plugin = partial(nexo, "plugin", in_process=True)


def base_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEXO_", "PIP_"))}
    env.update(extra)
    return env


def project(tmp_path: Path, *, requirements: str = "") -> Path:
    created = create_project(NewProject(plugin_id="demo", lang="python", dest=tmp_path / "demo"))
    (created.path / "requirements.txt").write_text(requirements, encoding="utf-8")
    return created.path


def test_limit_warnings_name_each_limit_and_its_flag() -> None:
    limits = ArchiveLimits()
    assert limit_warnings(1, ArchiveStats(10, 100, 50)) == []
    found = limit_warnings(
        limits.max_download + 1,
        ArchiveStats(limits.max_entries + 1, limits.max_total + 1, limits.max_entry + 1),
    )
    flags = ["--max-download-size", "--max-total-size", "--max-entry-size", "--max-entries"]
    assert [flag for flag in flags if any(flag in line for line in found)] == flags


@pytest.mark.daemon_host
def test_pack_over_the_entry_limit_warns_and_install_agrees(tmp_path: Path) -> None:
    root = project(tmp_path)
    many = root / "src" / "data"
    many.mkdir()
    for index in range(ArchiveLimits().max_entries):
        (many / f"f{index:05d}.txt").write_bytes(b"x")
    env = base_env(NEXO_HOME=str(tmp_path / "home"))
    packed = plugin("pack", cwd=root, env=env)
    assert packed.code == 0, packed.stderr
    assert "writing demo-0.1.0-noarch.tar.gz" in packed.stderr
    assert "--max-entries" in packed.stderr
    # --json carries the same warning for a release workflow to read.
    as_json = plugin("pack", "--json", cwd=root, env=env)
    assert as_json.code == 0, as_json.stderr
    warnings = json.loads(as_json.stdout)["warnings"]
    entry_warnings = [line for line in warnings if "--max-entries" in line]
    assert len(entry_warnings) == 1
    assert entry_warnings[0] in packed.stderr
    tarball = root / "dist" / "demo-0.1.0-noarch.tar.gz"
    refused = plugin("install", str(tarball), "--yes", "--json", cwd=root, env=env)
    assert refused.code == 1
    assert '"archive_unsafe"' in refused.stdout
    accepted = plugin("install", str(tarball), "--yes", "--max-entries", "20000", cwd=root, env=env)
    assert accepted.code == 0, accepted.stderr


def test_quiet_pack_prints_no_progress(tmp_path: Path) -> None:
    root = project(tmp_path)
    packed = plugin("pack", "--quiet", cwd=root, env=base_env())
    assert packed.code == 0, packed.stderr
    assert packed.stderr == ""


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.timeout(120)
def test_an_unreachable_index_is_a_network_error(tmp_path: Path) -> None:
    root = project(tmp_path, requirements="nexoai>=0.4\n")
    env = base_env(
        PIP_CONFIG_FILE=os.devnull,
        PIP_INDEX_URL=f"http://127.0.0.1:{_closed_port()}/simple",
        PIP_RETRIES="0",
        PIP_TIMEOUT="2",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    packed = plugin("pack", "--json", cwd=root, env=env)
    assert packed.code == 1
    assert '"kind": "network"' in packed.stdout
    line = packed.stderr.strip().splitlines()[-1]
    assert line.startswith("error: could not vendor requirements.txt: the package index")
    assert "not found" not in line
    assert not (root / "dist").exists()
