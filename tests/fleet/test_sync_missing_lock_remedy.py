"""A ``sync --frozen`` or ``sync --dry-run`` with no lock, and no wanted set beside it to lock
from, is ``lock_stale`` with a remedy that works as printed: write the wanted set it names,
then run the ``lock`` command it names; ``nexo plugin lock`` alone would refuse
(``wanted_invalid``). Followed, a frozen sync installs from the real ``docker-registry``."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from support.cli import nexo
from support.registry import Registry

from .conftest import MakeDist, push_dist


@pytest.mark.parametrize("flag", ["--frozen", "--dry-run"])
def test_the_remedy_for_a_missing_lock_and_wanted_set_works_as_printed(
    *,
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist,
    policy: Path, flag: str,
) -> None:  # fmt: skip
    push_dist(make_dist("echo", "1.0.0"), registry.ref("p/echo"), Path(fleet_env["NEXO_HOME"]))
    project, dest = tmp_path / "fleet", tmp_path / "root"
    project.mkdir()
    lock, wanted = project / "site.lock", project / "nexo-plugins.toml"
    sync = ("plugin", "sync", "--lock", lock, "--dest", dest, "--plain-http",
            "--trusted-keys", policy)  # fmt: skip

    refused = nexo(*sync, flag, "--json", env=fleet_env, cwd=tmp_path)
    assert (refused.code, refused.document["kind"]) == (1, "lock_stale"), refused.stderr
    error = refused.document["error"]
    assert refused.error_line == f"error: {error} [lock_stale]"
    # The wanted set is missing too: the remedy says to write it, where, before locking.
    assert f"write the plugins you want in {wanted} (docs/fleet.md), then run `" in error
    assert not lock.exists()
    assert not dest.exists()
    # Run as printed with only the lock missing, `lock` alone is refused for the wanted set.
    [command] = re.findall(r"`([^`]+)`", error)
    words = shlex.split(command)
    assert words[:3] == ["nexo", "plugin", "lock"]
    alone = nexo(*words[1:], "--json", env=fleet_env, cwd=tmp_path)
    assert (alone.code, alone.document["kind"]) == (2, "wanted_invalid")

    wanted.write_text(f'[plugins.echo]\nsource = "{registry.ref("p/echo")}"\n', encoding="utf-8")
    locked = nexo(*words[1:], "--plain-http", "--trusted-keys", policy, env=fleet_env, cwd=tmp_path)
    assert locked.code == 0, locked.stderr
    assert lock.is_file()
    synced = nexo(*sync, "--frozen", "--json", env=fleet_env, cwd=tmp_path)
    assert synced.code == 0, synced.stderr
    assert [(item["id"], item["action"]) for item in synced.document["plugins"]] == [
        ("echo", "installed")
    ]


def test_with_a_wanted_set_beside_it_the_remedy_is_the_lock_command_alone(
    tmp_path: Path, fleet_env: dict[str, str]
) -> None:
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text('[plugins.echo]\nsource = "acme/nexo-plugin-echo"\n', encoding="utf-8")
    lock = tmp_path / "nexo-plugins.lock"
    refused = nexo(
        "plugin", "sync", "--lock", lock, "--dest", tmp_path / "root", "--frozen", "--json",
        env=fleet_env, cwd=tmp_path,
    )  # fmt: skip
    assert (refused.code, refused.document["kind"]) == (1, "lock_stale")
    assert refused.document["error"] == f"--frozen needs {lock}; run `nexo plugin lock` first"
