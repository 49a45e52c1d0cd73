"""``sync`` shows progress for the set on a terminal (`[n/total] id version` as each plugin
is taken up), and none to a pipe, with ``--json`` or with ``-q``. The run gets a real
pseudo-terminal as stdout and stderr and a real ``docker-registry`` to sync from."""

from __future__ import annotations

import re
from pathlib import Path

from support.cli import nexo, on_terminal
from support.registry import Registry

from .conftest import MakeDist, fleet_run, push_dist

_PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] (\S+) (\S+)$", re.MULTILINE)


def test_sync_numbers_each_plugin_of_the_set_on_a_terminal_only(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist,
    policy: Path,
) -> None:  # fmt: skip
    home = Path(fleet_env["NEXO_HOME"])
    versions = {"echo": "1.2.3", "weather": "0.4.0"}
    for plugin_id, version in versions.items():
        push_dist(make_dist(plugin_id, version), registry.ref(f"plugins/{plugin_id}"), home)
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(
        "".join(
            f'[plugins.{plugin_id}]\nsource = "{registry.ref(f"plugins/{plugin_id}")}"\n'
            for plugin_id in versions
        ),
        encoding="utf-8",
    )
    trust = ("--plain-http", "--trusted-keys", str(policy))
    assert fleet_run("lock", "-f", wanted, *trust, env=fleet_env).code == 0
    lock = str(tmp_path / "nexo-plugins.lock")

    def sync(root: str, *extra: str) -> tuple[int, str]:
        return on_terminal(
            "plugin", "sync", "--lock", lock, "--dest", str(tmp_path / root), *trust, *extra,
            env=fleet_env, cwd=tmp_path,
        )  # fmt: skip

    code, shown = sync("tty")
    assert code == 0, shown
    seen = _PROGRESS.findall(shown)
    # Numbered as the workers take the plugins up (several at a time: in either order).
    assert sorted((number, total) for number, total, _, _ in seen) == [("1", "2"), ("2", "2")]
    assert sorted((plugin_id, version) for _, _, plugin_id, version in seen) == sorted(
        versions.items()
    )
    assert "2 change(s), 2 plugin(s) checked" in shown

    # The same run to a pipe, with --json or with -q on a terminal: no progress lines.
    piped = nexo("plugin", "sync", "--lock", lock, "--dest", str(tmp_path / "pipe"), *trust,
                 env=fleet_env, cwd=tmp_path)  # fmt: skip
    assert piped.code == 0, piped.stderr
    assert not _PROGRESS.search(piped.stderr + piped.stdout)
    for extra in (("--json",), ("-q",)):
        code, shown = sync(f"tty{extra[0]}", *extra)
        assert code == 0, shown
        assert not _PROGRESS.search(shown)
