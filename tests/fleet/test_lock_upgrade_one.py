"""``lock --upgrade ID`` moves that plugin alone, and ``lock --check`` judges offline (SPEC §8:
"`lock --upgrade [ID]`"; the lock is stable and ``--check`` is for CI), against the real
``docker-registry``."""

from __future__ import annotations

import tomllib
from pathlib import Path

from support.cli import nexo
from support.registry import Registry

from .conftest import MakeDist, fleet_run, push_dist


def _entry_text(text: str, plugin_id: str) -> str:
    """The lock's lines for ``plugin_id``: its table and its targets' tables."""
    blocks = text.split("\n[")
    return "\n[".join(b for b in blocks if b.startswith(f"plugins.{plugin_id}]")
                      or b.startswith(f"plugins.{plugin_id}."))  # fmt: skip


def test_upgrade_of_one_id_leaves_the_others_as_locked_and_asks_nothing_about_them(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist,
    policy: Path,
) -> None:  # fmt: skip
    home = Path(fleet_env["NEXO_HOME"])
    for plugin_id in ("echo", "weather"):
        push_dist(make_dist(plugin_id, "1.0.0"), registry.ref(f"plugins/{plugin_id}"), home)
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(
        f'[plugins.weather]\nsource = "{registry.ref("plugins/weather")}"\n'
        f'[plugins.echo]\nsource = "{registry.ref("plugins/echo")}"\n',
        encoding="utf-8",
    )
    lock = tmp_path / "nexo-plugins.lock"
    common = ("--plain-http", "--trusted-keys", str(policy))
    first = fleet_run("lock", "-f", wanted, *common, env=fleet_env)
    assert first.code == 0, first.stderr
    before = lock.read_text(encoding="utf-8")
    assert "1.0.0" in _entry_text(before, "weather")

    # Both plugins get a newer version the requirement ("any") admits.
    for plugin_id in ("echo", "weather"):
        push_dist(make_dist(plugin_id, "1.1.0"), registry.ref(f"plugins/{plugin_id}"), home)

    # --check reads the two files only: up to date (a newer release is no staleness), and
    # the registry is not asked anything.
    asked = registry.all_requests()
    checked = nexo("plugin", "lock", "-f", str(wanted), "--check", env=fleet_env, in_process=True)
    assert checked.code == 0, checked.stderr
    assert registry.all_requests() == asked

    # --upgrade echo: echo moves; weather's entry stays byte for byte, and nothing is asked
    # about weather.
    weather_asked = registry.requests(r"[A-Z]+", r"^/v2/plugins/weather/")
    upgraded = fleet_run("lock", "-f", wanted, "--upgrade", "echo", *common, env=fleet_env)
    assert upgraded.code == 0, upgraded.stderr
    assert upgraded.document["changes"] == {"echo": "1.0.0 -> 1.1.0"}
    after = lock.read_text(encoding="utf-8")
    assert _entry_text(after, "weather") == _entry_text(before, "weather")
    assert _entry_text(after, "echo") != _entry_text(before, "echo")
    data = tomllib.loads(after)
    assert list(data["plugins"]) == ["echo", "weather"]
    assert (data["plugins"]["echo"]["version"], data["plugins"]["weather"]["version"]) == (
        "1.1.0",
        "1.0.0",
    )
    assert registry.requests(r"[A-Z]+", r"^/v2/plugins/weather/") == weather_asked

    # --upgrade with no id moves every plugin that has a newer version.
    everything = fleet_run("lock", "-f", wanted, "--upgrade", *common, env=fleet_env)
    assert everything.code == 0, everything.stderr
    assert everything.document["changes"] == {"weather": "1.0.0 -> 1.1.0"}
    assert tomllib.loads(lock.read_text(encoding="utf-8"))["plugins"]["weather"]["version"] == (
        "1.1.0"
    )
