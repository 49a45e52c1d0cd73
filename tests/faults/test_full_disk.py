"""A full disk met part-way through the commands that write a plugin root or a configuration
file, through the console script: the file-size limit (RLIMIT_FSIZE) fails a write as a full
disk would (Python ignores SIGXFSZ, so the write fails with EFBIG). Each is one ``io``
document, exit 1, no traceback, and nothing written or lost: the root and the file are
byte-identical afterwards, and no temporary file is left."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import TRACEBACK, CliResult, clean_env, nexo
from support.tarballs import plugin_tarball, tree_snapshot, write_plugin

pytestmark = [
    pytest.mark.skipif(os.name != "posix", reason="RLIMIT_FSIZE is POSIX"),
    pytest.mark.daemon_host,
]

LIMIT = 16 * 1024
IDENTITY = "https://github.com/acme/hello/.github/workflows/release.yml@refs/tags/v1"
ISSUER = "https://token.actions.githubusercontent.com"


def _small_files() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def _full(home: Path, *args: str, config: Path | None = None) -> CliResult:
    """``nexo plugin ARGS --json`` with every file it writes capped at ``LIMIT`` bytes."""
    extra = {"NEXO_CONFIG_DIR": str(config)} if config is not None else {}
    completed = subprocess.run(
        [str(Path(sys.executable).with_name("nexo")), "plugin", *args, "--json"],
        env=clean_env(NEXO_HOME=str(home), **extra),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        preexec_fn=_small_files,
        check=False,
        timeout=120,
    )
    result = CliResult(completed.returncode, completed.stdout, completed.stderr)
    assert TRACEBACK not in result.stderr, result.stderr
    return result


def _assert_io(result: CliResult, needle: str) -> None:
    assert result.exit_code == 1, result.stderr
    document = result.document
    assert (document["ok"], document["kind"]) == (False, "io"), document
    assert needle in document["error"], document
    assert result.stderr.count("\n") == 1, result.stderr


def _temp_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.name.endswith(".tmp"))


def _big_plugin(directory: Path, version: str) -> Path:
    # 64 KiB of zeros: the tarball is small (the cache's copy fits), its extraction does not.
    return write_plugin(
        directory,
        "hello",
        version,
        data=plugin_tarball("hello", version, payload=bytes(4 * LIMIT)),
    )


def test_install_into_a_new_root_on_a_full_disk_leaves_no_root(tmp_path: Path) -> None:
    home, dest = tmp_path / "home", tmp_path / "root"
    tarball = _big_plugin(tmp_path / "dist", "1.0.0")
    result = _full(home, "install", str(tarball), "--dest", str(dest), "--yes")
    _assert_io(result, "File too large")
    assert tree_snapshot(dest) in ({}, {".": ("dir", 0o755, "")}), tree_snapshot(dest)
    assert _temp_files(home) == []


def test_install_force_on_a_full_disk_keeps_the_installed_plugin(tmp_path: Path) -> None:
    home, dest = tmp_path / "home", tmp_path / "root"
    first = write_plugin(tmp_path / "first", "hello", "1.0.0")
    installed = nexo("plugin", "install", str(first), "--dest", str(dest), "--yes",
                     env=clean_env(NEXO_HOME=str(home)))  # fmt: skip
    assert installed.exit_code == 0, installed.stderr
    before = tree_snapshot(dest)
    for version, extra in (("1.0.0", ["--force"]), ("2.0.0", [])):
        tarball = _big_plugin(tmp_path / f"dist-{version}", version)
        result = _full(home, "install", str(tarball), "--dest", str(dest), "--yes", *extra)
        _assert_io(result, "File too large")
        assert tree_snapshot(dest) == before
    listing = nexo("plugin", "verify", "--dest", str(dest), "--json",
                   env=clean_env(NEXO_HOME=str(home)))  # fmt: skip
    assert listing.exit_code == 0, listing.stdout
    assert _temp_files(home) == []


def test_disable_and_trust_add_on_a_full_disk_keep_their_files(tmp_path: Path) -> None:
    home, dest, config = tmp_path / "home", tmp_path / "root", tmp_path / "config"
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    env = clean_env(NEXO_HOME=str(home), NEXO_CONFIG_DIR=str(config))
    padding = "#" + "x" * LIMIT + "\n"  # the edited file is over the limit
    discovery = config / "plugins" / "discovery.yaml"
    discovery.parent.mkdir(parents=True)
    discovery.write_text(f"discovery:\n  search_paths: [{dest}]\n  disabled: []\n{padding}")
    policy = config / "extensions" / "trusted_keys.toml"
    policy.parent.mkdir(parents=True)
    policy.write_text(f'schema_version = "1.0"\n{padding}')
    assert nexo("plugin", "install", str(tarball), "--dest", str(dest), "--yes",
                env=env).exit_code == 0  # fmt: skip
    before = tree_snapshot(config)

    result = _full(home, "disable", "hello", "--dest", str(dest), config=config)
    _assert_io(result, f"cannot write {discovery}: File too large")
    result = _full(home, "trust", "add", "acme/hello", "--identity", IDENTITY,
                   "--oidc-issuer", ISSUER, "--yes", config=config)  # fmt: skip
    _assert_io(result, f"cannot write {policy}: File too large")
    assert tree_snapshot(config) == before
    listing = nexo("plugin", "list", "--dest", str(dest), "--json", env=env)
    assert [p["discovery"] for p in listing.document["plugins"]] == ["enabled"]
