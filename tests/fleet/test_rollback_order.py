"""Which kept version ``rollback`` puts back when several are kept: the one the last upgrade
replaced, whatever the versions' numbers and their receipts' ``installed_at`` say. A registry
install's receipt carries the version's creation time (every version pushed from a tarball
packed without ``SOURCE_DATE_EPOCH`` says 1980), so that time cannot order replacements."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.cli import nexo
from support.registry import Registry

from .conftest import LINUX, MakeDist, push_dist


def test_rollback_puts_back_the_version_replaced_last_after_a_downgrade(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    home = Path(fleet_env["NEXO_HOME"])
    source = registry.ref("plugins/alpha")
    for version in ("1.0.0", "1.1.0", "1.2.0"):
        push_dist(make_dist("alpha", version, identity=None, targets=(LINUX,)), source, home)
    root = tmp_path / "root"
    common = ("--dest", str(root), "--plain-http", "--yes", "--json")

    def run(*args: str) -> dict[str, Any]:
        done = nexo("plugin", *args, *common, env=fleet_env, in_process=True)
        assert done.code == 0, done.stderr
        return done.document

    assert run("install", source)["version"] == "1.2.0"
    # Down to 1.0.0 (1.2.0 is kept), then up to 1.1.0 keeping every version (1.0.0 too).
    assert run("upgrade", "alpha@1.0.0", "--allow-downgrade")["kept_paths"]
    assert len(run("upgrade", "alpha@1.1.0", "--keep-old")["kept_paths"]) == 1
    listing = nexo("plugin", "list", "--dest", str(root), "--json", env=fleet_env, in_process=True)
    kept = sorted(entry["version"] for entry in listing.document["plugins"] if entry["kept"])
    assert kept == ["1.0.0", "1.2.0"]

    # The last upgrade replaced 1.0.0: that is what goes back, not the newer 1.2.0 (a
    # rollback goes back, never forward).
    done = nexo(
        "plugin", "rollback", "alpha", "--dest", str(root), "--json", env=fleet_env, in_process=True
    )
    assert done.code == 0, done.stderr
    assert (done.document["from_version"], done.document["version"]) == ("1.1.0", "1.0.0")
    assert (root / "alpha-1.0.0").is_dir()
    assert not (root / "alpha-1.1.0").exists()
    assert not (root / "alpha-1.2.0").exists()
