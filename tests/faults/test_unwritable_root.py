"""An install root or configuration directory the user cannot write (mode 0555), through the
console script without the capabilities that bypass file permissions: ``install`` (new and
``--force``), ``remove``, ``disable`` and ``trust add`` each fail with one ``io`` line (exit
1) naming the path, and the root and configuration are byte-identical afterwards."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import CliResult, clean_env, nexo
from support.tarballs import tree_snapshot, write_plugin

pytestmark = [
    pytest.mark.skipif(os.name != "posix", reason="POSIX permissions"),
    pytest.mark.daemon_host,
]

DROP_DAC = ("setpriv", "--bounding-set=-dac_override,-dac_read_search")
IDENTITY = "https://github.com/acme/hello/.github/workflows/release.yml@refs/tags/v1"
ISSUER = "https://token.actions.githubusercontent.com"


def _unprivileged(home: Path, config: Path, *args: str) -> CliResult:
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is needed to drop CAP_DAC_OVERRIDE")
    prefix = DROP_DAC if os.geteuid() == 0 else ()
    env = clean_env(NEXO_HOME=str(home), NEXO_CONFIG_DIR=str(config))
    return nexo("plugin", *args, "--json", env=env, prefix=prefix)


def _assert_io(result: CliResult, needle: str) -> None:
    assert result.exit_code == 1, result.stderr
    assert (result.document["ok"], result.document["kind"]) == (False, "io"), result.document
    assert needle in result.document["error"], result.document
    assert result.stderr.count("\n") == 1, result.stderr


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[tuple[Path, Path, Path]]:
    """home, an install root holding hello 1.0.0, a configuration directory; the root and
    the configuration's directories made 0555 for the test, then writable again."""
    home, dest, config = tmp_path / "home", tmp_path / "root", tmp_path / "config"
    (config / "plugins").mkdir(parents=True)
    (config / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths: [{dest}]\n  disabled: []\n"
    )
    (config / "extensions").mkdir()
    (config / "extensions" / "trusted_keys.toml").write_text('schema_version = "1.0"\n')
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    env = clean_env(NEXO_HOME=str(home), NEXO_CONFIG_DIR=str(config))
    installed = nexo("plugin", "install", str(tarball), "--dest", str(dest), "--yes", env=env)
    assert installed.exit_code == 0, installed.stderr
    # Made once: the commands below find the root's bookkeeping area as a used root has it.
    assert nexo("plugin", "hold", "hello", "--dest", str(dest), env=env).exit_code == 0
    assert nexo("plugin", "unhold", "hello", "--dest", str(dest), env=env).exit_code == 0
    directories = [dest, *[p for p in dest.rglob("*") if p.is_dir() and ".nexo" in p.parts]]
    directories += [config / "plugins", config / "extensions"]
    for directory in directories:
        directory.chmod(0o555)
    yield home, dest, config
    for directory in directories:
        directory.chmod(0o755)


def test_commands_on_an_unwritable_root_change_nothing(
    tmp_path: Path, locked: tuple[Path, Path, Path]
) -> None:
    home, dest, config = locked
    before = tree_snapshot(dest), tree_snapshot(config)
    other = write_plugin(tmp_path / "other", "other", "1.0.0")
    again = write_plugin(tmp_path / "again", "hello", "1.0.0")
    runs = [
        (("install", str(other), "--dest", str(dest), "--yes"), str(dest)),
        (("install", str(again), "--dest", str(dest), "--yes", "--force"), str(dest)),
        (("remove", "hello", "--dest", str(dest), "--yes"), str(dest)),
        (("disable", "hello", "--dest", str(dest)), str(config / "plugins")),
        (
            ("trust", "add", "acme/hello", "--identity", IDENTITY, "--oidc-issuer", ISSUER,
             "--yes"),
            str(config / "extensions"),
        ),
    ]  # fmt: skip
    for args, named in runs:
        result = _unprivileged(home, config, *args)
        _assert_io(result, named)
        assert "Permission denied" in result.document["error"], result.document
        assert (tree_snapshot(dest), tree_snapshot(config)) == before, args
