"""A registry config named with ``--registry-config`` (or ``REGISTRY_AUTH_FILE``) that is
missing or no config refuses the whole ``sync`` (``registry_config``, exit 2) when the lock
names a registry plugin, as ``install`` and ``lock`` refuse it: before the root is made or
touched, for a dry run as for the run (a plan the run would not follow is no plan), and also
when every plugin is already in place (a named file is never silently done without)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import nexo
from support.registry import Registry

from .conftest import LINUX, MakeDist, push_dist


@pytest.mark.parametrize("config", ["missing", "not-json"])
def test_a_named_registry_config_that_is_none_refuses_sync_and_its_plan(
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    config: str,
) -> None:
    home = Path(fleet_env["NEXO_HOME"])
    push_dist(
        make_dist("alpha", "1.0.0", identity=None, targets=(LINUX,)),
        registry.ref("plugins/alpha"),
        home,
    )
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.alpha]\nsource = "{registry.ref("plugins/alpha")}"\n')
    assert (
        nexo(
            "plugin", "lock", "-f", str(wanted), "--plain-http", env=fleet_env, in_process=True
        ).code
        == 0
    )
    lock = tmp_path / "nexo-plugins.lock"
    named = tmp_path / "auth.json"
    if config == "not-json":
        named.write_text("{auths", encoding="utf-8")
    root = tmp_path / "root"

    def sync(*flags: str, env: dict[str, str] = fleet_env) -> tuple[int, dict[str, object]]:
        result = nexo(
            "plugin", "sync", "--lock", str(lock), "--dest", str(root), "--plain-http",
            "--frozen", "--json", *flags, env=env, in_process=True,
        )  # fmt: skip
        assert "Traceback" not in result.stderr
        return result.code, result.document

    for flags in (("--dry-run",), ()):
        code, document = sync("--registry-config", str(named), *flags)
        assert (code, document["ok"], document["kind"]) == (2, False, "registry_config")
        assert str(named) in str(document["error"])
        assert not root.exists()  # nothing made, nothing installed

    assert sync()[0] == 0  # alpha installed, unchanged from here on
    before = sorted(path.name for path in root.iterdir())
    code, document = sync("--registry-config", str(named))
    assert (code, document["kind"]) == (2, "registry_config")
    by_env = {**fleet_env, "REGISTRY_AUTH_FILE": str(named)}
    code, document = sync("--dry-run", env=by_env)
    assert (code, document["kind"]) == (2, "registry_config")
    assert sorted(path.name for path in root.iterdir()) == before
