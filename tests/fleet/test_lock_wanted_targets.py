"""What the wanted set asks ``lock`` for, read from the outside against the real
``docker-registry``: the ``targets`` it names are the ones locked (default: every target the
version has), a target the version lacks is refused, and so is a source that holds another
plugin than the id it is listed under. A refusal leaves the lock as it was."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from support.cli import CliResult, nexo
from support.registry import Registry

from .conftest import LINUX, MakeDist, push_dist


def _lock(wanted: Path, policy: Path, env: dict[str, str]) -> CliResult:
    return nexo(
        "plugin", "lock", "-f", str(wanted), "--plain-http", "--trusted-keys", str(policy),
        "--json", env=env, in_process=True,
    )  # fmt: skip


@pytest.fixture
def pushed(fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist) -> Registry:
    push_dist(
        make_dist("echo", "1.2.3"), registry.ref("plugins/echo:1.2.3"), Path(fleet_env["NEXO_HOME"])
    )
    return registry


def test_the_targets_named_are_the_ones_locked_and_a_missing_one_is_refused(
    tmp_path: Path, fleet_env: dict[str, str], pushed: Registry, policy: Path
) -> None:
    wanted = tmp_path / "nexo-plugins.toml"
    source = pushed.ref("plugins/echo")
    wanted.write_text(f'[plugins.echo]\nsource = "{source}"\ntargets = ["noarch"]\n')
    locked = _lock(wanted, policy, fleet_env)
    assert locked.code == 0, locked.stderr
    lock = tmp_path / "nexo-plugins.lock"
    text = lock.read_text(encoding="utf-8")
    assert list(tomllib.loads(text)["plugins"]["echo"]["targets"]) == ["noarch"]

    wanted.write_text(
        f'[plugins.echo]\nsource = "{source}"\ntargets = ["aarch64-apple-darwin", "{LINUX}"]\n'
    )
    refused = _lock(wanted, policy, fleet_env)
    assert refused.code == 1, refused.stderr
    assert refused.document["kind"] == "asset_not_found"
    assert refused.document["plugin"] == "echo"
    # It names the target it lacks and the ones it has.
    assert "no aarch64-apple-darwin tarball" in refused.document["error"]
    assert f"it has noarch, {LINUX}" in refused.document["error"]
    assert lock.read_text(encoding="utf-8") == text


def test_a_source_holding_another_plugin_is_refused_and_nothing_is_written(
    tmp_path: Path, fleet_env: dict[str, str], pushed: Registry, policy: Path
) -> None:
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.weather]\nsource = "{pushed.ref("plugins/echo")}"\n')
    refused = _lock(wanted, policy, fleet_env)
    assert refused.code == 1, refused.stderr
    assert refused.document["plugin"] == "weather"
    assert "is plugin 'echo', not 'weather'" in refused.document["error"]
    assert refused.stderr.count("error: ") == 1
    assert not (tmp_path / "nexo-plugins.lock").exists()
